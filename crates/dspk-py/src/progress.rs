//! Progress events of dspk's passes delivered to a Python callable.

use std::sync::Mutex;

use pyo3::prelude::*;

use dspk_types::{ProgressEvent as Event, ProgressSink};

/// One progress event: `done` of `total` `unit`s of `stage` (`total` 0 when unknown).
#[pyclass(module = "dspk", frozen, get_all)]
pub struct ProgressEvent {
    /// What is being done (e.g. `"device pass"`).
    stage: String,
    /// Units done so far.
    done: u64,
    /// Units in all; 0 when unknown.
    total: u64,
    /// What a unit is (`"bytes"`, `"windows"`).
    unit: &'static str,
}

#[pymethods]
impl ProgressEvent {
    /// `done / total` in `[0, 1]`, or `None` when the total is unknown.
    #[getter]
    fn fraction(&self) -> Option<f64> {
        (self.total > 0).then(|| (self.done as f64 / self.total as f64).min(1.0))
    }

    fn __repr__(&self) -> String {
        format!(
            "<dspk.ProgressEvent {}: {} of {} {}>",
            self.stage, self.done, self.total, self.unit
        )
    }
}

/// A sink calling `callback(event)` on whatever thread reports (attaching to the interpreter
/// there). The first exception the callback raises is kept for [`PySink::finish`]; later
/// events are not delivered.
pub(crate) struct PySink {
    callback: Option<Py<PyAny>>,
    failure: Mutex<Option<PyErr>>,
}

impl PySink {
    /// A sink for `callback` (`None`: every event is dropped).
    pub(crate) fn new(callback: Option<Py<PyAny>>) -> Self {
        Self {
            callback,
            failure: Mutex::new(None),
        }
    }

    /// The callback's first exception, raised after the pass.
    pub(crate) fn finish(self) -> PyResult<()> {
        match self.failure.into_inner() {
            Ok(Some(e)) => Err(e),
            _ => Ok(()),
        }
    }
}

impl ProgressSink for PySink {
    fn report(&self, event: &Event) {
        let Some(callback) = &self.callback else {
            return;
        };
        // The lock is never held while attaching: a thread that holds the GIL may report too.
        if self.failure.lock().map_or(true, |f| f.is_some()) {
            return;
        }
        let outcome = Python::attach(|py| {
            let event = ProgressEvent {
                stage: event.stage.clone(),
                done: event.done,
                total: event.total,
                unit: event.unit,
            };
            callback.bind(py).call1((event,)).map(|_| ())
        });
        if let (Err(e), Ok(mut failure)) = (outcome, self.failure.lock()) {
            failure.get_or_insert(e);
        }
    }
}
