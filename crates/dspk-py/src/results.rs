//! What `scan` and `convert` return: plain result objects, per-channel figures as NumPy arrays.

use std::path::PathBuf;

use numpy::PyArray1;
use pyo3::prelude::*;

use dspk_stream::{Flag, PassReport, ScanResult as Scan};
use dspk_types::SampleRate;

/// What a pass did, as the fields both results share.
#[derive(Debug, Clone)]
pub(crate) struct PassFigures {
    pub(crate) runtime: String,
    pub(crate) device: String,
    pub(crate) decode: String,
    pub(crate) windows: usize,
    pub(crate) stored_bytes: u64,
    pub(crate) wall_s: f64,
    pub(crate) setup_s: f64,
    pub(crate) throughput_mb_s: f64,
    pub(crate) realtime_factor: f64,
}

impl PassFigures {
    /// The figures of `report`, a pass of `samples` samples at `rate`.
    pub(crate) fn new(
        report: &PassReport,
        samples: u64,
        rate: SampleRate,
        runtime: String,
        device: String,
    ) -> Self {
        let wall_s = report.wall.as_secs_f64();
        let seconds = rate
            .duration_for_samples(samples)
            .map_or(0.0, |t| t.as_seconds_f64());
        Self {
            runtime,
            device,
            decode: report.route.name().to_string(),
            windows: report.windows,
            stored_bytes: report.stored_bytes,
            wall_s,
            setup_s: report.setup.as_secs_f64(),
            throughput_mb_s: report.bytes_per_second() / 1e6,
            realtime_factor: if wall_s > 0.0 { seconds / wall_s } else { 0.0 },
        }
    }
}

/// The result of `dspk.scan`: per-channel statistics (in each channel's unit, µV for voltages),
/// the dead and noisy channels, the mask without them, and what the device pass did.
#[pyclass(module = "dspk", frozen, get_all)]
pub struct ScanResult {
    /// Per-channel minimum (`float64`).
    min: Py<PyArray1<f64>>,
    /// Per-channel maximum.
    max: Py<PyArray1<f64>>,
    /// Per-channel mean.
    mean: Py<PyArray1<f64>>,
    /// Per-channel root mean square.
    rms: Py<PyArray1<f64>>,
    /// Per-channel standard deviation.
    std: Py<PyArray1<f64>>,
    /// Per channel `"dead"`, `"noisy"` or `None`.
    flags: Vec<Option<&'static str>>,
    /// Channels flagged dead (flat), ascending.
    dead: Vec<usize>,
    /// Channels flagged noisy, ascending.
    noisy: Vec<usize>,
    /// One `bool` per channel, `True` for a good channel (neither dead nor noisy).
    mask: Py<PyArray1<bool>>,
    /// The median standard deviation of the channels that are not dead.
    median_std: f64,
    /// The standard deviation above which a channel is noisy.
    noisy_threshold: f64,
    /// Per channel, the unit of the statistics.
    units: Vec<String>,
    /// First sample scanned.
    start: u64,
    /// One past the last sample scanned.
    end: u64,
    /// Samples per window.
    window_samples: u64,
    /// Windows decoded.
    windows: usize,
    /// Stored bytes read and sent to the device.
    stored_bytes: u64,
    /// Wall time of the device pass, seconds.
    wall_s: f64,
    /// The part of `wall_s` spent setting up (buffers, kernels) before the first window.
    setup_s: f64,
    /// Stored megabytes (10^6 bytes) per second of wall time.
    throughput_mb_s: f64,
    /// Seconds of recording scanned per second of wall time.
    realtime_factor: f64,
    /// Where windows were decoded (`"staging"` or `"copy"`).
    decode: String,
    /// The runtime (`"wgpu"`, …).
    runtime: String,
    /// The device's name.
    device: String,
}

