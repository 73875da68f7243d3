//! Integration tests of dspk-io: files written and read back, SpikeGLX files built from
//! hand-written `.meta` text, Open Ephys folders written from the format description (with a
//! Neuropixels `settings.xml`), and bad files.

mod binary;
mod common;
mod detect;
mod join;
mod nwb;
mod openephys;
mod openephys_probe;
mod sink;
mod spikeglx;
mod writer;
