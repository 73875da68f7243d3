//! What a new user sees on a run that works: the readers' warnings on every command, a first
//! screen that fits, no `error:` line from the Vulkan layers when `XDG_RUNTIME_DIR` is unset, and
//! a quiet end when the reader of the output goes away (`dspk scan --table | head -1`).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use serde_json::Value;

mod common;
use common::{dspk, json, ok, runtimes, scratch, text};

/// `channels` channels of int16, time-major, `samples` long, then `extra` stray bytes.
fn partial_file(path: &Path, channels: usize, samples: usize, extra: usize) {
    let mut bytes: Vec<u8> = (0..channels * samples)
        .flat_map(|i| ((i % 977) as i16 - 488).to_le_bytes())
        .collect();
    bytes.extend(std::iter::repeat_n(7u8, extra));
    std::fs::write(path, bytes).expect("write the data file");
}

#[test]
fn reader_warnings_reach_the_user_on_every_command() {
    let dir = scratch("warnings");
    let raw = dir.join("partial.bin");
    partial_file(&raw, 2, 3000, 3);
    std::fs::write(
        dir.join("partial.bin.json"),
        r#"{"sample_rate": 30000, "channel_count": 2, "format": "int16", "order": "time-major"}"#,
    )
    .unwrap();
    // A SpikeGLX .bin cut short, with no fileSizeBytes in its .meta: AP channel 0 and the sync
    // channel (2 in the acquired numbering, after the one LF channel), as SpikeGLX saves them.
    let glx = dir.join("cut.imec0.ap.bin");
    partial_file(&glx, 2, 3000, 1);
    std::fs::write(
        dir.join("cut.imec0.ap.meta"),
        "typeThis=imec\nimSampRate=30000\nnSavedChans=2\nsnsApLfSy=1,0,1\nacqApLfSy=1,1,1\n\
         snsSaveChanSubset=0,2\nimAiRangeMax=0.6\nimAiRangeMin=-0.6\nimDatPrb_type=0\n\
         ~imroTbl=(0,1)(0 0 0 500 250 1)\n~snsChanMap=(1,1,1)(AP0;0:0)(SY0;1:1)\n",
    )
    .unwrap();
    for target in runtimes() {
        let rt = target.name();
        for (rec, left) in [(&raw, "3 trailing bytes"), (&glx, "partial")] {
            let rec = rec.to_str().unwrap();
            let out = dir.join(format!("out-{rt}.bin"));
            let out = out.to_str().unwrap();
            for args in [
                vec!["info", rec],
                vec!["--runtime", rt, "scan", rec],
                vec!["--runtime", rt, "convert", rec, "-o", out],
            ] {
                for json in [false, true] {
                    let mut args = args.clone();
                    if json {
                        args.push("--json");
                    }
                    let run = Command::new(env!("CARGO_BIN_EXE_dspk"))
                        .args(&args)
                        .output()
                        .unwrap();
                    let err = text(&run.stderr);
                    assert!(run.status.success(), "dspk {args:?}: {err}");
                    let warnings: Vec<&str> =
                        err.lines().filter(|l| l.starts_with("warning: ")).collect();
                    assert_eq!(warnings.len(), 1, "dspk {args:?}: {err}");
                    assert!(
                        warnings[0].contains(left) && warnings[0].contains("dropped"),
                        "dspk {args:?}: {err}"
                    );
                    assert!(!err.contains("error"), "dspk {args:?}: {err}");
                    if json {
                        let v: Value = serde_json::from_slice(&run.stdout).expect("JSON");
                        let listed = v["warnings"].as_array().expect("a warnings array");
                        assert_eq!(listed.len(), 1, "{v}");
                        assert!(listed[0].as_str().unwrap().contains("dropped"), "{v}");
                    }
                }
            }
        }
    }
}

