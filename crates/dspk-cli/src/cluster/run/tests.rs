//! The clean-up of a killed job's temporaries, and the job's number.

use super::*;

#[test]
fn a_jobs_rerun_removes_its_own_temporaries_from_any_host() {
    let dir = std::env::temp_dir().join(format!("dspk-leftovers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join(RESULTS_DIR)).unwrap();
    std::fs::create_dir_all(dir.join(OUTPUTS_DIR)).unwrap();
    let me = std::process::id();
    let write =
        |folder: &str, name: &str| std::fs::write(dir.join(folder).join(name), b"x").unwrap();
    // Job 3's, from another node (a requeued array task): removed.
    write(RESULTS_DIR, ".job-3.json@node-7.11-0.dspk-tmp");
    write(OUTPUTS_DIR, ".job-3.bin@node-7.11-1.dspk-tmp");
    // Job 30's, by a process that is running: kept. Job 3's result, and other names: kept.
    write(RESULTS_DIR, &format!(".job-30.json@node-7.{me}-0.dspk-tmp"));
    write(RESULTS_DIR, "job-3.json");
    write(OUTPUTS_DIR, ".job-3.bin.json.dspk-tmp-h-1");
    remove_leftovers(&dir, 3).unwrap();
    let left = |folder: &str| {
        let mut n: Vec<String> = std::fs::read_dir(dir.join(folder))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };
    assert_eq!(
        left(RESULTS_DIR),
        [
            format!(".job-30.json@node-7.{me}-0.dspk-tmp"),
            "job-3.json".to_string()
        ]
    );
    assert_eq!(left(OUTPUTS_DIR), [".job-3.bin.json.dspk-tmp-h-1"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn job_numbers_come_from_the_flag() {
    assert_eq!(job_number(Some(4)).unwrap(), 4);
}
