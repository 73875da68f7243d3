//! Finding the recordings of a folder (record nodes, experiments, recordings) and resolving a
//! path to one recording and stream.

use std::path::{Path, PathBuf};

use dspk_types::{DspError, DspResult};

use super::oebin::OpenEphysRecordingEntry;
use super::{CONTINUOUS_FILE, OEBIN_FILE};
use crate::raw::file_error;

/// How deep below a folder [`OpenEphysFolder::scan`] looks for `structure.oebin`
/// (`Record Node N/experimentK/recordingM/structure.oebin` is 4 levels).
const SCAN_DEPTH: usize = 4;

/// Every recording found in or below a folder.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenEphysFolder {
    /// The folder scanned.
    pub root: PathBuf,
    recordings: Vec<OpenEphysRecordingEntry>,
}

impl OpenEphysFolder {
    /// Finds every `structure.oebin` in `path` and up to four folder levels below it (the
    /// recording folder, an experiment, a record node, or the top folder the GUI writes), in
    /// order of record node, experiment and recording number, and reads each. `path` may also
    /// be a `structure.oebin`. No `structure.oebin` is an error naming the folder.
    pub fn scan(path: impl AsRef<Path>) -> DspResult<Self> {
        let path = path.as_ref();
        let root = if path.file_name().is_some_and(|n| n == OEBIN_FILE) {
            path.parent().unwrap_or(Path::new(".")).to_path_buf()
        } else {
            path.to_path_buf()
        };
        if !root.is_dir() {
            return Err(file_error(&root, "not a folder"));
        }
        let mut dirs = Vec::new();
        find_recordings(&root, SCAN_DEPTH, &mut dirs)?;
        if dirs.is_empty() {
            return Err(file_error(
                &root,
                format!("no {OEBIN_FILE} in this folder or up to {SCAN_DEPTH} levels below it"),
            ));
        }
        let mut recordings = dirs
            .iter()
            .map(|d| OpenEphysRecordingEntry::read(d))
            .collect::<DspResult<Vec<_>>>()?;
        recordings.sort_by(|a, b| {
            (&a.record_node, a.experiment, a.recording, &a.dir).cmp(&(
                &b.record_node,
                b.experiment,
                b.recording,
                &b.dir,
            ))
        });
        Ok(Self { root, recordings })
    }

    /// The recordings, in order.
    pub fn recordings(&self) -> &[OpenEphysRecordingEntry] {
        &self.recordings
    }
}

/// The recording folders below `path` when they are two or more recordings of one record node
/// and one experiment (an `experimentK` folder, or a folder above only one of them), in
/// recording order: these open as one recording of a segment each, as SpikeInterface reads a
/// block. `None` for anything else (a recording folder, several experiments or nodes).
pub fn experiment_recordings(path: &Path) -> Option<Vec<PathBuf>> {
    if !path.is_dir() || openephys_target(path).is_some() {
        return None;
    }
    let folder = OpenEphysFolder::scan(path).ok()?;
    let list = folder.recordings();
    let one_block = list
        .windows(2)
        .all(|w| (&w[0].record_node, w[0].experiment) == (&w[1].record_node, w[1].experiment));
    (list.len() > 1 && one_block).then(|| list.iter().map(|r| r.dir.clone()).collect())
}

/// The continuous streams (folder names) `path` can be opened on with a stream name, in the
/// `.oebin`'s order: those of the recording it names, or of the first recording of the
/// experiment folder it names. Empty where `path` is not Open Ephys, names a stream itself
/// (a stream's folder or `continuous.dat`), or holds recordings of several experiments (which
/// do not open as one).
pub fn openephys_streams(path: &Path) -> DspResult<Vec<String>> {
    Ok(streams_of(path)?
        .into_iter()
        .map(|(name, _)| name)
        .collect())
}

