//! The `dspk` program, run as a child process: scan of the synthetic recording, masks, convert
//! then info, device listing, and one-line errors that leave no output behind.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use dspk_io::BinaryRecording;
use dspk_kernels::ChannelStats;
use dspk_types::{
    ChannelMapFile, ChannelMask, ComputeTarget, RationalTime, RecordingSource, RemappedSource,
    SyntheticConfig, SyntheticRecording,
};
use serde_json::Value;

mod common;
use common::{dspk, json, listing, ok, runtimes, scratch, text};

/// The built-in recording's planted channels (as `dspk info` reports them too).
const PLANTED_DEAD: [usize; 2] = [3, 190];
const PLANTED_NOISY: [usize; 2] = [77, 301];

fn indices(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_u64().expect("an index") as usize)
        .collect()
}

#[test]
fn scan_json_names_the_planted_channels() {
    for target in runtimes() {
        let rt = target.name();
        let report = json(&["--runtime", rt, "scan", "--duration", "0.2", "--json"]);
        assert_eq!(indices(&report["dead"]), PLANTED_DEAD, "{rt}");
        assert_eq!(indices(&report["noisy"]), PLANTED_NOISY, "{rt}");
        assert_eq!(indices(&report["planted"]["dead"]), PLANTED_DEAD);
        assert_eq!(report["runtime"], rt);
        assert_eq!(report["end_sample"], 6000);
        let channels = report["channels"].as_array().expect("channels");
        assert_eq!(channels.len(), 384);
        assert!(report["throughput_mb_s"].as_f64().expect("throughput") > 0.0);
        assert!(report["realtime_factor"].as_f64().expect("realtime") > 0.0);
        assert_eq!(report["stored_bytes"], 384 * 6000 * 2);

        // The device's statistics against the host's, from the same synthetic recording.
        let rec = SyntheticRecording::neuropixels(6000);
        let mut values = vec![0f32; 6000];
        for ch in [0usize, 3, 77, 200, 383] {
            rec.read(&[ch], 0..6000, &mut values).unwrap();
            let host = ChannelStats::from_values(&values);
            let row = &channels[ch];
            assert_eq!(row["index"], ch);
            assert_eq!(row["count"], 6000);
            // Minimum and maximum are sample values, exact in f32 (JSON text may not carry
            // the f64 back to the last bit).
            assert_eq!(
                row["min"].as_f64().unwrap() as f32,
                host.min as f32,
                "{rt} ch{ch}"
            );
            assert_eq!(
                row["max"].as_f64().unwrap() as f32,
                host.max as f32,
                "{rt} ch{ch}"
            );
            for key in ["mean", "rms", "std"] {
                let want = match key {
                    "mean" => host.mean(),
                    "rms" => host.rms(),
                    _ => host.std(),
                };
                let got = row[key].as_f64().unwrap();
                // The mean to 1e-5 of the spread (exact on a flat channel), the rest to 1e-5
                // relative: f32 partials of 1024 values on the device, f64 on the host.
                let tolerance = match key {
                    "mean" => 1e-5 * host.std(),
                    _ => 1e-5 * want.abs(),
                };
                assert!(
                    (got - want).abs() <= tolerance,
                    "{rt} ch{ch} {key}: {got} vs {want}"
                );
            }
            let flag = &row["flag"];
            match ch {
                3 => assert_eq!(flag, "dead"),
                77 => assert_eq!(flag, "noisy"),
                _ => assert!(flag.is_null(), "ch{ch}: {flag}"),
            }
        }
    }
}

