//! The windows a report draws: chosen deterministically (or where asked), read on the devices
//! raw and after each stage of a pipeline in one pass (each stage's output is the pipeline cut
//! after it, read back by dspk-stream's `run_window_cuts` as the chain runs: the same values
//! `dspk preprocess` writes there), reduced to the pictures' columns, with the raw values'
//! per-channel statistics and the spikes the synthetic recording planted there.

use std::sync::Arc;

use dspk_kernels::ChannelStats;
use dspk_stream::{
    DecodeRoute, Fits, PassDevice, PreprocessOptions, halo_window, preprocess_plan, run_window_cuts,
};
use dspk_types::{
    DspError, DspResult, NoProgress, PipelineSpec, RecordingInfo, RecordingSource, StageSpec,
    SyntheticRecording,
};

use crate::draw::heat::COLUMNS;
use crate::model::{Panel, SpikeMark, WindowView};
use crate::parallel::{map_parts, map_units};
use crate::values::{MAD_TO_STD, envelope, extreme_columns, mad, percentiles};

/// How many windows a report draws when none are asked for (fewer on a recording shorter
/// than that many windows: as many as fit end to end, at least one).
pub const DEFAULT_WINDOWS: u64 = 3;

/// What to draw.
#[derive(Debug, Clone, Default)]
pub struct WindowRequest {
    /// The windows' first samples (empty: [`DEFAULT_WINDOWS`] spread evenly over the
    /// recording: window `k` of `n` starts `(2k+1)/2n` of the way to the last start there is).
    pub at: Vec<u64>,
    /// Samples per window (`None`: one second, or the whole recording when shorter).
    pub samples: Option<u64>,
    /// Channels whose traces are drawn (`None`: four spread over the recording's).
    pub trace_channels: Option<Vec<usize>>,
}

/// The windows read, with what the raw values say of each channel.
#[derive(Debug, Clone)]
pub struct Collected {
    /// The windows, each raw and after each stage.
    pub windows: Vec<WindowView>,
    /// Each channel's statistics over the raw windows together.
    pub stats: Vec<ChannelStats>,
    /// Each channel's 1.4826 × MAD over the raw windows together.
    pub mad_std: Vec<f64>,
    /// Samples per channel the statistics are of.
    pub samples: u64,
}

/// The first samples of the windows `request` asks for, each `len` samples long.
///
/// # Errors
/// A window that would end past the recording or cross a segment boundary, named by its time.
pub fn window_starts(info: &RecordingInfo, request: &WindowRequest) -> DspResult<(Vec<u64>, u64)> {
    let second = info.sample_rate.duration_for_samples(1)?;
    let one_second = (1.0 / second.as_seconds_f64()).round().max(1.0) as u64;
    let len = request.samples.unwrap_or(one_second).min(info.samples);
    if len == 0 {
        return Err(DspError::config(format!(
            "a report needs samples to draw: the recording {} has none",
            info.name
        )));
    }
    let starts = if request.at.is_empty() {
        let room = info.samples - len;
        let n = (info.samples / len).clamp(1, DEFAULT_WINDOWS);
        (0..n)
            .map(|k| {
                let at = u128::from(room) * u128::from(2 * k + 1) / u128::from(2 * n);
                u64::try_from(at).expect("a fraction of a u64 fits a u64")
            })
            .collect()
    } else {
        request.at.clone()
    };
    let segments = info.segments();
    for &start in &starts {
        let end = start
            .checked_add(len)
            .ok_or_else(|| DspError::config("a report window's end overflows"))?;
        let segment = segments
            .get(segments.containing(start))
            .map_or(0..info.samples, |s| s.range());
        if end > info.samples || end > segment.end {
            let at = info.sample_rate.duration_for_samples(start)?;
            return Err(DspError::config(format!(
                "a report window of {len} samples from {at} (sample {start}) ends past the {}: \
                 it holds samples {}..{}",
                if segment.end < info.samples {
                    "segment it starts in"
                } else {
                    "recording"
                },
                segment.start,
                segment.end,
            )));
        }
    }
    Ok((starts, len))
}

