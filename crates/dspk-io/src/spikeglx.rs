//! SpikeGLX recordings: a `.bin` of int16 frames and its `.meta` (imec AP/LF and NI streams).
//!
//! The facts used, from SpikeGLX's metadata documentation and the readers built on it
//! (SpikeGLX's `readSGLX.py`, SpikeInterface/Neo):
//! - `.meta` is `key=value` text; keys of tables start with `~` (`~imroTbl`, `~snsChanMap`).
//! - Samples are little-endian int16, time-major, `nSavedChans` per frame; `snsSaveChanSubset`
//!   (`all`, or ranges like `0:383,768`, inclusive) lists the saved channels by their
//!   *acquisition* index. In an imec stream the acquired channels are AP `0..nAP`, then LF
//!   `nAP..nAP+nLF`, then SY (counts from `acqApLfSy`, else the `~snsChanMap` header); in an NI
//!   stream MN, MA, XA, then digital words (counts from `acqMnMaXaDw`, else `snsMnMaXaDw`).
//! - µV per count: imec `imAiRangeMax / imMaxInt / gain × 10⁶`, with per-channel AP/LF gains
//!   from the `~imroTbl` entries `(chan bank refid apgain lfgain apfilt)` for NP1.0-type probes
//!   (`imDatPrb_type` 0 or absent, 1020, 1030, 1100, 1120–1123, 1200, 1300) and the single
//!   `imChan0apGain` / `imChan0lfGain` otherwise (NP2.0: 21, 24, 2003…; without those keys NP2.0
//!   AP gain is 80, the fixed gain of those probes, as Neo assumes). `imMaxInt` defaults to 512
//!   (NP1.0) or 8192 (NP2.0). NI: `niAiRangeMax / niMaxInt / gain × 10⁶` with `niMNGain` for
//!   MN channels, `niMAGain` for MA, 1 for XA; `niMaxInt` defaults to 32768. The range is taken
//!   as symmetric (`imAiRangeMin`/`niAiRangeMin` = −max, as SpikeGLX writes it).
//! - The sync channel (SY) and NI digital words are unscaled (gain 1, dimensionless).
//! - `imSampRate`/`niSampRate` are read as exact decimals; `firstSample / rate` is the start
//!   time; `fileSizeBytes` must equal the `.bin`'s size.
//! - Probe geometry (imec): from `~imroTbl` and the embedded Neuropixels catalogue, checked
//!   against `~snsShankMap` / `~snsGeomMap` (the `neuropixels` module's rules); the sync channel
//!   has no contact. A `.meta` whose geometry cannot be had still opens, without a probe and
//!   with a warning saying why.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dspk_types::{
    ChannelInfo, Clock, DspError, DspResult, MICROVOLTS_PER_VOLT, MemoryOrder, RationalTime,
    RecordingInfo, SampleFormat, SampleRate, SignalUnit,
};

use crate::mapped::MappedFile;
use crate::raw::{MAX_CHANNELS, RawData, file_error};

/// Probe types whose `~imroTbl` entries carry per-channel AP and LF gains (NP1.0 layout).
const NP1_PROBE_TYPES: [i64; 10] = [0, 1020, 1030, 1100, 1120, 1121, 1122, 1123, 1200, 1300];
/// NP2.0-family probe types (one gain for every channel, 14-bit range).
const NP2_PROBE_TYPES: [i64; 10] = [21, 24, 2003, 2004, 2005, 2006, 2013, 2014, 2020, 2021];
/// AP gain of NP2.0 probes when the metadata does not state it.
const NP2_DEFAULT_AP_GAIN: f64 = 80.0;
/// `imMaxInt` of NP1.0 probes (10-bit ADC).
const NP1_MAX_INT: f64 = 512.0;
/// `imMaxInt` of NP2.0 probes (14-bit ADC).
const NP2_MAX_INT: f64 = 8192.0;
/// `niMaxInt` when absent (16-bit NI-DAQ).
const NI_DEFAULT_MAX_INT: f64 = 32768.0;

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

    /// The description this `.meta` gives of a `.bin` of `bin_len` bytes at `bin`, with the
    /// checks of [`SpikeGlxRecording::open`], without the file system: `meta_path` names the
    /// `.meta` in errors. For checking a `.meta` on its own (the fuzz checks use it).
    pub fn recording_info(
        &self,
        bin: &Path,
        meta_path: &Path,
        bin_len: u64,
    ) -> DspResult<RecordingInfo> {
        SpikeGlxLayout::from_parts(
            bin.to_path_buf(),
            meta_path.to_path_buf(),
            self.clone(),
            bin_len,
        )
        .map(|layout| layout.info)
    }
}

