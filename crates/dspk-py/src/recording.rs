//! `Recording`: any dspk recording (a file, the synthetic probe, a Python object) with its
//! description as Python values and its reads as NumPy arrays; `open` and `synthetic`.

use std::ops::Deref;
use std::path::{Path, PathBuf};

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use dspk_io::{OpenedRecording, Origin};
use dspk_types::{
    ChunkSchedule, DspResult, MemoryOrder, RateChoice, SampleFormat, SyntheticConfig,
};

use crate::args;
use crate::errors::{OrRaise, invalid};
use crate::stored;
use crate::time;
use crate::windows::WindowIterator;

/// A segment for Python: `(start, samples, first_sample, start_time)`.
type SegmentTuple<'py> = (u64, u64, u64, Bound<'py, PyAny>);

/// A recording: a file (SpikeGLX `.bin` + `.meta`, raw binary + JSON sidecar), the built-in
/// synthetic probe, or a Python object (`dspk.from_spikeinterface`). Reads return NumPy arrays
/// of shape `(channels, samples)`; the GIL is released while they run.
#[pyclass(module = "dspk", frozen)]
pub struct Recording {
    opened: OpenedRecording,
}

impl Deref for Recording {
    type Target = OpenedRecording;

    fn deref(&self) -> &OpenedRecording {
        &self.opened
    }
}

impl From<OpenedRecording> for Recording {
    fn from(opened: OpenedRecording) -> Self {
        Self { opened }
    }
}

impl Recording {
    /// The files it consists of, each with what it is (none unless it is a file).
    pub(crate) fn input_files(&self) -> PyResult<Vec<(PathBuf, String)>> {
        self.opened.files().or_raise()
    }
}

