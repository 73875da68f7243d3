//! The program's results, byte for byte: `dspk scan`, `dspk plan`, `dspk run` and `dspk gather`
//! on a fixed recording compared with the files in `tests/golden/`, written by the code before
//! the results became typed values (issue 29), so that the move is seen to change no output.
//!
//! What varies from run to run is replaced by a fixed token before comparing, and only that:
//! wall times, throughput and real-time factors, timestamps, the host, input files'
//! modification times, the dspk version, the device's name (it differs by machine), this
//! test's scratch folder (`<ROOT>`) and the program's path (`<DSPK>`). The statistics are
//! compared to the last digit on lavapipe, where the files were written (CI's device); on
//! another default device their digits are masked too, since a GPU's division may round
//! differently.
//!
//! `DSPK_BLESS=1` writes the files anew from the program's output.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use dspk_types::ComputeTarget;

mod common;
use common::{runtimes, scratch, succeeded, text};

/// Keys whose values vary from run to run (or machine to machine) in the JSON outputs.
const VARYING: [&str; 14] = [
    "wall_s",
    "setup_s",
    "start_s",
    "throughput_mb_s",
    "realtime_factor",
    "started_unix_s",
    "finished_unix_s",
    "open_s",
    "host",
    "modified_ns",
    "dspk_version",
    "device",
    "worker",
    "pid",
];

/// The statistics, masked where the device is not lavapipe.
const STATISTICS: [&str; 7] = [
    "min",
    "max",
    "mean",
    "rms",
    "std",
    "median_std",
    "noisy_threshold",
];

/// The Slurm variables a job records: removed, so that the records do not depend on where the
/// test runs.
const SLURM: [&str; 11] = [
    "SLURM_JOB_ID",
    "SLURM_ARRAY_JOB_ID",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_RESTART_COUNT",
    "SLURM_LOCALID",
    "SLURM_STEP_GPUS",
    "SLURM_JOB_GPUS",
    "GPU_DEVICE_ORDINAL",
    "CUDA_VISIBLE_DEVICES",
    "SLURMD_NODENAME",
    "SLURM_CLUSTER_NAME",
];

/// `dspk` in `dir` on wgpu's default device, with no Slurm or device variables.
fn dspk_in(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dspk"));
    cmd.args(["--runtime", "wgpu"])
        .args(args)
        .current_dir(dir)
        .env_remove("DSPK_RUNTIME")
        .env_remove("DSPK_DEVICES")
        .env_remove("DSPK_DECODE")
        .env_remove("DSPK_UPLOAD");
    for var in SLURM {
        cmd.env_remove(var);
    }
    cmd.output().expect("the dspk binary runs")
}

/// Stdout of a command that must succeed.
fn ok_in(dir: &Path, args: &[&str]) -> String {
    succeeded(args, dspk_in(dir, args))
}

/// A fixed raw recording: 6 channels of int16 at 30 kHz, 9 000 samples, from a fixed seed;
/// channel 1 flat (dead), channel 4 twenty times louder (noisy).
fn recording(dir: &Path) {
    let (samples, channels) = (9_000usize, 6usize);
    let mut x: u64 = 0x5eed_0029;
    let mut bytes = Vec::with_capacity(samples * channels * 2);
    for _ in 0..samples {
        for ch in 0..channels {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let noise = ((x >> 33) % 200) as i16 - 100;
            let v = match ch {
                1 => 37,
                4 => noise * 20,
                _ => noise + 10 * ch as i16,
            };
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("rec.bin"), bytes).unwrap();
    std::fs::write(
        dir.join("rec.bin.json"),
        r#"{"sample_rate": "30000", "channel_count": 6, "format": "int16",
 "order": "time-major", "channels": [{"name": "A0", "gain": 0.5, "unit": "uV"},
 {"name": "A1", "gain": 0.5, "unit": "uV"}, {"name": "A2", "gain": 0.25, "unit": "uV"},
 {"name": "A3", "gain": 2, "unit": "uV"}, {"name": "A4", "gain": 0.5, "unit": "uV"},
 {"name": "SY0", "gain": 1}]}"#,
    )
    .unwrap();
}

/// `text` with what varies replaced: the scratch folder, the program's path, and the values
/// of `keys` on a JSON line of their own (`"key": value,`).
fn mask(text: &str, root: &Path, keys: &[&str]) -> String {
    let text = text
        .replace(env!("CARGO_BIN_EXE_dspk"), "<DSPK>")
        .replace(&root.display().to_string(), "<ROOT>");
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        out.push_str(&mask_line(line, keys));
    }
    out
}