/// Which SpikeGLX stream a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpikeGlxStream {
    /// An imec probe stream (`typeThis=imec`): AP (`*.ap.bin`), LF (`*.lf.bin`) or both.
    Imec,
    /// The NI-DAQ stream (`typeThis=nidq`).
    Nidq,
}

/// What one saved channel carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpikeGlxChannelKind {
    /// imec action-potential band channel (µV).
    Ap,
    /// imec local-field band channel (µV).
    Lf,
    /// imec sync word (unscaled).
    Sync,
    /// NI multiplexed neural channel (µV, gain `niMNGain`).
    Mn,
    /// NI multiplexed auxiliary channel (µV, gain `niMAGain`).
    Ma,
    /// NI non-multiplexed analog channel (µV, gain 1).
    Xa,
    /// NI digital word (unscaled).
    Digital,
}

/// Everything read from the `.meta` and the `.bin`'s size, without mapping the data.
#[derive(Debug, Clone)]
pub(crate) struct SpikeGlxLayout {
    pub(crate) bin: PathBuf,
    pub(crate) meta_path: PathBuf,
    pub(crate) meta: SpikeGlxMeta,
    pub(crate) stream: SpikeGlxStream,
    pub(crate) info: RecordingInfo,
    pub(crate) kinds: Vec<SpikeGlxChannelKind>,
    pub(crate) saved: Vec<usize>,
    pub(crate) warnings: Vec<String>,
}

/// `(bin, meta)` for a path naming either file.
pub(crate) fn spikeglx_paths(path: &Path) -> (PathBuf, PathBuf) {
    if path.extension().is_some_and(|e| e == "meta") {
        (path.with_extension("bin"), path.to_path_buf())
    } else {
        (path.to_path_buf(), path.with_extension("meta"))
    }
}

impl SpikeGlxLayout {
    /// Reads the `.meta` of `path` and the `.bin`'s size from the file system.
    pub(crate) fn read(path: &Path) -> DspResult<Self> {
        let (bin, meta_path, meta) = Self::read_meta(path)?;
        let len = std::fs::metadata(&bin)
            .map_err(|e| DspError::io(&bin, "cannot open", &e))?
            .len();
        Self::from_parts(bin, meta_path, meta, len)
    }

    fn read_meta(path: &Path) -> DspResult<(PathBuf, PathBuf, SpikeGlxMeta)> {
        let (bin, meta_path) = spikeglx_paths(path);
        let meta = SpikeGlxMeta::read(&meta_path)?;
        let m = std::fs::metadata(&bin).map_err(|e| DspError::io(&bin, "cannot open", &e))?;
        if !m.is_file() {
            return Err(file_error(&bin, "not a regular file"));
        }
        Ok((bin, meta_path, meta))
    }

