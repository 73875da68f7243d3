//! A detect plan's options: typed in the plan file, round-tripping, a bad one refused by name.

use super::*;
use crate::cluster::plan_file::{JobCommand, JobOptions, PLAN_FILE, PLAN_FORMAT};
use crate::cluster::preprocess::PlannedPipeline;
use dspk_stream::PeakSign;

fn detect_plan(detect: DetectSpec) -> Plan {
    Plan {
        format: PLAN_FORMAT.to_string(),
        dspk_version: "0".to_string(),
        base: PathBuf::from("/data"),
        command: JobCommand::Detect,
        options: JobOptions {
            window_samples: Some(4000),
            pipeline: Some(PlannedPipeline(
                PipelineSpec::preset("spikeinterface").unwrap(),
            )),
            detect: Some(PlannedDetect::try_from(detect).unwrap()),
            ..JobOptions::default()
        },
        jobs: Vec::new(),
    }
}

#[test]
fn a_detect_plan_round_trips_with_typed_options_and_a_bad_one_is_named() {
    let dir = std::env::temp_dir().join(format!("dspk-detect-plan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let detect = DetectSpec {
        threshold: 4.5,
        sign: PeakSign::Both,
        radius_um: 62.5,
        exclude_sweep_ms: 0.25,
    };
    let plan = detect_plan(detect);
    let text = serde_json::to_string_pretty(&plan).unwrap();
    // Typed: numbers and the sign's name, not a command line's text.
    assert!(
        text.contains(
            "\"detect\": {\n      \"threshold\": 4.5,\n      \"sign\": \"both\",\n      \
             \"radius_um\": 62.5,\n      \"exclude_sweep_ms\": 0.25\n    }"
        ),
        "{text}"
    );
    std::fs::write(dir.join(PLAN_FILE), &text).unwrap();
    let back = Plan::load(&dir).unwrap();
    assert_eq!(back, plan);
    assert_eq!(back.options.detect.unwrap().spec(), &detect);
    assert_eq!(
        back.options.pipeline.unwrap().0,
        PipelineSpec::preset("spikeinterface").unwrap()
    );

    // A threshold that cannot be: the plan is refused with the value, in one line.
    std::fs::write(
        dir.join(PLAN_FILE),
        text.replace("\"threshold\": 4.5", "\"threshold\": -2.0"),
    )
    .unwrap();
    let e = Plan::load(&dir).unwrap_err().to_string();
    assert!(
        e.contains("not a dspk plan") && e.contains("threshold -2") && e.lines().count() == 1,
        "{e}"
    );
    // A parameter the detector does not have.
    std::fs::write(
        dir.join(PLAN_FILE),
        text.replace("\"radius_um\"", "\"radius\""),
    )
    .unwrap();
    let e = Plan::load(&dir).unwrap_err().to_string();
    assert!(e.contains("radius"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn flags_not_given_take_dspk_detects_defaults() {
    assert_eq!(
        spec_of_flags(None, None, None, None).unwrap(),
        DetectSpec::default()
    );
    let given = spec_of_flags(Some(6.0), Some("pos"), Some(40.0), Some(0.2)).unwrap();
    assert_eq!(
        given,
        DetectSpec {
            threshold: 6.0,
            sign: PeakSign::Pos,
            radius_um: 40.0,
            exclude_sweep_ms: 0.2
        }
    );
    let e = spec_of_flags(None, Some("up"), None, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"up\" is none of neg, pos, both"), "{e}");
}
