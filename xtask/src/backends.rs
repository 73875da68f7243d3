//! `cargo xtask test-backends`: build and test dspk-tests once per runtime, with only that
//! runtime's feature, and report PASS / FAIL / SKIP for each.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::Error;
use crate::cmd::{Cmd, Workspace};

/// The package whose features select the runtime under test (`wgpu`, `cuda`, `hip`, `cpu`,
/// each forwarded 1:1 to dspk-device).
const TEST_PACKAGE: &str = "dspk-tests";

/// The reason reported for a runtime whose build needs CubeCL's downloaded LLVM bundle (where
/// `cargo xtask llvm`'s LLVM is not in place and the bundler's own download fails).
pub const LLVM_BUNDLE_REASON: &str =
    "cannot build here: CubeCL's LLVM bundle could not be downloaded";

/// Why hip is not built: cubecl-llvm links LLVM's LLD for it (`lldELF`, `lldCommon`), which
/// the PyPI LLVM `cargo xtask llvm` installs does not ship; and it needs ROCm to run.
pub const HIP_REASON: &str = "not built: CubeCL's hip runtime links LLVM's LLD, which the PyPI \
     LLVM of `cargo xtask llvm` lacks";

/// A CubeCL runtime, as named by the feature that turns it on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// wgpu (Vulkan, Metal, DX12; lavapipe in CI).
    Wgpu,
    /// CUDA.
    Cuda,
    /// HIP (ROCm).
    Hip,
    /// The CPU runtime (MLIR/LLVM).
    Cpu,
}

impl Runtime {
    /// Every runtime, in the order they are tested.
    pub const ALL: [Self; 4] = [Self::Wgpu, Self::Cuda, Self::Hip, Self::Cpu];

    /// The feature name, also the name `DSPK_TEST_RUNTIMES` uses.
    pub fn name(self) -> &'static str {
        match self {
            Self::Wgpu => "wgpu",
            Self::Cuda => "cuda",
            Self::Hip => "hip",
            Self::Cpu => "cpu",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|rt| rt.name().eq_ignore_ascii_case(name.trim()))
    }
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Parses a comma-separated runtime list (`wgpu,cuda`, case-insensitive, `all` for every one).
pub fn parse_runtimes(list: &str) -> Result<Vec<Runtime>, Error> {
    if list.trim().eq_ignore_ascii_case("all") {
        return Ok(Runtime::ALL.to_vec());
    }
    let mut runtimes = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let runtime = Runtime::parse(name).ok_or_else(|| {
            let valid: Vec<_> = Runtime::ALL.iter().map(|r| r.name()).collect();
            Error::Usage(format!(
                "unknown runtime `{name}`; valid: {}, or all",
                valid.join(", ")
            ))
        })?;
        if !runtimes.contains(&runtime) {
            runtimes.push(runtime);
        }
    }
    if runtimes.is_empty() {
        return Err(Error::Usage(format!("empty runtime list `{list}`")));
    }
    Ok(runtimes)
}

/// What to test and what must not be skipped.
#[derive(Debug, PartialEq, Eq)]
pub struct Options {
    /// Runtimes to test, in order.
    pub backends: Vec<Runtime>,
    /// Runtimes whose SKIP fails the run (a FAIL always does).
    pub require: Vec<Runtime>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            backends: Runtime::ALL.to_vec(),
            require: Vec::new(),
        }
    }
}

impl Options {
    /// Checks that every required runtime is also tested.
    pub fn validate(&self) -> Result<(), Error> {
        match self.require.iter().find(|rt| !self.backends.contains(rt)) {
            Some(rt) => Err(Error::Usage(format!(
                "--require names `{rt}`, which --backends leaves out"
            ))),
            None => Ok(()),
        }
    }
}

/// How one runtime fared.
enum Outcome {
    Pass,
    Fail(String),
    Skip { reason: String, evidence: String },
}

struct Row {
    runtime: Runtime,
    outcome: Outcome,
    elapsed: Duration,
    target_dir: PathBuf,
    log: Option<PathBuf>,
}

