//! What the program's test binaries share: running `dspk`, scratch directories, and the
//! runtimes to run device commands on.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use dspk_types::ComputeTarget;
use serde_json::Value;

/// Runs `dspk` with `args` (no `DSPK_RUNTIME` from the caller's environment unless given).
pub fn dspk(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dspk"))
        .args(args)
        .env_remove("DSPK_RUNTIME")
        .output()
        .expect("the dspk binary runs")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Output that must have succeeded, as stdout text.
pub fn ok(args: &[&str]) -> String {
    succeeded(args, dspk(args))
}

/// The stdout text of `dspk args`' output `out`, which must have succeeded (the failure shows
/// its status and stderr): every test binary's one run-and-assert.
pub fn succeeded(args: &[&str], out: Output) -> String {
    assert!(
        out.status.success(),
        "dspk {args:?} failed ({:?}): {}",
        out.status,
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Stdout parsed as JSON.
pub fn json(args: &[&str]) -> Value {
    let out = ok(args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("dspk {args:?}: not JSON ({e}): {out}"))
}

/// A fresh empty directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("dspk-cli-tests")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the scratch directory");
    dir
}

pub fn listing(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("list the scratch directory")
        .map(|e| {
            e.expect("a directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// The runtimes to test the device commands on: `ComputeTarget::for_tests()` limited to those
/// whose default device opens, with a visible SKIP line for the others (a failure when
/// `DSPK_TEST_RUNTIMES` names them).
pub fn runtimes() -> Vec<ComputeTarget> {
    let mut usable = Vec::new();
    for target in ComputeTarget::for_tests() {
        let report = json(&["--runtime", target.name(), "devices", "--json"]);
        let entry = &report[0];
        if entry["usable"] == Value::Bool(true) {
            usable.push(target);
        } else if target.required_by_tests() {
            panic!("{target} is required by DSPK_TEST_RUNTIMES but has no usable device: {entry}");
        } else {
            eprintln!(
                "SKIP dspk-cli tests on {target}: no usable device ({})",
                entry["error"]
            );
        }
    }
    usable
}
