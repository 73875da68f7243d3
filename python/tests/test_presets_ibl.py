"""dspk's ``ibl`` preset held to ibl-neuropixel's own ``ibldsp.voltage.destripe`` on whole arrays.

The bad channels come from dspk's own detection (``dspk.scan``'s dead and noisy channels): the
preset finds them itself (its ``interpolate_bad`` stage with ``detect = true``, σ = 20 µm,
p = 1.3: IBL's ``kriging_distance_um`` and ``p``), and ``destripe`` is given the channels
``dspk.scan`` reports as its ``channel_labels`` (1 dead, 2 noisy). ``destripe`` computes in float64 from the float32 input; dspk in float32 on the device,
so the two differ by the float32 level of the chain. Recordings are small (CI runs on lavapipe,
at its time limit)."""

from __future__ import annotations

import numpy as np
import pytest

import dspk

pytest.importorskip("ibldsp")
probeinterface = pytest.importorskip("probeinterface")
from ibldsp.voltage import agc, destripe, kfilt  # noqa: E402
scipy_signal = pytest.importorskip("scipy.signal")
from spikeinterface.core import NumpyRecording  # noqa: E402

RATE = 30_000.0


def neuropixels_like(channels: int, shanks: int = 1):
    """An NP1.0-like checkerboard (x 43/11/59/27 µm, rows 20 µm apart) on `shanks` shanks of
    `channels / shanks` consecutive channels each, 250 µm apart; no ADC slots."""
    per = channels // shanks
    c = np.arange(channels)
    x = np.array([43.0, 11.0, 59.0, 27.0])[c % 4] + 250.0 * (c // per)
    y = 20.0 * ((c % per) // 2)
    probe = probeinterface.Probe(ndim=2, si_units="um")
    probe.set_contacts(positions=np.stack([x, y], axis=1), shapes="square", shape_params={"width": 12})
    probe.set_device_channel_indices(c)
    probe.set_shank_ids((c // per).astype(str))
    return probe, {"x": x, "y": y, "shank": (c // per).astype(float)}


def raw(rng, channels: int, samples: int, dead, noisy) -> np.ndarray:
    """(channels, samples) float32 µV like a raw recording: a DC offset per channel, an LFP-like
    slow wave, a stripe shared by every channel (bursts of 60 µV noise, what destripe removes),
    white noise of 10–25 µV per channel whose size swells over time (the gain control follows
    it), one dead channel (0) and one noisy one (10× noise)."""
    t = np.arange(samples) / RATE
    stripe = rng.normal(0, 60.0, samples) * ((np.arange(samples) // 900) % 3 == 0)
    common = 100.0 * np.sin(2 * np.pi * 8.0 * t) + stripe
    size = rng.uniform(10.0, 25.0, (channels, 1)) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t + rng.uniform(0, 6, (channels, 1))))
    x = rng.uniform(-500, 500, (channels, 1)) + common + size * rng.normal(0, 1.0, (channels, samples))
    x[noisy] *= 10.0
    x[dead] = 0.0
    return x.astype(np.float32)


def dspk_bad_channels(data: np.ndarray, probe) -> tuple[list[int], list[int]]:
    rec = NumpyRecording(np.ascontiguousarray(data.T), sampling_frequency=RATE)
    rec.set_probe(probe)  # in place in SpikeInterface 0.105
    result = dspk.scan(dspk.from_spikeinterface(rec), progress=False)
    return list(result.dead), list(result.noisy)


def with_channels(spec: dict, bad: list[int]) -> dict:
    """`spec` with its detecting interpolation replaced by one of the channels `bad`."""
    stages = [
        {k: v for k, v in dict(s, channels=bad).items() if k != "detect"} if s["kind"] == "interpolate_bad" else s
        for s in spec["stages"]
    ]
    return dict(spec, stages=stages)


def test_the_ibl_preset_is_listed_with_its_stages():
    presets = dspk.pipeline_presets()
    assert "ibl" in presets and "destripe" in presets["ibl"]
    spec = dspk.pipeline_preset("ibl")
    assert [s["kind"] for s in spec["stages"]] == ["filter", "phase_shift", "interpolate_bad", "spatial_highpass"]
    assert spec["stages"][0] == {"kind": "filter", "band": "highpass", "cutoff_hz": [300.0], "order": 3, "direction": "zero_phase"}
    assert spec["stages"][2] == {
        "kind": "interpolate_bad",
        "channels": [],
        "detect": True,
        "sigma_um": 20.0,
        "p": 1.3,
        "weight_floor": 0.005,
    }
    assert spec["stages"][3] == {
        "kind": "spatial_highpass",
        "agc_window_samples": 3000,
        "agc_floor_uv": 0.01,
        "order": 3,
        "cutoff": 0.01,
        "pad_channels": 60,
    }


def test_ibl_preset_equals_destripe_with_dspks_bad_channels(rng, runtime):
    """Two shanks of 16 channels (the k-filter runs per shank). No ADC shifts (the probe states
    none; ``destripe`` gets no ``sample_shift`` and ``neuropixel_version=None``), 0.15 s.
    Tolerance 1e-2 µV, the float32 level of the chain: the
    float32 high-pass against scipy's float64 one is ~2e-3 µV (``test_presets.py``), the
    k-filter passes it on scaled by its matrix (entries ≲ 1) and the gain (float32 sums of its
    block sums and taps, ~1e-6 relative)."""
    channels, samples, shanks = 32, 4_500, 2
    dead, noisy = 7, 20
    probe, h = neuropixels_like(channels, shanks)
    data = raw(rng, channels, samples, dead, noisy)
    found_dead, found_noisy = dspk_bad_channels(data, probe)
    assert (found_dead, found_noisy) == ([dead], [noisy])
    labels = np.zeros(channels, dtype=int)
    labels[found_dead] = 1
    labels[found_noisy] = 2
    theirs = destripe(data.copy(), RATE, h=h, neuropixel_version=None, channel_labels=labels)
    theirs = np.asarray(theirs, dtype=np.float64)
    ours = dspk.apply_pipeline(data, RATE, dspk.pipeline_preset("ibl"), probe=probe).astype(np.float64)
    # The preset's own detection found scan's channels: the output is the same bits as the
    # preset with them written in.
    spec = with_channels(dspk.pipeline_preset("ibl"), sorted(found_dead + found_noisy))
    given = dspk.apply_pipeline(data, RATE, spec, probe=probe).astype(np.float64)
    assert np.array_equal(ours, given)
    err = float(np.abs(ours - theirs).max())
    rms = float(np.sqrt(np.mean(theirs**2)))
    print(f"ibl preset, {shanks} shank(s): max |dspk - destripe| {err:.3e} µV (output RMS {rms:.1f} µV)")
    assert err <= 1e-2, err
    # The k-filter is real: without it the stripe is still there, far from destripe's output.
    spec_no_k = dict(spec, stages=spec["stages"][:-1])
    plain = dspk.apply_pipeline(data, RATE, spec_no_k, probe=probe).astype(np.float64)
    assert float(np.abs(plain - theirs).max()) > 1000 * max(err, 1e-4), rms


def test_the_spatial_highpass_alone_equals_kfilt(rng, runtime):
    """The stage alone on a high-passed-like array, one shank, against ``kfilt`` called as
    ``destripe`` calls it per shank (its ``lagc=3000`` and ``epsilon=None`` defaults), and its
    gain against ``agc``."""
    channels, samples = 24, 4_500
    x = (rng.normal(0, 1, (channels, samples)) * rng.uniform(5, 40, (channels, 1))).astype(np.float32)
    x += (rng.normal(0, 50.0, samples) * (np.arange(samples) % 1500 < 500)).astype(np.float32)
    spec = {"stages": [dspk.pipeline_preset("ibl")["stages"][3]]}
    ours = dspk.apply_pipeline(x, RATE, spec).astype(np.float64)
    theirs = kfilt(x.astype(np.float64), ntr_pad=60, ntr_tap=0, butter_kwargs={"N": 3, "Wn": 0.01, "btype": "highpass"})
    err = float(np.abs(ours - theirs).max())
    rms = float(np.sqrt(np.mean(theirs**2)))
    print(f"spatial_highpass vs kfilt: max |Δ| {err:.3e} µV (output RMS {rms:.1f} µV)")
    # Float32 weights and sums: the gain's (≲ 1e-6 relative) times the normalised values (≲ 5 in
    # the bursts) mixed by weights of Σ|w| ≈ 2, times gains ≲ 60 µV: ≲ 6e-4 µV, the device
    # test's budget against the f64 host (tests/ops/kfilt.rs). Seen: 1.2e-4.
    assert err <= 2e-3, err
    # IBL's gain floor on this array (0.003 × its std) is far below any gain here, as on
    # recorded data: the constant floor changes nothing.
    _, gain = agc(x.astype(np.float64), wl=3000, si=1.0)
    assert gain.min() > 10 * 0.003 * np.std(x)


def np1_with_adcs(channels: int):
    """Neuropixels 1.0's first `channels` channels: IBL's geometry (``neuropixel.trace_header``)
    and its ADC slots (channel pairs sampled in turn, 13 slots a sample: IBL's
    ``sample_shift = ((c // 2) % 12) / 13``)."""
    c = np.arange(channels)
    x = np.array([43.0, 11.0, 59.0, 27.0])[c % 4]
    y = 20.0 * (c // 2 + 1)
    probe = probeinterface.Probe(ndim=2, si_units="um")
    probe.set_contacts(positions=np.stack([x, y], axis=1), shapes="square", shape_params={"width": 12})
    probe.set_device_channel_indices(c)
    probe.annotate(num_adcs=2 * (-(-channels // 24)), num_channels_per_adc=12, adc_cycle_samples=13)
    probe.annotate_contacts(adc_group=(c % 2) + 2 * (c // 24), adc_sample_order=(c // 2) % 12)
    shifts = ((c // 2) % 12) / 13.0
    return probe, {"x": x, "y": y, "shank": np.zeros(channels), "sample_shift": shifts}


def test_ibl_preset_equals_destripe_with_neuropixels_adc_shifts(rng, runtime):
    """NP1.0 ADC shifts: the phase shift runs in both. The signals are band-limited to 7.5 kHz
    (Neuropixels 1.0's AP band ends at its 10 kHz analogue filter), where dspk's 32-tap shift
    is within 2e-9 of an FFT delay (``dspk_ops::shift``). IBL's FFT delay of the whole array is
    circular: the step between the array's last and first values rings in from each end as
    ≲ |step| / (π·distance), which the k-filter's matrix (Σ|w| ≈ 2) passes on; past 1 200
    samples from the ends the two agree to the float32 level plus that ring (printed)."""
    channels, samples = 24, 4_500
    probe, h = np1_with_adcs(channels)
    sos = scipy_signal.butter(8, 7_500.0, btype="low", fs=RATE, output="sos")
    data = raw(rng, channels, samples, dead=[], noisy=[])
    data = scipy_signal.sosfiltfilt(sos, data, axis=1).astype(np.float32)
    theirs = np.asarray(destripe(data.copy(), RATE, h=h, neuropixel_version=None), dtype=np.float64)
    ours = dspk.apply_pipeline(data, RATE, dspk.pipeline_preset("ibl"), probe=probe).astype(np.float64)
    # No bad channel planted and none found (the preset skips its interpolation), and destripe
    # is given no labels: neither interpolates.
    assert dspk_bad_channels(data, probe) == ([], [])
    diff = np.abs(ours - theirs).max(axis=0)
    for distance in (0, 300, 1200):
        away = float(diff[distance : samples - distance].max())
        print(f"ibl preset, NP1 shifts, {distance} samples from the ends: max |Δ| {away:.3e} µV")
    inner = float(diff[1200:-1200].max())
    hp = scipy_signal.sosfiltfilt(scipy_signal.butter(3, 300.0, btype="high", fs=RATE, output="sos"), data.astype(np.float64))
    step = float(np.abs(hp[:, -1] - hp[:, 0]).max())
    assert inner <= 1e-2 + 2 * step / (np.pi * 1200), (inner, step)
    # The shift is real: destripe without it is far from dspk's output.
    no_shift = {k: v for k, v in h.items() if k != "sample_shift"}
    unshifted = np.asarray(destripe(data.copy(), RATE, h=no_shift, neuropixel_version=None), dtype=np.float64)
    assert float(np.abs(ours - unshifted)[:, 1200:-1200].max()) > 100 * max(inner, 1e-3)
