//! The plan's segments, paths and file format.

use super::*;

#[test]
fn segments_tile_the_recording() {
    // Every length against every total of a few sizes: contiguous, covering, none empty,
    // all of the asked length but the last.
    for total in [1u64, 2, 7, 30_000, 30_001, 1_800_000] {
        for length in [1u64, 3, 29_999, 30_000, 1_000_000, 5_000_000] {
            let parts = segments(total, Some(length)).unwrap();
            assert_eq!(
                parts.len() as u64,
                total.div_ceil(length),
                "{total} {length}"
            );
            assert_eq!(parts[0].start, 0);
            assert_eq!(parts.last().unwrap().end, total);
            for w in parts.windows(2) {
                assert_eq!(w[0].end, w[1].start);
                assert_eq!(w[0].end - w[0].start, length);
            }
            assert!(parts.iter().all(|r| r.end > r.start));
        }
    }
    let whole = segments(10, None).unwrap();
    assert_eq!((whole.len(), whole[0].start, whole[0].end), (1, 0, 10));
    let e = segments(10, Some(0)).unwrap_err().to_string();
    assert!(e.contains("shorter than one sample"), "{e}");
    assert!(segments(0, None).is_err());
}

#[test]
fn paths_are_relative_to_the_base() {
    let cwd = Path::new("/data/lab");
    assert_eq!(
        absolute(cwd, Path::new("a/../b/./c.bin")),
        Path::new("/data/lab/b/c.bin")
    );
    assert_eq!(absolute(cwd, Path::new("/x/y")), Path::new("/x/y"));
    let dir = std::env::temp_dir().join(format!("dspk-plan-paths-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("m1/day2")).unwrap();
    let base = std::fs::canonicalize(&dir).unwrap();
    let rel = relative_to(&base, &base.join("m1/day2/run.ap.bin")).unwrap();
    assert_eq!(rel, "m1/day2/run.ap.bin");
    let e = relative_to(&base.join("m1"), &base.join("other.bin")).unwrap_err();
    assert!(e.to_string().contains("relative to the base"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn plan_of(jobs: Vec<Job>) -> Plan {
    Plan {
        format: PLAN_FORMAT.to_string(),
        dspk_version: "0".to_string(),
        base: PathBuf::from("/data"),
        command: JobCommand::Scan,
        options: JobOptions::default(),
        jobs,
    }
}

fn job(n: usize) -> Job {
    Job {
        job: n,
        recording: Some("a/b.bin".to_string()),
        stream: None,
        synthetic_samples: None,
        part: n,
        parts: 3,
        start_sample: 10 * n as u64,
        end_sample: 10 * n as u64 + 10,
        stored_bytes: 40,
    }
}

#[test]
fn plan_files_round_trip_and_bad_ones_are_named() {
    let dir = std::env::temp_dir().join(format!("dspk-plan-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = plan_of(vec![job(0), job(1), job(2)]);
    let text = serde_json::to_string(&plan).unwrap();
    std::fs::write(dir.join(PLAN_FILE), &text).unwrap();
    let back = Plan::load(&dir).unwrap();
    assert_eq!(back, plan);
    assert_eq!(
        back.recording_path(&back.jobs[1], None).unwrap(),
        Path::new("/data/a/b.bin")
    );
    assert_eq!(
        back.recording_path(&back.jobs[1], Some(Path::new("/mnt/x")))
            .unwrap(),
        Path::new("/mnt/x/a/b.bin")
    );
    assert_eq!(back.jobs[2].label(), "a/b.bin [3/3]");
    // A plan written before the fields were renamed reads the same.
    let older = text
        .replace("\"part\":", "\"segment\":")
        .replace("\"parts\":", "\"segments\":");
    assert_ne!(older, text);
    std::fs::write(dir.join(PLAN_FILE), &older).unwrap();
    assert_eq!(Plan::load(&dir).unwrap(), plan);
    let e = back.job(3).unwrap_err().to_string();
    assert_eq!(e, "job 3 is not in the plan: it has 3 jobs, 0 to 2");

    std::fs::write(
        dir.join(PLAN_FILE),
        text.replace(PLAN_FORMAT, "dspk-plan/9"),
    )
    .unwrap();
    let e = Plan::load(&dir).unwrap_err().to_string();
    assert!(e.contains("format 'dspk-plan/9'"), "{e}");
    let shuffled = plan_of(vec![job(0), job(2)]);
    std::fs::write(
        dir.join(PLAN_FILE),
        serde_json::to_string(&shuffled).unwrap(),
    )
    .unwrap();
    let e = Plan::load(&dir).unwrap_err().to_string();
    assert!(e.contains("job 1 is numbered 2"), "{e}");
    std::fs::write(dir.join(PLAN_FILE), &text[..text.len() / 2]).unwrap();
    let e = Plan::load(&dir).unwrap_err().to_string();
    assert!(e.contains("not a dspk plan"), "{e}");
    let e = Plan::load(&dir.join("none")).unwrap_err().to_string();
    assert!(
        e.contains("cannot read the plan") && e.contains("dspk plan REC"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shell_words_are_quoted_where_needed() {
    assert_eq!(shell_word(Path::new("/a/b-c_d.e")), "/a/b-c_d.e");
    assert_eq!(shell_word(Path::new("/a b/it's")), r"'/a b/it'\''s'");
}
