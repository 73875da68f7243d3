"""dspk: electrophysiology recordings off the disk, decoded to microvolts, onto any GPU.

The Python face of the dspk Rust crates (the same code as the ``dspk`` program):

- :func:`open` a SpikeGLX ``.bin`` (with its ``.meta``) or a raw binary file with a JSON
  sidecar, or make the built-in :func:`synthetic` Neuropixels-like probe: a :class:`Recording`
  with an exact ``sample_rate`` (:class:`fractions.Fraction`), channel names, gains, units...
- :meth:`Recording.read` returns ``float32`` ``(channels, samples)`` in µV (``out=`` fills your
  own array); :meth:`Recording.read_stored` the stored values; :meth:`Recording.windows`
  iterates over halo windows read on a background thread.
- :func:`scan` (per-channel statistics, dead and noisy channels, the mask) and :func:`convert`
  run dspk's device pass; :func:`devices` lists the compute devices.
- :mod:`dspk.distributed`: :func:`~dspk.distributed.scan` and
  :func:`~dspk.distributed.convert` over many recordings on a ``dask.distributed`` cluster.
- :mod:`dspk.spikeinterface`: :class:`~dspk.spikeinterface.DspkRecording`, a SpikeInterface
  recording read by dspk, and :func:`from_spikeinterface`, any SpikeInterface recording as a
  dspk recording.

Every error is a :class:`DspkError`; its subclasses also derive from the built-in exception a
Python user expects (``ValueError``, ``OSError``, ``FileNotFoundError``, ``RuntimeError``).
The GIL is released during reads and device passes.
"""

from __future__ import annotations

import os as _os
from typing import Callable, Optional, Sequence, Union

from . import _dspk
from ._dspk import (
    ConvertResult,
    DeviceError,
    DspkError,
    InvalidInputError,
    ProgressEvent,
    Recording,
    RecordingFileError,
    RecordingNotFoundError,
    ScanResult,
    UnsupportedFormatError,
    Window,
    WindowIterator,
    butter_sos,
    concat,
    devices,
    open,
    pipeline_preset,
    pipeline_presets,
    synthetic,
    whitening_matrix,
)
from ._pipeline import apply_pipeline
from ._progress import default_progress as _default_progress

__version__: str = _dspk.__version__

__all__ = [
    "ConvertResult",
    "DeviceError",
    "DspkError",
    "InvalidInputError",
    "ProgressEvent",
    "Recording",
    "RecordingFileError",
    "RecordingNotFoundError",
    "ScanResult",
    "UnsupportedFormatError",
    "Window",
    "WindowIterator",
    "apply_pipeline",
    "butter_sos",
    "concat",
    "convert",
    "detect",
    "devices",
    "from_spikeinterface",
    "open",
    "pipeline_preset",
    "pipeline_presets",
    "preprocess",
    "scan",
    "synthetic",
    "synthetic_truth",
    "whitening_matrix",
]

Progress = Union[Callable[[ProgressEvent], object], bool, None]


def _progress_callback(progress: Progress, what: str):
    """The callable a pass reports to: the caller's, a tqdm bar (``None`` on a terminal with
    tqdm installed, or ``True``), or nothing (``False``)."""
    if progress is False:
        return None, None
    if progress is None or progress is True:
        bar = _default_progress(what, force=progress is True)
        return bar, bar
    if not callable(progress):
        raise InvalidInputError(
            f"progress must be a callable taking a dspk.ProgressEvent, True, False or None, "
            f"not {type(progress).__name__}"
        )
    return progress, None


def scan(
    recording: Recording,
    *,
    runtime: Optional[str] = None,
    start: Optional[int] = None,
    end: Optional[int] = None,
    progress: Progress = None,
    window_samples: Optional[int] = None,
    decode: Optional[str] = None,
    device: Optional[int] = None,
) -> ScanResult:
    """Scans samples ``start:end`` of ``recording`` on a compute device, as ``dspk scan`` does.

    Every window is decoded on the device to µV; per-channel min, max, mean, RMS and standard
    deviation are merged in float64; channels are flagged dead (flat) or noisy, and the mask
    leaves them out.

    Args:
        recording: what to scan.
        runtime: ``"wgpu"``, ``"cuda"``, ``"hip"`` or ``"cpu"`` (default: ``$DSPK_RUNTIME``,
            else the first compiled in).
        start: first sample (default 0).
        end: one past the last sample (default: the end).
        progress: a callable receiving :class:`ProgressEvent` objects; ``None`` (default) draws
            a tqdm bar when tqdm is installed and stderr is a terminal; ``False`` reports
            nothing. An exception it raises is raised after the pass.
        window_samples: samples per window (default: one second, within one device buffer).
        decode: ``"staging"`` (default where possible) or ``"copy"``, for measurements.
        device: the device, as :func:`devices` numbers it (``dspk devices``, ``--devices``);
            default: the runtime's default device.
    """
    callback, bar = _progress_callback(progress, "scan")
    try:
        return _dspk.scan(
            recording,
            runtime=runtime,
            start=start,
            end=end,
            progress=callback,
            window_samples=window_samples,
            decode=decode,
            device=device,
        )
    finally:
        if bar is not None:
            bar.close()