fn mask_line(line: &str, keys: &[&str]) -> String {
    let body = line.trim_start();
    let indent = &line[..line.len() - body.len()];
    for key in keys {
        let Some(value) = body.strip_prefix(&format!("\"{key}\": ")) else {
            continue;
        };
        // Only a scalar: an object or array value goes on to the next lines.
        if value.starts_with('{') || value.starts_with('[') {
            continue;
        }
        let comma = if value.trim_end().ends_with(',') {
            ","
        } else {
            ""
        };
        let end = if line.ends_with('\n') { "\n" } else { "" };
        return format!("{indent}\"{key}\": \"<masked>\"{comma}{end}");
    }
    line.to_string()
}

/// `dspk scan`'s text with its throughput line's figures masked.
fn mask_scan_text(text: &str, root: &Path) -> String {
    let text = mask(text, root, &[]);
    text.lines()
        .map(|l| match l.split_once(" s of recording) in ") {
            Some((head, _)) => format!("{head} s of recording) in <masked>"),
            None => l.to_string(),
        })
        .map(|l| match l.strip_prefix("on wgpu: ") {
            Some(rest) => match rest.split_once(", windows of ") {
                Some((_, tail)) => format!("on wgpu: <device>, windows of {tail}"),
                None => l,
            },
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// `dspk gather`'s table with its wall time and device columns, and the hosts jobs failed
/// on, masked.
fn mask_gather_table(text: &str, root: &Path) -> String {
    let text = mask(text, root, &[]);
    let text: String = text
        .lines()
        .map(
            |l| match (l.starts_with("failed: job "), l.split_once(") on ")) {
                (true, Some((head, rest))) => match rest.split_once(": ") {
                    Some((_, why)) => format!("{head}) on <host>: {why}\n"),
                    None => format!("{l}\n"),
                },
                _ => format!("{l}\n"),
            },
        )
        .collect();
    let mut cut = None;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("job  recording") {
            cut = line.find("  wall s  device");
            out.push(line.to_string());
            continue;
        }
        match cut {
            Some(at)
                if line.len() > at
                    && !line.contains("FAILED")
                    && !line.contains("NO RESULT")
                    && line.starts_with(' ') =>
            {
                out.push(format!("{}  <wall s, device>", &line[..at]));
            }
            _ => out.push(line.to_string()),
        }
    }
    out.join("\n") + "\n"
}

/// `dspk run`'s text with its time and device masked.
fn mask_run_text(text: &str, root: &Path) -> String {
    let text = mask(text, root, &[]);
    match (text.find(" done in "), text.rfind(": ")) {
        (Some(a), Some(b)) if a < b => format!("{} done in <masked>{}", &text[..a], &text[b..]),
        _ => text,
    }
}

/// The golden file `name`: compared with `actual`, or written with `DSPK_BLESS=1`.
fn check(name: &str, actual: &str, failures: &mut Vec<String>) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("DSPK_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (DSPK_BLESS=1 writes it)", path.display()));
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        failures.push(format!(
            "{name} differs from line {}:\n  golden: {:?}\n  now:    {:?}",
            line + 1,
            expected.lines().nth(line).unwrap_or("<end>"),
            actual.lines().nth(line).unwrap_or("<end>"),
        ));
    }
}

