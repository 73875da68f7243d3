"""Many recordings on a ``dask.distributed`` cluster: :func:`scan` and :func:`convert` over a
list of recording paths, one task per recording, results gathered as they finish; and
:func:`preprocess`, one recording cut into parts, one task each, assembled into the same file,
bit for bit, as one :func:`dspk.preprocess`; and :func:`detect`, one recording's peaks found in
parts, concatenated into the same table as one :func:`dspk.detect`.

- A task carries a recording's *path* and the pass's parameters, never its data: each worker
  opens the file itself (the workers must see the files: a shared file system, or the same
  mount on every node).
- One device per worker process: start workers with ``threads_per_worker=1`` (one task at a
  time each); ``devices=[0, 1]`` gives worker ``k`` (LocalCluster names its workers 0, 1…)
  device ``devices[k % len(devices)]`` as :func:`dspk.devices` numbers them; without it each
  worker uses its runtime's default device (with dask-jobqueue's ``SLURMCluster``, each worker
  is a Slurm job of its own, and a GPU allocated with ``--gres=gpu:1`` under Slurm's device
  cgroup is the only GPU it sees).
- A recording that fails (a corrupt file, a missing one) is an :class:`Outcome` with its error,
  and the others complete; a worker that dies takes its task with it and Dask runs that task
  again on another worker (up to ``distributed.scheduler.allowed-failures`` times), so every
  recording gives exactly one :class:`Outcome`.

Needs ``dask`` and ``distributed`` (``pip install dask distributed``); ``dspk`` itself does
not import them.

Example::

    from dask.distributed import Client, LocalCluster
    import dspk.distributed

    with LocalCluster(n_workers=2, threads_per_worker=1) as cluster, Client(cluster) as client:
        for outcome in dspk.distributed.scan(client, ["a.ap.bin", "b.ap.bin"]):
            print(outcome.recording, outcome.result["dead"] if outcome.ok else outcome.error)
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Sequence, Union

__all__ = ["Outcome", "convert", "preprocess", "scan", "scan_task", "convert_task"]

_Path = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Outcome:
    """One recording's result, or its error."""

    recording: str
    """The path as given."""
    index: int
    """Its position in the list given."""
    result: Optional[dict] = None
    """What the pass computed (a scan's report, see :func:`scan_task`; :func:`convert_task`);
    ``None`` on failure."""
    error: Optional[str] = None
    """Why it failed (the :class:`dspk.DspkError`'s message); ``None`` on success."""
    error_type: Optional[str] = None
    """The exception's class name (``RecordingFileError``, ``KilledWorker``…)."""
    worker: Optional[str] = None
    """``host:pid`` of the worker process that ran it."""

    @property
    def ok(self) -> bool:
        return self.error is None


def _worker_device(devices: Optional[Sequence[int]]) -> Optional[int]:
    """The device this worker process uses: ``devices[k % len(devices)]`` for worker ``k``
    (dspk's one choice of a worker's device, the one ``dspk run`` makes for a Slurm task),
    else the runtime's default (``None``)."""
    if not devices:
        return None
    from distributed import get_worker

    from ._dspk import worker_device

    name = get_worker().name
    if isinstance(name, int):
        k = name
    else:
        digits = str(name).rsplit("-", 1)[-1]
        k = int(digits) if digits.isdigit() else 0
    device, _why = worker_device(k, list(devices))
    return device


def _where() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def scan_task(path: str, options: dict, devices: Optional[Sequence[int]] = None, stream: Optional[str] = None) -> dict:
    """What one task runs on a worker: opens ``path`` there (on the Open Ephys ``stream``
    named, if any) and scans it (``dspk.scan``, ``options`` its keywords); returns the scan's
    report as a dict (:meth:`dspk.ScanResult.to_dict`: what ``dspk scan --json`` prints and a
    ``dspk run`` record holds, each channel's statistics under ``channels``), or ``error`` and
    ``error_type`` for a :class:`dspk.DspkError`."""
    import dspk

    try:
        device = _worker_device(devices)
        r = dspk.scan(dspk.open(path, stream=stream), progress=False, device=device, **options)
    except dspk.DspkError as e:
        return {"error": str(e), "error_type": type(e).__name__, "worker": _where()}
    return {"result": r.to_dict(), "worker": _where()}