#[pymethods]
impl Recording {
    /// Writes a report a person opens in a browser to `out` (as `dspk report` does): the
    /// recording is scanned, `pipeline` (a preset's name, a spec file or spec text; `None`:
    /// none) fitted where it must be, and the windows `at` asks for (times: seconds, or the
    /// program's notation as `str`; default: three spread over the recording) drawn raw and
    /// after each stage; `colour_by`: what the probe's contacts are coloured by (`"class"`:
    /// dead, noisy, good; `"std"`, `"mad"`, `"mean"`). Returns where it went, its size and
    /// its data.
    #[pyo3(signature = (out, *, pipeline=None, at=None, runtime=None, device=None, progress=None, colour_by="class"))]
    #[allow(clippy::too_many_arguments)]
    fn report<'py>(
        &self,
        py: Python<'py>,
        out: PathBuf,
        pipeline: Option<&str>,
        at: Option<&Bound<'_, PyAny>>,
        runtime: Option<&str>,
        device: Option<usize>,
        progress: Option<Py<PyAny>>,
        colour_by: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::report::recording_report(
            py, self, &out, pipeline, at, runtime, device, progress, colour_by,
        )
    }

    /// The recording's name (often its file name).
    #[getter]
    fn name(&self) -> String {
        self.source.info().name.clone()
    }

    /// The exact sample rate in hertz.
    #[getter]
    fn sample_rate<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        time::rate(py, self.source.info().sample_rate)
    }

    /// The sample rate in hertz as a float.
    #[getter]
    fn sample_rate_hz(&self) -> f64 {
        self.source.info().sample_rate.rate_hz()
    }

    /// The number of channels.
    #[getter]
    fn channel_count(&self) -> usize {
        self.source.info().channel_count()
    }

    /// Samples (time points) per channel.
    #[getter]
    fn samples(&self) -> u64 {
        self.source.info().samples
    }

    /// The exact duration in seconds.
    #[getter]
    fn duration<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        time::seconds(py, self.source.info().duration().or_raise()?)
    }

    /// The exact time of sample 0 in seconds (SpikeGLX's `firstSample` / rate).
    #[getter]
    fn start_time<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        time::seconds(py, self.source.info().start_time)
    }

    /// The segments, each `(start, samples, first_sample, start_time)`: where it starts in
    /// the recording's samples, its length, the acquisition clock's number of its first sample
    /// and its start time in exact seconds. One for a recording without gaps; reads and
    /// windows never cross from one to the next.
    #[getter]
    fn segments<'py>(&self, py: Python<'py>) -> PyResult<Vec<SegmentTuple<'py>>> {
        self.source
            .info()
            .segments()
            .list()
            .iter()
            .map(|g| {
                Ok((
                    g.start,
                    g.samples,
                    g.first_sample,
                    time::seconds(py, g.start_time)?,
                ))
            })
            .collect()
    }

    /// The rate the format states as nominal (`sample_rate` unless that is a measured or
    /// chosen one), exact.
    #[getter]
    fn nominal_rate<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        time::rate(py, self.source.info().nominal())
    }

    /// The rate the clock was measured to run at, where the format tells (Open Ephys 0.6+
    /// timestamps, SpikeGLX's calibrated `imSampRate`), exact; else `None`.
    #[getter]
    fn measured_rate<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.source
            .info()
            .measured_rate
            .map(|r| time::rate(py, r))
            .transpose()
    }

    /// The channels' names.
    #[getter]
    fn channel_names(&self) -> Vec<String> {
        self.source
            .info()
            .channels
            .iter()
            .map(|c| c.name.clone())
            .collect()
    }

    /// Per channel, the multiplier from a stored value to its unit (`float32`).
    #[getter]
    fn gains<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f32>> {
        let g: Vec<f32> = self.source.info().channels.iter().map(|c| c.gain).collect();
        PyArray1::from_vec(py, g)
    }

    /// Per channel, what is added after the gain (`float32`).
    #[getter]
    fn offsets<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f32>> {
        let o: Vec<f32> = self
            .source
            .info()
            .channels
            .iter()
            .map(|c| c.offset)
            .collect();
        PyArray1::from_vec(py, o)
    }

    /// Per channel, the unit of the scaled values (`µV`, `mV`, …; `""` for none).
    #[getter]
    fn units(&self) -> Vec<String> {
        self.source
            .info()
            .channels
            .iter()
            .map(|c| c.unit.symbol().to_string())
            .collect()
    }

    /// Per channel, how many µV one unit of its scaled values is (`float64`: 10⁶ for volts,
    /// 10³ for millivolts, 1 for microvolts; NaN where the unit is not a voltage):
    /// `gains * uv_per_unit` are the gains to µV.
    #[getter]
    fn uv_per_unit<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let f: Vec<f64> = self
            .source
            .info()
            .channels
            .iter()
            .map(|c| c.unit.microvolts_per_unit().unwrap_or(f64::NAN))
            .collect();
        PyArray1::from_vec(py, f)
    }

    /// Per channel, what its values are, as the reader knows: `"signal"`, `"sync"` (a sync
    /// word: SpikeGLX imec's SY channel) or `"digital"` (digital lines packed in a word:
    /// SpikeGLX's NI digital words).
    #[getter]
    fn channel_kinds(&self) -> Vec<&'static str> {
        self.source
            .info()
            .channels
            .iter()
            .map(|c| c.kind.name())
            .collect()
    }

    /// The indices of the channels that carry no sampled signal (sync words and digital
    /// lines; see `channel_kinds`), in order.
    #[getter]
    fn sync_channels(&self) -> Vec<usize> {
        self.source
            .info()
            .channels
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.kind.is_signal())
            .map(|(i, _)| i)
            .collect()
    }

    /// The NumPy dtype of the stored values (what `read_stored` returns).
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArrayDescr> {
        match self.source.info().format {
            SampleFormat::I8 => numpy::dtype::<i8>(py),
            SampleFormat::I16 => numpy::dtype::<i16>(py),
            SampleFormat::U16 => numpy::dtype::<u16>(py),
            SampleFormat::I32 => numpy::dtype::<i32>(py),
            SampleFormat::F32 => numpy::dtype::<f32>(py),
            SampleFormat::F64 => numpy::dtype::<f64>(py),
        }
    }

    /// How samples are laid out in storage: `"time-major"` or `"channel-major"`.
    #[getter]
    fn order(&self) -> &'static str {
        self.source.info().order.name()
    }

    /// Free-form metadata from the source (e.g. a SpikeGLX `.meta`'s keys).
    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.source.info().metadata {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// Where each channel's contact sits, `None` where the format gives no geometry: a
    /// `probeinterface.Probe` (probeinterface's JSON form of it, as `dspk info --probe-out`
    /// writes) where probeinterface can be imported, else a dict of NumPy arrays, one entry per
    /// contact (`x_um`, `y_um`, `shank`, `contact_id`, `device_channel_index`, and `adc`,
    /// `adc_order` where the ADC slots are known) with the probe's `model`, `shank_pitch_um`,
    /// `num_channels_per_adc` and `adc_cycle_samples` (each `None` where unknown).
    #[getter]
    fn probe<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(probe) = &self.source.info().probe else {
            return Ok(None);
        };
        match py.import("probeinterface") {
            Ok(pi) => {
                let text = dspk_io::probeinterface_json(probe)["probes"][0].to_string();
                let dict = py.import("json")?.call_method1("loads", (text,))?;
                Ok(Some(
                    pi.getattr("Probe")?.call_method1("from_dict", (dict,))?,
                ))
            }
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyImportError>(py) => {
                probe_dict(py, probe).map(|d| Some(d.into_any()))
            }
            Err(e) => Err(e),
        }
    }

    /// The path it was opened from, or `None`.
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.opened.path().map(Path::to_path_buf)
    }

    /// `"spikeglx"`, `"binary"`, `"openephys"`, `"synthetic"` or `"python"`.
    #[getter]
    fn format(&self) -> &'static str {
        match &self.origin {
            Origin::File { format, .. } | Origin::Joined { format, .. } => format.name(),
            Origin::Synthetic { .. } => "synthetic",
            Origin::Other { .. } => "python",
        }
    }

    /// What the reader noticed without refusing the file (e.g. a dropped partial frame).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// The files the recording consists of (its data file and its sidecar or `.meta`).
    #[getter]
    fn files(&self) -> PyResult<Vec<PathBuf>> {
        Ok(self.input_files()?.into_iter().map(|(p, _)| p).collect())
    }

    /// The synthetic recording's planted dead channels (`None` for other recordings).
    #[getter]
    fn planted_dead(&self) -> Option<Vec<usize>> {
        match &self.origin {
            Origin::Synthetic { dead, .. } => Some(dead.clone()),
            _ => None,
        }
    }

    /// The synthetic recording's planted noisy channels (`None` for other recordings).
    #[getter]
    fn planted_noisy(&self) -> Option<Vec<usize>> {
        match &self.origin {
            Origin::Synthetic { noisy, .. } => Some(noisy.clone()),
            _ => None,
        }
    }

    /// Scaled values (`stored × gain + offset`, in each channel's unit: µV for extracellular
    /// channels) of `channels` (default: all, in order) over samples `start..stop`, as a
    /// `float32` array of shape `(channels, samples)`. With `out=`, fills that array (it must
    /// be C-contiguous `float32` of exactly that shape) and returns it.
    #[pyo3(signature = (channels=None, start=None, stop=None, *, out=None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        channels: Option<&Bound<'py, PyAny>>,
        start: Option<&Bound<'py, PyAny>>,
        stop: Option<&Bound<'py, PyAny>>,
        out: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let info = self.source.info();
        let channels = args::channels(channels, info)?;
        let range = args::sample_range(start, stop, info.samples, ("start", "stop"))?;
        stored::read(py, &self.source, &channels, range, out)
    }

    /// The stored values (before gain and offset) of `channels` over `start..stop`, shape
    /// `(channels, samples)`, in the stored dtype (`dtype`); `out=` as in `read`.
    #[pyo3(signature = (channels=None, start=None, stop=None, *, out=None))]
    fn read_stored<'py>(
        &self,
        py: Python<'py>,
        channels: Option<&Bound<'py, PyAny>>,
        start: Option<&Bound<'py, PyAny>>,
        stop: Option<&Bound<'py, PyAny>>,
        out: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let info = self.source.info();
        let channels = args::channels(channels, info)?;
        let range = args::sample_range(start, stop, info.samples, ("start", "stop"))?;
        stored::read_stored(py, &self.source, &channels, range, out)
    }

    /// Scaled values of every channel over samples `start..stop`, time-major: `float32` of
    /// shape `(samples, channels)`, SpikeInterface's layout. A time-major file (SpikeGLX) is
    /// decoded straight, without the transpose `read` does; `out=` as in `read`.
    #[pyo3(signature = (start=None, stop=None, *, out=None))]
    fn read_frames<'py>(
        &self,
        py: Python<'py>,
        start: Option<&Bound<'py, PyAny>>,
        stop: Option<&Bound<'py, PyAny>>,
        out: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let total = self.source.info().samples;
        let range = args::sample_range(start, stop, total, ("start", "stop"))?;
        stored::read_frames(py, &self.source, range, out)
    }

    /// Halo windows over the whole recording: each owns `batch` samples (the last may own
    /// fewer) and reads `halo` more on each side (an int, or `(left, right)`), clamped to the
    /// recording; every `every`-th window. Read on a background thread (the next window while
    /// Python works on this one), scaled as `read`.
    #[pyo3(signature = (batch, halo=None, channels=None, every=None))]
    fn windows(
        &self,
        batch: &Bound<'_, PyAny>,
        halo: Option<&Bound<'_, PyAny>>,
        channels: Option<&Bound<'_, PyAny>>,
        every: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<WindowIterator> {
        let info = self.source.info();
        let batch = args::positive(batch, "batch")?;
        let (left, right) = match halo.filter(|h| !h.is_none()) {
            None => (0, 0),
            Some(h) => match h.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>() {
                Ok((l, r)) => (args::index(&l, "halo[0]")?, args::index(&r, "halo[1]")?),
                Err(_) => {
                    let both = args::index(h, "halo")?;
                    (both, both)
                }
            },
        };
        let every = match every.filter(|e| !e.is_none()) {
            None => 1,
            Some(e) => args::positive(e, "every")?,
        };
        let channels = args::channels(channels, info)?;
        if info.samples == 0 {
            return Err(invalid(format!(
                "{}: the recording has no samples",
                self.label()
            )));
        }
        let schedule =
            ChunkSchedule::for_recording(info, 0..info.samples, batch, left, right).or_raise()?;
        let step = usize::try_from(every).unwrap_or(usize::MAX);
        let windows: Vec<_> = schedule.into_windows().into_iter().step_by(step).collect();
        Ok(WindowIterator::new(self.source.clone(), channels, windows))
    }

    fn __repr__(&self) -> String {
        let info = self.source.info();
        format!(
            "<dspk.Recording {}: {} channels × {} samples at {}, {} {}>",
            self.label(),
            info.channel_count(),
            info.samples,
            info.sample_rate,
            info.format.name(),
            info.order.name()
        )
    }
}