#[test]
fn scan_plan_run_gather_print_what_they_printed_before() {
    if !runtimes().contains(&ComputeTarget::Wgpu) {
        return;
    }
    let root = scratch("golden");
    recording(&root.join("data"));
    let mut failures = Vec::new();

    let scan = ok_in(&root, &["scan", "data/rec.bin", "--json"]);
    let device: serde_json::Value = serde_json::from_str(&scan).unwrap();
    let lavapipe = device["device"]
        .as_str()
        .is_some_and(|d| d.contains("llvmpipe"));
    if !lavapipe {
        eprintln!(
            "golden: the default device is {device}: not lavapipe, statistics masked",
            device = device["device"]
        );
    }
    let mut keys: Vec<&str> = VARYING.to_vec();
    if !lavapipe {
        keys.extend(STATISTICS);
    }
    check("scan.json", &mask(&scan, &root, &keys), &mut failures);
    let table = ok_in(&root, &["scan", "data/rec.bin", "--table"]);
    check(
        "scan-table.txt",
        &mask_scan_text(&table, &root),
        &mut failures,
    );
    let part = ok_in(
        &root,
        &[
            "scan",
            "data/rec.bin",
            "--start",
            "1000smp",
            "--end",
            "7000smp",
            "--json",
        ],
    );
    check("scan-part.json", &mask(&part, &root, &keys), &mut failures);

    // A scan plan of the recording, in two parts, and the built-in synthetic one.
    let plan = ok_in(
        &root,
        &[
            "plan",
            "data/rec.bin",
            "--synthetic-duration",
            "0.1",
            "--chunk",
            "5000smp",
            "--window-samples",
            "2500",
            "--base",
            "data",
            "--out",
            "jobs",
            "--json",
        ],
    );
    check("plan.json", &mask(&plan, &root, &keys), &mut failures);
    let file = std::fs::read_to_string(root.join("jobs/plan.json")).unwrap();
    check("plan-file.json", &mask(&file, &root, &keys), &mut failures);
    let jobs = 3;
    for n in 0..jobs {
        let id = n.to_string();
        let record = ok_in(&root, &["run", "jobs", "--job", &id, "--json"]);
        let written =
            std::fs::read_to_string(root.join(format!("jobs/results/job-{n}.json"))).unwrap();
        assert_eq!(record, written, "job {n}: stdout is the record written");
        check(
            &format!("run-{n}.json"),
            &mask(&record, &root, &keys),
            &mut failures,
        );
    }
    let skipped = ok_in(&root, &["run", "jobs", "--job", "1"]);
    check(
        "run-skipped.txt",
        &mask(&skipped, &root, &keys),
        &mut failures,
    );
    let skipped = ok_in(&root, &["run", "jobs", "--job", "1", "--json"]);
    check(
        "run-skipped.json",
        &mask(&skipped, &root, &keys),
        &mut failures,
    );
    let again = ok_in(&root, &["run", "jobs", "--job", "2", "--force"]);
    check(
        "run-forced.txt",
        &mask_run_text(&again, &root),
        &mut failures,
    );
    let gathered = ok_in(&root, &["gather", "jobs", "--json"]);
    let file = std::fs::read_to_string(root.join("jobs/gathered.json")).unwrap();
    assert_eq!(gathered, file, "stdout is gathered.json");
    check("gather.json", &mask(&gathered, &root, &keys), &mut failures);
    let table = ok_in(&root, &["gather", "jobs"]);
    check(
        "gather.txt",
        &mask_gather_table(&table, &root),
        &mut failures,
    );

    // A convert plan with one job run, one failed and the rest never run.
    ok_in(
        &root,
        &[
            "plan",
            "data/rec.bin",
            "--convert",
            "--chunk",
            "3000smp",
            "--channels",
            "0,2:4",
            "--order",
            "channel-major",
            "--rate",
            "30000",
            "--base",
            "data",
            "--out",
            "conv",
        ],
    );
    let record = ok_in(&root, &["run", "conv", "--job", "0", "--json"]);
    check(
        "convert-run-0.json",
        &mask(&record, &root, &keys),
        &mut failures,
    );
    let mut plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("conv/plan.json")).unwrap())
            .unwrap();
    plan["jobs"][1]["recording"] = "elsewhere.bin".into();
    std::fs::write(root.join("conv/plan.json"), plan.to_string()).unwrap();
    let failed = dspk_in(&root, &["run", "conv", "--job", "1", "--json"]);
    assert_eq!(failed.status.code(), Some(1));
    check(
        "convert-run-1.stderr",
        &mask(&text(&failed.stderr), &root, &keys),
        &mut failures,
    );
    let record = std::fs::read_to_string(root.join("conv/results/job-1.failed.json")).unwrap();
    check(
        "convert-run-1.failed.json",
        &mask(&record, &root, &keys),
        &mut failures,
    );
    let out = dspk_in(&root, &["gather", "conv", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    check(
        "convert-gather.json",
        &mask(&text(&out.stdout), &root, &keys),
        &mut failures,
    );
    check(
        "convert-gather.stderr",
        &mask(&text(&out.stderr), &root, &keys),
        &mut failures,
    );
    let out = dspk_in(&root, &["gather", "conv"]);
    check(
        "convert-gather.txt",
        &mask_gather_table(&text(&out.stdout), &root),
        &mut failures,
    );

    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let _ = std::fs::remove_dir_all(&root);
}
