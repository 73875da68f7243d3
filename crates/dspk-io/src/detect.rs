//! Format detection: which reader a path needs, and opening it.

use crate::JoinedRecording;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dspk_types::{DspError, DspResult, MemoryOrder, RecordingInfo, RecordingSource};

use crate::binary::{BinaryLayout, BinaryRecording, binary_paths};
use crate::cbin::{CbinLayout, CbinRecording, is_cbin};
use crate::nwb::{NwbLayout, NwbRecording, is_nwb};
use crate::openephys::{OpenEphysLayoutRead, OpenEphysRecording, is_openephys};
use crate::openephys_legacy::{LegacyLayout, OpenEphysLegacyRecording, is_openephys_legacy};
use crate::raw::file_error;
use crate::spikeglx::{SpikeGlxLayout, SpikeGlxRecording, spikeglx_paths};

/// What [`open`] and [`detect`] support, for messages.
pub const SUPPORTED_FORMATS: &str = "raw binary with a JSON sidecar (<file> + <file>.json), \
     SpikeGLX (.bin + .meta), mtscomp (.cbin + .ch), Open Ephys legacy (.continuous files), Open Ephys binary (a recording folder, its structure.oebin, or a \
     stream's continuous.dat), NWB (an .nwb HDF5 file; --stream chooses its \
     ElectricalSeries)";

/// The on-disk formats dspk-io reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileFormat {
    /// Raw binary with a `<file>.json` sidecar ([`BinaryRecording`]).
    Binary,
    /// SpikeGLX `.bin` + `.meta` ([`SpikeGlxRecording`]).
    SpikeGlx,
    /// Open Ephys binary: `structure.oebin` + `continuous.dat` + `.npy`
    /// ([`OpenEphysRecording`]).
    OpenEphys,
    /// NWB on HDF5: one `ElectricalSeries` of an `.nwb` file ([`NwbRecording`]).
    Nwb,
    /// mtscomp `.cbin` + `.ch` (+ SpikeGLX `.meta`) ([`CbinRecording`]).
    Cbin,
    /// Open Ephys legacy `.continuous` files ([`OpenEphysLegacyRecording`]).
    OpenEphysLegacy,
}

impl FileFormat {
    /// A short name (`binary`, `spikeglx`, `openephys`).
    pub fn name(&self) -> &'static str {
        match self {
            FileFormat::Binary => "binary",
            FileFormat::SpikeGlx => "spikeglx",
            FileFormat::OpenEphys => "openephys",
            FileFormat::Nwb => "nwb",
            FileFormat::Cbin => "cbin",
            FileFormat::OpenEphysLegacy => "openephys-legacy",
        }
    }

    /// What it is, for people (`raw binary + JSON sidecar`, `SpikeGLX`, `Open Ephys binary`).
    pub fn label(&self) -> &'static str {
        match self {
            FileFormat::Binary => "raw binary + JSON sidecar",
            FileFormat::SpikeGlx => "SpikeGLX",
            FileFormat::OpenEphys => "Open Ephys binary",
            FileFormat::Nwb => "NWB (HDF5)",
            FileFormat::Cbin => "mtscomp .cbin",
            FileFormat::OpenEphysLegacy => "Open Ephys legacy",
        }
    }

    /// What [`Detected::metadata_path`] is, for messages (`the recording's sidecar`).
    pub fn metadata_role(&self) -> &'static str {
        match self {
            FileFormat::Binary => "the recording's sidecar",
            FileFormat::SpikeGlx => "the recording's .meta",
            FileFormat::OpenEphys => "the recording's structure.oebin",
            FileFormat::Nwb => "the recording's NWB file",
            FileFormat::Cbin => "the recording's .ch",
            FileFormat::OpenEphysLegacy => "the recording's first .continuous file",
        }
    }
}

impl fmt::Display for FileFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What [`detect`] found: the format, the files, and the description, without reading data.
#[derive(Debug, Clone, PartialEq)]
pub struct Detected {
    /// The format.
    pub format: FileFormat,
    /// The file holding the samples.
    pub data_path: PathBuf,
    /// The file describing them (sidecar, `.meta` or `structure.oebin`).
    pub metadata_path: PathBuf,
    /// Other files the recording consists of (Open Ephys: the sample numbers and timestamps
    /// `.npy` files; empty for the other formats).
    pub index_paths: Vec<PathBuf>,
    /// The recording's description.
    pub info: RecordingInfo,
    /// Problems that would not stop the file from opening (a partial last frame).
    pub warnings: Vec<String>,
}

