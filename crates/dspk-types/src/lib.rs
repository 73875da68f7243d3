//! GPU-free core types of dspk, the foundation every other dspk crate and every GPU-free tool
//! builds on.
//!
//! What it holds: typed errors ([`DspError`]), exact sample rates and times ([`SampleRate`],
//! [`RationalTime`], [`TimeRange`]), channel masks, signal buffers, the recording read contract
//! ([`RecordingSource`]) with in-memory, sliced, remapped and synthetic recordings, probe
//! geometry ([`Probe`]: contact positions, shanks, ADC slots, neighbourhoods), progress
//! reporting, halo windows (clamped at the ends of the recording or padded as `numpy.pad` does)
//! with a double-buffered window loader, and the *names* of the compute runtimes
//! ([`ComputeTarget`]).
//!
//! What it deliberately is not: it never depends on CubeCL or any GPU crate, so a tool that only
//! reads recordings compiles without a GPU stack. Opening devices is `dspk-device`'s job.
//!
//! ```
//! use dspk_types::{RationalTime, SampleRate};
//!
//! let rate = SampleRate::new(30000.12).unwrap();
//! assert_eq!(rate.as_ratio(), (750003, 25));
//! let t = RationalTime::from_samples(1_000_000, rate).unwrap();
//! assert_eq!(t.to_sample_index(rate).unwrap(), 1_000_000);
//! ```
//!
//! # Features
//! `wgpu`, `cuda`, `hip`, `cpu`: mark that runtime as compiled in, so that
//! [`ComputeTarget::available`] lists it. `dspk-device` turns them on together with the CubeCL
//! runtime of the same name; they pull in no code.

mod buffer;
mod channel_map;
mod compute;
mod concat;
pub mod conformance;
mod edge;
mod error;
mod format;
mod loader;
mod mask;
mod memory;
mod notation;
mod pipeline;
mod probe;
mod progress;
mod rated;
mod scaling;
mod segment;
mod selection;
mod sink;
mod sliced;
mod source;
mod stored_window;
mod synthetic;
mod time;
mod time_selection;
mod window;

pub use buffer::*;
pub use channel_map::*;
pub use compute::*;
pub use concat::*;
pub use edge::*;
pub use error::*;
pub use format::*;
pub use loader::*;
pub use mask::*;
pub use memory::*;
pub use notation::*;
pub use pipeline::*;
pub use probe::*;
pub use progress::*;
pub use rated::*;
pub use scaling::*;
pub use segment::*;
pub use selection::*;
pub use sink::*;
pub use sliced::*;
pub use source::*;
pub use stored_window::*;
pub use synthetic::*;
pub use time::*;
pub use time_selection::*;
pub use window::*;

/// Helpers shared by the unit tests of several modules.
#[cfg(test)]
mod test_support {
    /// A fresh seed per run, printed so that a failure can be replayed.
    pub(crate) fn fresh_seed(test: &str) -> u64 {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0x5EED, |d| d.as_nanos() as u64);
        println!("{test}: seed {seed}");
        seed
    }
}
