//! A chunked preprocessing run's three steps, for `dspk.distributed.preprocess` (each a Dask
//! task): the fit once per recording (`preprocess_fit`), a part applying it
//! (`preprocess_part`, `dspk_stream::preprocess_part`) and the parts assembled into one file
//! (`assemble_preprocessed`, `dspk_io::assemble_parts`) — the steps of `dspk plan
//! --preprocess`, `dspk run` and `dspk gather`, the same bits as one `dspk.preprocess`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use pyo3::prelude::*;

use dspk_io::{BinarySidecar, BinarySink, SidecarSegment, Whole, assemble_parts, output_format};
use dspk_stream::{Fits, InputFile, PreprocessOptions, Provenance};
use dspk_types::{
    DspError, DspResult, NoProgress, PipelineSpec, RationalTime, RecordingSource, signal_source,
};

use crate::args;
use crate::device::{one_device, route_of, target_of};
use crate::errors::{OrRaise, from_dsp};
use crate::preprocess::pipeline_of;
use crate::recording::{Recording, order_from};

/// The `format` of a fit file.
const FIT_FORMAT: &str = "dspk-fit/1";

/// What `preprocess_fit` writes (JSON): `format`, `recording` (its label), `samples`, `fit_s`,
/// `fit_devices`, the whole output's clock, which no part knows (`start_time`, `segments`, as
/// its sidecar states them), and `fits`, the fitted parameters every part applies (where
/// `dspk preprocess --fits` and `dspk.preprocess(fits=…)` find them too).
struct FitFile {
    recording: String,
    fit_s: f64,
    fit_devices: Vec<String>,
    start_time: Option<RationalTime>,
    segments: Vec<SidecarSegment>,
    fits: Fits,
}

impl FitFile {
    /// The file at `path`, read back.
    fn read(path: &std::path::Path) -> DspResult<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| DspError::io(path, "reading the fit file", &e))?;
        let bad = |what: &str, e: String| {
            DspError::config(format!("{}: not a fit file ({what}: {e})", path.display()))
        };
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad("JSON", e.to_string()))?;
        if v["format"] != FIT_FORMAT {
            return Err(bad("format", format!("{}, not {FIT_FORMAT}", v["format"])));
        }
        let field = |name: &str| v.get(name).cloned().unwrap_or(serde_json::Value::Null);
        Ok(Self {
            recording: field("recording").as_str().unwrap_or_default().to_string(),
            fit_s: field("fit_s").as_f64().unwrap_or(0.0),
            fit_devices: serde_json::from_value(field("fit_devices"))
                .map_err(|e| bad("fit_devices", e.to_string()))?,
            start_time: serde_json::from_value(field("start_time"))
                .map_err(|e| bad("start_time", e.to_string()))?,
            segments: serde_json::from_value(field("segments"))
                .map_err(|e| bad("segments", e.to_string()))?,
            fits: serde_json::from_value(field("fits")).map_err(|e| bad("fits", e.to_string()))?,
        })
    }
}

/// The spec (output flags applied) and the recording's signal channels, checked together.
fn spec_and_source(
    recording: &Recording,
    pipeline: &str,
    format: Option<&str>,
    gain: Option<f64>,
) -> PyResult<(PipelineSpec, Arc<dyn RecordingSource>)> {
    let format = format
        .map(dspk_types::OutputType::parse)
        .transpose()
        .map_err(|e| from_dsp(e.into()))?;
    let spec = pipeline_of(pipeline)?
        .with_output(format, gain)
        .map_err(|e| from_dsp(e.into()))?;
    let source = signal_source(recording.source.clone()).map_err(from_dsp)?;
    spec.check(source.info()).map_err(|e| from_dsp(e.into()))?;
    Ok((spec, source))
}

/// Fits `pipeline` to `recording` once (its signal channels) and writes `out`, the fit file
/// every part applies; returns its JSON text.
#[pyfunction]
#[pyo3(signature = (recording, out, *, pipeline="kilosort4", format=None, gain=None,
                    runtime=None, device=None, decode=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn preprocess_fit(
    py: Python<'_>,
    recording: &Recording,
    out: PathBuf,
    pipeline: &str,
    format: Option<&str>,
    gain: Option<f64>,
    runtime: Option<&str>,
    device: Option<usize>,
    decode: Option<&str>,
) -> PyResult<String> {
    let target = target_of(runtime)?;
    let route = route_of(decode)?;
    let (spec, source) = spec_and_source(recording, pipeline, format, gain)?;
    let info = source.info().clone();
    let (fits, fit_s, label) = py
        .detach(|| -> DspResult<_> {
            let devices = one_device(target, device)?;
            let clock = Instant::now();
            let fits = dspk_stream::fit(&devices, &source, &spec, Fits::default(), route)?;
            Ok((
                fits,
                clock.elapsed().as_secs_f64(),
                devices[0].label.clone(),
            ))
        })
        .or_raise()?;
    let whole = BinarySidecar::from_info(&info, dspk_types::MemoryOrder::TimeMajor);
    let file = serde_json::json!({
        "format": FIT_FORMAT,
        "recording": recording.label(),
        "samples": info.samples,
        "fit_s": fit_s,
        "fit_devices": [label],
        "start_time": whole.start_time,
        "segments": whole.segments,
        "fits": fits,
    });
    let text = serde_json::to_string_pretty(&file).expect("a fit file serialises") + "\n";
    dspk_io::durable::write_file(&out, text.as_bytes()).or_raise()?;
    Ok(text)
}

