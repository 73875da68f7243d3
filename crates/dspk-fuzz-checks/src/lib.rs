//! The checks of dspk's fuzz targets, one function per parser of untrusted text or bytes: the
//! `cargo fuzz` targets in `fuzz/` call them on libFuzzer's inputs, and this crate's replay
//! test calls them on every file of the committed corpus (`fuzz/corpus/<target>/`), so the two
//! cannot drift and a regression fails the ordinary `cargo test --workspace`.
//!
//! Each check feeds the bytes to the parser exactly as dspk reads them and panics (a crash, to
//! the fuzzer) if the parser panics or an accepted input breaks a property: the parsed value
//! re-parses to itself after being written back, and what the parser promises of an `Ok` value
//! holds. Text parsers take only valid UTF-8: every reader of these files refuses other bytes
//! before parsing (`read_to_string`), and the program's arguments are UTF-8 `String`s; other
//! inputs return without a check.
//!
//! What it deliberately is not: a test helper of the parsers' crates (their unit tests stay
//! beside them), or part of any published API (`publish = false`).
//!
//! ```
//! for (name, check) in dspk_fuzz_checks::TARGETS {
//!     check(b"{}");
//!     assert!(!name.is_empty());
//! }
//! ```

use std::collections::HashSet;
use std::path::Path;

use dspk_io::{
    BinarySidecar, CbinHeader, LEGACY_HEADER_BYTES, LegacyHeader, MAX_CHANNELS, MAX_CHUNK_BYTES,
    NpyHeader, OpenEphysRecordingEntry, SpikeGlxMeta,
};
use dspk_types::{ChannelList, ChannelMapFile, RecordingInfo, SampleRate, TimeSpec};

/// A target's check: panics if the parser panics or an accepted input breaks a property.
pub type Check = fn(&[u8]);

/// Every fuzz target: its name (the folder of its corpus and the `cargo fuzz` target) and its
/// check.
pub const TARGETS: &[(&str, Check)] = &[
    ("sidecar", sidecar),
    ("spikeglx_meta", spikeglx_meta),
    ("oebin", oebin),
    ("npy_header", npy_header),
    ("channel_map_toml", channel_map_toml),
    ("channel_map_json", channel_map_json),
    ("cli_time", cli_time),
    ("cli_channels", cli_channels),
    ("nwb", nwb),
    ("cbin_ch", cbin_ch),
    ("legacy_header", legacy_header),
];

/// The input as text, when it is UTF-8 (see the crate documentation).
fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// A raw binary file's JSON sidecar ([`BinarySidecar::parse`]): an accepted sidecar passes its
/// own check, describes `channel_count` channels with finite gains and offsets, and reads back
/// equal from the JSON dspk writes for it.
pub fn sidecar(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let path = Path::new("fuzz.bin.json");
    let Ok(parsed) = BinarySidecar::parse(text, path) else {
        return;
    };
    parsed
        .check(path)
        .expect("a parsed sidecar passes its own check");
    let channels = parsed.channel_infos();
    assert_eq!(channels.len(), parsed.channel_count);
    assert!(
        channels
            .iter()
            .all(|c| c.gain.is_finite() && c.offset.is_finite())
    );
    let written = serde_json::to_string(&parsed).expect("a sidecar serializes");
    let again = BinarySidecar::parse(&written, path)
        .unwrap_or_else(|e| panic!("the sidecar dspk writes does not read back: {e}: {written}"));
    assert_eq!(again, parsed, "sidecar round trip through {written}");
}