def convert_task(
    path: str, out: str, options: dict, devices: Optional[Sequence[int]] = None, stream: Optional[str] = None
) -> dict:
    """What one convert task runs on a worker: ``dspk.convert(dspk.open(path, stream=stream),
    out, **options)``; the output is written where the worker sees ``out`` (atomically: a failed or
    killed task leaves no partial file)."""
    import dspk

    try:
        device = _worker_device(devices)
        r = dspk.convert(dspk.open(path, stream=stream), out, progress=False, device=device, **options)
    except dspk.DspkError as e:
        return {"error": str(e), "error_type": type(e).__name__, "worker": _where()}
    result = {
        "path": str(r.path), "sidecar": str(r.sidecar), "channel_count": r.channel_count,
        "samples": r.samples, "order": r.order, "written_bytes": r.written_bytes,
        "stored_bytes": r.stored_bytes, "wall_s": r.wall_s, "runtime": r.runtime,
        "device": r.device,
    }
    return {"result": result, "worker": _where()}


def _run(
    client,
    recordings: Sequence[_Path],
    submit: Callable[[int, str], Any],
    on_result: Optional[Callable[[Outcome], object]],
) -> list[Outcome]:
    """Submits one task per recording, gathers them as they finish (``on_result`` sees each
    then), and returns one :class:`Outcome` per recording in the order given."""
    from distributed import as_completed

    paths = [os.fspath(p) for p in recordings]
    futures = {submit(i, p): i for i, p in enumerate(paths)}
    outcomes: dict[int, Outcome] = {}
    for future in as_completed(list(futures)):
        i = futures[future]
        try:
            value = future.result()
        except Exception as e:  # noqa: BLE001  (a task that died: KilledWorker, or a bug)
            value = {"error": str(e) or type(e).__name__, "error_type": type(e).__name__}
        outcome = Outcome(
            recording=paths[i], index=i, result=value.get("result"), error=value.get("error"),
            error_type=value.get("error_type"), worker=value.get("worker"),
        )
        if i in outcomes:
            raise RuntimeError(f"dspk.distributed: {paths[i]} came back twice")
        outcomes[i] = outcome
        if on_result is not None:
            on_result(outcome)
    return [outcomes[i] for i in range(len(paths))]


def scan(
    client,
    recordings: Iterable[_Path],
    *,
    devices: Optional[Sequence[int]] = None,
    on_result: Optional[Callable[[Outcome], object]] = None,
    retries: int = 0,
    stream: Optional[str] = None,
    **options,
) -> list[Outcome]:
    """Scans every recording on ``client``'s workers, one task each, as :func:`dspk.scan` does
    (``options``: its keywords: ``runtime``, ``start``, ``end``, ``window_samples``,
    ``decode``); ``stream`` names the Open Ephys stream to open, as in :func:`dspk.open`. ``on_result`` is called with each :class:`Outcome` as it finishes; the list
    returned has one per recording, in the order given. ``retries``: how often a task that
    raised something other than a :class:`dspk.DspkError` runs again (a dead worker's tasks
    are run again by Dask whatever this is)."""
    paths = list(recordings)
    token = uuid.uuid4().hex[:8]

    def submit(i: int, path: str):
        return client.submit(
            scan_task, path, options, devices, stream, key=f"dspk-scan-{token}-{i}", pure=False,
            retries=retries,
        )

    return _run(client, paths, submit, on_result)


def convert(
    client,
    recordings: Iterable[_Path],
    outputs: Iterable[_Path],
    *,
    devices: Optional[Sequence[int]] = None,
    on_result: Optional[Callable[[Outcome], object]] = None,
    retries: int = 0,
    stream: Optional[str] = None,
    **options,
) -> list[Outcome]:
    """Converts every recording to its output (the lists pair up) on ``client``'s workers, as
    :func:`dspk.convert` does (``options``: its keywords); see :func:`scan`."""
    paths = list(recordings)
    outs = [os.fspath(o) for o in outputs]
    if len(outs) != len(paths):
        from . import InvalidInputError

        raise InvalidInputError(f"{len(paths)} recordings but {len(outs)} outputs: give one output each")
    token = uuid.uuid4().hex[:8]

    def submit(i: int, path: str):
        return client.submit(
            convert_task, path, outs[i], options, devices, stream, key=f"dspk-convert-{token}-{i}",
            pure=False, retries=retries,
        )

    return _run(client, paths, submit, on_result)


