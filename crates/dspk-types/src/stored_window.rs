//! A window's stored bytes in the source's own order, and how to fill any part of them: the
//! arithmetic a device upload splits among fill threads.

use std::ops::Range;

use crate::{DspError, DspResult, HaloWindow, MemoryOrder, RecordingSource};

/// The stored bytes of one window of every channel of a source, in the order the source
/// stores them ([`RecordingSource::native_stored_order`]): a time-major window is one run of
/// whole frames, a channel-major one a run per channel. Any piece made of whole
/// [`align`](Self::align) units can be filled on its own ([`fill`](Self::fill)), so several
/// threads can fill one window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredWindow {
    order: MemoryOrder,
    samples: Range<u64>,
    channels: usize,
    sample_bytes: usize,
}

impl StoredWindow {
    /// The stored window of `source` for `window`'s padded range (`read_global`).
    pub fn of(source: &dyn RecordingSource, window: &HaloWindow) -> Self {
        let info = source.info();
        Self {
            order: source.native_stored_order(),
            samples: window.read_global.clone(),
            channels: info.channel_count(),
            sample_bytes: info.format.bytes(),
        }
    }

    /// The order of the bytes.
    pub fn order(&self) -> MemoryOrder {
        self.order
    }

    /// Samples per channel.
    pub fn samples(&self) -> usize {
        (self.samples.end - self.samples.start) as usize
    }

    /// Bytes of the whole window.
    pub fn len(&self) -> usize {
        self.samples() * self.channels * self.sample_bytes
    }

    /// Whether the window holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The unit a piece is made of: a frame (every channel's sample) for a time-major window,
    /// one channel's run for a channel-major one.
    pub fn align(&self) -> usize {
        match self.order {
            MemoryOrder::TimeMajor => self.channels * self.sample_bytes,
            MemoryOrder::ChannelMajor => self.samples() * self.sample_bytes,
        }
    }

    /// Fills `piece`, the window's bytes from `offset` on, from `source`: a time-major piece
    /// is a range of samples, a channel-major piece a range of channels. `offset` and the
    /// piece's length must be whole [`align`](Self::align) units inside the window.
    pub fn fill(
        &self,
        source: &dyn RecordingSource,
        offset: usize,
        piece: &mut [u8],
    ) -> DspResult<()> {
        let align = self.align();
        let whole = align > 0 && offset.is_multiple_of(align) && piece.len().is_multiple_of(align);
        if !whole || offset + piece.len() > self.len() {
            return Err(DspError::config(format!(
                "a piece of {} bytes at byte {offset} is not whole units of {align} bytes inside a \
                 stored window of {} bytes",
                piece.len(),
                self.len()
            )));
        }
        let units = offset / align..(offset + piece.len()) / align;
        match self.order {
            MemoryOrder::TimeMajor => {
                let first = self.samples.start + units.start as u64;
                let last = self.samples.start + units.end as u64;
                let order = source.read_stored_native(first..last, piece)?;
                if order != MemoryOrder::TimeMajor {
                    return Err(DspError::config(format!(
                        "{} states time-major as its stored order but read {order}",
                        source.info().name
                    )));
                }
                Ok(())
            }
            MemoryOrder::ChannelMajor => {
                let channels: Vec<usize> = units.collect();
                source.read_stored(&channels, self.samples.clone(), piece)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ChunkSchedule, SyntheticConfig, SyntheticRecording};

    #[test]
    fn pieces_filled_apart_equal_the_whole_window() {
        let config = SyntheticConfig::default().with_samples(900);
        let source = SyntheticRecording::new(config).unwrap();
        let schedule = ChunkSchedule::full_recording(900, 400, 7, 5).unwrap();
        for window in schedule.windows() {
            let w = StoredWindow::of(&source, window);
            assert_eq!(w.order(), source.native_stored_order());
            assert_eq!(w.samples(), window.read_len());
            let mut whole = vec![0u8; w.len()];
            let all: Vec<usize> = (0..source.info().channel_count()).collect();
            let mut reference = vec![0u8; w.len()];
            source
                .read_stored(&all, window.read_global.clone(), &mut reference)
                .unwrap();
            // In three pieces of whole units, filled out of order.
            let units = w.len() / w.align();
            let cuts = [0, units / 3, units / 2, units].map(|u| u * w.align());
            for k in [2, 0, 1] {
                let (a, b) = (cuts[k], cuts[k + 1]);
                w.fill(&source, a, &mut whole[a..b]).unwrap();
            }
            if w.order() == MemoryOrder::ChannelMajor {
                assert_eq!(whole, reference, "window {}", window.index);
            }
            let mut again = vec![0u8; w.len()];
            w.fill(&source, 0, &mut again).unwrap();
            assert_eq!(whole, again, "window {}", window.index);
            assert!(w.fill(&source, 1, &mut again[..w.align()]).is_err());
            assert!(
                w.fill(&source, 0, &mut vec![0u8; w.len() + w.align()])
                    .is_err()
            );
        }
    }
}
