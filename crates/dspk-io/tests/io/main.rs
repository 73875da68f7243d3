//! Integration tests of dspk-io: files written and read back, SpikeGLX files built from
//! hand-written `.meta` text, and bad files.

mod binary;
mod common;
mod detect;
mod spikeglx;
mod writer;
