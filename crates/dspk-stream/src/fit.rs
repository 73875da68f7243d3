//! The fitting pass of fitted stages (whitening, centring): the chain before the stage, run on the
//! stage's fit windows (a seeded, stated choice), its output accumulated on the device, the
//! result solved on the host in `f64` — once per recording, on the first device, so that every
//! window, device and job applies the same fitted data. A stage whose spec names a matrix file
//! (`matrix`) takes that matrix instead, checked against the recording's channels.

use std::ops::Range;
use std::sync::Arc;

use dspk_ops::center::MeanKernel;
use dspk_ops::whiten::{CovarianceKernel, WhiteningMatrix, fit_windows};
use dspk_ops::{Fits, Span, build};
use dspk_types::{
    DspError, DspResult, EdgeMode, HaloWindow, PipelineSpec, RecordingInfo, RecordingSource,
    StageSpec,
};

use crate::preprocess::{rows_of, segment_of};
use crate::scan::{ScanOptions, scan_on};
use crate::{DecodeRoute, DevicePass, Flow, PassDevice};

/// dspk's own bad-channel detection, as a detecting `interpolate_bad` stage uses it: the
/// channels a scan of the whole of `source` (raw values in µV, on all of `devices`) flags dead
/// or noisy ([`crate::classify`]), ascending — what `dspk scan` reports for the recording.
///
/// # Errors
/// What the scan refuses.
pub fn detect_bad_channels(
    devices: &[PassDevice],
    source: &Arc<dyn RecordingSource>,
    route: DecodeRoute,
) -> DspResult<Vec<usize>> {
    let options = ScanOptions {
        route,
        ..ScanOptions::default()
    };
    let found = scan_on(devices, source.clone(), &options)?;
    let mut bad = found.dead();
    bad.extend(found.noisy());
    bad.sort_unstable();
    bad.dedup();
    Ok(bad)
}

/// `fits` completed with every fitted stage of `spec` it lacks, in stage order: whitening and
/// centring fitted on the first of `devices`, a detecting interpolation's bad channels found by
/// a scan of the whole recording on all of them ([`detect_bad_channels`]).
///
/// # Errors
/// What the pass or the stages refuse.
pub fn fit(
    devices: &[PassDevice],
    source: &Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    mut fits: Fits,
    route: DecodeRoute,
) -> DspResult<Fits> {
    let Some(device) = devices.first() else {
        return Ok(fits);
    };
    let client = &device.client;
    let info = source.info().clone();
    for (index, stage) in spec.stages.iter().enumerate() {
        if let StageSpec::InterpolateBad(i) = stage
            && i.detect
            && !fits.bad_channels.contains_key(&index)
        {
            fits.bad_channels
                .insert(index, detect_bad_channels(devices, source, route)?);
            continue;
        }
        if let StageSpec::Center(c) = stage
            && !fits.centers.contains_key(&index)
        {
            let means = fit_means(client, source, spec, &fits, index, &c.fit, route)?;
            fits.centers.insert(index, means);
            continue;
        }
        let StageSpec::Whiten(w) = stage else {
            continue;
        };
        if fits.whitening.contains_key(&index) {
            continue;
        }
        if let Some(path) = &w.matrix {
            fits.whitening.insert(index, load_matrix(path, &info)?);
            continue;
        }
        let mut chain = build(client, spec, &info, &fits, index)?;
        let halo = chain.halo();
        let windows = fit_pieces(&info, fit_windows(&info, &w.fit), halo.before, halo.after);
        let max = windows.iter().map(HaloWindow::read_len).max().unwrap_or(1);
        let mut covariance = CovarianceKernel::new(client, info.channel_count(), max)?;
        DevicePass::new(client, source.clone(), windows)
            .route(route)
            .run(|window, decoded| {
                let rows = rows_of(&info, window, decoded);
                let out = chain.run(decoded.handle(), &rows, window.valid_local.clone())?;
                let span = Span {
                    channels: rows.channels,
                    stride: rows.stride,
                    origin: rows.origin,
                    segment: rows.segment,
                    produce: window.valid_local.clone(),
                };
                covariance.accumulate(&out, &span)?;
                Ok(Flow::Continue)
            })?;
        let matrix = WhiteningMatrix::fit(&covariance.finish()?, w, info.probe.as_ref())?;
        fits.whitening.insert(index, matrix);
    }
    Ok(fits)
}

