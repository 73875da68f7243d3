//! dspk integration tests.

mod device;
mod edges;
mod exit;
mod kernels;
mod multi;
mod staged;
mod stream;
mod upload;
