//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`) and the kept crash inputs
//! (`fuzz/regressions/<target>/`) through the fuzz targets' checks: a parser that panics again,
//! or breaks a property again, fails this test.

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

#[test]
fn crash_regressions_pass() {
    for (name, check) in TARGETS {
        let kept = files(&fuzz_dir().join("regressions").join(name));
        replay(*check, name, &kept);
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
