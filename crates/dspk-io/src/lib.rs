//! Recordings on disk for dspk: raw binary files with a JSON sidecar (read and write),
//! SpikeGLX `.bin` + `.meta` and Open Ephys binary recordings, memory-mapped behind the same
//! [`RecordingSource`](dspk_types::RecordingSource) trait as every other dspk source.
//!
//! - [`BinaryRecording`]: any [`SampleFormat`](dspk_types::SampleFormat), either order, an
//!   optional header, described by `<file>.json` ([`BinarySidecar`]).
//! - [`SpikeGlxRecording`]: imec AP/LF streams (NP1.0 and NP2.0 gain rules) and NI streams.
//! - [`OpenEphysRecording`]: one continuous stream of an Open Ephys binary recording (GUI 0.5
//!   and 0.6+), chosen by name; [`OpenEphysFolder`] lists every record node, experiment and
//!   recording of a folder. Its `.npy` files are read by a checked reader ([`NpyArray`]).
//! - [`CbinRecording`]: an mtscomp `.cbin` + `.ch` (IBL's compressed data) with the SpikeGLX
//!   `.meta` beside it, its chunks inflated in parallel on the host.
//! - [`OpenEphysLegacyRecording`]: an Open Ephys legacy folder of `.continuous` files (one per
//!   channel), gaps between records as segments.
//! - [`NwbRecording`]: one `ElectricalSeries` of an NWB (HDF5) file, read by chunks through a
//!   pure-Rust HDF5 decoder; [`nwb_series`] lists a file's series.
//! - [`open`] picks the reader from the files next to the path; [`detect`] reads only the
//!   description.
//! - [`open_joined`] reads several files as one recording (a SpikeGLX run's `_t0`, `_t1`, …
//!   files placed by `firstSample`; contiguous files one segment, gaps new segments or zeros).
//! - [`write_binary`] streams any source through windows into a new file + sidecar;
//!   [`BinaryWriter`] takes windows one at a time (e.g. decoded on a device).
//! - [`write_probeinterface`] writes a recording's [`Probe`](dspk_types::Probe) as
//!   probeinterface JSON.
//! - [`read_probeinterface`] reads it back, checked against a recording's channels;
//!   [`attach_probe_file`] puts it on a recording (`--probe`).
//! - [`durable`]: how every file of dspk is written (a temporary, `fsync`, rename) and how a
//!   killed writer's temporaries are found and removed.
//!
//! What it deliberately is not: no GPU code, no printing (problems that do not stop a file from
//! opening are returned as warnings for the program to show), no writing of SpikeGLX or Open
//! Ephys files.
//!
//! Reads are served straight from the mapping: `read` of a time-major file into channel-major
//! `f32` is a blocked transpose-decode that keeps source and destination rows in cache, with
//! the same `f32` rule as [`SampleFormat::decode`](dspk_types::SampleFormat::decode). Reads of
//! more than about a million values are split by channel blocks across up to
//! [`DEFAULT_MAX_READ_THREADS`] scoped threads (`set_read_threads(1)` keeps every read on the
//! caller's thread); the results are identical. A mapped file must not be truncated or
//! rewritten while it is open (the one `unsafe` of this crate is the mapping, in `mapped.rs`).
//!
//! ```
//! use dspk_io::{WriteOptions, open, write_binary};
//! use dspk_types::{NoProgress, RecordingSource, SyntheticConfig, SyntheticRecording};
//!
//! let dir = std::env::temp_dir().join(format!("dspk-io-lib-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let synthetic = SyntheticRecording::new(SyntheticConfig::default().with_samples(1000)).unwrap();
//! let path = dir.join("copy.bin");
//! write_binary(&synthetic, &path, &WriteOptions::default(), &NoProgress).unwrap();
//! let rec = open(&path).unwrap();
//! assert_eq!(rec.info().samples, 1000);
//! assert!(rec.warnings().is_empty());
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

/// `RecordingSource` for a file reader whose samples are its `raw: RawData` field: every read
/// is the raw data's (one implementation for every format, not a copy per reader).
macro_rules! source_via_raw {
    ($reader:ty) => {
        impl dspk_types::RecordingSource for $reader {
            fn info(&self) -> &dspk_types::RecordingInfo {
                self.raw.info()
            }

            fn read(
                &self,
                channels: &[usize],
                samples: std::ops::Range<u64>,
                out: &mut [f32],
            ) -> dspk_types::DspResult<()> {
                self.raw.read(channels, samples, out)
            }

            fn read_stored(
                &self,
                channels: &[usize],
                samples: std::ops::Range<u64>,
                out: &mut [u8],
            ) -> dspk_types::DspResult<()> {
                self.raw.read_stored(channels, samples, out)
            }

            fn read_native(
                &self,
                samples: std::ops::Range<u64>,
                out: &mut [f32],
            ) -> dspk_types::DspResult<dspk_types::MemoryOrder> {
                self.raw.read_native(samples, out)
            }

            fn read_stored_native(
                &self,
                samples: std::ops::Range<u64>,
                out: &mut [u8],
            ) -> dspk_types::DspResult<dspk_types::MemoryOrder> {
                self.raw.read_stored_native(samples, out)
            }

            fn native_stored_order(&self) -> dspk_types::MemoryOrder {
                self.raw.info().order
            }
        }
    };
}

mod assemble;
mod binary;
mod cbin;
mod decode;
mod detect;
pub mod durable;
mod encode;
mod frames;
mod guard;
mod join;
mod mapped;
mod neuropixels;
mod npy;
mod nwb;
mod opened;
mod openephys;
mod openephys_legacy;
mod probeinterface;
mod raw;
mod sink;
mod spikeglx;
mod writer;

pub use assemble::{Whole, assemble_parts};
pub use binary::*;
pub use cbin::*;
pub use detect::*;
pub use encode::OutputFormat;
pub use guard::*;
pub use join::*;
pub use npy::*;
pub use nwb::{ELECTRODES_TABLE, NwbRecording, nwb_series};
pub use opened::*;
pub use openephys::*;
pub use openephys_legacy::*;
pub use probeinterface::*;
pub use raw::{DEFAULT_MAX_READ_THREADS, MAX_CHANNELS};
pub use sink::*;
pub use spikeglx::*;
pub use writer::*;
