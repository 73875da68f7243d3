//! Records' layout, and their round trip through the typed values byte for byte.

use super::*;

#[test]
fn spliced_members_keep_their_text() {
    let member = "{\n  \"std\": 12119.439697669373\n}\n";
    let text = splice("{\n  \"format\": \"x\"\n}", "result", member);
    assert_eq!(
        text,
        "{\n  \"result\": {\n  \"std\": 12119.439697669373\n},\n  \"format\": \"x\"\n}"
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["format"], "x");
    assert!(v["result"]["std"].is_number());
    let v: Value = serde_json::from_str(&splice("{}", "results", "[]")).unwrap();
    assert_eq!(v["results"], serde_json::json!([]));
}

/// A scan job's record as `dspk run` wrote it (2 channels of a raw file on lavapipe).
const SCAN_RECORD: &str = include_str!("scan-record.json");

#[test]
fn records_read_back_typed_and_print_byte_for_byte() {
    let dir = std::env::temp_dir().join(format!("dspk-records-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("job-0.json");
    std::fs::write(&path, SCAN_RECORD).unwrap();
    let record = read_record(&path).unwrap().unwrap();
    let Some(JobResult::Scan(report)) = &record.result else {
        panic!(
            "a scan record's result is a scan report: {:?}",
            record.result
        );
    };
    assert_eq!(report.channels[1].std, 34.40178956100976);
    assert_eq!((report.start_sample, report.end_sample), (0, 600));
    assert_eq!(
        record.result.as_ref().unwrap().flagged(),
        Some((&[][..], &[][..]))
    );
    // Every figure prints to its last digit as the job wrote it.
    assert_eq!(record.to_text(), SCAN_RECORD);

    // A failure record: no result, its error, read back alike.
    let mut failed = record.clone();
    failed.result = None;
    failed.error = Some("r.bin: no such file".to_string());
    let text = failed.to_text();
    assert!(!text.contains("\"result\""), "{text}");
    std::fs::write(&path, &text).unwrap();
    let back = read_record(&path).unwrap().unwrap();
    assert_eq!(back.to_text(), text);
    assert_eq!(back.error.as_deref(), Some("r.bin: no such file"));

    // Another format, and a result that is not a scan's, are named.
    std::fs::write(&path, SCAN_RECORD.replace(RESULT_FORMAT, "dspk-result/9")).unwrap();
    let e = read_record(&path).unwrap_err().to_string();
    assert!(e.contains("format 'dspk-result/9'"), "{e}");
    std::fs::write(&path, SCAN_RECORD.replace("\"channel_count\": 2,", "")).unwrap();
    let e = read_record(&path).unwrap_err().to_string();
    assert!(
        e.contains("not a dspk result record") && e.contains("channel_count"),
        "{e}"
    );
    assert!(read_record(&dir.join("none.json")).unwrap().is_none());
    let _ = std::fs::remove_dir_all(&dir);
}
