//! `cargo xtask llvm`: puts the LLVM that CubeCL's `cuda` and `cpu` runtimes link where their
//! build looks for it, from PyPI, so that nothing is downloaded from GitHub at build time.
//!
//! CubeCL 0.11's `cubecl-cuda` and `cubecl-cpu` depend on `cubecl-llvm`, whose build
//! dependency `tracel-llvm-bundler` links LLVM statically from
//! `${XDG_DATA_HOME:-~/.local/share}/tracel/tracel-llvm-<bundler version>` and, unless that
//! folder holds the empty marker `.tracel-llvm-installed`, first downloads a bundle there from
//! GitHub. PyPI's `mlc-llvm-static` and `mlc-llvm-static-extra-targets` wheels hold the same
//! LLVM release as static, position-independent libraries (the X86 and NVPTX backends among
//! them), its headers, static zlib/zstd and a Python `llvm-config` (Python ≥ 3.10) that answers
//! the bundler's `--link-static` queries. This step downloads both wheels with pip, unpacks
//! their `mlc_llvm_static/static/` folders into that place and writes the marker.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::Error;
use crate::cmd::{Cmd, Workspace};

/// The crate whose version names the folder, as Cargo.lock spells it.
const BUNDLER: &str = "tracel-llvm-bundler";

/// The LLVM release (major.minor) the PyPI wheels below hold.
const WHEEL_LLVM: &str = "23.1";

/// The wheels, pinned: together, LLVM 23.1.1 with the X86 and NVPTX backends.
const WHEELS: [&str; 2] = [
    "mlc-llvm-static==23.1.1.post0",
    "mlc-llvm-static-extra-targets==23.1.1.post0",
];

/// The marker the bundler's build script looks for before downloading.
const MARKER: &str = ".tracel-llvm-installed";

/// Unpacks the `mlc_llvm_static/static/` part of each wheel given after the destination,
/// keeping the files' permission bits (`llvm-config` must stay executable).
const UNPACK: &str = r#"
import os, sys, zipfile
dest = sys.argv[1]
prefix = "mlc_llvm_static/static/"
count = 0
for wheel in sys.argv[2:]:
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            if not info.filename.startswith(prefix) or info.is_dir():
                continue
            target = os.path.join(dest, info.filename[len(prefix):])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with z.open(info) as src, open(target, "wb") as out:
                while True:
                    block = src.read(1 << 20)
                    if not block:
                        break
                    out.write(block)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(target, mode)
            count += 1
if count == 0:
    sys.exit("no file under " + prefix + " in " + ", ".join(sys.argv[2:]))
print(count)
"#;

/// Makes sure the LLVM is in place; idempotent (a second run only checks).
pub fn install(ws: &Workspace) -> Result<(), Error> {
    let lock = ws.root.join("Cargo.lock");
    let text = fs::read_to_string(&lock)
        .map_err(|e| Error::Failed(format!("cannot read {}: {e}", lock.display())))?;
    let version = bundler_version(&text).ok_or_else(|| {
        Error::Failed(format!(
            "{} names no `{BUNDLER}` package: the cuda and cpu runtimes' LLVM cannot be placed \
             (run `cargo fetch` to complete the lock file)",
            lock.display()
        ))
    })?;
    if !version.starts_with(&format!("{WHEEL_LLVM}.")) {
        return Err(Error::Failed(format!(
            "Cargo.lock's {BUNDLER} {version} wants another LLVM than the PyPI wheels xtask \
             installs ({WHEEL_LLVM}: {}): update WHEELS in xtask/src/llvm.rs",
            WHEELS.join(", ")
        )));
    }
    let dest = llvm_dir(&version)?;
    if dest.join(MARKER).is_file() {
        eprintln!(
            "LLVM for the cuda and cpu runtimes: {} is in place ({BUNDLER} {version})",
            dest.display()
        );
        return Ok(());
    }
    check_python()?;
    let pip_python = python_with_pip(ws)?;

    let wheels_dir = ws.target_dir.join("llvm-wheels");
    fs::create_dir_all(&wheels_dir)
        .map_err(|e| Error::Failed(format!("cannot create {}: {e}", wheels_dir.display())))?;
    Cmd::program(ws, &pip_python)
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--only-binary=:all:",
            "--dest",
        ])
        .args([wheels_dir.as_os_str()])
        .args(WHEELS)
        .run()?;
    let wheels = downloaded_wheels(&wheels_dir)?;

    // Unpacked beside the destination, then renamed: an interrupted run leaves no half folder
    // that the bundler would take for an installed one.
    let mut partial_name = dest.file_name().unwrap_or_default().to_os_string();
    partial_name.push(".partial");
    let partial = dest.with_file_name(partial_name);
    for stale in [&partial, &dest] {
        if stale.exists() {
            fs::remove_dir_all(stale)
                .map_err(|e| Error::Failed(format!("cannot remove {}: {e}", stale.display())))?;
        }
    }
    fs::create_dir_all(&partial)
        .map_err(|e| Error::Failed(format!("cannot create {}: {e}", partial.display())))?;
    let unpack = wheels_dir.join("unpack.py");
    fs::write(&unpack, UNPACK)
        .map_err(|e| Error::Failed(format!("cannot write {}: {e}", unpack.display())))?;
    Cmd::program(ws, "python3")
        .args([unpack.as_os_str(), partial.as_os_str()])
        .args(wheels.iter().map(|w| w.as_os_str()))
        .run()?;
    check_llvm_config(&partial.join("bin").join("llvm-config"))?;
    fs::rename(&partial, &dest).map_err(|e| {
        Error::Failed(format!(
            "cannot rename {} to {}: {e}",
            partial.display(),
            dest.display()
        ))
    })?;
    fs::write(dest.join(MARKER), b"")
        .map_err(|e| Error::Failed(format!("cannot write {}: {e}", dest.join(MARKER).display())))?;
    eprintln!(
        "LLVM for the cuda and cpu runtimes: installed in {} ({BUNDLER} {version})",
        dest.display()
    );
    Ok(())
}

