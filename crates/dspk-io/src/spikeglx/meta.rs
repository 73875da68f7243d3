//! A SpikeGLX `.meta`: its `key=value` entries and typed reads of its keys and tables.

use std::collections::BTreeMap;
use std::path::Path;

use dspk_types::{DspError, DspResult};

use crate::raw::{MAX_CHANNELS, file_error};

/// The key/value pairs of a SpikeGLX `.meta` file, keys as written (with their `~`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SpikeGlxMeta {
    entries: BTreeMap<String, String>,
}

impl SpikeGlxMeta {
    /// Reads the `.meta` at `path`.
    pub fn read(path: &Path) -> DspResult<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                file_error(
                    path,
                    "missing .meta: a SpikeGLX .bin needs its .meta file next to it",
                )
            } else {
                DspError::io(path, "cannot read the .meta", &e)
            }
        })?;
        Self::parse(&text, path)
    }

    /// Parses `.meta` text (`key=value` lines; blank lines ignored); `path` names the file in
    /// errors.
    pub fn parse(text: &str, path: &Path) -> DspResult<Self> {
        let mut entries = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() {
                continue;
            }
            let (k, v) = line.split_once('=').ok_or_else(|| {
                file_error(path, format!("line {} is not key=value: '{line}'", i + 1))
            })?;
            entries.insert(k.trim().to_string(), v.trim().to_string());
        }
        Ok(Self { entries })
    }

    /// The value of `key`, looked up as given and with a `~` prefix (`imroTbl` finds
    /// `~imroTbl`).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .get(key)
            .or_else(|| self.entries.get(&format!("~{key}")))
            .map(String::as_str)
    }

    /// Every entry, keys as written.
    pub fn entries(&self) -> &BTreeMap<String, String> {
        &self.entries
    }
}

/// `~snsChanMap`: its header counts and `(acquisition index, name)` entries.
#[derive(Debug, Default)]
pub(super) struct ChanMap {
    pub(super) header: Vec<usize>,
    pub(super) entries: Vec<(usize, String)>,
}

impl ChanMap {
    pub(super) fn name(&self, acq: usize) -> Option<String> {
        self.entries
            .iter()
            .find(|e| e.0 == acq)
            .map(|e| e.1.clone())
    }
}

/// `~imroTbl` entries (after the header), each a list of numbers.
#[derive(Debug)]
pub(super) struct Imro {
    pub(super) entries: Vec<Vec<f64>>,
}

/// Typed access to a `.meta`, with errors naming the file.
pub(super) struct MetaReader<'a> {
    pub(super) meta: &'a SpikeGlxMeta,
    pub(super) path: &'a Path,
}