/// Four channels spread over `count` (fewer where there are fewer).
pub fn default_trace_channels(count: usize) -> Vec<usize> {
    let mut out: Vec<usize> = [1, 3, 5, 7]
        .iter()
        .map(|k| k * count / 8)
        .filter(|&c| c < count)
        .collect();
    out.dedup();
    out
}

/// Reads the windows `request` asks for from `source` on `devices`: raw, then after each stage
/// of `pipeline` that runs on the recording (its fitted stages' parameters in `fits`), and marks
/// the spikes `truth` planted there.
///
/// # Errors
/// Windows outside the recording, trace channels that do not exist, a pipeline that cannot run
/// on the recording, and what the device pass refuses.
pub fn collect(
    devices: &[PassDevice],
    source: &Arc<dyn RecordingSource>,
    pipeline: Option<(&PipelineSpec, &Fits)>,
    request: &WindowRequest,
    route: DecodeRoute,
    truth: Option<&SyntheticRecording>,
) -> DspResult<Collected> {
    let info = source.info().clone();
    let channels = info.channel_count();
    let (starts, len) = window_starts(&info, request)?;
    let traced = request
        .trace_channels
        .clone()
        .unwrap_or_else(|| default_trace_channels(channels));
    if let Some(&bad) = traced.iter().find(|&&c| c >= channels) {
        return Err(DspError::InvalidChannel {
            index: bad,
            count: channels,
        });
    }
    let empty = (
        PipelineSpec {
            stages: Vec::new(),
            ..PipelineSpec::default()
        },
        Fits::default(),
    );
    let (spec, fits) = pipeline.unwrap_or((&empty.0, &empty.1));
    spec.check(&info)?;
    let plan = preprocess_plan(
        devices,
        &info,
        spec,
        fits,
        &PreprocessOptions {
            route,
            ..PreprocessOptions::default()
        },
    )?;
    let halo_windows: Vec<_> = starts
        .iter()
        .enumerate()
        .map(|(i, &s)| halo_window(&info, i, s..s + len, plan.halo_before, plan.halo_after))
        .collect();
    // Raw, then the pipeline cut after each stage that runs: (stages, title, divisor, unit).
    let mut cuts = vec![(0usize, "raw".to_string(), 1.0f64, "µV")];
    let mut unit = "µV";
    for (planned, stage) in plan.stages.iter().zip(&spec.stages) {
        if !planned.applied {
            continue;
        }
        if matches!(stage, StageSpec::Whiten(_)) {
            unit = "whitened";
        }
        let cut = planned.index + 1;
        cuts.push(match stage {
            StageSpec::Scale(s) if s.gain != 1.0 => (
                cut,
                format!("after {cut}: {} (÷{})", planned.kind, s.gain),
                s.gain,
                unit,
            ),
            _ => (cut, format!("after {cut}: {}", planned.kind), 1.0, unit),
        });
    }
    let mut views: Vec<WindowView> = starts
        .iter()
        .map(|&s| {
            let spikes = truth
                .and_then(|t| t.planted_spikes(s..s + len).ok())
                .unwrap_or_default()
                .into_iter()
                .filter(|p| traced.contains(&p.channel) && (s..s + len).contains(&p.trough))
                .map(|p| SpikeMark {
                    channel: p.channel,
                    sample: p.trough,
                })
                .collect();
            Ok(WindowView {
                start_sample: s,
                end_sample: s + len,
                start_s: info.sample_rate.duration_for_samples(s)?.as_seconds_f64(),
                panels: Vec::new(),
                trace_channels: traced.clone(),
                spikes,
            })
        })
        .collect::<DspResult<_>>()?;
    let mut pooled: Vec<Vec<f32>> = vec![Vec::with_capacity(len as usize * starts.len()); channels];
    // One pass: the chain runs once on each window and is read back after every stage drawn.
    let cut_counts: Vec<usize> = cuts.iter().map(|(cut, ..)| *cut).collect();
    let mut at = 0usize;
    run_window_cuts(
        devices,
        source.clone(),
        spec,
        fits,
        halo_windows,
        &cut_counts,
        route,
        &NoProgress,
        |_, each| {
            for ((cut, title, divide, unit), values) in cuts.iter().zip(each) {
                let scaled: Vec<f32>;
                let values: &[f32] = if *divide == 1.0 {
                    values
                } else {
                    scaled = values
                        .iter()
                        .map(|&v| (f64::from(v) / divide) as f32)
                        .collect();
                    &scaled
                };
                if *cut == 0 {
                    let n = values.len() / channels.max(1);
                    for (c, row) in pooled.iter_mut().enumerate() {
                        row.extend_from_slice(&values[c * n..(c + 1) * n]);
                    }
                }
                views[at]
                    .panels
                    .push(panel(title, unit, values, channels, &traced));
            }
            at += 1;
            Ok(())
        },
    )?;
    let work = pooled.iter().map(Vec::len).sum();
    let stats = map_units(channels, work, |c| ChannelStats::from_values(&pooled[c]));
    let mad_std = map_units(channels, work, |c| mad(&pooled[c]) * MAD_TO_STD);
    Ok(Collected {
        windows: views,
        stats,
        mad_std,
        samples: len * starts.len() as u64,
    })
}