def _preprocess_fit_task(path: str, fit_file: str, options: dict, devices, stream) -> dict:
    """The fit of :func:`preprocess` on a worker: the fit file's JSON."""
    import json

    import dspk
    from dspk import _dspk

    device = _worker_device(devices)
    text = _dspk.preprocess_fit(dspk.open(path, stream=stream), fit_file, device=device, **options)
    return json.loads(text)


def _preprocess_part_task(path: str, out: str, start: int, end: int, fit_file: str, options: dict,
                          devices, stream) -> dict:
    """One part of :func:`preprocess` on a worker: its report, and where it ran."""
    import json

    import dspk
    from dspk import _dspk

    device = _worker_device(devices)
    report = _dspk.preprocess_part(dspk.open(path, stream=stream), out, start, end, fit_file,
                                   device=device, **options)
    return {"report": json.loads(report), "worker": _where()}


def _assemble_task(parts: list, out: str, fit_file: str) -> int:
    from dspk import _dspk

    return _dspk.assemble_preprocessed(parts, out, fit_file)


def preprocess(
    client,
    recording: _Path,
    out: _Path,
    *,
    chunk_samples: int = 1_800_000,
    pipeline: str = "kilosort4",
    format: Optional[str] = None,
    gain: Optional[float] = None,
    order: str = "time-major",
    devices: Optional[Sequence[int]] = None,
    retries: int = 0,
    stream: Optional[str] = None,
    runtime: Optional[str] = None,
    window_samples: Optional[int] = None,
    decode: Optional[str] = None,
):
    """Preprocesses ``recording`` (a path every worker opens) into ``out`` on ``client``'s
    workers, as ``dspk plan --preprocess`` / ``dspk run`` / ``dspk gather`` do on Slurm: one
    task fits the pipeline's fitted stages once (``<out>.parts/fit.json``), one task per part of
    ``chunk_samples`` samples (parts never span a segment's end) applies those parameters to its
    samples (``<out>.parts/part-N.bin``, written atomically), and a last task assembles ``out``
    and its sidecar. The file is the same, bit for bit, as one :func:`dspk.preprocess` with the
    same ``pipeline``, ``format``, ``gain`` and ``order`` (whatever ``chunk_samples``,
    ``window_samples`` and the devices). Returns the output as a :class:`dspk.Recording` (the
    caller must see ``out`` too). A part that fails raises :class:`RuntimeError` naming it,
    after every part has finished; the parts written stay, and ``out`` is not written."""
    import dspk

    if chunk_samples < 1:
        from . import InvalidInputError

        raise InvalidInputError(f"chunk_samples must be at least 1, not {chunk_samples}")
    path = os.fspath(recording)
    out = os.fspath(out)
    folder = out + ".parts"
    os.makedirs(folder, exist_ok=True)
    fit_file = os.path.join(folder, "fit.json")
    token = uuid.uuid4().hex[:8]
    common = {"pipeline": pipeline, "format": format, "gain": gain, "runtime": runtime, "decode": decode}
    fit = client.submit(
        _preprocess_fit_task, path, fit_file, common, devices, stream,
        key=f"dspk-preprocess-fit-{token}", pure=False, retries=retries,
    ).result()
    lengths = [s["samples"] for s in fit["segments"]] or [fit["samples"]]
    ranges = []
    start = 0
    for length in lengths:
        for s in range(start, start + length, chunk_samples):
            ranges.append((s, min(s + chunk_samples, start + length)))
        start += length
    options = dict(common, order=order, window_samples=window_samples)
    parts = [os.path.join(folder, f"part-{i}.bin") for i in range(len(ranges))]
    futures = [
        client.submit(
            _preprocess_part_task, path, parts[i], a, b, fit_file, options, devices, stream,
            key=f"dspk-preprocess-part-{token}-{i}", pure=False, retries=retries,
        )
        for i, (a, b) in enumerate(ranges)
    ]
    failed = []
    for i, future in enumerate(futures):
        try:
            future.result()
        except Exception as e:  # noqa: BLE001  (every part is waited for; the failures named)
            failed.append(f"part {i} (samples {ranges[i][0]}..{ranges[i][1]}): {e}")
    if failed:
        raise RuntimeError(f"dspk.distributed.preprocess: {len(failed)} of {len(parts)} parts failed: "
                           + "; ".join(failed))
    client.submit(_assemble_task, parts, out, fit_file, key=f"dspk-preprocess-assemble-{token}",
                  pure=False, retries=retries).result()
    return dspk.open(out)


