//! `dspk.detect`: the peaks of a recording (after an optional pipeline) found on the device —
//! `dspk_stream::detect` with the GIL released, as `dspk detect` runs it — returned as the
//! records of SpikeInterface's peak dtype (the Python side views them as a structured array)
//! and the run's report.

use pyo3::prelude::*;
use pyo3::types::PyByteArray;

use dspk_device::describe;
use dspk_stream::{
    DetectOptions, DetectSpec, Fits, PassDevice, PeakSign, peak_records, segment_starts,
};
use dspk_types::{DspResult, PipelineSpec, signal_source};

use crate::args;
use crate::device::{client_of, route_of, target_of};
use crate::errors::{OrRaise, from_dsp};
use crate::preprocess::pipeline_of;
use crate::progress::PySink;
use crate::recording::Recording;

/// Detects the peaks of `recording` (its signal channels) after `pipeline` (`"none"`: as it
/// is); returns the table's records (little-endian, 32 bytes each: sample_index i8,
/// channel_index i8, amplitude f8, segment_index i8) and the report as JSON text (on the
/// synthetic recording, with its score against the planted spikes: `truth`).
#[pyfunction]
#[pyo3(signature = (recording, *, pipeline="none", threshold=5.0, sign="neg", radius_um=50.0,
                    exclude_sweep_ms=0.1, noise_levels=None, runtime=None, progress=None,
                    window_samples=None, decode=None, device=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn detect<'py>(
    py: Python<'py>,
    recording: &Recording,
    pipeline: &str,
    threshold: f64,
    sign: &str,
    radius_um: f64,
    exclude_sweep_ms: f64,
    noise_levels: Option<Vec<f64>>,
    runtime: Option<&str>,
    progress: Option<Py<PyAny>>,
    window_samples: Option<&Bound<'py, PyAny>>,
    decode: Option<&str>,
    device: Option<usize>,
) -> PyResult<(Bound<'py, PyByteArray>, String)> {
    let target = target_of(runtime)?;
    let route = route_of(decode)?;
    let spec = if pipeline == "none" {
        PipelineSpec::default()
    } else {
        pipeline_of(pipeline)?
    };
    let detect = DetectSpec {
        threshold,
        sign: sign.parse::<PeakSign>().map_err(from_dsp)?,
        radius_um,
        exclude_sweep_ms,
    };
    detect.check().map_err(from_dsp)?;
    let source = signal_source(recording.source.clone()).map_err(from_dsp)?;
    spec.check(source.info()).map_err(|e| from_dsp(e.into()))?;
    let options = DetectOptions {
        detect,
        window_samples: args::opt_index(window_samples, "window_samples")?,
        route,
        noise: noise_levels,
    };
    let progress = PySink::new(progress.filter(|p| !p.is_none(py)));
    let starts = segment_starts(source.info());
    let outcome = py.detach(|| -> DspResult<_> {
        let client = client_of(target, device)?;
        let label = describe(&client).adapter_name;
        let devices = vec![PassDevice { client, label }];
        dspk_stream::detect(
            &devices,
            source,
            &spec,
            Fits::default(),
            &options,
            &progress,
        )
    });
    progress.finish()?;
    let mut done = outcome.or_raise()?;
    if let Some(truth) = recording.as_synthetic() {
        done.score_against(truth).or_raise()?;
    }
    let records = PyByteArray::new(py, &peak_records(&done.peaks, &starts));
    let report = serde_json::to_string(&done.report).expect("a report is plain data");
    Ok((records, report))
}
