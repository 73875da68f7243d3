//! One raw binary file assembled from parts written apart (a cluster run's jobs): the parts'
//! samples one after another, in either layout, with a sidecar stating the whole file's clock.

use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

use dspk_types::{DspError, DspResult, MemoryOrder, RationalTime};

use crate::binary::{BinarySidecar, SidecarSegment, sidecar_path};
use crate::durable::{TempFile, persist_all};

/// What the whole file states that no part can: its clock, its origin and how it was made.
#[derive(Debug, Clone, PartialEq)]
pub struct Whole {
    /// The time of its first sample (the sidecar's `start_time`).
    pub start_time: Option<RationalTime>,
    /// Its segments (the sidecar's `segments`; empty for one).
    pub segments: Vec<SidecarSegment>,
    /// What it was made from (the sidecar's `dspk_converted_from` metadata).
    pub from: String,
    /// How it was made (the sidecar's `provenance`).
    pub provenance: serde_json::Value,
}

/// Writes `target` (and its sidecar) from `parts`, raw binary files with sidecars of the same
/// channels, format, layout and rate, each a run of samples that continues the one before:
/// time-major parts one after another, channel-major ones row by row. The sidecar is the first
/// part's with `whole`'s clock, origin and provenance. Both files are temporaries renamed into
/// place together: a failure or a kill leaves the previous files, or none. Returns the bytes of
/// samples written.
///
/// # Errors
/// No parts; a part whose sidecar cannot be read, that differs from the first in channels,
/// format, layout or rate, or whose size is not whole frames; segments that do not add up to
/// the parts' samples; what reading and writing refuse (each naming the file).
pub fn assemble_parts(parts: &[PathBuf], target: &Path, whole: Whole) -> DspResult<u64> {
    let first = parts
        .first()
        .ok_or_else(|| DspError::config(format!("{}: no parts to assemble", target.display())))?;
    let mut sidecar = BinarySidecar::read(&sidecar_path(first))?;
    let frame = (sidecar.channel_count as u64) * sidecar.format.bytes() as u64;
    let mut samples = Vec::with_capacity(parts.len());
    for part in parts {
        let side = BinarySidecar::read(&sidecar_path(part))?;
        if (
            side.channel_count,
            side.format,
            side.order,
            side.sample_rate,
        ) != (
            sidecar.channel_count,
            sidecar.format,
            sidecar.order,
            sidecar.sample_rate,
        ) {
            return Err(DspError::config(format!(
                "{}: not a part of the same recording as {} (channels, format, layout or rate \
                 differ)",
                part.display(),
                first.display()
            )));
        }
        let size = std::fs::metadata(part)
            .map_err(|e| DspError::io(part, "reading a part's size", &e))?
            .len()
            - side.header_offset_bytes;
        if frame == 0 || size % frame != 0 {
            return Err(DspError::config(format!(
                "{}: holds {size} bytes, not whole frames of {frame} bytes: the part is cut \
                 short (write it again)",
                part.display()
            )));
        }
        samples.push((part, side.header_offset_bytes, size / frame));
    }
    let total: u64 = samples.iter().map(|s| s.2).sum();
    let listed: u64 = whole.segments.iter().map(|s| s.samples).sum();
    if !whole.segments.is_empty() && listed != total {
        return Err(DspError::config(format!(
            "{}: the parts hold {total} samples and the segments {listed}",
            target.display()
        )));
    }
    sidecar.header_offset_bytes = 0;
    sidecar.start_time = whole.start_time;
    sidecar.segments = whole.segments;
    sidecar
        .metadata
        .insert("dspk_converted_from".to_string(), whole.from);
    sidecar.provenance = Some(whole.provenance);
    let mut data = TempFile::create(target)?;
    let sample_bytes = sidecar.format.bytes() as u64;
    match sidecar.order {
        MemoryOrder::TimeMajor => {
            for &(part, offset, n) in &samples {
                copy(data.file(), part, offset, n * frame, target)?;
            }
        }
        MemoryOrder::ChannelMajor => {
            for c in 0..sidecar.channel_count as u64 {
                for &(part, offset, n) in &samples {
                    let row = n * sample_bytes;
                    copy(data.file(), part, offset + c * row, row, target)?;
                }
            }
        }
    }
    let side_path = sidecar_path(target);
    let mut side = TempFile::create(&side_path)?;
    let text = serde_json::to_string_pretty(&sidecar).expect("a sidecar serialises") + "\n";
    side.file()
        .write_all(text.as_bytes())
        .map_err(|e| DspError::io(&side_path, "writing the sidecar", &e))?;
    persist_all(vec![data, side])?;
    Ok(total * frame)
}

