//! `cargo xtask`: the workspace's automation — what CI runs, and the per-runtime test matrix.
//!
//! Not a build system: every step is a plain `cargo` command, printed before it runs, so any
//! step can be repeated by hand. Run `cargo xtask --help` for the subcommands.

mod backends;
mod ci;
mod cmd;
mod disk;
mod llvm;
mod prereq;
mod python;

use std::fmt;
use std::process::ExitCode;

use backends::{Options, parse_runtimes};
use cmd::Workspace;

const HELP: &str = "\
cargo xtask: automation for the dspk workspace

USAGE:
    cargo xtask <COMMAND> [OPTIONS]

COMMANDS:
    ci              What CI runs, in order, stopping at the first failure:
                      set-up: python3-venv, Slurm (munged, slurmctld, slurmd, sbatch…),
                        Chromium and, when DSPK_TEST_RUNTIMES lists wgpu, a Vulkan loader and
                        driver must be installed (one line says which apt-get packages
                        otherwise: they need root); the Python tools venv ($DSPK_PY_TOOLS,
                        default target/py-tools) is made where it has no maturin: python3 -m
                        venv, pip install maturin and the test packages; then `llvm` below
                    With F = --features dspk-device/cpu,dspk-device/cuda (one build of all
                    three runtimes):
                      cargo fmt --all --check
                      cargo clippy --workspace --all-targets --profile ci F -- -D warnings
                      cargo check --workspace --all-targets --profile ci --no-default-features
                      cargo check --workspace --all-targets --profile ci --no-default-features
                        --features wgpu   (the default build)
                      RUSTDOCFLAGS='-D warnings' cargo doc --workspace --no-deps --profile ci F
                      cargo deny check licenses bans sources   (skipped if not installed)
                      cargo test --workspace --profile ci F   (DSPK_TEST_RUNTIMES=wgpu,cpu
                                                unless DSPK_TEST_RUNTIMES is set)
                      cargo run --profile ci -p dspk-cli F -- scan
                      the Python package: maturin build --profile ci F, the wheel installed
                        into a fresh venv (target/py-wheel-test) with pytest, spikeinterface,
                        neo, tqdm, dask, distributed, dask-jobqueue, then python -m pytest -q
                        python/tests there, without cargo or rustc on PATH; a skipped test
                        fails the run
                    The `ci` profile (Cargo.toml) is release with overflow checks and debug
                    assertions in the workspace's own crates.
    llvm            Put the LLVM that CubeCL's cuda and cpu runtimes link where their build
                    looks for it (${XDG_DATA_HOME:-~/.local/share}/tracel/tracel-llvm-<the
                    tracel-llvm-bundler version in Cargo.lock>), from PyPI's mlc-llvm-static
                    wheels (python3 >= 3.10 with pip; 92 MB downloaded, 396 MB unpacked);
                    does nothing where it is in place. Without it their build downloads an
                    LLVM bundle from GitHub.
    test-backends   For each runtime, build and test dspk-tests with only that runtime's
                    feature, in its own target dir (wgpu reuses the main one when that is
                    the default build), with DSPK_TEST_RUNTIMES=<runtime>; print a
                    PASS / FAIL / SKIP table.
        --backends <LIST>   runtimes to test, comma-separated [default: wgpu,cuda,hip,cpu]
        --require <LIST>    runtimes whose SKIP fails the run (a FAIL always does)
    help            Print this help (also -h, --help)

LISTS:
    Runtime names wgpu, cuda, hip, cpu, comma-separated, or `all`.

EXIT STATUS:
    0 success, 1 a step failed, 2 bad usage.

NOTES:
    CubeCL 0.11 builds its cuda, hip and cpu runtimes with a prebuilt LLVM; test-backends runs
    `llvm` first. hip also links LLVM's LLD, which that LLVM lacks: test-backends reports it
    as SKIP without building it.
";

/// Why xtask stops.
#[derive(Debug)]
pub enum Error {
    /// The command line was wrong; help follows the message.
    Usage(String),
    /// A step failed.
    Failed(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Usage(message) | Self::Failed(message) => f.write_str(message),
        }
    }
}

