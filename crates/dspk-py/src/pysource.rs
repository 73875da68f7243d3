//! Recordings backed by a Python object (`dspk.from_spikeinterface`): a `RecordingSource`
//! whose stored values come from a Python callable, so that the device pass and every other
//! dspk function run on whatever the object reads (every format Neo reads).

use std::ops::Range;
use std::sync::Arc;

use bytemuck::Pod;
use numpy::prelude::*;
use numpy::{Element, PyArray2, PyUntypedArray};
use pyo3::prelude::*;
use pyo3::types::PyList;

use dspk_types::{
    ChannelInfo, DspError, DspResult, MemoryOrder, RecordingInfo, RecordingSource, SampleFormat,
    SignalUnit, check_read, check_read_stored,
};

use crate::args;
use crate::errors::{OrRaise, invalid};
use crate::recording::Recording;

/// A recording whose stored values come from `reader(start, stop, channels)`, which returns
/// them channel-major: a C-contiguous array of the stored dtype, shape `(channels, samples)`.
struct PythonSource {
    info: RecordingInfo,
    reader: Py<PyAny>,
}

impl PythonSource {
    /// Calls the reader (attaching to the interpreter: reads run on dspk's threads while the
    /// caller's thread has released the GIL) and copies its array into `out` as little-endian
    /// bytes.
    fn fill(&self, channels: &[usize], samples: Range<u64>, out: &mut [u8]) -> DspResult<()> {
        Python::attach(|py| {
            let result = self
                .reader
                .bind(py)
                .call1((samples.start, samples.end, channels.to_vec()))
                .map_err(|e| self.failed(py, &samples, &e))?;
            let shape = [channels.len(), (samples.end - samples.start) as usize];
            match self.info.format {
                SampleFormat::I8 => copy::<i8>(&result, shape, out),
                SampleFormat::I16 => copy::<i16>(&result, shape, out),
                SampleFormat::U16 => copy::<u16>(&result, shape, out),
                SampleFormat::I32 => copy::<i32>(&result, shape, out),
                SampleFormat::F32 => copy::<f32>(&result, shape, out),
                SampleFormat::F64 => copy::<f64>(&result, shape, out),
            }
            .map_err(|what| {
                DspError::UnsupportedFormat(format!(
                    "{}: the reader of samples {}..{} returned {what}",
                    self.info.name, samples.start, samples.end
                ))
            })
        })
    }

    /// A Python exception of the reader as the error of the read.
    fn failed(&self, py: Python<'_>, samples: &Range<u64>, e: &PyErr) -> DspError {
        let ty = e
            .get_type(py)
            .name()
            .map_or_else(|_| "an exception".to_string(), |n| n.to_string());
        DspError::Io {
            message: format!(
                "reading samples {}..{} of {} raised {ty}: {}",
                samples.start,
                samples.end,
                self.info.name,
                e.value(py)
            ),
            path: None,
        }
    }
}

/// Copies a `(channels, samples)` C-contiguous array of `T` into `out`, little-endian; what is
/// wrong with it otherwise.
fn copy<T: Element + Pod>(
    array: &Bound<'_, PyAny>,
    shape: [usize; 2],
    out: &mut [u8],
) -> Result<(), String> {
    let py = array.py();
    let untyped = array
        .cast::<PyUntypedArray>()
        .map_err(|_| format!("{}, not a NumPy array", args::type_name(array)))?;
    if untyped.shape() != shape {
        return Err(format!(
            "an array of shape {:?}, not {shape:?}",
            untyped.shape()
        ));
    }
    if !untyped.dtype().is_equiv_to(&numpy::dtype::<T>(py)) {
        return Err(format!(
            "dtype {}, not the recording's stored dtype",
            untyped.dtype()
        ));
    }
    let typed = array
        .cast::<PyArray2<T>>()
        .map_err(|_| "an array of another type".to_string())?;
    let values = typed.readonly();
    let values = values
        .as_slice()
        .map_err(|_| "an array that is not C-contiguous".to_string())?;
    let bytes: &[u8] = bytemuck::cast_slice(values);
    if bytes.len() != out.len() {
        return Err(format!("{} bytes, not {}", bytes.len(), out.len()));
    }
    out.copy_from_slice(bytes);
    if cfg!(target_endian = "big") {
        for v in out.chunks_exact_mut(std::mem::size_of::<T>()) {
            v.reverse();
        }
    }
    Ok(())
}

