//! The preprocessing stages of `dspk-ops` on every runtime: each stage against its `f64` host
//! reference, and the chain's output the same bits for any windows and devices.

mod center;
mod chain;
mod detect;
mod detect_pass;
mod detect_truth;
mod filter;
mod frames;
mod interpolate;
mod interpolate_detect;
mod kfilt;
mod reference;
mod scale;
mod shift;
mod whiten;
