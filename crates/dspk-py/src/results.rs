//! What `scan` and `convert` return: a scan's `ScanReport` and a convert's figures, per-channel
//! figures as NumPy arrays.

use std::path::PathBuf;

use numpy::PyArray1;
use pyo3::prelude::*;

use dspk_stream::{ChannelFigures, PassReport, ScanReport};
use dspk_types::SampleRate;

/// What a convert's pass did.
#[derive(Debug, Clone)]
pub(crate) struct PassFigures {
    pub(crate) runtime: String,
    pub(crate) device: String,
    pub(crate) decode: String,
    pub(crate) windows: usize,
    pub(crate) stored_bytes: u64,
    pub(crate) wall_s: f64,
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
            throughput_mb_s: report.bytes_per_second() / 1e6,
            realtime_factor: if wall_s > 0.0 { seconds / wall_s } else { 0.0 },
        }
    }
}

/// The result of `dspk.scan`: the pass's [`ScanReport`], the value `dspk scan --json` prints,
/// with its per-channel columns as NumPy arrays. Every attribute is read from the report.
#[pyclass(module = "dspk", frozen)]
pub struct ScanResult {
    report: ScanReport,
    columns: Columns,
    /// The recording scanned, where the scan ran in this process (a result read back from a
    /// record has none): what `report` reads its windows from.
    recording: Option<dspk_io::OpenedRecording>,
}

/// A report's per-channel figures as NumPy arrays, made once.
struct Columns {
    min: Py<PyArray1<f64>>,
    max: Py<PyArray1<f64>>,
    mean: Py<PyArray1<f64>>,
    rms: Py<PyArray1<f64>>,
    std: Py<PyArray1<f64>>,
    mask: Py<PyArray1<bool>>,
}

impl ScanResult {
    /// The Python result of a scan whose report is `report`.
    pub(crate) fn new(py: Python<'_>, report: ScanReport) -> Self {
        let column = |f: fn(&ChannelFigures) -> f64| {
            PyArray1::from_vec(py, report.channels.iter().map(f).collect()).unbind()
        };
        let mask = &report.mask;
        let enabled = (0..mask.total_channels()).map(|i| mask.is_enabled(i));
        let columns = Columns {
            min: column(|c| c.min),
            max: column(|c| c.max),
            mean: column(|c| c.mean),
            rms: column(|c| c.rms),
            std: column(|c| c.std),
            mask: PyArray1::from_vec(py, enabled.collect()).unbind(),
        };
        Self {
            report,
            columns,
            recording: None,
        }
    }

    /// This result, knowing the recording it is of.
    pub(crate) fn with_recording(mut self, recording: dspk_io::OpenedRecording) -> Self {
        self.recording = Some(recording);
        self
    }
}

