//! Reads into NumPy arrays: a new array (the one copy is the read itself) or a caller's `out=`
//! checked for shape, dtype, layout and writability first; the GIL released during the read.

use std::ops::Range;
use std::sync::Arc;

use bytemuck::Pod;
use numpy::prelude::*;
use numpy::{BorrowError, Element, PyArray2, PyUntypedArray};
use pyo3::prelude::*;

use dspk_types::{MemoryOrder, RecordingSource, SampleFormat, check_sample_range};

use crate::args::type_name;
use crate::errors::{OrRaise, invalid};

/// The NumPy name of `T` (`float32`, `int16`, …).
fn dtype_name<T: Element>(py: Python<'_>) -> String {
    numpy::dtype::<T>(py)
        .str()
        .map_or_else(|_| "?".to_string(), |s| s.to_string())
}

/// `out` as a writable, C-contiguous `(channels, samples)` array of `T`, or an
/// `InvalidInputError` that says what is wrong with it.
fn checked_out<'py, T: Element>(
    out: &Bound<'py, PyAny>,
    shape: [usize; 2],
) -> PyResult<Bound<'py, PyArray2<T>>> {
    let py = out.py();
    let want = || {
        format!(
            "a C-contiguous {} array of shape ({}, {})",
            dtype_name::<T>(py),
            shape[0],
            shape[1]
        )
    };
    let Ok(array) = out.cast::<PyUntypedArray>() else {
        return Err(invalid(format!(
            "out must be {}, not {}",
            want(),
            type_name(out)
        )));
    };
    if array.shape() != shape {
        return Err(invalid(format!(
            "out has shape {}; the read needs {}",
            shape_text(array.shape()),
            want()
        )));
    }
    if !array.dtype().is_equiv_to(&numpy::dtype::<T>(py)) {
        let given = array
            .dtype()
            .str()
            .map_or_else(|_| "?".to_string(), |s| s.to_string());
        return Err(invalid(format!(
            "out has dtype {given}; the read needs {}",
            want()
        )));
    }
    if !array.is_c_contiguous() {
        return Err(invalid(format!(
            "out is not C-contiguous (a view or a transpose?); the read needs {}",
            want()
        )));
    }
    array
        .cast::<PyArray2<T>>()
        .cloned()
        .map_err(|_| invalid(format!("out must be {}", want())))
}

/// Calls `fill` on `out` (or a new array) with the GIL released; returns the array.
///
/// A new array comes from NumPy's own `zeros` (calloc: pages are zeroed lazily, as the read
/// touches them; an allocation that fails is a `MemoryError`, not an abort).
fn fill_array<'py, T, F>(
    py: Python<'py>,
    shape: [usize; 2],
    out: Option<&Bound<'py, PyAny>>,
    fill: F,
) -> PyResult<Bound<'py, PyAny>>
where
    T: Element + Pod + Send,
    F: Fn(&mut [T]) -> PyResult<()> + Send + Sync,
{
    let array = match out.filter(|o| !o.is_none()) {
        Some(out) => checked_out::<T>(out, shape)?,
        None => PyArray2::<T>::zeros(py, shape, false),
    };
    let mut guard = array.try_readwrite().map_err(|e| match e {
        BorrowError::NotWriteable => invalid("out is read-only; the read needs a writable array"),
        _ => invalid("out is in use by another read"),
    })?;
    let slice = guard
        .as_slice_mut()
        .map_err(|_| invalid("out is not contiguous"))?;
    py.detach(|| fill(slice))?;
    drop(guard);
    Ok(array.into_any())
}

/// Scaled values of `channels` over `range`, channel-major, as `float32` `(channels, samples)`.
pub(crate) fn read<'py>(
    py: Python<'py>,
    source: &Arc<dyn RecordingSource>,
    channels: &[usize],
    range: Range<u64>,
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let shape = [channels.len(), samples_of(source, &range)?];
    fill_array::<f32, _>(py, shape, out, |buf| {
        source.read(channels, range.clone(), buf).or_raise()
    })
}

/// Scaled values of every channel over `range`, time-major, as `float32` `(samples, channels)`:
/// the source's native read (no transpose for a time-major file); a channel-major source is
/// read natively, then transposed through one temporary buffer.
pub(crate) fn read_frames<'py>(
    py: Python<'py>,
    source: &Arc<dyn RecordingSource>,
    range: Range<u64>,
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let n = samples_of(source, &range)?;
    let c = source.info().channel_count();
    fill_array::<f32, _>(py, [n, c], out, |buf| {
        if source.read_native(range.clone(), buf).or_raise()? == MemoryOrder::ChannelMajor {
            let channel_major = buf.to_vec();
            for (ch, row) in channel_major.chunks_exact(n.max(1)).enumerate() {
                for (s, &v) in row.iter().enumerate() {
                    buf[s * c + ch] = v;
                }
            }
        }
        Ok(())
    })
}

/// Stored values of `channels` over `range`, channel-major, in the stored dtype.
pub(crate) fn read_stored<'py>(
    py: Python<'py>,
    source: &Arc<dyn RecordingSource>,
    channels: &[usize],
    range: Range<u64>,
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let shape = [channels.len(), samples_of(source, &range)?];
    match source.info().format {
        SampleFormat::I8 => stored_as::<i8>(py, source, channels, range, shape, out),
        SampleFormat::I16 => stored_as::<i16>(py, source, channels, range, shape, out),
        SampleFormat::U16 => stored_as::<u16>(py, source, channels, range, shape, out),
        SampleFormat::I32 => stored_as::<i32>(py, source, channels, range, shape, out),
        SampleFormat::F32 => stored_as::<f32>(py, source, channels, range, shape, out),
        SampleFormat::F64 => stored_as::<f64>(py, source, channels, range, shape, out),
    }
}

/// The stored bytes read straight into the typed buffer NumPy receives.
fn stored_as<'py, T: Element + Pod + Send>(
    py: Python<'py>,
    source: &Arc<dyn RecordingSource>,
    channels: &[usize],
    range: Range<u64>,
    shape: [usize; 2],
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    fill_array::<T, _>(py, shape, out, |buf| {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(buf);
        source
            .read_stored(channels, range.clone(), bytes)
            .or_raise()?;
        // Stored values are little-endian; NumPy's native dtypes are the machine's order.
        if cfg!(target_endian = "big") {
            for value in bytes.chunks_exact_mut(std::mem::size_of::<T>()) {
                value.reverse();
            }
        }
        Ok(())
    })
}

/// The samples of `range`, checked against the recording before anything is allocated (the
/// library's check and message).
fn samples_of(source: &Arc<dyn RecordingSource>, range: &Range<u64>) -> PyResult<usize> {
    check_sample_range(range, source.info().samples).or_raise()
}

/// A shape as Python writes it: `(30,)`, `(2, 10)`.
fn shape_text(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
