//! dspk's Python exceptions: one `DspkError` base, subclasses with the built-in bases a Python
//! user expects (`ValueError`, `OSError`, `FileNotFoundError`, `RuntimeError`), carrying the
//! same one-line messages as the `dspk` program.

use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

use dspk_types::{ComputeError, DspError};

/// The exception classes, created once at import (PyO3's `create_exception!` takes one base;
/// these need two).
struct Classes {
    invalid_input: Py<PyType>,
    unsupported_format: Py<PyType>,
    file: Py<PyType>,
    not_found: Py<PyType>,
    device: Py<PyType>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

/// Which class an error is raised as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A bad argument or a value outside what the recording has (`ValueError`).
    InvalidInput,
    /// A format, type or feature dspk does not read (`ValueError`).
    UnsupportedFormat,
    /// A file that could not be read or written (`OSError`).
    File,
    /// A file that is not there (`FileNotFoundError`).
    NotFound,
    /// No usable device, or a device that failed (`RuntimeError`).
    Device,
}

/// A Python exception of `kind` with `message`.
pub(crate) fn error(py: Python<'_>, kind: Kind, message: impl Into<String>) -> PyErr {
    let message = one_line(&message.into());
    match CLASSES.get(py) {
        Some(c) => {
            let ty = match kind {
                Kind::InvalidInput => &c.invalid_input,
                Kind::UnsupportedFormat => &c.unsupported_format,
                Kind::File => &c.file,
                Kind::NotFound => &c.not_found,
                Kind::Device => &c.device,
            };
            PyErr::from_type(ty.bind(py).clone(), message)
        }
        // Only before the module finished importing, where the classes cannot be missed by
        // anyone: raise the built-in base.
        None => match kind {
            Kind::InvalidInput | Kind::UnsupportedFormat => PyValueError::new_err(message),
            Kind::File => PyOSError::new_err(message),
            Kind::NotFound => PyFileNotFoundError::new_err(message),
            Kind::Device => PyRuntimeError::new_err(message),
        },
    }
}

/// An invalid-input error (`ValueError`) with `message`.
pub(crate) fn invalid(message: impl Into<String>) -> PyErr {
    Python::attach(|py| error(py, Kind::InvalidInput, message))
}

/// The class a [`DspError`] is raised as.
pub(crate) fn kind_of(e: &DspError) -> Kind {
    match e {
        DspError::UnsupportedFormat(_) => Kind::UnsupportedFormat,
        DspError::Io { .. } => Kind::File,
        DspError::NotFound { .. } | DspError::NoSuchFile { .. } => Kind::NotFound,
        DspError::OnDevice { error, .. } => kind_of(error),
        DspError::Compute(c) => compute_kind(c),
        DspError::InvalidChannel { .. }
        | DspError::ShapeMismatch { .. }
        | DspError::InvalidSampleRate { .. }
        | DspError::BufferOverrun { .. }
        | DspError::BufferUnderrun { .. }
        | DspError::SampleRange { .. }
        | DspError::CrossesSegment { .. }
        | DspError::InvalidConfig(_)
        | DspError::Overflow(_)
        | DspError::NoMeasuredRate { .. }
        | DspError::Selection(_)
        | DspError::Probe(_)
        | DspError::Pipeline(_) => Kind::InvalidInput,
    }
}

/// The class a [`ComputeError`] is raised as: a runtime name that is wrong or not compiled in
/// is a bad argument; no device or a failing one is a device error.
fn compute_kind(e: &ComputeError) -> Kind {
    match e {
        ComputeError::UnknownName { .. } | ComputeError::NotCompiled { .. } => Kind::InvalidInput,
        ComputeError::NothingCompiled
        | ComputeError::NoDevice { .. }
        | ComputeError::DeviceFailure { .. } => Kind::Device,
    }
}

/// A [`DspError`] as the Python exception of its class, with the program's message.
pub(crate) fn from_dsp(e: DspError) -> PyErr {
    Python::attach(|py| error(py, kind_of(&e), e.to_string()))
}

/// A [`ComputeError`] as the Python exception of its class.
pub(crate) fn from_compute(e: ComputeError) -> PyErr {
    Python::attach(|py| error(py, compute_kind(&e), e.to_string()))
}

/// `?` on a `DspResult` inside a `#[pyfunction]`.
pub(crate) trait OrRaise<T> {
    /// The value, or the error raised as its Python class.
    fn or_raise(self) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, DspError> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(from_dsp)
    }
}

impl<T> OrRaise<T> for Result<T, ComputeError> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(from_compute)
    }
}

/// A message on one line, as the program prints it (a parser's multi-line report joined by
/// `; `).
fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// A new exception class `name` deriving from `bases`, shown as `dspk.<name>`.
fn class<'py>(
    py: Python<'py>,
    name: &str,
    bases: &[&Bound<'py, PyAny>],
    doc: &str,
) -> PyResult<Bound<'py, PyType>> {
    let namespace = PyDict::new(py);
    namespace.set_item("__doc__", doc)?;
    namespace.set_item("__module__", "dspk")?;
    let bases = PyTuple::new(py, bases)?;
    let ty = py
        .get_type::<PyType>()
        .call1((name, bases, namespace))?
        .cast_into::<PyType>()?;
    Ok(ty)
}

/// Creates the classes and adds them to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let exception = py.get_type::<pyo3::exceptions::PyException>().into_any();
    let value_error = py.get_type::<PyValueError>().into_any();
    let os_error = py.get_type::<PyOSError>().into_any();
    let not_found_error = py.get_type::<PyFileNotFoundError>().into_any();
    let runtime_error = py.get_type::<PyRuntimeError>().into_any();

    let base = class(
        py,
        "DspkError",
        &[&exception],
        "The base of every error dspk raises.",
    )?;
    let base_any = base.clone().into_any();
    let invalid_input = class(
        py,
        "InvalidInputError",
        &[&base_any, &value_error],
        "A bad argument, or a value outside what the recording has (a channel, a sample range, \
         an output array of the wrong shape or dtype, a configuration).",
    )?;
    let unsupported_format = class(
        py,
        "UnsupportedFormatError",
        &[&base_any, &value_error],
        "A format, type or feature dspk does not read.",
    )?;
    let file = class(
        py,
        "RecordingFileError",
        &[&base_any, &os_error],
        "A recording file, sidecar or output that could not be read or written; the message \
         names the file.",
    )?;
    let file_any = file.clone().into_any();
    let not_found = class(
        py,
        "RecordingNotFoundError",
        &[&file_any, &not_found_error],
        "A recording file that is not there.",
    )?;
    let device = class(
        py,
        "DeviceError",
        &[&base_any, &runtime_error],
        "No usable compute device, or a device that failed.",
    )?;
    for ty in [
        &base,
        &invalid_input,
        &unsupported_format,
        &file,
        &not_found,
        &device,
    ] {
        m.add(ty.name()?, ty)?;
    }
    let _ = CLASSES.set(
        py,
        Classes {
            invalid_input: invalid_input.unbind(),
            unsupported_format: unsupported_format.unbind(),
            file: file.unbind(),
            not_found: not_found.unbind(),
            device: device.unbind(),
        },
    );
    Ok(())
}