/// Opens a recording file in any format dspk reads: a SpikeGLX `.bin` (with its `.meta`), an
/// Open Ephys folder, an NWB file, or a raw binary file with a `<file>.json` sidecar. `stream`
/// names the Open Ephys continuous stream to read (folder name or `stream_name`): the way to
/// choose one of a folder of an experiment's recordings; or an NWB file's `ElectricalSeries`
/// (its path in the file, `acquisition/ElectricalSeriesAP`, or its last part).
/// `probe` names a probeinterface JSON file whose
/// probe replaces the recording's own (the program's `--probe`); `rate` times the recording at
/// `"nominal"`, `"measured"` or a rate in Hz (a number, or text such as `"30000.12"`; the
/// program's `--rate`).
#[pyfunction]
#[pyo3(signature = (path, *, stream=None, probe=None, rate=None))]
pub(crate) fn open(
    py: Python<'_>,
    path: PathBuf,
    stream: Option<String>,
    probe: Option<PathBuf>,
    rate: Option<&Bound<'_, PyAny>>,
) -> PyResult<Recording> {
    let rate = match rate.filter(|r| !r.is_none()) {
        None => None,
        Some(r) => Some(match r.cast::<pyo3::types::PyString>() {
            Ok(text) => {
                RateChoice::parse(text.to_str()?).map_err(|e| invalid(format!("rate: {e}")))?
            }
            Err(_) => RateChoice::Hz(args::rate(r)?),
        }),
    };
    let options = dspk_io::OpenOptions { stream };
    let opened = py
        .detach(|| -> DspResult<_> {
            let mut opened = OpenedRecording::open(&path, &options)?;
            if let Some(probe) = &probe {
                opened = opened.with_probe_file(probe)?;
            }
            if let Some(rate) = rate {
                opened = opened.with_rate(rate)?;
            }
            Ok(opened)
        })
        .or_raise()?;
    Ok(opened.into())
}

