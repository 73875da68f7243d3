"""SpikeInterface, both directions.

- :class:`DspkRecording`: a recording file read by dspk as a real SpikeInterface
  ``BaseRecording`` (segments, channel ids, ``gain_to_uV``/``offset_to_uV``, dspk's own probe
  of the file), picklable through its ``_kwargs`` so process pools (fork and spawn) and
  ``save()`` work with it.
- :func:`from_spikeinterface`: any SpikeInterface recording as a dspk :class:`~dspk.Recording`,
  so :func:`dspk.scan` runs on every format Neo reads.

SpikeInterface is imported by this module only (``import dspk`` does not need it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Sequence, Union

import numpy as np
from spikeinterface.core import BaseRecording, BaseRecordingSegment

from . import _dspk

__all__ = ["DspkRecording", "DspkRecordingSegment", "from_spikeinterface", "preprocess"]


def _neural_channels(rec: _dspk.Recording) -> list:
    """The channels SpikeInterface's own readers put in a stream: all but a sync word (SpikeGLX
    imec's SY channel, :attr:`dspk.Recording.channel_kinds` ``"sync"``), which Neo gives a
    stream of its own; NI digital words stay, as in Neo's ``nidq`` stream."""
    return [i for i, k in enumerate(rec.channel_kinds) if k != "sync"]


class DspkRecordingSegment(BaseRecordingSegment):
    """One segment of a :class:`DspkRecording`: stored values read by dspk, from sample
    ``start`` of the recording on, ``samples`` long, starting at ``t_start`` seconds."""

    def __init__(
        self,
        rec: _dspk.Recording,
        channels: list,
        sampling_frequency: float,
        start: int = 0,
        samples: Optional[int] = None,
        t_start: Optional[float] = None,
    ):
        t_start = float(rec.start_time) if t_start is None else t_start
        BaseRecordingSegment.__init__(
            self, sampling_frequency=sampling_frequency, t_start=t_start or None
        )
        self._rec = rec
        self._channels = channels
        self._start = int(start)
        self._samples = rec.samples if samples is None else int(samples)

    def get_num_samples(self) -> int:
        return self._samples

    def get_traces(self, start_frame=None, end_frame=None, channel_indices=None) -> np.ndarray:
        start, stop = _frames(start_frame, end_frame, self._samples)
        channels = _selected(self._channels, channel_indices)
        # dspk reads channel-major; the transpose is SpikeInterface's (samples, channels).
        return self._rec.read_stored(channels, self._start + start, self._start + stop).T


