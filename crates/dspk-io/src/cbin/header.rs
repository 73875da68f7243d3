//! The `.ch` JSON header of an mtscomp file, parsed and checked so that every chunk it
//! describes can be located and sized without further checks.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use dspk_types::{DspResult, SampleRate};

use crate::raw::{MAX_CHANNELS, file_error};

/// The most bytes one chunk may decompress to: a bound that keeps a hostile `.ch` (a chunk of
/// 10¹⁵ samples) an error instead of an attempt to allocate it. mtscomp's chunks are 1 s
/// (≈ 23 MB for 385 channels at 30 kHz).
pub const MAX_CHUNK_BYTES: u64 = 1 << 31;

/// How a chunk's values are laid out before compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CbinChunkOrder {
    /// Time-major (`C`): one frame of every channel after another.
    TimeMajor,
    /// Channel-major (`F`, mtscomp's default): each channel's run in turn.
    ChannelMajor,
}

/// The `.ch` file as written (only the fields dspk reads; others are ignored).
#[derive(Debug, Deserialize)]
struct RawHeader {
    algorithm: String,
    #[serde(default)]
    version: Option<String>,
    dtype: String,
    n_channels: u64,
    sample_rate: f64,
    chunk_bounds: Vec<u64>,
    chunk_offsets: Vec<u64>,
    #[serde(default = "default_order")]
    chunk_order: String,
    do_time_diff: bool,
    #[serde(default)]
    do_spatial_diff: bool,
    #[serde(default)]
    sha1_compressed: Option<String>,
    #[serde(default)]
    sha1_uncompressed: Option<String>,
}

fn default_order() -> String {
    // mtscomp 1.0 files written before `chunk_order` existed are time-major.
    "C".to_string()
}

/// A checked `.ch` header: `chunk_bounds` start at 0 and increase, `chunk_offsets` start at 0
/// and increase with one entry per bound, the chunks are int16 and within
/// [`MAX_CHUNK_BYTES`].
#[derive(Debug, Clone, PartialEq)]
pub struct CbinHeader {
    path: PathBuf,
    /// The `.ch`'s `version` (`1.0`), where stated.
    pub version: Option<String>,
    /// Channels per frame.
    pub n_channels: usize,
    /// The sample rate as the `.ch` states it (a float; the `.meta`, where there is one,
    /// gives the exact rate).
    pub sample_rate_hz: f64,
    /// Chunk `i` holds samples `chunk_bounds[i]..chunk_bounds[i + 1]`.
    pub chunk_bounds: Vec<u64>,
    /// Chunk `i` is bytes `chunk_offsets[i]..chunk_offsets[i + 1]` of the `.cbin`.
    pub chunk_offsets: Vec<u64>,
    /// The layout of a chunk's values before compression.
    pub chunk_order: CbinChunkOrder,
    /// Whether each chunk holds differences along time (its first frame as is).
    pub do_time_diff: bool,
    /// Whether each frame holds differences along channels (its first channel as is).
    pub do_spatial_diff: bool,
    /// The SHA-1 of the whole `.cbin`, lowercase hex, where stated.
    pub sha1_compressed: Option<String>,
    /// The SHA-1 of the decompressed data (time-major int16), lowercase hex, where stated.
    pub sha1_uncompressed: Option<String>,
}