/// A SpikeGLX `.meta` ([`SpikeGlxMeta::parse`], then [`SpikeGlxMeta::recording_info`] for a
/// `.bin` of the size `fileSizeBytes` states): the entries written back as `key=value` lines
/// parse to the same entries; an accepted description has `nSavedChans` channels with finite,
/// non-zero gains and the whole frames of the `.bin`.
pub fn spikeglx_meta(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let path = Path::new("fuzz.ap.meta");
    let Ok(meta) = SpikeGlxMeta::parse(text, path) else {
        return;
    };
    let written: String = meta
        .entries()
        .iter()
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect();
    let again = SpikeGlxMeta::parse(&written, path)
        .unwrap_or_else(|e| panic!("written-back .meta does not parse: {e}: {written:?}"));
    assert_eq!(again, meta, ".meta round trip through {written:?}");

    let bin_len = meta
        .get("fileSizeBytes")
        .and_then(|t| t.parse().ok())
        .unwrap_or(4 * 385 * 2);
    let Ok(info) = meta.recording_info(Path::new("fuzz.ap.bin"), path, bin_len) else {
        return;
    };
    let saved: usize = meta
        .get("nSavedChans")
        .and_then(|t| t.parse().ok())
        .expect("an accepted .meta states nSavedChans");
    assert_eq!(info.channels.len(), saved);
    assert_eq!(info.samples, bin_len / (saved as u64 * 2));
    check_channels(&info);
}

/// The channels of an accepted description: finite, non-zero gains and finite offsets.
fn check_channels(info: &RecordingInfo) {
    for c in &info.channels {
        assert!(
            c.gain.is_finite() && c.gain != 0.0 && c.offset.is_finite(),
            "channel {} has gain {} and offset {}",
            c.name,
            c.gain,
            c.offset
        );
    }
}

/// An Open Ephys `structure.oebin` ([`OpenEphysRecordingEntry::parse`]): accepted streams have
/// distinct, non-empty names and 1 to [`MAX_CHANNELS`] channels, each is found by its name,
/// and choosing no stream works exactly when there is one.
pub fn oebin(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let Ok(entry) = OpenEphysRecordingEntry::parse(text, Path::new("fuzz-recording")) else {
        return;
    };
    let mut names = HashSet::new();
    for (i, s) in entry.streams.iter().enumerate() {
        assert!(!s.name.is_empty() && names.insert(s.name.as_str()));
        assert!((1..=MAX_CHANNELS).contains(&s.channel_count));
        assert_eq!(entry.stream_index(Some(&s.name)).ok(), Some(i));
        if let Some(n) = &s.stream_name {
            let _ = entry.stream_index(Some(n));
        }
    }
    assert_eq!(entry.stream_index(None).is_ok(), entry.streams.len() == 1);
    let _ = entry.label();
}

/// A `.npy` header ([`NpyHeader::parse`], on the file's bytes): an accepted header has a known
/// version, at most 32 dimensions and its data offset inside the bytes, and the header NumPy
/// would write for the same values parses to them.
pub fn npy_header(data: &[u8]) {
    let Ok(h) = NpyHeader::parse(data) else {
        return;
    };
    assert!(matches!(h.version, (1, 0) | (2, 0) | (3, 0)));
    assert!(h.shape.len() <= 32);
    assert!(h.data_offset <= data.len() as u64);
    if let Some(bytes) = npy_encode(&h) {
        let again = NpyHeader::parse(&bytes)
            .unwrap_or_else(|e| panic!("re-encoded header does not parse: {e}: {bytes:?}"));
        assert_eq!(
            (
                &again.descr,
                again.fortran_order,
                &again.shape,
                again.version
            ),
            (&h.descr, h.fortran_order, &h.shape, h.version)
        );
        assert_eq!(again.data_offset, bytes.len() as u64);
    }
}

/// The header NumPy writes for `h` (no padding), `None` where the values cannot be written
/// in `h`'s version.
fn npy_encode(h: &NpyHeader) -> Option<Vec<u8>> {
    let quote = if h.descr.contains('\'') { '"' } else { '\'' };
    let shape = match h.shape.as_slice() {
        [n] => format!("{n},"),
        dims => dims
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    };
    let fortran = if h.fortran_order { "True" } else { "False" };
    let dict = format!(
        "{{'descr': {quote}{}{quote}, 'fortran_order': {fortran}, 'shape': ({shape}), }}\n",
        h.descr
    );
    let header: Vec<u8> = if h.version.0 == 3 {
        dict.into_bytes()
    } else {
        // Latin-1, as parsed: every char of a 1.0 or 2.0 header is below 256.
        dict.chars()
            .map(|c| u8::try_from(u32::from(c)).ok())
            .collect::<Option<_>>()?
    };
    if header.len() > dspk_io::MAX_NPY_HEADER_BYTES {
        return None;
    }
    let mut out = b"\x93NUMPY".to_vec();
    out.extend([h.version.0, h.version.1]);
    if h.version.0 == 1 {
        out.extend(u16::try_from(header.len()).ok()?.to_le_bytes());
    } else {
        out.extend(u32::try_from(header.len()).ok()?.to_le_bytes());
    }
    out.extend(header);
    Some(out)
}

