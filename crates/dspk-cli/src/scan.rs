//! `dspk scan`, the main job: per-channel statistics on the device, dead and noisy channels
//! flagged, a channel mask on request, throughput.

use std::fmt::Write as _;
use std::sync::Arc;

use dspk_device::describe;
use dspk_kernels::{ChannelStats, ChannelStatsKernel};
use dspk_types::{ChannelMask, ChunkSchedule, RecordingSource, SlicedRecording};
use serde::Serialize;
use serde_json::json;

use crate::error::{CliResult, Context as _};
use crate::input::{Input, Origin, TimeOptions};
use crate::pass::{DecodePath, Scaling, device_pass, window_samples};
use crate::progress::Progress;
use crate::report::{exact_seconds, index_list, seconds_text, unit_name};
use crate::{Ctx, write_atomically};

/// A channel is dead (flat) when its standard deviation is below this, in its unit (µV for
/// voltages): far below any amplifier's noise, above `f32` rounding of a constant.
pub(crate) const DEAD_STD: f64 = 1e-3;

/// A channel is noisy when its standard deviation is more than this many robust standard
/// deviations (1.4826 × MAD) above the median of the live channels' …
pub(crate) const NOISY_MADS: f64 = 8.0;

/// … and more than this many times the median.
pub(crate) const NOISY_RATIO: f64 = 3.0;

/// MAD × this estimates the standard deviation of normally distributed values.
const MAD_TO_STD: f64 = 1.4826;

/// The options of `dspk scan` after parsing.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScanOptions {
    /// The part of the recording to scan.
    pub(crate) time: TimeOptions,
    /// Samples per window (default: one second, capped by the device).
    pub(crate) window_samples: Option<u64>,
    /// Where to write the channel mask.
    pub(crate) mask: Option<std::path::PathBuf>,
}

/// Why a channel is flagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Flag {
    /// Flat: no variation.
    Dead,
    /// Far noisier than the other channels.
    Noisy,
}

/// The flags of every channel and the figures behind them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Classification {
    /// One per channel.
    pub(crate) flags: Vec<Option<Flag>>,
    /// The median standard deviation of the channels that are not dead (NaN when none).
    pub(crate) median_std: f64,
    /// The standard deviation above which a channel is noisy.
    pub(crate) noisy_threshold: f64,
}

impl Classification {
    /// Channels flagged `flag`, ascending.
    pub(crate) fn indices(&self, flag: Flag) -> Vec<usize> {
        self.flags
            .iter()
            .enumerate()
            .filter_map(|(i, f)| (*f == Some(flag)).then_some(i))
            .collect()
    }
}

/// Flags dead channels (flat: `max == min` or std below [`DEAD_STD`]) and noisy ones (std
/// above both median + [`NOISY_MADS`] × 1.4826 × MAD and [`NOISY_RATIO`] × median, the median
/// and MAD taken over the channels that are not dead).
pub(crate) fn classify(stats: &[ChannelStats]) -> Classification {
    let stds: Vec<f64> = stats.iter().map(ChannelStats::std).collect();
    let dead: Vec<bool> = stats
        .iter()
        .zip(&stds)
        .map(|(s, &std)| s.count > 0 && (s.max == s.min || std < DEAD_STD))
        .collect();
    let live: Vec<f64> = stds
        .iter()
        .zip(&dead)
        .filter(|&(s, &d)| !d && s.is_finite())
        .map(|(&s, _)| s)
        .collect();
    let median_std = median(&live);
    let deviations: Vec<f64> = live.iter().map(|s| (s - median_std).abs()).collect();
    let mad = median(&deviations);
    let noisy_threshold =
        (median_std + NOISY_MADS * MAD_TO_STD * mad).max(NOISY_RATIO * median_std);
    let flags = stds
        .iter()
        .zip(&dead)
        .map(|(&std, &d)| {
            if d {
                Some(Flag::Dead)
            } else if std > noisy_threshold {
                Some(Flag::Noisy)
            } else {
                None
            }
        })
        .collect();
    Classification {
        flags,
        median_std,
        noisy_threshold,
    }
}

/// The median (NaN for no values).
fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

/// One channel's row of the table and the JSON.
#[derive(Debug, Serialize)]
struct ChannelRow<'a> {
    index: usize,
    name: &'a str,
    unit: String,
    count: u64,
    min: f64,
    max: f64,
    mean: f64,
    rms: f64,
    std: f64,
    flag: Option<Flag>,
}