impl RecordingSource for PythonSource {
    fn info(&self) -> &RecordingInfo {
        &self.info
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        let n = check_read(&self.info, channels, &samples, out.len())?;
        if n == 0 || channels.is_empty() {
            return Ok(());
        }
        let unit = self.info.format.bytes();
        let mut stored = vec![0u8; channels.len() * n * unit];
        self.fill(channels, samples, &mut stored)?;
        // The one decode rule of dspk (what every reader and the device use).
        for (i, &c) in channels.iter().enumerate() {
            let ch = &self.info.channels[c];
            self.info.format.decode(
                &stored[i * n * unit..(i + 1) * n * unit],
                &mut out[i * n..(i + 1) * n],
                ch.gain,
                ch.offset,
            )?;
        }
        Ok(())
    }

    fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        check_read_stored(&self.info, channels, &samples, out.len())?;
        if channels.is_empty() || samples.is_empty() {
            return Ok(());
        }
        self.fill(channels, samples, out)
    }
}

/// A `Recording` read through `reader(start, stop, channels)` (stored values, channel-major,
/// C-contiguous `(channels, samples)` of `dtype`), described by the other arguments: what
/// `dspk.from_spikeinterface` builds on.
#[pyfunction]
#[pyo3(name = "_from_python_source", signature = (reader, *, name, sample_rate, samples, dtype, channel_names, gains, offsets, units, probe_json=None))]
#[expect(
    clippy::too_many_arguments,
    reason = "keyword arguments of one Python function"
)]
pub(crate) fn from_python_source(
    reader: Py<PyAny>,
    name: String,
    sample_rate: &Bound<'_, PyAny>,
    samples: &Bound<'_, PyAny>,
    dtype: &str,
    channel_names: Vec<String>,
    gains: Vec<f32>,
    offsets: Vec<f32>,
    units: &Bound<'_, PyList>,
    probe_json: Option<&str>,
) -> PyResult<Recording> {
    let rate = args::rate(sample_rate)?;
    let samples = args::index(samples, "samples")?;
    let format = dtype.parse::<SampleFormat>().or_raise()?;
    let count = channel_names.len();
    if count == 0 {
        return Err(invalid(format!(
            "{name}: a recording needs at least one channel"
        )));
    }
    if gains.len() != count || offsets.len() != count || units.len() != count {
        return Err(invalid(format!(
            "{name}: {count} channel names but {} gains, {} offsets and {} units",
            gains.len(),
            offsets.len(),
            units.len()
        )));
    }
    let mut info = RecordingInfo::new(
        name,
        count,
        samples,
        rate,
        format,
        MemoryOrder::ChannelMajor,
    );
    for (i, ch) in info.channels.iter_mut().enumerate() {
        let unit: String = units.get_item(i)?.extract()?;
        *ch = ChannelInfo {
            name: channel_names[i].clone(),
            gain: gains[i],
            offset: offsets[i],
            unit: unit_of(&unit),
            kind: dspk_types::ChannelKind::Signal,
        };
    }
    if let Some(text) = probe_json {
        let doc: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| invalid(format!("{}: probe: not JSON: {e}", info.name)))?;
        let probe = dspk_io::probe_from_probeinterface(&doc, count, &[])
            .map_err(|e| invalid(format!("{}: probe: {e}", info.name)))?;
        info.probe = Some(probe);
    }
    let label = format!("Python recording {}", info.name);
    let source = PythonSource { info, reader };
    Ok(dspk_io::OpenedRecording::other(Arc::new(source), label).into())
}

/// A unit from its symbol.
fn unit_of(symbol: &str) -> SignalUnit {
    match symbol {
        "V" => SignalUnit::Volt,
        "mV" => SignalUnit::Millivolt,
        "uV" | "µV" | "μV" => SignalUnit::Microvolt,
        "A" => SignalUnit::Ampere,
        "mA" => SignalUnit::Milliampere,
        "uA" | "µA" | "μA" => SignalUnit::Microampere,
        "" | "dimensionless" => SignalUnit::Dimensionless,
        other => SignalUnit::Other(other.to_string()),
    }
}