class DspkRecording(BaseRecording):
    """A recording file read by dspk, as a SpikeInterface recording.

    Any format :func:`dspk.open` reads (SpikeGLX ``.bin`` + ``.meta``, Open Ephys, raw binary +
    JSON sidecar); ``stream`` names an Open Ephys stream as in :func:`dspk.open`. Channel ids are dspk's channel names; ``gain_to_uV``/``offset_to_uV`` come from
    the file, so ``get_traces(return_in_uV=True)`` is in µV (and is computed by dspk, in the
    same ``float32`` arithmetic as SpikeInterface's, from the gains set on this object). A
    SpikeGLX imec file leaves out its sync channel, as SpikeInterface's ``read_spikeglx`` does,
    and carries dspk's own probe of the file (:attr:`dspk.Recording.probe`: from the
    ``.meta``, or a sidecar's ``probe``).
    """

    def __init__(self, path: Union[str, "os.PathLike[str]"], stream: Optional[str] = None):
        path = Path(path).absolute()
        rec = _dspk.open(path, stream=stream)
        channels = _neural_channels(rec)
        names = rec.channel_names
        sampling_frequency = float(rec.sample_rate)
        BaseRecording.__init__(
            self,
            sampling_frequency=sampling_frequency,
            channel_ids=np.array([names[c] for c in channels]),
            dtype=rec.dtype,
        )
        self._dspk = rec
        self._channels = channels
        # One SpikeInterface segment per dspk segment (an Open Ephys experiment's recordings,
        # SpikeGLX trigger files with gaps), each at its own start time.
        for start, samples, _, t_start in rec.segments:
            self.add_recording_segment(
                DspkRecordingSegment(rec, channels, sampling_frequency, start, samples, float(t_start))
            )
        # SpikeInterface scales to µV: set where every channel is in a voltage.
        factor = rec.uv_per_unit[channels]
        if not np.isnan(factor).any():
            self.set_channel_gains(rec.gains[channels].astype("float64") * factor)
            self.set_channel_offsets(rec.offsets[channels].astype("float64") * factor)
        self._gains_uv = self.get_channel_gains().astype("float32") if self.has_scaleable_traces() else None
        self._offsets_uv = self.get_channel_offsets().astype("float32") if self.has_scaleable_traces() else None
        self._attach_probe(rec)
        self._kwargs = {"path": str(path), "stream": stream}

    def _attach_probe(self, rec: _dspk.Recording) -> None:
        """dspk's own probe of the file (:attr:`dspk.Recording.probe`: a SpikeGLX ``.meta``'s
        geometry, a sidecar's ``probe``), attached as SpikeInterface's readers attach theirs
        (by shank), with each channel's ``inter_sample_shift`` where the ADC cycle is known.
        Nothing is attached where the format gives no geometry (dspk's reader says why where
        geometry was expected) or the probe leaves one of the channels without a contact."""
        import probeinterface

        probe = rec.probe
        if not isinstance(probe, probeinterface.Probe):  # None: the format gives no geometry
            return
        # dspk numbers contacts by its channels; SpikeInterface by this recording's (no sync).
        position = {c: i for i, c in enumerate(self._channels)}
        wired = [position.get(int(c), -1) for c in probe.device_channel_indices]
        if sorted(wired) != list(range(len(self._channels))):
            import warnings

            bare = len(self._channels) - sum(1 for w in wired if w >= 0)
            warnings.warn(
                f"{rec.path}: no probe attached: {bare} of its {len(self._channels)} channels "
                "have no contact (a sync channel?) and SpikeInterface needs one on every channel",
                UserWarning,
                stacklevel=3,
            )
            return
        probe.set_device_channel_indices(wired)
        group_mode = "by_shank" if probe.shank_ids is not None else "auto"
        self.set_probe(probe, group_mode=group_mode)
        order = probe.contact_annotations.get("adc_sample_order")
        cycle = probe.annotations.get("adc_cycle_samples")
        if order is not None and cycle:
            shifts = np.empty(len(self._channels))
            shifts[wired] = np.asarray(order, dtype="float64") / float(cycle)
            self.set_property("inter_sample_shift", shifts)

    def get_traces(
        self,
        segment_index: Optional[int] = None,
        start_frame: Optional[int] = None,
        end_frame: Optional[int] = None,
        channel_ids=None,
        order=None,
        return_in_uV: bool = False,
    ) -> np.ndarray:
        """SpikeInterface's ``get_traces``; with ``return_in_uV=True`` the µV values come
        straight from dspk's read (``stored × gain + offset`` in ``float32``, one pass, no
        temporaries) whenever the gains and offsets are still the file's."""
        if not return_in_uV or not self._scaling_is_the_files():
            return BaseRecording.get_traces(
                self,
                segment_index=segment_index,
                start_frame=start_frame,
                end_frame=end_frame,
                channel_ids=channel_ids,
                order=order,
                return_in_uV=return_in_uV,
            )
        segment_index = self._check_segment_index(segment_index)
        segment = self._recording_segments[segment_index]
        indices = self.ids_to_indices(channel_ids, prefer_slice=True)
        start, stop = _frames(start_frame, end_frame, segment._samples)
        start, stop = start + segment._start, stop + segment._start
        channels = _selected(self._channels, indices)
        count = len(channels)
        if channels == list(range(count)):
            # Every channel (the sync channel of an imec file left at the end): the file's own
            # time-major order, decoded straight; a view of the first channels when not all.
            traces = self._dspk.read_frames(start, stop)
            if count < traces.shape[1]:
                traces = traces[:, :count]
        else:
            traces = self._dspk.read(channels, start, stop).T
        if order is not None:
            traces = np.asanyarray(traces, order=order)
        return traces

    def _scaling_is_the_files(self) -> bool:
        """Whether ``gain_to_uV``/``offset_to_uV`` are still what the file says (a user may set
        others, which SpikeInterface's own path then applies)."""
        if self._gains_uv is None or not self.has_scaleable_traces():
            return False
        gains = self.get_property("gain_to_uV").astype("float32")
        offsets = self.get_property("offset_to_uV").astype("float32")
        return np.array_equal(gains, self._gains_uv) and np.array_equal(offsets, self._offsets_uv)


def _frames(start_frame, end_frame, samples: int):
    """SpikeInterface's frame arguments as a sample range (``None``: the segment's ends; an end
    past the segment is cut, as SpikeInterface does)."""
    start = 0 if start_frame is None else int(start_frame)
    stop = samples if end_frame is None else min(int(end_frame), samples)
    return start, stop


def _selected(channels: list, indices) -> Optional[list]:
    """dspk's channel indices for SpikeInterface's ``channel_indices`` (``None``, a slice or
    indices into the recording's channels)."""
    if indices is None:
        return channels
    if isinstance(indices, slice):
        return channels[indices]
    return [channels[int(i)] for i in np.asarray(indices).ravel()]