/// Runs the matrix, prints the table, and fails on any FAIL or any SKIP of a required runtime.
pub fn test_backends(ws: &Workspace, options: &Options) -> Result<(), Error> {
    options.validate()?;
    if options.backends.iter().any(|&r| r != Runtime::Wgpu) {
        crate::llvm::install(ws)?;
    }
    let mut rows = Vec::new();
    for &runtime in &options.backends {
        eprintln!("\n==> test-backends: {runtime}");
        let started = Instant::now();
        let target_dir = target_dir_for(ws, runtime);
        let (outcome, log) = if runtime == Runtime::Hip {
            let skip = Outcome::Skip {
                reason: HIP_REASON.to_owned(),
                evidence: "cubecl-llvm 0.11.3's build.rs links lldELF and lldCommon for hip"
                    .to_owned(),
            };
            (skip, None)
        } else {
            test_one(ws, runtime, &target_dir)?
        };
        rows.push(Row {
            runtime,
            outcome,
            elapsed: started.elapsed(),
            target_dir,
            log,
        });
    }
    let failures = print_table(ws, &rows, &options.require);
    if failures.is_empty() {
        Ok(())
    } else {
        Err(Error::Failed(format!(
            "test-backends: {}",
            failures.join("; ")
        )))
    }
}

/// Where `runtime` builds. wgpu alone reuses the main target dir when dspk-tests' default
/// features are exactly `["wgpu"]`: then `--no-default-features --features wgpu` resolves
/// exactly as the default build, and a cold cubecl + wgpu build (~6 minutes on 2 cores) is
/// not paid twice. Every other case gets `<target>/backend-<runtime>`, so a runtime's
/// feature set never invalidates another's artifacts.
fn target_dir_for(ws: &Workspace, runtime: Runtime) -> PathBuf {
    let manifest = ws.root.join("tests").join("Cargo.toml");
    let defaults = fs::read_to_string(&manifest)
        .ok()
        .and_then(|text| default_features(&text));
    if runtime == Runtime::Wgpu && defaults.is_some_and(|d| d == [runtime.name()]) {
        ws.target_dir.clone()
    } else {
        ws.target_dir.join(format!("backend-{runtime}"))
    }
}

/// The `default` list of a manifest's `[features]` table, when written on one line (as the
/// workspace writes it); `None` for anything this small reader does not understand, which
/// makes the caller take the safe choice, a separate target dir.
fn default_features(manifest: &str) -> Option<Vec<String>> {
    let mut in_features = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_features = line == "[features]";
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if !in_features || key.trim() != "default" {
            continue;
        }
        let inner = value.trim().strip_prefix('[')?.strip_suffix(']')?;
        return inner
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| {
                item.strip_prefix('"')
                    .and_then(|i| i.strip_suffix('"'))
                    .map(str::to_owned)
            })
            .collect();
    }
    // No `default` key: no default features.
    Some(Vec::new())
}

fn test_one(
    ws: &Workspace,
    runtime: Runtime,
    target_dir: &Path,
) -> Result<(Outcome, Option<PathBuf>), Error> {
    // `cargo <subcommand…> -p dspk-tests --no-default-features --features <runtime>`.
    let cargo = |subcommand: &[&str]| {
        Cmd::cargo(ws)
            .args(subcommand)
            .args(["-p", TEST_PACKAGE, "--no-default-features", "--features"])
            .args([runtime.name()])
            .env("CARGO_TARGET_DIR", target_dir)
            // Also set while building, so that the build and the run see one environment
            // and the run never rebuilds; and a listed runtime without a device is a failure.
            .env("DSPK_TEST_RUNTIMES", runtime.name())
    };

    let log_path = ws
        .target_dir
        .join("xtask-logs")
        .join(format!("backend-{runtime}.log"));
    let mut log = String::new();

    // Probe, then build, before testing: a build failure is told apart from a test failure,
    // and a runtime that cannot be built on this machine shows there. The probe is `cargo
    // check`: build scripts (the LLVM bundle download among them) run as in a build, while
    // the normal dependencies skip code generation. Build dependencies still compile in full,
    // so the cuda/hip/cpu probe stays the bulk of this run's time (measured: ~14 CPU-minutes
    // each from a cold target dir).
    let steps = [
        ("probe (cargo check) failed", cargo(&["check", "--tests"])),
        ("build failed", cargo(&["test", "--no-run"])),
    ];
    for (failure, cmd) in steps {
        let step = cmd.run_captured()?;
        log.push_str(&step.output);
        if !step.success {
            let log_path = save_log(&log_path, &log);
            let outcome = match llvm_bundle_evidence(&step.output) {
                Some(evidence) => Outcome::Skip {
                    reason: LLVM_BUNDLE_REASON.to_owned(),
                    evidence,
                },
                None => Outcome::Fail(failure.to_owned()),
            };
            return Ok((outcome, log_path));
        }
    }

    // Built: a runtime whose driver this machine lacks cannot be tested, and says so.
    if let Some(reason) = missing_driver(runtime) {
        let log_path = save_log(&log_path, &log);
        let skip = Outcome::Skip {
            reason,
            evidence: format!("{runtime} built; its tests need the driver to run"),
        };
        return Ok((skip, log_path));
    }

    let test = cargo(&["test"]).run_captured()?;
    log.push_str(&test.output);
    let log_path = save_log(&log_path, &log);
    let outcome = if test.success {
        Outcome::Pass
    } else {
        Outcome::Fail("tests failed".to_owned())
    };
    Ok((outcome, log_path))
}