/// Several recording files read as one, end to end by their clocks (SpikeGLX `_tN` files of a
/// run are put in trigger order by `firstSample`; a file missing in the middle is an error naming
/// it): files that continue each other are one segment, a gap starts another, or is filled with
/// stored zeros with `zero_fill_gaps=True` (as CatGT does). Rates must be equal exactly, or
/// differ by at most `rate_tolerance_ppm` (a warning in `warnings` states the drift).
#[pyfunction]
#[pyo3(signature = (paths, *, zero_fill_gaps=false, rate_tolerance_ppm=None))]
pub(crate) fn concat(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    zero_fill_gaps: bool,
    rate_tolerance_ppm: Option<f64>,
) -> PyResult<Recording> {
    let options = dspk_types::ConcatOptions {
        gaps: if zero_fill_gaps {
            dspk_types::GapFill::Zeros
        } else {
            dspk_types::GapFill::Segments
        },
        rate_tolerance_ppm,
        part_per_segment: false,
    };
    options
        .validate()
        .map_err(|e| invalid(format!("rate_tolerance_ppm: {e}")))?;
    let open = dspk_io::OpenOptions::default();
    let opened = py
        .detach(|| OpenedRecording::joined(&paths, options, &open))
        .or_raise()?;
    Ok(opened.into())
}

