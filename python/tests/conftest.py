"""Fixtures of dspk's Python tests: fresh seeded random recordings written by the tests
themselves (SpikeGLX NP1.0 ``.bin`` + ``.meta``, raw binary + JSON sidecar), the ``dspk``
program as the Rust oracle, and the runtimes the device tests must run on."""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import dspk

# NP1.0 AP gains a probe may be configured with (the imro table's apGain column).
NP1_GAINS = (50, 125, 250, 500, 1000, 1500, 2000, 3000)


@pytest.fixture
def rng(request):
    """A generator with a fresh seed, printed so a failure can be replayed
    (``DSPK_TEST_SEED`` replays one)."""
    seed = int(os.environ.get("DSPK_TEST_SEED", time.time_ns() % 2**32))
    print(f"{request.node.name}: seed {seed}")
    return np.random.default_rng(seed)


@dataclass
class SpikeGlxFile:
    """A SpikeGLX NP1.0 AP file written by a test, with what it holds."""

    bin: Path
    meta: Path
    folder: Path
    frames: np.ndarray  # int16 (samples, 385): the stored values, time-major
    ap_gains: np.ndarray  # the imro table's apGain per AP channel
    rate: str  # imSampRate as written
    first_sample: int

    @property
    def uv_gains(self) -> np.ndarray:
        """µV per count of each AP channel, from SpikeGLX's formula (imAiRangeMax / imMaxInt /
        apGain × 10^6), in float64."""
        return 0.6 / 512 / self.ap_gains.astype(np.float64) * 1e6


def write_spikeglx(folder: Path, rng, samples: int, rate: str = "30000.0") -> SpikeGlxFile:
    """A 384 + 1 channel NP1.0 AP recording with random int16 values and random per-channel
    gains, named as SpikeGLX names it (``run_g0_t0.imec0.ap.bin``) so that Neo reads it."""
    folder.mkdir(parents=True, exist_ok=True)
    channels = 385
    frames = rng.integers(-2000, 2000, size=(samples, channels), dtype=np.int16)
    frames[:, 384] = rng.integers(0, 2, size=samples, dtype=np.int16) * 64  # sync bits
    ap_gains = rng.choice(NP1_GAINS, size=384)
    first_sample = int(rng.integers(0, 10**9))
    bin_path = folder / "run_g0_t0.imec0.ap.bin"
    bin_path.write_bytes(frames.astype("<i2").tobytes())
    imro = "(0,384)" + "".join(f"({c} 0 0 {g} 250 1)" for c, g in enumerate(ap_gains))
    chan_map = "(384,384,1)" + "".join(f"(AP{c};{c}:{c})" for c in range(384)) + "(SY0;768:768)"
    shank_map = "(1,2,480)" + "".join(f"(0:{c % 2}:{c // 2}:1)" for c in range(384))
    meta = "\n".join(
        [
            "acqApLfSy=384,384,1",
            "appVersion=20230905",
            f"fileName={bin_path}",
            f"fileSizeBytes={frames.nbytes}",
            f"fileTimeSecs={samples / float(rate)}",
            f"firstSample={first_sample}",
            "imAiRangeMax=0.6",
            "imAiRangeMin=-0.6",
            "imMaxInt=512",
            "imDatPrb_pn=NP1000",
            "imDatPrb_type=0",
            "imDatPrb_sn=18194814141",
            f"imSampRate={rate}",
            "nSavedChans=385",
            "snsApLfSy=384,0,1",
            "snsSaveChanSubset=0:383,768",
            "typeThis=imec",
            f"~imroTbl={imro}",
            f"~snsChanMap={chan_map}",
            f"~snsShankMap={shank_map}",
        ]
    )
    meta_path = bin_path.with_suffix(".meta")
    meta_path.write_text(meta + "\n")
    return SpikeGlxFile(bin_path, meta_path, folder, frames, ap_gains, rate, first_sample)


