//! A legacy folder written here from the format description: values, segments, bad records.

use std::path::Path;

use dspk_types::RecordingSource;

use super::{LEGACY_HEADER_BYTES, OpenEphysLegacyRecording};

fn value(c: usize, s: usize) -> i16 {
    ((c * 7919 + s * 104_729) % 65_536) as u16 as i16
}

/// Writes `channels` files of records at `timestamps` (global sample `s` of record `r` is
/// `r * 1024 + k`), with a `marker` for the records.
fn write(dir: &Path, channels: usize, timestamps: &[i64], marker: [u8; 10]) {
    std::fs::create_dir_all(dir).expect("temp dir");
    for c in 0..channels {
        let mut b = format!(
            "header.format = 'Open Ephys Data Format'; \nheader.version = 0.4;\n\
             header.channel = 'CH{}';\nheader.sampleRate = 30000;\nheader.blockLength = 1024;\n\
             header.bitVolts = 0.195;\n",
            c + 1
        )
        .into_bytes();
        b.resize(LEGACY_HEADER_BYTES, b' ');
        for (r, t) in timestamps.iter().enumerate() {
            b.extend(t.to_le_bytes());
            b.extend(1024u16.to_le_bytes());
            b.extend(0u16.to_le_bytes());
            for k in 0..1024 {
                b.extend(value(c, r * 1024 + k).to_be_bytes());
            }
            b.extend(marker);
        }
        std::fs::write(dir.join(format!("100_CH{}.continuous", c + 1)), b).expect("write");
    }
}

const MARKER: [u8; 10] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 255];

#[test]
fn records_read_big_endian_and_gaps_start_segments() {
    let dir = std::env::temp_dir().join(format!("dspk-legacy-{}", std::process::id()));
    write(&dir, 3, &[100, 1124, 5000, 6024], MARKER);
    let rec = OpenEphysLegacyRecording::open(&dir).expect("opens");
    let info = rec.info();
    assert_eq!((info.channel_count(), info.samples), (3, 4096));
    let segs = info.segments();
    let list: Vec<(u64, u64, u64)> = segs
        .list()
        .iter()
        .map(|s| (s.start, s.samples, s.first_sample))
        .collect();
    assert_eq!(list, vec![(0, 2048, 100), (2048, 2048, 5000)]);
    let mut out = vec![0f32; 2 * 1100];
    rec.read(&[2, 0], 900..2000, &mut out[..2 * 1100])
        .expect("inside segment 0");
    for k in 0..1100 {
        assert_eq!(out[k], f32::from(value(2, 900 + k)) * 0.195f32);
        assert_eq!(out[1100 + k], f32::from(value(0, 900 + k)) * 0.195f32);
    }
    assert!(rec.read(&[0], 2000..2100, &mut out[..100]).is_err());
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

#[test]
fn a_broken_marker_names_the_file_and_record() {
    let dir = std::env::temp_dir().join(format!("dspk-legacy-bad-{}", std::process::id()));
    write(&dir, 2, &[0, 1024], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    let e = OpenEphysLegacyRecording::open(&dir).expect_err("bad marker");
    assert!(
        e.to_string()
            .contains("record 0 does not end with the marker"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).expect("cleanup");
}
