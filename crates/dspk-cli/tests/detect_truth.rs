//! `dspk detect` without a recording: the built-in synthetic one, its peaks scored against the
//! spikes it planted, in the summary and in `--json`; a file's run has no score.
//!
//! The synthetic default (seed 0, 384 channels, 2 dead and 2 noisy) cut to 0.2 s is one
//! 6000-sample spike bin: one spike on each of the 382 live channels, each wholly inside.
//! Without a pipeline the noise level is about 10.5 µV (10 µV noise and two 3 µV sinusoids),
//! so the threshold is about 53 µV and a spike's raw trough is its depth (50–150 µV): on the
//! 380 normal channels a spike of 100 µV or more is 4.5σ past the threshold (half of them),
//! most of the rest are found too, and noise alone crosses 5σ about once in 3·10⁶ samples:
//! recall above 0.75 and precision above 0.98.

use std::path::Path;

use serde_json::Value;

mod common;
use common::{json, ok, runtimes, scratch};

/// The records of a `.npy` table: its length after the header.
fn npy_rows(path: &Path) -> usize {
    let bytes = std::fs::read(path).expect("the table");
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let header = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let data = bytes.len() - 10 - header;
    assert_eq!(data % 32, 0, "32-byte records");
    data / 32
}

#[test]
fn detect_on_the_synthetic_recording_reports_recall_and_precision() {
    let dir = scratch("detect-truth");
    for target in runtimes() {
        let rt = target.name();
        let out = dir.join(format!("peaks-{rt}.npy"));
        let o = out.to_str().unwrap();
        let args = [
            "--runtime",
            rt,
            "detect",
            "--synthetic-duration",
            "0.2",
            "-o",
            o,
        ];
        let v = json(&[&args[..], &["--json"]].concat());
        let t = &v["report"]["truth"];
        let n = |key: &str| t[key].as_u64().unwrap_or_else(|| panic!("{key} in {t}"));
        let r = |key: &str| t[key].as_f64().unwrap_or_else(|| panic!("{key} in {t}"));
        assert_eq!(n("planted"), 382, "{t}");
        assert_eq!(n("peaks"), v["report"]["peaks"].as_u64().unwrap(), "{t}");
        assert_eq!(n("peaks") as usize, npy_rows(&out), "{t}");
        assert_eq!(n("found") + n("false_positives"), n("peaks"), "{t}");
        assert_eq!(r("recall"), n("found") as f64 / 382.0, "{t}");
        assert_eq!(r("precision"), n("found") as f64 / n("peaks") as f64, "{t}");
        assert_eq!(
            (r("tolerance_ms"), n("tolerance_samples")),
            (0.4, 12),
            "{t}"
        );
        assert!(r("recall") > 0.75 && r("precision") > 0.98, "{t}");

        let summary = ok(&args);
        let line = summary
            .lines()
            .find(|l| l.starts_with("ground truth: "))
            .unwrap_or_else(|| panic!("no ground-truth line in {summary}"));
        assert!(
            line.starts_with(&format!(
                "ground truth: found {} of 382 planted spikes (recall {:.3}), {} of {} peaks",
                n("found"),
                r("recall"),
                n("false_positives"),
                n("peaks")
            )),
            "{line}"
        );
    }
}

#[test]
fn a_files_detection_has_no_ground_truth() {
    let dir = scratch("detect-no-truth");
    let raw = dir.join("noise.bin");
    let bytes: Vec<u8> = (0..2 * 6000)
        .flat_map(|i: i32| (((i * 7919) % 201) as i16 - 100).to_le_bytes())
        .collect();
    std::fs::write(&raw, bytes).expect("write the data file");
    std::fs::write(
        dir.join("noise.bin.json"),
        r#"{"sample_rate": 30000, "channel_count": 2, "format": "int16", "order": "time-major"}"#,
    )
    .expect("write the sidecar");
    for target in runtimes() {
        let rt = target.name();
        let out = dir.join(format!("peaks-{rt}.npy"));
        let args = [
            "--runtime",
            rt,
            "detect",
            raw.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ];
        let v = json(&[&args[..], &["--json"]].concat());
        assert_eq!(v["report"].get("truth"), None::<&Value>, "{v}");
        assert!(!ok(&args).contains("ground truth"));
    }
}
