//! `cargo xtask ci`: every check CI runs, in order, stopping at the first failure.

use std::collections::BTreeSet;
use std::env;
use std::ffi::OsString;
use std::process::Command;

use crate::Error;
use crate::backends::Runtime;
use crate::cmd::{Cmd, Workspace};

/// The cargo profile the tests, the main job and the wheel are built in (Cargo.toml says why).
pub const CI_PROFILE: &str = "ci";

/// The runtimes the tests must find a device for; read once, here.
const TEST_RUNTIMES_VAR: &str = "DSPK_TEST_RUNTIMES";

/// What CI tests on: lavapipe gives every CI machine a wgpu device (`.ci/run` installs it), and
/// CubeCL's native `cpu` runtime runs on any machine.
const CI_TEST_RUNTIMES: &str = "wgpu,cpu";

/// The runtimes the tests, the main job and the wheel are built with, besides the default
/// wgpu, as cargo features of the workspace: all in one build, so that CubeCL's LLVM (which
/// `cuda` and `cpu` share) and everything above dspk-device compile once. `cuda` is built and
/// checked here though no CI machine has a GPU; its tests run on the H200 (`DSPK_TEST_RUNTIMES=
/// cuda`). `hip` is not: it needs LLVM's LLD, which the PyPI LLVM lacks.
pub const CI_FEATURES: &str = "dspk-device/cpu,dspk-device/cuda";

/// Runs the CI sequence.
pub fn ci(ws: &Workspace) -> Result<(), Error> {
    let steps = 9;
    let mut step = 0;
    let mut begin = |what: &str| {
        step += 1;
        eprintln!("\n==> ci [{step}/{steps}] {what}");
        eprintln!("{}", crate::disk::report(ws));
    };

    // Before anything is built: what the tests need from the machine, so that a missing
    // package fails the run in seconds, saying what to install, instead of a test skipping.
    begin("set-up: system packages, the Python tools venv, the LLVM of the cuda and cpu runtimes");
    let test_runtimes = test_runtimes();
    crate::prereq::check(&test_runtimes)?;
    let py_tools = crate::python::set_up_tools(ws)?;
    crate::llvm::install(ws)?;

    begin("formatting");
    Cmd::cargo(ws).args(["fmt", "--all", "--check"]).run()?;

    // The lints, the feature combinations and the docs are checked in the `ci` profile too:
    // check-mode metadata is never what the tests link, but the build scripts and proc macros
    // (syn, bindgen, cubecl-macros, serde_derive… and the scripts' runs) are the same units the
    // tests' build needs, so they compile once instead of once more at the dev profile's
    // opt-level 2.
    begin("lints");
    Cmd::cargo(ws)
        .args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--profile",
            CI_PROFILE,
            "--features",
            CI_FEATURES,
            "--",
            "-D",
            "warnings",
        ])
        .run()?;

    // Runtimes are chosen by features (README, "Backends"): besides the full build the lints
    // checked (wgpu, cpu, cuda), no runtime at all and wgpu alone (the default build, what the
    // README's first command compiles) are checked, so that neither stops compiling unnoticed.
    // A combination that resolves exactly as the lints' build (cargo tree, every crate's
    // features but `default`) is not checked twice.
    begin("feature combinations (no runtime; wgpu alone, the default build)");
    let linted_build = resolved_features(ws, &["--features", CI_FEATURES])?;
    for features in feature_combinations() {
        let mut args = vec!["--no-default-features"];
        args.extend(&features);
        if !features.is_empty() && resolved_features(ws, &args)? == linted_build {
            eprintln!(
                "`{}` resolves exactly as the build the lints checked \
                 (cargo tree, every crate's features but `default`): not checked twice",
                args.join(" ")
            );
            continue;
        }
        Cmd::cargo(ws)
            .args([
                "check",
                "--workspace",
                "--all-targets",
                "--profile",
                CI_PROFILE,
            ])
            .args(args)
            .run()?;
    }

    begin("docs");
    Cmd::cargo(ws)
        .args([
            "doc",
            "--workspace",
            "--no-deps",
            "--profile",
            CI_PROFILE,
            "--features",
            CI_FEATURES,
        ])
        .env("RUSTDOCFLAGS", rustdocflags_denying_warnings())
        .run()?;

    // CI machines' disks are small and shared: the check-mode metadata the lints and docs
    // compiled is not read again (the later builds compile code), so CI frees it for them.
    if in_ci() {
        eprintln!(
            "{}",
            crate::disk::freed_line(crate::disk::drop_lint_build(ws))
        );
    }

    begin("licenses, bans, sources");
    if Cmd::cargo(ws)
        .args(["deny", "--version"])
        .succeeds_quietly()
    {
        Cmd::cargo(ws)
            .args(["deny", "check", "licenses", "bans", "sources"])
            .run()?;
    } else {
        // The same policy runs in the tests step either way: dspk-tests' `policy` test reads
        // deny.toml and checks every crate's source, licence and version requirement.
        eprintln!(
            "cargo-deny is not installed: deny.toml's licences, sources and wildcards are \
             checked by the `policy` test in the tests step"
        );
    }

    // In the `ci` profile (Cargo.toml): release code with overflow checks and debug assertions
    // in the workspace's crates. The main job and the wheel are built in it too, with the same
    // features (dspk-cli's and dspk-py's manifests say how), so CubeCL and wgpu compile twice in
    // all (checked for lints and docs, optimised once) and the main job compiles nothing.
    begin("tests");
    Cmd::cargo(ws)
        .args([
            "test",
            "--workspace",
            "--profile",
            CI_PROFILE,
            "--features",
            CI_FEATURES,
        ])
        .env(TEST_RUNTIMES_VAR, &test_runtimes)
        .run()?;

    // The runtime matrix (`cargo xtask test-backends`) is not repeated here: the workspace tests
    // above already ran every device test on the runtimes CI requires (wgpu and cpu) in one
    // build that also compiled cuda; test-backends builds each runtime alone, a cold CubeCL
    // build per runtime.
    begin("main job smoke run (README: dspk scan)");
    Cmd::cargo(ws)
        .args([
            "run",
            "--profile",
            CI_PROFILE,
            "-p",
            "dspk-cli",
            "--features",
            CI_FEATURES,
            "--",
            "scan",
        ])
        .run()?;

    begin("the Python package (wheel, fresh venv, pytest)");
    crate::python::test_package(ws, &py_tools, &test_runtimes)?;

    eprintln!("{}", crate::disk::report(ws));
    eprintln!("\nci: all {steps} steps passed");
    Ok(())
}

