//! Open Ephys binary recordings: `structure.oebin` + `continuous/<stream>/continuous.dat` and
//! the stream's sample numbers (GUI 0.5 and 0.6+ layouts).
//!
//! The facts used, from the Open Ephys GUI documentation ("Binary format") and the readers built
//! on it (Neo's `OpenEphysBinaryRawIO`, which SpikeInterface's `read_openephys` uses):
//! - A folder holds `[Record Node N/]experimentK/recordingM/`; each recording folder has a
//!   `structure.oebin` (JSON) whose `continuous` list describes one entry per stream:
//!   `folder_name` (the stream's folder under `continuous/`, often with a trailing `/`),
//!   `sample_rate`, `num_channels`, `channels` (`channel_name`, `bit_volts`, `units`, …), and
//!   `source_processor_name`, `source_processor_id`, `stream_name` (0.6+). The top level has
//!   `GUI version`.
//! - `continuous.dat` is little-endian int16, time-major, `num_channels` per frame, no header.
//!   A value × the channel's `bit_volts` is µV for headstage channels and volts for ADC
//!   channels. Where `units` is empty (some GUI versions), Neo takes µV, and volts for
//!   channels whose name contains `ADC`; dspk does the same, and leaves channels whose name
//!   contains `SYNC` (Neuropixels' sync word, `bit_volts` 1) dimensionless.
//! - GUI 0.6+: `sample_numbers.npy` (int64, one per frame) and `timestamps.npy` (float64
//!   seconds, one per frame). GUI ≤ 0.5: `timestamps.npy` holds the int64 sample numbers. The
//!   first sample number over `sample_rate` is the start time (as Neo's `t_start`).
//!
//! The measured rate: in the 0.6+ layout, `(last − first sample number) / (last − first
//! timestamp)`, stated in [`RecordingInfo::metadata`](dspk_types::RecordingInfo::metadata) as
//! `measured_sample_rate` (and its difference from the nominal rate as `measured_rate_ppm`);
//! `sample_rate` stays the nominal rate of the `.oebin`.
//!
//! Each recording folder is its own recording and each stream its own source: a folder with
//! several recordings is listed by [`OpenEphysFolder::scan`] and opened by index or by the
//! recording folder's path. The recordings of one experiment (of one record node) open as one
//! recording with a segment each ([`experiment_recordings`], through [`crate::open`]), as
//! SpikeInterface reads an experiment as a block of segments.
//!
//! A Neuropixels stream's probe comes from the record node's `settings.xml` (the plugin's
//! `NP_PROBE` electrodes on the embedded catalogue's grid) where SpikeInterface's
//! `read_openephys` attaches one; a stream whose geometry cannot be had opens without a probe,
//! with one warning line saying why.
//!
//! One concept per file: `oebin.rs` (the `.oebin` JSON and one recording folder's
//! description), `folder.rs` (finding recordings and resolving a path to one stream),
//! `samples.rs` (the sample-number files, their checks, the measured rate), `settings.rs` (the
//! `settings.xml` facts: probes, electrodes, saved channels), `probe.rs` (a stream's probe from
//! them), `stream.rs` (the stream's description and the memory-mapped [`OpenEphysRecording`],
//! and [`OpenEphysFolder::open`]). Imports run one way: `stream` → `folder`, `probe`,
//! `samples` → `oebin`; `probe` → `settings`.

mod folder;
mod oebin;
mod probe;
mod samples;
mod settings;
mod stream;

pub use folder::{OpenEphysFolder, experiment_recordings, openephys_streams};
pub(crate) use folder::{is_openephys, streams_of};
pub use oebin::{OpenEphysRecordingEntry, OpenEphysStream};
pub use samples::OpenEphysLayout;
pub(crate) use stream::OpenEphysLayoutRead;
pub use stream::OpenEphysRecording;

/// The name of the JSON description in every recording folder.
pub const OEBIN_FILE: &str = "structure.oebin";
/// The name of a stream's data file.
pub const CONTINUOUS_FILE: &str = "continuous.dat";
/// The sample numbers of a stream (GUI 0.6+).
pub const SAMPLE_NUMBERS_FILE: &str = "sample_numbers.npy";
/// The timestamps of a stream: float64 seconds (GUI 0.6+) or int64 sample numbers (≤ 0.5).
pub const TIMESTAMPS_FILE: &str = "timestamps.npy";