/// One panel of a window's `values` (channel-major, in `unit`).
fn panel(title: &str, unit: &str, values: &[f32], channels: usize, traced: &[usize]) -> Panel {
    let n = values.len() / channels.max(1);
    let (heat, columns) = extreme_columns(values, channels, COLUMNS);
    let traces = traced
        .iter()
        .map(|&c| envelope(&values[c * n..(c + 1) * n], COLUMNS))
        .collect();
    let (min, max) = map_parts(values.len(), values.len(), |part| {
        values[part]
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(f64::from(v)), hi.max(f64::from(v)))
            })
    })
    .into_iter()
    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (a, b)| {
        (lo.min(a), hi.max(b))
    });
    let range = percentiles(values, &[0.5, 99.5]);
    let (vmin, vmax) = (range[0], range[1]);
    Panel {
        title: title.to_string(),
        unit: unit.to_string(),
        vmin,
        vmax,
        min,
        max,
        heat,
        columns,
        traces,
    }
}

#[cfg(test)]
mod tests {
    use dspk_types::{RecordingSource, SyntheticConfig, SyntheticRecording};

    use super::*;

    fn info(samples: u64) -> RecordingInfo {
        SyntheticRecording::new(SyntheticConfig::default().with_samples(samples))
            .unwrap()
            .info()
            .clone()
    }

    #[test]
    fn default_windows_spread_over_the_recording() {
        let (starts, len) = window_starts(&info(1_800_000), &WindowRequest::default()).unwrap();
        assert_eq!(len, 30_000);
        let room = 1_800_000 - 30_000;
        assert_eq!(starts, vec![room / 6, room / 2, room * 5 / 6]);
        // Two seconds hold two windows; half a second one, the whole recording.
        assert_eq!(
            window_starts(&info(60_000), &WindowRequest::default())
                .unwrap()
                .0,
            vec![7_500, 22_500]
        );
        assert_eq!(
            window_starts(&info(15_000), &WindowRequest::default()).unwrap(),
            (vec![0], 15_000)
        );
    }

    #[test]
    fn a_window_past_the_end_is_refused_with_its_time() {
        let request = WindowRequest {
            at: vec![45_000],
            ..WindowRequest::default()
        };
        let e = window_starts(&info(60_000), &request)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("1.5 s") && e.contains("sample 45000") && e.contains("0..60000"),
            "{e}"
        );
    }

    #[test]
    fn trace_channels_spread_over_the_probe() {
        assert_eq!(default_trace_channels(384), vec![48, 144, 240, 336]);
        assert_eq!(default_trace_channels(2), vec![0, 1]);
        assert_eq!(default_trace_channels(1), vec![0]);
    }
}
