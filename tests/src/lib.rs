//! Shared helpers for the integration tests: one test body on every runtime, seeded randomness,
//! and child processes of the `dspk-probe` binary.
//!
//! # Running a test on every runtime
//!
//! ```no_run
//! use dspk_tests::for_each_runtime;
//!
//! #[test]
//! fn adds() {
//!     for_each_runtime("adds", |target, client| {
//!         // … launch on `client`, compare with a host reference …
//!         let _ = (target, client);
//!     });
//! }
//! ```
//!
//! [`for_each_runtime`] runs the body once per runtime of `ComputeTarget::for_tests()` (the
//! compiled-in runtimes, limited by `DSPK_TEST_RUNTIMES`). A runtime without a usable device
//! prints `SKIP <test> on <runtime>: <reason>` on the real stderr (visible even when the test
//! harness captures output), unless `DSPK_TEST_RUNTIMES` names it: then it is a failure. A body
//! that panics on one runtime does not stop the others; the test then fails naming every
//! runtime that failed.

use std::io::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{SystemTime, UNIX_EPOCH};

use cubecl::client::Client;
use dspk_device::TargetExt as _;
use dspk_types::ComputeTarget;
use rand::SeedableRng as _;
use rand::rngs::StdRng;

/// The environment variable that fixes the seed of [`test_rng`] (a decimal `u64`).
pub const SEED_ENV: &str = "DSPK_TEST_SEED";

/// The environment variable naming the `dspk-probe` binary to run as a child process (default:
/// the one Cargo built next to the tests, else `dspk-probe` on `PATH`).
pub const PROBE_ENV: &str = "DSPK_PROBE";

/// What [`for_each_runtime`] did on each runtime.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuntimeReport {
    /// The runtimes the body ran on (and passed).
    pub ran: Vec<ComputeTarget>,
    /// The runtimes skipped for want of a device, with the reason.
    pub skipped: Vec<(ComputeTarget, String)>,
}

/// Runs `body` with a client of every runtime of `ComputeTarget::for_tests()`.
///
/// A runtime whose device cannot be opened is skipped with a visible `SKIP` line, unless
/// `DSPK_TEST_RUNTIMES` names it (`ComputeTarget::required_by_tests`), which makes it a failure.
///
/// # Panics
/// After every runtime has been tried, when the body panicked on any of them or a required
/// runtime had no device; the message names the test and the runtimes. Also when
/// `DSPK_TEST_RUNTIMES` is invalid (see `ComputeTarget::for_tests`).
pub fn for_each_runtime(test: &str, body: impl Fn(ComputeTarget, &Client)) -> RuntimeReport {
    let mut report = RuntimeReport::default();
    let mut failures = Vec::new();
    for target in ComputeTarget::for_tests() {
        let client = match target.client() {
            Ok(client) => client,
            Err(e) if target.required_by_tests() => {
                failures.push(format!(
                    "{target}: no device although DSPK_TEST_RUNTIMES names it: {e}"
                ));
                continue;
            }
            Err(e) => {
                visible(&format!("SKIP {test} on {target}: {e}"));
                report.skipped.push((target, e.to_string()));
                continue;
            }
        };
        match catch_unwind(AssertUnwindSafe(|| body(target, &client))) {
            Ok(()) => report.ran.push(target),
            Err(payload) => failures.push(format!("{target}: {}", panic_message(&*payload))),
        }
    }
    assert!(
        failures.is_empty(),
        "{test} failed on {} runtime(s):\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
    report
}

/// A second device for a test of several devices: on wgpu, a second device on the adapter of
/// `target`'s default device ([`dspk_device::open_second`]); elsewhere (the cpu runtime, which
/// has one device; CUDA, which opens a GPU once, on a host of one GPU) the refusal is checked to
/// say why and `client` itself is returned, so that two pass devices share the one client (two
/// workers, each on a CubeCL stream of its own: the split of the windows is what such a test
/// checks).
///
/// # Panics
/// When wgpu's second device cannot be opened, or another runtime's refusal does not say why.
pub fn second_client(target: ComputeTarget, client: &Client) -> Client {
    let device = target.device().expect("the default device");
    match dspk_device::open_second(&device) {
        Ok((_, second)) => second,
        Err(e) if target != ComputeTarget::Wgpu => {
            let text = e.to_string();
            let why = match target {
                ComputeTarget::Cpu => "the cpu runtime has one device",
                _ => "only wgpu devices can be opened twice",
            };
            assert!(text.contains(why), "{target}: {text}");
            client.clone()
        }
        Err(e) => panic!("{target}: a second device on the adapter: {e}"),
    }
}

/// Writes a line to the process's real stderr, past the test harness's capture.
pub fn visible(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// The text of a panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-text panic".to_string())
}

/// A seeded random generator for the test `name`, and its seed.
///
/// The seed is `DSPK_TEST_SEED` when set, else drawn from the clock and the name. It is
/// printed (`eprintln!`, so the harness shows it with a failing test's output) together with
/// how to repeat the run.
///
/// # Panics
/// When `DSPK_TEST_SEED` is set but is not a decimal `u64`.
pub fn test_rng(name: &str) -> (u64, StdRng) {
    let seed = match std::env::var(SEED_ENV) {
        Ok(text) => text
            .trim()
            .parse::<u64>()
            .unwrap_or_else(|e| panic!("{SEED_ENV}={text:?} is not a u64 seed: {e}")),
        Err(_) => clock_seed(name),
    };
    eprintln!("{name}: seed {seed} (repeat with {SEED_ENV}={seed})");
    (seed, StdRng::seed_from_u64(seed))
}

/// A seed from the clock, mixed with the name so that tests started together differ.
fn clock_seed(name: &str) -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    // FNV-1a of the name.
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    nanos ^ hash.rotate_left(17)
}

