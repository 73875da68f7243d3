//! The plan's segments, its paths relative to the base, and the job script's quoting.

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

#[test]
fn shell_words_are_quoted_where_needed() {
    assert_eq!(shell_word(Path::new("/a/b-c_d.e")), "/a/b-c_d.e");
    assert_eq!(shell_word(Path::new("/a b/it's")), r"'/a b/it'\''s'");
}