/// Which format `path` is in, from the files next to it (no reads):
/// a `.meta` path or a sibling `.meta` → SpikeGLX; a `.json` sidecar → binary; a
/// `structure.oebin`, a folder with one in it or below it, or a `continuous.dat` (or its
/// folder) under `continuous/` next to one → Open Ephys.
pub fn detect_format(path: &Path) -> DspResult<FileFormat> {
    if path.is_dir() {
        if is_openephys(path) {
            return Ok(FileFormat::OpenEphys);
        }
        if is_openephys_legacy(path) {
            return Ok(FileFormat::OpenEphysLegacy);
        }
        return Err(DspError::UnsupportedFormat(format!(
            "{} is a directory with no Open Ephys structure.oebin in it or below it: give the recording's data file (supported: {SUPPORTED_FORMATS})",
            path.display()
        )));
    }
    if is_cbin(path) {
        return Ok(FileFormat::Cbin);
    }
    if is_openephys_legacy(path) {
        return Ok(FileFormat::OpenEphysLegacy);
    }
    if is_nwb(path) {
        return Ok(FileFormat::Nwb);
    }
    let (bin, meta) = spikeglx_paths(path);
    let is_meta = path.extension().is_some_and(|e| e == "meta");
    if is_meta || meta.is_file() {
        if !bin.exists() && is_meta {
            return Err(file_error(
                &bin,
                "missing .bin: the .meta has no data file next to it",
            ));
        }
        return Ok(FileFormat::SpikeGlx);
    }
    let (data, sidecar) = binary_paths(path);
    if sidecar.is_file() {
        if !data.exists() {
            return Err(file_error(
                &data,
                "missing data file: the sidecar has no data file next to it",
            ));
        }
        return Ok(FileFormat::Binary);
    }
    if is_openephys(path) {
        return Ok(FileFormat::OpenEphys);
    }
    if !path.exists() {
        return Err(file_error(path, "no such file"));
    }
    Err(DspError::UnsupportedFormat(format!(
        "{}: no sidecar {} and no .meta {} next to it (supported: {SUPPORTED_FORMATS})",
        path.display(),
        sidecar.display(),
        meta.display()
    )))
}

/// Detects the format of `path` and reads its description only (the sidecar or `.meta`, and
/// the data file's size): no mapping, no sample reads.
pub fn detect(path: impl AsRef<Path>) -> DspResult<Detected> {
    let path = path.as_ref();
    match detect_format(path)? {
        FileFormat::Binary => {
            let l = BinaryLayout::read(path)?;
            Ok(Detected {
                format: FileFormat::Binary,
                data_path: l.data,
                metadata_path: l.sidecar_path,
                index_paths: Vec::new(),
                info: l.info,
                warnings: l.warnings,
            })
        }
        FileFormat::SpikeGlx => {
            let l = SpikeGlxLayout::read(path)?;
            Ok(Detected {
                format: FileFormat::SpikeGlx,
                data_path: l.bin,
                metadata_path: l.meta_path,
                index_paths: Vec::new(),
                info: l.info,
                warnings: l.warnings,
            })
        }
        FileFormat::OpenEphys => {
            let l = OpenEphysLayoutRead::detect(path, None)?;
            Ok(Detected {
                format: FileFormat::OpenEphys,
                data_path: l.data,
                metadata_path: l.entry.oebin_path.clone(),
                index_paths: l.index_files,
                info: l.info,
                warnings: l.warnings,
            })
        }
        FileFormat::Nwb => {
            let l = NwbLayout::read(path, None)?;
            Ok(Detected {
                format: FileFormat::Nwb,
                data_path: l.path(),
                metadata_path: l.path(),
                index_paths: Vec::new(),
                info: l.info,
                warnings: l.warnings,
            })
        }
        FileFormat::Cbin => {
            let l = CbinLayout::read(path)?;
            Ok(Detected {
                format: FileFormat::Cbin,
                metadata_path: l.header.path().to_path_buf(),
                data_path: l.cbin,
                index_paths: l.meta_path.into_iter().collect(),
                info: l.info,
                warnings: l.warnings,
            })
        }
        FileFormat::OpenEphysLegacy => {
            let l = LegacyLayout::read(path)?;
            let mut files = l.files.into_iter();
            let first = files
                .next()
                .expect("a legacy recording has at least one file");
            Ok(Detected {
                format: FileFormat::OpenEphysLegacy,
                data_path: first.clone(),
                metadata_path: first,
                index_paths: files.collect(),
                info: l.info,
                warnings: l.warnings,
            })
        }
    }
}

