//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`) and the kept crash inputs
//! (`fuzz/regressions/<target>/`) through the fuzz targets' checks: a parser that panics again,
//! or breaks a property again, fails this test; so does a corpus or regressions folder that is
//! missing or empty (a replay of nothing would pass).

use std::path::{Path, PathBuf};

use dspk_fuzz_checks::{Check, TARGETS};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `dir`, sorted; an empty list when it does not exist.
fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = read
        .map(|e| e.expect("a readable corpus entry").path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

fn replay(check: Check, name: &str, paths: &[PathBuf]) {
    for path in paths {
        let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(
            outcome.is_ok(),
            "{name}: {} fails its check (replay it with `cargo +nightly fuzz run {name} {}`)",
            path.display(),
            path.display()
        );
    }
}

#[test]
fn every_target_has_a_corpus_and_it_passes() {
    for (name, check) in TARGETS {
        let corpus = files(&fuzz_dir().join("corpus").join(name));
        assert!(
            !corpus.is_empty(),
            "fuzz/corpus/{name} is missing or empty: the replay would pass without checking"
        );
        replay(*check, name, &corpus);
        println!("{name}: {} corpus inputs replayed", corpus.len());
    }
}

/// Replays the kept crash inputs under `dir` (`<target>/<input>`) and returns how many there
/// were. A missing `dir`, or one without a single input, panics: the replay would pass
/// without checking anything (fuzz/README.md: a fixed crash keeps its input there).
fn replay_regressions(dir: &Path) -> usize {
    assert!(
        dir.is_dir(),
        "{} is missing: the kept crash inputs would not be replayed",
        dir.display()
    );
    let mut replayed = 0;
    for (name, check) in TARGETS {
        let kept = files(&dir.join(name));
        replay(*check, name, &kept);
        replayed += kept.len();
    }
    assert!(
        replayed > 0,
        "{} holds no crash input of any target: the replay would pass without checking",
        dir.display()
    );
    replayed
}

#[test]
fn crash_regressions_pass() {
    let replayed = replay_regressions(&fuzz_dir().join("regressions"));
    println!("{replayed} kept crash inputs replayed");
}

#[test]
#[should_panic(expected = "is missing: the kept crash inputs would not be replayed")]
fn a_missing_regressions_folder_fails_the_replay() {
    replay_regressions(&fuzz_dir().join("regressions-that-do-not-exist"));
}

#[test]
#[should_panic(expected = "holds no crash input of any target")]
fn an_empty_regressions_folder_fails_the_replay() {
    let empty = std::env::temp_dir().join(format!("dspk-empty-regressions-{}", std::process::id()));
    std::fs::create_dir_all(&empty).expect("a temporary folder");
    // Removed before the assertion fires: the panic is the replay's own.
    let replayed = std::panic::catch_unwind(|| replay_regressions(&empty));
    std::fs::remove_dir_all(&empty).expect("the temporary folder removed");
    if let Err(panic) = replayed {
        std::panic::resume_unwind(panic);
    }
}

#[test]
fn every_corpus_folder_is_a_target() {
    for dir in ["corpus", "regressions"] {
        for path in std::fs::read_dir(fuzz_dir().join(dir))
            .into_iter()
            .flatten()
            .map(|e| e.expect("a readable entry").path())
        {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            assert!(
                TARGETS.iter().any(|(t, _)| *t == name),
                "fuzz/{dir}/{name} is not a target of dspk_fuzz_checks::TARGETS"
            );
        }
    }
}