#[test]
fn scan_writes_the_mask_and_ends_with_throughput() {
    for target in runtimes() {
        let dir = scratch(&format!("mask-{target}"));
        let mask_path = dir.join("mask.json");
        let out = ok(&[
            "--runtime",
            target.name(),
            "scan",
            "--start",
            "1.5",
            "--duration",
            "4000smp",
            "--mask",
            mask_path.to_str().unwrap(),
            "--table",
        ]);
        let mask: ChannelMask =
            serde_json::from_str(&std::fs::read_to_string(&mask_path).unwrap()).unwrap();
        let mut planted: Vec<usize> = PLANTED_DEAD.iter().chain(&PLANTED_NOISY).copied().collect();
        planted.sort_unstable();
        assert_eq!(mask.total_channels(), 384);
        assert_eq!(mask.disabled_indices(), planted);
        assert_eq!(listing(&dir), BTreeSet::from(["mask.json".to_string()]));

        let lines: Vec<&str> = out.lines().collect();
        let last = lines.last().expect("output");
        assert!(last.starts_with("throughput:"), "{last}");
        assert!(
            last.contains("MB/s") && last.contains("× real time"),
            "{last}"
        );
        // One row per channel, the planted ones marked.
        let rows: Vec<&&str> = lines.iter().filter(|l| l.contains("<<")).collect();
        assert_eq!(rows.len(), 4, "{out}");
        assert!(
            lines
                .iter()
                .any(|l| l.trim_start().starts_with("190 ") && l.ends_with("<< DEAD"))
        );
        assert!(
            lines
                .iter()
                .any(|l| l.trim_start().starts_with("301 ") && l.ends_with("<< NOISY"))
        );
        assert!(
            out.contains("samples 45000..49000 (1.5 s to ≈1.633333 s)"),
            "{out}"
        );
    }
}

/// A small recording file: a synthetic probe of 16 channels at a calibrated rate, stored
/// int16 time-major with a µV gain, as raw binary + sidecar. Returns the recording too.
fn write_recording(dir: &Path) -> (PathBuf, SyntheticRecording) {
    let mut config = SyntheticConfig::default()
        .with_samples(3000)
        .with_seed(0xc0ffee)
        .with_channels(16, vec![2], vec![9]);
    config.sample_rate = "29999.4325".parse().unwrap();
    let rec = SyntheticRecording::new(config).unwrap();
    let c = 16usize;
    let n = 3000usize;
    let all: Vec<usize> = (0..c).collect();
    let mut stored = vec![0u8; c * n * 2];
    rec.read_stored(&all, 0..n as u64, &mut stored).unwrap();
    let mut frames = vec![0u8; c * n * 2];
    for ch in 0..c {
        for s in 0..n {
            let from = (ch * n + s) * 2;
            let to = (s * c + ch) * 2;
            frames[to..to + 2].copy_from_slice(&stored[from..from + 2]);
        }
    }
    let path = dir.join("rec.bin");
    std::fs::write(&path, &frames).unwrap();
    let gain = rec.info().channels[0].gain;
    let channels: Vec<Value> = (0..c)
        .map(|i| serde_json::json!({"name": format!("e{i}"), "gain": gain, "unit": "uV"}))
        .collect();
    let sidecar = serde_json::json!({
        "sample_rate": "29999.4325",
        "channel_count": c,
        "format": "int16",
        "order": "time-major",
        "channels": channels,
        "start_time": "2.5",
    });
    std::fs::write(dir.join("rec.bin.json"), sidecar.to_string()).unwrap();
    (path, rec)
}

