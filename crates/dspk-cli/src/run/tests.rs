//! A job's device from its environment, and durable writes.

use super::*;

fn env(local: Option<usize>, gpus: Option<&[usize]>, ordinals: Option<&[usize]>) -> JobEnv {
    JobEnv {
        local_id: local,
        gpus: gpus.map(<[usize]>::to_vec),
        ordinals: ordinals.map(<[usize]>::to_vec),
    }
}

fn chosen(e: &JobEnv, visible: usize) -> Option<usize> {
    e.choose(visible).unwrap().map(|(gpu, _)| gpu)
}

#[test]
fn devices_follow_the_slurm_allocation() {
    // Not a Slurm job, or no GPU: the default device.
    assert_eq!(chosen(&JobEnv::default(), 8), None);
    assert_eq!(chosen(&env(Some(3), Some(&[5]), None), 0), None);
    // Every GPU of the node visible (no device cgroup): Slurm's numbers are the node's.
    assert_eq!(chosen(&env(Some(0), Some(&[5]), Some(&[5])), 8), Some(5));
    assert_eq!(chosen(&env(Some(1), Some(&[2, 6]), None), 8), Some(6));
    assert_eq!(chosen(&env(Some(2), Some(&[2, 6]), None), 8), Some(2));
    // Only the allocated GPUs visible (a cgroup hides the rest): the job's own are 0, 1…
    assert_eq!(chosen(&env(Some(0), Some(&[5]), Some(&[0])), 1), Some(0));
    assert_eq!(chosen(&env(Some(1), Some(&[5, 7]), None), 2), Some(1));
    assert_eq!(chosen(&env(Some(1), None, Some(&[0, 1])), 2), Some(1));
    // No GPU variables: the task's local number modulo the GPUs seen.
    assert_eq!(chosen(&env(Some(5), None, None), 4), Some(1));
    // A number the job cannot see is an error that names it.
    let e = env(Some(0), None, Some(&[3]))
        .choose(2)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("GPU_DEVICE_ORDINAL names GPU 3") && e.contains("sees 2 GPUs"),
        "{e}"
    );
    let (_, why) = env(Some(1), Some(&[2, 6]), None)
        .choose(8)
        .unwrap()
        .unwrap();
    assert!(
        why.contains("SLURM_LOCALID 1") && why.contains("GPU 6 of 8"),
        "{why}"
    );
}

#[test]
fn gpu_lists_parse_or_name_the_bad_entry() {
    assert_eq!(
        parse_list("SLURM_STEP_GPUS", "0,2, 3").unwrap(),
        vec![0, 2, 3]
    );
    let e = parse_list("SLURM_STEP_GPUS", "0,gpu1")
        .unwrap_err()
        .to_string();
    assert!(e.contains("'gpu1' is not a GPU number"), "{e}");
}

#[test]
fn durable_writes_replace_whole_files_and_leave_no_temporary() {
    let dir = std::env::temp_dir().join(format!("dspk-durable-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("job-3.json");
    write_durably(&path, b"first").unwrap();
    write_durably(&path, b"second, longer").unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"second, longer");
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["job-3.json"]);
    // Into a folder that does not exist: an error naming the file, nothing written.
    let e = write_durably(&dir.join("no/such.json"), b"x")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no/such.json: cannot write"), "{e}");
    // A killed run's temporaries are removed by the job's next run, others' are kept.
    std::fs::create_dir_all(dir.join(RESULTS_DIR)).unwrap();
    for name in [
        ".job-3.json.dspk-tmp-h-1",
        ".job-30.json.dspk-tmp-h-1",
        "job-3.json",
    ] {
        std::fs::write(dir.join(RESULTS_DIR).join(name), b"x").unwrap();
    }
    remove_leftovers(&dir, 3);
    let mut left: Vec<String> = std::fs::read_dir(dir.join(RESULTS_DIR))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, [".job-30.json.dspk-tmp-h-1", "job-3.json"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn job_numbers_come_from_the_flag() {
    assert_eq!(job_number(Some(4)).unwrap(), 4);
}

#[test]
fn spliced_records_keep_the_command_text() {
    let raw = "{\n  \"std\": 12119.439697669373\n}\n";
    let text = splice("{\n  \"format\": \"x\"\n}", "result", raw);
    assert!(text.contains("12119.439697669373"), "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["format"], "x");
    assert!(v["result"]["std"].is_number());
    let v: Value = serde_json::from_str(&splice("{}", "results", "[]")).unwrap();
    assert_eq!(v["results"], serde_json::json!([]));
}