def _detect_fit_task(path: str, options: dict, devices, stream) -> str:
    """The fit of :func:`detect` on a worker: ``detect_fit``'s JSON text."""
    import dspk
    from dspk import _dspk

    device = _worker_device(devices)
    return _dspk.detect_fit(dspk.open(path, stream=stream), device=device, **options)


def _detect_part_task(path: str, start: int, end: int, fitted: str, options: dict, devices,
                      stream) -> bytearray:
    """One part of :func:`detect` on a worker: the records of its peaks."""
    import dspk
    from dspk import _dspk

    device = _worker_device(devices)
    return _dspk.detect_part(dspk.open(path, stream=stream), start, end, fitted, device=device,
                             **options)


def detect(
    client,
    recording: _Path,
    *,
    chunk_samples: int = 1_800_000,
    pipeline="none",
    threshold: float = 5.0,
    sign: str = "neg",
    radius_um: float = 50.0,
    exclude_sweep_ms: float = 0.1,
    devices: Optional[Sequence[int]] = None,
    retries: int = 0,
    stream: Optional[str] = None,
    runtime: Optional[str] = None,
    window_samples: Optional[int] = None,
    decode: Optional[str] = None,
):
    """Detects the peaks of ``recording`` (a path every worker opens) on ``client``'s workers,
    as ``dspk plan --detect`` / ``dspk run`` / ``dspk gather`` do on Slurm: one task fits what
    detection fits, once (the pipeline's fitted stages and each channel's noise level), one
    task per part of ``chunk_samples`` samples (parts never span a segment's end) finds the
    peaks of its samples with them, reading the filters' and the detector's context from
    around its part, and the parts' peaks are concatenated in order. Returns the same array,
    byte for byte, as one :func:`dspk.detect` with the same ``pipeline``, ``threshold``,
    ``sign``, ``radius_um`` and ``exclude_sweep_ms`` (whatever ``chunk_samples``,
    ``window_samples`` and the devices): SpikeInterface's peak dtype, sorted by sample then
    channel. A part that fails raises :class:`RuntimeError` naming it, after every part has
    finished."""
    import json

    import numpy as np

    from . import PEAK_DTYPE
    from ._pipeline import _spec_json

    if chunk_samples < 1:
        from . import InvalidInputError

        raise InvalidInputError(f"chunk_samples must be at least 1, not {chunk_samples}")
    path = os.fspath(recording)
    text = pipeline if isinstance(pipeline, str) else _spec_json(pipeline)
    token = uuid.uuid4().hex[:8]
    common = {"pipeline": text, "runtime": runtime, "decode": decode}
    fitted = client.submit(
        _detect_fit_task, path, common, devices, stream,
        key=f"dspk-detect-fit-{token}", pure=False, retries=retries,
    ).result()
    lengths = json.loads(fitted)["segments"]
    ranges = []
    start = 0
    for length in lengths:
        for s in range(start, start + length, chunk_samples):
            ranges.append((s, min(s + chunk_samples, start + length)))
        start += length
    options = dict(common, threshold=threshold, sign=sign, radius_um=radius_um,
                   exclude_sweep_ms=exclude_sweep_ms, window_samples=window_samples)
    futures = [
        client.submit(
            _detect_part_task, path, a, b, fitted, options, devices, stream,
            key=f"dspk-detect-part-{token}-{i}", pure=False, retries=retries,
        )
        for i, (a, b) in enumerate(ranges)
    ]
    records = []
    failed = []
    for i, future in enumerate(futures):
        try:
            records.append(bytes(future.result()))
        except Exception as e:  # noqa: BLE001  (every part is waited for; the failures named)
            failed.append(f"part {i} (samples {ranges[i][0]}..{ranges[i][1]}): {e}")
    if failed:
        raise RuntimeError(f"dspk.distributed.detect: {len(failed)} of {len(ranges)} parts failed: "
                           + "; ".join(failed))
    return np.frombuffer(b"".join(records), dtype=PEAK_DTYPE)
