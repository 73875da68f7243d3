"""Channel statistics against NumPy's float64 under DC offsets (issue 28): ``dspk.scan`` and the
``dspk scan --json`` program on raw int16 files whose channels sit anywhere in int16's range.
The device once summed squares in float32 (``E[x²] − mean²``): at 56 mV a channel with 10 µV of
noise had std 0 and was reported dead."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np

import dspk
from recordings import scaled

GAIN = 2.34375  # µV per count (an NP2.0-like gain, exact in float32: every value is exact)


def write_int16(path: Path, frames: np.ndarray, gains, offsets) -> None:
    """Time-major int16 ``frames`` (samples, channels) and their JSON sidecar."""
    path.write_bytes(np.ascontiguousarray(frames).astype("<i2").tobytes())
    sidecar = {
        "sample_rate": "30000",
        "channel_count": frames.shape[1],
        "format": "int16",
        "order": "time-major",
        "channels": [
            {"name": f"E{c}", "gain": float(g), "offset": float(o), "unit": "uV"}
            for c, (g, o) in enumerate(zip(gains, offsets))
        ],
    }
    Path(str(path) + ".json").write_text(json.dumps(sidecar))


def assert_matches_numpy(got: dict, values: np.ndarray, what: str) -> None:
    """``got`` (arrays min, max, mean, rms, std per channel) against NumPy float64 of
    ``values`` (channels, samples): std and rms to 1e-5 relative, the mean to 1e-5 of the std,
    min and max exactly."""
    std = values.std(axis=1)
    np.testing.assert_array_equal(got["min"], values.min(axis=1), err_msg=what)
    np.testing.assert_array_equal(got["max"], values.max(axis=1), err_msg=what)
    np.testing.assert_array_less(np.abs(got["mean"] - values.mean(axis=1)), 1e-5 * std + 1e-300, err_msg=what)
    np.testing.assert_allclose(got["std"], std, rtol=1e-5, atol=0, err_msg=what)
    np.testing.assert_allclose(got["rms"], np.sqrt((values**2).mean(axis=1)), rtol=1e-5, atol=0, err_msg=what)


def offset_file(tmp_path: Path, rng) -> tuple[Path, np.ndarray]:
    """The issue's file: 16 channels at 0 to 30 000 counts (0 to 70 mV) with ~10 µV of noise,
    300 000 samples, gain 2.34375 µV per count."""
    samples, channels = 300_000, 16
    levels = np.linspace(0, 30_000, channels)
    noise = rng.normal(0, 10.0 / GAIN, size=(samples, channels))
    frames = np.clip(np.round(levels + noise), -32768, 32767).astype(np.int16)
    path = tmp_path / "offsets.bin"
    write_int16(path, frames, [GAIN] * channels, [0.0] * channels)
    return path, frames.T.astype(np.float64) * GAIN


def test_scan_matches_numpy_at_every_dc_offset(tmp_path, rng, runtime):
    path, values = offset_file(tmp_path, rng)
    r = dspk.scan(dspk.open(path), runtime=runtime, progress=False)
    got = {k: np.asarray(getattr(r, k)) for k in ("min", "max", "mean", "rms", "std")}
    assert_matches_numpy(got, values, "dspk.scan")
    assert r.dead == [], f"channels with 10 µV of noise called dead: {r.dead}"
    assert np.all(r.std > 8.0) and np.all(r.std < 12.0)


def test_the_program_matches_numpy_at_every_dc_offset(tmp_path, rng, dspk_program, runtime):
    path, values = offset_file(tmp_path, rng)
    run = subprocess.run(
        [dspk_program, "--runtime", runtime, "scan", str(path), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(run.stdout)
    rows = report["channels"]
    got = {k: np.array([row[k] for row in rows], dtype=np.float64) for k in ("min", "max", "mean", "rms", "std")}
    assert_matches_numpy(got, values, "dspk scan --json")
    assert report["dead"] == []


def test_random_offsets_gains_and_lengths_match_numpy(tmp_path, rng, runtime):
    for round in range(3):
        channels = int(rng.integers(1, 9))
        samples = int(rng.integers(1, 150_000))
        levels = rng.uniform(-32768, 32767, size=channels)
        sigma = rng.uniform(0.5, 40, size=channels)
        frames = np.clip(np.round(levels + sigma * rng.standard_normal((samples, channels))), -32768, 32767)
        frames = frames.astype(np.int16)
        gains = rng.uniform(0.1, 5.0, size=channels).astype(np.float32)
        offsets = rng.uniform(-1000, 1000, size=channels).astype(np.float32)
        path = tmp_path / f"random-{round}.bin"
        write_int16(path, frames, gains, offsets)
        # The values dspk's decode defines (stored × gain + offset in float32), in float64.
        values = scaled(frames.T, gains, offsets).astype(np.float64)
        window = int(rng.integers(1000, 40_000))
        r = dspk.scan(dspk.open(path), runtime=runtime, window_samples=window, progress=False)
        got = {k: np.asarray(getattr(r, k)) for k in ("min", "max", "mean", "rms", "std")}
        what = f"round {round}: {channels} channels × {samples}, windows of {window}, levels {levels}"
        assert_matches_numpy(got, values, what)
        assert r.dead == [], what
