//! Butterworth filters in time: designed on the host in `f64` as second-order sections equal to
//! `scipy.signal.butter(..., output="sos")` ([`design`]), the `f64` host reference of
//! `sosfilt`/`sosfiltfilt` the tests hold the device to ([`host`]), and the device stage
//! ([`FilterStage`]).
//!
//! # A pure function of the recording
//!
//! The output is computed on a fixed grid of blocks of `block_samples` (from the spec) that
//! starts at each segment's first sample. Each block is filtered from its own span, `context`
//! samples of real signal on each side (clipped to the segment), forward then backward; at a
//! segment's ends the span is extended as scipy's `sosfiltfilt` extends a signal (odd
//! extension of `padlen` samples, each pass started from `sosfilt_zi` times its first value).
//! Nothing depends on where a window starts or how long it is, so the same recording gives the
//! same bits for any list of windows and any number of devices; against one `sosfiltfilt` of a
//! whole segment the difference is the filter's decay over `context` samples (by default the
//! slowest pole's decay below 1e-9, [`design::Sos::default_context`]) plus `f32` rounding.
//!
//! The causal mode runs forward only, from `context` samples before the block, started from
//! the steady state of the span's first value (at a segment's start: from its first sample, as
//! `sosfilt` with `zi = sosfilt_zi · x[0]`).

pub mod design;
pub mod host;
mod kernel;
mod stage;

pub use stage::{FilterStage, MIN_POLE_MARGIN};
