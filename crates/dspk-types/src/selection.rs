//! The part of a recording a command reads: a channel map applied first, then a channel list
//! (in the mapped numbering), then a sample range — in this one order, for the program and the
//! Python package alike.

use std::ops::Range;
use std::sync::Arc;

use crate::{ChannelList, ChannelMap, DspError, RecordingSource, RemappedSource, SlicedRecording};

/// What of a recording to read. Every part is optional; none is the whole recording.
#[derive(Debug, Clone, Default)]
pub struct Selection<'a> {
    /// A channel map, applied first.
    pub map: Option<&'a ChannelMap>,
    /// The channels to keep, numbered after the map, in the order written.
    pub channels: Option<&'a ChannelList>,
    /// The samples to keep (`None`: all).
    pub range: Option<Range<u64>>,
}

/// Which part of a [`Selection`] a recording refused, so that a face names its own option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectionPart {
    /// The channel map.
    Map,
    /// The channel list.
    Channels,
    /// The sample range.
    Range,
}

/// A selection the recording refused: the part, and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{error}")]
pub struct SelectionError {
    /// The part refused.
    pub part: SelectionPart,
    /// Why.
    pub error: DspError,
}

/// The signal channels of `info` (electrodes, analog inputs), where it has others too (a sync
/// word, digital lines): what preprocessing reads, as SpikeInterface and Kilosort read a
/// SpikeGLX file without its sync channel. `None` when every channel is a signal.
pub fn signal_channels(info: &crate::RecordingInfo) -> Option<ChannelList> {
    let signal: Vec<usize> = info
        .channels
        .iter()
        .enumerate()
        .filter(|(_, c)| c.kind == crate::ChannelKind::Signal)
        .map(|(i, _)| i)
        .collect();
    if signal.len() == info.channels.len() || signal.is_empty() {
        return None;
    }
    ChannelList::from_indices(&signal).ok()
}

/// `source` with only its signal channels ([`signal_channels`]), as preprocessing and
/// detection read a recording; `source` itself where every channel is a signal.
///
/// # Errors
/// What the channel selection refuses (nothing, for the list [`signal_channels`] makes).
pub fn signal_source(
    source: Arc<dyn RecordingSource>,
) -> Result<Arc<dyn RecordingSource>, DspError> {
    let signal = signal_channels(source.info());
    Selection {
        channels: signal.as_ref(),
        ..Selection::default()
    }
    .apply(source)
    .map_err(|e| e.error)
}

impl Selection<'_> {
    /// `source` with the map, the channel list and the range applied, in that order; the
    /// source itself where the selection is the whole recording.
    pub fn apply(
        &self,
        source: Arc<dyn RecordingSource>,
    ) -> Result<Arc<dyn RecordingSource>, SelectionError> {
        let fail = |part| move |error| SelectionError { part, error };
        let mut source = source;
        if let Some(map) = self.map {
            source = Arc::new(RemappedSource::new(source, map).map_err(fail(SelectionPart::Map))?);
        }
        let channels = self
            .channels
            .map(|list| list.resolve(source.info().channel_count()))
            .transpose()
            .map_err(fail(SelectionPart::Channels))?;
        let total = source.info().samples;
        let range = self.range.clone().unwrap_or(0..total);
        if channels.is_some() || range != (0..total) {
            source = Arc::new(
                SlicedRecording::new(source, range, channels)
                    .map_err(fail(SelectionPart::Range))?,
            );
        }
        Ok(source)
    }
}