#[test]
fn the_default_scan_fits_one_screen_and_leads_with_the_flagged_channels() {
    for target in runtimes() {
        let rt = target.name();
        let run = |extra: &[&str]| {
            let mut args = vec!["--runtime", rt, "scan", "--duration", "0.2"];
            args.extend_from_slice(extra);
            let out = Command::new(env!("CARGO_BIN_EXE_dspk"))
                .args(&args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", text(&out.stderr));
            text(&out.stdout)
        };
        let short = run(&[]);
        let lines: Vec<&str> = short.lines().collect();
        assert!(lines.len() <= 40, "{} lines:\n{short}", lines.len());
        // The planted channels (3 and 190 dead, 77 and 301 noisy), each with why.
        for (ch, why) in [
            (3, "dead:"),
            (190, "dead:"),
            (77, "noisy:"),
            (301, "noisy:"),
        ] {
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with(&format!("  ch {ch:>4} ")) && l.contains(why)),
                "channel {ch}:\n{short}"
            );
        }
        assert!(
            lines.iter().any(|l| l.starts_with("dead:  3, 190")),
            "{short}"
        );
        assert!(lines.last().unwrap().starts_with("throughput:"), "{short}");
        assert!(short.contains("--table"), "{short}");
        // The full table on request: one row per channel.
        let full = run(&["--table"]);
        let rows = full
            .lines()
            .filter(|l| {
                l.split_whitespace()
                    .next()
                    .is_some_and(|w| w.parse::<usize>().is_ok())
            })
            .count();
        assert_eq!(rows, 384, "{full}");
    }
}

#[test]
fn no_error_line_on_success_without_xdg_runtime_dir() {
    for target in runtimes() {
        let rt = target.name();
        for args in [
            vec!["--runtime", rt, "devices"],
            vec!["--runtime", rt, "scan", "--duration", "0.1"],
        ] {
            let out = Command::new(env!("CARGO_BIN_EXE_dspk"))
                .args(&args)
                .env_remove("XDG_RUNTIME_DIR")
                .env_remove("NODEVICE_SELECT")
                .output()
                .unwrap();
            let err = text(&out.stderr);
            assert!(out.status.success(), "dspk {args:?}: {err}");
            assert!(
                !err.to_lowercase().contains("error"),
                "dspk {args:?}: {err}"
            );
        }
    }
}

