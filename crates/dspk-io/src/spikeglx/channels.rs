//! What each saved channel of a SpikeGLX stream carries, and its µV per count.

use dspk_types::{
    ChannelInfo, ChannelKind, DspResult, MICROVOLTS_PER_VOLT, SampleRate, SignalUnit,
};

use super::meta::{ChanMap, MetaReader};
use crate::raw::file_error;

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

/// The nominal rate of an imec file: 30 kHz for AP channels, 2.5 kHz for LF channels (the
/// probes' sample clocks; `imSampRate` is SpikeGLX's calibration of it). `None` for a file
/// with neither or both kinds.
pub(super) fn imec_nominal_rate(kinds: &[SpikeGlxChannelKind]) -> Option<SampleRate> {
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
pub(super) struct SavedChannels {
    pub(super) kinds: Vec<SpikeGlxChannelKind>,
    /// Acquisition indices.
    pub(super) saved: Vec<usize>,
    pub(super) channels: Vec<ChannelInfo>,
    /// The readout channel (AP or LF index) of each, `None` for the sync channel and NI
    /// channels.
    pub(super) readout: Vec<Option<usize>>,
}

/// The imec stream's saved channels: kinds, acquisition indices and descriptions.
pub(super) fn imec_channels(
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
            ChannelInfo {
                kind: ChannelKind::Sync,
                ..ChannelInfo::new(name)
            }
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
pub(super) fn nidq_channels(
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
            SpikeGlxChannelKind::Digital => ChannelInfo {
                kind: ChannelKind::Digital,
                ..ChannelInfo::new(name)
            },
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
        kind: ChannelKind::Signal,
    })
}