impl ScanResult {
    /// The Python result of `scan`.
    pub(crate) fn new(py: Python<'_>, scan: &Scan, figures: PassFigures) -> Self {
        let column = |f: &dyn Fn(&dspk_kernels::ChannelStats) -> f64| {
            PyArray1::from_vec(py, scan.stats.iter().map(f).collect()).unbind()
        };
        let mask: Vec<bool> = (0..scan.mask.total_channels())
            .map(|i| scan.mask.is_enabled(i))
            .collect();
        Self {
            min: column(&|s| s.min),
            max: column(&|s| s.max),
            mean: column(&|s| s.mean()),
            rms: column(&|s| s.rms()),
            std: column(&|s| s.std()),
            flags: scan
                .classification
                .flags
                .iter()
                .map(|f| f.map(Flag::name))
                .collect(),
            dead: scan.dead(),
            noisy: scan.noisy(),
            mask: PyArray1::from_vec(py, mask).unbind(),
            median_std: scan.classification.median_std,
            noisy_threshold: scan.classification.noisy_threshold,
            units: scan
                .scaling
                .units
                .iter()
                .map(|u| u.symbol().to_string())
                .collect(),
            start: scan.range.start,
            end: scan.range.end,
            window_samples: scan.window_samples,
            windows: figures.windows,
            stored_bytes: figures.stored_bytes,
            wall_s: figures.wall_s,
            setup_s: figures.setup_s,
            throughput_mb_s: figures.throughput_mb_s,
            realtime_factor: figures.realtime_factor,
            decode: figures.decode,
            runtime: figures.runtime,
            device: figures.device,
        }
    }
}

#[pymethods]
impl ScanResult {
    fn __repr__(&self) -> String {
        format!(
            "<dspk.ScanResult samples {}..{}: dead {:?}, noisy {:?}, {:.1} MB/s on {}>",
            self.start, self.end, self.dead, self.noisy, self.throughput_mb_s, self.device
        )
    }
}

/// The result of `dspk.convert`: what was written and what the device pass did.
#[pyclass(module = "dspk", frozen, get_all)]
pub struct ConvertResult {
    /// The data file written.
    path: PathBuf,
    /// Its JSON sidecar.
    sidecar: PathBuf,
    /// Channels written.
    channel_count: usize,
    /// Samples per channel written.
    samples: u64,
    /// `"time-major"` or `"channel-major"`.
    order: String,
    /// Bytes of `float32` values written.
    written_bytes: u64,
    /// Windows decoded.
    windows: usize,
    /// Stored bytes read and sent to the device.
    stored_bytes: u64,
    /// Wall time of the device pass, seconds.
    wall_s: f64,
    /// Stored megabytes per second of wall time.
    throughput_mb_s: f64,
    /// Seconds of recording converted per second of wall time.
    realtime_factor: f64,
    /// Where windows were decoded.
    decode: String,
    /// The runtime.
    runtime: String,
    /// The device's name.
    device: String,
}

impl ConvertResult {
    /// The Python result of `convert`.
    pub(crate) fn new(summary: &dspk_io::WriteSummary, figures: PassFigures) -> Self {
        Self {
            path: summary.path.clone(),
            sidecar: summary.sidecar_path.clone(),
            channel_count: summary.channels,
            samples: summary.samples,
            order: summary.order.name().to_string(),
            written_bytes: summary.bytes,
            windows: figures.windows,
            stored_bytes: figures.stored_bytes,
            wall_s: figures.wall_s,
            throughput_mb_s: figures.throughput_mb_s,
            realtime_factor: figures.realtime_factor,
            decode: figures.decode,
            runtime: figures.runtime,
            device: figures.device,
        }
    }
}

#[pymethods]
impl ConvertResult {
    fn __repr__(&self) -> String {
        format!(
            "<dspk.ConvertResult {}: {} channels × {} samples, {:.1} MB/s on {}>",
            self.path.display(),
            self.channel_count,
            self.samples,
            self.throughput_mb_s,
            self.device
        )
    }
}
