//! `devices`, `scan` and `convert`: the device pass of `dspk-stream`, run with the GIL released,
//! its results as Python objects.

use std::path::{Path, PathBuf};

use pyo3::prelude::*;

use dspk_device::{Catalog, DeviceChoice, TargetExt as _, describe};
use dspk_io::{BinarySink, Origin};
use dspk_stream::{DecodeRoute, PassDevice, Planted, ScanOptions, ScanReport, ScanSubject};
use dspk_types::{ChannelMapFile, ComputeTarget, DspError, DspResult, Selection, SelectionPart};

use crate::args;
use crate::errors::{OrRaise, error};
use crate::progress::PySink;
use crate::recording::{Recording, order_from};
use crate::results::{ConvertResult, PassFigures, ScanResult, json_loads};

/// The runtime `name` names, else `DSPK_RUNTIME`'s, else the first compiled in.
pub(crate) fn target_of(name: Option<&str>) -> PyResult<ComputeTarget> {
    match name {
        Some(n) => ComputeTarget::parse(n).map_err(|e| {
            Python::attach(|py| {
                error(
                    py,
                    crate::errors::Kind::InvalidInput,
                    format!("runtime: {e}"),
                )
            })
        }),
        None => ComputeTarget::from_env().or_raise(),
    }
}

/// The client of device `index` (as `dspk devices` numbers it) of `target`, else `target`'s
/// default device.
pub(crate) fn client_of(
    target: ComputeTarget,
    index: Option<usize>,
) -> DspResult<cubecl::client::Client> {
    pass_device(target, index).map(|d| d.client)
}

/// One device of `target` (`index` as [`client_of`] takes it), labelled by its adapter, as
/// `dspk.preprocess` and `dspk.detect` open one for a part.
pub(crate) fn one_device(
    target: ComputeTarget,
    index: Option<usize>,
) -> DspResult<Vec<PassDevice>> {
    let client = client_of(target, index)?;
    let label = describe(&client).adapter_name;
    Ok(vec![PassDevice { client, label }])
}

/// Device `index` of `target`, named as `dspk --devices INDEX` names it, else `target`'s
/// default device, named by its adapter as `dspk` names it without `--devices`.
pub(crate) fn pass_device(target: ComputeTarget, index: Option<usize>) -> DspResult<PassDevice> {
    let Some(i) = index else {
        let client = target.client()?;
        let label = describe(&client).adapter_name;
        return Ok(PassDevice { client, label });
    };
    let chosen = Catalog::list().open(&DeviceChoice::Listed(vec![i]), Some(target))?;
    let d = chosen.into_iter().next().ok_or_else(|| {
        DspError::config(format!("device {i}: the catalog opened no device for it"))
    })?;
    Ok(PassDevice {
        client: d.client,
        label: d.label,
    })
}

/// The decode route `name` names (default: staging where possible).
pub(crate) fn route_of(name: Option<&str>) -> PyResult<DecodeRoute> {
    name.map_or(Ok(DecodeRoute::Staging), |n| {
        n.parse::<DecodeRoute>().or_raise()
    })
}

/// Every runtime dspk knows: whether it is compiled in, whether its default device opened (and
/// why not), and each device it enumerates (a dict per device, the fields of `dspk devices
/// --json`: `index` is the number `dspk --devices` takes, `default` marks the one `scan` and
/// `convert` use).
#[pyfunction]
pub(crate) fn devices(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let catalog = py.detach(Catalog::list);
    let mut value = serde_json::to_value(&catalog).unwrap_or_default();
    if let Some(runtimes) = value.as_array_mut() {
        for r in runtimes {
            if r.get("error").is_none() {
                r["error"] = serde_json::Value::Null;
            }
        }
    }
    json_loads(py, &value.to_string())
}

/// Scans samples `start..end` (default: all; sample indices, or times as the program writes
/// them: `"12.5"`, `"1:02:03.5"`, `"375000smp"`) of `recording` on the device: per-channel
/// statistics, dead and noisy channels, the mask, throughput (the program's `dspk scan`).
#[pyfunction]
#[pyo3(signature = (recording, *, runtime=None, start=None, end=None, progress=None, window_samples=None, decode=None, device=None))]
#[expect(
    clippy::too_many_arguments,
    reason = "keyword arguments of one Python function"
)]
pub(crate) fn scan(
    py: Python<'_>,
    recording: &Recording,
    runtime: Option<&str>,
    start: Option<&Bound<'_, PyAny>>,
    end: Option<&Bound<'_, PyAny>>,
    progress: Option<Py<PyAny>>,
    window_samples: Option<&Bound<'_, PyAny>>,
    decode: Option<&str>,
    device: Option<usize>,
) -> PyResult<ScanResult> {
    let target = target_of(runtime)?;
    let route = route_of(decode)?;
    let range = args::pass_range(start, end, recording.source.info(), ("start", "end"))?;
    let asked = args::opt_index(window_samples, "window_samples")?;
    let sink = PySink::new(progress.filter(|p| !p.is_none(py)));
    let source = recording.source.clone();
    let subject = subject_of(recording);
    let outcome = py.detach(|| -> DspResult<_> {
        let device = pass_device(target, device)?;
        let options = ScanOptions {
            range: Some(range),
            window_samples: asked,
            route,
            progress: &sink,
            fill_threads: None,
        };
        let devices = [device];
        let result = dspk_stream::scan_on(&devices, source.clone(), &options)?;
        ScanReport::new(subject, source.info(), &result, target, &devices)
    });
    sink.finish()?;
    Ok(ScanResult::new(py, outcome.or_raise()?).with_recording((**recording).clone()))
}

