//! SpikeGLX recordings: a `.bin` of int16 frames and its `.meta` (imec AP/LF and NI streams).
//!
//! The facts used, from SpikeGLX's metadata documentation and the readers built on it
//! (SpikeGLX's `readSGLX.py`, SpikeInterface/Neo):
//! - `.meta` is `key=value` text; keys of tables start with `~` (`~imroTbl`, `~snsChanMap`).
//! - Samples are little-endian int16, time-major, `nSavedChans` per frame; `snsSaveChanSubset`
//!   (`all`, or ranges like `0:383,768`, inclusive) lists the saved channels by their
//!   *acquisition* index. In an imec stream the acquired channels are AP `0..nAP`, then LF
//!   `nAP..nAP+nLF`, then SY (counts from `acqApLfSy`, else the `~snsChanMap` header); in an NI
//!   stream MN, MA, XA, then digital words (counts from `acqMnMaXaDw`, else `snsMnMaXaDw`).
//! - µV per count: imec `imAiRangeMax / imMaxInt / gain × 10⁶`, with per-channel AP/LF gains
//!   from the `~imroTbl` entries `(chan bank refid apgain lfgain apfilt)` for NP1.0-type probes
//!   (`imDatPrb_type` 0 or absent, 1020, 1030, 1100, 1120–1123, 1200, 1300) and the single
//!   `imChan0apGain` / `imChan0lfGain` otherwise (NP2.0: 21, 24, 2003…; without those keys NP2.0
//!   AP gain is 80, the fixed gain of those probes, as Neo assumes). `imMaxInt` defaults to 512
//!   (NP1.0) or 8192 (NP2.0). NI: `niAiRangeMax / niMaxInt / gain × 10⁶` with `niMNGain` for
//!   MN channels, `niMAGain` for MA, 1 for XA; `niMaxInt` defaults to 32768. The range is taken
//!   as symmetric (`imAiRangeMin`/`niAiRangeMin` = −max, as SpikeGLX writes it).
//! - The sync channel (SY) and NI digital words are unscaled (gain 1, dimensionless).
//! - `imSampRate`/`niSampRate` are read as exact decimals; `firstSample / rate` is the start
//!   time; `fileSizeBytes` must equal the `.bin`'s size.
//! - Probe geometry (imec): from `~imroTbl` and the embedded Neuropixels catalogue, checked
//!   against `~snsShankMap` / `~snsGeomMap` (`probe.rs`, on the `neuropixels` module's grid); the sync channel
//!   has no contact. A `.meta` whose geometry cannot be had still opens, without a probe and
//!   with a warning saying why.
//!
//! One concept per file, each using only the ones before it: `meta.rs` (the `.meta`'s entries
//! and the typed reads of its keys and tables: `~snsChanMap`, `~imroTbl`, `snsSaveChanSubset`),
//! `channels.rs` (stream and channel kinds, the probe-type and max-int tables, each saved
//! channel's name and µV per count), `probe.rs` (the imec probe from `~imroTbl`), `layout.rs` (a file's description from its `.meta` and
//! size, with the file-level checks), `recording.rs` (the memory-mapped [`SpikeGlxRecording`]).

mod channels;
mod layout;
mod meta;
mod probe;
mod recording;

pub use channels::{SpikeGlxChannelKind, SpikeGlxStream};
pub(crate) use layout::{SpikeGlxLayout, spikeglx_paths};
pub use meta::SpikeGlxMeta;
pub use recording::SpikeGlxRecording;