/// Why `runtime`'s tests cannot run on this machine (the CUDA driver, `libcuda.so.1`, is not
/// installed), `None` when they can.
fn missing_driver(runtime: Runtime) -> Option<String> {
    if runtime != Runtime::Cuda {
        return None;
    }
    let listed = std::process::Command::new("ldconfig")
        .arg("-p")
        .output()
        .or_else(|_| {
            std::process::Command::new("/sbin/ldconfig")
                .arg("-p")
                .output()
        })
        .map(|out| String::from_utf8_lossy(&out.stdout).contains("libcuda.so.1"));
    match listed {
        Ok(false) => Some("built, not tested: no CUDA driver (libcuda.so.1) here".to_owned()),
        _ => None,
    }
}

/// Keeps a runtime's output for later reading; losing it is worth a warning, not a failure.
fn save_log(path: &Path, text: &str) -> Option<PathBuf> {
    let written = path
        .parent()
        .map_or(Ok(()), fs::create_dir_all)
        .and_then(|()| fs::write(path, text));
    match written {
        Ok(()) => Some(path.to_path_buf()),
        Err(e) => {
            eprintln!("warning: cannot write {}: {e}", path.display());
            None
        }
    }
}

/// Cargo's line that opens the report of a failed build script of CubeCL's LLVM bundler.
const BUNDLER_BUILD_SCRIPT_FAILED: &str =
    "failed to run custom build command for `tracel-llvm-bundler ";

/// The line of a failed build's output showing that it failed because CubeCL's LLVM bundle
/// could not be downloaded, or `None` when it failed for another reason.
///
/// CubeCL 0.11's cuda, hip and cpu runtimes depend on `cubecl-llvm`, whose build dependency
/// `tracel-llvm-bundler` fetches a prebuilt LLVM in its build script. The rule: cargo reports
/// ``failed to run custom build command for `tracel-llvm-bundler …` ``, and inside that report
/// (up to cargo's next `error`/`warning` line) one of these shows the download failing:
/// - the build script panicked in its `build.rs` with ``called `Result::unwrap()` on an `Err`
///   value: …`` (in bundler 23.1.0-4 the one `unwrap()` of build.rs is the HTTP request,
///   `ureq::get(url).call().unwrap()`, line 66; a name-lookup failure reads `Io(Custom { …
///   "failed to lookup address information: …" })`, an HTTP error `StatusCode(404)`);
/// - the backtrace frame `download_to_path` (when `RUST_BACKTRACE` is set);
/// - the script's own error for a download cut short (`downloading https://…`,
///   `re-downloading https://…`) or corrupted (`Archive checksum mismatch after download`).
///
/// Any other failure of that build script (a compile error, a full disk while extracting)
/// and any other build failure stays a FAIL.
pub fn llvm_bundle_evidence(output: &str) -> Option<String> {
    let start = output.find(BUNDLER_BUILD_SCRIPT_FAILED)?;
    let report: Vec<&str> = output[start..]
        .lines()
        .skip(1)
        .take_while(|line| !(line.starts_with("error") || line.starts_with("warning")))
        .map(str::trim)
        .collect();

    let panicked_in_build_rs = |line: &str| {
        line.contains("panicked at") && line.contains("tracel-llvm-bundler") && {
            let location = line.replace('\\', "/");
            location.contains("/build.rs:")
        }
    };
    let unwrap_message = report.windows(2).find_map(|pair| {
        (panicked_in_build_rs(pair[0])
            && pair[1].starts_with("called `Result::unwrap()` on an `Err` value"))
        .then_some(pair[1])
    });
    let other_marker = || {
        report.iter().copied().find(|line| {
            line.contains("download_to_path")
                || line.starts_with("downloading http")
                || line.starts_with("re-downloading http")
                || line.contains("checksum mismatch after download")
                || line.contains("checksum mismatch after re-download")
        })
    };
    unwrap_message.or_else(other_marker).map(str::to_owned)
}

