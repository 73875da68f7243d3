//! `--probe FILE`: a probeinterface JSON file attached to a recording. Written by `dspk info
//! --probe-out` and read back on a raw file, it gives the same contacts; a wrong one fails with
//! status 1 and one line on stderr naming the file, prints nothing on stdout and changes
//! nothing (the bad-input corpus's rules).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn dspk_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dspk"))
        .args(args)
        .current_dir(dir)
        .env_remove("DSPK_RUNTIME")
        .output()
        .expect("the dspk binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) {
    std::fs::write(dir.join(name), bytes).expect("write a fixture");
}

/// Four AP channels of an NP1.0 probe and the sync channel.
const META: &str = "typeThis=imec\nimSampRate=30000.0\nnSavedChans=5\nsnsApLfSy=4,0,1\n\
acqApLfSy=4,4,1\nsnsSaveChanSubset=0:3,8\nimAiRangeMax=0.6\nimAiRangeMin=-0.6\n\
imDatPrb_type=0\n~imroTbl=(0,4)(0 0 0 500 250 1)(1 0 0 250 125 1)(2 0 0 1000 500 1)\
(3 0 0 50 2400 1)\n~snsChanMap=(4,4,1)(AP0;0:0)(AP1;1:1)(AP2;2:2)(AP3;3:3)(SY0;8:8)\n";

fn sidecar(channels: usize) -> String {
    format!(
        r#"{{"sample_rate": "30000", "channel_count": {channels}, "format": "int16",
 "order": "time-major"}}"#
    )
}

