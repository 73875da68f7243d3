//! `cargo xtask ci`'s Python step: the wheel maturin builds from the clone, installed into a
//! fresh venv, tested there by pytest (`python/tests`) with no Rust toolchain on `PATH`.

use std::env;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::Error;
use crate::ci::{CI_FEATURES, CI_PROFILE};
use crate::cmd::{Cmd, Workspace};

/// The venv of Python tools (maturin), `<target>/py-tools` unless this names another.
const TOOLS_VAR: &str = "DSPK_PY_TOOLS";

/// The maturin the tools venv installs: what `pyproject.toml`'s `[build-system]` asks for.
const MATURIN: &str = "maturin>=1.9.4,<2";

/// What the test venv installs besides the wheel: the references the tests compare with, and
/// the engines the cluster tests run on (`dask.distributed`'s LocalCluster, dask-jobqueue's
/// SLURMCluster on the single-node Slurm of `tests/cluster/slurm.sh`). The one list of them:
/// `.ci/run` installs none itself.
const TEST_PACKAGES: [&str; 15] = [
    "pytest",
    "scipy",
    "spikeinterface",
    // SpikeInterface's locally_exclusive peak detector (python/tests/test_detect.py).
    "numba",
    "neo",
    "tqdm",
    "dask",
    "distributed",
    "dask-jobqueue",
    // NWB: files written by pynwb in python/tests/test_nwb.py, and h5py to edit them.
    "pynwb",
    "h5py",
    // The `ibl` preset's oracle, `ibldsp.voltage.destripe` (python/tests/test_presets_ibl.py);
    // pinned: the preset's docs cite this version's code.
    "ibl-neuropixel==1.14.0",
    // The .cbin writer the reader is tested against (python/tests/test_cbin.py).
    "mtscomp",
    // The reports opened in Debian's Chromium, and their screenshots read
    // (python/tests/test_report.py).
    "playwright",
    "pillow",
];

/// The venv of Python tools: `$DSPK_PY_TOOLS`, else `<target>/py-tools`.
fn tools_venv(ws: &Workspace) -> PathBuf {
    env::var_os(TOOLS_VAR)
        .filter(|v| !v.is_empty())
        .map_or_else(|| ws.target_dir.join("py-tools"), PathBuf::from)
}

/// Makes the tools venv where it has no maturin: `python3 -m venv`, then maturin and the test
/// packages (installed there too, so that pip's cache serves the fresh test venv). Returns the
/// venv. python3 with its `venv` module is checked beforehand (`prereq`).
pub fn set_up_tools(ws: &Workspace) -> Result<PathBuf, Error> {
    let tools = tools_venv(ws);
    if tools.join("bin").join("maturin").is_file() {
        eprintln!("Python tools: {} has maturin", ws.show(&tools));
        return Ok(tools);
    }
    Cmd::program(ws, "python3")
        .args([OsStr::new("-m"), "venv".as_ref(), tools.as_os_str()])
        .run()?;
    Cmd::program(ws, tools.join("bin").join("pip"))
        .args(["install", "--quiet", "--disable-pip-version-check", MATURIN])
        .args(TEST_PACKAGES)
        .run()?;
    Ok(tools)
}

/// Builds the wheel with the tools venv's maturin, installs it into a fresh venv and runs
/// pytest there.
pub fn test_package(ws: &Workspace, tools: &Path, test_runtimes: &OsStr) -> Result<(), Error> {
    let maturin = tools.join("bin").join("maturin");
    let wheels = ws.target_dir.join("wheels");
    remove_old_wheels(&wheels)?;
    // The `ci` profile and features in the workspace's target dir: the CubeCL, wgpu and LLVM
    // the tests and the main job compiled are reused, and the native module has the same
    // checks and runtimes.
    Cmd::program(ws, &maturin)
        .args([
            OsStr::new("build"),
            "--profile".as_ref(),
            CI_PROFILE.as_ref(),
            "--features".as_ref(),
            CI_FEATURES.as_ref(),
            "--out".as_ref(),
            wheels.as_os_str(),
        ])
        .run()?;
    let wheel = built_wheel(&wheels)?;
    let venv = ws.target_dir.join("py-wheel-test");
    Cmd::program(ws, tools.join("bin").join("python"))
        .args([
            OsStr::new("-m"),
            "venv".as_ref(),
            "--clear".as_ref(),
            venv.as_os_str(),
        ])
        .run()?;
    let python = venv.join("bin").join("python");
    Cmd::program(ws, &python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args([wheel.as_os_str()])
        .args(TEST_PACKAGES)
        .run()?;
    Cmd::program(ws, &python)
        .args(["-m", "pytest", "-q", "python/tests"])
        .env("DSPK_WHEEL_TEST", "1")
        .env("DSPK_BIN", ws.target_dir.join(CI_PROFILE).join("dspk"))
        .env("PATH", path_without_rust())
        .env("DSPK_TEST_RUNTIMES", test_runtimes)
        .run()
}

/// Removes wheels of earlier runs, so that exactly one is installed.
fn remove_old_wheels(dir: &Path) -> Result<(), Error> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "whl") {
            std::fs::remove_file(&path)
                .map_err(|e| Error::Failed(format!("cannot remove {}: {e}", path.display())))?;
        }
    }
    Ok(())
}

/// The one wheel maturin wrote.
fn built_wheel(dir: &Path) -> Result<PathBuf, Error> {
    let wheels: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::Failed(format!("cannot read {}: {e}", dir.display())))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    match wheels.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(Error::Failed(format!(
            "expected one wheel in {}, found {}",
            dir.display(),
            wheels.len()
        ))),
    }
}

/// `PATH` without the directories that hold `cargo` or `rustc`: the installed wheel must work
/// without a Rust toolchain.
fn path_without_rust() -> OsString {
    let path = env::var_os("PATH").unwrap_or_default();
    let kept = env::split_paths(&path).filter(|dir| {
        !["cargo", "rustc"]
            .iter()
            .any(|tool| dir.join(tool).exists())
    });
    env::join_paths(kept).unwrap_or_default()
}
