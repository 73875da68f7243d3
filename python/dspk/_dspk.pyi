"""Type stubs of dspk's native module (crates/dspk-py). A test keeps them in step with it."""

import os
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str

_Path = Union[str, "os.PathLike[str]"]
_Channels = Optional[Sequence[int]]

class DspkError(Exception): ...
class InvalidInputError(DspkError, ValueError): ...
class UnsupportedFormatError(DspkError, ValueError): ...
class RecordingFileError(DspkError, OSError): ...
class RecordingNotFoundError(RecordingFileError, FileNotFoundError): ...
class DeviceError(DspkError, RuntimeError): ...

class Recording:
    def report(
        self,
        out: _Path,
        *,
        pipeline: Optional[str] = None,
        at: Optional[Sequence[Union[float, str]]] = None,
        runtime: Optional[str] = None,
        device: Optional[int] = None,
        progress: Optional[Callable[[ProgressEvent], object]] = None,
        colour_by: str = "class",
    ) -> Dict[str, Any]: ...
    @property
    def name(self) -> str: ...
    @property
    def sample_rate(self) -> Fraction: ...
    @property
    def sample_rate_hz(self) -> float: ...
    @property
    def channel_count(self) -> int: ...
    @property
    def samples(self) -> int: ...
    @property
    def duration(self) -> Fraction: ...
    @property
    def start_time(self) -> Fraction: ...
    @property
    def segments(self) -> list[tuple[int, int, int, Fraction]]: ...
    @property
    def nominal_rate(self) -> Fraction: ...
    @property
    def measured_rate(self) -> Optional[Fraction]: ...
    @property
    def channel_names(self) -> list[str]: ...
    @property
    def gains(self) -> npt.NDArray[np.float32]: ...
    @property
    def offsets(self) -> npt.NDArray[np.float32]: ...
    @property
    def units(self) -> list[str]: ...
    @property
    def uv_per_unit(self) -> npt.NDArray[np.float64]:
        """Per channel, how many µV one unit of its scaled values is (1e6 for ``V``, 1e3 for
        ``mV``, 1 for ``µV``; NaN where the unit is not a voltage): ``gains * uv_per_unit`` are
        the gains to µV."""
    @property
    def channel_kinds(self) -> list[str]:
        """Per channel, what its values are, as the reader knows: ``"signal"``, ``"sync"``
        (a sync word: SpikeGLX imec's SY channel) or ``"digital"`` (digital lines packed in a
        word: SpikeGLX's NI digital words)."""
    @property
    def sync_channels(self) -> list[int]:
        """The indices of the channels that carry no sampled signal (sync words and digital
        lines; see :attr:`channel_kinds`), in order."""
    @property
    def dtype(self) -> np.dtype[Any]: ...
    @property
    def order(self) -> str: ...
    @property
    def metadata(self) -> dict[str, str]: ...
    @property
    def probe(self) -> Any: ...
    @property
    def path(self) -> Optional[Path]: ...
    @property
    def format(self) -> str: ...
    @property
    def warnings(self) -> list[str]: ...
    @property
    def files(self) -> list[Path]: ...
    @property
    def planted_dead(self) -> Optional[list[int]]: ...
    @property
    def planted_noisy(self) -> Optional[list[int]]: ...
    def read(
        self,
        channels: _Channels = None,
        start: Optional[int] = None,
        stop: Optional[int] = None,
        *,
        out: Optional[npt.NDArray[np.float32]] = None,
    ) -> npt.NDArray[np.float32]: ...
    def read_stored(
        self,
        channels: _Channels = None,
        start: Optional[int] = None,
        stop: Optional[int] = None,
        *,
        out: Optional[np.ndarray] = None,
    ) -> np.ndarray: ...
    def read_frames(
        self,
        start: Optional[int] = None,
        stop: Optional[int] = None,
        *,
        out: Optional[npt.NDArray[np.float32]] = None,
    ) -> npt.NDArray[np.float32]: ...
    def windows(
        self,
        batch: int,
        halo: Union[int, tuple[int, int], None] = None,
        channels: _Channels = None,
        every: Optional[int] = None,
    ) -> WindowIterator: ...

class WindowIterator:
    def __iter__(self) -> Iterator[Window]: ...
    def __next__(self) -> Window: ...
    def __len__(self) -> int: ...
    def close(self) -> None: ...

