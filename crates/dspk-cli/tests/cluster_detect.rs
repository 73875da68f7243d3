//! A detect plan without a scheduler: `dspk plan --detect`, every `dspk run`, `dspk gather`:
//! the concatenated table equals one `dspk detect`'s byte for byte, spikes planted across the
//! jobs' boundaries and at a segment's end included; a part lost or cut is named by `gather`
//! and mended by `run --force`; a detector option that cannot be is one error line before
//! anything is written.

use std::path::Path;

mod common;
use common::{dspk, json, ok, runtimes, scratch, text};

/// Samples per job (`--chunk`): the planted spikes straddle its multiples.
const CHUNK: usize = 15_000;

/// `channels` int16 channels, `samples` long, time-major, with a sidecar (30 kHz, µV gains,
/// two segments: the second starts at job boundary `2 × CHUNK`, a second after the first ends):
/// seeded uniform noise (±300 counts) plus negative spikes (a 9-sample trough of -2600 counts
/// at its deepest) every ~1500 samples on a channel walking across the probe, and pairs
/// planted on each job boundary: on one channel, a smaller trough 2 samples before the
/// boundary and a deeper one at it (the first must lose to the second, across the seam); on
/// the next channel, a trough 1 sample after the boundary (at the segment boundary, the pair
/// falls on both sides of it: each segment keeps its own).
fn recording(path: &Path, samples: usize, channels: usize, seed: u64) -> Vec<usize> {
    let mut x = seed.wrapping_mul(6364136223846793005) | 1;
    let mut values: Vec<i32> = (0..samples * channels)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % 601) as i32 - 300
        })
        .collect();
    let shape = [-300, -900, -1800, -2600, -2200, -1200, -200, 400, 300];
    let mut plant = |at: usize, channel: usize, scale: i32| {
        for (k, v) in shape.iter().enumerate() {
            let t = at + k;
            if t >= 3 && t - 3 < samples {
                values[(t - 3) * channels + channel] += v * scale / 4;
            }
        }
    };
    let mut trough = Vec::new();
    for (i, at) in (700..samples - 20).step_by(1_500).enumerate() {
        plant(at, i % channels, 4);
        trough.push(at);
    }
    for boundary in (CHUNK..samples).step_by(CHUNK) {
        plant(boundary - 2, 1, 3);
        plant(boundary, 1, 5);
        plant(boundary + 1, 2, 4);
    }
    let bytes: Vec<u8> = values
        .iter()
        .flat_map(|v| (*v).clamp(-32_768, 32_767).to_le_bytes()[..2].to_vec())
        .collect();
    std::fs::write(path, bytes).unwrap();
    std::fs::write(
        format!("{}.json", path.display()),
        format!(
            r#"{{"sample_rate": "30000", "channel_count": {channels}, "format": "int16",
                "order": "time-major", "channels": [{}],
                "segments": [{{"samples": {first}}},
                             {{"samples": {rest}, "first_sample": {later}, "start_time": "2"}}]}}"#,
            (0..channels)
                .map(|c| format!(r#"{{"gain": {}, "unit": "uV"}}"#, 0.5 + c as f64 / 8.0))
                .collect::<Vec<_>>()
                .join(", "),
            first = 2 * CHUNK,
            rest = samples - 2 * CHUNK,
            later = 60_000,
        ),
    )
    .unwrap();
    trough
}

/// A probeinterface file: `channels` contacts in a column, 25 µm apart.
fn probe(path: &Path, channels: usize) {
    let positions: Vec<String> = (0..channels).map(|c| format!("[0, {}]", 25 * c)).collect();
    let wired: Vec<String> = (0..channels).map(|c| c.to_string()).collect();
    std::fs::write(
        path,
        format!(
            r#"{{"specification": "probeinterface", "version": "0.2.21", "probes": [
                {{"ndim": 2, "si_units": "um", "contact_positions": [{}],
                  "device_channel_indices": [{}]}}]}}"#,
            positions.join(", "),
            wired.join(", ")
        ),
    )
    .unwrap();
}

/// The `.npy` table's records as (recording sample, channel, segment): the table counts
/// `sample_index` from its segment's start (SpikeInterface's convention), so segment 1's
/// start, `2 × CHUNK`, is added back; each record's own `sample_index` must lie inside its
/// segment's length.
fn peaks_of(npy: &[u8]) -> Vec<(i64, i64, i64)> {
    let header = usize::from(u16::from_le_bytes([npy[8], npy[9]]));
    let starts = [0i64, (2 * CHUNK) as i64];
    npy[10 + header..]
        .chunks_exact(32)
        .map(|r| {
            let sample = i64::from_le_bytes(r[..8].try_into().unwrap());
            let segment = i64::from_le_bytes(r[24..32].try_into().unwrap());
            assert!(
                (0..(2 * CHUNK) as i64).contains(&sample),
                "sample_index {sample} of segment {segment} is not counted from its segment"
            );
            (
                starts[segment as usize] + sample,
                i64::from_le_bytes(r[8..16].try_into().unwrap()),
                segment,
            )
        })
        .collect()
}

