//! A job's device from its environment, and the clean-up of a killed job's temporaries.

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