@pytest.fixture
def spikeglx(tmp_path, rng) -> SpikeGlxFile:
    """A half-second NP1.0 AP file (fresh random values and gains)."""
    return write_spikeglx(tmp_path / "sglx", rng, samples=int(rng.integers(14_000, 16_000)))


@dataclass
class BinaryFile:
    """A raw binary file + JSON sidecar written by a test."""

    path: Path
    values: np.ndarray  # stored values, (channels, samples)
    gains: np.ndarray  # float32
    offsets: np.ndarray  # float32
    order: str
    rate: str


def write_binary(
    path: Path,
    rng,
    channels: int,
    samples: int,
    dtype: str = "int16",
    order: str = "time-major",
    rate: str = "30000.12",
) -> BinaryFile:
    """A raw binary recording of random stored values with random gains and offsets."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        values = rng.normal(0, 100, size=(channels, samples)).astype(dt)
    else:
        info = np.iinfo(dt)
        values = rng.integers(info.min, info.max, size=(channels, samples), endpoint=True).astype(dt)
    gains = rng.uniform(0.1, 5.0, size=channels).astype(np.float32)
    offsets = rng.uniform(-50, 50, size=channels).astype(np.float32)
    laid_out = values.T if order == "time-major" else values
    path.write_bytes(np.ascontiguousarray(laid_out).astype(dt.newbyteorder("<")).tobytes())
    sidecar = {
        "sample_rate": rate,
        "channel_count": channels,
        "format": dt.name,
        "order": order,
        "channels": [
            {"name": f"E{c}", "gain": float(gains[c]), "offset": float(offsets[c]), "unit": "uV"}
            for c in range(channels)
        ],
        "start_time": "1/3",
        "metadata": {"probe": "test"},
    }
    Path(str(path) + ".json").write_text(json.dumps(sidecar))
    return BinaryFile(path, values, gains, offsets, order, rate)


@pytest.fixture
def binary(tmp_path, rng) -> BinaryFile:
    """A small time-major int16 raw binary recording."""
    return write_binary(tmp_path / "rec.bin", rng, channels=int(rng.integers(3, 12)), samples=int(rng.integers(2_000, 5_000)))


def scaled(stored: np.ndarray, gains, offsets) -> np.ndarray:
    """dspk's decode rule computed by NumPy: ``stored × gain + offset`` in float32, two
    roundings (no fused multiply-add), channel-major."""
    g = np.asarray(gains, dtype=np.float32)[:, None]
    o = np.asarray(offsets, dtype=np.float32)[:, None]
    return stored.astype(np.float32) * g + o


@pytest.fixture(scope="session")
def dspk_program() -> str:
    """The ``dspk`` program (``$DSPK_BIN``, else the workspace's release build): the Rust
    reads the package is compared with."""
    given = os.environ.get("DSPK_BIN")
    candidates = [given] if given else []
    root = Path(__file__).resolve().parents[2]
    candidates += [str(root / "target" / "release" / "dspk"), shutil.which("dspk")]
    for c in candidates:
        if c and Path(c).is_file():
            return c
    if os.environ.get("DSPK_TEST_RUNTIMES"):
        pytest.fail("the dspk program was not found (set DSPK_BIN); CI needs it as the oracle")
    pytest.skip("SKIP: the dspk program was not found (set DSPK_BIN)")


@pytest.fixture(scope="session")
def runtime() -> str:
    """The runtime device tests run on: the first of ``DSPK_TEST_RUNTIMES``, else the first
    usable one; a required runtime without a device fails the test, never skips it."""
    required = [r.strip() for r in os.environ.get("DSPK_TEST_RUNTIMES", "").split(",") if r.strip()]
    report = {r["runtime"]: r for r in dspk.devices()}
    for name in required:
        if not report.get(name, {}).get("usable"):
            pytest.fail(f"DSPK_TEST_RUNTIMES lists {name}, which has no usable device: {report.get(name)}")
    if required:
        return required[0]
    for name, r in report.items():
        if r["usable"]:
            return name
    pytest.skip("SKIP: no runtime has a usable device (set DSPK_TEST_RUNTIMES to require one)")
