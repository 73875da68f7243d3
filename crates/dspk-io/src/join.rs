//! Several recording files opened as one: the `_t0`, `_t1`, … files of a SpikeGLX run, or any
//! list of recordings, placed by their clocks ([`ConcatRecording`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dspk_types::{ConcatOptions, ConcatRecording, DspResult, RecordingSource};

use crate::raw::file_error;
use crate::{FileFormat, OpenEphysRecording};

/// The parts of a SpikeGLX file name `<run>_g<G>_t<T><rest>` (`rest`: `.imec0.ap.bin`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct TriggerName {
    /// Everything before `_t`: `<run>_g<G>`.
    run: String,
    /// The trigger index.
    trigger: u64,
    /// Everything after the index.
    rest: String,
}

impl TriggerName {
    /// Splits a file name, or `None` when it is not `…_g<G>_t<T>…` (CatGT's `_tcat` is not
    /// a trigger file).
    fn parse(name: &str) -> Option<Self> {
        let at = name.rfind("_t")?;
        let (run, tail) = (&name[..at], &name[at + 2..]);
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        let g = run.rfind("_g")?;
        let g_digits = &run[g + 2..];
        if digits == 0 || g_digits.is_empty() || !g_digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(Self {
            run: run.to_string(),
            trigger: tail[..digits].parse().ok()?,
            rest: tail[digits..].to_string(),
        })
    }

    fn file_name(&self, trigger: u64) -> String {
        format!("{}_t{trigger}{}", self.run, self.rest)
    }
}

/// Puts SpikeGLX trigger files of one run in trigger order and refuses a run with a file
/// missing between the first and the last given, naming the missing file. Paths that are not
/// all trigger files of one run and stream are returned as given.
pub fn order_run_files(paths: &[PathBuf]) -> DspResult<Vec<PathBuf>> {
    let names: Option<Vec<TriggerName>> = paths
        .iter()
        .map(|p| TriggerName::parse(&p.file_name()?.to_string_lossy()))
        .collect();
    let Some(names) = names else {
        return Ok(paths.to_vec());
    };
    let same_run = names
        .windows(2)
        .all(|w| w[0].run == w[1].run && w[0].rest == w[1].rest);
    let same_dir = paths.windows(2).all(|w| w[0].parent() == w[1].parent());
    if names.len() < 2 || !same_run || !same_dir {
        return Ok(paths.to_vec());
    }
    let mut order: Vec<(u64, &PathBuf)> = names.iter().map(|n| n.trigger).zip(paths).collect();
    order.sort_by_key(|(t, _)| *t);
    for w in order.windows(2) {
        let ((a, pa), (b, _)) = (w[0], w[1]);
        if b == a {
            return Err(file_error(pa, "given twice"));
        }
        if b > a + 1 {
            let missing = pa.with_file_name(names[0].file_name(a + 1));
            return Err(file_error(
                &missing,
                format!(
                    "missing from the run: its files _t{a} and _t{b} are given, but not _t{} between them",
                    a + 1
                ),
            ));
        }
    }
    Ok(order.into_iter().map(|(_, p)| p.clone()).collect())
}

