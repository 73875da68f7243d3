//! Tests of the error messages: lowercase, no trailing full stop, carrying their values.

use std::path::PathBuf;

use super::*;

/// Asserts the house rules on `e`'s message and that it contains every one of `parts`.
fn check(e: &DspError, parts: &[&str]) {
    let msg = e.to_string();
    let first = msg.chars().next().expect("a message is never empty");
    assert!(!first.is_uppercase(), "starts uppercase: {msg}");
    assert!(!msg.ends_with('.'), "ends with a full stop: {msg}");
    for part in parts {
        assert!(msg.contains(part), "{msg:?} lacks {part:?}");
    }
}

#[test]
fn messages_carry_their_values() {
    check(
        &DspError::InvalidChannel {
            index: 385,
            count: 384,
        },
        &["385", "384"],
    );
    check(
        &DspError::shape("output buffer", 1200, 1199),
        &["output buffer", "1200", "1199"],
    );
    check(
        &DspError::InvalidSampleRate {
            value: "-30000.5".into(),
        },
        &["-30000.5"],
    );
    check(
        &DspError::BufferOverrun {
            what: "window".into(),
            capacity: 10,
            needed: 12,
        },
        &["window", "10", "12"],
    );
    check(
        &DspError::BufferUnderrun {
            what: "header".into(),
            needed: 8,
            available: 3,
        },
        &["header", "8", "3"],
    );
    check(
        &DspError::SampleRange {
            start: 90,
            end: 120,
            total: 100,
        },
        &["90..120", "100"],
    );
    check(
        &DspError::config("batch must be above 0"),
        &["batch must be above 0"],
    );
    check(&DspError::UnsupportedFormat("int24".into()), &["int24"]);
    check(
        &DspError::Overflow("time of sample 7".into()),
        &["overflow", "time of sample 7"],
    );
}

#[test]
fn io_errors_name_the_path_and_the_reason() {
    let os = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
    let e = DspError::io("/data/rec.bin", "cannot open", &os);
    check(&e, &["/data/rec.bin", "cannot open", "No such file"]);
    match &e {
        DspError::Io { path, .. } => assert_eq!(
            path.as_deref(),
            Some(PathBuf::from("/data/rec.bin").as_path())
        ),
        other => panic!("expected Io, got {other:?}"),
    }
    // Without a path the message still starts lowercase, whatever the system's text.
    let e: DspError = std::io::Error::other("Disk on fire").into();
    check(&e, &["Disk on fire"]);
    assert!(matches!(e, DspError::Io { path: None, .. }));
}

#[test]
fn errors_are_clone_and_comparable() {
    let e = DspError::InvalidChannel { index: 3, count: 2 };
    assert_eq!(e.clone(), e);
    assert_ne!(e, DspError::InvalidChannel { index: 3, count: 4 });
    let r: DspResult<u8> = Err(DspError::config("x"));
    assert_eq!(r.clone(), r);
}