/// Runs `dspk scan` on an open recording.
pub(crate) fn run(ctx: &Ctx, input: &Input, opts: &ScanOptions) -> CliResult<String> {
    let info = input.info().clone();
    let range = opts.time.range(&info)?;
    let (target, client) = ctx.client()?;
    let device = describe(&client);

    let source: Arc<dyn RecordingSource> = if range == (0..info.samples) {
        input.source.clone()
    } else {
        Arc::new(SlicedRecording::new(
            input.source.clone(),
            range.clone(),
            None,
        )?)
    };
    let channels = info.channel_count();
    let len = range.end - range.start;
    let window = window_samples(&client, &info, opts.window_samples)?.min(len);
    let schedule = ChunkSchedule::full_recording(len, window, 0, 0)?;
    let scaling = Scaling::microvolts(&info);
    let mut kernel = ChannelStatsKernel::new(&client, channels, window as usize)?;
    let progress = Progress::bytes("scan", len.saturating_mul(info.frame_bytes() as u64));
    let report = device_pass(
        &client,
        &*source,
        &schedule,
        &scaling,
        DecodePath::from_env()?,
        &progress,
        |w, decoded| {
            // Halos are 0 here, but only the owned part counts: every sample once. Read back
            // every few windows, so the host is not held up by the device at each one.
            kernel.accumulate_deferred(decoded, w.valid_local.clone())
        },
    )?;
    let totals = kernel.finish_deferred()?;
    progress.finish();

    let class = classify(&totals);
    let dead = class.indices(Flag::Dead);
    let noisy = class.indices(Flag::Noisy);
    let mut flagged: Vec<usize> = dead.iter().chain(&noisy).copied().collect();
    flagged.sort_unstable();
    let mask = ChannelMask::from_disabled_indices(channels, &flagged)?;
    if let Some(path) = &opts.mask {
        let text = serde_json::to_string_pretty(&mask).expect("a channel mask serialises") + "\n";
        write_atomically(path, text.as_bytes()).context(format!("--mask {}", path.display()))?;
    }

    let wall_s = report.wall.as_secs_f64();
    let scanned = info.sample_rate.duration_for_samples(len)?;
    let mb = report.stored_bytes as f64 / 1e6;
    let throughput_mb_s = mb / wall_s;
    let realtime_factor = scanned.as_seconds_f64() / wall_s;
    let start_time = info.sample_rate.duration_for_samples(range.start)?;
    let end_time = info.sample_rate.duration_for_samples(range.end)?;

    let rows: Vec<ChannelRow<'_>> = totals
        .iter()
        .enumerate()
        .map(|(i, s)| ChannelRow {
            index: i,
            name: &info.channels[i].name,
            unit: unit_name(&scaling.units[i]),
            count: s.count,
            min: s.min,
            max: s.max,
            mean: s.mean(),
            rms: s.rms(),
            std: s.std(),
            flag: class.flags[i],
        })
        .collect();

    if ctx.json {
        let planted = match &input.origin {
            Origin::Synthetic { dead, noisy } => json!({ "dead": dead, "noisy": noisy }),
            Origin::File { .. } => serde_json::Value::Null,
        };
        let value = json!({
            "recording": input.label(),
            "name": info.name,
            "runtime": target,
            "device": device.adapter_name,
            "channel_count": channels,
            "sample_rate": info.sample_rate,
            "start_sample": range.start,
            "end_sample": range.end,
            "start": exact_seconds(start_time),
            "end": exact_seconds(end_time),
            "duration_s": scanned.as_seconds_f64(),
            "window_samples": window,
            "decode": report.decode.name(),
            "windows": report.windows,
            "channels": rows,
            "dead": dead,
            "noisy": noisy,
            "median_std": class.median_std,
            "noisy_threshold": class.noisy_threshold,
            "mask": mask,
            "mask_path": opts.mask.as_deref().map(|p| p.display().to_string()),
            "planted": planted,
            "stored_bytes": report.stored_bytes,
            "wall_s": wall_s,
            "throughput_mb_s": throughput_mb_s,
            "realtime_factor": realtime_factor,
        });
        return Ok(serde_json::to_string_pretty(&value).expect("json values serialise") + "\n");
    }

    let mut out = String::new();
    let _ = writeln!(
        out,
        "scan of {} ({}): {channels} channels at {}, {}, samples {}..{} ({} to {})",
        input.label(),
        info.name,
        info.sample_rate,
        info.format.name(),
        range.start,
        range.end,
        seconds_text(start_time),
        seconds_text(end_time),
    );
    let _ = writeln!(
        out,
        "on {target}: {} ({}), windows of {window} samples",
        device.adapter_name, device.kind
    );
    let common = scaling.common_unit().map(unit_name);
    table(&mut out, &rows, common.as_deref());
    let unit = common
        .as_deref()
        .map(|u| format!(" {u}"))
        .unwrap_or_default();
    let _ = writeln!(out, "dead:  {} ({} flat)", index_list(&dead), dead.len());
    let _ = writeln!(
        out,
        "noisy: {} ({} with std above {:.3}{unit}; median std {:.3}{unit})",
        index_list(&noisy),
        noisy.len(),
        class.noisy_threshold,
        class.median_std,
    );
    if let Some(path) = &opts.mask {
        let _ = writeln!(
            out,
            "mask:  {} ({} of {channels} channels enabled)",
            path.display(),
            mask.enabled_count()
        );
    }
    let _ = writeln!(
        out,
        "throughput: {mb:.2} MB ({} s of recording) in {wall_s:.3} s: {throughput_mb_s:.1} MB/s, \
         {realtime_factor:.1}× real time",
        exact_seconds(scanned),
    );
    Ok(out)
}

