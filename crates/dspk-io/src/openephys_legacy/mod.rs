//! Open Ephys legacy recordings (the "Open Ephys format" of the GUI before the binary format
//! became its default): one `.continuous` file per channel.
//!
//! The facts used, from the Open Ephys GUI documentation ("Open Ephys format") and the readers
//! built on it (Neo's `OpenEphysRawIO`, which SpikeInterface's `read_openephys` uses for
//! these folders):
//! - Each file opens with a 1024-byte text header of `header.key = value;` statements:
//!   `format` (`'Open Ephys Data Format'`), `version`, `channel` (`'CH1'`), `sampleRate`,
//!   `blockLength` (1024), `bitVolts` (µV per count for headstage channels, V for ADC/AUX).
//! - Records follow: an int64 timestamp (the sample number of the record's first sample),
//!   a uint16 sample count (1024) and a uint16 recording number, all little-endian, then 1024
//!   **big-endian** int16 samples and the 10-byte marker `0 1 2 3 4 5 6 7 8 255`.
//! - Files are named `<processor>_[<source>_]<CHn|AUXn|ADCn>[_<k>].continuous`; the `_k`
//!   suffix marks the k-th recording of the session (acquisition stopped and restarted, the
//!   timestamps reset). Neo orders `CH` channels first, each kind by number.
//!
//! Where Neo fills a jump in the record timestamps with zeros, dspk starts a segment there
//! (and at each later recording), so that no sample is invented.
//!
//! One concept per file: `header.rs` (the text header), `files.rs` (which files form a
//! recording and their channel order), `recording.rs` (the checks of every record and the
//! reader).

mod files;
mod header;
mod recording;

pub(crate) use files::is_openephys_legacy;
pub use header::{LEGACY_HEADER_BYTES, LegacyHeader};
pub(crate) use recording::LegacyLayout;
pub use recording::{LEGACY_RECORD_BYTES, LEGACY_RECORD_SAMPLES, OpenEphysLegacyRecording};

#[cfg(test)]
mod tests;