/// The runtimes `cargo check` builds alone: wgpu, the default build (cuda and cpu are built
/// together with it by every other step).
const CHECKED_RUNTIMES: [Runtime; 1] = [Runtime::Wgpu];

/// The feature arguments of each checked combination, after `--no-default-features`: none
/// (no runtime at all), then each of [`CHECKED_RUNTIMES`] alone.
fn feature_combinations() -> Vec<Vec<&'static str>> {
    std::iter::once(Vec::new())
        .chain(
            CHECKED_RUNTIMES
                .iter()
                .map(|runtime| vec!["--features", runtime.name()]),
        )
        .collect()
}

/// Every package of the workspace build `cargo check --workspace --all-targets <args>` makes,
/// with its features less `default` (a name that turns on others, compiling nothing itself),
/// as `cargo tree` resolves them: equal sets check the same code.
fn resolved_features(ws: &Workspace, args: &[&str]) -> Result<BTreeSet<String>, Error> {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(&ws.root)
        .args([
            "tree",
            "--workspace",
            "--prefix",
            "none",
            "--format",
            "{p}|{f}",
        ])
        .args(args)
        .output()
        .map_err(|e| Error::Failed(format!("cannot run cargo tree: {e}")))?;
    if !out.status.success() {
        return Err(Error::Failed(format!(
            "cargo tree {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_once('|'))
        .map(|(package, features)| {
            let features: Vec<&str> = features
                .split([' ', ','])
                .take_while(|f| !f.starts_with('('))
                .filter(|f| !f.is_empty() && *f != "default")
                .collect();
            format!("{package}|{}", features.join(","))
        })
        .collect())
}

/// `DSPK_TEST_RUNTIMES` as given, else `wgpu`: CI's runtime, required wherever `ci` runs, so
/// that the README's test command runs every device test CI runs or fails saying why.
fn test_runtimes() -> OsString {
    env::var_os(TEST_RUNTIMES_VAR).unwrap_or_else(|| CI_TEST_RUNTIMES.into())
}

/// Whether this runs in CI (`CI` set, not `false` or `0`).
fn in_ci() -> bool {
    env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The caller's `RUSTDOCFLAGS` with `-D warnings` added.
fn rustdocflags_denying_warnings() -> String {
    match env::var("RUSTDOCFLAGS") {
        Ok(flags) if !flags.trim().is_empty() => format!("{flags} -D warnings"),
        _ => "-D warnings".to_owned(),
    }
}