def convert(
    recording: Recording,
    out: Union[str, "_os.PathLike[str]"],
    *,
    channel_map: Union[str, "_os.PathLike[str]", None] = None,
    channels: Optional[Sequence[int]] = None,
    start: Optional[int] = None,
    end: Optional[int] = None,
    order: str = "time-major",
    runtime: Optional[str] = None,
    progress: Progress = None,
    window_samples: Optional[int] = None,
    decode: Optional[str] = None,
    device: Optional[int] = None,
) -> ConvertResult:
    """Converts ``recording`` to a raw binary ``float32`` µV file with a JSON sidecar
    (``<out>.json``), decoded on the device, as ``dspk convert`` does.

    The channel map (a TOML or JSON file) applies first, then ``channels`` (indices into the
    mapped channels, in the order wanted) and samples ``start:end``. An output that would
    overwrite one of the recording's files or the map, a directory, or a file in a directory
    that does not exist is refused before anything is read; a conversion that fails leaves no
    partial output and the previous output as it was. ``device``: as for :func:`scan`.
    """
    callback, bar = _progress_callback(progress, "convert")
    try:
        return _dspk.convert(
            recording,
            out,
            channel_map=channel_map,
            channels=channels,
            start=start,
            end=end,
            order=order,
            runtime=runtime,
            progress=callback,
            window_samples=window_samples,
            decode=decode,
            device=device,
        )
    finally:
        if bar is not None:
            bar.close()


def preprocess(
    recording: Recording,
    out: Union[str, "_os.PathLike[str]", None],
    *,
    pipeline="kilosort4",
    format: Optional[str] = None,
    gain: Optional[float] = None,
    fits: Union[str, "_os.PathLike[str]", None] = None,
    order: str = "time-major",
    runtime: Optional[str] = None,
    progress: Progress = None,
    window_samples: Optional[int] = None,
    decode: Optional[str] = None,
    device: Optional[int] = None,
    dry_run: bool = False,
    report: Union[str, "_os.PathLike[str]", None] = None,
    at: Optional[Sequence[Union[float, str]]] = None,
    colour_by: str = "class",
):
    """Preprocesses ``recording`` on the device with ``pipeline`` and writes ``out`` (raw
    binary) and ``<out>.json`` (its sidecar: the probe, and the provenance: the pipeline, the
    fitted parameters, the input files, dspk's version, the devices and timings), as ``dspk
    preprocess`` does; returns the output as a :class:`Recording`.

    ``pipeline``: a preset's name (:func:`pipeline_presets`), a spec file (TOML or JSON), a
    dict or spec text. ``format`` (``"int16"``/``"float32"``) and ``gain`` override the
    pipeline's output. ``fits``: a preprocessed file's sidecar whose fitted parameters
    (whitening, centring) are applied instead of fitting them again. The signal channels are
    preprocessed (a sync or digital channel is left out). An output that would overwrite an
    input, a bad spec or a spec the recording cannot run is refused before anything is written;
    a run that fails leaves no partial output. With ``dry_run`` nothing is read: the plan
    (stages, halos, windows, device memory) is returned as a dict. ``report``: also write
    the page ``dspk preprocess --report`` writes there (a few windows raw and after each
    stage; ``at``: where they start, in seconds or the program's notation; ``colour_by``: what
    the probe's contacts are coloured by, ``"class"``, ``"std"``, ``"mad"`` or ``"mean"``)."""
    import json

    from ._pipeline import _spec_json

    text = pipeline if isinstance(pipeline, str) else _spec_json(pipeline)
    callback, bar = _progress_callback(progress if not dry_run else False, "preprocess")
    try:
        report = _dspk.preprocess(
            recording,
            None if out is None else _os.fspath(out),
            pipeline=text,
            format=format,
            gain=gain,
            fits=None if fits is None else _os.fspath(fits),
            order=order,
            runtime=runtime,
            progress=callback,
            window_samples=window_samples,
            decode=decode,
            device=device,
            dry_run=dry_run,
            report=None if report is None else _os.fspath(report),
            at=at,
            colour_by=colour_by,
        )
    finally:
        if bar is not None:
            bar.close()
    if dry_run:
        return json.loads(report)
    return _dspk.open(_os.fspath(out))


