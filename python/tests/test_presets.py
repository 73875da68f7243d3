"""dspk's pipeline presets (``dspk.pipeline_preset``) held to the tools they follow.

- ``spikeinterface`` against SpikeInterface 0.105.3's own chain on the same float32 traces:
  ``bandpass_filter`` (margin 100 ms, exact) → ``common_reference`` (global median), and on a
  Neuropixels 1.0-like probe with ADC shifts ``phase_shift`` between them.
- ``kilosort4`` against the same chain written out in NumPy/scipy in float64 (Kilosort needs
  torch, which CI lacks: ``bench/kilosort4_chain_check.py`` runs Kilosort's own functions on the
  H200): on a recording of one Kilosort batch the centring and the whitening covariance are over
  the whole recording, as Kilosort run on it as one batch.

Recordings are small (CI runs on lavapipe, at its time limit)."""

from __future__ import annotations

import numpy as np
import pytest

import dspk

si = pytest.importorskip("spikeinterface")
probeinterface = pytest.importorskip("probeinterface")
scipy_signal = pytest.importorskip("scipy.signal")
from spikeinterface.core import NumpyRecording  # noqa: E402
from spikeinterface.preprocessing import bandpass_filter, common_reference, phase_shift  # noqa: E402

RATE = 30_000.0
CYCLE = 13


def test_presets_are_listed_and_unknown_names_refused():
    presets = dspk.pipeline_presets()
    assert set(presets) == {"kilosort4", "spikeinterface", "ibl"}
    assert all(isinstance(d, str) and d for d in presets.values())
    ks = dspk.pipeline_preset("kilosort4")
    assert [s["kind"] for s in ks["stages"]] == ["center", "common_reference", "filter", "whiten", "scale"]
    assert ks["stages"][1]["median"] == "lower" and ks["stages"][3]["neighbours"] == 32
    assert ks["stages"][4] == {"kind": "scale", "output": "int16", "gain": 200.0}
    with pytest.raises(ValueError, match=r'"kilosort3".*kilosort4, spikeinterface'):
        dspk.pipeline_preset("kilosort3")


def np1_probe(channels: int):
    """An NP1.0-like probe (as in test_ops_shift.py): channel pairs take the ADC slots in turn,
    13 slots per sample."""
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


def raw(rng, channels: int, samples: int) -> np.ndarray:
    """(channels, samples) float32 µV like a raw recording: a DC offset per channel (±500 µV),
    a shared slow wave (LFP-like, 8 Hz, 100 µV), a shared spiky component and white noise."""
    t = np.arange(samples) / RATE
    common = 100.0 * np.sin(2 * np.pi * 8.0 * t) + np.convolve(
        rng.normal(0, 30.0, samples) * (rng.random(samples) < 0.01), np.hanning(30), "same"
    )
    x = rng.uniform(-500, 500, (channels, 1)) + common + rng.normal(0, 20.0, (channels, samples))
    return x.astype(np.float32)


def si_chain(data: np.ndarray, shifts: np.ndarray | None) -> np.ndarray:
    rec = NumpyRecording(np.ascontiguousarray(data.T), sampling_frequency=RATE)
    rec = bandpass_filter(rec, freq_min=300.0, freq_max=6000.0, margin_ms=100.0)
    if shifts is not None:
        rec.set_property("inter_sample_shift", shifts)
        rec = phase_shift(rec)
    rec = common_reference(rec, reference="global", operator="median")
    out = rec.get_traces()
    assert out.dtype == np.float32
    return out.T.astype(np.float64)


def test_spikeinterface_preset_equals_spikeinterface_without_adc_shifts(rng, runtime):
    """No probe: the preset's optional phase shift is left out; float32 rounding only
    (the float32 filter against scipy's float64 one is ~2e-3 µV)."""
    channels, samples = 24, 45_000
    data = raw(rng, channels, samples)
    spec = dspk.pipeline_preset("spikeinterface")
    ours = dspk.apply_pipeline(data, RATE, spec).astype(np.float64)
    theirs = si_chain(data, None)
    err = float(np.abs(ours - theirs).max())
    rms = float(np.sqrt(np.mean(theirs**2)))
    print(f"spikeinterface preset, no ADC shifts: max |dspk - SpikeInterface| {err:.3e} µV (output RMS {rms:.1f} µV)")
    assert err <= 1e-2, err
    # A probe without ADC slots is the same (the phase shift is left out).
    probe = np1_probe(channels)
    bare = probeinterface.Probe(ndim=2, si_units="um")
    bare.set_contacts(positions=probe.contact_positions, shapes="square", shape_params={"width": 12})
    bare.set_device_channel_indices(np.arange(channels))
    same = dspk.apply_pipeline(data, RATE, spec, probe=bare)
    assert np.array_equal(same, ours.astype(np.float32))