/// The built-in synthetic Neuropixels-like recording: `seconds` long (default 60) or exactly
/// `samples` samples, `channels` channels (default 384) at `sample_rate` (default 30 kHz),
/// int16 stored with a µV gain, seeded noise and spikes, and planted dead and noisy channels
/// (default: the probe's own, those below `channels`); `probe`: the geometry of a
/// probeinterface JSON file attached to it (as `dspk scan --probe` does).
#[pyfunction]
#[pyo3(signature = (seconds=None, *, samples=None, channels=None, sample_rate=None, seed=None, dead=None, noisy=None, probe=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn synthetic(
    seconds: Option<&Bound<'_, PyAny>>,
    samples: Option<&Bound<'_, PyAny>>,
    channels: Option<&Bound<'_, PyAny>>,
    sample_rate: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    dead: Option<Vec<usize>>,
    noisy: Option<Vec<usize>>,
    probe: Option<PathBuf>,
) -> PyResult<Recording> {
    let mut config =
        SyntheticConfig::default().with_seed(args::opt_index(seed, "seed")?.unwrap_or(0));
    if let Some(rate) = sample_rate.filter(|r| !r.is_none()) {
        config.sample_rate = args::rate(rate)?;
    }
    if let Some(c) = channels.filter(|c| !c.is_none()) {
        let count = usize::try_from(args::positive(c, "channels")?).unwrap_or(usize::MAX);
        if count > dspk_io::MAX_CHANNELS {
            return Err(invalid(format!(
                "channels {count} is more than dspk reads ({})",
                dspk_io::MAX_CHANNELS
            )));
        }
        let keep = |v: &[usize]| v.iter().copied().filter(|&i| i < count).collect::<Vec<_>>();
        let (d, n) = (keep(&config.dead), keep(&config.noisy));
        config = config.with_channels(count, d, n);
    }
    if let Some(d) = dead {
        config.dead = d;
    }
    if let Some(n) = noisy {
        config.noisy = n;
    }
    config.samples = match (
        seconds.filter(|s| !s.is_none()),
        samples.filter(|s| !s.is_none()),
    ) {
        (Some(_), Some(_)) => return Err(invalid("give seconds or samples, not both")),
        (Some(s), None) => args::seconds(s, "seconds")?
            .to_sample_index(config.sample_rate)
            .or_raise()?,
        (None, Some(n)) => args::index(n, "samples")?,
        (None, None) => config.samples,
    };
    if config.samples == 0 {
        return Err(invalid(
            "the synthetic recording would be empty: it needs at least one sample",
        ));
    }
    let opened = OpenedRecording::synthetic(config).or_raise()?;
    Ok(match probe {
        Some(path) => opened.with_probe_file(&path).or_raise()?,
        None => opened,
    }
    .into())
}

