"""The Butterworth design dspk's filters run, against ``scipy.signal.butter(..., output="sos")``
(same sections, same order, to 1e-12 relative), and dspk's float64 host ``sosfiltfilt`` (the
reference the device filter is tested against) against ``scipy.signal.sosfiltfilt``."""

from __future__ import annotations

import numpy as np
import pytest

import dspk
from dspk import _dspk

signal = pytest.importorskip("scipy.signal")

RATES = [2500.0, 30000.0, 30000.123456]
BANDS = ["highpass", "lowpass", "bandpass", "bandstop"]


def scipy_sos(order: int, cut: list, band: str, fs: float) -> np.ndarray:
    """scipy's design; one cut-off as a scalar (scipy 1.17 with NumPy 2.4 refuses a 1-list)."""
    return signal.butter(order, cut[0] if len(cut) == 1 else cut, band, fs=fs, output="sos")


def relative(ours: np.ndarray, theirs: np.ndarray) -> float:
    """Max |difference| over the coefficients relative to the largest of scipy's."""
    assert ours.shape == theirs.shape, (ours, theirs)
    return float(np.max(np.abs(ours - theirs)) / np.max(np.abs(theirs)))


def random_cutoffs(rng, band: str, fs: float) -> list:
    """One or two cut-offs spread log-uniformly over (1e-3, 0.98) × Nyquist."""
    nyq = fs / 2
    count = 1 if band in ("highpass", "lowpass") else 2
    while True:
        c = np.sort(nyq * 10 ** rng.uniform(-3, np.log10(0.98), size=count))
        if count == 1 or c[1] > c[0] * (1 + 1e-3):
            return [float(v) for v in c]


def test_random_designs_equal_scipy(rng):
    worst = 0.0
    cases = 0
    for order in range(1, 9):
        for band in BANDS:
            for fs in RATES:
                for _ in range(4):
                    cut = random_cutoffs(rng, band, fs)
                    ours = dspk.butter_sos(order, cut, band, fs)
                    theirs = scipy_sos(order, cut, band, fs)
                    assert ours.dtype == np.float64
                    err = relative(ours, theirs)
                    assert err <= 1e-12, f"order {order} {band} {cut} fs={fs}: {err:.3g}\n{ours}\n{theirs}"
                    worst = max(worst, err)
                    cases += 1
    print(f"{cases} designs, largest relative difference {worst:.3g}")


@pytest.mark.parametrize(
    "order, cut, band",
    [
        (5, [300.0, 6000.0], "bandpass"),  # SpikeInterface's bandpass_filter
        (3, [300.0], "highpass"),  # Kilosort4, IBL destripe
        (5, [300.0], "highpass"),  # SpikeInterface's highpass_filter
        (3, [0.5], "highpass"),  # LFP
        (4, [300.0], "lowpass"),  # LFP band
        (2, [59.0, 61.0], "bandstop"),  # a mains notch
        (12, [1000.0, 1100.0], "bandpass"),  # the highest order, a narrow band
    ],
)
def test_the_common_designs_equal_scipy(order, cut, band):
    for fs in [fs for fs in RATES if max(cut) < fs / 2]:
        ours = dspk.butter_sos(order, cut, band, fs)
        theirs = scipy_sos(order, cut, band, fs)
        assert relative(ours, theirs) <= 1e-12


@pytest.mark.parametrize(
    "args",
    [
        (0, [300.0], "highpass", 30000.0),
        (3, [15000.0], "lowpass", 30000.0),
        (3, [0.0], "highpass", 30000.0),
        (3, [300.0], "bandpass", 30000.0),
        (3, [6000.0, 300.0], "bandpass", 30000.0),
        (3, [300.0], "notch", 30000.0),
        (3, [300.0], "highpass", float("nan")),
    ],
)
def test_bad_designs_raise_value_errors(args):
    with pytest.raises(dspk.DspkError) as e:
        dspk.butter_sos(*args)
    assert isinstance(e.value, ValueError)
    assert "\n" not in str(e.value)


def lfp_like(rng, samples: int, fs: float) -> np.ndarray:
    """White noise (10 µV), a DC offset, slow drift and a few spikes: what a filter meets."""
    t = np.arange(samples) / fs
    x = rng.normal(0, 10, samples) + rng.uniform(-500, 500)
    x += 80 * np.sin(2 * np.pi * rng.uniform(0.5, 8) * t + rng.uniform(0, 6))
    for at in rng.integers(0, max(1, samples - 30), size=max(1, samples // 3000)):
        x[at : at + 30] -= 100 * np.hanning(30)[: samples - at]
    return x


@pytest.mark.parametrize(
    "order, cut, band",
    [(5, [300.0, 6000.0], "bandpass"), (3, [300.0], "highpass"), (4, [1000.0], "lowpass"), (2, [59.0, 61.0], "bandstop")],
)
def test_host_sosfiltfilt_equals_scipy(rng, order, cut, band):
    fs = 30000.0
    sos = dspk.butter_sos(order, cut, band, fs)
    padlen = 3 * (2 * len(sos) + 1 - min((sos[:, 2] == 0).sum(), (sos[:, 5] == 0).sum()))
    for samples in (padlen + 1, padlen + 7, 3001, 40000):
        x = lfp_like(rng, samples, fs)
        ours = _dspk._check_sosfiltfilt_f64(sos, x)
        theirs = signal.sosfiltfilt(sos, x)
        err = float(np.max(np.abs(ours - theirs)) / np.max(np.abs(x)))
        assert err <= 1e-10, f"{band} {cut} {samples} samples: {err:.3g}"


def test_host_sosfiltfilt_refuses_what_scipy_refuses():
    sos = dspk.butter_sos(3, [300.0], "highpass", 30000.0)
    with pytest.raises(ValueError):
        signal.sosfiltfilt(sos, np.ones(12))
    with pytest.raises(dspk.DspkError, match="padlen of 12"):
        _dspk._check_sosfiltfilt_f64(sos, np.ones(12))
    assert _dspk._check_sosfiltfilt_f64(sos, np.ones(13)).shape == (13,)
