//! Channel maps (which input channel becomes which output channel), their TOML and JSON files,
//! and a recording read through a map.
//!
//! # The file format
//!
//! The same schema in TOML and JSON: a table `remap` with `base` (0, the default, or 1 for
//! 1-based numbering) and `pairs`, an array of `{ from, to, name? }`: input channel `from`
//! becomes output channel `to`, optionally renamed. Every output `base..base + n` (n = the
//! number of pairs) gets exactly one input; inputs not listed are dropped. Unknown fields are
//! refused.
//!
//! ```toml
//! [remap]
//! base = 1
//! pairs = [
//!     { from = 3, to = 1, name = "tip" },
//!     { from = 1, to = 2 },
//! ]
//! ```
//!
//! In error messages pairs are counted from 1 in file order ("pair 2 of 5"), and channel numbers
//! are written as in the file (in its `base`).

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::{
    DspError, DspResult, MemoryOrder, RecordingInfo, RecordingSource, check_read,
    check_read_stored, memory::check_read_native,
};

/// The channel numbering of a map that does not say: 0-based.
pub const DEFAULT_CHANNEL_BASE: usize = 0;

fn default_base() -> usize {
    DEFAULT_CHANNEL_BASE
}

/// One entry of a channel map: input channel `from` becomes output channel `to`, named `name`
/// if given (else it keeps the input's name). Numbers are in the map's `base`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelPair {
    /// The input channel.
    pub from: usize,
    /// The output channel it becomes.
    pub to: usize,
    /// The output channel's name, if not the input's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl ChannelPair {
    /// Input `from` to output `to`, keeping the input's name.
    pub fn new(from: usize, to: usize) -> Self {
        Self {
            from,
            to,
            name: None,
        }
    }

    /// Input `from` to output `to`, named `name`.
    pub fn named(from: usize, to: usize, name: impl Into<String>) -> Self {
        Self {
            from,
            to,
            name: Some(name.into()),
        }
    }
}

/// A channel map: numbering `base` (0 or 1) and the pairs. Checked by
/// [`ChannelMap::validate`], which every consumer calls.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelMap {
    /// The number of the first channel: 0 or 1.
    #[serde(default = "default_base")]
    pub base: usize,
    /// Which input becomes which output.
    pub pairs: Vec<ChannelPair>,
}

impl ChannelMap {
    /// The map that keeps `n` channels as they are (0-based).
    pub fn identity(n: usize) -> Self {
        Self {
            base: DEFAULT_CHANNEL_BASE,
            pairs: (0..n).map(|c| ChannelPair::new(c, c)).collect(),
        }
    }

    /// The number of output channels (one per pair).
    pub fn output_count(&self) -> usize {
        self.pairs.len()
    }

    /// Checks the map and returns, for each output channel in order, its input channel
    /// (0-based) and its name if the map gives one.
    ///
    /// Refused ([`DspError::InvalidConfig`], naming the pair): a base other than 0 or 1, no
    /// pairs, a channel number below `base`, an output past the last one (so another output is
    /// missing), an input listed twice, an output given twice.
    pub fn validate(&self) -> DspResult<Vec<(usize, Option<String>)>> {
        let base = self.base;
        if base > 1 {
            return Err(DspError::config(format!(
                "channel map base {base} must be 0 or 1"
            )));
        }
        let n = self.pairs.len();
        if n == 0 {
            return Err(DspError::config("channel map has no pairs"));
        }
        let last = base + n - 1;
        let mut outputs: Vec<Option<(usize, &ChannelPair)>> = vec![None; n];
        let mut inputs: std::collections::HashMap<usize, usize> =
            std::collections::HashMap::with_capacity(n);
        for (i, pair) in self.pairs.iter().enumerate() {
            let at = || format!("pair {} of {n} (from {}, to {})", i + 1, pair.from, pair.to);
            if pair.from < base {
                return Err(DspError::config(format!(
                    "{}: input {} is below base {base}",
                    at(),
                    pair.from
                )));
            }
            if pair.to < base {
                return Err(DspError::config(format!(
                    "{}: output {} is below base {base}",
                    at(),
                    pair.to
                )));
            }
            if pair.to > last {
                return Err(DspError::config(format!(
                    "{}: output {} is past the last output {last}: {n} pairs give outputs \
                     {base}..={last}, so one of those is missing",
                    at(),
                    pair.to
                )));
            }
            if let Some(j) = inputs.insert(pair.from, i) {
                return Err(DspError::config(format!(
                    "{}: input {} is already mapped by pair {}",
                    at(),
                    pair.from,
                    j + 1
                )));
            }
            let slot = &mut outputs[pair.to - base];
            if let Some((j, _)) = slot {
                return Err(DspError::config(format!(
                    "{}: output {} is already given by pair {}",
                    at(),
                    pair.to,
                    *j + 1
                )));
            }
            *slot = Some((i, pair));
        }
        outputs
            .into_iter()
            .enumerate()
            .map(|(o, slot)| match slot {
                Some((_, pair)) => Ok((pair.from - base, pair.name.clone())),
                // Unreachable by counting (n pairs, n distinct outputs in range); kept as an error.
                None => Err(DspError::config(format!(
                    "channel map output {} is missing: no pair gives it",
                    o + base
                ))),
            })
            .collect()
    }
}

