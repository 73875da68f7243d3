//! `dspk.apply_pipeline`: a NumPy array run through a preprocessing pipeline on the device
//! (`dspk_stream::preprocess` over an in-memory recording) — how the oracles hold each stage
//! against SpikeInterface and scipy, and a quick way to preprocess a snippet.

use std::sync::Arc;

use numpy::ndarray::Array2;
use numpy::prelude::*;
use numpy::{PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;

use dspk_ops::Fits;
use dspk_stream::{PassDevice, PreprocessOptions, preprocess};
use dspk_types::{
    DspResult, MemoryOrder, MemoryRecording, NoProgress, PipelineSpec, RecordingInfo, SampleFormat,
    SampleRate, SignalUnit, WindowSink,
};

use crate::errors::{OrRaise as _, from_dsp, invalid};

/// Collects a pass's windows into rows.
struct Rows {
    rows: Vec<Vec<f32>>,
}

impl WindowSink for Rows {
    fn begin(&mut self, info: &RecordingInfo, _: &[SignalUnit]) -> DspResult<()> {
        self.rows = vec![Vec::with_capacity(info.samples as usize); info.channel_count()];
        Ok(())
    }

    fn write_window(&mut self, values: &[f32]) -> DspResult<()> {
        let n = values.len() / self.rows.len().max(1);
        for (c, row) in self.rows.iter_mut().enumerate() {
            row.extend_from_slice(&values[c * n..(c + 1) * n]);
        }
        Ok(())
    }

    fn finish(&mut self) -> DspResult<()> {
        Ok(())
    }
}

/// `data` (`channels × samples` float32, µV) at `rate` Hz through the pipeline `spec` (its
/// JSON text), with the probe `probe_json` (probeinterface JSON text of one probe whose
/// `device_channel_indices` name the rows) where a stage needs geometry, in windows owning
/// `window_samples` samples, on the default device of `runtime`. Returns the output rows.
#[pyfunction]
#[pyo3(signature = (data, rate, spec, *, probe_json=None, window_samples=None, runtime=None))]
pub(crate) fn apply_pipeline<'py>(
    py: Python<'py>,
    data: PyReadonlyArray2<'py, f32>,
    rate: f64,
    spec: &str,
    probe_json: Option<&str>,
    window_samples: Option<u64>,
    runtime: Option<&str>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let array = data.as_array();
    let (channels, samples) = array.dim();
    let spec = PipelineSpec::from_json(spec).map_err(|e| from_dsp(e.into()))?;
    let mut info = RecordingInfo::new(
        "array",
        channels,
        samples as u64,
        SampleRate::new(rate).or_raise()?,
        SampleFormat::F32,
        MemoryOrder::ChannelMajor,
    );
    if let Some(text) = probe_json {
        let doc: serde_json::Value =
            serde_json::from_str(text).map_err(|e| invalid(format!("probe: not JSON: {e}")))?;
        let probe = dspk_io::probe_from_probeinterface(&doc, channels, &[])
            .map_err(|e| invalid(format!("probe: {e}")))?;
        info.probe = Some(probe);
    }
    let values: Vec<f32> = array.iter().copied().collect();
    let source = Arc::new(MemoryRecording::new(info, values).or_raise()?);
    let target = crate::device::target_of(runtime)?;
    let options = PreprocessOptions {
        window_samples,
        ..PreprocessOptions::default()
    };
    let mut sink = Rows { rows: Vec::new() };
    py.detach(|| -> DspResult<()> {
        let client = crate::device::client_of(target, None)?;
        let devices = [PassDevice {
            client,
            label: target.name().into(),
        }];
        preprocess(
            &devices,
            source,
            &spec,
            Fits::default(),
            &options,
            &NoProgress,
            &mut sink,
        )?;
        Ok(())
    })
    .or_raise()?;
    let flat: Vec<f32> = sink.rows.concat();
    let out = Array2::from_shape_vec((channels, samples), flat)
        .map_err(|e| invalid(format!("the pipeline's output has the wrong shape: {e}")))?;
    Ok(out.into_pyarray(py))
}