/// Prints the table; returns the reasons the run fails (empty: it passes).
fn print_table(ws: &Workspace, rows: &[Row], require: &[Runtime]) -> Vec<String> {
    let mut failures = Vec::new();
    let mut table = vec![[
        "runtime".to_owned(),
        "result".to_owned(),
        "time".to_owned(),
        "detail".to_owned(),
    ]];
    let mut notes = Vec::new();
    for row in rows {
        let log = row
            .log
            .as_deref()
            .map(|p| format!(" (log: {})", ws.show(p)))
            .unwrap_or_default();
        let (result, detail) = match &row.outcome {
            Outcome::Pass => (
                "PASS".to_owned(),
                format!("target dir {}", ws.show(&row.target_dir)),
            ),
            Outcome::Fail(what) => {
                failures.push(format!("{} {what}", row.runtime));
                ("FAIL".to_owned(), format!("{what}{log}"))
            }
            Outcome::Skip { reason, evidence } => {
                notes.push(format!(
                    "{}: the build output said: {evidence}",
                    row.runtime
                ));
                if require.contains(&row.runtime) {
                    failures.push(format!("{} is required but was skipped", row.runtime));
                    ("SKIP (required)".to_owned(), format!("{reason}{log}"))
                } else {
                    ("SKIP".to_owned(), format!("{reason}{log}"))
                }
            }
        };
        table.push([
            row.runtime.to_string(),
            result,
            format!("{:.1} s", row.elapsed.as_secs_f64()),
            detail,
        ]);
    }

    let widths: Vec<usize> = (0..4)
        .map(|c| {
            table
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String; 4]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, &w)| format!("{cell:<w$}"))
            .collect();
        format!("| {} |", padded.join(" | "))
    };
    println!("\ntest-backends:");
    println!("{}", line(&table[0]));
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    println!("|-{}-|", rule.join("-|-"));
    for cells in &table[1..] {
        println!("{}", line(cells));
    }
    for note in notes {
        println!("{note}");
    }
    if failures.is_empty() {
        println!("test-backends: ok");
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_lists_parse_trim_dedup_and_refuse_unknown_names() {
        assert_eq!(
            parse_runtimes(" WGPU, cuda,wgpu ").unwrap(),
            [Runtime::Wgpu, Runtime::Cuda]
        );
        assert_eq!(parse_runtimes("all").unwrap(), Runtime::ALL);
        let Err(Error::Usage(message)) = parse_runtimes("wgpu,metal") else {
            panic!("an unknown runtime must be a usage error");
        };
        assert!(
            message.contains("metal") && message.contains("cpu"),
            "{message}"
        );
        assert!(matches!(parse_runtimes(" , "), Err(Error::Usage(_))));
    }

    #[test]
    fn a_required_runtime_must_be_tested() {
        let options = Options {
            backends: vec![Runtime::Wgpu],
            require: vec![Runtime::Cuda],
        };
        assert!(matches!(options.validate(), Err(Error::Usage(_))));
        assert!(Options::default().validate().is_ok());
    }

    /// Cargo's report of the bundler's build script, as seen building dspk-device with
    /// `--features cuda` on a machine that reaches crates.io but not GitHub.
    const OBSERVED: &str = include_str!("../testdata/llvm-bundle-download-failure.txt");

    #[test]
    fn the_observed_bundle_download_failure_is_detected() {
        let evidence = llvm_bundle_evidence(OBSERVED).expect("the observed failure");
        assert!(
            evidence.starts_with("called `Result::unwrap()` on an `Err` value: Io(")
                && evidence.contains("failed to lookup address information"),
            "{evidence}"
        );
        // Without RUST_BACKTRACE there is no backtrace; the panic message alone suffices.
        let no_backtrace: String = OBSERVED
            .lines()
            .take_while(|l| !l.contains("stack backtrace"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(llvm_bundle_evidence(&no_backtrace), Some(evidence));
        // Inside a longer build log, with cargo's closing lines after it.
        let log =
            format!("   Compiling ring v0.17.14\n{OBSERVED}error: could not compile `wide`\n");
        assert!(llvm_bundle_evidence(&log).is_some());
    }

    #[test]
    fn the_other_download_failures_of_the_bundler_are_detected() {
        let report = |body: &str| {
            format!(
                "error: {BUNDLER_BUILD_SCRIPT_FAILED}v23.1.0-4`\n\nCaused by:\n  process didn't \
                 exit successfully: `build-script-build` (exit status: 1)\n  --- stderr\n{body}"
            )
        };
        for body in [
            "  downloading https://github.com/tracel-ai/tracel-llvm/releases/download/x.tar.xz\n",
            "  Archive checksum mismatch after download.\n    expected: ab\n    got:      cd\n",
            "  thread 'main' panicked at C:\\cargo\\tracel-llvm-bundler-23.1.0-4\\build.rs:66:37:\n  \
             called `Result::unwrap()` on an `Err` value: StatusCode(404)\n",
        ] {
            assert!(llvm_bundle_evidence(&report(body)).is_some(), "{body}");
        }
    }

    #[test]
    fn other_build_failures_are_not_mistaken_for_the_bundle_download() {
        // The bundler's build script failing for another reason.
        let compile_error = format!(
            "error: {BUNDLER_BUILD_SCRIPT_FAILED}v23.1.0-4`\n\nCaused by:\n  --- stderr\n  \
             extracting tar.xz bundle should succeed\n"
        );
        assert_eq!(llvm_bundle_evidence(&compile_error), None);
        // Another crate's build script, and a plain compile error, both mentioning downloads.
        let other = "error: failed to run custom build command for `openssl-sys v0.9.1`\n\
                     --- stderr\n  downloading https://example.org/openssl.tar.gz\n\
                     error[E0425]: cannot find value `download_to_path` in this scope\n";
        assert_eq!(llvm_bundle_evidence(other), None);
        // The bundler's report ends at cargo's next message; what follows is not part of it.
        let later = format!(
            "error: {BUNDLER_BUILD_SCRIPT_FAILED}v23.1.0-4`\n  --- stderr\n  no space left\n\
             warning: build failed, waiting for other jobs to finish...\n\
             error: failed to run custom build command for `x v1`\n  downloading https://x\n"
        );
        assert_eq!(llvm_bundle_evidence(&later), None);
    }

    #[test]
    fn default_features_are_read_from_the_features_table_only() {
        let manifest = r#"
[package]
default = ["not-this"]

[features]
default = ["wgpu"]
## Test the CUDA runtime.
cuda = ["dspk-device/cuda"]
"#;
        assert_eq!(default_features(manifest).unwrap(), ["wgpu"]);
        assert_eq!(
            default_features("[features]\ndefault = []\n").unwrap(),
            Vec::<String>::new()
        );
        assert_eq!(
            default_features("[features]\ndefault = [\"wgpu\", \"cpu\"]\n").unwrap(),
            ["wgpu", "cpu"]
        );
        // Multi-line arrays are not understood: the caller then takes a separate target dir.
        assert_eq!(
            default_features("[features]\ndefault = [\n  \"wgpu\",\n]\n"),
            None
        );
    }
}
