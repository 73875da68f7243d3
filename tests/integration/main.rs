//! dspk integration tests.

mod device;
mod exit;
mod kernels;
mod staged;
mod upload;
