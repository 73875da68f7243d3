//! dspk integration tests.

mod device;
mod exit;
mod kernels;
mod staged;
mod stream;
mod upload;
