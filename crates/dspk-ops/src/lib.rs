//! Preprocessing stages of dspk on the device: temporal filters, common references, the
//! Neuropixels phase shift, whitening, bad-channel interpolation and output scaling.
//!
//! Each stage reads a device window and writes a buffer its caller owns; it launches and
//! never synchronises or reads back ([`Stage`]). A stage that needs statistics (whitening) has
//! a fitting pass of its own whose result is data, fitted once per recording and applied
//! unchanged by every window, device and job. [`build`] is the one place where a checked
//! [`PipelineSpec`](dspk_types::PipelineSpec) becomes stages and their halos.
//!
//! It sits between `dspk-kernels` (launch helpers) and `dspk-stream` (which runs a chain of
//! stages on each device between the decode and the caller): it never opens a device, reads no
//! environment and knows no files. Every stage has a host reference in `f64` that the tests
//! hold the device to.

pub mod center;
mod chain;
pub mod detect;
pub mod filter;
pub mod frames;
pub mod interpolate;
pub mod kfilt;
pub mod reference;
pub mod scale;
pub mod shift;
mod stage;
mod upload;
pub mod whiten;

pub use chain::{Chain, Fits, Rows, build};
pub use stage::{Halo, Span, Stage};