/// Preprocesses samples `start..end` of `recording` with `pipeline`, applying the fit file
/// `fits`, into `out` (+ sidecar); returns the part's report as JSON text.
#[pyfunction]
#[pyo3(signature = (recording, out, start, end, fits, *, pipeline="kilosort4", format=None,
                    gain=None, order="time-major", runtime=None, device=None,
                    window_samples=None, decode=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn preprocess_part(
    py: Python<'_>,
    recording: &Recording,
    out: PathBuf,
    start: u64,
    end: u64,
    fits: PathBuf,
    pipeline: &str,
    format: Option<&str>,
    gain: Option<f64>,
    order: &str,
    runtime: Option<&str>,
    device: Option<usize>,
    window_samples: Option<&Bound<'_, PyAny>>,
    decode: Option<&str>,
) -> PyResult<String> {
    let order = order_from(order)?;
    let target = target_of(runtime)?;
    let route = route_of(decode)?;
    let (spec, source) = spec_and_source(recording, pipeline, format, gain)?;
    let given = dspk_stream::fits_of_sidecar(&fits).or_raise()?;
    let files = recording.input_files()?;
    dspk_io::check_output(&files, "out", &out).or_raise()?;
    let inputs = files
        .iter()
        .map(|(path, role)| InputFile::of(path, role))
        .collect::<DspResult<Vec<_>>>()
        .or_raise()?;
    let options = PreprocessOptions {
        window_samples: args::opt_index(window_samples, "window_samples")?,
        route,
        inputs,
    };
    let mut sink =
        BinarySink::new(&out, order, recording.label()).format(output_format(&spec.output()));
    let done = py
        .detach(|| -> DspResult<_> {
            let devices = one_device(target, device)?;
            dspk_stream::preprocess_part(
                &devices,
                source,
                &spec,
                given,
                &options,
                start..end,
                &NoProgress,
                &mut sink,
            )
        })
        .or_raise()?;
    Ok(serde_json::to_string(&done.report).expect("a report is plain data"))
}

/// Assembles `parts` (written by `preprocess_part` in sample order) into `out` with the clock
/// of the fit file `fits` and the parts' reports merged; returns the bytes of samples written.
#[pyfunction]
pub(crate) fn assemble_preprocessed(
    parts: Vec<PathBuf>,
    out: PathBuf,
    fits: PathBuf,
) -> PyResult<u64> {
    let fit = FitFile::read(&fits).or_raise()?;
    let mut merged: Option<Provenance> = None;
    let mut listed = Vec::new();
    let mut rate_hz = 0.0;
    for path in &parts {
        let side = BinarySidecar::read(&dspk_io::sidecar_path(path)).or_raise()?;
        rate_hz = side.sample_rate.rate_hz();
        let part: Provenance = side
            .provenance
            .ok_or_else(|| DspError::config(format!("{}: no provenance", path.display())))
            .and_then(|v| {
                serde_json::from_value(v).map_err(|e| {
                    DspError::config(format!("{}: its provenance: {e}", path.display()))
                })
            })
            .or_raise()?;
        listed.push(serde_json::json!({
            "part": path.display().to_string(),
            "samples": part.report.plan.samples,
            "device": part.report.plan.devices,
            "apply_s": part.report.apply_s,
        }));
        merged = Some(match merged {
            None => part,
            Some(mut m) => {
                m.report.merge(&part.report);
                m
            }
        });
    }
    let mut merged = merged
        .ok_or_else(|| DspError::config(format!("{}: no parts to assemble", out.display())))
        .or_raise()?;
    merged.report.fit_s = fit.fit_s;
    let seconds = merged.report.plan.samples as f64 / rate_hz;
    merged.report.realtime_factor = if merged.report.apply_s > 0.0 {
        seconds / merged.report.apply_s
    } else {
        0.0
    };
    merged.fits = fit.fits;
    let mut provenance = serde_json::to_value(&merged).expect("a provenance serialises");
    provenance["parts"] = serde_json::Value::Array(listed);
    provenance["fit_devices"] = serde_json::json!(fit.fit_devices);
    let whole = Whole {
        start_time: fit.start_time,
        segments: fit.segments,
        from: fit.recording,
        provenance,
    };
    assemble_parts(&parts, &out, whole).or_raise()
}
