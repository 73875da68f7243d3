//! What `cargo xtask ci`'s tests need from the machine that xtask cannot install itself
//! (system packages want root): checked before anything is built, a missing one failing the
//! run with one line that names the Debian packages to install. Nothing is skipped for want of
//! them.

use std::env;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::Error;

/// The commands `tests/cluster/slurm.sh` starts a single-node Slurm with, and the client
/// commands the cluster tests run.
const SLURM_COMMANDS: [&str; 7] = [
    "munged",
    "slurmctld",
    "slurmd",
    "sbatch",
    "scontrol",
    "squeue",
    "scancel",
];

/// Where the Vulkan loader looks for driver manifests (ICDs) besides `$XDG_DATA_DIRS`.
const ICD_DIRS: [&str; 3] = [
    "/usr/share/vulkan/icd.d",
    "/usr/local/share/vulkan/icd.d",
    "/etc/vulkan/icd.d",
];

/// One system dependency found missing: what, and the packages that bring it.
#[derive(Debug, PartialEq, Eq)]
struct Missing {
    what: String,
    packages: &'static str,
}

/// Where the report tests find Chromium (Debian's `chromium` package).
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// Fails naming every missing system dependency: python3 with `venv` (the Python tests' venvs),
/// Slurm and munge (the cluster tests), Chromium (the report tests), and a Vulkan loader with a driver where the tests
/// require the wgpu runtime (`test_runtimes`, as `DSPK_TEST_RUNTIMES` spells it).
pub fn check(test_runtimes: &OsStr) -> Result<(), Error> {
    let mut missing = Vec::new();
    if !python_has_venv() {
        missing.push(Missing {
            what: "python3 with its venv module".to_owned(),
            packages: "python3 python3-venv",
        });
    }
    let slurm: Vec<&str> = SLURM_COMMANDS
        .into_iter()
        .filter(|c| find_on_path(c).is_none())
        .collect();
    if !slurm.is_empty() {
        missing.push(Missing {
            what: format!("Slurm ({} not on PATH)", slurm.join(", ")),
            packages: "slurm-wlm munge",
        });
    }
    if cfg!(target_os = "linux") && !Path::new(CHROMIUM).is_file() {
        missing.push(Missing {
            what: format!("Chromium ({CHROMIUM})"),
            packages: "chromium",
        });
    }
    if requires_wgpu(test_runtimes)
        && cfg!(target_os = "linux")
        && let Some(what) = missing_vulkan()
    {
        missing.push(Missing {
            what,
            packages: "mesa-vulkan-drivers libvulkan1",
        });
    }
    match summary(&missing) {
        None => {
            eprintln!(
                "system packages: python3-venv, Slurm, munge, Chromium and Vulkan are all here"
            );
            Ok(())
        }
        Some(line) => Err(Error::Failed(line)),
    }
}

/// The one line for what is missing, `None` when nothing is.
fn summary(missing: &[Missing]) -> Option<String> {
    if missing.is_empty() {
        return None;
    }
    let what: Vec<&str> = missing.iter().map(|m| m.what.as_str()).collect();
    let packages: Vec<&str> = missing.iter().map(|m| m.packages).collect();
    Some(format!(
        "the tests need {}: as root, apt-get install -y {} (then run cargo xtask ci again)",
        what.join("; "),
        packages.join(" ")
    ))
}

/// Whether `DSPK_TEST_RUNTIMES` lists wgpu.
fn requires_wgpu(test_runtimes: &OsStr) -> bool {
    test_runtimes
        .to_string_lossy()
        .split(',')
        .any(|r| r.trim().eq_ignore_ascii_case("wgpu"))
}

fn python_has_venv() -> bool {
    Command::new("python3")
        .args(["-c", "import ensurepip, venv"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `name` in a directory of `PATH`, as a shell's `command -v` finds it.
fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// What of Vulkan is missing (the loader `libvulkan.so.1`, or every driver manifest), `None`
/// when both are here. A manifest named by `VK_ICD_FILENAMES` or `VK_DRIVER_FILES` counts.
fn missing_vulkan() -> Option<String> {
    let loader = Command::new("ldconfig")
        .arg("-p")
        .output()
        .or_else(|_| Command::new("/sbin/ldconfig").arg("-p").output())
        .map(|out| String::from_utf8_lossy(&out.stdout).contains("libvulkan.so.1"));
    // Where ldconfig itself cannot run, the loader is looked for by the tests themselves.
    if matches!(loader, Ok(false)) {
        return Some("the Vulkan loader (libvulkan.so.1) for the wgpu tests".to_owned());
    }
    let named = ["VK_ICD_FILENAMES", "VK_DRIVER_FILES"]
        .iter()
        .any(|v| env::var_os(v).is_some_and(|v| !v.is_empty()));
    let data_dirs = env::var_os("XDG_DATA_DIRS").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = ICD_DIRS.iter().map(PathBuf::from).collect();
    dirs.extend(env::split_paths(&data_dirs).map(|d| d.join("vulkan/icd.d")));
    if named || dirs.iter().any(|d| has_json(d)) {
        return None;
    }
    Some("a Vulkan driver for the wgpu tests (no ICD manifest: on a machine without a GPU, Mesa's lavapipe)".to_owned())
}

fn has_json(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "json"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wgpu_is_required_only_when_listed() {
        assert!(requires_wgpu(OsStr::new("wgpu")));
        assert!(requires_wgpu(OsStr::new("cuda, WGPU")));
        assert!(!requires_wgpu(OsStr::new("cuda")));
        assert!(!requires_wgpu(OsStr::new("")));
    }

    #[test]
    fn what_is_missing_is_one_line_with_every_package() {
        assert_eq!(summary(&[]), None);
        let line = summary(&[
            Missing {
                what: "Slurm (munged, sbatch not on PATH)".to_owned(),
                packages: "slurm-wlm munge",
            },
            Missing {
                what: "a Vulkan driver".to_owned(),
                packages: "mesa-vulkan-drivers libvulkan1",
            },
        ])
        .unwrap();
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.contains("apt-get install -y slurm-wlm munge mesa-vulkan-drivers libvulkan1"),
            "{line}"
        );
        assert!(line.contains("munged, sbatch"), "{line}");
    }

    #[test]
    fn commands_are_found_on_path_only_when_executable() {
        assert!(find_on_path("sh").is_some());
        assert!(find_on_path("dspk-no-such-command").is_none());
    }
}