/// A channel-map file: the table `remap` holding a [`ChannelMap`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelMapFile {
    /// The map.
    pub remap: ChannelMap,
}

impl ChannelMapFile {
    /// A file holding `map`.
    pub fn new(map: ChannelMap) -> Self {
        Self { remap: map }
    }

    /// Parses and validates TOML. Malformed TOML and unknown fields are
    /// [`DspError::InvalidConfig`] with the parser's message; an invalid map names the pair.
    pub fn from_toml_str(text: &str) -> DspResult<Self> {
        let file: Self = toml::from_str(text).map_err(|e| {
            DspError::config(format!(
                "malformed channel map TOML: {}",
                e.to_string().trim_end()
            ))
        })?;
        file.remap.validate()?;
        Ok(file)
    }

    /// Parses and validates JSON, like [`ChannelMapFile::from_toml_str`].
    pub fn from_json_str(text: &str) -> DspResult<Self> {
        let file: Self = serde_json::from_str(text)
            .map_err(|e| DspError::config(format!("malformed channel map JSON: {e}")))?;
        file.remap.validate()?;
        Ok(file)
    }

    /// The map as TOML (validated first: an invalid map is not written).
    pub fn to_toml_string(&self) -> DspResult<String> {
        self.remap.validate()?;
        toml::to_string(self)
            .map_err(|e| DspError::config(format!("cannot write channel map as TOML: {e}")))
    }

    /// The map as pretty-printed JSON (validated first: an invalid map is not written).
    pub fn to_json_string(&self) -> DspResult<String> {
        self.remap.validate()?;
        serde_json::to_string_pretty(self)
            .map_err(|e| DspError::config(format!("cannot write channel map as JSON: {e}")))
    }

    /// Reads a map file, TOML or JSON by its extension (`.toml`, `.json`, any case).
    ///
    /// Another extension is [`DspError::UnsupportedFormat`] naming the file; a file that cannot
    /// be read is [`DspError::Io`] with its path; malformed content or an invalid map is
    /// [`DspError::InvalidConfig`] naming the file.
    pub fn load(path: impl AsRef<Path>) -> DspResult<Self> {
        let path = path.as_ref();
        let kind = map_kind(path)?;
        let text = std::fs::read_to_string(path)
            .map_err(|e| DspError::io(path, "cannot read channel map", &e))?;
        let parsed = match kind {
            MapKind::Toml => Self::from_toml_str(&text),
            MapKind::Json => Self::from_json_str(&text),
        };
        parsed.map_err(|e| match e {
            DspError::InvalidConfig(msg) => DspError::config(format!("{}: {msg}", path.display())),
            other => other,
        })
    }

    /// Writes the map, TOML or JSON by the extension of `path` (as [`ChannelMapFile::load`]).
    pub fn save(&self, path: impl AsRef<Path>) -> DspResult<()> {
        let path = path.as_ref();
        let text = match map_kind(path)? {
            MapKind::Toml => self.to_toml_string()?,
            MapKind::Json => self.to_json_string()?,
        };
        std::fs::write(path, text).map_err(|e| DspError::io(path, "cannot write channel map", &e))
    }
}

enum MapKind {
    Toml,
    Json,
}

fn map_kind(path: &Path) -> DspResult<MapKind> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("toml") => Ok(MapKind::Toml),
        Some("json") => Ok(MapKind::Json),
        _ => Err(DspError::UnsupportedFormat(format!(
            "channel map {}: expected a .toml or .json file",
            path.display()
        ))),
    }
}