#: SpikeInterface's peak dtype (``spikeinterface.core.base.base_peak_dtype``).
PEAK_DTYPE = [
    ("sample_index", "int64"),
    ("channel_index", "int64"),
    ("amplitude", "float64"),
    ("segment_index", "int64"),
]


def detect(
    recording: Recording,
    *,
    pipeline="none",
    threshold: float = 5.0,
    sign: str = "neg",
    radius_um: float = 50.0,
    exclude_sweep_ms: float = 0.1,
    noise_levels: Optional[Sequence[float]] = None,
    runtime: Optional[str] = None,
    progress: Progress = None,
    window_samples: Optional[int] = None,
    decode: Optional[str] = None,
    device: Optional[int] = None,
    return_report: bool = False,
):
    """Detects spikes of ``recording`` on the device, as ``dspk detect`` does: after
    ``pipeline`` (a preset's name, a spec file, a dict or spec text; ``"none"``: the recording
    as it is), peaks past ``threshold`` × each channel's noise (MAD / 0.6745 of 20 chunks of
    500 ms per segment, or ``noise_levels`` in µV), ``sign`` ``"neg"``/``"pos"``/``"both"``,
    locally exclusive within ``exclude_sweep_ms`` on the channels within ``radius_um`` (each
    channel alone on a recording without probe geometry). Returns the peaks as a NumPy
    structured array of SpikeInterface's peak dtype (:data:`PEAK_DTYPE`), sorted by sample
    then channel, ``sample_index`` counted from the start of its segment (``segment_index``),
    as SpikeInterface counts; with ``return_report``, ``(peaks, report)`` (a dict: noise levels, counts,
    timings; on :func:`synthetic` recordings ``report["truth"]`` scores the peaks against the
    spikes it planted: ``planted``, ``found``, ``false_positives``, ``recall``, ``precision``
    within ``tolerance_ms`` of a trough)."""
    import json

    import numpy as np

    from ._pipeline import _spec_json

    text = pipeline if isinstance(pipeline, str) else _spec_json(pipeline)
    callback, bar = _progress_callback(progress, "detect")
    try:
        records, report = _dspk.detect(
            recording,
            pipeline=text,
            threshold=threshold,
            sign=sign,
            radius_um=radius_um,
            exclude_sweep_ms=exclude_sweep_ms,
            noise_levels=None if noise_levels is None else [float(n) for n in noise_levels],
            runtime=runtime,
            progress=callback,
            window_samples=window_samples,
            decode=decode,
            device=device,
        )
    finally:
        if bar is not None:
            bar.close()
    peaks = np.frombuffer(records, dtype=PEAK_DTYPE)
    if return_report:
        return peaks, json.loads(report)
    return peaks


#: The dtype of :func:`synthetic_truth`'s planted spikes.
TRUTH_DTYPE = [
    ("channel_index", "int64"),
    ("start_index", "int64"),
    ("sample_index", "int64"),
    ("depth_counts", "int64"),
    ("depth_uv", "float64"),
]


def synthetic_truth(recording: Recording, start: Optional[int] = None, end: Optional[int] = None):
    """The ground truth of a :func:`synthetic` recording: the spikes it planted whose 2 ms
    waveform overlaps samples ``start:end`` (default: all), as a NumPy structured array of
    :data:`TRUTH_DTYPE` sorted by trough then channel — ``sample_index`` is the trough (the
    waveform's minimum, ``depth_uv`` deep), ``start_index`` the waveform's first sample. The
    scoring :func:`detect` reports on such a recording (``report["truth"]``) pairs peaks with
    these. Raises ``ValueError`` for any other recording."""
    import numpy as np

    return np.frombuffer(_dspk.synthetic_truth(recording, start, end), dtype=TRUTH_DTYPE)


def from_spikeinterface(recording, segment_index: int = 0) -> Recording:
    """Any SpikeInterface recording (every format Neo reads) as a dspk :class:`Recording`: its
    stored traces, gains and offsets to µV, so that :func:`scan` and every other dspk function
    run on it. See :func:`dspk.spikeinterface.from_spikeinterface`."""
    from .spikeinterface import from_spikeinterface as _from

    return _from(recording, segment_index=segment_index)