    fn from_parts(
        bin: PathBuf,
        meta_path: PathBuf,
        meta: SpikeGlxMeta,
        len: u64,
    ) -> DspResult<Self> {
        let p = MetaReader {
            meta: &meta,
            path: &meta_path,
        };
        let stream = match meta.get("typeThis") {
            Some("imec") => SpikeGlxStream::Imec,
            Some("nidq") => SpikeGlxStream::Nidq,
            Some(other) => {
                return Err(DspError::UnsupportedFormat(format!(
                    "{}: SpikeGLX stream type '{other}' (supported: imec, nidq)",
                    meta_path.display()
                )));
            }
            None if meta.get("imSampRate").is_some() => SpikeGlxStream::Imec,
            None if meta.get("niSampRate").is_some() => SpikeGlxStream::Nidq,
            None => {
                return Err(file_error(
                    &meta_path,
                    "no typeThis, imSampRate or niSampRate: not a SpikeGLX .meta",
                ));
            }
        };
        let rate_key = match stream {
            SpikeGlxStream::Imec => "imSampRate",
            SpikeGlxStream::Nidq => "niSampRate",
        };
        let rate_text = p.required(rate_key)?;
        let sample_rate: SampleRate = rate_text
            .parse()
            .map_err(|_| p.bad(rate_key, rate_text, "a sample rate in hertz"))?;
        let saved_count: usize = p.parse_required("nSavedChans")?;
        if saved_count == 0 || saved_count > MAX_CHANNELS {
            return Err(p.bad(
                "nSavedChans",
                &saved_count.to_string(),
                &format!("a channel count from 1 to {MAX_CHANNELS}"),
            ));
        }
        let chan_map = p.chan_map()?;

        let SavedChannels {
            kinds,
            saved,
            channels,
            readout,
        } = match stream {
            SpikeGlxStream::Imec => imec_channels(&p, saved_count, &chan_map)?,
            SpikeGlxStream::Nidq => nidq_channels(&p, saved_count, &chan_map)?,
        };

        if let Some(text) = meta.get("fileSizeBytes") {
            let stated: u64 = text
                .parse()
                .map_err(|_| p.bad("fileSizeBytes", text, "a byte count"))?;
            if stated != len {
                return Err(file_error(
                    &bin,
                    format!(
                        "fileSizeBytes in {} is {stated} but the file holds {len} bytes (truncated or not the file the .meta describes)",
                        meta_path.display()
                    ),
                ));
            }
        }
        let frame = saved_count as u64 * 2;
        let samples = len / frame;
        let rest = len % frame;
        let mut warnings = Vec::new();
        if rest != 0 {
            warnings.push(format!(
                "{}: {rest} trailing bytes are not a whole frame ({saved_count} int16 channels); the partial last frame is dropped",
                bin.display()
            ));
        }
        let probe = match stream {
            SpikeGlxStream::Imec => crate::neuropixels::spikeglx_probe(&meta, &readout)
                .unwrap_or_else(|e| {
                    warnings.push(format!("{}: no probe geometry: {e}", meta_path.display()));
                    None
                }),
            SpikeGlxStream::Nidq => None,
        };
        let first_sample: u64 = match meta.get("firstSample") {
            Some(t) => t
                .parse()
                .map_err(|_| p.bad("firstSample", t, "a sample index"))?,
            None => 0,
        };
        let start_time = RationalTime::from_samples(first_sample, sample_rate)?;
        let name = bin.file_name().map_or_else(
            || bin.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let nominal = imec_nominal_rate(&kinds);
        let info = RecordingInfo {
            name,
            channels,
            samples,
            sample_rate,
            format: SampleFormat::I16,
            order: MemoryOrder::TimeMajor,
            start_time,
            clock: Clock::Stated,
            segments: None,
            nominal_rate: nominal.filter(|&n| n != sample_rate),
            measured_rate: nominal.map(|_| sample_rate),
            probe,
            metadata: meta.entries().clone(),
        };
        Ok(Self {
            bin,
            meta_path,
            meta,
            stream,
            info,
            kinds,
            saved,
            warnings,
        })
    }
}

/// The nominal rate of an imec file: 30 kHz for AP channels, 2.5 kHz for LF channels (the
/// probes' sample clocks; `imSampRate` is SpikeGLX's calibration of it). `None` for a file
/// with neither or both kinds.
fn imec_nominal_rate(kinds: &[SpikeGlxChannelKind]) -> Option<SampleRate> {
    let ap = kinds.contains(&SpikeGlxChannelKind::Ap);
    let lf = kinds.contains(&SpikeGlxChannelKind::Lf);
    let hz = match (ap, lf) {
        (true, false) => 30_000,
        (false, true) => 2_500,
        _ => return None,
    };
    SampleRate::from_ratio(hz, 1).ok()
}

/// The saved channels of a file, in file order.
struct SavedChannels {
    kinds: Vec<SpikeGlxChannelKind>,
    /// Acquisition indices.
    saved: Vec<usize>,
    channels: Vec<ChannelInfo>,
    /// The readout channel (AP or LF index) of each, `None` for the sync channel and NI
    /// channels.
    readout: Vec<Option<usize>>,
}

/// The imec stream's saved channels: kinds, acquisition indices and descriptions.
fn imec_channels(
    p: &MetaReader<'_>,
    saved_count: usize,
    chan_map: &ChanMap,
) -> DspResult<SavedChannels> {
    let acq = match p.meta.get("acqApLfSy") {
        Some(t) => p.counts::<3>("acqApLfSy", t)?,
        None => {
            match chan_map.header.as_slice() {
                [a, l, s, ..] => [*a, *l, *s],
                _ => {
                    let n = p.imro()?.map_or(0, |t| t.entries.len());
                    if n == 0 {
                        return Err(p.missing("acqApLfSy (and no ~snsChanMap header or ~imroTbl to count channels from)"));
                    }
                    [n, n, 1]
                }
            }
        }
    };
    let [n_ap, n_lf, n_sy] = acq;
    let saved_counts = match p.meta.get("snsApLfSy") {
        Some(t) => Some(p.counts::<3>("snsApLfSy", t)?),
        None => None,
    };
    let all = || -> Vec<usize> {
        if chan_map.entries.len() == saved_count {
            let mut v: Vec<usize> = chan_map.entries.iter().map(|e| e.0).collect();
            v.sort_unstable();
            return v;
        }
        if let Some([a, l, s]) = saved_counts
            && a + l + s == saved_count
        {
            return (0..a)
                .chain(n_ap..n_ap + l)
                .chain(n_ap + n_lf..n_ap + n_lf + s)
                .collect();
        }
        (0..saved_count).collect()
    };
    let saved = p.saved_channels(saved_count, all)?;

    let probe_type: i64 = match p.meta.get("imDatPrb_type") {
        Some(t) => t
            .parse()
            .map_err(|_| p.bad("imDatPrb_type", t, "a probe type number"))?,
        None => 0,
    };
    let np1 = NP1_PROBE_TYPES.contains(&probe_type);
    let np2 = NP2_PROBE_TYPES.contains(&probe_type);
    let range_max: f64 = p.parse_required("imAiRangeMax")?;
    let max_int: f64 = match p.meta.get("imMaxInt") {
        Some(t) => t.parse().map_err(|_| p.bad("imMaxInt", t, "a number"))?,
        None if np1 => NP1_MAX_INT,
        None if np2 => NP2_MAX_INT,
        None => {
            return Err(p.missing(&format!(
                "imMaxInt (probe type {probe_type} has no known default)"
            )));
        }
    };
    if !(range_max > 0.0 && max_int > 0.0) {
        return Err(file_error(
            p.path,
            format!("imAiRangeMax {range_max} and imMaxInt {max_int} must both be above 0"),
        ));
    }
    let imro = if np1 { p.imro()? } else { None };
    let imro_gains = imro.filter(|t| t.entries.iter().all(|e| e.len() >= 5));
    let single_gain = |key: &str| -> DspResult<Option<f64>> {
        match p.meta.get(key) {
            Some(t) => t.parse().map(Some).map_err(|_| p.bad(key, t, "a gain")),
            None => Ok(None),
        }
    };
    let ap_single = single_gain("imChan0apGain")?;
    let lf_single = single_gain("imChan0lfGain")?;

    let mut kinds = Vec::with_capacity(saved.len());
    let mut infos = Vec::with_capacity(saved.len());
    let mut readout = Vec::with_capacity(saved.len());
    for &k in &saved {
        let (kind, index) = if k < n_ap {
            (SpikeGlxChannelKind::Ap, k)
        } else if k < n_ap + n_lf {
            (SpikeGlxChannelKind::Lf, k - n_ap)
        } else if k < n_ap + n_lf + n_sy {
            (SpikeGlxChannelKind::Sync, k - n_ap - n_lf)
        } else {
            return Err(file_error(
                p.path,
                format!(
                    "saved channel {k} is beyond the {} acquired channels (AP {n_ap}, LF {n_lf}, SY {n_sy})",
                    n_ap + n_lf + n_sy
                ),
            ));
        };
        let (prefix, field) = match kind {
            SpikeGlxChannelKind::Ap => ("AP", 3),
            SpikeGlxChannelKind::Lf => ("LF", 4),
            _ => ("SY", 0),
        };
        let name = chan_map
            .name(k)
            .unwrap_or_else(|| format!("{prefix}{index}"));
        let info = if kind == SpikeGlxChannelKind::Sync {
            ChannelInfo::new(name)
        } else {
            let gain = match (&imro_gains, kind) {
                (Some(t), _) => {
                    let entry = t.entries.get(index).ok_or_else(|| {
                        file_error(
                            p.path,
                            format!(
                                "~imroTbl has {} entries, none for {prefix} channel {index}",
                                t.entries.len()
                            ),
                        )
                    })?;
                    entry[field]
                }
                (None, SpikeGlxChannelKind::Ap) => match ap_single {
                    Some(g) => g,
                    None if np2 => NP2_DEFAULT_AP_GAIN,
                    None => return Err(p.no_gain(probe_type, "imChan0apGain")),
                },
                (None, _) => lf_single.ok_or_else(|| p.no_gain(probe_type, "imChan0lfGain"))?,
            };
            uv_channel(p, name, range_max, max_int, gain)?
        };
        kinds.push(kind);
        infos.push(info);
        readout.push((kind != SpikeGlxChannelKind::Sync).then_some(index));
    }
    Ok(SavedChannels {
        kinds,
        saved,
        channels: infos,
        readout,
    })
}

/// The NI stream's saved channels: kinds, acquisition indices and descriptions.
fn nidq_channels(
    p: &MetaReader<'_>,
    saved_count: usize,
    chan_map: &ChanMap,
) -> DspResult<SavedChannels> {
    let (key, text) = match (p.meta.get("acqMnMaXaDw"), p.meta.get("snsMnMaXaDw")) {
        (Some(t), _) => ("acqMnMaXaDw", t),
        (None, Some(t)) => ("snsMnMaXaDw", t),
        (None, None) => return Err(p.missing("acqMnMaXaDw or snsMnMaXaDw")),
    };
    let [mn, ma, xa, dw] = p.counts::<4>(key, text)?;
    let saved = p.saved_channels(saved_count, || (0..saved_count).collect())?;
    let range_max: f64 = p.parse_required("niAiRangeMax")?;
    let max_int: f64 = match p.meta.get("niMaxInt") {
        Some(t) => t.parse().map_err(|_| p.bad("niMaxInt", t, "a number"))?,
        None => NI_DEFAULT_MAX_INT,
    };
    if !(range_max > 0.0 && max_int > 0.0) {
        return Err(file_error(
            p.path,
            format!("niAiRangeMax {range_max} and niMaxInt {max_int} must both be above 0"),
        ));
    }
    let mut kinds = Vec::with_capacity(saved.len());
    let mut infos = Vec::with_capacity(saved.len());
    for &k in &saved {
        let (kind, index, prefix) = if k < mn {
            (SpikeGlxChannelKind::Mn, k, "MN")
        } else if k < mn + ma {
            (SpikeGlxChannelKind::Ma, k - mn, "MA")
        } else if k < mn + ma + xa {
            (SpikeGlxChannelKind::Xa, k - mn - ma, "XA")
        } else if k < mn + ma + xa + dw {
            (SpikeGlxChannelKind::Digital, k - mn - ma - xa, "XD")
        } else {
            return Err(file_error(
                p.path,
                format!(
                    "saved channel {k} is beyond the {} acquired channels (MN {mn}, MA {ma}, XA {xa}, DW {dw})",
                    mn + ma + xa + dw
                ),
            ));
        };
        let name = chan_map
            .name(k)
            .unwrap_or_else(|| format!("{prefix}{index}"));
        let info = match kind {
            SpikeGlxChannelKind::Digital => ChannelInfo::new(name),
            SpikeGlxChannelKind::Mn => {
                uv_channel(p, name, range_max, max_int, p.parse_required("niMNGain")?)?
            }
            SpikeGlxChannelKind::Ma => {
                uv_channel(p, name, range_max, max_int, p.parse_required("niMAGain")?)?
            }
            _ => uv_channel(p, name, range_max, max_int, 1.0)?,
        };
        kinds.push(kind);
        infos.push(info);
    }
    let readout = vec![None; saved.len()];
    Ok(SavedChannels {
        kinds,
        saved,
        channels: infos,
        readout,
    })
}

/// A channel in µV: `range / max_int / gain × 10⁶` per count.
fn uv_channel(
    p: &MetaReader<'_>,
    name: String,
    range_max: f64,
    max_int: f64,
    gain: f64,
) -> DspResult<ChannelInfo> {
    if !(gain.is_finite() && gain > 0.0) {
        return Err(file_error(
            p.path,
            format!("channel {name} has gain {gain}: a gain must be above 0"),
        ));
    }
    // Each factor may be finite and above 0 and the f32 µV per count still 0 or infinite
    // (`niMAGain=1e60`, `imAiRangeMax=inf`): such a channel would read as all zeros or inf.
    let uv_per_count = (range_max / max_int / gain * MICROVOLTS_PER_VOLT) as f32;
    if !(uv_per_count.is_finite() && uv_per_count > 0.0) {
        return Err(file_error(
            p.path,
            format!(
                "channel {name}: range {range_max} / max int {max_int} / gain {gain} is \
                 {uv_per_count} µV per count, not a finite scale above 0"
            ),
        ));
    }
    Ok(ChannelInfo {
        name,
        gain: uv_per_count,
        offset: 0.0,
        unit: SignalUnit::Microvolt,
    })
}

/// `~snsChanMap`: its header counts and `(acquisition index, name)` entries.
#[derive(Debug, Default)]
struct ChanMap {
    header: Vec<usize>,
    entries: Vec<(usize, String)>,
}

impl ChanMap {
    fn name(&self, acq: usize) -> Option<String> {
        self.entries
            .iter()
            .find(|e| e.0 == acq)
            .map(|e| e.1.clone())
    }
}

/// `~imroTbl` entries (after the header), each a list of numbers.
#[derive(Debug)]
struct Imro {
    entries: Vec<Vec<f64>>,
}

/// Typed access to a `.meta`, with errors naming the file.
struct MetaReader<'a> {
    meta: &'a SpikeGlxMeta,
    path: &'a Path,
}