/// A channel map in TOML ([`ChannelMapFile::from_toml_str`]): an accepted map validates with
/// one output per pair and distinct inputs, and the JSON and the TOML dspk writes for it read
/// back equal.
pub fn channel_map_toml(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let Ok(file) = ChannelMapFile::from_toml_str(text) else {
        return;
    };
    check_map(&file);
    let written = file
        .to_toml_string()
        .expect("a map read from TOML can be written as TOML");
    let again = ChannelMapFile::from_toml_str(&written)
        .unwrap_or_else(|e| panic!("written TOML does not read back: {e}: {written}"));
    assert_eq!(again, file, "TOML round trip through {written}");
}

/// A channel map in JSON ([`ChannelMapFile::from_json_str`]): as [`channel_map_toml`], the
/// TOML round trip only where TOML can hold the numbers.
pub fn channel_map_json(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let Ok(file) = ChannelMapFile::from_json_str(text) else {
        return;
    };
    check_map(&file);
    // JSON takes numbers TOML's 64-bit signed integers cannot hold: TOML only when writable.
    if let Ok(written) = file.to_toml_string() {
        let again = ChannelMapFile::from_toml_str(&written)
            .unwrap_or_else(|e| panic!("written TOML does not read back: {e}: {written}"));
        assert_eq!(again, file, "TOML round trip through {written}");
    }
}

/// An accepted map: one output per pair, distinct inputs, and the JSON dspk writes for it
/// reads back equal.
fn check_map(file: &ChannelMapFile) {
    let outputs = file.remap.validate().expect("an accepted map validates");
    assert_eq!(outputs.len(), file.remap.pairs.len());
    let mut inputs = HashSet::new();
    assert!(outputs.iter().all(|(i, _)| inputs.insert(*i)));
    let written = file
        .to_json_string()
        .expect("an accepted map can be written as JSON");
    let again = ChannelMapFile::from_json_str(&written)
        .unwrap_or_else(|e| panic!("written JSON does not read back: {e}: {written}"));
    assert_eq!(&again, file, "JSON round trip through {written}");
}

/// The program's time arguments (`--start`, `--duration`: `TimeSpec::parse`): an accepted time
/// written back (`{seconds}` or `{n}smp`) parses to itself, and converts to a sample index at
/// any rate without panicking.
pub fn cli_time(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let Ok(t) = TimeSpec::parse(text) else {
        return;
    };
    let written = match t {
        TimeSpec::Seconds(s) => s.to_string(),
        TimeSpec::Samples(n) => format!("{n}smp"),
    };
    let again = TimeSpec::parse(&written)
        .unwrap_or_else(|e| panic!("time {written} written back does not parse: {e}"));
    assert_eq!(again, t, "time round trip through {written}");
    let _ = t.to_string();
    for rate in ["30000", "29999.4325", "1/3", "2500", "1000000000"] {
        let rate: SampleRate = rate.parse().expect("a valid rate");
        let _ = t.to_sample_index(rate);
    }
}

/// The program's channel lists (`--channels`: `ChannelList::parse`): resolving an accepted
/// list against a recording gives distinct indices below its channel count, in the order
/// written.
pub fn cli_channels(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let Ok(list) = ChannelList::parse(text) else {
        return;
    };
    for count in [1, 16, 385] {
        if let Ok(channels) = list.resolve(count) {
            assert!(!channels.is_empty());
            let mut seen = HashSet::new();
            assert!(channels.iter().all(|&c| c < count && seen.insert(c)));
        }
    }
}