/// What a scan's report says of `recording` beyond its information: the same as `dspk scan`
/// says of it (no mask is written from Python).
pub(crate) fn subject_of(recording: &Recording) -> ScanSubject {
    let planted = match &recording.origin {
        Origin::Synthetic { dead, noisy } => Some(Planted {
            dead: dead.clone(),
            noisy: noisy.clone(),
        }),
        _ => None,
    };
    ScanSubject {
        label: recording.label(),
        warnings: recording.warnings.clone(),
        planted,
        mask_path: None,
    }
}

/// Converts `recording` to a raw binary `float32` file `out` with a JSON sidecar, decoded on
/// the device (the program's `dspk convert`): `channel_map` (a TOML or JSON map file) first,
/// then `channels` (indices into the mapped channels, in the order wanted, or a channel list as
/// the program writes it, `"0:5,100"`) and samples `start..end` (sample indices, or times as the
/// program writes them: `"12.5"`, `"1:02:03.5"`, `"375000smp"`), written in `order`
/// (`"time-major"` or `"channel-major"`).
#[pyfunction]
#[pyo3(signature = (recording, out, *, channel_map=None, channels=None, start=None, end=None, order="time-major", runtime=None, progress=None, window_samples=None, decode=None, device=None))]
#[expect(
    clippy::too_many_arguments,
    reason = "keyword arguments of one Python function"
)]
pub(crate) fn convert(
    py: Python<'_>,
    recording: &Recording,
    out: PathBuf,
    channel_map: Option<PathBuf>,
    channels: Option<&Bound<'_, PyAny>>,
    start: Option<&Bound<'_, PyAny>>,
    end: Option<&Bound<'_, PyAny>>,
    order: &str,
    runtime: Option<&str>,
    progress: Option<Py<PyAny>>,
    window_samples: Option<&Bound<'_, PyAny>>,
    decode: Option<&str>,
    device: Option<usize>,
) -> PyResult<ConvertResult> {
    let order = order_from(order)?;
    let target = target_of(runtime)?;
    let route = route_of(decode)?;
    check_outputs(recording, &out, channel_map.as_deref())?;
    let map_error = |path: &Path, e: DspError| {
        let kind = crate::errors::kind_of(&e);
        error(py, kind, format!("channel_map {}: {e}", path.display()))
    };
    let map = match &channel_map {
        Some(path) => Some(
            py.detach(|| ChannelMapFile::load(path))
                .map_err(|e| map_error(path, e))?
                .remap,
        ),
        None => None,
    };
    let channels = args::channel_list(channels)?;
    let total = recording.source.info().samples;
    let range = args::pass_range(start, end, recording.source.info(), ("start", "end"))?;
    if range.start >= range.end || range.end > total {
        return Err(DspError::SampleRange {
            start: range.start,
            end: range.end,
            total,
        })
        .or_raise();
    }
    let selection = Selection {
        map: map.as_ref(),
        channels: channels.as_ref(),
        range: Some(range),
    };
    let source =
        selection
            .apply(recording.source.clone())
            .map_err(|e| match (e.part, &channel_map) {
                (SelectionPart::Map, Some(path)) => map_error(path, e.error),
                _ => crate::errors::from_dsp(e.error),
            })?;
    let options = dspk_stream::ConvertOptions {
        window_samples: args::opt_index(window_samples, "window_samples")?,
        route,
    };
    let progress = PySink::new(progress.filter(|p| !p.is_none(py)));
    let mut sink = BinarySink::new(&out, order, recording.label());
    let outcome = py.detach(|| -> DspResult<_> {
        let client = client_of(target, device)?;
        let device = describe(&client).adapter_name;
        let converted = dspk_stream::convert(&client, source, &options, &progress, &mut sink)?;
        Ok((converted, device))
    });
    progress.finish()?;
    let (converted, device) = outcome.or_raise()?;
    let summary = sink.summary().cloned().ok_or_else(|| {
        crate::errors::invalid(format!("{}: the convert wrote nothing", out.display()))
    })?;
    let figures = PassFigures::new(
        &converted.report,
        summary.samples,
        converted.info.sample_rate,
        target.name().into(),
        device,
    );
    Ok(ConvertResult::new(&summary, figures))
}

/// Refuses, before anything is read or written, an output (`out` or its sidecar) that is one
/// of the files the recording consists of or the channel map, a directory, or a file in a
/// directory that does not exist: `dspk convert`'s check, with `out` named as the program
/// names `-o`.
fn check_outputs(recording: &Recording, out: &Path, channel_map: Option<&Path>) -> PyResult<()> {
    let mut inputs = recording.input_files()?;
    if let Some(map) = channel_map {
        inputs.push((map.to_path_buf(), "the channel map".to_string()));
    }
    dspk_io::check_output(&inputs, "out", out).or_raise()
}