#[test]
fn a_detect_plan_gathers_into_one_detects_table() {
    for target in runtimes() {
        let rt = target.name();
        let root = scratch(&format!("cluster-detect-{rt}"));
        std::fs::create_dir_all(root.join("data")).unwrap();
        let seed = u64::from(std::process::id());
        eprintln!("seed {seed}");
        let (samples, channels) = (4 * CHUNK - 1_000, 4);
        let rec = root.join("data/rec.bin");
        let planted = recording(&rec, samples, channels, seed);
        let probe_file = root.join("data/probe.json");
        probe(&probe_file, channels);
        let (r, p, jobs) = (
            rec.to_str().unwrap(),
            probe_file.to_str().unwrap(),
            root.join("jobs"),
        );
        let j = jobs.to_str().unwrap();
        let base = root.join("data");
        let options = [
            "--pipeline",
            "spikeinterface",
            "--threshold",
            "5",
            "--radius",
            "30",
            "--exclude-sweep",
            "0.2",
        ];
        let chunk = format!("{CHUNK}smp");
        let mut plan = vec![
            "--runtime",
            rt,
            "plan",
            r,
            "--detect",
            "--probe",
            p,
            "--chunk",
            &chunk,
            "--window-samples",
            "4000",
            "--base",
            base.to_str().unwrap(),
            "--out",
            j,
            "--json",
        ];
        plan.extend(options);
        let planned = json(&plan);
        assert_eq!(
            (planned["jobs"].as_u64(), planned["fitted"].as_u64()),
            (Some(4), Some(1))
        );
        for n in ["0", "1", "2", "3"] {
            ok(&["--runtime", rt, "run", j, "--job", n]);
        }
        let want = root.join("want.npy");
        let w = want.to_str().unwrap();
        let mut detect = vec!["--runtime", rt, "detect", r, "--probe", p, "-o", w];
        detect.extend(options);
        ok(&detect);
        let gathered = json(&["gather", j, "--json"]);
        assert_eq!(gathered["tables"][0]["parts"].as_u64(), Some(4));
        let expected = std::fs::read(&want).unwrap();
        let got = jobs.join("outputs/rec-0.npy");
        assert!(
            std::fs::read(&got).unwrap() == expected,
            "the concatenated table differs from dspk detect's"
        );
        // Not an empty agreement: the planted troughs are found (within the filter's delay),
        // and on each boundary the deeper of the two troughs on channel 1 is the one kept.
        let peaks = peaks_of(&expected);
        assert_eq!(
            gathered["tables"][0]["peaks"].as_u64(),
            Some(peaks.len() as u64)
        );
        let found = planted
            .iter()
            .filter(|&&t| peaks.iter().any(|&(s, _, _)| s.abs_diff(t as i64) <= 3))
            .count();
        eprintln!(
            "{} peaks; {found} of {} planted troughs found",
            peaks.len(),
            planted.len()
        );
        assert!(
            found * 10 >= planted.len() * 9,
            "{found} of {} planted troughs found in {peaks:?}",
            planted.len()
        );
        // Each peak in its segment.
        let segment_end = (2 * CHUNK) as i64;
        assert!(
            peaks
                .iter()
                .all(|&(s, _, g)| g == i64::from(s >= segment_end))
        );
        assert!(peaks.iter().any(|&(_, _, g)| g == 1));
        for boundary in [CHUNK, 3 * CHUNK] {
            let b = boundary as i64;
            let near: Vec<_> = peaks
                .iter()
                .filter(|&&(s, c, _)| c == 1 && s.abs_diff(b) <= 6)
                .collect();
            assert_eq!(
                near.len(),
                1,
                "boundary {boundary}: channel 1's peaks near it {near:?}"
            );
            assert!(near[0].0.abs_diff(b) <= 1, "boundary {boundary}: {near:?}");
        }

        // A part lost, then a part cut: gather names each and how to mend it.
        let lost = jobs.join("outputs/job-2.npy");
        std::fs::remove_file(&lost).unwrap();
        let out = dspk(&["gather", j]);
        assert_eq!(out.status.code(), Some(1));
        let err = text(&out.stderr);
        assert!(
            err.contains("job-2.npy") && err.contains("--job 2 --force"),
            "{err}"
        );
        ok(&["--runtime", rt, "run", j, "--job", "2", "--force"]);
        let part = jobs.join("outputs/job-1.npy");
        let bytes = std::fs::read(&part).unwrap();
        std::fs::write(&part, &bytes[..bytes.len() - 32]).unwrap();
        let out = dspk(&["gather", j]);
        assert_eq!(out.status.code(), Some(1));
        let err = text(&out.stderr);
        assert!(
            err.contains("job-1.npy") && err.contains("--job 1 --force"),
            "{err}"
        );
        ok(&["--runtime", rt, "run", j, "--job", "1", "--force"]);
        ok(&["gather", j]);
        assert!(
            std::fs::read(&got).unwrap() == expected,
            "the mended table differs"
        );

        // A threshold that cannot be: one error line, no plan folder.
        let bad = root.join("bad");
        let out = dspk(&[
            "plan",
            r,
            "--detect",
            "--threshold",
            "-1",
            "--base",
            base.to_str().unwrap(),
            "--out",
            bad.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(1));
        let err = text(&out.stderr);
        assert!(
            err.contains("threshold -1") && err.lines().count() == 1,
            "{err}"
        );
        assert!(!bad.exists());
        let _ = std::fs::remove_dir_all(&root);
    }
}