/// An mtscomp `.ch` header ([`CbinHeader::parse`]): an accepted header bounds at least one
/// chunk, its bounds and offsets start at 0 and increase with one offset per bound, every
/// chunk fits [`MAX_CHUNK_BYTES`], and each chunk's first and last samples are found in it.
pub fn cbin_ch(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let Ok(h) = CbinHeader::parse(text, Path::new("fuzz.ch")) else {
        return;
    };
    let n = h.chunk_count();
    assert!(n >= 1 && h.chunk_offsets.len() == n + 1 && h.chunk_bounds[0] == 0);
    assert!((1..=MAX_CHANNELS).contains(&h.n_channels));
    assert_eq!(h.chunk_offsets[0], 0);
    for i in 0..n {
        let r = h.chunk_samples(i);
        assert!(r.start < r.end && h.chunk_offsets[i] < h.chunk_offsets[i + 1]);
        assert!((r.end - r.start) * h.n_channels as u64 * 2 <= MAX_CHUNK_BYTES);
        assert_eq!((h.chunk_of(r.start), h.chunk_of(r.end - 1)), (i, i));
    }
    assert_eq!(h.samples(), h.chunk_bounds[n]);
    let _ = h.sample_rate();
}

/// An Open Ephys legacy `.continuous` header ([`LegacyHeader::parse`], on the file's first
/// 1024 bytes, any bytes): an accepted header has a gain finite and above 0 as `f32`, records
/// of 1024 samples, and the header written back from its values parses to the same values.
pub fn legacy_header(data: &[u8]) {
    let path = Path::new("fuzz.continuous");
    let Ok(h) = LegacyHeader::parse(data, path) else {
        return;
    };
    let gain = h.bit_volts as f32;
    assert!(gain.is_finite() && gain > 0.0 && h.block_length == 1024);
    // Values with a `;` or `'` cannot be written back in this syntax (the GUI never writes them).
    if h.channel.contains([';', '\'', '=']) || h.channel.trim() != h.channel {
        return;
    }
    let written = format!(
        "header.format = 'Open Ephys Data Format'; header.channel = '{}'; header.sampleRate = {}; header.blockLength = 1024; header.bitVolts = {:?};",
        h.channel, h.sample_rate, h.bit_volts
    );
    if written.len() > LEGACY_HEADER_BYTES {
        return;
    }
    let again = LegacyHeader::parse(written.as_bytes(), path)
        .unwrap_or_else(|e| panic!("the header written back does not parse: {e}: {written}"));
    assert_eq!(
        (&again.channel, again.sample_rate, again.bit_volts),
        (&h.channel, h.sample_rate, h.bit_volts),
        "legacy header round trip through {written}"
    );
}

/// An NWB file's metadata as dspk reads it ([`dspk_io::NwbRecording::from_bytes`], any bytes,
/// its only `ElectricalSeries`): the series search, the electrodes table, the scaling and the
/// clock. An accepted file has at least one channel, a name, a finite gain and offset and a
/// probe entry (where it has a probe) per channel, and a rate above 0; reads of its first
/// samples, scaled and stored, either fail with an error or fill exactly what was asked.
pub fn nwb(data: &[u8]) {
    use dspk_types::RecordingSource;
    let bytes: std::sync::Arc<[u8]> = data.into();
    let Ok(rec) = dspk_io::NwbRecording::from_bytes(bytes, Path::new("fuzz.nwb"), None) else {
        return;
    };
    let info = rec.info();
    let c = info.channel_count();
    assert!(c >= 1);
    assert!(
        info.channels
            .iter()
            .all(|ch| ch.gain.is_finite() && ch.offset.is_finite())
    );
    if let Some(p) = &info.probe {
        assert_eq!(p.channel_count(), c);
    }
    assert!(info.sample_rate.rate_hz() > 0.0);
    assert_eq!(info.metadata.get("format").map(String::as_str), Some("nwb"));
    let n = info.samples.min(64);
    let all: Vec<usize> = (0..c.min(8)).collect();
    let mut out = vec![f32::NAN; all.len() * n as usize];
    if rec.read(&all, 0..n, &mut out).is_ok() {
        assert!(out.iter().all(|v| !v.is_nan()) || info.format.is_float());
    }
    let mut stored = vec![0u8; all.len() * n as usize * info.format.bytes()];
    let _ = rec.read_stored(&all, 0..n, &mut stored);
}
