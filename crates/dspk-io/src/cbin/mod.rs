//! mtscomp `.cbin` recordings (IBL's compressed Neuropixels data): a `.cbin` of zlib chunks,
//! its `.ch` JSON header, and the SpikeGLX `.meta` of the original `.bin` beside them.
//!
//! The facts used, from mtscomp's source (PyPI `mtscomp` 1.0.2, `mtscomp.py`):
//! - The `.ch` holds `algorithm` (`zlib`), `dtype`, `n_channels`, `sample_rate`,
//!   `chunk_bounds` (sample indices, first 0, last the sample count; chunk `i` is
//!   `bounds[i]..bounds[i+1]`, the last one often shorter), `chunk_offsets` (byte offsets in
//!   the `.cbin`, first 0, one per bound), `chunk_order` (`C` time-major or `F` channel-major,
//!   the default), `do_time_diff`, `do_spatial_diff`, `sha1_compressed` (of the whole `.cbin`)
//!   and `sha1_uncompressed` (of the original time-major data); `mtschop` writes `null` SHA-1s.
//! - Each chunk is one zlib stream of the chunk's values in `chunk_order`, after a difference
//!   along time (the first frame kept) and, optionally, along channels (the first channel
//!   kept). Decoding undoes the channel difference, then the time difference, by running sums
//!   in int16 that wrap (numpy's `cumsum` into an int16 array).
//! - The `.meta` is the original `.bin`'s: `nSavedChans` must equal `n_channels` and
//!   `fileSizeBytes` the decoded size; gains, channel kinds, geometry and `firstSample` are
//!   read as for a SpikeGLX `.bin`, and the `.meta`'s exact rate is used.
//!
//! Zlib is flate2 on its zlib-rs backend: pure Rust (no C toolchain or system zlib to find on
//! CI or a user's machine, no `unsafe` of ours) with an inflate as fast as zlib-ng's, about
//! twice miniz_oxide's, so that the parallel decode, not the codec, sets the pace.
//!
//! One concept per file: `header.rs` (the `.ch`, parsed and checked), `chunk.rs` (one chunk
//! inflated and its differences undone), `layout.rs` (the `.ch` checked against the file size
//! and the `.meta`), `cache.rs` (decoded chunks shared by concurrent readers, each inflated once,
//! read-ahead on background threads), `recording.rs` (the reader: reads, `verify`).

mod cache;
mod chunk;
mod header;
mod layout;
mod recording;

pub use header::{CbinChunkOrder, CbinHeader, MAX_CHUNK_BYTES};
pub(crate) use layout::{CbinLayout, is_cbin};
#[cfg(test)]
mod tests;

pub use recording::{CbinRecording, DEFAULT_CACHE_BYTES, DEFAULT_CACHE_CHUNKS};

/// Checks the checksums the recording at `path` carries (`dspk info --verify`): an mtscomp
/// `.cbin`'s SHA-1s ([`CbinRecording::verify`]); returns what was checked, one sentence. A
/// format without checksums is an error saying so.
pub fn verify_checksums(path: &std::path::Path) -> dspk_types::DspResult<String> {
    if !is_cbin(path) {
        return Err(dspk_types::DspError::UnsupportedFormat(format!(
            "{}: only mtscomp .cbin files carry checksums to verify",
            path.display()
        )));
    }
    let rec = CbinRecording::open(path)?;
    rec.verify()?;
    let h = rec.header();
    let which: Vec<&str> = [
        h.sha1_compressed.as_ref().map(|_| "the file"),
        h.sha1_uncompressed.as_ref().map(|_| "the decoded data"),
    ]
    .into_iter()
    .flatten()
    .collect();
    Ok(format!(
        "SHA-1 of {} as {} states",
        which.join(" and of "),
        h.path().display()
    ))
}