/// The fixtures: the SpikeGLX file, raw files of 4 and 5 channels, `probe.json` written by
/// `dspk info --probe-out`, and wrong probe files made from it.
fn fixtures(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("dspk-probe-file")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the fixture directory");
    let ramp = |n: usize| -> Vec<u8> {
        (0..n)
            .flat_map(|i| (i as i16).wrapping_mul(7).to_le_bytes())
            .collect()
    };
    write(&dir, "x.ap.bin", ramp(1000 * 5));
    write(&dir, "x.ap.meta", META);
    write(&dir, "r4.bin", ramp(1000 * 4));
    write(&dir, "r4.bin.json", sidecar(4));
    write(&dir, "r5.bin", ramp(1000 * 5));
    write(&dir, "r5.bin.json", sidecar(5));
    let out = dspk_in(&dir, &["info", "x.ap.bin", "--probe-out", "probe.json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let good: Value =
        serde_json::from_slice(&std::fs::read(dir.join("probe.json")).unwrap()).unwrap();
    let edited = |f: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        f(&mut v);
        serde_json::to_string(&v).unwrap()
    };
    write(
        &dir,
        "out_of_range.json",
        edited(&|v| v["probes"][0]["device_channel_indices"][1] = 9.into()),
    );
    write(
        &dir,
        "negative.json",
        edited(&|v| v["probes"][0]["device_channel_indices"][1] = (-3).into()),
    );
    write(
        &dir,
        "twice.json",
        edited(&|v| v["probes"][0]["device_channel_indices"][1] = 0.into()),
    );
    write(
        &dir,
        "other_schema.json",
        r#"{"remap": {"base": 0, "pairs": []}}"#,
    );
    write(&dir, "not_json.json", "contact positions, roughly");
    write(
        &dir,
        "ragged.json",
        edited(&|v| v["probes"][0]["contact_ids"] = serde_json::json!(["e0"])),
    );
    dir
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn wrong_probe_files_fail_with_one_line_naming_the_file() {
    let dir = fixtures("bad");
    let cases: &[(&[&str], &str, &[&str])] = &[
        (
            &["info", "r5.bin"],
            "probe.json",
            &["too few contacts", "channel 4"],
        ),
        (
            &["info", "r4.bin"],
            "out_of_range.json",
            &["is 9", "4 channels"],
        ),
        (&["info", "r4.bin"], "negative.json", &["is -3"]),
        (
            &["info", "r4.bin"],
            "twice.json",
            &["both wired to channel 0"],
        ),
        (
            &["info", "r4.bin"],
            "other_schema.json",
            &["not a probeinterface file"],
        ),
        (
            &["info", "r4.bin"],
            "not_json.json",
            &["not a probeinterface JSON file"],
        ),
        (
            &["info", "r4.bin"],
            "ragged.json",
            &["contact_ids", "1 entries"],
        ),
        (&["info", "r4.bin"], "missing.json", &["no such probe file"]),
        (&["scan", "r5.bin"], "probe.json", &["too few contacts"]),
        (
            &["convert", "r5.bin", "-o", "o.bin"],
            "probe.json",
            &["too few contacts"],
        ),
    ];
    let before = snapshot(&dir);
    for (args, file, wants) in cases {
        let mut all = args.to_vec();
        all.extend(["--probe", file]);
        let out = dspk_in(&dir, &all);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{all:?}: {err}");
        assert!(out.stdout.is_empty(), "{all:?}: {}", text(&out.stdout));
        assert_eq!(err.lines().count(), 1, "{all:?}: {err}");
        assert!(
            err.contains("--probe") && err.contains(file),
            "{all:?}: {err}"
        );
        for want in *wants {
            assert!(err.contains(want), "{all:?} wants {want}: {err}");
        }
        assert_eq!(snapshot(&dir), before, "{all:?} changed a file");
    }
}

fn info_json(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["info", "--json"];
    all.extend(args);
    let out = dspk_in(dir, &all);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("info --json is JSON")
}

#[test]
fn a_written_probe_reads_back_with_the_same_contacts() {
    let dir = fixtures("round-trip");
    let spikeglx = info_json(&dir, &["x.ap.bin"])["probe"]["contacts"].clone();
    let raw = info_json(&dir, &["r4.bin", "--probe", "probe.json"])["probe"]["contacts"].clone();
    // The SpikeGLX file's fifth channel is the sync word, with no contact.
    let channels = spikeglx["channels"].as_array().unwrap();
    assert_eq!(channels.len(), 5);
    assert!(channels[4].is_null());
    assert_eq!(raw["channels"].as_array().unwrap()[..], channels[..4]);
    for key in ["model", "description", "adc_cycle", "contact_shape"] {
        assert_eq!(raw[key], spikeglx[key], "{key}");
    }
    // On the SpikeGLX file itself, the sync channel may stay without a contact.
    let again =
        info_json(&dir, &["x.ap.bin", "--probe", "probe.json"])["probe"]["contacts"].clone();
    assert_eq!(again, spikeglx);
    // Converted with --probe, the output's sidecar carries the probe.
    let out = dspk_in(
        &dir,
        &["convert", "r4.bin", "--probe", "probe.json", "-o", "c.bin"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(info_json(&dir, &["c.bin"])["probe"]["contacts"], raw);
}

#[test]
fn a_planned_probe_reaches_every_job() {
    let dir = fixtures("plan");
    // A probe that does not fit is refused when planning, before anything is written.
    let out = dspk_in(
        &dir,
        &["plan", "r5.bin", "--probe", "probe.json", "--out", "bad"],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--probe") && err.contains("too few contacts"),
        "{err}"
    );
    assert!(!dir.join("bad").exists());

    let out = dspk_in(
        &dir,
        &[
            "plan",
            "r4.bin",
            "--convert",
            "--chunk",
            "600smp",
            "--probe",
            "probe.json",
            "--out",
            "jobs",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan: Value =
        serde_json::from_slice(&std::fs::read(dir.join("jobs/plan.json")).unwrap()).unwrap();
    // Relative to the plan's base (here the current folder), as the recordings are.
    assert_eq!(plan["options"]["probe"], "probe.json", "{plan}");
    let want = info_json(&dir, &["r4.bin", "--probe", "probe.json"])["probe"]["contacts"].clone();
    assert!(want["channels"].is_array(), "{want}");
    for job in ["0", "1"] {
        let out = dspk_in(&dir, &["run", "jobs", "--job", job]);
        assert!(out.status.success(), "job {job}: {}", text(&out.stderr));
        let written = format!("jobs/outputs/job-{job}.bin");
        assert_eq!(
            info_json(&dir, &[written.as_str()])["probe"]["contacts"],
            want,
            "job {job}"
        );
    }
}
