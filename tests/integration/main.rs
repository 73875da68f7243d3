//! dspk integration tests.

mod device;
mod edges;
mod exit;
mod kernels;
mod multi;
mod offsets;
mod staged;
mod stream;
mod upload;
mod way_back;
