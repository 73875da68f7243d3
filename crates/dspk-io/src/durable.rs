//! Durable writes: a file appears at its path whole or not at all, across errors, kills and
//! power loss, and what a killed writer left behind is found again by its name.
//!
//! Every file dspk writes goes through here: a temporary sibling named
//! `.<target>@<host>.<pid>-<n>.dspk-tmp` is written, flushed to the disk (`fsync`), renamed
//! over the target, and the folder is flushed so that the rename lasts. A writer dropped before
//! it finishes removes its temporary; one that is killed cannot, and its temporary is removed by
//! [`remove_leftovers`]: when its writing process is known to be gone (same host, process no
//! longer running) or when the caller owns its target (a job that runs once at a time).

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use dspk_types::{DspError, DspResult};

/// The ending of every temporary file of this module.
pub const TEMP_SUFFIX: &str = ".dspk-tmp";

/// The name of a temporary file of this module, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TempName {
    /// The file name it is to become.
    pub target: String,
    /// The host of the process that wrote it.
    pub host: String,
    /// The process that wrote it.
    pub pid: u32,
    /// Which of that process's temporaries it is.
    pub serial: u64,
}

impl TempName {
    /// A fresh name of this process for `target` (a file name).
    fn fresh(target: &str) -> Self {
        static SERIAL: AtomicU64 = AtomicU64::new(0);
        Self {
            target: target.to_string(),
            host: this_host(),
            pid: std::process::id(),
            serial: SERIAL.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Parses a file name of this module's scheme; `None` for any other name.
    pub fn parse(name: &str) -> Option<Self> {
        let inner = name.strip_prefix('.')?.strip_suffix(TEMP_SUFFIX)?;
        let (target, rest) = inner.rsplit_once('@')?;
        let (host, ids) = rest.rsplit_once('.')?;
        let (pid, serial) = ids.split_once('-')?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if target.is_empty() || host.is_empty() || !digits(pid) || !digits(serial) {
            return None;
        }
        Some(Self {
            target: target.to_string(),
            host: host.to_string(),
            pid: pid.parse().ok()?,
            serial: serial.parse().ok()?,
        })
    }

    /// Whether the process that wrote it is known to have ended: it ran on this host and no
    /// running process has its id (Linux; elsewhere it is never known, and the file is kept).
    pub fn writer_is_gone(&self) -> bool {
        self.host == this_host() && process_is_gone(self.pid)
    }
}

impl std::fmt::Display for TempName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            ".{}@{}.{}-{}{TEMP_SUFFIX}",
            self.target, self.host, self.pid, self.serial
        )
    }
}

/// This machine's name as the kernel has it (Linux), `None` where it cannot be read.
pub fn host_name() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The host part of a temporary name: the host name with nothing the scheme splits on.
fn this_host() -> String {
    let name = host_name().unwrap_or_else(|| "localhost".to_string());
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Whether process `pid` of this host has ended (a zombie has). Only Linux can tell, through
/// `/proc`; elsewhere, or without `/proc`, every process counts as running.
fn process_is_gone(pid: u32) -> bool {
    if !Path::new("/proc/self/stat").exists() {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses and may hold any byte.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| state == 'Z' || state == 'X'),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// The folder of `target` (`.` for a bare file name) and its file name.
fn split_target(target: &Path) -> DspResult<(PathBuf, String)> {
    let name = target.file_name().ok_or_else(|| {
        DspError::config(format!(
            "output path {} does not name a file",
            target.display()
        ))
    })?;
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name.to_string_lossy().into_owned()))
}

/// A temporary file that becomes `target` when persisted; removed on drop otherwise.
#[derive(Debug)]
pub struct TempFile {
    target: PathBuf,
    path: PathBuf,
    file: Option<File>,
}