/// A recording opened by [`open`]: one of the file readers, itself a [`RecordingSource`].
#[derive(Debug)]
pub enum FileRecording {
    /// Raw binary with a sidecar.
    Binary(BinaryRecording),
    /// SpikeGLX.
    SpikeGlx(SpikeGlxRecording),
    /// One stream of an Open Ephys binary recording.
    OpenEphys(OpenEphysRecording),
    /// One `ElectricalSeries` of an NWB file.
    Nwb(NwbRecording),
    /// An mtscomp `.cbin`.
    Cbin(CbinRecording),
    /// An Open Ephys legacy folder.
    OpenEphysLegacy(OpenEphysLegacyRecording),
    /// Several recordings read as one: the recordings of an Open Ephys experiment, a segment
    /// each.
    Joined(JoinedRecording),
}

impl FileRecording {
    /// The format.
    pub fn format(&self) -> FileFormat {
        match self {
            FileRecording::Binary(_) => FileFormat::Binary,
            FileRecording::SpikeGlx(_) => FileFormat::SpikeGlx,
            FileRecording::OpenEphys(_) => FileFormat::OpenEphys,
            FileRecording::Nwb(_) => FileFormat::Nwb,
            FileRecording::Cbin(_) => FileFormat::Cbin,
            FileRecording::OpenEphysLegacy(_) => FileFormat::OpenEphysLegacy,
            FileRecording::Joined(j) => j.format,
        }
    }

    /// Problems that did not stop the file from opening (a dropped partial frame); programs
    /// show these, libraries do not print.
    pub fn warnings(&self) -> &[String] {
        match self {
            FileRecording::Binary(r) => r.warnings(),
            FileRecording::SpikeGlx(r) => r.warnings(),
            FileRecording::OpenEphys(r) => r.warnings(),
            FileRecording::Nwb(r) => r.warnings(),
            FileRecording::Cbin(r) => r.warnings(),
            FileRecording::OpenEphysLegacy(r) => r.warnings(),
            FileRecording::Joined(j) => &j.warnings,
        }
    }

    /// The file holding the samples.
    pub fn path(&self) -> &Path {
        match self {
            FileRecording::Binary(r) => r.path(),
            FileRecording::SpikeGlx(r) => r.path(),
            FileRecording::OpenEphys(r) => r.path(),
            FileRecording::Nwb(r) => r.path(),
            FileRecording::Cbin(r) => r.path(),
            FileRecording::OpenEphysLegacy(r) => r.path(),
            FileRecording::Joined(j) => &j.paths[0],
        }
    }

    /// The most threads one large read is split across.
    pub fn read_threads(&self) -> usize {
        match self {
            FileRecording::Binary(r) => r.read_threads(),
            FileRecording::SpikeGlx(r) => r.read_threads(),
            FileRecording::OpenEphys(r) => r.read_threads(),
            FileRecording::Nwb(r) => r.read_threads(),
            FileRecording::Cbin(r) => r.decode_threads(),
            FileRecording::OpenEphysLegacy(_) => 1,
            FileRecording::Joined(_) => crate::DEFAULT_MAX_READ_THREADS,
        }
    }

    /// Sets the most threads one large read is split across (0 counts as 1).
    pub fn set_read_threads(&mut self, threads: usize) {
        match self {
            FileRecording::Binary(r) => r.set_read_threads(threads),
            FileRecording::SpikeGlx(r) => r.set_read_threads(threads),
            FileRecording::OpenEphys(r) => r.set_read_threads(threads),
            FileRecording::Nwb(r) => r.set_read_threads(threads),
            FileRecording::Cbin(r) => r.set_decode_threads(threads),
            FileRecording::OpenEphysLegacy(_) => {}
            FileRecording::Joined(_) => {}
        }
    }

    /// As a shared trait object.
    pub fn into_source(self) -> Arc<dyn RecordingSource> {
        match self {
            FileRecording::Binary(r) => Arc::new(r),
            FileRecording::SpikeGlx(r) => Arc::new(r),
            FileRecording::OpenEphys(r) => Arc::new(r),
            FileRecording::Nwb(r) => Arc::new(r),
            FileRecording::Cbin(r) => Arc::new(r),
            FileRecording::OpenEphysLegacy(r) => Arc::new(r),
            FileRecording::Joined(j) => Arc::new(j.recording),
        }
    }

