//! The device pass of dspk: a recording streamed onto a device, decoded, window by window.
//!
//! This is dspk's fast path and its front door for tools: each window's stored bytes cross
//! the bus once, compact, in the file's own order, are decoded on the device to `f32` µV,
//! channel-major, and are handed to your code as a device buffer, while the next window is
//! read. [`DevicePass`] streams any list of halo windows; [`scan`] is dspk's main job built on
//! it; [`DevicePass::run_to_host`] brings decoded windows back for a writer (`dspk convert`).
//!
//! A kernel of your own on every window: count, per channel, the samples beyond ±50 µV of
//! three channels of the built-in synthetic recording, and check the count on the host.
//!
//! ```
//! use std::sync::Arc;
//!
//! use cubecl::prelude::*;
//! use dspk_device::TargetExt as _;
//! use dspk_kernels::{f32_arg, read_f32};
//! use dspk_stream::{DevicePass, Flow};
//! use dspk_types::{ChunkSchedule, ComputeTarget, RecordingSource, SyntheticConfig,
//!                  SyntheticRecording};
//!
//! /// `counts[c]` = samples `lo..hi` of row `c` of `x` (rows of `samples`) beyond ±`threshold`.
//! #[cube(launch)]
//! fn crossings(x: &[f32], counts: &mut [f32], samples: usize, lo: usize, hi: usize,
//!              threshold: f32) {
//!     let row = ABSOLUTE_POS;
//!     if row < counts.len() {
//!         let mut n = 0.0f32;
//!         let mut s = lo;
//!         while s < hi {
//!             let v = x[row * samples + s];
//!             if v > threshold || v < -threshold {
//!                 n += 1.0;
//!             }
//!             s += 1;
//!         }
//!         counts[row] = n;
//!     }
//! }
//!
//! # fn main() -> dspk_types::DspResult<()> {
//! let source = Arc::new(SyntheticRecording::new(SyntheticConfig::default().with_samples(24_000))?);
//! let client = ComputeTarget::from_env()?.client()?;
//! let channels = vec![3, 77, 100];
//! let threshold = 50.0f32;
//! let windows = ChunkSchedule::full_recording(24_000, 10_000, 0, 0)?.into_windows();
//! let counts_buf = client.empty(channels.len() * 4);
//! let mut counts = vec![0u64; channels.len()];
//! let report = DevicePass::new(&client, source.clone(), windows)
//!     .channels(channels.clone())
//!     .run(|w, decoded| {
//!         crossings::launch(
//!             &client,
//!             CubeCount::Static(1, 1, 1),
//!             CubeDim::new_1d(64),
//!             decoded.arg()?,
//!             f32_arg(&counts_buf, channels.len())?,
//!             w.read_len(),
//!             w.valid_local.start,
//!             w.valid_local.end,
//!             threshold,
//!         );
//!         for (total, n) in counts.iter_mut().zip(read_f32(&client, &counts_buf, channels.len())?) {
//!             *total += n as u64;
//!         }
//!         Ok(Flow::Continue)
//!     })?;
//! assert_eq!(report.windows, 3);
//!
//! // The same count on the host, from the recording's own scaled reads.
//! let mut values = vec![0.0f32; 24_000];
//! for (c, &ch) in channels.iter().enumerate() {
//!     source.read(&[ch], 0..24_000, &mut values)?;
//!     let host = values.iter().filter(|v| v.abs() > threshold).count() as u64;
//!     assert_eq!(counts[c], host, "channel {ch}");
//! }
//! # Ok(())
//! # }
//! ```
//!
//! It is the only crate that streams recordings to devices: programs and bindings call it.
//! Where to decode ([`DecodeRoute`]) is chosen inside, reported in [`PassReport`], and
//! overridable for measurements. It takes a [`Client`](cubecl::client::Client) opened by
//! `dspk-device` and never opens a device itself.

mod classify;
mod convert;
mod detect;
mod detect_part;
mod detect_report;
mod detect_table;
mod detect_truth;
mod fit;
mod host;
mod multi;
mod ordered;
mod pass;
mod prepare;
mod preprocess;
mod preprocess_part;
mod preprocess_plan;
mod report;
mod route;
mod scan;
mod staged;
mod way_back;
mod window;

pub use classify::{Classification, DEAD_STD, Flag, NOISY_MADS, NOISY_RATIO, classify};
pub use convert::{ConvertOptions, Converted, convert};
pub use detect::{DetectOptions, Detected, detect, detect_windows, detection_halo, fit_noise};
pub use detect_part::{DetectedPart, DetectionFit, detect_part, fit_detection};
pub use detect_report::DetectReport;
pub use detect_table::{TableFormat, decode_npy_peaks, encode_peaks, peak_records, segment_starts};
pub use detect_truth::{TRUTH_TOLERANCE_MS, TruthScore, score_peaks};
/// The fitted parameters of a pipeline (dspk-ops'), as preprocessing takes and reports them.
pub use dspk_ops::Fits;
/// The detector's parameters and its peaks (dspk-ops'), as detection takes and returns them.
pub use dspk_ops::detect::{DetectSpec, Peak, PeakSign};
pub use fit::{detect_bad_channels, fit, halo_window};
pub use multi::{DeviceShare, MultiPass, MultiReport, PassDevice, WindowWorker};
pub use ordered::OrderedStats;
pub use pass::{DevicePass, Flow, PASS_STAGE, PassReport};
pub use prepare::{Prepared, is_prepared, open_pass_devices, prepare};
pub use preprocess::{
    ChainPass, PreprocessOptions, Preprocessed, preprocess, preprocess_plan, run_window_cuts,
    run_windows,
};
pub use preprocess_part::preprocess_part;
pub use preprocess_plan::{
    ClipSummary, FitSummary, InputFile, PlannedStage, PreprocessPlan, PreprocessReport, Provenance,
    StageTime, fits_of_sidecar,
};
pub use report::{ChannelFigures, DeviceFigures, Planted, ScanReport, ScanSubject};
pub use route::{DECODE_ENV, DecodeRoute};
pub use scan::{DeviceReport, ScanJob, ScanOptions, ScanResult, scan, scan_each, scan_on};
pub use staged::{Target, compile_decode_in_staging, launch_of};
pub use way_back::{OnDevice, preprocess_on_device, run_on_device};
pub use window::{
    PREPROCESS_WINDOW_SECONDS, fill_threads, one_second, preprocess_window_samples, window_samples,
};
