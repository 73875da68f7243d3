//! The 1024-byte text header of a legacy `.continuous` file, parsed and checked.

use std::path::Path;

use dspk_types::{DspResult, SampleRate};

use crate::raw::file_error;

/// Bytes of the text header at the start of every legacy file.
pub const LEGACY_HEADER_BYTES: usize = 1024;

/// The facts of a `.continuous` header dspk uses.
#[derive(Debug, Clone, PartialEq)]
pub struct LegacyHeader {
    /// `header.channel` (`'CH1'`), without quotes.
    pub channel: String,
    /// `header.sampleRate`, exact.
    pub sample_rate: SampleRate,
    /// `header.bitVolts`: µV per count for headstage channels (V for ADC/AUX).
    pub bit_volts: f64,
    /// `header.blockLength`: samples per record (1024 in every GUI that wrote the format).
    pub block_length: u64,
    /// `header.version`, where stated.
    pub version: Option<String>,
}

impl LegacyHeader {
    /// Parses a header: `header.key = value;` statements (values of strings in single quotes).
    /// `path` names the file in errors. Never panics.
    pub fn parse(bytes: &[u8], path: &Path) -> DspResult<Self> {
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(LEGACY_HEADER_BYTES)]);
        let mut entries = Vec::new();
        for stmt in text.split(';') {
            let Some((k, v)) = stmt.split_once('=') else {
                continue;
            };
            let k = k.trim();
            let Some(k) = k.strip_prefix("header.") else {
                continue;
            };
            let v = v.trim().trim_matches('\'').trim();
            entries.push((k.to_string(), v.to_string()));
        }
        let get = |key: &str| -> DspResult<&str> {
            entries
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
                .ok_or_else(|| {
                    file_error(
                        path,
                        format!("no header.{key} in the 1024-byte header: not an Open Ephys .continuous file"),
                    )
                })
        };
        let format = get("format")?;
        if format != "Open Ephys Data Format" {
            return Err(file_error(
                path,
                format!("header.format is '{format}', not 'Open Ephys Data Format'"),
            ));
        }
        let rate_text = get("sampleRate")?;
        let sample_rate: SampleRate = rate_text.parse().map_err(|_| {
            file_error(
                path,
                format!("header.sampleRate '{rate_text}' is not a sample rate in hertz"),
            )
        })?;
        let bv_text = get("bitVolts")?;
        let bit_volts: f64 = bv_text.parse().map_err(|_| {
            file_error(path, format!("header.bitVolts '{bv_text}' is not a number"))
        })?;
        let gain = bit_volts as f32;
        if !(gain.is_finite() && gain > 0.0) {
            return Err(file_error(
                path,
                format!(
                    "header.bitVolts {bv_text} is not a finite number above 0 as a 32-bit float"
                ),
            ));
        }
        let block_length = match entries.iter().find(|(k, _)| k == "blockLength") {
            Some((_, v)) => v.parse::<u64>().map_err(|_| {
                file_error(
                    path,
                    format!("header.blockLength '{v}' is not a sample count"),
                )
            })?,
            None => 1024,
        };
        if block_length != 1024 {
            return Err(file_error(
                path,
                format!(
                    "header.blockLength is {block_length}: dspk reads records of 1024 samples, the only length the GUI wrote"
                ),
            ));
        }
        Ok(Self {
            channel: get("channel")?.to_string(),
            sample_rate,
            bit_volts,
            block_length,
            version: entries
                .iter()
                .find(|(k, _)| k == "version")
                .map(|(_, v)| v.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> Vec<u8> {
        let mut b = text.as_bytes().to_vec();
        b.resize(LEGACY_HEADER_BYTES, b' ');
        b
    }

    const GOOD: &str = "header.format = 'Open Ephys Data Format'; \nheader.version = 0.4;\n\
        header.header_bytes = 1024;\nheader.description = 'each record contains one 64-bit \
        timestamp, one 16-bit sample count (N), 1 uint16 recordingNumber, N 16-bit samples, \
        and one 10-byte record marker (0 1 2 3 4 5 6 7 8 255)'; \nheader.date_created = \
        '15-Jun-2016 105959';\nheader.channel = 'CH1';\nheader.channelType = 'Continuous';\n\
        header.sampleRate = 30000;\nheader.blockLength = 1024;\nheader.bufferSize = 1024;\n\
        header.bitVolts = 0.195;\n";

    #[test]
    fn a_gui_header_reads() {
        let h = LegacyHeader::parse(&header(GOOD), Path::new("100_CH1.continuous")).expect("valid");
        assert_eq!(h.channel, "CH1");
        assert_eq!(h.sample_rate.rate_hz(), 30000.0);
        assert_eq!(h.bit_volts, 0.195);
        assert_eq!(h.version.as_deref(), Some("0.4"));
    }

    #[test]
    fn bad_headers_name_the_key() {
        for (from, to, says) in [
            (
                "header.bitVolts = 0.195",
                "header.bitVolts = -1",
                "bitVolts -1",
            ),
            (
                "header.sampleRate = 30000",
                "header.sampleRate = fast",
                "sampleRate 'fast'",
            ),
            (
                "header.blockLength = 1024",
                "header.blockLength = 512",
                "blockLength is 512",
            ),
            ("header.channel = 'CH1';", "", "no header.channel"),
            (
                "Open Ephys Data Format",
                "Other",
                "header.format is 'Other'",
            ),
        ] {
            let e =
                LegacyHeader::parse(&header(&GOOD.replace(from, to)), Path::new("x.continuous"))
                    .expect_err(to);
            assert!(e.to_string().contains(says), "{to}: {e}");
        }
    }
}