def test_spikeinterface_preset_equals_spikeinterface_on_neuropixels(rng, runtime):
    """NP1.0 ADC shifts: the phase shift runs. Away from the ends the two differ by float32
    rounding (the device shift is within 2e-9 of SpikeInterface's FFT delay below 10 kHz, and
    the band-pass leaves nothing above 6 kHz of note); within 40 ms of the ends SpikeInterface's
    zero padding makes a step dspk's odd extension does not (printed)."""
    channels, samples = 24, 45_000
    data = raw(rng, channels, samples)
    probe = np1_probe(channels)
    shifts = ((np.arange(channels) // 2) % 12) / CYCLE
    ours = dspk.apply_pipeline(data, RATE, dspk.pipeline_preset("spikeinterface"), probe=probe).astype(np.float64)
    theirs = si_chain(data, shifts)
    unshifted = si_chain(data, None)
    diff = np.abs(ours - theirs).max(axis=0)
    rms = float(np.sqrt(np.mean(theirs**2)))
    for distance in (0, 300, 1200, 3000):
        away = float(diff[distance : samples - distance].max())
        print(f"spikeinterface preset, NP1 shifts, {distance} samples from the ends: max |Δ| {away:.3e} µV")
    inner = float(diff[1200 : samples - 1200].max())
    # SpikeInterface's step at each end (the band-passed value there) rings through its FFT
    # delay as ≲ |step| / (π·distance) (test_ops_shift.py); on top, the float32 level.
    step = float(np.abs(unshifted[:, [0, -1]]).max())
    assert inner <= 1e-2 + step / (np.pi * 1200), (inner, step)
    # The shift is real: without it SpikeInterface's output is far from ours.
    assert float(np.abs(ours - unshifted)[:, 1200:-1200].max()) > 100 * max(inner, 1e-3), rms


def kilosort4_reference(data: np.ndarray, xy: np.ndarray, nrange: int = 32) -> np.ndarray:
    """Kilosort4's chain on one batch in float64 (kilosort/io.py BinaryFiltered.filter,
    preprocessing.py), with scipy's sosfiltfilt for its FFT-applied filtfilt response: the
    whitened data ×200 before the int16 cast."""
    x = data.astype(np.float64)
    x = x - x.mean(axis=1, keepdims=True)
    n = x.shape[0]
    x = x - np.sort(x, axis=0)[(n - 1) // 2]  # torch.median: the lower middle value
    sos = scipy_signal.butter(3, 300.0, btype="high", fs=RATE, output="sos")
    x = scipy_signal.sosfiltfilt(sos, x, axis=1)
    cc = x @ x.T / x.shape[1]
    w = np.zeros((n, n))
    for j in range(n):
        ds = ((xy[j] - xy) ** 2).sum(axis=1)
        ix = np.argsort(ds, kind="stable")[:nrange]
        e, d, _ = np.linalg.svd(cc[np.ix_(ix, ix)])
        w[j, ix] = ((e / (d + 1e-6) ** 0.5) @ e.T)[0]
    return 200.0 * (w @ x)


def test_kilosort4_preset_equals_its_chain_in_float64(rng, runtime):
    """One Kilosort batch or less (30 000 samples): the centring and whitening fits cover the
    whole recording. Jittered contacts (no ties among the 32 nearest). The float chain (the
    preset without its int16 cast) within float32 rounding, the int16 output within 1."""
    channels, samples = 40, 30_000
    data = raw(rng, channels, samples)
    xy = np.stack([rng.uniform(0, 60, channels), np.arange(channels) * 10 + rng.uniform(-2, 2, channels)], 1)
    probe = probeinterface.Probe(ndim=2, si_units="um")
    probe.set_contacts(positions=xy, shapes="square", shape_params={"width": 12})
    probe.set_device_channel_indices(np.arange(channels))
    spec = dspk.pipeline_preset("kilosort4")
    want = kilosort4_reference(data, xy)
    floats = dict(spec, stages=spec["stages"][:-1] + [{"kind": "scale", "gain": 200.0}])
    got = dspk.apply_pipeline(data, RATE, floats, probe=probe).astype(np.float64)
    err = float(np.abs(got - want).max())
    rms = float(np.sqrt(np.mean(want**2)))
    print(f"kilosort4 preset (float) vs float64 chain: max |Δ| {err:.3e} (output RMS {rms:.1f}, int16 units)")
    assert err <= 1e-4 * rms, (err, rms)
    ints = dspk.apply_pipeline(data, RATE, spec, probe=probe)
    assert np.array_equal(ints, np.round(ints)) and np.abs(ints).max() <= 32767
    off = np.abs(ints - np.clip(np.round(want), -32768, 32767))
    print(f"int16: {int((off > 0).sum())} of {off.size} samples differ, by at most {off.max():.0f}")
    assert off.max() <= 1