/// The `dspk-probe` binary: `DSPK_PROBE` when set, else `built` (the path Cargo gives
/// integration tests, when it exists), else `dspk-probe` found on `PATH`.
///
/// # Panics
/// When none of them exists.
pub fn probe_path(built: Option<&str>) -> PathBuf {
    if let Some(path) = std::env::var_os(PROBE_ENV) {
        return PathBuf::from(path);
    }
    if let Some(path) = built.map(Path::new).filter(|p| p.is_file()) {
        return path.to_path_buf();
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("dspk-probe"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("dspk-probe not found: build it (cargo build -p dspk-tests) or set {PROBE_ENV}")
        })
}

/// Runs `probe` with `args`, extra environment `envs` (a `None` value removes the variable)
/// and, when given, the working directory `cwd`; returns its output once it has ended.
///
/// # Panics
/// When the probe cannot be started.
pub fn run_probe(
    probe: &Path,
    args: &[&str],
    envs: &[(&str, Option<&str>)],
    cwd: Option<&Path>,
) -> Output {
    let mut command = Command::new(probe);
    command.args(args);
    for (key, value) in envs {
        match value {
            Some(v) => command.env(key, v),
            None => command.env_remove(key),
        };
    }
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", probe.display()))
}

/// A fresh, empty directory under the system's temporary directory, removed when dropped.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates `<tmp>/dspk-test-<name>-<pid>-<nanos>`.
    ///
    /// # Panics
    /// When the directory cannot be created.
    pub fn new(name: &str) -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path =
            std::env::temp_dir().join(format!("dspk-test-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
        TempDir(path)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The value of `key=value` on a line of `text` starting with `prefix`, e.g. the `open_ms` of
/// `s1 open_ms=12.5 …`.
pub fn field<'a>(text: &'a str, prefix: &str, key: &str) -> Option<&'a str> {
    let line = text.lines().find(|l| l.starts_with(prefix))?;
    line.split_whitespace()
        .filter_map(|w| w.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_found_by_line_and_key() {
        let text = "noise\ns1 open_ms=12.5 first_result_ms=3\nresult ok values=10\n";
        assert_eq!(field(text, "s1", "open_ms"), Some("12.5"));
        assert_eq!(field(text, "s1", "first_result_ms"), Some("3"));
        assert_eq!(field(text, "result", "values"), Some("10"));
        assert_eq!(field(text, "s1", "missing"), None);
        assert_eq!(field(text, "s2", "open_ms"), None);
    }

    #[test]
    fn clock_seeds_differ_by_name() {
        assert_ne!(clock_seed("a"), clock_seed("b"));
    }
}