/// Test support: runs dspk's `RecordingSource` conformance suite (the checks every Rust
/// source passes) on `recording` with `seed`; raises `AssertionError` with the first
/// violation.
#[pyfunction]
#[pyo3(name = "_check_conformance")]
pub(crate) fn check_conformance(py: Python<'_>, recording: &Recording, seed: u64) -> PyResult<()> {
    let source = recording.source.clone();
    let outcome = py.detach(move || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            dspk_types::conformance::check_all(&*source, seed);
        }))
    });
    outcome.map_err(|panic| {
        pyo3::exceptions::PyAssertionError::new_err(crate::windows::panic_text(&*panic))
    })
}

/// `MemoryOrder` from its name (`time-major`, `channel-major`).
pub(crate) fn order_from(name: &str) -> PyResult<MemoryOrder> {
    name.parse::<MemoryOrder>().map_err(|_| {
        invalid(format!(
            "order {name:?} is not a layout: use \"time-major\" or \"channel-major\""
        ))
    })
}

/// `probe` as a dict of NumPy arrays, one entry per contact (see `Recording.probe`).
fn probe_dict<'py>(py: Python<'py>, probe: &dspk_types::Probe) -> PyResult<Bound<'py, PyDict>> {
    let contacts: Vec<_> = probe.contacts().collect();
    let d = PyDict::new(py);
    let x: Vec<f64> = contacts.iter().map(|(_, c)| c.x_um).collect();
    let y: Vec<f64> = contacts.iter().map(|(_, c)| c.y_um).collect();
    let shank: Vec<u32> = contacts.iter().map(|(_, c)| c.shank).collect();
    let channel: Vec<u64> = contacts.iter().map(|(ch, _)| *ch as u64).collect();
    let ids: Vec<&str> = contacts.iter().map(|(_, c)| c.id.as_str()).collect();
    d.set_item("x_um", PyArray1::from_vec(py, x))?;
    d.set_item("y_um", PyArray1::from_vec(py, y))?;
    d.set_item("shank", PyArray1::from_vec(py, shank))?;
    d.set_item("contact_id", ids)?;
    d.set_item("device_channel_index", PyArray1::from_vec(py, channel))?;
    let slots: Option<Vec<_>> = contacts.iter().map(|(_, c)| c.adc).collect();
    if let Some(slots) = slots {
        let adc: Vec<u32> = slots.iter().map(|s| s.adc).collect();
        let order: Vec<u32> = slots.iter().map(|s| s.order).collect();
        d.set_item("adc", PyArray1::from_vec(py, adc))?;
        d.set_item("adc_order", PyArray1::from_vec(py, order))?;
    }
    let cycle = probe.adc_cycle();
    d.set_item("model", probe.model())?;
    d.set_item("shank_pitch_um", probe.shank_pitch_um())?;
    d.set_item("num_channels_per_adc", cycle.map(|c| c.channels_per_adc))?;
    d.set_item("adc_cycle_samples", cycle.map(|c| c.cycle_samples))?;
    Ok(d)
}