impl TempFile {
    /// Creates a fresh temporary next to `target`, first removing the temporaries of `target`
    /// that a writer now gone left there.
    pub fn create(target: impl AsRef<Path>) -> DspResult<Self> {
        let target = target.as_ref();
        let (dir, name) = split_target(target)?;
        remove_matching(&dir, |t| t.target == name && t.writer_is_gone())?;
        let path = dir.join(TempName::fresh(&name).to_string());
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| DspError::io(target, "cannot create the output file", &e))?;
        Ok(Self {
            target: target.to_path_buf(),
            path,
            file: Some(file),
        })
    }

    /// The file being written.
    pub fn file(&mut self) -> &mut File {
        self.file
            .as_mut()
            .expect("a temporary file is open until it is persisted or dropped")
    }

    /// The temporary's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path it becomes.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Flushes the file to the disk and closes it.
    fn sync(&mut self) -> DspResult<()> {
        if let Some(f) = self.file.take() {
            f.sync_all()
                .map_err(|e| DspError::io(&self.target, "cannot flush the output file", &e))?;
        }
        Ok(())
    }

    /// Moves it to its target (flushed, renamed over whatever was there, the folder flushed).
    pub fn persist(self) -> DspResult<()> {
        persist_all(vec![self])
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        self.file.take();
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Moves several temporaries into place as one: each is flushed, every previous file is kept
/// aside (under a temporary name of this module), the new ones renamed in, and the folders
/// flushed. If one cannot be moved, those already moved are taken back and the previous files
/// restored, so that the targets hold either all the old files or all the new ones (a kill in
/// between can leave a mix; the caller's rerun writes them all again).
pub fn persist_all(mut files: Vec<TempFile>) -> DspResult<()> {
    for f in &mut files {
        f.sync()?;
    }
    // Each target moved in, with its previous file set aside (none when there was none).
    let mut moved: Vec<(PathBuf, Option<TempFile>)> = Vec::new();
    let undo = |moved: Vec<(PathBuf, Option<TempFile>)>| {
        for (target, aside) in moved.into_iter().rev() {
            match aside {
                Some(old) => restore(old),
                None => {
                    let _ = std::fs::remove_file(&target);
                }
            }
        }
    };
    // One file needs nothing set aside: a failed rename leaves the previous file in place.
    let several = files.len() > 1;
    for mut f in files {
        let aside = match if several {
            set_aside(&f.target)
        } else {
            Ok(None)
        } {
            Ok(a) => a,
            Err(e) => {
                undo(moved);
                return Err(e);
            }
        };
        if let Err(e) = std::fs::rename(&f.path, &f.target) {
            if let Some(old) = aside {
                restore(old);
            }
            undo(moved);
            return Err(DspError::io(
                &f.target,
                "cannot move the finished file into place",
                &e,
            ));
        }
        f.path = PathBuf::new();
        moved.push((f.target.clone(), aside));
    }
    let mut dirs = BTreeSet::new();
    for (target, aside) in moved {
        // The new file is in place: the previous one goes (its temporary's drop).
        drop(aside);
        if let Ok((dir, _)) = split_target(&target) {
            dirs.insert(dir);
        }
    }
    for dir in dirs {
        sync_dir(&dir);
    }
    Ok(())
}

/// Puts a previous file set aside back at its target (best effort: on an error path already).
fn restore(mut old: TempFile) {
    if std::fs::rename(&old.path, &old.target).is_ok() {
        old.path = PathBuf::new();
    }
}

/// Keeps the file at `target`, when there is one, under a temporary name of this process: a
/// second hard link, so that `target` stays readable until the new file replaces it, else
/// (a file system without hard links) moved there. A folder is not set aside: the rename over
/// it fails.
fn set_aside(target: &Path) -> DspResult<Option<TempFile>> {
    match std::fs::symlink_metadata(target) {
        Ok(m) if !m.is_dir() => {}
        _ => return Ok(None),
    }
    let (dir, name) = split_target(target)?;
    let path = dir.join(TempName::fresh(&name).to_string());
    std::fs::hard_link(target, &path)
        .or_else(|_| std::fs::rename(target, &path))
        .map_err(|e| DspError::io(target, "cannot keep the previous output aside", &e))?;
    Ok(Some(TempFile {
        target: target.to_path_buf(),
        path,
        file: None,
    }))
}

/// Flushes a folder, so that a rename in it lasts. A folder opened read-only can be flushed on
/// Linux and macOS; where it cannot, the rename is still atomic, only perhaps not yet on disk.
fn sync_dir(dir: &Path) {
    if let Ok(f) = File::open(dir) {
        let _ = f.sync_all();
    }
}

/// Writes `bytes` to `target` durably: never a partial file at `target`, even across a kill.
pub fn write_file(target: impl AsRef<Path>, bytes: &[u8]) -> DspResult<()> {
    let target = target.as_ref();
    let mut tmp = TempFile::create(target)?;
    tmp.file()
        .write_all(bytes)
        .map_err(|e| DspError::io(target, "cannot write", &e))?;
    tmp.persist()
}

/// Removes the temporaries of this module in `dir` that no writer will finish: those whose
/// writing process is gone ([`TempName::writer_is_gone`]) and those whose target `owned` says
/// the caller owns (its writer, on any host, is an earlier run of the caller's own work). Other
/// files are never touched. Returns the paths removed; a folder that does not exist has none.
pub fn remove_leftovers(dir: &Path, owned: impl Fn(&str) -> bool) -> DspResult<Vec<PathBuf>> {
    remove_matching(dir, |t| owned(&t.target) || t.writer_is_gone())
}

/// Removes the temporaries of this module in `dir` that `remove` chooses; sorted paths removed.
fn remove_matching(dir: &Path, remove: impl Fn(&TempName) -> bool) -> DspResult<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(DspError::io(dir, "cannot list the folder", &e)),
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(parsed) = name.to_str().and_then(TempName::parse) else {
            continue;
        };
        if !remove(&parsed) {
            continue;
        }
        match std::fs::remove_file(entry.path()) {
            Ok(()) => removed.push(entry.path()),
            // Its writer finished or removed it meanwhile.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(DspError::io(
                    entry.path(),
                    "cannot remove a leftover temporary file",
                    &e,
                ));
            }
        }
    }
    removed.sort();
    Ok(removed)
}

#[cfg(test)]
mod tests;
