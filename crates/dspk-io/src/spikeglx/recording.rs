//! The memory-mapped SpikeGLX recording.

use std::path::{Path, PathBuf};

use dspk_types::DspResult;

use super::channels::{SpikeGlxChannelKind, SpikeGlxStream};
use super::layout::SpikeGlxLayout;
use super::meta::SpikeGlxMeta;
use crate::mapped::MappedFile;
use crate::raw::RawData;

/// A SpikeGLX `.bin` + `.meta` recording (imec AP/LF or NI stream), memory-mapped.
///
/// Channels are the saved channels in file order, named from `~snsChanMap`, scaled to µV by
/// the gain rules of the module documentation; the sync channel and NI digital words are
/// unscaled. The `.meta` entries are the recording's metadata. The file must not be modified
/// or truncated while it is open.
#[derive(Debug)]
pub struct SpikeGlxRecording {
    raw: RawData,
    meta_path: PathBuf,
    meta: SpikeGlxMeta,
    stream: SpikeGlxStream,
    kinds: Vec<SpikeGlxChannelKind>,
    saved: Vec<usize>,
    warnings: Vec<String>,
}

impl SpikeGlxRecording {
    /// Opens `path` (the `.bin`, or its `.meta`) and maps the data.
    ///
    /// Errors name the file: a missing `.meta`, missing or malformed keys, a `fileSizeBytes`
    /// that disagrees with the file, an unsupported stream type or probe. A partial last frame
    /// is dropped and reported in [`SpikeGlxRecording::warnings`].
    pub fn open(path: impl AsRef<Path>) -> DspResult<Self> {
        let (bin, meta_path, meta) = SpikeGlxLayout::read_meta(path.as_ref())?;
        let map = MappedFile::open(&bin)?;
        let len = map.bytes().len() as u64;
        let layout = SpikeGlxLayout::from_parts(bin, meta_path, meta, len)?;
        let raw = RawData::new(map, 0, layout.info)?;
        Ok(Self {
            raw,
            meta_path: layout.meta_path,
            meta: layout.meta,
            stream: layout.stream,
            kinds: layout.kinds,
            saved: layout.saved,
            warnings: layout.warnings,
        })
    }

    /// Problems that did not stop the file from opening (a dropped partial frame).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The `.bin` file.
    pub fn path(&self) -> &Path {
        self.raw.path()
    }

    /// The `.meta` file.
    pub fn meta_path(&self) -> &Path {
        &self.meta_path
    }

    /// The parsed `.meta`.
    pub fn meta(&self) -> &SpikeGlxMeta {
        &self.meta
    }

    /// The stream type.
    pub fn stream(&self) -> SpikeGlxStream {
        self.stream
    }

    /// What each saved channel carries, in file order.
    pub fn channel_kinds(&self) -> &[SpikeGlxChannelKind] {
        &self.kinds
    }

    /// The acquisition index of each saved channel, in file order.
    pub fn saved_channels(&self) -> &[usize] {
        &self.saved
    }

    /// The most threads one large read is split across (see
    /// [`BinaryRecording::read_threads`](crate::BinaryRecording::read_threads)).
    pub fn read_threads(&self) -> usize {
        self.raw.read_threads()
    }

    /// Sets the most threads one large read is split across (0 counts as 1).
    pub fn set_read_threads(&mut self, threads: usize) {
        self.raw.set_read_threads(threads);
    }
}

source_via_raw!(SpikeGlxRecording);
