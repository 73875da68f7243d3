"""The device common reference (``dspk.apply_pipeline``) against SpikeInterface's
``common_reference`` on the same float32 traces and probe: global median and mean, per shank
(SpikeInterface's ``groups``), local (an annulus, with its nearest-channels fallback), and
Kilosort's lower median against NumPy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dspk

si = pytest.importorskip("spikeinterface")
probeinterface = pytest.importorskip("probeinterface")
from spikeinterface.core import NumpyRecording  # noqa: E402
from spikeinterface.preprocessing import common_reference  # noqa: E402

RATE = 30_000.0
SAMPLES = 3000
EPS32 = float(np.finfo(np.float32).eps)


def np_probe(channels: int, shanks: int):
    """A Neuropixels 1.0-like probe: columns at x 16, 48, 0, 32 µm, two contacts per 20 µm row,
    shanks 250 µm apart, channels split over the shanks in order."""
    per_shank = -(-channels // shanks)
    c = np.arange(channels)
    shank = c // per_shank
    i = c % per_shank
    x = np.array([16.0, 48.0, 0.0, 32.0])[i % 4] + 250.0 * shank
    y = 20.0 * (i // 2)
    probe = probeinterface.Probe(ndim=2, si_units="um")
    probe.set_contacts(
        positions=np.stack([x, y], axis=1),
        shapes="square",
        shape_params={"width": 12},
        shank_ids=shank.astype(str),
    )
    probe.set_device_channel_indices(np.arange(channels))
    return probe


def traces(rng, channels: int, ties: bool = False) -> np.ndarray:
    """(channels, samples) float32: µV noise on per-channel DC offsets, or small integers
    (many ties)."""
    if ties:
        return rng.integers(-3, 4, size=(channels, SAMPLES)).astype(np.float32)
    dc = rng.uniform(-200, 200, size=(channels, 1))
    return (dc + rng.uniform(-100, 100, size=(channels, SAMPLES))).astype(np.float32)


def si_recording(data: np.ndarray, probe) -> NumpyRecording:
    rec = NumpyRecording(np.ascontiguousarray(data.T), sampling_frequency=RATE)
    rec.set_probe(probe, group_mode="by_shank")
    return rec


def apply(data: np.ndarray, stage: dict, probe, window_samples=None) -> np.ndarray:
    if not hasattr(dspk, "apply_pipeline"):
        pytest.fail("dspk.apply_pipeline is missing from this build of dspk")
    out = dspk.apply_pipeline(data, RATE, {"stages": [stage]}, probe=probe, window_samples=window_samples)
    assert out.dtype == np.float32 and out.shape == data.shape
    return out


def check(got: np.ndarray, want: np.ndarray, data: np.ndarray, roundings: float) -> float:
    """Max |got − want| against `roundings` float32 roundings of the largest |value|."""
    err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
    tol = roundings * EPS32 * float(np.max(np.abs(data)))
    print(f"max |dspk - SpikeInterface| {err:.3e} (tolerance {tol:.3e})")
    assert err <= tol, (err, tol)
    return err


@pytest.mark.parametrize("channels", [32, 33])
@pytest.mark.parametrize("operator", ["median", "mean"])
def test_global_equals_spikeinterface(rng, runtime, channels, operator):
    data = traces(rng, channels, ties=channels == 33 and operator == "median")
    probe = np_probe(channels, 1)
    rec = si_recording(data, probe)
    si_op = "average" if operator == "mean" else "median"
    want = common_reference(rec, reference="global", operator=si_op).get_traces().T
    got = apply(data, {"kind": "common_reference", "operator": operator, "scope": "global"}, probe)
    # Median: the same two roundings as NumPy's float32 median; mean: sums in another order.
    check(got, want, data, 4.0 if operator == "median" else channels + 3.0)
    # Pointwise in time: any windows give the same bits.
    again = apply(data, {"kind": "common_reference", "operator": operator}, probe, window_samples=777)
    assert np.array_equal(got, again)


@pytest.mark.parametrize("operator", ["median", "mean"])
def test_shank_equals_spikeinterface_groups(rng, runtime, operator):
    channels = 33  # shanks of 17 and 16 channels: both parities of the median
    data = traces(rng, channels)
    probe = np_probe(channels, 2)
    rec = si_recording(data, probe)
    groups = rec.get_channel_groups()
    by_shank = [list(rec.channel_ids[groups == g]) for g in np.unique(groups)]
    assert [len(g) for g in by_shank] == [17, 16]
    si_op = "average" if operator == "mean" else "median"
    want = common_reference(rec, reference="global", operator=si_op, groups=by_shank).get_traces().T
    got = apply(data, {"kind": "common_reference", "operator": operator, "scope": "shank"}, probe)
    check(got, want, data, 4.0 if operator == "median" else 20.0)


@pytest.mark.parametrize("operator", ["median", "mean"])
@pytest.mark.parametrize("radius", [(30.0, 55.0), (0.0, 40.0), (25.0, 100.0)])
def test_local_equals_spikeinterface(rng, runtime, operator, radius):
    channels = 32
    data = traces(rng, channels)
    probe = np_probe(channels, 1)
    rec = si_recording(data, probe)
    si_op = "average" if operator == "mean" else "median"
    with warnings.catch_warnings():
        # Where the annulus holds fewer than 5 channels (the probe's ends) SpikeInterface warns
        # and takes the 5 nearest beyond the inner radius, as dspk does.
        warnings.simplefilter("ignore")
        want = common_reference(rec, reference="local", operator=si_op, local_radius=radius).get_traces().T
    stage = {
        "kind": "common_reference",
        "operator": operator,
        "scope": "local",
        "local_radius_um": list(radius),
    }
    got = apply(data, stage, probe)
    check(got, want, data, 4.0 if operator == "median" else 20.0)


def test_lower_median_equals_numpy(rng, runtime):
    channels = 32
    data = traces(rng, channels)
    probe = np_probe(channels, 1)
    lower = np.sort(data, axis=0)[(channels - 1) // 2]
    want = data - lower[None, :]
    got = apply(data, {"kind": "common_reference", "median": "lower"}, probe)
    check(got, want, data, 2.0)

