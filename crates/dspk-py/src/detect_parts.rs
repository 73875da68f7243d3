//! A chunked detection run's two native steps, for `dspk.distributed.detect` (each a Dask
//! task): the fit once per recording (`detect_fit`, `dspk_stream::fit_detection`: the
//! pipeline's fitted stages and the noise levels) and a part's peaks found with it
//! (`detect_part`, `dspk_stream::detect_part`) — the steps of `dspk plan --detect` and `dspk
//! run`; the parts' records laid end to end are one `dspk.detect`'s.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyByteArray;

use dspk_stream::{DetectSpec, DetectionFit, PeakSign, peak_records, segment_starts};
use dspk_types::{DspError, DspResult, NoProgress, PipelineSpec, RecordingSource, signal_source};

use crate::args;
use crate::device::{one_device, route_of, target_of};
use crate::errors::{OrRaise, from_dsp};
use crate::preprocess::pipeline_of;
use crate::recording::Recording;

/// The `format` of `detect_fit`'s JSON.
const DETECT_FIT_FORMAT: &str = "dspk-detect-fit/1";

/// The pipeline (`"none"`: no stage) and the recording's signal channels, checked together.
fn spec_and_source(
    recording: &Recording,
    pipeline: &str,
) -> PyResult<(PipelineSpec, Arc<dyn RecordingSource>)> {
    let spec = if pipeline == "none" {
        PipelineSpec::default()
    } else {
        pipeline_of(pipeline)?
    };
    let source = signal_source(recording.source.clone()).map_err(from_dsp)?;
    spec.check(source.info()).map_err(|e| from_dsp(e.into()))?;
    Ok((spec, source))
}

/// Fits what `dspk.detect` fits to `recording` (its signal channels) after `pipeline`, once;
/// returns JSON text: `format`, `samples`, `segments` (each segment's samples, for cutting
/// parts that never span a segment's end) and `fitted` (the fitted stages' parameters and
/// the noise levels, what `detect_part` takes).
#[pyfunction]
#[pyo3(signature = (recording, *, pipeline="none", runtime=None, device=None, decode=None))]
pub(crate) fn detect_fit(
    py: Python<'_>,
    recording: &Recording,
    pipeline: &str,
    runtime: Option<&str>,
    device: Option<usize>,
    decode: Option<&str>,
) -> PyResult<String> {
    let target = target_of(runtime)?;
    let route = route_of(decode)?;
    let (spec, source) = spec_and_source(recording, pipeline)?;
    let info = source.info().clone();
    let fitted = py
        .detach(|| -> DspResult<_> {
            let devices = one_device(target, device)?;
            dspk_stream::fit_detection(&devices, source, &spec, route, &NoProgress)
        })
        .or_raise()?;
    let segments: Vec<u64> = info.segments().ranges().map(|r| r.end - r.start).collect();
    let value = serde_json::json!({
        "format": DETECT_FIT_FORMAT,
        "samples": info.samples,
        "segments": segments,
        "fitted": fitted,
    });
    Ok(serde_json::to_string(&value).expect("a detection fit serialises"))
}

/// The peaks of samples `start..end` of `recording` after `pipeline`, detected with the
/// parameters and noise levels of `fitted` (`detect_fit`'s JSON text); returns their records
/// (as `dspk.detect`'s).
#[pyfunction]
#[pyo3(signature = (recording, start, end, fitted, *, pipeline="none", threshold=5.0,
                    sign="neg", radius_um=50.0, exclude_sweep_ms=0.1, runtime=None, device=None,
                    window_samples=None, decode=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn detect_part<'py>(
    py: Python<'py>,
    recording: &Recording,
    start: u64,
    end: u64,
    fitted: &str,
    pipeline: &str,
    threshold: f64,
    sign: &str,
    radius_um: f64,
    exclude_sweep_ms: f64,
    runtime: Option<&str>,
    device: Option<usize>,
    window_samples: Option<&Bound<'py, PyAny>>,
    decode: Option<&str>,
) -> PyResult<Bound<'py, PyByteArray>> {
    let target = target_of(runtime)?;
    let route = route_of(decode)?;
    let (spec, source) = spec_and_source(recording, pipeline)?;
    let detect = DetectSpec {
        threshold,
        sign: sign.parse::<PeakSign>().map_err(from_dsp)?,
        radius_um,
        exclude_sweep_ms,
    };
    detect.check().map_err(from_dsp)?;
    let fitted = fitted_of(fitted).map_err(from_dsp)?;
    let window_samples = args::opt_index(window_samples, "window_samples")?;
    let starts = segment_starts(source.info());
    let part = py
        .detach(|| -> DspResult<_> {
            let devices = one_device(target, device)?;
            dspk_stream::detect_part(
                &devices,
                source,
                &spec,
                &fitted,
                &detect,
                window_samples,
                route,
                start..end,
                &NoProgress,
            )
        })
        .or_raise()?;
    Ok(PyByteArray::new(py, &peak_records(&part.peaks, &starts)))
}

/// `detect_fit`'s JSON text, read back.
fn fitted_of(text: &str) -> DspResult<DetectionFit> {
    let bad = |e: String| DspError::config(format!("not a detection fit (detect_fit's JSON): {e}"));
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    if v["format"] != DETECT_FIT_FORMAT {
        return Err(bad(format!(
            "format {}, not {DETECT_FIT_FORMAT}",
            v["format"]
        )));
    }
    serde_json::from_value(v["fitted"].clone()).map_err(|e| bad(e.to_string()))
}
