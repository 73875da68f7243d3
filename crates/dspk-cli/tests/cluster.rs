//! `dspk plan`, `dspk run` and `dspk gather` as child processes, without a scheduler: the
//! plan's jobs and relative paths, results identical to `dspk scan`, provenance, a finished
//! job skipped, a changed input run again, a failed job's error listed by `gather`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod common;
use common::{dspk, json, runtimes, scratch, text};

/// `dspk` with extra environment variables, in `dir`.
fn dspk_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dspk"));
    cmd.args(args).current_dir(dir).env_remove("DSPK_RUNTIME");
    for var in [
        "SLURM_ARRAY_TASK_ID",
        "SLURM_LOCALID",
        "SLURM_STEP_GPUS",
        "SLURM_JOB_GPUS",
        "GPU_DEVICE_ORDINAL",
        "DSPK_DEVICES",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the dspk binary runs")
}

fn ok_json(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Value {
    let out = dspk_env(dir, args, env);
    assert!(out.status.success(), "dspk {args:?}: {}", text(&out.stderr));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", text(&out.stdout)))
}

/// 3 channels of int16 with a seeded pseudo-random walk, `samples` long.
fn frames(samples: usize, channels: usize, seed: u64) -> Vec<u8> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..samples * channels)
        .flat_map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (((x >> 33) % 4000) as i16 - 2000).to_le_bytes()
        })
        .collect()
}

const SIDECAR: &str = r#"{"sample_rate": "30000", "channel_count": 3, "format": "int16",
 "order": "time-major", "channels": [{"name": "A0", "gain": 0.5, "unit": "uV"},
 {"name": "A1", "gain": 0.25, "unit": "uV"}, {"name": "A2", "gain": 2, "unit": "uV"}]}"#;

const META: &str = "typeThis=imec\nimSampRate=30000.0\nnSavedChans=5\nsnsApLfSy=4,0,1\n\
acqApLfSy=4,4,1\nsnsSaveChanSubset=0:3,8\nimAiRangeMax=0.6\nimAiRangeMin=-0.6\n\
imDatPrb_type=0\n~imroTbl=(0,4)(0 0 0 500 250 1)(1 0 0 250 125 1)(2 0 0 1000 500 1)\
(3 0 0 50 2400 1)\n~snsChanMap=(4,4,1)(AP0;0:0)(AP1;1:1)(AP2;2:2)(AP3;3:3)(SY0;8:8)\n";

/// A data folder with a raw recording and a SpikeGLX one, seeded by the process id.
fn data(root: &Path) -> (PathBuf, PathBuf) {
    let seed = u64::from(std::process::id());
    eprintln!("cluster fixtures: seed {seed}");
    std::fs::create_dir_all(root.join("data/raw")).unwrap();
    std::fs::create_dir_all(root.join("data/np")).unwrap();
    let raw = root.join("data/raw/rec.bin");
    std::fs::write(&raw, frames(25_000, 3, seed)).unwrap();
    std::fs::write(root.join("data/raw/rec.bin.json"), SIDECAR).unwrap();
    let sglx = root.join("data/np/x_g0_t0.imec0.ap.bin");
    std::fs::write(&sglx, frames(16_000, 5, seed + 1)).unwrap();
    std::fs::write(root.join("data/np/x_g0_t0.imec0.ap.meta"), META).unwrap();
    (raw, sglx)
}

/// What a scan computed, without where and how fast.
fn figures(scan: &Value) -> Value {
    let keys = [
        "channel_count",
        "sample_rate",
        "start_sample",
        "end_sample",
        "window_samples",
        "windows",
        "channels",
        "dead",
        "noisy",
        "median_std",
        "noisy_threshold",
        "mask",
        "stored_bytes",
    ];
    Value::Object(
        keys.iter()
            .map(|k| (k.to_string(), scan[*k].clone()))
            .collect(),
    )
}