impl MetaReader<'_> {
    pub(super) fn missing(&self, key: &str) -> DspError {
        file_error(self.path, format!("missing {key}"))
    }

    pub(super) fn bad(&self, key: &str, value: &str, expected: &str) -> DspError {
        file_error(self.path, format!("{key}={value} is not {expected}"))
    }

    pub(super) fn no_gain(&self, probe_type: i64, key: &str) -> DspError {
        DspError::UnsupportedFormat(format!(
            "{}: no gain for probe type {probe_type}: no {key} and no per-channel gains in ~imroTbl",
            self.path.display()
        ))
    }

    pub(super) fn required(&self, key: &str) -> DspResult<&str> {
        self.meta.get(key).ok_or_else(|| self.missing(key))
    }

    pub(super) fn parse_required<T: std::str::FromStr>(&self, key: &str) -> DspResult<T> {
        let text = self.required(key)?;
        text.parse()
            .map_err(|_| self.bad(key, text, std::any::type_name::<T>()))
    }

    /// `N` comma-separated counts.
    pub(super) fn counts<const N: usize>(&self, key: &str, text: &str) -> DspResult<[usize; N]> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        let bad = || self.bad(key, text, &format!("{N} comma-separated counts"));
        if parts.len() != N {
            return Err(bad());
        }
        let mut out = [0usize; N];
        for (o, t) in out.iter_mut().zip(parts) {
            *o = t.parse().map_err(|_| bad())?;
            if *o > MAX_CHANNELS {
                return Err(bad());
            }
        }
        Ok(out)
    }

    /// The acquisition indices of the saved channels, in file order.
    pub(super) fn saved_channels(
        &self,
        saved_count: usize,
        all: impl FnOnce() -> Vec<usize>,
    ) -> DspResult<Vec<usize>> {
        let text = self.meta.get("snsSaveChanSubset").unwrap_or("all");
        let saved = if text.trim() == "all" {
            all()
        } else {
            parse_channel_list(text).ok_or_else(|| {
                self.bad(
                    "snsSaveChanSubset",
                    text,
                    "'all' or a list of channels and inclusive ranges like 0:5,100",
                )
            })?
        };
        if saved.len() != saved_count {
            return Err(file_error(
                self.path,
                format!(
                    "snsSaveChanSubset={text} lists {} channels but nSavedChans is {saved_count}",
                    saved.len()
                ),
            ));
        }
        let mut sorted = saved.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(file_error(
                self.path,
                format!("snsSaveChanSubset={text} lists channel {} twice", w[0]),
            ));
        }
        Ok(saved)
    }

    pub(super) fn chan_map(&self) -> DspResult<ChanMap> {
        let Some(text) = self.meta.get("snsChanMap") else {
            return Ok(ChanMap::default());
        };
        let bad = |what: &str| self.bad("~snsChanMap", text, what);
        let mut map = ChanMap::default();
        for (i, group) in groups(text).enumerate() {
            if i == 0 && !group.contains(';') {
                map.header = group
                    .split(',')
                    .map(|t| {
                        t.trim()
                            .parse::<usize>()
                            .ok()
                            .filter(|&v| v <= MAX_CHANNELS)
                    })
                    .collect::<Option<_>>()
                    .ok_or_else(|| bad("a header of counts then (name;channel:order) entries"))?;
                continue;
            }
            let (name, rest) = group
                .split_once(';')
                .ok_or_else(|| bad("(name;channel:order) entries"))?;
            let acq = rest.split(':').next().unwrap_or("").trim();
            let acq: usize = acq
                .parse()
                .map_err(|_| bad("(name;channel:order) entries"))?;
            map.entries.push((acq, name.trim().to_string()));
        }
        Ok(map)
    }

    pub(super) fn imro(&self) -> DspResult<Option<Imro>> {
        let Some(text) = self.meta.get("imroTbl") else {
            return Ok(None);
        };
        let mut entries = Vec::new();
        for (i, group) in groups(text).enumerate() {
            if i == 0 {
                continue; // header: (type,nchan) or (serial,type,nchan)
            }
            let values = group
                .split_whitespace()
                .map(str::parse)
                .collect::<Result<Vec<f64>, _>>()
                .map_err(|_| self.bad("~imroTbl", text, "a header then entries of numbers"))?;
            entries.push(values);
        }
        Ok(Some(Imro { entries }))
    }
}

/// The contents of each `(…)` group of a SpikeGLX table.
fn groups(text: &str) -> impl Iterator<Item = &str> {
    text.split(')')
        .map(|g| g.trim().trim_start_matches('(').trim())
        .filter(|g| !g.is_empty())
}

/// `0:5,100,384` → `[0, 1, 2, 3, 4, 5, 100, 384]` (ranges inclusive); `None` if malformed or
/// longer than [`MAX_CHANNELS`].
pub(crate) fn parse_channel_list(text: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        match part.split_once(':') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if a > b || b - a >= MAX_CHANNELS - out.len().min(MAX_CHANNELS) {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_lists_parse_inclusive_ranges() {
        assert_eq!(
            parse_channel_list("0:5,100,384"),
            Some(vec![0, 1, 2, 3, 4, 5, 100, 384])
        );
        assert_eq!(parse_channel_list("7"), Some(vec![7]));
        assert_eq!(parse_channel_list("3:3, 9:10"), Some(vec![3, 9, 10]));
        assert_eq!(parse_channel_list("5:2"), None);
        assert_eq!(parse_channel_list("a"), None);
        assert_eq!(parse_channel_list(""), None);
        assert_eq!(
            parse_channel_list("0:99999999999999"),
            None,
            "longer than MAX_CHANNELS"
        );
    }

    #[test]
    fn meta_lookup_finds_tilde_keys() {
        let m = SpikeGlxMeta::parse(
            "a=1\r\n~imroTbl=(0,2)(0 0 0 500 250 1)\n\nb = x y \n",
            Path::new("t.meta"),
        )
        .expect("valid meta");
        assert_eq!(m.get("a"), Some("1"));
        assert_eq!(m.get("imroTbl"), Some("(0,2)(0 0 0 500 250 1)"));
        assert_eq!(m.get("b"), Some("x y"));
        assert_eq!(m.entries().len(), 3);
        let e =
            SpikeGlxMeta::parse("a=1\nnot a pair\n", Path::new("t.meta")).expect_err("bad line");
        assert!(
            e.to_string().contains("t.meta") && e.to_string().contains("line 2"),
            "{e}"
        );
    }
}