#[test]
fn convert_then_info_round_trips() {
    for target in runtimes() {
        let rt = target.name();
        let dir = scratch(&format!("convert-{rt}"));
        let (rec_path, rec) = write_recording(&dir);
        let rec_s = rec_path.to_str().unwrap();
        let map_path = dir.join("map.toml");
        // Outputs 0..16 read inputs 15..0, named after the map.
        let pairs: Vec<String> = (0..16)
            .map(|o| format!("{{ from = {}, to = {o}, name = \"m{o}\" }}", 15 - o))
            .collect();
        std::fs::write(
            &map_path,
            format!("[remap]\nbase = 0\npairs = [{}]\n", pairs.join(", ")),
        )
        .unwrap();

        for order in ["channel-major", "time-major"] {
            let out_path = dir.join(format!("out-{order}.bin"));
            let report = json(&[
                "--runtime",
                rt,
                "convert",
                rec_s,
                "-o",
                out_path.to_str().unwrap(),
                "--map",
                map_path.to_str().unwrap(),
                "--channels",
                "0:3,9",
                "--start",
                "0.01",
                "--end",
                "2500smp",
                "--order",
                order,
                "--window-samples",
                "700",
                "--json",
            ]);
            // 0.01 s at 29999.4325 Hz: sample floor(299.994325) = 299.
            assert_eq!(report["start_sample"], 299);
            assert_eq!(report["end_sample"], 2500);

            let info = json(&["info", out_path.to_str().unwrap(), "--json"]);
            assert_eq!(info["channel_count"], 5, "{info}");
            assert_eq!(info["sample_rate"], "29999.4325");
            assert_eq!(info["samples"], 2201);
            assert_eq!(info["format"], "float32");
            assert_eq!(info["order"], order);
            let names: Vec<&str> = info["channels"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["name"].as_str().unwrap())
                .collect();
            assert_eq!(names, ["m0", "m1", "m2", "m3", "m9"]);
            // Start time: the file's 2.5 s plus 299 samples, exactly.
            let rate = "29999.4325".parse().unwrap();
            let start = RationalTime::new(5, 2)
                .unwrap()
                .checked_add(RationalTime::from_samples(299, rate).unwrap())
                .unwrap();
            assert_eq!(info["start_time"], start.to_string().trim_end_matches(" s"));

            // The values: a host decode of the same channels and samples of the source.
            let back = BinaryRecording::open(&out_path).unwrap();
            let mut got = vec![0f32; 5 * 2201];
            back.read(&[0, 1, 2, 3, 4], 0..2201, &mut got).unwrap();
            let parent = Arc::new(BinaryRecording::open(&rec_path).unwrap());
            let map = ChannelMapFile::load(&map_path).unwrap().remap;
            let mapped = RemappedSource::new(parent, &map).unwrap();
            let mut want = vec![0f32; 5 * 2201];
            mapped.read(&[0, 1, 2, 3, 9], 299..2500, &mut want).unwrap();
            // And the synthetic values behind the file: input 15 - o of the map.
            let mut direct = vec![0f32; 2201];
            rec.read(&[15], 299..2500, &mut direct).unwrap();
            assert_eq!(&want[..2201], &direct[..]);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-6 * w.abs().max(1.0),
                    "{rt} {order}: value {i}: {g} vs {w}"
                );
            }
            assert!(want.iter().any(|&v| v != 0.0));
        }
        // The whole recording, no map, default order: the stored time-major bytes go to the
        // device as they are and are transposed there.
        let plain = dir.join("plain.bin");
        ok(&[
            "--runtime",
            rt,
            "convert",
            rec_s,
            "-o",
            plain.to_str().unwrap(),
        ]);
        let info = json(&["info", plain.to_str().unwrap(), "--json"]);
        assert_eq!(info["order"], "time-major");
        assert_eq!(info["samples"], 3000);
        assert_eq!(info["start_time"], "2.5");
        let back = BinaryRecording::open(&plain).unwrap();
        let all: Vec<usize> = (0..16).collect();
        let mut got = vec![0f32; 16 * 3000];
        back.read(&all, 0..3000, &mut got).unwrap();
        let mut want = vec![0f32; 16 * 3000];
        rec.read(&all, 0..3000, &mut want).unwrap();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-6 * w.abs().max(1.0),
                "{rt} plain: value {i}: {g} vs {w}"
            );
        }

        let files = listing(&dir);
        let want: BTreeSet<String> = [
            "rec.bin",
            "rec.bin.json",
            "map.toml",
            "out-channel-major.bin",
            "out-channel-major.bin.json",
            "out-time-major.bin",
            "out-time-major.bin.json",
            "plain.bin",
            "plain.bin.json",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        assert_eq!(files, want, "no temporary files are left behind");
    }
}