impl CbinHeader {
    /// Reads and checks the `.ch` file `path`.
    pub fn read(path: &Path) -> DspResult<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                file_error(
                    path,
                    "missing .ch: an mtscomp .cbin needs its header beside it",
                )
            } else {
                dspk_types::DspError::io(path, "cannot read", &e)
            }
        })?;
        Self::parse(&text, path)
    }

    /// Parses and checks `.ch` text; `path` names the file in errors. Never panics.
    pub fn parse(text: &str, path: &Path) -> DspResult<Self> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let raw: RawHeader = serde_path_to_error::deserialize(de)
            .map_err(|e| file_error(path, format!("not an mtscomp .ch header: {e}")))?;
        let bad = |m: String| file_error(path, m);
        if raw.algorithm != "zlib" {
            return Err(bad(format!(
                "algorithm '{}' is not zlib, the only one mtscomp writes",
                raw.algorithm
            )));
        }
        if !matches!(raw.dtype.as_str(), "int16" | "<i2" | "i2") {
            return Err(bad(format!(
                "dtype '{}' is not supported: dspk reads int16 .cbin files",
                raw.dtype
            )));
        }
        if raw.n_channels == 0 || raw.n_channels > MAX_CHANNELS as u64 {
            return Err(bad(format!(
                "n_channels {} is not from 1 to {MAX_CHANNELS}",
                raw.n_channels
            )));
        }
        let n_channels = raw.n_channels as usize;
        if !(raw.sample_rate.is_finite() && raw.sample_rate > 0.0) {
            return Err(bad(format!(
                "sample_rate {} is not a finite rate above 0",
                raw.sample_rate
            )));
        }
        let chunk_order = match raw.chunk_order.as_str() {
            "C" => CbinChunkOrder::TimeMajor,
            "F" => CbinChunkOrder::ChannelMajor,
            o => return Err(bad(format!("chunk_order '{o}' is neither C nor F"))),
        };
        let b = &raw.chunk_bounds;
        let o = &raw.chunk_offsets;
        if b.len() < 2 || b[0] != 0 {
            return Err(bad(format!(
                "chunk_bounds must start at 0 and bound at least one chunk (it has {} entries{})",
                b.len(),
                b.first()
                    .map_or(String::new(), |f| format!(", the first {f}"))
            )));
        }
        if o.len() != b.len() {
            return Err(bad(format!(
                "chunk_offsets has {} entries but chunk_bounds {}: one offset per bound",
                o.len(),
                b.len()
            )));
        }
        if o[0] != 0 {
            return Err(bad(format!("chunk_offsets starts at {}, not 0", o[0])));
        }
        for i in 0..b.len() - 1 {
            if b[i + 1] <= b[i] {
                return Err(bad(format!(
                    "chunk {i}: chunk_bounds do not increase ({} then {})",
                    b[i],
                    b[i + 1]
                )));
            }
            if o[i + 1] <= o[i] {
                return Err(bad(format!(
                    "chunk {i}: chunk_offsets do not increase ({} then {})",
                    o[i],
                    o[i + 1]
                )));
            }
            let bytes = (b[i + 1] - b[i]).checked_mul(n_channels as u64 * 2);
            if bytes.is_none_or(|v| v > MAX_CHUNK_BYTES) {
                return Err(bad(format!(
                    "chunk {i}: {} samples of {n_channels} channels exceed the {MAX_CHUNK_BYTES} bytes a chunk may hold",
                    b[i + 1] - b[i]
                )));
            }
        }
        let hex = |name: &str, v: Option<String>| -> DspResult<Option<String>> {
            match v {
                Some(h) if h.len() == 40 && h.bytes().all(|c| c.is_ascii_hexdigit()) => {
                    Ok(Some(h.to_ascii_lowercase()))
                }
                Some(h) => Err(bad(format!("{name} '{h}' is not 40 hexadecimal digits"))),
                None => Ok(None),
            }
        };
        Ok(Self {
            path: path.to_path_buf(),
            version: raw.version,
            n_channels,
            sample_rate_hz: raw.sample_rate,
            chunk_order,
            do_time_diff: raw.do_time_diff,
            do_spatial_diff: raw.do_spatial_diff,
            sha1_compressed: hex("sha1_compressed", raw.sha1_compressed)?,
            sha1_uncompressed: hex("sha1_uncompressed", raw.sha1_uncompressed)?,
            chunk_bounds: raw.chunk_bounds,
            chunk_offsets: raw.chunk_offsets,
        })
    }

    /// The `.ch` file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Samples per channel.
    pub fn samples(&self) -> u64 {
        *self
            .chunk_bounds
            .last()
            .expect("checked: at least two bounds")
    }

    /// The number of chunks.
    pub fn chunk_count(&self) -> usize {
        self.chunk_bounds.len() - 1
    }

    /// The bytes the `.cbin` must hold: the last chunk offset.
    pub fn compressed_bytes(&self) -> u64 {
        *self
            .chunk_offsets
            .last()
            .expect("checked: at least two offsets")
    }

    /// The samples of chunk `i` (`i < chunk_count()`).
    pub fn chunk_samples(&self, i: usize) -> std::ops::Range<u64> {
        self.chunk_bounds[i]..self.chunk_bounds[i + 1]
    }

    /// The chunk holding sample `s` (`s < samples()`).
    pub fn chunk_of(&self, s: u64) -> usize {
        self.chunk_bounds.partition_point(|&b| b <= s) - 1
    }

    /// The rate of the `.ch` as a [`SampleRate`] (for a `.cbin` with no `.meta`).
    pub fn sample_rate(&self) -> DspResult<SampleRate> {
        SampleRate::new(self.sample_rate_hz)
            .map_err(|e| file_error(&self.path, format!("sample_rate: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"algorithm": "zlib", "version": "1.0", "dtype": "int16",
        "n_channels": 3, "sample_rate": 30000.0, "chunk_bounds": [0, 10, 15],
        "chunk_offsets": [0, 40, 70], "chunk_order": "F", "do_time_diff": true,
        "do_spatial_diff": false, "comp_level": -1,
        "sha1_compressed": "0123456789ABCDEF0123456789abcdef01234567",
        "sha1_uncompressed": null}"#;

    #[test]
    fn a_good_header_locates_its_chunks() {
        let h = CbinHeader::parse(GOOD, Path::new("x.ch")).expect("valid");
        assert_eq!((h.samples(), h.chunk_count()), (15, 2));
        assert_eq!((h.chunk_of(0), h.chunk_of(9), h.chunk_of(10)), (0, 0, 1));
        assert_eq!(h.chunk_samples(1), 10..15);
        assert_eq!(h.compressed_bytes(), 70);
        assert_eq!(h.chunk_order, CbinChunkOrder::ChannelMajor);
        assert_eq!(
            h.sha1_compressed.as_deref(),
            Some("0123456789abcdef0123456789abcdef01234567")
        );
    }

    #[test]
    fn bad_headers_are_refused_with_the_value_at_fault() {
        for (from, to, says) in [
            (
                "[0, 10, 15]",
                "[0, 10, 10]",
                "chunk 1: chunk_bounds do not increase",
            ),
            ("[0, 40, 70]", "[0, 40]", "chunk_offsets has 2 entries"),
            ("[0, 40, 70]", "[5, 40, 70]", "starts at 5"),
            ("\"int16\"", "\"float32\"", "dtype 'float32'"),
            ("\"F\"", "\"X\"", "chunk_order 'X'"),
            ("\"n_channels\": 3", "\"n_channels\": 0", "n_channels 0"),
            ("[0, 10, 15]", "[0, 10, 1e30]", "chunk_bounds"),
            ("[0, 10, 15]", "[0, 10, 4000000000000]", "exceed"),
            ("\"zlib\"", "\"lz4\"", "algorithm 'lz4'"),
            ("0123456789ABCDEF", "0123", "40 hexadecimal"),
        ] {
            let text = GOOD.replace(from, to);
            let e = CbinHeader::parse(&text, Path::new("x.ch")).expect_err(to);
            let m = e.to_string();
            assert!(m.contains(says) && m.contains("x.ch"), "{to}: {m}");
        }
    }
}