/// Appends `len` bytes of `from` at `offset` to `out` (the temporary of `target`).
fn copy(out: &mut File, from: &Path, offset: u64, len: u64, target: &Path) -> DspResult<()> {
    let mut part = File::open(from).map_err(|e| DspError::io(from, "opening a part", &e))?;
    part.seek(SeekFrom::Start(offset))
        .map_err(|e| DspError::io(from, "seeking in a part", &e))?;
    let copied = std::io::copy(&mut part.take(len), out)
        .map_err(|e| DspError::io(target, "writing the assembled file", &e))?;
    if copied != len {
        return Err(DspError::config(format!(
            "{}: ended {} bytes early",
            from.display(),
            len - copied
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A part of `channels` int16 channels holding `values` (frames, time-major or rows).
    fn part(dir: &Path, name: &str, order: &str, channels: usize, values: &[i16]) -> PathBuf {
        let path = dir.join(name);
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(&path, bytes).unwrap();
        std::fs::write(
            sidecar_path(&path),
            format!(
                r#"{{"sample_rate": "30000", "channel_count": {channels}, "format": "int16",
                    "order": "{order}", "start_time": "5"}}"#
            ),
        )
        .unwrap();
        path
    }

    #[test]
    fn parts_laid_end_to_end_in_either_layout() {
        let dir = std::env::temp_dir().join(format!("dspk-assemble-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let whole = |from: &str| Whole {
            start_time: None,
            segments: Vec::new(),
            from: from.to_string(),
            provenance: serde_json::json!({"parts": 2}),
        };
        // Time-major: frames (a0 b0), (a1 b1) | (a2 b2).
        let a = part(&dir, "t0.bin", "time-major", 2, &[1, 2, 3, 4]);
        let b = part(&dir, "t1.bin", "time-major", 2, &[5, 6]);
        let out = dir.join("t.bin");
        assert_eq!(assemble_parts(&[a, b], &out, whole("t")).unwrap(), 12);
        let read = |p: &Path| -> Vec<i16> {
            std::fs::read(p)
                .unwrap()
                .chunks(2)
                .map(|c| i16::from_le_bytes([c[0], c[1]]))
                .collect()
        };
        assert_eq!(read(&out), [1, 2, 3, 4, 5, 6]);
        let side = BinarySidecar::read(&sidecar_path(&out)).unwrap();
        assert_eq!(side.start_time, None);
        assert_eq!(side.metadata["dspk_converted_from"], "t");
        assert_eq!(side.provenance, Some(serde_json::json!({"parts": 2})));
        // Channel-major: rows (a0 a1)(b0 b1) | (a2)(b2) → rows (a0 a1 a2)(b0 b1 b2).
        let a = part(&dir, "c0.bin", "channel-major", 2, &[1, 3, 2, 4]);
        let b = part(&dir, "c1.bin", "channel-major", 2, &[5, 6]);
        let out = dir.join("c.bin");
        assemble_parts(&[a, b.clone()], &out, whole("c")).unwrap();
        assert_eq!(read(&out), [1, 3, 5, 2, 4, 6]);
        // A part cut short is refused by name, and nothing is written.
        let cut = part(&dir, "x.bin", "channel-major", 2, &[7]);
        let err = assemble_parts(&[b, cut], &dir.join("x-out.bin"), whole("x")).unwrap_err();
        assert!(err.to_string().contains("x.bin: holds 2 bytes"), "{err}");
        assert!(!dir.join("x-out.bin").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