/// A failing command: non-zero status, exactly one non-empty stderr line, `error: …`, no
/// panic and no backtrace, nothing on stdout.
fn fails_with_one_line(args: &[&str], wanted: &str) -> String {
    let out = dspk(args);
    let err = text(&out.stderr);
    assert!(
        !out.status.success(),
        "dspk {args:?} succeeded: {}",
        text(&out.stdout)
    );
    assert_eq!(out.status.code(), Some(1), "dspk {args:?}: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        1,
        "dspk {args:?}: stderr is not one line:\n{err}"
    );
    assert!(lines[0].starts_with("error: "), "dspk {args:?}: {err}");
    assert!(
        lines[0].contains(wanted),
        "dspk {args:?}: {err} (wanted '{wanted}')"
    );
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
    assert!(
        out.stdout.is_empty(),
        "dspk {args:?} printed {}",
        text(&out.stdout)
    );
    lines[0].to_string()
}

#[test]
fn errors_are_one_line_and_leave_no_output() {
    let dir = scratch("errors");
    let (rec_path, _) = write_recording(&dir);
    let rec = rec_path.to_str().unwrap();
    let out = dir.join("out.bin");
    let out_s = out.to_str().unwrap();
    let missing = dir.join("missing.bin");
    let missing_map = dir.join("missing.toml");
    let bad_map = dir.join("bad.toml");
    std::fs::write(
        &bad_map,
        "[remap]\nbase = 0\npairs = [{ from = 0, to = 0 }, { from = 0, to = 1 }]\n",
    )
    .unwrap();
    let before = listing(&dir);

    fails_with_one_line(
        &["--runtime", "bogus", "scan"],
        "unknown compute runtime 'bogus'",
    );
    fails_with_one_line(
        &["bench", "--window-samples", "0"],
        "--window-samples must be at least 1",
    );
    fails_with_one_line(
        &["--runtime", "bogus", "convert", rec, "-o", out_s],
        "--runtime",
    );
    let e = fails_with_one_line(&["info", missing.to_str().unwrap()], "missing.bin");
    assert!(e.contains("no such file"), "{e}");
    fails_with_one_line(
        &["convert", missing.to_str().unwrap(), "-o", out_s],
        "missing.bin",
    );
    fails_with_one_line(
        &[
            "convert",
            rec,
            "-o",
            out_s,
            "--map",
            missing_map.to_str().unwrap(),
        ],
        "missing.toml",
    );
    fails_with_one_line(
        &[
            "convert",
            rec,
            "-o",
            out_s,
            "--map",
            bad_map.to_str().unwrap(),
        ],
        "bad.toml",
    );
    let e = fails_with_one_line(
        &[
            "convert", rec, "-o", out_s, "--start", "0.05", "--end", "0.01",
        ],
        "--end",
    );
    assert!(e.contains("before --start"), "{e}");
    fails_with_one_line(&["scan", "--start", "2", "--end", "1"], "before --start");
    fails_with_one_line(
        &["convert", rec, "-o", out_s, "--channels", "0:16"],
        "channel 16",
    );
    fails_with_one_line(
        &["convert", rec, "-o", out_s, "--start", "12.5ms"],
        "375000smp",
    );
    fails_with_one_line(&["convert", rec, "-o", rec], "overwrite");
    let mut with_env = Command::new(env!("CARGO_BIN_EXE_dspk"));
    let env_out = with_env
        .args(["info"])
        .env("DSPK_RUNTIME", "nonsense")
        .output()
        .unwrap();
    assert!(!env_out.status.success());
    assert!(text(&env_out.stderr).starts_with("error: DSPK_RUNTIME: unknown compute runtime"));

    assert_eq!(listing(&dir), before, "a failed command left files behind");
}