/// Every trigger file of the SpikeGLX run `path` is one of (`…_g0_t0.imec0.ap.bin` finds
/// `…_g0_t1.imec0.ap.bin`, … in the same folder), in trigger order, checked as
/// [`order_run_files`] does; `path` alone when it is not a trigger file.
pub fn spikeglx_run_files(path: &Path) -> DspResult<Vec<PathBuf>> {
    let Some(me) = path
        .file_name()
        .and_then(|n| TriggerName::parse(&n.to_string_lossy()))
    else {
        return Ok(vec![path.to_path_buf()]);
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let entries =
        std::fs::read_dir(&dir).map_err(|e| dspk_types::DspError::io(&dir, "cannot list", &e))?;
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| dspk_types::DspError::io(&dir, "cannot list", &e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(n) = TriggerName::parse(&name)
            && n.run == me.run
            && n.rest == me.rest
        {
            found.push(path.with_file_name(name));
        }
    }
    order_run_files(&found)
}

/// A recording made of several files read end to end, and what opening them noticed.
#[derive(Debug)]
pub struct JoinedRecording {
    /// The format of the files.
    pub format: FileFormat,
    /// The files, in the order joined.
    pub paths: Vec<PathBuf>,
    /// The recording.
    pub recording: ConcatRecording,
    /// The readers' warnings and the join's (a rate accepted within the tolerance).
    pub warnings: Vec<String>,
}

/// Opens `paths` (any formats [`open`](crate::open) reads) as one recording, SpikeGLX trigger
/// files put in trigger order first ([`order_run_files`]); see [`ConcatRecording`] for how they
/// are joined and what is refused. Errors name the file at fault.
pub fn open_joined(paths: &[PathBuf], options: ConcatOptions) -> DspResult<JoinedRecording> {
    open_joined_with(paths, options, &crate::OpenOptions::default())
}

/// [`open_joined`], each file opened with `open` (an Open Ephys stream chosen by name).
pub fn open_joined_with(
    paths: &[PathBuf],
    options: ConcatOptions,
    open: &crate::OpenOptions,
) -> DspResult<JoinedRecording> {
    let paths = order_run_files(paths)?;
    join_opened(paths, options, |p| crate::open_with(p, open))
}

/// The recordings of one Open Ephys experiment, a segment each (see
/// [`experiment_recordings`](crate::experiment_recordings)), each read from `stream` (by name;
/// `None`: each recording's only stream).
pub(crate) fn open_experiment(
    dirs: Vec<PathBuf>,
    stream: Option<&str>,
) -> DspResult<JoinedRecording> {
    let options = ConcatOptions {
        part_per_segment: true,
        ..Default::default()
    };
    join_opened(dirs, options, |d| {
        Ok(crate::FileRecording::OpenEphys(OpenEphysRecording::open(
            d, stream,
        )?))
    })
}

fn join_opened(
    paths: Vec<PathBuf>,
    options: ConcatOptions,
    open_one: impl Fn(&Path) -> DspResult<crate::FileRecording>,
) -> DspResult<JoinedRecording> {
    let mut parts: Vec<Arc<dyn RecordingSource>> = Vec::new();
    let mut warnings = Vec::new();
    let mut format = None;
    for p in &paths {
        let rec = open_one(p)?;
        format.get_or_insert(rec.format());
        warnings.extend(rec.warnings().iter().cloned());
        parts.push(rec.into_source());
    }
    let recording = ConcatRecording::new(parts, options)?;
    warnings.extend(recording.warnings().iter().cloned());
    Ok(JoinedRecording {
        format: format.expect("ConcatRecording refuses an empty list"),
        paths,
        recording,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_names_split_at_the_last_t_after_a_g() {
        let n = TriggerName::parse("mouse_g0_t12.imec0.ap.bin").unwrap();
        assert_eq!(
            (n.run.as_str(), n.trigger, n.rest.as_str()),
            ("mouse_g0", 12, ".imec0.ap.bin")
        );
        assert_eq!(n.file_name(3), "mouse_g0_t3.imec0.ap.bin");
        assert!(TriggerName::parse("mouse_g0_tcat.imec0.ap.bin").is_none());
        assert!(TriggerName::parse("plain.bin").is_none());
        assert!(TriggerName::parse("a_t0.bin").is_none());
    }

    #[test]
    fn run_files_are_ordered_and_a_missing_one_is_named() {
        let p = |t: u64| PathBuf::from(format!("/d/r_g0_t{t}.imec0.ap.bin"));
        assert_eq!(
            order_run_files(&[p(2), p(0), p(1)]).unwrap(),
            vec![p(0), p(1), p(2)]
        );
        let err = order_run_files(&[p(0), p(2)]).unwrap_err().to_string();
        assert!(err.contains("/d/r_g0_t1.imec0.ap.bin"), "{err}");
        assert!(err.contains("_t0 and _t2 are given, but not _t1"), "{err}");
        let other = PathBuf::from("/d/x.bin");
        assert_eq!(
            order_run_files(&[other.clone(), p(0)]).unwrap(),
            vec![other, p(0)]
        );
    }
}
