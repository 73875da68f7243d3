//! `dspk.butter_sos`: the Butterworth sections dspk's filters run (what the oracle holds
//! against `scipy.signal.butter`), and the `f64` host `sosfiltfilt` the device is tested
//! against (internal, for the tests: `_check_sosfiltfilt_f64`).

use numpy::ndarray::Array2;
use numpy::prelude::*;
use numpy::{PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

use dspk_ops::filter::design::{Sos, butter};
use dspk_ops::filter::host;
use dspk_types::FilterBand;

use crate::errors::{from_dsp, invalid};

/// The band of scipy's `btype` spelling (its aliases included).
fn band_from(name: &str) -> PyResult<FilterBand> {
    match name {
        "highpass" | "high" | "hp" => Ok(FilterBand::Highpass),
        "lowpass" | "low" | "lp" => Ok(FilterBand::Lowpass),
        "bandpass" | "band" | "bp" => Ok(FilterBand::Bandpass),
        "bandstop" | "stop" | "bs" => Ok(FilterBand::Bandstop),
        other => Err(invalid(format!(
            "band {other:?} is none of \"highpass\", \"lowpass\", \"bandpass\", \"bandstop\""
        ))),
    }
}

/// The Butterworth filter dspk designs, as second-order sections `(n_sections, 6)` float64,
/// equal to `scipy.signal.butter(order, cutoff_hz, band, fs=fs, output="sos")`.
#[pyfunction]
pub(crate) fn butter_sos<'py>(
    py: Python<'py>,
    order: u32,
    cutoff_hz: Vec<f64>,
    band: &str,
    fs: f64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let band = band_from(band)?;
    let sos = butter(order, &cutoff_hz, band, fs).map_err(from_dsp)?;
    Ok(to_array(&sos).into_pyarray(py))
}

/// `sections` as an `(n, 6)` array.
fn to_array(sos: &Sos) -> Array2<f64> {
    let flat: Vec<f64> = sos.sections.iter().flatten().copied().collect();
    Array2::from_shape_vec((sos.sections.len(), 6), flat).expect("6 values per section")
}

/// dspk's `f64` host `sosfiltfilt` (scipy's defaults) of the 1-D `x` through `sos`
/// `(n_sections, 6)`: the reference the device filter is tested against.
#[pyfunction]
#[pyo3(name = "_check_sosfiltfilt_f64")]
pub(crate) fn sosfiltfilt_f64<'py>(
    py: Python<'py>,
    sos: PyReadonlyArray2<'py, f64>,
    x: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let sos = sos.as_array();
    if sos.ncols() != 6 || sos.nrows() == 0 {
        return Err(invalid(format!(
            "sos must be (n_sections, 6) with at least one section, got {} × {}",
            sos.nrows(),
            sos.ncols()
        )));
    }
    let sections = sos
        .rows()
        .into_iter()
        .map(|r| [r[0], r[1], r[2], r[3], r[4], r[5]])
        .collect();
    let sos = Sos { sections };
    let x: Vec<f64> = x.as_array().iter().copied().collect();
    let y = py
        .detach(|| host::sosfiltfilt(&sos, &x))
        .map_err(from_dsp)?;
    Ok(PyArray1::from_vec(py, y))
}
