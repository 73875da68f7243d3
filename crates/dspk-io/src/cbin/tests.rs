//! The reader on files written here with mtscomp's diff and chunk order: every thread count
//! and cache size reads the same values, also from several threads at once.

use std::path::Path;

use flate2::Compression;
use flate2::write::ZlibEncoder;
use std::io::Write;

use dspk_types::RecordingSource;

use super::CbinRecording;

/// An mtscomp-style file of `frames` (time-major), chunked at `bounds`, built here with the
/// diff and order mtscomp applies.
pub(crate) fn compress(
    frames: &[Vec<i16>],
    bounds: &[u64],
    order: &str,
    spatial: bool,
) -> (String, Vec<u8>) {
    let n_c = frames[0].len();
    let mut data = Vec::new();
    let mut offsets = vec![0u64];
    for w in bounds.windows(2) {
        let chunk: Vec<Vec<i16>> = frames[w[0] as usize..w[1] as usize].to_vec();
        let mut d = chunk.clone();
        for t in (1..d.len()).rev() {
            for c in 0..n_c {
                d[t][c] = chunk[t][c].wrapping_sub(chunk[t - 1][c]);
            }
        }
        if spatial {
            for row in &mut d {
                for c in (1..n_c).rev() {
                    row[c] = row[c].wrapping_sub(row[c - 1]);
                }
            }
        }
        let mut raw = Vec::new();
        if order == "C" {
            d.iter().flatten().for_each(|v| raw.extend(v.to_le_bytes()));
        } else {
            for c in 0..n_c {
                d.iter().for_each(|row| raw.extend(row[c].to_le_bytes()));
            }
        }
        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        z.write_all(&raw).expect("in memory");
        data.extend(z.finish().expect("in memory"));
        offsets.push(data.len() as u64);
    }
    let ch = format!(
        r#"{{"algorithm":"zlib","dtype":"int16","n_channels":{n_c},"sample_rate":1000.0,
        "chunk_bounds":{bounds:?},"chunk_offsets":{offsets:?},"chunk_order":"{order}",
        "do_time_diff":true,"do_spatial_diff":{spatial}}}"#
    );
    (ch, data)
}

#[test]
fn reads_agree_for_any_threads_cache_and_concurrency() {
    let mut x = 99u32;
    let frames: Vec<Vec<i16>> = (0..1000)
        .map(|_| {
            (0..6)
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    (x >> 16) as u16 as i16
                })
                .collect()
        })
        .collect();
    let bounds: Vec<u64> = (0..1000).step_by(70).chain([1000]).collect();
    let (ch, data) = compress(&frames, &bounds, "F", false);
    let dir = std::env::temp_dir().join(format!("dspk-cbin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("r.cbin"), &data).expect("write");
    std::fs::write(dir.join("r.ch"), ch).expect("write");
    let want = |ch: usize, r: std::ops::Range<usize>| -> Vec<f32> {
        r.map(|t| f32::from(frames[t][ch])).collect()
    };
    for (threads, cache) in [(1, 0), (1, 1), (3, 2), (4, 8), (8, 40)] {
        let mut rec = CbinRecording::open(dir.join("r.cbin")).expect("opens");
        rec.set_decode_threads(threads);
        rec.set_cache_chunks(cache);
        let rec = &rec;
        std::thread::scope(|s| {
            for part in 0..4usize {
                s.spawn(move || {
                    for start in (part * 37..1000).step_by(150) {
                        let end = (start + 133).min(1000);
                        let mut out = vec![0f32; 2 * (end - start)];
                        rec.read(&[5, 1], start as u64..end as u64, &mut out)
                            .expect("reads");
                        assert_eq!(out[..end - start], want(5, start..end)[..]);
                        assert_eq!(out[end - start..], want(1, start..end)[..]);
                    }
                });
            }
        });
        let mut all = vec![0u8; 1000 * 6 * 2];
        rec.read_stored_native(0..1000, &mut all).expect("reads");
        let flat: Vec<u8> = frames
            .iter()
            .flatten()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(all, flat, "threads {threads}, cache {cache}");
    }
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

#[test]
fn a_file_path_names_itself_and_a_missing_ch_is_said() {
    let e = CbinRecording::open(Path::new("/nonexistent/x.cbin")).expect_err("missing");
    assert!(e.to_string().contains("missing .ch"), "{e}");
}
