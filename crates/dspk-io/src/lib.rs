//! Recordings on disk for dspk.

mod binary;
mod decode;
mod mapped;
mod raw;
mod writer;

pub use binary::*;
pub use writer::*;