#[test]
fn plan_run_gather_match_local_scans_and_skip_finished_jobs() {
    for target in runtimes() {
        let rt = target.name();
        let root = scratch(&format!("cluster-{rt}"));
        let (raw, sglx) = data(&root);
        let plan = ok_json(
            &root,
            &[
                "--runtime",
                rt,
                "plan",
                "data/raw/rec.bin",
                sglx.to_str().unwrap(),
                "--synthetic-duration",
                "0.5",
                "--chunk",
                "10000smp",
                "--base",
                "data",
                "--out",
                "jobs",
                "--json",
            ],
            &[],
        );
        // 25 000 samples in 3 segments, 16 000 in 2, 15 000 in 2.
        assert_eq!(plan["jobs"], 7, "{plan}");
        assert_eq!(plan["array"], "0-6");
        let file: Value =
            serde_json::from_str(&std::fs::read_to_string(root.join("jobs/plan.json")).unwrap())
                .unwrap();
        let jobs = file["jobs"].as_array().unwrap().clone();
        let recs: Vec<&str> = jobs
            .iter()
            .map(|j| j["recording"].as_str().unwrap_or("-"))
            .collect();
        assert_eq!(
            recs,
            [
                "raw/rec.bin",
                "raw/rec.bin",
                "raw/rec.bin",
                "np/x_g0_t0.imec0.ap.bin",
                "np/x_g0_t0.imec0.ap.bin",
                "-",
                "-"
            ]
        );
        let ranges: Vec<(u64, u64)> = jobs
            .iter()
            .map(|j| {
                (
                    j["start_sample"].as_u64().unwrap(),
                    j["end_sample"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            ranges,
            [
                (0, 10_000),
                (10_000, 20_000),
                (20_000, 25_000),
                (0, 10_000),
                (10_000, 16_000),
                (0, 10_000),
                (10_000, 15_000)
            ]
        );
        // Each job's part of its recording, and of how many.
        let parts: Vec<(u64, u64)> = jobs
            .iter()
            .map(|j| (j["part"].as_u64().unwrap(), j["parts"].as_u64().unwrap()))
            .collect();
        assert_eq!(
            parts,
            [(0, 3), (1, 3), (2, 3), (0, 2), (1, 2), (0, 2), (1, 2)]
        );
        let script = std::fs::read_to_string(root.join("jobs/array.sbatch")).unwrap();
        assert!(
            script.contains("#SBATCH --array=0-6")
                && script.contains("--job \"$SLURM_ARRAY_TASK_ID\""),
            "{script}"
        );

        // Before any run: gather lists every job as never run, and fails.
        let out = dspk_env(&root, &["gather", "jobs"], &[]);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            text(&out.stderr).contains("7 of 7 jobs have no result (0 failed, 7 never ran)"),
            "{}",
            text(&out.stderr)
        );

        // Each job as an array task would run it (the number from SLURM_ARRAY_TASK_ID).
        for n in 0..7 {
            let id = n.to_string();
            let rec = ok_json(
                &root,
                &["--runtime", rt, "run", "jobs", "--json"],
                &[("SLURM_ARRAY_TASK_ID", &id), ("SLURM_LOCALID", "0")],
            );
            assert_eq!(rec["job"]["job"], n);
            let prov = &rec["provenance"];
            assert_eq!(prov["environment"]["SLURM_ARRAY_TASK_ID"], id.as_str());
            assert_eq!(prov["runtime"], rt);
            assert!(
                prov["device_choice"]
                    .as_str()
                    .unwrap()
                    .contains("default device")
                    || prov["device_choice"]
                        .as_str()
                        .unwrap()
                        .contains("SLURM_LOCALID"),
                "{prov}"
            );
            assert_eq!(prov["dspk_version"], env!("CARGO_PKG_VERSION"));
            assert!(prov["wall_s"].as_f64().unwrap() > 0.0);
        }
        let report = ok_json(&root, &["gather", "jobs", "--json"], &[]);
        assert_eq!(
            (
                report["done"].as_u64(),
                report["failed"].as_array().unwrap().len(),
                report["missing"].as_array().unwrap().len()
            ),
            (Some(7), 0, 0)
        );
        for (job, record) in jobs.iter().zip(report["results"].as_array().unwrap()) {
            assert_eq!(&record["job"], job);
            let (s, e) = (
                format!("{}smp", job["start_sample"]),
                format!("{}smp", job["end_sample"]),
            );
            let local = match job["recording"].as_str() {
                Some(rel) => json(&[
                    "--runtime",
                    rt,
                    "scan",
                    root.join("data").join(rel).to_str().unwrap(),
                    "--start",
                    &s,
                    "--end",
                    &e,
                    "--json",
                ]),
                None => json(&[
                    "--runtime",
                    rt,
                    "scan",
                    "--synthetic-duration",
                    "0.5",
                    "--start",
                    &s,
                    "--end",
                    &e,
                    "--json",
                ]),
            };
            assert_eq!(figures(&record["result"]), figures(&local), "job {job}");
            if let Some(rel) = job["recording"].as_str() {
                let inputs = record["provenance"]["inputs"].as_array().unwrap();
                let size = std::fs::metadata(root.join("data").join(rel))
                    .unwrap()
                    .len();
                assert!(
                    inputs.iter().any(|i| i["path"] == rel && i["size"] == size),
                    "{inputs:?}"
                );
                assert_eq!(inputs.len(), 2, "data and sidecar or .meta: {inputs:?}");
            }
        }
        let table = text(&dspk_env(&root, &["gather", "jobs"], &[]).stdout);
        assert!(table.starts_with("7 of 7 scan jobs done"), "{table}");
        assert!(
            table.contains("raw/rec.bin [3/3]") && table.contains("20000..25000"),
            "{table}"
        );

        // A finished job is skipped and its result left as it was.
        let result = root.join("jobs/results/job-1.json");
        let before = std::fs::read(&result).unwrap();
        let skipped =
            text(&dspk_env(&root, &["--runtime", rt, "run", "jobs", "--job", "1"], &[]).stdout);
        assert!(
            skipped.contains("done already") && skipped.contains("2 input files are unchanged"),
            "{skipped}"
        );
        assert_eq!(std::fs::read(&result).unwrap(), before);

        // A changed input runs again; a corrupt one fails, its earlier result is removed, and
        // gather lists it with its error.
        std::fs::write(root.join("data/raw/rec.bin.json"), &SIDECAR[..50]).unwrap();
        let out = dspk_env(&root, &["--runtime", rt, "run", "jobs", "--job", "0"], &[]);
        assert_eq!(out.status.code(), Some(1));
        let err = text(&out.stderr);
        assert!(
            err.contains("job 0 (raw/rec.bin [1/3])") && err.contains("rec.bin.json"),
            "{err}"
        );
        let failed: Value = serde_json::from_str(
            &std::fs::read_to_string(root.join("jobs/results/job-0.failed.json")).unwrap(),
        )
        .unwrap();
        assert!(
            failed["error"].as_str().unwrap().contains("rec.bin.json"),
            "{failed}"
        );
        assert!(
            !root.join("jobs/results/job-0.json").exists(),
            "the stale result stays"
        );
        let out = dspk_env(&root, &["gather", "jobs", "--json"], &[]);
        assert_eq!(out.status.code(), Some(1));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["done"], 6);
        assert_eq!(report["failed"][0]["job"], 0);
        assert!(
            report["failed"][0]["error"]
                .as_str()
                .unwrap()
                .contains("rec.bin.json")
        );
        assert!(
            text(&out.stderr)
                .contains("1 of 7 jobs have no result (1 failed, 0 never ran): job 0 failed"),
            "{}",
            text(&out.stderr)
        );
        std::fs::write(root.join("data/raw/rec.bin.json"), SIDECAR).unwrap();
        ok_json(
            &root,
            &["--runtime", rt, "run", "jobs", "--job", "0", "--json"],
            &[],
        );
        assert!(!root.join("jobs/results/job-0.failed.json").exists());
        ok_json(&root, &["gather", "jobs", "--json"], &[]);
        // Touching an input (new modification time) runs the job again.
        let data_file = std::fs::File::options().append(true).open(&raw).unwrap();
        data_file
            .set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
            .unwrap();
        let again =
            text(&dspk_env(&root, &["--runtime", rt, "run", "jobs", "--job", "2"], &[]).stdout);
        assert!(again.contains("scan done"), "{again}");
        // The data moved: --base finds it.
        std::fs::rename(root.join("data"), root.join("moved")).unwrap();
        let out = dspk_env(
            &root,
            &["--runtime", rt, "run", "jobs", "--job", "4", "--force"],
            &[],
        );
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        let moved = text(
            &dspk_env(
                &root,
                &[
                    "--runtime",
                    rt,
                    "run",
                    "jobs",
                    "--job",
                    "4",
                    "--force",
                    "--base",
                    "moved",
                ],
                &[],
            )
            .stdout,
        );
        assert!(moved.contains("scan done"), "{moved}");
        let names: Vec<String> = std::fs::read_dir(root.join("jobs/results"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(!names.iter().any(|n| n.contains("dspk-tmp")), "{names:?}");
    }
}

#[test]
fn convert_jobs_write_outputs_in_the_plan() {
    for target in runtimes() {
        let rt = target.name();
        let root = scratch(&format!("cluster-convert-{rt}"));
        let (raw, _) = data(&root);
        ok_json(
            &root,
            &[
                "plan",
                raw.to_str().unwrap(),
                "--convert",
                "--channels",
                "2,0",
                "--chunk",
                "20000smp",
                "--base",
                "data",
                "--out",
                "jobs",
                "--json",
            ],
            &[],
        );
        for n in ["0", "1"] {
            ok_json(
                &root,
                &["--runtime", rt, "run", "jobs", "--job", n, "--json"],
                &[],
            );
        }
        let want = root.join("want.bin");
        common::ok(&[
            "--runtime",
            rt,
            "convert",
            raw.to_str().unwrap(),
            "-o",
            want.to_str().unwrap(),
            "--channels",
            "2,0",
            "--start",
            "20000smp",
        ]);
        assert_eq!(
            std::fs::read(root.join("jobs/outputs/job-1.bin")).unwrap(),
            std::fs::read(&want).unwrap()
        );
        assert_eq!(
            std::fs::metadata(root.join("jobs/outputs/job-0.bin"))
                .unwrap()
                .len(),
            20_000 * 2 * 4
        );
        let skipped = text(&dspk_env(&root, &["run", "jobs", "--job", "1"], &[]).stdout);
        assert!(skipped.contains("done already"), "{skipped}");
        std::fs::remove_file(root.join("jobs/outputs/job-1.bin")).unwrap();
        let again =
            text(&dspk_env(&root, &["--runtime", rt, "run", "jobs", "--job", "1"], &[]).stdout);
        assert!(again.contains("convert done"), "{again}");
    }
}

#[test]
fn bad_plans_and_jobs_are_one_line_errors() {
    let root = scratch("cluster-bad");
    let (raw, _) = data(&root);
    let cases: [(&[&str], &str); 7] = [
        (&["plan", "--out", "jobs"], "nothing to plan"),
        (
            &[
                "plan",
                "data/none.bin",
                "--synthetic-duration",
                "1",
                "--stream",
                "ProbeA-AP",
                "--out",
                "jobs",
            ],
            "the built-in synthetic recording has none",
        ),
        (
            &[
                "plan",
                raw.to_str().unwrap(),
                "--base",
                "data/np",
                "--out",
                "jobs",
            ],
            "is not inside --base",
        ),
        (
            &["plan", "data/none.bin", "--out", "jobs"],
            "data/none.bin: no such file",
        ),
        (
            &[
                "plan",
                raw.to_str().unwrap(),
                "--chunk",
                "0",
                "--out",
                "jobs",
            ],
            "--chunk is shorter than one sample",
        ),
        (&["run", "nowhere", "--job", "0"], "cannot read the plan"),
        (
            &["run", "nowhere"],
            "give --job N, or run as a Slurm array task",
        ),
    ];
    for (args, want) in cases {
        let out = dspk_env(&root, args, &[]);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains(want) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
    assert!(!root.join("jobs/plan.json").exists());
    ok_json(
        &root,
        &[
            "plan",
            raw.to_str().unwrap(),
            "--base",
            "data",
            "--out",
            "jobs",
            "--json",
        ],
        &[],
    );
    let out = dspk_env(&root, &["run", "jobs", "--job", "5"], &[]);
    assert!(
        text(&out.stderr).contains("job 5 is not in the plan: it has 1 jobs, 0 to 0"),
        "{}",
        text(&out.stderr)
    );
    let out = dspk_env(&root, &["run", "jobs"], &[("SLURM_ARRAY_TASK_ID", "x1")]);
    assert!(
        text(&out.stderr).contains("SLURM_ARRAY_TASK_ID=\"x1\" is not a job number"),
        "{}",
        text(&out.stderr)
    );
    // A result there, another plan into the same folder is refused.
    std::fs::write(root.join("jobs/results/job-0.json"), "{}").unwrap();
    let out = dspk_env(
        &root,
        &[
            "plan",
            raw.to_str().unwrap(),
            "--chunk",
            "1000smp",
            "--base",
            "data",
            "--out",
            "jobs",
        ],
        &[],
    );
    assert!(
        text(&out.stderr).contains("holds another plan with 1 results"),
        "{}",
        text(&out.stderr)
    );
    let _ = dspk(&["--version"]);
}

/// The names in `dir` that are temporaries of dspk's durable writes (none before it exists).
fn temporaries(dir: &Path) -> Vec<String> {
    if !dir.exists() {
        return Vec::new();
    }
    common::listing(dir)
        .into_iter()
        .filter(|n| n.ends_with(".dspk-tmp"))
        .collect()
}

#[test]
fn a_killed_convert_job_leaves_nothing_after_its_rerun() {
    for target in runtimes() {
        let rt = target.name();
        let root = scratch(&format!("cluster-killed-{rt}"));
        std::fs::create_dir_all(root.join("data")).unwrap();
        // 16 channels × 500 000 samples in windows of 1024: about 500 window writes, long
        // enough to be killed in the middle of.
        let raw = root.join("data/long.bin");
        std::fs::write(&raw, frames(500_000, 16, u64::from(std::process::id()))).unwrap();
        std::fs::write(
            root.join("data/long.bin.json"),
            r#"{"sample_rate": 30000, "channel_count": 16, "format": "int16",
                "order": "time-major"}"#,
        )
        .unwrap();
        let raw = raw.to_str().unwrap();
        ok_json(
            &root,
            &[
                "plan",
                raw,
                "--convert",
                "--window-samples",
                "1024",
                "--base",
                "data",
                "--out",
                "jobs",
                "--json",
            ],
            &[],
        );
        let outputs = root.join("jobs/outputs");
        let mut child = Command::new(env!("CARGO_BIN_EXE_dspk"))
            .args(["--runtime", rt, "run", "jobs", "--job", "0"])
            .current_dir(&root)
            .env_remove("DSPK_RUNTIME")
            .env_remove("SLURM_ARRAY_TASK_ID")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Killed once its temporary holds data: mid-write.
        let started = std::time::Instant::now();
        loop {
            let writing = temporaries(&outputs)
                .iter()
                .any(|n| std::fs::metadata(outputs.join(n)).is_ok_and(|m| m.len() > 0));
            if writing {
                break;
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!("{rt}: the job ended ({status}) before it could be killed mid-write");
            }
            assert!(
                started.elapsed().as_secs() < 120,
                "{rt}: no temporary after 120 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let left = temporaries(&outputs);
        assert!(
            !left.is_empty(),
            "{rt}: the kill left no temporary to clean"
        );
        assert!(!outputs.join("job-0.bin").exists());

        ok_json(
            &root,
            &["--runtime", rt, "run", "jobs", "--job", "0", "--json"],
            &[],
        );
        assert_eq!(
            common::listing(&outputs).into_iter().collect::<Vec<_>>(),
            ["job-0.bin", "job-0.bin.json"],
            "{rt}: leftovers after the rerun (were {left:?})"
        );
        assert!(temporaries(&root.join("jobs/results")).is_empty());
        let want = root.join("want.bin");
        common::ok(&[
            "--runtime",
            rt,
            "convert",
            raw,
            "-o",
            want.to_str().unwrap(),
        ]);
        assert!(
            std::fs::read(outputs.join("job-0.bin")).unwrap() == std::fs::read(&want).unwrap(),
            "{rt}: the rerun's output differs from a clean convert's"
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
