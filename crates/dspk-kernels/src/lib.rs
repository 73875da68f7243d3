//! CubeCL kernels and launch helpers of dspk.
//!
//! What every dspk kernel needs ([`LaunchGeometry`] from the device's own limits, the
//! `#[cube]` index helpers, 32-bit and binding limits, special values, tuning keys and the
//! reproducibility guard, device timing) and the two kernels that get a recording onto the
//! device: [`Decoder`] (stored samples → scaled `f32`, channel-major, on the device) and
//! [`ChannelStatsKernel`] (per-channel min, max, mean, RMS and standard deviation, merged across
//! windows on the host in `f64` with a formula that a DC offset does not upset).
//!
//! It takes a [`Client`](cubecl::client::Client) and never picks or opens a device (that is
//! `dspk-device`'s job), and it turns on no CubeCL runtime: the binary or test suite that
//! links it chooses the runtimes.
//!
//! To stream a whole recording onto a device, use `dspk-stream`'s `DevicePass` (or its `scan`):
//! it overlaps the reads with the device, fills pinned staging memory from several threads and
//! decodes int16 windows where they are staged (45 GB/s end to end on an H200, where
//! `Client::write`, which the simple loop below uploads through, moved windows above 8 MiB at
//! 0.56 GB/s). The loop shows how the two kernels fit together, one window at a time.
//!
//! ```no_run
//! use cubecl::client::Client;
//! use dspk_kernels::{ChannelStats, ChannelStatsKernel, Decoder};
//! use dspk_types::{ChunkSchedule, DspResult, MemoryOrder, RecordingSource, WindowLoader};
//!
//! /// Per-channel statistics of a whole recording, decoded on the device window by window.
//! fn scan(client: &Client, source: &dyn RecordingSource) -> DspResult<Vec<ChannelStats>> {
//!     let info = source.info();
//!     let channels = info.channel_count();
//!     let schedule = ChunkSchedule::full_recording(info.samples, 30_000, 64, 64)?;
//!     let max = schedule.max_read_samples() as usize;
//!     let gains: Vec<f32> = info.channels.iter().map(|c| c.gain).collect();
//!     let offsets: Vec<f32> = info.channels.iter().map(|c| c.offset).collect();
//!     // `stream_stored` hands over channel-major bytes whatever the file's order.
//!     let order = MemoryOrder::ChannelMajor;
//!     let mut decoder = Decoder::new(client, channels, max, info.format, order, &gains, &offsets)?;
//!     let mut stats = ChannelStatsKernel::new(client, channels, max)?;
//!     let mut totals = vec![ChannelStats::EMPTY; channels];
//!     WindowLoader::new(source).stream_stored(schedule.windows(), |w, bytes| {
//!         let window = decoder.decode(bytes, w.read_len())?;
//!         stats.accumulate(&window, w.valid_local.clone(), &mut totals)
//!     })?;
//!     Ok(totals)
//! }
//! ```

pub mod args;
pub mod bench;
pub mod channel_stats;
pub mod contraction;
pub mod decode;
pub mod geometry;
pub mod limits;
pub mod pad;
pub mod special;
pub mod stats;
pub mod timing;
pub mod tuning;

pub use args::*;
pub use bench::{DecodeVsCopy, decode_vs_copy, launch_copy};
pub use channel_stats::ChannelStats;
pub use contraction::*;
pub use decode::*;
pub use geometry::*;
pub use limits::*;
pub use pad::EdgePadder;
pub use special::*;
pub use stats::*;
pub use timing::*;
pub use tuning::*;
