//! A preprocess plan without a scheduler: `dspk plan --preprocess`, every `dspk run`, `dspk
//! gather`: the assembled file equals one `dspk preprocess` bit for bit; a part cut short is
//! named by `gather` and mended by `run --force`; a recording the pipeline cannot run on is
//! refused before anything is written.

use std::path::Path;

mod common;
use common::{dspk, json, ok, runtimes, scratch, text};

/// `channels` int16 channels of a seeded pseudo-random walk, `samples` long, time-major, with a
/// sidecar (30 kHz, µV gains).
fn recording(path: &Path, samples: usize, channels: usize, seed: u64) {
    let mut x = seed.wrapping_mul(6364136223846793005) | 1;
    let mut level = vec![0i32; channels];
    let mut bytes = Vec::with_capacity(samples * channels * 2);
    for _ in 0..samples {
        for l in &mut level {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            *l = (*l + ((x >> 33) % 201) as i32 - 100).clamp(-20_000, 20_000);
            bytes.extend_from_slice(&(*l as i16).to_le_bytes());
        }
    }
    std::fs::write(path, bytes).unwrap();
    std::fs::write(
        format!("{}.json", path.display()),
        format!(
            r#"{{"sample_rate": "30000", "channel_count": {channels}, "format": "int16",
                "order": "time-major", "start_time": "7/3",
                "channels": [{}]}}"#,
            (0..channels)
                .map(|c| format!(r#"{{"gain": {}, "unit": "uV"}}"#, 0.5 + c as f64 / 4.0))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
    .unwrap();
}

#[test]
fn a_preprocess_plan_gathers_into_one_runs_file() {
    for target in runtimes() {
        let rt = target.name();
        let root = scratch(&format!("cluster-preprocess-{rt}"));
        std::fs::create_dir_all(root.join("data")).unwrap();
        let seed = u64::from(std::process::id());
        eprintln!("seed {seed}");
        let rec = root.join("data/rec.bin");
        recording(&rec, 25_000, 4, seed);
        let (r, jobs) = (rec.to_str().unwrap(), root.join("jobs"));
        let j = jobs.to_str().unwrap();
        let base = root.join("data");
        let planned = json(&[
            "--runtime",
            rt,
            "plan",
            r,
            "--preprocess",
            "spikeinterface",
            "--format",
            "float32",
            "--chunk",
            "9000smp",
            "--window-samples",
            "4000",
            "--base",
            base.to_str().unwrap(),
            "--out",
            j,
            "--json",
        ]);
        assert_eq!(
            (planned["jobs"].as_u64(), planned["fitted"].as_u64()),
            (Some(3), Some(1))
        );
        for n in ["0", "1", "2"] {
            ok(&["--runtime", rt, "run", j, "--job", n]);
        }
        let want = root.join("want.bin");
        let w = want.to_str().unwrap();
        ok(&[
            "--runtime",
            rt,
            "preprocess",
            r,
            "-o",
            w,
            "--pipeline",
            "spikeinterface",
            "--format",
            "float32",
        ]);
        let gathered = json(&["gather", j, "--json"]);
        assert_eq!(gathered["outputs"][0]["parts"].as_u64(), Some(3));
        let got = jobs.join("outputs/rec-0.bin");
        let expected = std::fs::read(&want).unwrap();
        assert_eq!(expected.len(), 25_000 * 4 * 4);
        assert!(
            std::fs::read(&got).unwrap() == expected,
            "the assembled file differs"
        );
        let side = |p: &Path| {
            let mut v: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(format!("{}.json", p.display())).unwrap(),
            )
            .unwrap();
            v.as_object_mut().unwrap().remove("provenance");
            v
        };
        assert_eq!(side(&got), side(&want));

        // A part cut short: gather names it and how to mend it; run --force mends it.
        let part = jobs.join("outputs/job-1.bin");
        let bytes = std::fs::read(&part).unwrap();
        std::fs::write(&part, &bytes[..bytes.len() - 16]).unwrap();
        let out = dspk(&["gather", j]);
        assert_eq!(out.status.code(), Some(1));
        let err = text(&out.stderr);
        assert!(
            err.contains("job-1.bin: holds") && err.contains("--force"),
            "{err}"
        );
        ok(&["--runtime", rt, "run", j, "--job", "1", "--force"]);
        ok(&["gather", j]);
        assert!(
            std::fs::read(&got).unwrap() == expected,
            "the mended file differs"
        );

        // A pipeline the recording cannot run (local whitening, no geometry): one error line,
        // no plan folder.
        let bad = root.join("bad");
        let out = dspk(&[
            "--runtime",
            rt,
            "plan",
            r,
            "--preprocess",
            "kilosort4",
            "--base",
            base.to_str().unwrap(),
            "--out",
            bad.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(1));
        let err = text(&out.stderr);
        assert!(
            err.contains("geometry") && err.lines().count() == 1,
            "{err}"
        );
        assert!(!bad.exists());
        let _ = std::fs::remove_dir_all(&root);
    }
}