    fn source(&self) -> &dyn RecordingSource {
        match self {
            FileRecording::Binary(r) => r,
            FileRecording::SpikeGlx(r) => r,
            FileRecording::OpenEphys(r) => r,
            FileRecording::Nwb(r) => r,
            FileRecording::Cbin(r) => r,
            FileRecording::OpenEphysLegacy(r) => r,
            FileRecording::Joined(j) => &j.recording,
        }
    }
}

impl RecordingSource for FileRecording {
    fn info(&self) -> &RecordingInfo {
        self.source().info()
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        self.source().read(channels, samples, out)
    }

    fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        self.source().read_stored(channels, samples, out)
    }

    fn read_native(&self, samples: Range<u64>, out: &mut [f32]) -> DspResult<MemoryOrder> {
        self.source().read_native(samples, out)
    }

    fn read_stored_native(&self, samples: Range<u64>, out: &mut [u8]) -> DspResult<MemoryOrder> {
        self.source().read_stored_native(samples, out)
    }

    fn native_stored_order(&self) -> MemoryOrder {
        self.source().native_stored_order()
    }

    fn chunk_samples(&self) -> Option<u64> {
        self.source().chunk_samples()
    }
}

/// Opens the recording at `path` in whichever supported format it is ([`detect_format`]).
/// An unknown format is [`DspError::UnsupportedFormat`] listing what is supported.
///
/// Open Ephys: `path` chooses the recording and the stream ([`OpenEphysRecording::open`] with
/// no stream name): a stream's `continuous.dat` or folder opens that stream; a recording folder
/// or its `structure.oebin` opens its only stream, and is an error listing the stream names
/// when it has several; a folder holding the recordings of one experiment (of one record node)
/// opens them as one recording of a segment each; a folder above several experiments or record
/// nodes is an error listing its recordings.
pub fn open(path: impl AsRef<Path>) -> DspResult<FileRecording> {
    open_with(path, &OpenOptions::default())
}

/// What [`open_with`] is told beyond the path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// The Open Ephys continuous stream to read, by its folder name or a unique `stream_name`
    /// (`Neuropix-PXI-100.ProbeA-AP` or `ProbeA-AP`): the one way to choose a stream of a
    /// folder of several recordings, whose paths cannot name one. `None`: the stream the path
    /// names, or the only one. An NWB file's `ElectricalSeries`, by its path in the file
    /// (`acquisition/ElectricalSeries`) or its last part. Refused for formats that have no
    /// streams.
    pub stream: Option<String>,
}

/// [`open`] with `options`: an Open Ephys recording folder, or a folder of one experiment's
/// recordings (each read from the stream of that name), opened on the stream named.
pub fn open_with(path: impl AsRef<Path>, options: &OpenOptions) -> DspResult<FileRecording> {
    let path = path.as_ref();
    let stream = options.stream.as_deref();
    let format = detect_format(path)?;
    if let (
        Some(name),
        FileFormat::Binary | FileFormat::SpikeGlx | FileFormat::Cbin | FileFormat::OpenEphysLegacy,
    ) = (stream, format)
    {
        return Err(DspError::config(format!(
            "{}: a {} recording has no streams to choose from; the stream name '{name}' applies \
             to Open Ephys recordings and NWB files",
            path.display(),
            format.label()
        )));
    }
    Ok(match format {
        FileFormat::Binary => FileRecording::Binary(BinaryRecording::open(path)?),
        FileFormat::SpikeGlx => FileRecording::SpikeGlx(SpikeGlxRecording::open(path)?),
        FileFormat::Nwb => FileRecording::Nwb(NwbRecording::open(path, stream)?),
        FileFormat::Cbin => FileRecording::Cbin(CbinRecording::open(path)?),
        FileFormat::OpenEphysLegacy => {
            FileRecording::OpenEphysLegacy(OpenEphysLegacyRecording::open(path)?)
        }
        FileFormat::OpenEphys => match crate::experiment_recordings(path) {
            Some(dirs) => FileRecording::Joined(crate::join::open_experiment(dirs, stream)?),
            None => FileRecording::OpenEphys(OpenEphysRecording::open(path, stream)?),
        },
    })
}
