//! Which `.continuous` files make a recording: a folder's channel files, by processor,
//! channel kind and number, and by recording (`_2`, `_3` … suffixes).

use std::path::{Path, PathBuf};

use dspk_types::{DspError, DspResult};

use crate::raw::file_error;

/// One `.continuous` file's place, from its name: `<processor>_[<name>_]<CHn>[_<recording>]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChannelFile {
    pub(crate) path: PathBuf,
    pub(crate) processor: String,
    /// `CH1`, `AUX2`, `ADC3`.
    pub(crate) name: String,
    /// The letters of `name` (`CH`, `AUX`, `ADC`).
    pub(crate) kind: String,
    /// The digits of `name`.
    pub(crate) number: u64,
    /// 1 for a file without suffix, `n` for `_n`.
    pub(crate) recording: u64,
}

impl ChannelFile {
    fn parse(path: &Path) -> Option<Self> {
        let stem = path.file_stem()?.to_str()?;
        let mut parts: Vec<&str> = stem.split('_').collect();
        let recording = match parts.last().and_then(|p| p.parse::<u64>().ok()) {
            Some(n) if parts.len() > 2 => {
                parts.pop();
                n
            }
            _ => 1,
        };
        if parts.len() < 2 {
            return None;
        }
        let name = (*parts.last()?).to_string();
        let split = name.find(|c: char| c.is_ascii_digit())?;
        let (kind, digits) = name.split_at(split);
        let number = digits.parse().ok()?;
        Some(Self {
            path: path.to_path_buf(),
            processor: parts[0].to_string(),
            kind: kind.to_string(),
            number,
            name,
            recording,
        })
    }
}

/// Whether `path` is a legacy `.continuous` file or a folder holding some (and no
/// `structure.oebin`, which makes it an Open Ephys binary folder).
pub(crate) fn is_openephys_legacy(path: &Path) -> bool {
    if path.extension().is_some_and(|e| e == "continuous") {
        return true;
    }
    path.is_dir()
        && !path.join(crate::OEBIN_FILE).exists()
        && std::fs::read_dir(path).is_ok_and(|d| {
            d.flatten()
                .any(|e| e.path().extension().is_some_and(|x| x == "continuous"))
        })
}

/// The channel files of the recording at `path` (a folder, or one of its `.continuous`
/// files), grouped by recording number in increasing order, each group in channel order: `CH`
/// channels first, then the other kinds in name order, each kind by number (as Neo orders
/// them). All files must belong to one processor and every recording must have the same
/// channels.
pub(crate) fn channel_files(path: &Path) -> DspResult<(PathBuf, Vec<Vec<ChannelFile>>)> {
    let dir = if path.is_dir() {
        path.to_path_buf()
    } else {
        path.parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    };
    let dir = if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir
    };
    let entries = std::fs::read_dir(&dir).map_err(|e| DspError::io(&dir, "cannot list", &e))?;
    let mut files = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "continuous") {
            let f = ChannelFile::parse(&p).ok_or_else(|| {
                file_error(
                    &p,
                    "not named <processor>_[<name>_]<channel><number>[_<recording>].continuous",
                )
            })?;
            files.push(f);
        }
    }
    if files.is_empty() {
        return Err(file_error(&dir, "no .continuous files in this folder"));
    }
    let mut processors: Vec<&str> = files.iter().map(|f| f.processor.as_str()).collect();
    processors.sort_unstable();
    processors.dedup();
    if processors.len() > 1 {
        return Err(DspError::UnsupportedFormat(format!(
            "{}: .continuous files of {} processors ({}): dspk reads one processor's channels; copy one processor's files to a folder of their own",
            dir.display(),
            processors.len(),
            processors.join(", ")
        )));
    }
    let kind_rank = |k: &str| if k == "CH" { 0 } else { 1 };
    files.sort_by(|a, b| {
        (a.recording, kind_rank(&a.kind), &a.kind, a.number).cmp(&(
            b.recording,
            kind_rank(&b.kind),
            &b.kind,
            b.number,
        ))
    });
    let mut groups: Vec<Vec<ChannelFile>> = Vec::new();
    for f in files {
        match groups.last_mut() {
            Some(g) if g[0].recording == f.recording => g.push(f),
            _ => groups.push(vec![f]),
        }
    }
    let names = |g: &[ChannelFile]| g.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
    let first = names(&groups[0]);
    for g in &groups[1..] {
        if names(g) != first {
            return Err(file_error(
                &dir,
                format!(
                    "recording {} has channels {:?} but recording {} has {:?}: every recording must have the same channels",
                    g[0].recording,
                    names(g),
                    groups[0][0].recording,
                    first
                ),
            ));
        }
    }
    Ok((dir, groups))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_give_processor_channel_and_recording() {
        let f = ChannelFile::parse(Path::new("d/100_example-data_CH12.continuous")).expect("ok");
        assert_eq!(
            (
                f.processor.as_str(),
                f.name.as_str(),
                f.kind.as_str(),
                f.number,
                f.recording
            ),
            ("100", "CH12", "CH", 12, 1)
        );
        let f = ChannelFile::parse(Path::new("100_CH3_2.continuous")).expect("ok");
        assert_eq!((f.name.as_str(), f.recording), ("CH3", 2));
        let f = ChannelFile::parse(Path::new("100_ADC1.continuous")).expect("ok");
        assert_eq!((f.kind.as_str(), f.number, f.recording), ("ADC", 1, 1));
        assert!(ChannelFile::parse(Path::new("CH1.continuous")).is_none());
        assert!(ChannelFile::parse(Path::new("100_CH.continuous")).is_none());
    }
}
