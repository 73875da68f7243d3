//! `Recording.windows`: halo windows streamed by dspk's double-buffered `WindowLoader` on a
//! background thread, handed to Python one by one as NumPy arrays.

use std::any::Any;
use std::ops::Range;
use std::sync::mpsc::{Receiver, sync_channel};
use std::sync::{Arc, Mutex};

use numpy::ndarray::Array2;
use numpy::prelude::*;
use numpy::{PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyRange, PySlice};

use dspk_types::{DspError, DspResult, HaloWindow, RecordingSource, WindowLoader};

use crate::errors::{OrRaise, invalid};

/// What the background thread hands over: a window and its values, or the first failure.
type Item = DspResult<(HaloWindow, Vec<f32>)>;

/// The text of a panic's payload.
pub(crate) fn panic_text(panic: &(dyn Any + Send)) -> String {
    match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
        (Some(s), _) => (*s).to_string(),
        (_, Some(s)) => s.clone(),
        _ => "a panic without a message".to_string(),
    }
}

/// The iterator `Recording.windows` returns: each `next` hands over the window the loader read
/// while Python worked on the previous one.
#[pyclass(module = "dspk")]
pub struct WindowIterator {
    source: Arc<dyn RecordingSource>,
    channels: Vec<usize>,
    windows: Option<Vec<HaloWindow>>,
    count: usize,
    /// Set once the first window is asked for; dropped to stop the reader.
    receiver: Option<Mutex<Receiver<Item>>>,
}

impl WindowIterator {
    /// An iterator over `windows` of `source` (nothing is read until the first `next`).
    pub(crate) fn new(
        source: Arc<dyn RecordingSource>,
        channels: Vec<usize>,
        windows: Vec<HaloWindow>,
    ) -> Self {
        Self {
            source,
            channels,
            count: windows.len(),
            windows: Some(windows),
            receiver: None,
        }
    }

    /// Starts the loader on a thread of its own. It copies each window's values into a vector
    /// of its own (the array Python receives, no other copy) and waits until Python takes it;
    /// a dropped receiver stops it at the next window.
    fn start(&mut self) -> PyResult<()> {
        let windows = self.windows.take().unwrap_or_default();
        let (tx, rx) = sync_channel::<Item>(0);
        let source = self.source.clone();
        let channels = self.channels.clone();
        std::thread::Builder::new()
            .name("dspk-windows".to_string())
            .spawn(move || {
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let loader = WindowLoader::with_channels(&*source, channels)?;
                    loader.stream_while(&windows, |w, data| {
                        Ok(tx.send(Ok((w.clone(), data.to_vec()))).is_ok())
                    })
                }));
                let failure = match outcome {
                    Ok(Ok(_)) => None,
                    Ok(Err(e)) => Some(e),
                    Err(panic) => Some(DspError::config(format!(
                        "reading windows failed: {}",
                        panic_text(&*panic)
                    ))),
                };
                if let Some(e) = failure {
                    let _ = tx.send(Err(e));
                }
            })
            .map_err(|e| invalid(format!("could not start the window reader: {e}")))?;
        self.receiver = Some(Mutex::new(rx));
        Ok(())
    }
}

#[pymethods]
impl WindowIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Window>> {
        if self.receiver.is_none() {
            if self.windows.is_none() {
                return Ok(None);
            }
            self.start()?;
        }
        let Some(receiver) = &self.receiver else {
            return Ok(None);
        };
        let item = py.detach(|| match receiver.lock() {
            Ok(rx) => rx.recv().ok(),
            Err(_) => None,
        });
        match item {
            None => {
                self.receiver = None;
                Ok(None)
            }
            Some(Err(e)) => {
                self.receiver = None;
                Err(e).or_raise()
            }
            Some(Ok((w, values))) => {
                let shape = (self.channels.len(), w.read_len());
                let array = Array2::from_shape_vec(shape, values)
                    .map_err(|e| invalid(format!("window shape: {e}")))?;
                Ok(Some(Window {
                    window: w,
                    data: array.into_pyarray(py).unbind(),
                }))
            }
        }
    }

    fn __len__(&self) -> usize {
        self.count
    }

    /// Stops reading: the background reader ends at its next window.
    fn close(&mut self) {
        self.windows = None;
        self.receiver = None;
    }
}

/// One halo window: its values, the samples it reads and the samples it owns.
#[pyclass(module = "dspk", frozen)]
pub struct Window {
    window: HaloWindow,
    data: Py<PyArray2<f32>>,
}

#[pymethods]
impl Window {
    /// Position of the window in the recording's schedule, from 0.
    #[getter]
    fn index(&self) -> usize {
        self.window.index
    }

    /// The values, `float32` `(channels, samples read)`, scaled as `Recording.read`.
    #[getter]
    fn data(&self, py: Python<'_>) -> Py<PyArray2<f32>> {
        self.data.clone_ref(py)
    }

    /// The recording sample of `data[:, 0]`.
    #[getter]
    fn start(&self) -> u64 {
        self.window.read_global.start
    }

    /// The recording samples read (owned part and halos).
    #[getter]
    fn samples<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyRange>> {
        range(py, &self.window.read_global)
    }

    /// The recording samples this window owns (the windows' owned ranges tile the recording).
    #[getter]
    fn owned<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyRange>> {
        range(py, &self.window.valid_global)
    }

    /// Where the owned samples lie in `data` (a slice of its second axis).
    #[getter]
    fn valid<'py>(&self, py: Python<'py>) -> Bound<'py, PySlice> {
        let v = &self.window.valid_local;
        PySlice::new(py, v.start as isize, v.end as isize, 1)
    }

    /// The owned part of `data` (a view, no copy).
    #[getter]
    fn owned_data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let all = PySlice::full(py);
        self.data.bind(py).get_item((all, self.valid(py)))
    }

    /// The recording sample of an event at index `local` of `data`, or `None` when it lies in
    /// a halo (the neighbouring window owns it), so events are counted once.
    fn remap(&self, local: i64) -> Option<u64> {
        usize::try_from(local)
            .ok()
            .and_then(|l| self.window.remap_event(l))
    }

    /// `remap` of many events at once: the recording samples of the owned ones, in order
    /// (`int64`; events in halos or outside `data` are left out).
    fn remap_events<'py>(&self, py: Python<'py>, local: Vec<i64>) -> Bound<'py, PyArray1<i64>> {
        let owned: Vec<i64> = local
            .into_iter()
            .filter_map(|l| self.remap(l))
            .map(|g| g as i64)
            .collect();
        PyArray1::from_vec(py, owned)
    }

    fn __repr__(&self) -> String {
        let w = &self.window;
        format!(
            "<dspk.Window {}: reads {}..{}, owns {}..{}>",
            w.index,
            w.read_global.start,
            w.read_global.end,
            w.valid_global.start,
            w.valid_global.end
        )
    }
}

/// `range(start, end)` of sample indices.
fn range<'py>(py: Python<'py>, r: &Range<u64>) -> PyResult<Bound<'py, PyRange>> {
    let start = isize::try_from(r.start).map_err(|_| invalid("sample index too large"))?;
    let end = isize::try_from(r.end).map_err(|_| invalid("sample index too large"))?;
    PyRange::new(py, start, end)
}