class Window:
    @property
    def index(self) -> int: ...
    @property
    def data(self) -> npt.NDArray[np.float32]: ...
    @property
    def start(self) -> int: ...
    @property
    def samples(self) -> range: ...
    @property
    def owned(self) -> range: ...
    @property
    def valid(self) -> slice: ...
    @property
    def owned_data(self) -> npt.NDArray[np.float32]: ...
    def remap(self, local: int) -> Optional[int]: ...
    def remap_events(self, local: Sequence[int]) -> npt.NDArray[np.int64]: ...

class ProgressEvent:
    @property
    def stage(self) -> str: ...
    @property
    def done(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def unit(self) -> str: ...
    @property
    def fraction(self) -> Optional[float]: ...

class ScanResult:
    def report(
        self,
        out: _Path,
        *,
        at: Optional[Sequence[Union[float, str]]] = None,
        runtime: Optional[str] = None,
        device: Optional[int] = None,
        colour_by: str = "class",
    ) -> Dict[str, Any]: ...
    @property
    def min(self) -> npt.NDArray[np.float64]: ...
    @property
    def max(self) -> npt.NDArray[np.float64]: ...
    @property
    def mean(self) -> npt.NDArray[np.float64]: ...
    @property
    def rms(self) -> npt.NDArray[np.float64]: ...
    @property
    def std(self) -> npt.NDArray[np.float64]: ...
    @property
    def flags(self) -> list[Optional[str]]: ...
    @property
    def dead(self) -> list[int]: ...
    @property
    def noisy(self) -> list[int]: ...
    @property
    def mask(self) -> npt.NDArray[np.bool_]: ...
    @property
    def median_std(self) -> float: ...
    @property
    def noisy_threshold(self) -> float: ...
    @property
    def units(self) -> list[str]: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def window_samples(self) -> int: ...
    @property
    def windows(self) -> int: ...
    @property
    def stored_bytes(self) -> int: ...
    @property
    def wall_s(self) -> float: ...
    @property
    def setup_s(self) -> float: ...
    @property
    def throughput_mb_s(self) -> float: ...
    @property
    def realtime_factor(self) -> float: ...
    @property
    def decode(self) -> str: ...
    @property
    def runtime(self) -> str: ...
    @property
    def device(self) -> str: ...
    def to_json(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...

class ConvertResult:
    @property
    def path(self) -> Path: ...
    @property
    def sidecar(self) -> Path: ...
    @property
    def channel_count(self) -> int: ...
    @property
    def samples(self) -> int: ...
    @property
    def order(self) -> str: ...
    @property
    def written_bytes(self) -> int: ...
    @property
    def windows(self) -> int: ...
    @property
    def stored_bytes(self) -> int: ...
    @property
    def wall_s(self) -> float: ...
    @property
    def throughput_mb_s(self) -> float: ...
    @property
    def realtime_factor(self) -> float: ...
    @property
    def decode(self) -> str: ...
    @property
    def runtime(self) -> str: ...
    @property
    def device(self) -> str: ...

def open(
    path: _Path,
    *,
    stream: Optional[str] = None,
    probe: Optional[_Path] = None,
    rate: Union[str, int, float, Fraction, None] = None,
) -> Recording: ...
def concat(
    paths: Sequence[_Path], *, zero_fill_gaps: bool = False, rate_tolerance_ppm: Optional[float] = None
) -> Recording: ...
def synthetic(
    seconds: Union[int, float, Fraction, None] = None,
    *,
    samples: Optional[int] = None,
    channels: Optional[int] = None,
    sample_rate: Union[int, float, Fraction, None] = None,
    seed: Optional[int] = None,
    dead: Optional[Sequence[int]] = None,
    noisy: Optional[Sequence[int]] = None,
    probe: Optional[_Path] = None,
) -> Recording: ...
def devices() -> list[dict[str, Any]]: ...
def worker_device(worker: int, devices: Sequence[int]) -> tuple[Optional[int], str]: ...
def whitening_matrix(
    cov: npt.NDArray[np.float64],
    positions: Optional[npt.NDArray[np.float64]] = None,
    scope: str = "global",
    neighbours: Optional[int] = None,
    radius_um: Optional[float] = None,
    epsilon: float = 1e-8,
) -> npt.NDArray[np.float64]: ...
def scan(
    recording: Recording,
    *,
    runtime: Optional[str] = None,
    start: Optional[Union[int, str]] = None,
    end: Optional[Union[int, str]] = None,
    progress: Optional[Callable[[ProgressEvent], object]] = None,
    window_samples: Optional[int] = None,
    decode: Optional[str] = None,
    device: Optional[int] = None,
) -> ScanResult: ...
def convert(
    recording: Recording,
    out: _Path,
    *,
    channel_map: Optional[_Path] = None,
    channels: Union[_Channels, str] = None,
    start: Optional[Union[int, str]] = None,
    end: Optional[Union[int, str]] = None,
    order: str = "time-major",
    runtime: Optional[str] = None,
    progress: Optional[Callable[[ProgressEvent], object]] = None,
    window_samples: Optional[int] = None,
    decode: Optional[str] = None,
    device: Optional[int] = None,
) -> ConvertResult: ...
def preprocess(
    recording: Recording,
    out: Optional[_Path],
    *,
    pipeline: str = "kilosort4",
    format: Optional[str] = None,
    gain: Optional[float] = None,
    fits: Optional[_Path] = None,
    order: str = "time-major",
    runtime: Optional[str] = None,
    progress: Optional[Callable[[ProgressEvent], object]] = None,
    window_samples: Optional[int] = None,
    decode: Optional[str] = None,
    device: Optional[int] = None,
    dry_run: bool = False,
    report: Optional[_Path] = None,
    at: Optional[Sequence[Union[float, str]]] = None,
    colour_by: str = "class",
) -> str: ...
def preprocess_fit(
    recording: Recording,
    out: _Path,
    *,
    pipeline: str = "kilosort4",
    format: Optional[str] = None,
    gain: Optional[float] = None,
    runtime: Optional[str] = None,
    device: Optional[int] = None,
    decode: Optional[str] = None,
) -> str: ...
def preprocess_part(
    recording: Recording,
    out: _Path,
    start: int,
    end: int,
    fits: _Path,
    *,
    pipeline: str = "kilosort4",
    format: Optional[str] = None,
    gain: Optional[float] = None,
    order: str = "time-major",
    runtime: Optional[str] = None,
    device: Optional[int] = None,
    window_samples: Optional[int] = None,
    decode: Optional[str] = None,
) -> str: ...
def assemble_preprocessed(parts: Sequence[_Path], out: _Path, fits: _Path) -> int: ...
def detect(
    recording: Recording,
    *,
    pipeline: str = "none",
    threshold: float = 5.0,
    sign: str = "neg",
    radius_um: float = 50.0,
    exclude_sweep_ms: float = 0.1,
    noise_levels: Optional[Sequence[float]] = None,
    runtime: Optional[str] = None,
    progress: Optional[Callable[[ProgressEvent], object]] = None,
    window_samples: Optional[int] = None,
    decode: Optional[str] = None,
    device: Optional[int] = None,
) -> tuple[bytearray, str]: ...
def synthetic_truth(
    recording: Recording, start: Optional[int] = None, end: Optional[int] = None
) -> bytearray: ...
def detect_fit(
    recording: Recording,
    *,
    pipeline: str = "none",
    runtime: Optional[str] = None,
    device: Optional[int] = None,
    decode: Optional[str] = None,
) -> str: ...
def detect_part(
    recording: Recording,
    start: int,
    end: int,
    fitted: str,
    *,
    pipeline: str = "none",
    threshold: float = 5.0,
    sign: str = "neg",
    radius_um: float = 50.0,
    exclude_sweep_ms: float = 0.1,
    runtime: Optional[str] = None,
    device: Optional[int] = None,
    window_samples: Optional[int] = None,
    decode: Optional[str] = None,
) -> bytearray: ...
def _from_python_source(
    reader: Callable[[int, int, list[int]], np.ndarray],
    *,
    name: str,
    sample_rate: Union[float, Fraction],
    samples: int,
    dtype: str,
    channel_names: Sequence[str],
    gains: Sequence[float],
    offsets: Sequence[float],
    units: list[str],
    probe_json: Optional[str] = None,
) -> Recording: ...
def _check_conformance(recording: Recording, seed: int) -> None: ...
def butter_sos(
    order: int, cutoff_hz: Sequence[float], band: str, fs: float
) -> npt.NDArray[np.float64]: ...
def _check_sosfiltfilt_f64(
    sos: npt.NDArray[np.float64], x: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]: ...
def apply_pipeline(
    data: npt.NDArray[np.float32],
    rate: float,
    spec: str,
    *,
    probe_json: str | None = None,
    window_samples: int | None = None,
    runtime: str | None = None,
) -> npt.NDArray[np.float32]: ...
def pipeline_preset(name: str) -> dict[str, Any]: ...
def pipeline_presets() -> dict[str, str]: ...