/// The channel means of the centring stage at `index`: the chain before it run on its fit
/// windows, summed on the device.
fn fit_means(
    client: &cubecl::client::Client,
    source: &Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    fits: &Fits,
    index: usize,
    fit: &dspk_types::FitSpec,
    route: DecodeRoute,
) -> DspResult<Vec<f64>> {
    let info = source.info();
    let mut chain = build(client, spec, info, fits, index)?;
    let halo = chain.halo();
    let windows = fit_pieces(info, fit_windows(info, fit), halo.before, halo.after);
    let mut means = MeanKernel::new(client, info.channel_count())?;
    DevicePass::new(client, source.clone(), windows)
        .route(route)
        .run(|window, decoded| {
            let rows = rows_of(info, window, decoded);
            let out = chain.run(decoded.handle(), &rows, window.valid_local.clone())?;
            means.accumulate(
                &out,
                &Span {
                    channels: rows.channels,
                    stride: rows.stride,
                    origin: rows.origin,
                    segment: rows.segment,
                    produce: window.valid_local.clone(),
                },
            )?;
            Ok(Flow::Continue)
        })?;
    means.finish()
}

/// The whitening matrix a spec names (JSON written by [`WhiteningMatrix::to_json`]), checked
/// against the recording's channels.
fn load_matrix(path: &str, info: &RecordingInfo) -> DspResult<WhiteningMatrix> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| DspError::io(path, "reading a whitening matrix", &e))?;
    let matrix = WhiteningMatrix::from_json(&text)
        .map_err(|e| DspError::config(format!("whitening matrix {path}: {e}")))?;
    if matrix.channels() != info.channel_count() {
        return Err(DspError::config(format!(
            "whitening matrix {path} is for {} channels, and {} has {}",
            matrix.channels(),
            info.name,
            info.channel_count()
        )));
    }
    Ok(matrix)
}

/// Values one piece of a fitting pass reads at most (channels × samples with context): 2²⁵,
/// 128 MiB of `f32`, what every wgpu device binds in one buffer. A constant, not the device's
/// own limit, so that a fit is split the same way (and gives the same bits) on every device.
pub const FIT_PIECE_VALUES: u64 = 1 << 25;

/// The fit ranges of `info` as the windows the fitting pass reads: each range owned by pieces
/// in order, each piece with `before`/`after` samples of context (clamped to its segment) and
/// at most [`FIT_PIECE_VALUES`] values read.
fn fit_pieces(
    info: &RecordingInfo,
    ranges: Vec<Range<u64>>,
    before: u64,
    after: u64,
) -> Vec<HaloWindow> {
    let per_channel = FIT_PIECE_VALUES / (info.channel_count().max(1) as u64);
    let owned = per_channel.saturating_sub(before + after).max(1);
    let mut windows = Vec::new();
    for range in ranges {
        let mut start = range.start;
        while start < range.end {
            let end = range.end.min(start + owned);
            windows.push(halo_window(info, windows.len(), start..end, before, after));
            start = end;
        }
    }
    windows
}

/// A window owning `valid` with `before`/`after` samples of context, clamped to its segment.
pub fn halo_window(
    info: &RecordingInfo,
    index: usize,
    valid: Range<u64>,
    before: u64,
    after: u64,
) -> HaloWindow {
    let segment = segment_of(info, &valid);
    let read = valid.start.saturating_sub(before).max(segment.start)
        ..valid.end.saturating_add(after).min(segment.end);
    HaloWindow {
        index,
        valid_local: (valid.start - read.start) as usize..(valid.end - read.start) as usize,
        valid_global: valid,
        read_global: read,
        pad_left: 0,
        pad_right: 0,
        edge: EdgeMode::Clamp,
    }
}