#[pymethods]
impl ScanResult {
    /// Writes the scan's report, a page a person opens in a browser (as `dspk scan --report`
    /// does), to `out`: the probe with the dead and noisy channels, the noise along it, the
    /// windows `at` asks for (times; default: three spread over the recording), read again
    /// on the device; `colour_by` as for `Recording.report`. Returns where it went, its size
    /// and its data.
    #[pyo3(signature = (out, *, at=None, runtime=None, device=None, colour_by="class"))]
    fn report<'py>(
        &self,
        py: Python<'py>,
        out: std::path::PathBuf,
        at: Option<&Bound<'_, PyAny>>,
        runtime: Option<&str>,
        device: Option<usize>,
        colour_by: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let recording = self.recording.as_ref().ok_or_else(|| {
            crate::errors::invalid(
                "this scan result was read back from a record, not scanned here: call \
                 recording.report(out) on the recording to draw it",
            )
        })?;
        crate::report::scan_report(
            py,
            recording,
            &self.report,
            &out,
            at,
            runtime,
            device,
            colour_by,
        )
    }

    /// Per-channel minimum (`float64`), in each channel's unit (µV for voltages).
    #[getter]
    fn min(&self, py: Python<'_>) -> Py<PyArray1<f64>> {
        self.columns.min.clone_ref(py)
    }

    /// Per-channel maximum.
    #[getter]
    fn max(&self, py: Python<'_>) -> Py<PyArray1<f64>> {
        self.columns.max.clone_ref(py)
    }

    /// Per-channel mean.
    #[getter]
    fn mean(&self, py: Python<'_>) -> Py<PyArray1<f64>> {
        self.columns.mean.clone_ref(py)
    }

    /// Per-channel root mean square.
    #[getter]
    fn rms(&self, py: Python<'_>) -> Py<PyArray1<f64>> {
        self.columns.rms.clone_ref(py)
    }

    /// Per-channel standard deviation.
    #[getter]
    fn std(&self, py: Python<'_>) -> Py<PyArray1<f64>> {
        self.columns.std.clone_ref(py)
    }

    /// One `bool` per channel, `True` for a good channel (neither dead nor noisy).
    #[getter]
    fn mask(&self, py: Python<'_>) -> Py<PyArray1<bool>> {
        self.columns.mask.clone_ref(py)
    }

    /// Per channel `"dead"`, `"noisy"` or `None`.
    #[getter]
    fn flags(&self) -> Vec<Option<String>> {
        self.report
            .channels
            .iter()
            .map(|c| c.flag.clone())
            .collect()
    }

    /// Per channel, the unit of the statistics, by its symbol as `Recording.units` gives it:
    /// the report names a dimensionless unit `dimensionless`, Python `""`.
    #[getter]
    fn units(&self) -> Vec<String> {
        let symbol = |u: &str| if u == "dimensionless" { "" } else { u }.to_string();
        self.report
            .channels
            .iter()
            .map(|c| symbol(&c.unit))
            .collect()
    }

    /// Channels flagged dead (flat), ascending.
    #[getter]
    fn dead(&self) -> Vec<usize> {
        self.report.dead.clone()
    }

    /// Channels flagged noisy, ascending.
    #[getter]
    fn noisy(&self) -> Vec<usize> {
        self.report.noisy.clone()
    }

    /// The median standard deviation of the channels that are not dead.
    #[getter]
    fn median_std(&self) -> f64 {
        self.report.median_std
    }

    /// The standard deviation above which a channel is noisy.
    #[getter]
    fn noisy_threshold(&self) -> f64 {
        self.report.noisy_threshold
    }

    /// First sample scanned.
    #[getter]
    fn start(&self) -> u64 {
        self.report.start_sample
    }

    /// One past the last sample scanned.
    #[getter]
    fn end(&self) -> u64 {
        self.report.end_sample
    }

    /// Samples per window.
    #[getter]
    fn window_samples(&self) -> u64 {
        self.report.window_samples
    }

    /// Windows decoded.
    #[getter]
    fn windows(&self) -> usize {
        self.report.windows
    }

    /// Stored bytes read and sent to the device.
    #[getter]
    fn stored_bytes(&self) -> u64 {
        self.report.stored_bytes
    }

    /// Wall time of the device pass, seconds.
    #[getter]
    fn wall_s(&self) -> f64 {
        self.report.wall_s
    }

    /// The part of `wall_s` spent setting up (buffers, kernels) before the first window.
    #[getter]
    fn setup_s(&self) -> f64 {
        self.report.setup_s()
    }

    /// Stored megabytes (10^6 bytes) per second of wall time.
    #[getter]
    fn throughput_mb_s(&self) -> f64 {
        self.report.throughput_mb_s
    }

    /// Seconds of recording scanned per second of wall time.
    #[getter]
    fn realtime_factor(&self) -> f64 {
        self.report.realtime_factor
    }

    /// Where windows were decoded (`"staging"` or `"copy"`).
    #[getter]
    fn decode(&self) -> &str {
        &self.report.decode
    }

    /// The runtime (`"wgpu"`, …).
    #[getter]
    fn runtime(&self) -> &'static str {
        self.report.runtime.name()
    }

    /// The device's name.
    #[getter]
    fn device(&self) -> &str {
        &self.report.device
    }

    /// The report as `dspk scan --json` prints it (and `dspk run` records it).
    fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.report).expect("a scan report serialises") + "\n"
    }

    /// The report as a dict: `json.loads` of [`to_json`](Self::to_json), the schema of
    /// `dspk scan --json`, of a `dspk run` record's result and of `dspk.distributed`'s results
    /// (figures that cannot be had are `None`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = serde_json::to_string(&self.report).expect("a scan report serialises");
        json_loads(py, &text)
    }

    fn __repr__(&self) -> String {
        let r = &self.report;
        format!(
            "<dspk.ScanResult samples {}..{}: dead {:?}, noisy {:?}, {:.1} MB/s on {}>",
            r.start_sample, r.end_sample, r.dead, r.noisy, r.throughput_mb_s, r.device
        )
    }
}

/// JSON `text` as Python's `json.loads` reads it: how a serde value of the libraries (a
/// report, the device catalog) becomes Python's dicts and lists.
pub(crate) fn json_loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
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