/// `dspk devices` numbers the devices; `--devices 0,0` (two devices on the one adapter) gives
/// the one-device statistics with each device's share; several recordings give one result
/// each, in order, equal to each one scanned alone.
#[test]
fn devices_are_numbered_and_several_devices_and_recordings_scan_as_one() {
    let dir = std::env::temp_dir().join(format!("dspk-multi-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let run = |args: &[&str], envs: &[(&str, &str)]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_dspk"))
            .args(args)
            .current_dir(&dir)
            .env_remove("DSPK_RUNTIME")
            .env_remove("DSPK_DEVICES")
            .envs(envs.iter().copied())
            .output()
            .expect("dspk runs");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "dspk {args:?}: {stderr}");
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let listed = run(&["devices", "--json"], &[]);
    let runtimes: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let indices: Vec<u64> = runtimes
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["devices"].as_array().unwrap().iter())
        .map(|d| d["index"].as_u64().unwrap())
        .collect();
    assert!(!indices.is_empty(), "{listed}");
    assert_eq!(
        indices,
        (0..indices.len() as u64).collect::<Vec<_>>(),
        "{listed}"
    );
    assert!(run(&["devices"], &[]).contains("  * 0  "));

    let scan = |extra: &[&str], envs: &[(&str, &str)]| -> serde_json::Value {
        let mut args = vec!["scan", "--synthetic-duration", "4", "--json"];
        args.extend_from_slice(extra);
        serde_json::from_str(&run(&args, envs)).unwrap()
    };
    let one = scan(&[], &[]);
    for (extra, envs) in [
        (&["--devices", "0,0"][..], &[][..]),
        (&[][..], &[("DSPK_DEVICES", "0,0")][..]),
    ] {
        let two = scan(extra, envs);
        assert_eq!(one["channels"], two["channels"], "{extra:?} {envs:?}");
        assert_eq!(one["mask"], two["mask"]);
        let shares = two["devices"].as_array().unwrap();
        assert_eq!(shares.len(), 2, "{two}");
        let windows: u64 = shares.iter().map(|d| d["windows"].as_u64().unwrap()).sum();
        assert_eq!(windows, two["windows"].as_u64().unwrap());
        // Each device's setup is part of its wall; the pass began with the first to start.
        let seconds = |d: &serde_json::Value, key: &str| d[key].as_f64().unwrap();
        assert!(
            shares
                .iter()
                .all(|d| seconds(d, "setup_s") <= seconds(d, "wall_s")),
            "{two}"
        );
        let first = shares
            .iter()
            .map(|d| seconds(d, "start_s"))
            .fold(f64::MAX, f64::min);
        assert_eq!(first, 0.0, "{two}");
    }
    let text = run(
        &["scan", "--synthetic-duration", "4", "--devices", "0,0"],
        &[],
    );
    assert!(text.contains("on 2 wgpu devices"), "{text}");
    assert!(text.contains("device 0b ("), "{text}");

    // Three raw files of different lengths, over two devices, against each scanned alone.
    let mut names = Vec::new();
    for (k, seconds) in [(0u32, 2u32), (1, 3), (2, 1)] {
        let name = format!("r{k}.bin");
        let samples = seconds as usize * 30_000;
        let bytes: Vec<u8> = (0..samples as u32 * 4)
            .map(|i| (i.wrapping_mul(2_654_435_761u32.wrapping_add(k)) >> 20) as i16)
            .flat_map(i16::to_le_bytes)
            .collect();
        std::fs::write(dir.join(&name), bytes).unwrap();
        std::fs::write(
            dir.join(format!("{name}.json")),
            r#"{"sample_rate": "30000", "channel_count": 4, "format": "int16", "order": "time-major"}"#,
        )
        .unwrap();
        names.push(name);
    }
    let mut args = vec!["scan", "--json", "--devices", "0,0"];
    args.extend(names.iter().map(String::as_str));
    let all: serde_json::Value = serde_json::from_str(&run(&args, &[])).unwrap();
    let all = all.as_array().expect("an array of results");
    assert_eq!(all.len(), 3);
    for (name, result) in names.iter().zip(all) {
        let alone: serde_json::Value =
            serde_json::from_str(&run(&["scan", name, "--json"], &[])).unwrap();
        assert_eq!(result["recording"], alone["recording"]);
        assert_eq!(result["channels"], alone["channels"], "{name}");
        assert_eq!(result["devices"].as_array().unwrap().len(), 1, "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--rate` reads a recording at a rate of the user's: `info` shows it with the rate the file
/// states and their difference (94.333 ppm: an hour lasts 339.6 ms longer, neuroconv #1926's
/// Open Ephys clock), times select samples at it, and `convert` writes it to the sidecar.
#[test]
fn a_rate_of_the_users_sets_every_time() {
    let dir = std::env::temp_dir().join(format!("dspk-rate-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_dspk"))
            .args(args)
            .current_dir(&dir)
            .env_remove("DSPK_RUNTIME")
            .env_remove("DSPK_DEVICES")
            .output()
            .expect("dspk runs");
        assert!(
            out.status.success(),
            "dspk {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let text = run(&["info", "--synthetic-duration", "2", "--rate", "29997.17"]);
    assert!(
        text.contains(
            "29997.17 Hz (--rate; the file states 30000 Hz: -94.333 ppm, an hour of its samples \
             lasts 339.6 ms longer)"
        ),
        "{text}"
    );
    let info: serde_json::Value = serde_json::from_str(&run(&[
        "info",
        "--synthetic-duration",
        "2",
        "--rate",
        "750003/25",
        "--json",
    ]))
    .unwrap();
    assert_eq!(info["sample_rate"], "30000.12");
    assert_eq!(info["stated_sample_rate"], "30000");
    // The nominal rate stays the file's.
    assert_eq!(info["nominal_sample_rate"], "30000");
    assert!((info["rate_difference_ppm"].as_f64().unwrap() - 4.0).abs() < 1e-9);
    // 60 000 samples at 24 000 Hz last 2.5 s; --duration 1 is 24 000 of them.
    assert_eq!(info["samples"], 60_000);
    let scan: serde_json::Value = serde_json::from_str(&run(&[
        "scan",
        "--synthetic-duration",
        "2",
        "--rate",
        "24000",
        "--start",
        "0.5",
        "--duration",
        "1",
        "--json",
    ]))
    .unwrap();
    assert_eq!(
        (scan["start_sample"].as_u64(), scan["end_sample"].as_u64()),
        (Some(12_000), Some(36_000))
    );
    // convert keeps the chosen rate in what it writes.
    let raw = dir.join("r.bin");
    let bytes: Vec<u8> = (0..30_000u32 * 2)
        .flat_map(|i| ((i % 97) as i16 - 48).to_le_bytes())
        .collect();
    std::fs::write(&raw, bytes).unwrap();
    std::fs::write(
        dir.join("r.bin.json"),
        r#"{"sample_rate": "30000", "channel_count": 2, "format": "int16", "order": "time-major"}"#,
    )
    .unwrap();
    run(&["convert", "r.bin", "-o", "out.bin", "--rate", "29997.17"]);
    let sidecar: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out.bin.json")).unwrap()).unwrap();
    assert_eq!(sidecar["sample_rate"], "29997.17");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Writes SpikeGLX trigger file `_t<t>` of run `r_g0` in `dir`: 5 channels (AP0…AP3, SY0),
/// `n` frames of `value(frame, channel)`, from clock sample `first`, at `rate`.
fn trigger_file(dir: &Path, t: u64, first: u64, n: usize, rate: &str) -> PathBuf {
    let bytes: Vec<u8> = (0..n * 5)
        .flat_map(|i| (((i * 7 + t as usize * 13) % 201) as i16 - 100).to_le_bytes())
        .collect();
    let bin = dir.join(format!("r_g0_t{t}.imec0.ap.bin"));
    std::fs::write(&bin, &bytes).unwrap();
    let meta = format!(
        "typeThis=imec\nimSampRate={rate}\nnSavedChans=5\nsnsApLfSy=4,0,1\nacqApLfSy=4,4,1\n\
         snsSaveChanSubset=0:3,8\nimAiRangeMax=0.6\nimAiRangeMin=-0.6\nimDatPrb_type=0\n\
         firstSample={first}\nfileSizeBytes={}\n\
         ~imroTbl=(0,4)(0 0 0 500 250 1)(1 0 0 250 125 1)(2 0 0 1000 500 1)(3 0 0 50 2400 1)\n\
         ~snsChanMap=(4,4,1)(AP0;0:0)(AP1;1:1)(AP2;2:2)(AP3;3:3)(SY0;8:8)\n",
        bytes.len()
    );
    std::fs::write(bin.with_extension("meta"), meta).unwrap();
    bin
}

#[test]
fn a_split_run_is_joined_listed_by_segment_and_converted_whole_or_by_segment() {
    let dir = scratch("segments");
    let t0 = trigger_file(&dir, 0, 1_000, 3_000, "30000.5");
    let t1 = trigger_file(&dir, 1, 4_000, 2_000, "30000.5");
    // A gap of 6 000 clock samples before t2.
    let t2 = trigger_file(&dir, 2, 12_000, 1_500, "30000.5");
    let (s0, s1, s2) = (
        t0.to_str().unwrap(),
        t1.to_str().unwrap(),
        t2.to_str().unwrap(),
    );
    // One trigger file with --concat brings the run.
    let info = json(&["info", "--concat", s1, "--json"]);
    assert_eq!(info["samples"], 6_500);
    assert_eq!(info["files"].as_array().unwrap().len(), 3);
    let segs = info["segments"].as_array().unwrap();
    let got: Vec<_> = segs
        .iter()
        .map(|s| {
            (
                s["start"].as_u64(),
                s["samples"].as_u64(),
                s["first_sample"].as_u64(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (Some(0), Some(5_000), Some(1_000)),
            (Some(5_000), Some(1_500), Some(12_000))
        ]
    );
    assert_eq!(info["gaps"][0]["samples"].as_i64(), Some(6000), "{info}");
    assert_eq!(info["nominal_sample_rate"], "30000");
    assert_eq!(info["measured_sample_rate"], "30000.5");
    let listing = ok(&["info", "--concat", s0, s1, s2]);
    assert!(listing.contains("gap: 6000 samples"), "{listing}");
    // Both segments scanned; the scan of each segment adds up.
    let all = json(&["scan", "--concat", s0, "--json"]);
    let one = json(&["scan", "--concat", s0, "--segment", "1", "--json"]);
    assert_eq!(all["end_sample"].as_u64(), Some(6_500));
    assert_eq!(one["end_sample"].as_u64(), Some(1_500));
    // convert keeps the segments; --segment 1 writes t2 alone, in µV.
    ok(&[
        "convert",
        "--concat",
        s0,
        "-o",
        dir.join("all.bin").to_str().unwrap(),
    ]);
    let copy = json(&["info", dir.join("all.bin").to_str().unwrap(), "--json"]);
    assert_eq!(copy["segments"], info["segments"]);
    ok(&[
        "convert",
        "--concat",
        s0,
        "--segment",
        "1",
        "-o",
        dir.join("one.bin").to_str().unwrap(),
    ]);
    let one_info = json(&["info", dir.join("one.bin").to_str().unwrap(), "--json"]);
    assert_eq!(one_info["samples"], 1_500);
    assert_eq!(one_info["start_time"], "24000/60001");
    let values: Vec<f32> = std::fs::read(dir.join("one.bin"))
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let stored: Vec<i16> = std::fs::read(&t2)
        .unwrap()
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect();
    // NP1.0 AP0 at gain 500: 0.6 / 512 / 500 × 1e6 = 2.34375 µV per count, exactly.
    for f in 0..1_500 {
        assert_eq!(
            values[f * 5],
            f32::from(stored[f * 5]) * 2.34375,
            "frame {f}"
        );
    }
    // A run with its middle file missing is refused, naming it.
    std::fs::remove_file(&t1).unwrap();
    let out = dspk(&["info", "--concat", s0, s2]);
    let err = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("r_g0_t1.imec0.ap.bin") && err.contains("not _t1"),
        "{err}"
    );
    // Rates 94.2 ppm apart: refused, then accepted with a tolerance and a warning.
    let rates = scratch("segments-rates");
    let a = trigger_file(&rates, 0, 0, 3_000, "30000");
    let b = trigger_file(&rates, 1, 3_000, 3_000, "30002.826");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let out = dspk(&["info", "--concat", a, b]);
    let err = text(&out.stderr);
    assert!(
        !out.status.success() && err.contains("339.1 ms per hour"),
        "{err}"
    );
    let out = dspk(&["info", "--concat", a, b, "--rate-tolerance", "100"]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("warning:") && err.contains("339.1 ms per hour"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&rates).unwrap();
}

/// Runs `dspk args` in `dir` with stdout a pipe whose reading end is closed before it writes
/// (and stderr too when `close_stderr`); its status and stderr.
fn with_closed_stdout(dir: &Path, args: &[&str], close_stderr: bool) -> (ExitStatus, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dspk"))
        .args(args)
        .current_dir(dir)
        .env_remove("DSPK_RUNTIME")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the dspk binary runs");
    drop(child.stdout.take());
    if close_stderr {
        drop(child.stderr.take());
    }
    let out = child.wait_with_output().expect("dspk ends");
    (out.status, text(&out.stderr))
}

#[test]
fn a_closed_stdout_ends_every_command_quietly_with_its_own_status() {
    let dir = scratch("closed-pipe");
    partial_file(&dir.join("rec.bin"), 2, 3000, 0);
    std::fs::write(
        dir.join("rec.bin.json"),
        r#"{"sample_rate": 30000, "channel_count": 2, "format": "int16", "order": "time-major"}"#,
    )
    .unwrap();
    for target in runtimes() {
        let rt = target.name();
        let _ = std::fs::remove_dir_all(dir.join("jobs"));
        let _ = std::fs::remove_dir_all(dir.join("short"));
        // (arguments, the status the command has whether or not its output is read). `bench`
        // returns its table to `main` as every command does (tests/bench.rs runs it; it takes
        // 40 s on lavapipe).
        let mut cases: Vec<(Vec<&str>, i32)> = vec![
            (vec!["devices"], 0),
            (vec!["info", "--synthetic-duration", "1"], 0),
            (vec!["info", "rec.bin"], 0),
            (
                vec![
                    "--runtime",
                    rt,
                    "scan",
                    "--synthetic-duration",
                    "1",
                    "--table",
                ],
                0,
            ),
            (vec!["--runtime", rt, "scan", "rec.bin", "rec.bin"], 0),
            (
                vec!["--runtime", rt, "convert", "rec.bin", "-o", "out.bin"],
                0,
            ),
            (vec!["plan", "rec.bin", "--out", "jobs"], 0),
            (vec!["--runtime", rt, "run", "jobs", "--job", "0"], 0),
            (vec!["gather", "jobs"], 0),
            // A plan of two jobs, one never run: gather prints what is there, then fails.
            (
                vec!["plan", "rec.bin", "--chunk", "1500smp", "--out", "short"],
                0,
            ),
            (vec!["--runtime", rt, "run", "short", "--job", "0"], 0),
            (vec!["gather", "short"], 1),
        ];
        let json: Vec<(Vec<&str>, i32)> = cases
            .iter()
            .filter(|(args, _)| args.iter().all(|a| *a != "run" && *a != "plan"))
            .map(|(args, status)| ([&args[..], &["--json"]].concat(), *status))
            .collect();
        cases.extend(json);
        for (args, want) in &cases {
            let (status, err) = with_closed_stdout(&dir, args, false);
            assert_eq!(status.code(), Some(*want), "dspk {args:?}: {status}: {err}");
            for bad in [
                "panicked",
                "Broken pipe",
                "broken pipe",
                "internal error",
                "os error",
            ] {
                assert!(!err.contains(bad), "dspk {args:?}: {err}");
            }
            if *want == 0 {
                assert!(!err.contains("error"), "dspk {args:?}: {err}");
            } else {
                assert!(
                    err.contains("error: 1 of 2 jobs have no result"),
                    "dspk {args:?}: {err}"
                );
            }
        }
        // With stderr closed as well, the error line has no reader either: still no panic.
        let (status, _) = with_closed_stdout(&dir, &["gather", "short"], true);
        assert_eq!(
            status.code(),
            Some(1),
            "gather with both pipes closed: {status}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
