"""The device phase shift (``dspk.apply_pipeline``) against SpikeInterface's ``phase_shift`` on
the same float32 traces, the shifts coming from a Neuropixels 1.0-like probe's ADC slots
(``adc_sample_order / adc_cycle_samples``) on dspk's side and from the ``inter_sample_shift``
property on SpikeInterface's.

SpikeInterface shifts by FFT (``e^{-iω·shift}``: a positive shift delays) over the chunk with a
40 ms margin, zero-padded at the recording's ends; dspk with a 64-tap Kaiser-windowed sinc
whose response is within 2e-9 of the delay up to 10 kHz at 30 kHz, reading the odd extension
past the ends. On band-limited data that fades in and out (so neither end extension matters)
the two differ by float32 rounding only; near raw ends they differ by design (printed)."""

from __future__ import annotations

import numpy as np
import pytest

import dspk

si = pytest.importorskip("spikeinterface")
probeinterface = pytest.importorskip("probeinterface")
pytest.importorskip("scipy.fft")  # SpikeInterface's phase_shift runs on it
from spikeinterface.core import NumpyRecording  # noqa: E402
from spikeinterface.preprocessing import phase_shift  # noqa: E402

RATE = 30_000.0
SAMPLES = 12_000
CHANNELS = 48
HALF_TAPS = 32
CYCLE = 13
EPS32 = float(np.finfo(np.float32).eps)


def np1_probe(channels: int):
    """An NP1.0-like probe: columns at x 16, 48, 0, 32 µm, two contacts per 20 µm row; channel
    pairs take the ADC slots in turn (channels 2k and 2k+1 sample at slot k mod 12 on two
    ADCs), 13 slots per sample."""
    c = np.arange(channels)
    x = np.array([16.0, 48.0, 0.0, 32.0])[c % 4]
    y = 20.0 * (c // 2)
    probe = probeinterface.Probe(ndim=2, si_units="um")
    probe.set_contacts(positions=np.stack([x, y], axis=1), shapes="square", shape_params={"width": 12})
    probe.set_device_channel_indices(c)
    adcs = 2 * (-(-channels // 24))
    probe.annotate(num_adcs=adcs, num_channels_per_adc=12, adc_cycle_samples=CYCLE)
    probe.annotate_contacts(adc_group=(c % 2) + 2 * (c // 24), adc_sample_order=(c // 2) % 12)
    return probe


def band_limited(rng, channels: int, samples: int, fade: int) -> np.ndarray:
    """(channels, samples) float32 µV: white noise with every component above 10 kHz removed,
    faded in and out over `fade` samples with a raised cosine (so the ends are ~0)."""
    spectrum = np.fft.rfft(rng.normal(0.0, 50.0, size=(channels, samples)), axis=1)
    freqs = np.fft.rfftfreq(samples, d=1.0 / RATE)
    spectrum[:, freqs > 10_000.0] = 0.0
    x = np.fft.irfft(spectrum, n=samples, axis=1)
    ramp = 0.5 - 0.5 * np.cos(np.pi * np.arange(fade) / fade)
    x[:, :fade] *= ramp
    x[:, samples - fade :] *= ramp[::-1]
    return x.astype(np.float32)


def si_shift(data: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    rec = NumpyRecording(np.ascontiguousarray(data.T), sampling_frequency=RATE)
    rec.set_property("inter_sample_shift", shifts)
    out = phase_shift(rec).get_traces()
    assert out.dtype == np.float32
    return out.T


def dspk_shift(data: np.ndarray, probe, window_samples=None) -> np.ndarray:
    if not hasattr(dspk, "apply_pipeline"):
        pytest.fail("dspk.apply_pipeline is missing from this build of dspk")
    spec = {"stages": [{"kind": "phase_shift", "half_taps": HALF_TAPS}]}
    out = dspk.apply_pipeline(data, RATE, spec, probe=probe, window_samples=window_samples)
    assert out.dtype == np.float32 and out.shape == data.shape
    return out


def test_phase_shift_equals_spikeinterface(rng, runtime):
    probe = np1_probe(CHANNELS)
    shifts = ((np.arange(CHANNELS) // 2) % 12) / CYCLE
    data = band_limited(rng, CHANNELS, SAMPLES, fade=1500)
    ours = dspk_shift(data, probe).astype(np.float64)
    theirs = si_shift(data, shifts).astype(np.float64)
    rms = float(np.sqrt(np.mean(data.astype(np.float64) ** 2)))
    diff = np.abs(ours - theirs)
    inner = diff[:, HALF_TAPS : SAMPLES - HALF_TAPS]
    err = float(inner.max())
    # dspk's float32 sum of 2·HALF_TAPS products (taps summing to ~1 in magnitude ≲ 1.3) and
    # SpikeInterface's float64 result rounded to float32: a bound of 2·HALF_TAPS roundings of the
    # largest value; the design's own error (2e-9 of the amplitude) is far below it.
    tol = 2 * HALF_TAPS * EPS32 * float(np.abs(data).max())
    print(
        f"max |dspk - SpikeInterface| from {HALF_TAPS} samples in: {err:.3e} µV = {err / rms:.2e} of "
        f"the RMS ({rms:.1f} µV); tolerance {tol:.3e}; with the ends {float(diff.max()):.3e}"
    )
    assert err <= tol, (err, tol)
    # The shift is real: unshifted channels agree, shifted ones moved by a fraction of a sample.
    moved = np.abs(ours - data)[shifts > 0, HALF_TAPS:-HALF_TAPS].max()
    assert moved > 100 * tol
    # The output does not depend on the windows.
    other = dspk_shift(data, probe, window_samples=2_999)
    assert np.array_equal(other.view(np.uint32), ours.astype(np.float32).view(np.uint32))


def test_phase_shift_at_raw_ends_differs_from_spikeinterface_only_near_them(rng, runtime):
    """Unfaded data with a DC offset: SpikeInterface's zero padding rings from the step it
    makes at each end (decaying as 1/distance), dspk's odd extension makes no step. Away from
    the ends both are the delay of the same signal."""
    probe = np1_probe(CHANNELS)
    shifts = ((np.arange(CHANNELS) // 2) % 12) / CYCLE
    data = band_limited(rng, CHANNELS, SAMPLES, fade=1) + np.float32(200.0)
    ours = dspk_shift(data, probe).astype(np.float64)
    theirs = si_shift(data, shifts).astype(np.float64)
    diff = np.abs(ours - theirs).max(axis=0)
    rms = float(np.sqrt(np.mean(data.astype(np.float64) ** 2)))
    for distance in (HALF_TAPS, 300, 1200, 3000):
        away = float(diff[distance : SAMPLES - distance].max())
        print(f"{distance} samples from the ends: max |dspk - SpikeInterface| {away:.3e} µV ({away / rms:.1e} RMS)")
    # A step of size |x[end]| ≲ 400 µV ringing through a sinc: ≲ |step| / (π·distance).
    far = float(diff[3000 : SAMPLES - 3000].max())
    assert far <= float(np.abs(data).max()) / (np.pi * 3000) + 2 * HALF_TAPS * EPS32 * float(np.abs(data).max())