/// A parsed command line.
#[derive(Debug, PartialEq, Eq)]
enum Task {
    Help,
    Ci,
    Llvm,
    TestBackends(Options),
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse(&args).and_then(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::Usage(message)) => {
            eprintln!("error: {message}\n\n{HELP}");
            ExitCode::from(2)
        }
        Err(Error::Failed(message)) => {
            eprintln!("\nxtask failed: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(task: Task) -> Result<(), Error> {
    match task {
        Task::Help => {
            print!("{HELP}");
            Ok(())
        }
        Task::Ci => ci::ci(&Workspace::locate()?),
        Task::Llvm => llvm::install(&Workspace::locate()?),
        Task::TestBackends(options) => backends::test_backends(&Workspace::locate()?, &options),
    }
}

fn parse(args: &[String]) -> Result<Task, Error> {
    let Some((command, rest)) = args.split_first() else {
        return Err(Error::Usage("no command given".to_owned()));
    };
    if rest.iter().any(|a| a == "-h" || a == "--help") {
        return Ok(Task::Help);
    }
    match command.as_str() {
        "-h" | "--help" | "help" => Ok(Task::Help),
        "ci" => match rest.first() {
            Some(extra) => Err(Error::Usage(format!("`ci` takes no argument `{extra}`"))),
            None => Ok(Task::Ci),
        },
        "llvm" => match rest.first() {
            Some(extra) => Err(Error::Usage(format!("`llvm` takes no argument `{extra}`"))),
            None => Ok(Task::Llvm),
        },
        "test-backends" => parse_test_backends(rest).map(Task::TestBackends),
        other => Err(Error::Usage(format!("unknown command `{other}`"))),
    }
}

fn parse_test_backends(args: &[String]) -> Result<Options, Error> {
    let mut options = Options::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag, Some(value.to_owned())),
            None => (arg.as_str(), None),
        };
        let target = match flag {
            "--backends" => &mut options.backends,
            "--require" => &mut options.require,
            _ => return Err(Error::Usage(format!("unknown option `{arg}`"))),
        };
        let value = match inline {
            Some(value) => value,
            None => args
                .next()
                .cloned()
                .ok_or_else(|| Error::Usage(format!("`{flag}` needs a runtime list")))?,
        };
        *target = parse_runtimes(&value)?;
    }
    options.validate()?;
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use backends::Runtime;

    fn parse_line(line: &str) -> Result<Task, Error> {
        let args: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        parse(&args)
    }

    #[test]
    fn commands_and_help_parse() {
        assert_eq!(parse_line("ci").unwrap(), Task::Ci);
        assert_eq!(parse_line("llvm").unwrap(), Task::Llvm);
        assert!(matches!(parse_line("llvm 23"), Err(Error::Usage(_))));
        assert_eq!(parse_line("--help").unwrap(), Task::Help);
        assert_eq!(parse_line("help").unwrap(), Task::Help);
        assert_eq!(parse_line("test-backends -h").unwrap(), Task::Help);
        assert_eq!(
            parse_line("test-backends").unwrap(),
            Task::TestBackends(Options::default())
        );
        assert!(matches!(parse_line(""), Err(Error::Usage(_))));
        assert!(matches!(parse_line("bench"), Err(Error::Usage(_))));
        assert!(matches!(parse_line("ci --fast"), Err(Error::Usage(_))));
    }

    #[test]
    fn test_backends_options_parse_in_both_spellings() {
        let expected = Options {
            backends: vec![Runtime::Wgpu, Runtime::Cpu],
            require: vec![Runtime::Wgpu],
        };
        assert_eq!(
            parse_line("test-backends --backends wgpu,cpu --require wgpu").unwrap(),
            Task::TestBackends(expected)
        );
        let Task::TestBackends(options) =
            parse_line("test-backends --require=cuda --backends=cuda").unwrap()
        else {
            panic!("expected test-backends");
        };
        assert_eq!(options.require, [Runtime::Cuda]);
        assert!(matches!(
            parse_line("test-backends --require"),
            Err(Error::Usage(_))
        ));
        assert!(matches!(
            parse_line("test-backends --backends wgpu --require cuda"),
            Err(Error::Usage(_))
        ));
        assert!(matches!(
            parse_line("test-backends --fast"),
            Err(Error::Usage(_))
        ));
    }
}