/// [`openephys_streams`] with each stream's folder.
pub(crate) fn streams_of(path: &Path) -> DspResult<Vec<(String, PathBuf)>> {
    let dir = match openephys_target(path) {
        Some((_, Some(_))) => return Ok(Vec::new()),
        Some((dir, None)) => dir,
        None => match experiment_recordings(path) {
            Some(dirs) => dirs[0].clone(),
            None if is_openephys(path) => match OpenEphysFolder::scan(path)?.recordings() {
                [one] => one.dir.clone(),
                _ => return Ok(Vec::new()),
            },
            None => return Ok(Vec::new()),
        },
    };
    let entry = OpenEphysRecordingEntry::read(&dir)?;
    Ok(entry
        .streams
        .iter()
        .map(|s| (s.name.clone(), s.dir.clone()))
        .collect())
}

/// Pushes every folder at or below `dir` (to `depth` levels) holding a `structure.oebin`; a
/// recording folder is not searched further.
fn find_recordings(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> DspResult<()> {
    if dir.join(OEBIN_FILE).is_file() {
        out.push(dir.to_path_buf());
        return Ok(());
    }
    if depth == 0 {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(|e| DspError::io(dir, "cannot list", &e))?;
    let mut subdirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    for d in subdirs {
        find_recordings(&d, depth - 1, out)?;
    }
    Ok(())
}

/// What `path` names: a recording folder (or its `.oebin`), optionally with the stream its
/// path chose (`continuous/<stream>` or its `continuous.dat`).
pub(crate) fn openephys_target(path: &Path) -> Option<(PathBuf, Option<String>)> {
    let name = path.file_name()?.to_str()?;
    if name == OEBIN_FILE {
        return Some((path.parent()?.to_path_buf(), None));
    }
    let stream_dir = if name == CONTINUOUS_FILE {
        path.parent()?
    } else if path.is_dir() && path.join(OEBIN_FILE).is_file() {
        return Some((path.to_path_buf(), None));
    } else {
        path
    };
    let continuous = stream_dir.parent()?;
    if continuous.file_name()? != "continuous" {
        return None;
    }
    let rec = continuous.parent()?;
    rec.join(OEBIN_FILE).is_file().then(|| {
        let stream = stream_dir.file_name()?.to_str()?.to_string();
        Some((rec.to_path_buf(), Some(stream)))
    })?
}

/// Whether `path` is an Open Ephys recording: a `structure.oebin`, a stream's folder or
/// `continuous.dat` below one, or a folder with a `structure.oebin` in it or below it.
pub(crate) fn is_openephys(path: &Path) -> bool {
    if openephys_target(path).is_some() {
        return true;
    }
    let mut found = Vec::new();
    path.is_dir() && find_recordings(path, SCAN_DEPTH, &mut found).is_ok() && !found.is_empty()
}

/// Resolves `path` (+ an explicit `stream`) to one recording entry and the stream to read.
pub(super) fn resolve(
    path: &Path,
    stream: Option<&str>,
) -> DspResult<(OpenEphysRecordingEntry, Option<String>)> {
    let (dir, from_path) = match openephys_target(path) {
        Some(t) => t,
        None => {
            let folder = OpenEphysFolder::scan(path)?;
            match folder.recordings.as_slice() {
                [one] => (one.dir.clone(), None),
                many => {
                    let list: Vec<String> = many
                        .iter()
                        .map(|r| format!("{} ({})", r.label(), r.dir.display()))
                        .collect();
                    return Err(DspError::config(format!(
                        "{}: {} Open Ephys recordings, give one recording folder: {}",
                        path.display(),
                        many.len(),
                        list.join(", ")
                    )));
                }
            }
        }
    };
    let chosen = match (from_path, stream) {
        (Some(p), Some(s)) if p != s => {
            return Err(DspError::config(format!(
                "{}: the path names stream '{p}' but stream '{s}' was asked for",
                path.display()
            )));
        }
        (p, s) => p.or(s.map(str::to_string)),
    };
    Ok((OpenEphysRecordingEntry::read(&dir)?, chosen))
}
