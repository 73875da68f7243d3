//! The plan file: its round trip, and the errors naming a bad one.

use super::*;

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
        output: None,
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
fn job_options_keep_their_text_and_are_parsed_when_read() {
    let options = JobOptions {
        window_samples: Some(3000),
        rate: Some(Written::parse("750003/25").unwrap()),
        channels: Some(Written::parse("0:5, 100").unwrap()),
        order: Some(MemoryOrder::ChannelMajor),
        probe: Some("probes/np.json".to_string()),
        pipeline: None,
        detect: None,
    };
    let text = serde_json::to_string(&options).unwrap();
    assert_eq!(
        text,
        r#"{"window_samples":3000,"rate":"750003/25","channels":"0:5, 100","order":"channel-major","probe":"probes/np.json"}"#
    );
    let back: JobOptions = serde_json::from_str(&text).unwrap();
    assert_eq!(back, options);
    assert_eq!(
        back.channels.unwrap().value().resolve(200).unwrap(),
        [0, 1, 2, 3, 4, 5, 100]
    );
    // Without a probe the field is left out, as plans before it wrote them.
    let plain = serde_json::to_string(&JobOptions::default()).unwrap();
    assert_eq!(
        plain,
        r#"{"window_samples":null,"rate":null,"channels":null,"order":null}"#
    );
    let e = serde_json::from_str::<JobOptions>(
        r#"{"window_samples":null,"rate":"fast","channels":null,"order":null}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("fast"), "{e}");
}

#[test]
fn probe_paths_follow_the_base_unless_absolute() {
    let mut plan = plan_of(vec![job(0)]);
    assert_eq!(plan.probe_path(None), None);
    plan.options.probe = Some("p/np.json".to_string());
    assert_eq!(plan.probe_path(None).unwrap(), Path::new("/data/p/np.json"));
    assert_eq!(
        plan.probe_path(Some(Path::new("/mnt/x"))).unwrap(),
        Path::new("/mnt/x/p/np.json")
    );
    plan.options.probe = Some("/probes/np.json".to_string());
    assert_eq!(
        plan.probe_path(Some(Path::new("/mnt/x"))).unwrap(),
        Path::new("/probes/np.json")
    );
}
