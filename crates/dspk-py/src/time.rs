//! Exact rates and times as Python's `fractions.Fraction`.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

use dspk_types::{RationalTime, SampleRate};

static FRACTION: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `Fraction(numerator, denominator)`.
pub(crate) fn fraction<'py>(
    py: Python<'py>,
    numerator: impl IntoPyObject<'py>,
    denominator: impl IntoPyObject<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    FRACTION
        .import(py, "fractions", "Fraction")?
        .call1((numerator, denominator))
}

/// A sample rate in hertz, exactly.
pub(crate) fn rate<'py>(py: Python<'py>, rate: SampleRate) -> PyResult<Bound<'py, PyAny>> {
    let (n, d) = rate.as_ratio();
    fraction(py, n, d)
}

/// A time in seconds, exactly.
pub(crate) fn seconds<'py>(py: Python<'py>, t: RationalTime) -> PyResult<Bound<'py, PyAny>> {
    let (n, d) = t.as_ratio();
    fraction(py, n, d)
}
