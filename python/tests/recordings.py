"""Recordings the tests (and python/bench) write themselves: SpikeGLX NP1.0 ``.bin`` + ``.meta``
and raw binary + JSON sidecar, with fresh random values; and NumPy's decode of them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# NP1.0 AP gains a probe may be configured with (the imro table's apGain column).
NP1_GAINS = (50, 125, 250, 500, 1000, 1500, 2000, 3000)


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


def scaled(stored: np.ndarray, gains, offsets) -> np.ndarray:
    """dspk's decode rule computed by NumPy: ``stored × gain + offset`` in float32, two
    roundings (no fused multiply-add), channel-major."""
    g = np.asarray(gains, dtype=np.float32)[:, None]
    o = np.asarray(offsets, dtype=np.float32)[:, None]
    return stored.astype(np.float32) * g + o


@dataclass
class OpenEphysStream:
    """One continuous stream of an Open Ephys recording folder written by a test."""

    folder: str  # the .oebin's folder_name, without its trailing "/"
    dir: Path  # recordingM/continuous/<folder>
    frames: np.ndarray  # int16 (samples, channels): the stored values, time-major
    names: list[str]  # channel_name per channel
    bit_volts: np.ndarray  # float64 per channel
    units: list[str]  # units per channel as written ("" where the GUI leaves them empty)
    rate: float  # the nominal sample_rate
    sample_numbers: np.ndarray  # int64 per frame


def write_openephys_recording(
    folder: Path,
    rng,
    streams: list[tuple[str, float, list[tuple[str, str, float]], int]],
    gui_version: str = "0.6.7",
    gap: tuple[int, int] | None = None,
) -> list[OpenEphysStream]:
    """One Open Ephys binary recording folder (``…/experimentK/recordingM``), as the GUI's
    "Binary format" documentation describes it and Neo's ``OpenEphysBinaryRawIO`` reads it:
    ``structure.oebin`` (JSON: ``GUI version`` and one ``continuous`` entry per stream with
    ``folder_name``, ``sample_rate``, ``num_channels``, ``channels`` of ``channel_name``,
    ``bit_volts``, ``units``) and per stream ``continuous/<folder_name>/continuous.dat``
    (int16, time-major, no header) with its sample numbers: ``sample_numbers.npy`` (int64) and
    ``timestamps.npy`` (float64 s) from GUI 0.6, ``timestamps.npy`` holding the int64 sample
    numbers before it.

    ``streams``: (folder_name, sample_rate, [(channel_name, kind, bit_volts)], samples) with
    kind ``"headstage"`` (µV), ``"adc"`` (V) or ``"aux"`` (mV) (see ``openephys_channel``).
    ``gap``: (frame, missing) drops ``missing`` sample numbers before frame ``frame`` of every
    stream."""
    folder.mkdir(parents=True, exist_ok=True)
    v06 = tuple(int(p) for p in gui_version.split(".")[:2]) >= (0, 6)
    written, entries = [], []
    for k, (name, rate, channels, samples) in enumerate(streams):
        frames = rng.integers(-(2**15), 2**15, size=(samples, len(channels)), dtype=np.int16)
        unit = {"headstage": "uV", "adc": "V", "aux": "mV"}
        bit_volts = np.array([bv for _, _, bv in channels])
        # GUI 0.5 leaves units empty on some versions; Neo then takes µV, and V for "ADC" names.
        units = [unit[kind] if v06 else "" for _, kind, _ in channels]
        first = int(rng.integers(0, 10**8))
        sample_numbers = first + np.arange(samples, dtype=np.int64)
        if gap is not None:
            sample_numbers[gap[0] :] += gap[1]
        stream_dir = folder / "continuous" / name
        stream_dir.mkdir(parents=True, exist_ok=True)
        (stream_dir / "continuous.dat").write_bytes(frames.astype("<i2").tobytes())
        if v06:
            np.save(stream_dir / "sample_numbers.npy", sample_numbers)
            clock_hz = rate * (1 - rng.uniform(0, 1e-4))  # the clock runs a little slow
            np.save(stream_dir / "timestamps.npy", sample_numbers / clock_hz + rng.uniform(0, 100))
        else:
            np.save(stream_dir / "timestamps.npy", sample_numbers)
        processor = name.split("-")[0]
        entries.append(
            {
                "folder_name": name + "/",
                "sample_rate": rate,
                "source_processor_name": processor,
                "source_processor_id": 100 + k,
                "stream_name": name.split(".", 1)[-1],
                "recorded_processor": "Record Node",
                "recorded_processor_id": 101,
                "num_channels": len(channels),
                "channels": [
                    {
                        "channel_name": ch,
                        "description": "",
                        "identifier": "",
                        "history": "",
                        "bit_volts": float(bv),
                        "units": u,
                    }
                    for (ch, _, _), bv, u in zip(channels, bit_volts, units)
                ],
            }
        )
        written.append(
            OpenEphysStream(name, stream_dir, frames, [c for c, _, _ in channels], bit_volts, units, rate, sample_numbers)
        )
    oebin = {"GUI version": gui_version, "continuous": entries, "events": [], "spikes": []}
    (folder / "structure.oebin").write_text(json.dumps(oebin, indent=2))
    return written


def openephys_channel(rng, name: str, kind: str) -> tuple[str, str, float]:
    """A channel for ``write_openephys_recording``: its name, kind and a random ``bit_volts``
    around the GUI's for that kind (0.195 µV headstage, 152.6 µV ADC, 37.4 µV aux, in their
    units)."""
    base = {"headstage": 0.195, "adc": 0.00015258789, "aux": 0.0374}
    return name, kind, float(base[kind] * rng.uniform(0.5, 2.0))