/// The per-channel table; flagged rows end in `<< DEAD` / `<< NOISY`.
fn table(out: &mut String, rows: &[ChannelRow<'_>], common_unit: Option<&str>) {
    let name_width = rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    match common_unit {
        Some(u) => {
            let _ = writeln!(out, "per-channel statistics in {u}:");
        }
        None => {
            let _ = writeln!(out, "per-channel statistics, each in its channel's unit:");
        }
    }
    let _ = write!(
        out,
        "{:>5}  {:<name_width$}  {:>11}  {:>11}  {:>11}  {:>11}  {:>11}",
        "ch", "name", "min", "max", "mean", "rms", "std"
    );
    if common_unit.is_none() {
        let _ = write!(out, "  unit");
    }
    let _ = writeln!(out, "  flag");
    for r in rows {
        let _ = write!(
            out,
            "{:>5}  {:<name_width$}  {:>11.3}  {:>11.3}  {:>11.3}  {:>11.3}  {:>11.3}",
            r.index, r.name, r.min, r.max, r.mean, r.rms, r.std
        );
        if common_unit.is_none() {
            let _ = write!(out, "  {}", r.unit);
        }
        match r.flag {
            Some(Flag::Dead) => out.push_str("  << DEAD"),
            Some(Flag::Noisy) => out.push_str("  << NOISY"),
            None => {}
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A channel with `n` normal-ish values of standard deviation about `std` around `mean`.
    fn channel(seed: u64, n: usize, mean: f32, std: f32) -> ChannelStats {
        let mut x = seed | 1;
        let values: Vec<f32> = (0..n)
            .map(|_| {
                // Sum of 4 uniforms in [-0.5, 0.5): variance 4/12.
                let mut s = 0.0f32;
                for _ in 0..4 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    s += (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
                }
                mean + s * std / (4.0f32 / 12.0).sqrt()
            })
            .collect();
        ChannelStats::from_values(&values)
    }

    #[test]
    fn planted_channels_are_found() {
        let seed = 0x5ca1_ab1e_u64;
        let mut stats: Vec<ChannelStats> = (0..64)
            .map(|c| channel(seed + c, 5000, 2.0, 9.0 + (c % 5) as f32 * 0.5))
            .collect();
        stats[5] = ChannelStats::from_values(&[-3.25; 5000]);
        stats[40] = channel(seed + 999, 5000, 0.0, 75.0);
        stats[41] = channel(seed + 998, 5000, -4.0, 45.0);
        let c = classify(&stats);
        assert_eq!(c.indices(Flag::Dead), vec![5], "seed {seed}");
        assert_eq!(c.indices(Flag::Noisy), vec![40, 41], "seed {seed}");
        assert!((c.median_std - 10.0).abs() < 1.0, "median {}", c.median_std);
    }

    #[test]
    fn a_uniform_probe_flags_nothing() {
        let seed = 0xfeed_u64;
        let stats: Vec<ChannelStats> = (0..384)
            .map(|c| channel(seed + c, 3000, 0.0, 10.0))
            .collect();
        let c = classify(&stats);
        assert!(
            c.flags.iter().all(Option::is_none),
            "seed {seed}: {:?}",
            c.flags
        );
    }

    #[test]
    fn tiny_noise_is_dead_and_medians_are_right() {
        let mut stats = vec![channel(1, 1000, 0.0, 10.0); 3];
        stats.push(channel(7, 1000, 100.0, 1e-5));
        let c = classify(&stats);
        assert_eq!(c.indices(Flag::Dead), vec![3]);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        // Every channel dead: nothing noisy, no panic.
        let flat = vec![ChannelStats::from_values(&[0.0; 10]); 4];
        let c = classify(&flat);
        assert_eq!(c.indices(Flag::Dead), vec![0, 1, 2, 3]);
        assert!(c.indices(Flag::Noisy).is_empty());
    }
}