#[test]
fn devices_json_parses() {
    let report = json(&["devices", "--json"]);
    let entries = report.as_array().expect("an array");
    assert_eq!(entries.len(), 4);
    let names: Vec<&str> = entries
        .iter()
        .map(|e| e["runtime"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["wgpu", "cuda", "hip", "cpu"]);
    for e in entries {
        let target: ComputeTarget = e["runtime"].as_str().unwrap().parse().unwrap();
        assert_eq!(e["compiled_in"], target.is_available());
        if e["usable"] == Value::Bool(true) {
            let devices = e["devices"].as_array().unwrap();
            assert!(
                devices.iter().any(|d| d["default"] == Value::Bool(true)),
                "{e}"
            );
            for d in devices {
                assert!(d["max_storage_binding_bytes"].as_u64().unwrap() > 0, "{d}");
                assert!(!d["adapter_name"].as_str().unwrap().is_empty());
            }
        }
    }
    let text = ok(&["devices"]);
    assert!(text.contains("wgpu"), "{text}");
}

#[test]
fn info_describes_the_synthetic_recording() {
    let info = json(&["info", "--json"]);
    assert_eq!(info["channel_count"], 384);
    assert_eq!(info["sample_rate"], "30000");
    assert_eq!(info["samples"], 1_800_000);
    assert_eq!(info["duration_hms"], "0:01:00");
    assert_eq!(info["format"], "int16");
    assert_eq!(indices(&info["planted"]["dead"]), PLANTED_DEAD);
    assert_eq!(indices(&info["planted"]["noisy"]), PLANTED_NOISY);
    let text = ok(&["info", "--synthetic-duration", "1:00:00"]);
    assert!(text.contains("108000000"), "{text}");
    assert!(text.contains("1:00:00"), "{text}");
    assert!(text.contains("0.195 µV per count (384 channels)"), "{text}");
}

#[test]
fn convert_without_a_recording_exports_the_synthetic_one() {
    for target in runtimes() {
        let rt = target.name();
        let dir = scratch(&format!("convert-synthetic-{rt}"));
        let out = dir.join("synth.bin");
        let out_s = out.to_str().unwrap();
        let report = json(&[
            "--runtime",
            rt,
            "convert",
            "-o",
            out_s,
            "--synthetic-duration",
            "0.1",
            "--json",
        ]);
        assert_eq!(report["channel_count"], 384, "{report}");
        assert_eq!(report["samples"], 3000, "{report}");
        // The file holds the built-in recording's values in µV, as the host reads them.
        let rec = SyntheticRecording::new(SyntheticConfig::default().with_samples(3000)).unwrap();
        let file = BinaryRecording::open(&out).unwrap();
        assert_eq!(file.info().channel_count(), 384);
        let all: Vec<usize> = (0..384).collect();
        let (mut want, mut got) = (vec![0f32; 384 * 3000], vec![0f32; 384 * 3000]);
        rec.read(&all, 0..3000, &mut want).unwrap();
        file.read(&all, 0..3000, &mut got).unwrap();
        assert!(want.iter().any(|&v| v != 0.0));
        for (i, (w, g)) in want.iter().zip(&got).enumerate() {
            assert!(
                (w - g).abs() <= 1e-6 * w.abs().max(1.0),
                "{rt}: value {i}: {g} vs {w}"
            );
        }
        // The length applies to the built-in recording only.
        fails_with_one_line(
            &[
                "convert",
                out_s,
                "-o",
                dir.join("again.bin").to_str().unwrap(),
                "--synthetic-duration",
                "1",
            ],
            "--synthetic-duration applies to the built-in synthetic recording",
        );
    }
}

#[test]
fn help_shows_examples_and_the_time_syntax() {
    let help = ok(&["--help"]);
    for wanted in [
        "Examples:",
        "375000smp",
        "1:02:03.5",
        "0:5,100,383",
        "DSPK_RUNTIME",
    ] {
        assert!(help.contains(wanted), "--help lacks {wanted}:\n{help}");
    }
}

/// Runs `dspk` with `args` and `DSPK_DECODE=decode`.
fn dspk_decoding(decode: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dspk"))
        .args(args)
        .env_remove("DSPK_RUNTIME")
        .env("DSPK_DECODE", decode)
        .output()
        .expect("the dspk binary runs")
}

#[test]
fn both_decode_paths_give_the_same_statistics_and_files() {
    for target in runtimes() {
        let rt = target.name();
        let dir = scratch(&format!("decode-paths-{rt}"));
        let (rec_path, _) = write_recording(&dir);
        let rec_s = rec_path.to_str().unwrap();
        let mut stats = Vec::new();
        let mut files = Vec::new();
        for decode in ["staging", "copy"] {
            // The synthetic recording (384 channels) and the 16-channel raw file, in windows
            // that do not divide them.
            let out = dspk_decoding(
                decode,
                &[
                    "--runtime",
                    rt,
                    "scan",
                    "--duration",
                    "0.3",
                    "--window-samples",
                    "2900",
                    "--json",
                ],
            );
            assert!(out.status.success(), "{rt} {decode}: {}", text(&out.stderr));
            let report: Value = serde_json::from_slice(&out.stdout).expect("scan JSON");
            // wgpu (Vulkan) decodes int16 windows in staging when asked to: the synthetic
            // source's channel-major ones here, the file's time-major ones below.
            if rt == "wgpu" || decode == "copy" {
                assert_eq!(report["decode"], decode, "{rt}");
            }
            stats.push(report["channels"].clone());
            let converted = dir.join(format!("out-{decode}.bin"));
            let out = dspk_decoding(
                decode,
                &[
                    "--runtime",
                    rt,
                    "convert",
                    rec_s,
                    "-o",
                    converted.to_str().unwrap(),
                    "--window-samples",
                    "700",
                    "--json",
                ],
            );
            assert!(out.status.success(), "{rt} {decode}: {}", text(&out.stderr));
            let report: Value = serde_json::from_slice(&out.stdout).expect("convert JSON");
            if rt == "wgpu" || decode == "copy" {
                assert_eq!(report["decode"], decode, "{rt}");
            }
            files.push(std::fs::read(&converted).expect("the converted file"));
        }
        assert_eq!(stats[0].as_array().map(Vec::len), Some(384), "{rt}");
        assert_eq!(
            stats[0], stats[1],
            "{rt}: the statistics differ between the decode paths"
        );
        assert_eq!(files[0].len(), 16 * 3000 * 4, "{rt}");
        assert!(
            files[0] == files[1],
            "{rt}: the converted files differ between the decode paths"
        );
    }
    // A path that does not exist is a one-line error that names the variable.
    let out = dspk_decoding("gpu", &["scan", "--duration", "0.1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.contains("DSPK_DECODE"))
        .unwrap_or_else(|| panic!("no error naming DSPK_DECODE: {err}"));
    assert!(
        line.contains("\"gpu\"") && line.contains("staging"),
        "{line}"
    );
}

#[test]
fn preprocess_writes_the_same_bits_for_any_window_with_its_provenance() {
    for target in runtimes() {
        let rt = target.name();
        let dir = scratch(&format!("preprocess-{rt}"));
        let path = |name: &str| dir.join(name).display().to_string();
        // 8 channels × 0.5 s of the synthetic recording, as float32 µV with a sidecar.
        let raw = path("raw.bin");
        ok(&[
            "--runtime",
            rt,
            "convert",
            "--synthetic-duration",
            "0.5",
            "--channels",
            "0:7",
            "-o",
            &raw,
        ]);
        let spec = path("si.toml");
        let printed = ok(&["preprocess", "--print-pipeline", "spikeinterface"]);
        std::fs::write(&spec, &printed).unwrap();
        let mut outputs = Vec::new();
        for (name, pipeline, window) in [
            ("a.bin", "spikeinterface", None),
            ("b.bin", "spikeinterface", Some("3000")),
            ("c.bin", spec.as_str(), Some("7001")),
        ] {
            let out = path(name);
            let mut args = vec![
                "--runtime",
                rt,
                "preprocess",
                &raw,
                "--pipeline",
                pipeline,
                "-o",
                &out,
                "--json",
            ];
            if let Some(w) = window {
                args.extend(["--window-samples", w]);
            }
            let report = json(&args);
            let sidecar: Value =
                serde_json::from_str(&std::fs::read_to_string(format!("{out}.json")).unwrap())
                    .unwrap();
            let provenance = &sidecar["provenance"];
            // The sidecar records the run the program reported, and the input file.
            assert_eq!(provenance["report"], report["report"], "{rt} {name}");
            assert_eq!(provenance["inputs"][0]["path"], raw.as_str());
            assert_eq!(
                provenance["inputs"][0]["bytes"],
                std::fs::metadata(&raw).unwrap().len()
            );
            let plan = &report["report"]["plan"];
            assert_eq!(plan["channels"], 8);
            assert_eq!(plan["samples"], 15_000);
            assert_eq!(plan["output_bytes"], 8 * 15_000 * 4);
            let kinds: Vec<&str> = report["report"]["stage_times"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["kind"].as_str().unwrap())
                .collect();
            // No ADC shifts on this probe: the optional phase shift is left out.
            assert_eq!(kinds, ["filter", "common_reference"]);
            // The apply pass's split: writing and waiting for the devices are parts of it (the
            // rest is handing windows over in order); making the output durable comes after.
            let run = &report["report"];
            let secs = |v: &Value| v.as_f64().unwrap();
            let (apply, write, wait) = (
                secs(&run["apply_s"]),
                secs(&run["write_s"]),
                secs(&run["wait_s"]),
            );
            assert!(write > 0.0 && wait > 0.0, "{rt} {name}: {run}");
            assert!(write + wait <= apply, "{rt} {name}: {run}");
            assert!(secs(&report["finish_s"]) > 0.0, "{rt} {name}: {report}");
            outputs.push(std::fs::read(&out).unwrap());
        }
        assert_eq!(outputs[0].len(), 8 * 15_000 * 4);
        assert!(
            outputs.iter().all(|o| *o == outputs[0]),
            "{rt}: window sizes changed bits"
        );
        // The spikeinterface preset on `raw`, with `extra` arguments, as JSON.
        let preset = |extra: &[&str]| {
            let mut args = vec![
                "--runtime",
                rt,
                "preprocess",
                &raw,
                "--pipeline",
                "spikeinterface",
                "--json",
            ];
            args.extend(extra);
            json(&args)
        };
        // A dry run plans and writes nothing.
        let before = listing(&dir);
        let plan = preset(&["--dry-run"]);
        assert_eq!(plan["plan"]["windows"], 1);
        assert!(plan["plan"]["halo_before"].as_u64().unwrap() > 0);
        assert_eq!(listing(&dir), before);
        // Kept on the device (K1a): nothing written, every window read once with its halo,
        // and the pass's own wall time and set-up inside the apply time it is part of.
        let kept = preset(&["--on-device", "--window-samples", "3000"]);
        assert_eq!(kept["on_device"], true);
        assert_eq!(kept["windows"], 5);
        assert!(
            kept["read_bytes"].as_u64().unwrap() > 8 * 15_000 * 4,
            "{kept}"
        );
        let seconds = |key: &str| {
            kept[key]
                .as_f64()
                .unwrap_or_else(|| panic!("{key}: {kept}"))
        };
        assert!(seconds("pass_setup_s") >= 0.0);
        assert!(seconds("pass_setup_s") <= seconds("pass_wall_s"), "{kept}");
        assert!(seconds("pass_wall_s") <= seconds("apply_s"), "{kept}");
        let factor = 0.5 / seconds("apply_s");
        assert!(
            (seconds("realtime_factor") / factor - 1.0).abs() < 1e-9,
            "{kept}"
        );
        assert_eq!(listing(&dir), before);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
