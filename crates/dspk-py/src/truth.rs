//! `dspk.synthetic_truth`: the spikes the synthetic recording planted
//! (`SyntheticRecording::planted_spikes`), as the records of a structured array.

use pyo3::prelude::*;
use pyo3::types::PyByteArray;

use crate::args;
use crate::errors::{OrRaise, invalid};
use crate::recording::Recording;

/// The spikes the synthetic `recording` planted whose waveform overlaps samples `start..end`
/// (default: all of it), sorted by trough then channel, as little-endian records of 40 bytes:
/// channel_index i8, start_index i8, sample_index i8 (the trough), depth_counts i8,
/// depth_uv f8. Raises `ValueError` for any other recording.
#[pyfunction]
#[pyo3(signature = (recording, start=None, end=None))]
pub(crate) fn synthetic_truth<'py>(
    py: Python<'py>,
    recording: &Recording,
    start: Option<&Bound<'py, PyAny>>,
    end: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyByteArray>> {
    let Some(rec) = recording.as_synthetic() else {
        return Err(invalid(format!(
            "{} is not the built-in synthetic recording: only dspk.synthetic() has a ground \
             truth",
            recording.label()
        )));
    };
    let total = recording.info().samples;
    let range = args::sample_range(start, end, total, ("start", "end"))?;
    let spikes = rec.planted_spikes(range).or_raise()?;
    let mut out = Vec::with_capacity(40 * spikes.len());
    for s in &spikes {
        out.extend_from_slice(&(s.channel as i64).to_le_bytes());
        out.extend_from_slice(&(s.start as i64).to_le_bytes());
        out.extend_from_slice(&(s.trough as i64).to_le_bytes());
        out.extend_from_slice(&i64::from(s.depth_counts).to_le_bytes());
        out.extend_from_slice(&s.depth_uv.to_le_bytes());
    }
    Ok(PyByteArray::new(py, &out))
}