impl MetaReader<'_> {
    fn missing(&self, key: &str) -> DspError {
        file_error(self.path, format!("missing {key}"))
    }

    fn bad(&self, key: &str, value: &str, expected: &str) -> DspError {
        file_error(self.path, format!("{key}={value} is not {expected}"))
    }

    fn no_gain(&self, probe_type: i64, key: &str) -> DspError {
        DspError::UnsupportedFormat(format!(
            "{}: no gain for probe type {probe_type}: no {key} and no per-channel gains in ~imroTbl",
            self.path.display()
        ))
    }

    fn required(&self, key: &str) -> DspResult<&str> {
        self.meta.get(key).ok_or_else(|| self.missing(key))
    }

    fn parse_required<T: std::str::FromStr>(&self, key: &str) -> DspResult<T> {
        let text = self.required(key)?;
        text.parse()
            .map_err(|_| self.bad(key, text, std::any::type_name::<T>()))
    }

    /// `N` comma-separated counts.
    fn counts<const N: usize>(&self, key: &str, text: &str) -> DspResult<[usize; N]> {
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
    fn saved_channels(
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

    fn chan_map(&self) -> DspResult<ChanMap> {
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

    fn imro(&self) -> DspResult<Option<Imro>> {
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

/// A SpikeGLX `.bin` + `.meta` recording (imec AP/LF or NI stream), memory-mapped.
///
/// Channels are the saved channels in file order, named from `~snsChanMap`, scaled to µV by
/// the gain rules of the module documentation; the sync channel and NI digital words are
/// unscaled. The `.meta` entries are the recording's metadata. The file must not be modified
/// or truncated while it is open.
#[derive(Debug)]
pub struct SpikeGlxRecording {
    raw: RawData,
    meta_path: PathBuf,
    meta: SpikeGlxMeta,
    stream: SpikeGlxStream,
    kinds: Vec<SpikeGlxChannelKind>,
    saved: Vec<usize>,
    warnings: Vec<String>,
}

impl SpikeGlxRecording {
    /// Opens `path` (the `.bin`, or its `.meta`) and maps the data.
    ///
    /// Errors name the file: a missing `.meta`, missing or malformed keys, a `fileSizeBytes`
    /// that disagrees with the file, an unsupported stream type or probe. A partial last frame
    /// is dropped and reported in [`SpikeGlxRecording::warnings`].
    pub fn open(path: impl AsRef<Path>) -> DspResult<Self> {
        let (bin, meta_path, meta) = SpikeGlxLayout::read_meta(path.as_ref())?;
        let map = MappedFile::open(&bin)?;
        let len = map.bytes().len() as u64;
        let layout = SpikeGlxLayout::from_parts(bin, meta_path, meta, len)?;
        let raw = RawData::new(map, 0, layout.info)?;
        Ok(Self {
            raw,
            meta_path: layout.meta_path,
            meta: layout.meta,
            stream: layout.stream,
            kinds: layout.kinds,
            saved: layout.saved,
            warnings: layout.warnings,
        })
    }

    /// Problems that did not stop the file from opening (a dropped partial frame).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The `.bin` file.
    pub fn path(&self) -> &Path {
        self.raw.path()
    }

    /// The `.meta` file.
    pub fn meta_path(&self) -> &Path {
        &self.meta_path
    }

    /// The parsed `.meta`.
    pub fn meta(&self) -> &SpikeGlxMeta {
        &self.meta
    }

    /// The stream type.
    pub fn stream(&self) -> SpikeGlxStream {
        self.stream
    }

    /// What each saved channel carries, in file order.
    pub fn channel_kinds(&self) -> &[SpikeGlxChannelKind] {
        &self.kinds
    }

    /// The acquisition index of each saved channel, in file order.
    pub fn saved_channels(&self) -> &[usize] {
        &self.saved
    }

    /// The most threads one large read is split across (see
    /// [`BinaryRecording::read_threads`](crate::BinaryRecording::read_threads)).
    pub fn read_threads(&self) -> usize {
        self.raw.read_threads()
    }

    /// Sets the most threads one large read is split across (0 counts as 1).
    pub fn set_read_threads(&mut self, threads: usize) {
        self.raw.set_read_threads(threads);
    }
}

source_via_raw!(SpikeGlxRecording);

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

    /// Found by the `spikeglx_meta` fuzz target: a gain of 2.2e55 is finite and above 0, but
    /// the f32 µV per count it gives is 0.
    #[test]
    fn scales_that_are_not_finite_f32_above_0_are_refused() {
        let nidq = "typeThis=nidq\nniSampRate=25000\nniAiRangeMax=5\nniMaxInt=32768\n\
                    niMNGain=200\nniMAGain=2\nsnsMnMaXaDw=2,1,2,1\nnSavedChans=6\n";
        let info = |text: &str| {
            SpikeGlxMeta::parse(text, Path::new("t.nidq.meta"))
                .expect("key=value text")
                .recording_info(Path::new("t.nidq.bin"), Path::new("t.nidq.meta"), 1200)
        };
        assert_eq!(info(nidq).expect("valid meta").channels.len(), 6);
        for (from, to) in [
            ("niMAGain=2", "niMAGain=2.2e55"),
            ("niAiRangeMax=5", "niAiRangeMax=inf"),
            ("niAiRangeMax=5", "niAiRangeMax=1e300"),
            ("niMaxInt=32768", "niMaxInt=inf"),
        ] {
            let e = info(&nidq.replace(from, to)).expect_err(to);
            assert!(
                matches!(e, DspError::Io { .. })
                    && e.to_string().contains("not a finite scale above 0"),
                "{to}: {e}"
            );
        }
        let imec = "typeThis=imec\nimSampRate=30000\nnSavedChans=1\nacqApLfSy=1,0,0\n\
                    imAiRangeMax=inf\nimChan0apGain=80\nimDatPrb_type=21\n";
        let e = SpikeGlxMeta::parse(imec, Path::new("t.ap.meta"))
            .expect("key=value text")
            .recording_info(Path::new("t.ap.bin"), Path::new("t.ap.meta"), 200)
            .expect_err("infinite range");
        assert!(e.to_string().contains("AP0"), "{e}");
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