def from_spikeinterface(recording: BaseRecording, segment_index: int = 0) -> _dspk.Recording:
    """Any SpikeInterface recording (every format Neo reads) as a dspk ``Recording``.

    Segment ``segment_index`` (default 0). dspk reads its stored traces
    (``get_traces(return_in_uV=False)``) and scales them with the recording's
    ``gain_to_uV``/``offset_to_uV`` in dspk's own ``float32`` rule, so :func:`dspk.scan` of it
    equals the scan of the same file opened by :func:`dspk.open`. A recording without gains is
    read as it is (floating-point traces count as µV, as in SpikeInterface).
    """
    segment_index = int(segment_index)
    if not 0 <= segment_index < recording.get_num_segments():
        raise _dspk.InvalidInputError(
            f"segment_index {segment_index} does not exist: the recording has "
            f"{recording.get_num_segments()} segments"
        )
    ids = np.asarray(recording.get_channel_ids())
    count = len(ids)
    dtype = np.dtype(recording.get_dtype())
    if recording.has_scaleable_traces():
        gains = [float(g) for g in recording.get_channel_gains()]
        offsets = [float(o) for o in recording.get_channel_offsets()]
        units = ["µV"] * count
    else:
        gains = [1.0] * count
        offsets = [0.0] * count
        units = ["µV" if dtype.kind == "f" else ""] * count

    def read_stored(start: int, stop: int, channels: Sequence[int]) -> np.ndarray:
        all_channels = len(channels) == count and list(channels) == list(range(count))
        traces = recording.get_traces(
            segment_index=segment_index,
            start_frame=start,
            end_frame=stop,
            channel_ids=None if all_channels else ids[list(channels)],
            return_in_uV=False,
        )
        return np.ascontiguousarray(np.asarray(traces, dtype=dtype).T)

    return _dspk._from_python_source(
        read_stored,
        name=str(getattr(recording, "name", None) or type(recording).__name__),
        sample_rate=float(recording.get_sampling_frequency()),
        samples=int(recording.get_num_samples(segment_index=segment_index)),
        dtype=dtype.name,
        channel_names=[str(i) for i in ids],
        gains=gains,
        offsets=offsets,
        units=units,
        probe_json=_probe_json_of(recording),
    )


def _probe_json_of(recording: BaseRecording) -> Optional[str]:
    """The recording's probe (its contacts wired to its channels in order) as probeinterface
    JSON text, where it has one that gives every channel a contact."""
    if not recording.has_probe():
        return None
    from ._pipeline import _probe_json

    probe = recording.get_probe()
    return _probe_json(probe)


def preprocess(
    recording: Union[BaseRecording, str, "os.PathLike[str]"],
    out: Union[str, "os.PathLike[str]"],
    *,
    pipeline="kilosort4",
    **options,
) -> BaseRecording:
    """Preprocesses ``recording`` (a SpikeInterface recording, or a recording file dspk
    reads) on the device with ``pipeline`` into ``out`` (see :func:`dspk.preprocess`, whose
    keywords ``options`` are), and returns the output as a SpikeInterface recording its
    sorters take without a copy: a binary recording of ``out`` (binary-compatible, time-major),
    with the probe attached, µV gains set and ``is_filtered`` annotated. An output of several
    segments comes back as a :class:`DspkRecording` of ``out``."""
    import dspk

    if isinstance(recording, BaseRecording):
        source = from_spikeinterface(recording)
    else:
        source = _dspk.open(Path(recording).absolute())
    options.setdefault("order", "time-major")
    dspk.preprocess(source, out, pipeline=pipeline, **options)
    read = DspkRecording(out)
    if read.get_num_segments() != 1 or options["order"] != "time-major":
        read.annotate(is_filtered=True)
        return read
    from spikeinterface.core import BinaryRecordingExtractor

    out_rec = _dspk.open(Path(out).absolute())
    binary = BinaryRecordingExtractor(
        file_paths=[str(Path(out).absolute())],
        sampling_frequency=read.get_sampling_frequency(),
        dtype=out_rec.dtype,
        num_channels=read.get_num_channels(),
        t_starts=[read.get_times(0)[0]] if read.get_num_samples(0) else None,
        channel_ids=read.get_channel_ids(),
        time_axis=0,
        gain_to_uV=read.get_channel_gains(),
        offset_to_uV=read.get_channel_offsets(),
        is_filtered=True,
    )
    if read.has_probe():
        probe = read.get_probe()
        binary.set_probe(probe, group_mode="by_shank" if probe.shank_ids is not None else "auto")
    return binary