/// The version of `tracel-llvm-bundler` in a Cargo.lock.
fn bundler_version(lock: &str) -> Option<String> {
    let mut lines = lock.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if line == format!("name = \"{BUNDLER}\"") {
            let next = lines.next()?;
            return next
                .strip_prefix("version = \"")?
                .strip_suffix('"')
                .map(str::to_owned);
        }
    }
    None
}

/// Where the bundler looks: `dirs::data_local_dir()` (`$XDG_DATA_HOME` when absolute, else
/// `$HOME/.local/share`), then `tracel/tracel-llvm-<version>`.
fn llvm_dir(version: &str) -> Result<PathBuf, Error> {
    let base = env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".local").join("share"))
        })
        .ok_or_else(|| {
            Error::Failed(
                "neither XDG_DATA_HOME nor HOME is set: cannot tell where CubeCL's LLVM goes"
                    .to_owned(),
            )
        })?;
    Ok(base.join("tracel").join(format!("tracel-llvm-{version}")))
}

/// A Python whose pip downloads the wheels: python3 where it has pip (`python3 -m pip`), else
/// the venv `<target>/llvm-pip` made with `python3 -m venv` (Debian's python3 has no pip, its
/// venvs do).
fn python_with_pip(ws: &Workspace) -> Result<PathBuf, Error> {
    if quietly("python3", &["-m", "pip", "--version"]) {
        return Ok(PathBuf::from("python3"));
    }
    let venv = ws.target_dir.join("llvm-pip");
    let python = venv.join("bin").join("python");
    if quietly(&python, &["-m", "pip", "--version"]) {
        return Ok(python);
    }
    if !quietly("python3", &["-c", "import ensurepip, venv"]) {
        return Err(Error::Failed(
            "the cuda and cpu runtimes' LLVM is downloaded with pip, and python3 has neither \
             pip nor the venv module: as root, apt-get install -y python3-venv (or python3-pip)"
                .to_owned(),
        ));
    }
    Cmd::program(ws, "python3")
        .args([
            std::ffi::OsStr::new("-m"),
            "venv".as_ref(),
            venv.as_os_str(),
        ])
        .run()?;
    Ok(python)
}

/// Whether `program args…` runs and succeeds, its output discarded.
fn quietly(program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// python3 ≥ 3.10: the wheels' `llvm-config` is a Python script that the build runs.
fn check_python() -> Result<(), Error> {
    let probe = Command::new("python3")
        .args([
            "-c",
            "import sys; v = sys.version_info; print('%d.%d' % (v[0], v[1])); \
             sys.exit(0 if v >= (3, 10) else 3)",
        ])
        .stdin(Stdio::null())
        .output();
    let out = match probe {
        Ok(out) => out,
        Err(e) => {
            return Err(Error::Failed(format!(
                "the cuda and cpu runtimes' LLVM needs python3 ≥ 3.10, and python3 cannot be \
                 run ({e}): as root, apt-get install -y python3 python3-venv"
            )));
        }
    };
    let found = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    match out.status.code() {
        Some(0) => Ok(()),
        _ => Err(Error::Failed(format!(
            "the cuda and cpu runtimes' LLVM needs python3 ≥ 3.10 (its llvm-config is a Python \
             script that the build runs), and python3 is {}",
            if found.is_empty() { "unusable" } else { &found }
        ))),
    }
}

/// The two wheels pip left in `dir`.
fn downloaded_wheels(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = fs::read_dir(dir)
        .map_err(|e| Error::Failed(format!("cannot read {}: {e}", dir.display())))?;
    let mut wheels: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with("mlc_llvm_static") && n.ends_with(".whl")
            })
        })
        .collect();
    wheels.sort();
    if wheels.len() == WHEELS.len() {
        Ok(wheels)
    } else {
        Err(Error::Failed(format!(
            "expected the {} wheels {} in {}, found {}",
            WHEELS.len(),
            WHEELS.join(", "),
            dir.display(),
            wheels.len()
        )))
    }
}

/// The unpacked `llvm-config` answers with the release the bundler expects.
fn check_llvm_config(path: &Path) -> Result<(), Error> {
    let out = Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::Failed(format!("cannot run {}: {e}", path.display())))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if out.status.success() && version.starts_with(&format!("{WHEEL_LLVM}.")) {
        Ok(())
    } else {
        Err(Error::Failed(format!(
            "{} --version answered `{version}`, not LLVM {WHEEL_LLVM}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundler_version_is_read_from_the_lock_file() {
        let lock = "[[package]]\nname = \"tracel-llvm\"\nversion = \"1\"\n\n[[package]]\n\
                    name = \"tracel-llvm-bundler\"\nversion = \"23.1.0-4\"\nsource = \"x\"\n";
        assert_eq!(bundler_version(lock).as_deref(), Some("23.1.0-4"));
        assert_eq!(bundler_version("[[package]]\nname = \"serde\"\n"), None);
    }

    #[test]
    fn the_workspace_lock_names_a_bundler_the_wheels_serve() {
        let lock = include_str!("../../Cargo.lock");
        let version = bundler_version(lock).expect("cubecl-llvm's bundler in Cargo.lock");
        assert!(version.starts_with(&format!("{WHEEL_LLVM}.")), "{version}");
    }
}