/// A recording read through a [`ChannelMap`]: output channel `k` is the parent's input channel
/// the map gives it, named by the pair if it names it, else keeping the parent channel's name
/// (and its gain, offset, unit and probe contact). Inputs not in the map are not readable
/// through it. The
/// description keeps the parent's name, length, rate, format, order, start time and metadata.
///
/// ```
/// use std::sync::Arc;
/// use dspk_types::{ChannelMap, ChannelPair, MemoryRecording, RecordingSource, RemappedSource, SampleRate};
///
/// let rate = SampleRate::new(1000.0).unwrap();
/// let rec = MemoryRecording::from_channels("r", rate, vec![vec![1.0], vec![2.0], vec![3.0]]).unwrap();
/// let map = ChannelMap { base: 1, pairs: vec![ChannelPair::named(3, 1, "tip"), ChannelPair::new(1, 2)] };
/// let remapped = RemappedSource::new(Arc::new(rec), &map).unwrap();
/// let mut out = [0f32; 2];
/// remapped.read(&[0, 1], 0..1, &mut out).unwrap();
/// assert_eq!(out, [3.0, 1.0]);
/// assert_eq!(remapped.info().channels[0].name, "tip");
/// assert_eq!(remapped.info().channels[1].name, "ch0");
/// ```
#[derive(Clone)]
pub struct RemappedSource {
    parent: Arc<dyn RecordingSource>,
    inputs: Vec<usize>,
    info: RecordingInfo,
}

impl std::fmt::Debug for RemappedSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemappedSource")
            .field("parent", &self.parent.info().name)
            .field("inputs", &self.inputs)
            .field("info", &self.info)
            .finish()
    }
}

impl RemappedSource {
    /// `parent` read through `map`. Refused: an invalid map (see [`ChannelMap::validate`]) and
    /// an input past the parent's last channel ([`DspError::InvalidChannel`] with the 0-based
    /// index and the parent's channel count).
    pub fn new(parent: Arc<dyn RecordingSource>, map: &ChannelMap) -> DspResult<Self> {
        let routes = map.validate()?;
        let pinfo = parent.info();
        let count = pinfo.channel_count();
        if let Some((bad, _)) = routes.iter().find(|(input, _)| *input >= count) {
            return Err(DspError::InvalidChannel { index: *bad, count });
        }
        let mut info = pinfo.clone();
        info.channels = routes
            .iter()
            .map(|(input, name)| {
                let mut ch = pinfo.channels[*input].clone();
                if let Some(name) = name {
                    ch.name.clone_from(name);
                }
                ch
            })
            .collect();
        let inputs: Vec<usize> = routes.into_iter().map(|(input, _)| input).collect();
        // Inputs are distinct (checked by `validate`), so the selection only fails where every
        // mapped channel lacks a contact: no probe then.
        info.probe = pinfo.probe.as_ref().and_then(|p| p.select(&inputs).ok());
        Ok(Self {
            parent,
            inputs,
            info,
        })
    }

    /// The recording read through the map.
    pub fn parent(&self) -> &Arc<dyn RecordingSource> {
        &self.parent
    }

    /// The parent channel (0-based) behind each output channel.
    pub fn inputs(&self) -> &[usize] {
        &self.inputs
    }

    fn map_channels(&self, channels: &[usize]) -> Vec<usize> {
        channels.iter().map(|&c| self.inputs[c]).collect()
    }

    fn is_identity(&self) -> bool {
        self.inputs.len() == self.parent.info().channel_count()
            && self.inputs.iter().enumerate().all(|(i, &c)| i == c)
    }
}

impl RecordingSource for RemappedSource {
    fn info(&self) -> &RecordingInfo {
        &self.info
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        check_read(&self.info, channels, &samples, out.len())?;
        self.parent.read(&self.map_channels(channels), samples, out)
    }

    fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        check_read_stored(&self.info, channels, &samples, out.len())?;
        self.parent
            .read_stored(&self.map_channels(channels), samples, out)
    }

    /// The parent's native read for an identity map; otherwise a channel-major read.
    fn read_native(&self, samples: Range<u64>, out: &mut [f32]) -> DspResult<MemoryOrder> {
        check_read_native(&self.info, &samples, out.len())?;
        if self.is_identity() {
            return self.parent.read_native(samples, out);
        }
        self.parent.read(&self.inputs, samples, out)?;
        Ok(MemoryOrder::ChannelMajor)
    }

    fn chunk_samples(&self) -> Option<u64> {
        self.parent.chunk_samples()
    }
}

#[cfg(test)]
#[path = "tests/channel_map.rs"]
mod tests;
