//! Tests of durable writes and of the clean-up of their leftovers.

use super::*;

fn fresh_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dspk-durable-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

/// The id of a process of this host that has ended (spawned, waited for).
fn ended_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn names_round_trip_and_other_schemes_do_not_parse() {
    let name = TempName {
        target: "job-3.bin.json".into(),
        host: "node-1.cluster".into(),
        pid: 4711,
        serial: 2,
    };
    let text = name.to_string();
    assert_eq!(text, ".job-3.bin.json@node-1.cluster.4711-2.dspk-tmp");
    assert_eq!(TempName::parse(&text), Some(name));
    // A target holding '@' and dots still parses.
    let odd = ".a@b.c@h.1-0.dspk-tmp";
    assert_eq!(TempName::parse(odd).unwrap().target, "a@b.c");
    for other in [
        "job-3.bin",
        ".job-3.json.dspk-tmp-h-1",
        ".job-3.bin.4711-0.dspk-tmp",
        ".job-3.bin@h.x-0.dspk-tmp",
        ".@h.1-0.dspk-tmp",
        ".job-3.bin@h.1-.dspk-tmp",
        ".job-3.bin.4711.dspk-old",
    ] {
        assert_eq!(TempName::parse(other), None, "{other}");
    }
}

#[test]
fn writes_replace_whole_files_and_leave_no_temporary() {
    let dir = fresh_dir("write");
    let path = dir.join("job-3.json");
    write_file(&path, b"first").unwrap();
    write_file(&path, b"second, longer").unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"second, longer");
    assert_eq!(names(&dir), ["job-3.json"]);
    let e = write_file(dir.join("no/such.json"), b"x")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no/such.json"), "{e}");
    assert!(e.contains("cannot create the output file"), "{e}");
    // A temporary dropped unfinished removes itself.
    let mut t = TempFile::create(dir.join("late.bin")).unwrap();
    t.file().write_all(b"partial").unwrap();
    assert!(TempName::parse(&t.path().file_name().unwrap().to_string_lossy()).is_some());
    drop(t);
    assert_eq!(names(&dir), ["job-3.json"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_move_restores_every_previous_file() {
    let dir = fresh_dir("restore");
    let a = dir.join("a.bin");
    let b = dir.join("b.bin");
    std::fs::write(&a, b"old a").unwrap();
    // `b` is a non-empty folder: renaming a file over it fails after `a` has moved in.
    std::fs::create_dir_all(b.join("inside")).unwrap();
    let mut ta = TempFile::create(&a).unwrap();
    ta.file().write_all(b"new a").unwrap();
    let mut tb = TempFile::create(&b).unwrap();
    tb.file().write_all(b"new b").unwrap();
    let e = persist_all(vec![ta, tb]).unwrap_err().to_string();
    assert!(e.contains("b.bin"), "{e}");
    assert_eq!(std::fs::read(&a).unwrap(), b"old a");
    assert!(b.join("inside").is_dir());
    assert_eq!(names(&dir), ["a.bin", "b.bin"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(target_os = "linux")]
#[test]
fn leftovers_of_ended_writers_and_owned_targets_go_others_stay() {
    let dir = fresh_dir("leftovers");
    let host = this_host();
    let gone = ended_pid();
    let me = std::process::id();
    let files = [
        // An ended writer on this host: removed, whatever its target.
        format!(".other.bin@{host}.{gone}-0.dspk-tmp"),
        // A running writer (this process), target not owned: kept.
        format!(".other.bin@{host}.{me}-7.dspk-tmp"),
        // Another host's writer, not owned: kept (it may be running).
        ".other.bin@elsewhere.1-0.dspk-tmp".to_string(),
        // Another host's writer of an owned target: removed.
        ".job-3.bin@elsewhere.1-0.dspk-tmp".to_string(),
        // Not this module's names: kept.
        ".job-3.json.dspk-tmp-h-1".to_string(),
        "job-3.bin".to_string(),
    ];
    for f in &files {
        std::fs::write(dir.join(f), b"x").unwrap();
    }
    let removed = remove_leftovers(&dir, |t| t.starts_with("job-3.")).unwrap();
    assert_eq!(
        removed,
        [
            dir.join(".job-3.bin@elsewhere.1-0.dspk-tmp"),
            dir.join(format!(".other.bin@{host}.{gone}-0.dspk-tmp")),
        ]
    );
    let mut kept = vec![
        format!(".other.bin@{host}.{me}-7.dspk-tmp"),
        ".other.bin@elsewhere.1-0.dspk-tmp".to_string(),
        ".job-3.json.dspk-tmp-h-1".to_string(),
        "job-3.bin".to_string(),
    ];
    kept.sort();
    assert_eq!(names(&dir), kept);
    // A new temporary of a target removes that target's ended writers' leftovers only.
    std::fs::write(dir.join(format!(".a.bin@{host}.{gone}-1.dspk-tmp")), b"x").unwrap();
    std::fs::write(dir.join(format!(".b.bin@{host}.{gone}-1.dspk-tmp")), b"x").unwrap();
    write_file(dir.join("a.bin"), b"new").unwrap();
    let after = names(&dir);
    assert!(!after.iter().any(|n| n.starts_with(".a.bin@")), "{after:?}");
    assert!(after.iter().any(|n| n.starts_with(".b.bin@")), "{after:?}");
    assert!(
        remove_leftovers(&dir.join("absent"), |_| true)
            .unwrap()
            .is_empty()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn this_process_is_running_and_an_ended_one_is_not() {
    assert!(!process_is_gone(std::process::id()));
    if Path::new("/proc/self/stat").exists() {
        assert!(process_is_gone(ended_pid()));
    }
}
