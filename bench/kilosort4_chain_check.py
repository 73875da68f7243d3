"""dspk's `kilosort4` preset against Kilosort 4.1.7's own preprocessing functions, run on the
whole recording as one batch (so Kilosort's batch seams do not count). Run where torch and
kilosort are installed (e.g. the H200): `python bench/kilosort4_chain_check.py [cuda|cpu]`.

Kilosort's chain is `BinaryFiltered.filter` (kilosort/io.py) written out line for line (the
class needs a file and the whole package; its steps are four lines) around the functions of
kilosort/preprocessing.py, loaded alone: per-channel mean removal, `torch.median` across
channels, the high-pass `get_highpass_filter` + `fft_highpass` (the impulse response of
scipy's `filtfilt`, butter(3, 300 Hz), applied by circular FFT over the batch), the covariance
`X @ X.T / NT` (`get_whitening_matrix` for one batch: its loop `range(0, n_batches - 1, nskip)`
is empty for a single batch, so its formula is applied directly), `whitening_local(CC, xc, yc,
32)`, then `save_preprocessing`'s `(X * 200).astype("int16")`.

dspk: `dspk.apply_pipeline(data, 30000, dspk.pipeline_preset("kilosort4"), probe=...)` on the
same float32 samples (one recording of 60 000 samples = one Kilosort batch = one fit window of
the preset, so its channel means and covariance are over the whole recording, as Kilosort's).

Expected differences, printed separately:
- the median: the same rule (torch's lower middle value for an even count, dspk's
  `median = "lower"`), so only float32 rounding of the centred values;
- the filter: Kilosort's FFT-applied filtfilt response wraps around the batch (circular), where
  dspk's sosfiltfilt extends each end oddly as scipy does: they differ within a few hundred
  samples of the recording's ends (the filter's impulse response length), and elsewhere by
  float32 FFT rounding (measured separately against scipy in float64);
- the int16 cast: Kilosort truncates toward zero, dspk rounds half to even, so ~half of the
  samples differ by 1;
- whitening: Kilosort's float32 SVD against dspk's f64 Jacobi (float32 level); contacts are
  jittered so no two distances tie at the 32nd neighbour.
- and through the covariance: Kilosort's wrapped ends enter its `X @ X.T`, so its whitening
  matrix differs slightly from dspk's, which moves every sample a little (below 0.1 % of the
  output's RMS), also away from the ends.

Measured on the H200 (2026-12-02; 384 channels × 60 000 samples, torch on CUDA, dspk on wgpu):
median 1.5e-4 counts max (float32); high-pass 1.4e-4 counts max from 1000 samples in, 74 counts
at the ends (the wrap); the whole chain ×200: 1.9 int16 units max, 0.12 rms (of 200) from 1000
samples in, 605 at the ends; int16 outputs differ in 48 % of samples (truncation vs rounding),
by at most 2 from 1000 samples in.
"""

import importlib.util
import json
import sys

import numpy as np
import torch
from scipy.signal import butter, sosfiltfilt

import dspk


def _kilosort_preprocessing():
    """kilosort/preprocessing.py alone (its package's __init__ imports the whole sorter)."""
    spec = importlib.util.find_spec("kilosort")
    path = spec.submodule_search_locations[0] + "/preprocessing.py"
    loader = importlib.util.spec_from_file_location("kilosort_preprocessing", path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module


ks = _kilosort_preprocessing()
device = torch.device(sys.argv[1] if len(sys.argv) > 1 else ("cuda" if torch.cuda.is_available() else "cpu"))
rng = np.random.default_rng(32)
RATE, CHANNELS, SAMPLES, EDGE = 30_000, 384, 60_000, 1_000

# Neuropixels 1.0's checkerboard, each contact jittered by up to 1 µm (no ties).
c = np.arange(CHANNELS)
xc = (np.array([43.0, 11.0, 59.0, 27.0])[c % 4] + rng.uniform(-1, 1, CHANNELS)).astype(np.float32)
yc = (20.0 * (c // 2) + rng.uniform(-1, 1, CHANNELS)).astype(np.float32)
probe = json.dumps({
    "specification": "probeinterface", "version": "0.2.21", "probe_ids": ["0"],
    "probes": [{
        "ndim": 2, "si_units": "um",
        "contact_positions": np.stack([xc, yc], 1).astype(np.float64).tolist(),
        "contact_plane_axes": [[[1.0, 0.0], [0.0, 1.0]]] * CHANNELS,
        "contact_shapes": ["square"] * CHANNELS,
        "contact_shape_params": [{"width": 12.0}] * CHANNELS,
        "device_channel_indices": c.tolist(),
        "contact_ids": [f"e{i}" for i in c],
        "shank_ids": ["0"] * CHANNELS,
        "annotations": {}, "contact_annotations": {},
    }],
})

# Raw-like int16 counts: a DC offset per channel, a shared LFP-like wave and shared spikes,
# spikes seen by ~10 neighbouring channels, white noise.
t = np.arange(SAMPLES) / RATE
common = 300 * np.sin(2 * np.pi * 7 * t) + np.convolve(rng.normal(0, 60, SAMPLES) * (rng.random(SAMPLES) < 0.005), np.hanning(30), "same")
local = np.zeros((CHANNELS, SAMPLES))
for _ in range(400):
    at, centre = rng.integers(100, SAMPLES - 100), rng.integers(CHANNELS)
    amp = rng.uniform(50, 300) * np.exp(-((c - centre) / 4.0) ** 2)
    local[:, at : at + 40] -= amp[:, None] * np.hanning(40)
raw = rng.uniform(-800, 800, (CHANNELS, 1)) + common + local + rng.normal(0, 25, (CHANNELS, SAMPLES))
data = np.clip(np.round(raw), -32768, 32767).astype(np.float32)

# Kilosort, one batch.
X = torch.from_numpy(data).to(device).float()
X = X - X.mean(1).unsqueeze(1)
X = X - torch.median(X, 0)[0]
car = X.cpu().numpy().astype(np.float64)
fwav = ks.fft_highpass(ks.get_highpass_filter(fs=RATE, cutoff=300, device=device), NT=X.shape[1])
X = torch.real(torch.fft.ifft(torch.fft.fft(X) * torch.conj(fwav)))
X = torch.fft.fftshift(X, dim=-1)
filtered = X.cpu().numpy().astype(np.float64)
CC = (X @ X.T) / X.shape[1]
Wrot = ks.whitening_local(CC, xc, yc, nrange=32, device=device)
ks_float = (200 * (Wrot @ X)).cpu().numpy().astype(np.float64)
ks_int16 = (ks_float.astype(np.float32)).astype("int16")

# dspk: the preset, and the preset with its int16 cast replaced by a float32 gain of 200.
spec = dspk.pipeline_preset("kilosort4")
floats = dict(spec, stages=spec["stages"][:-1] + [{"kind": "scale", "gain": 200.0}])
ours_float = dspk.apply_pipeline(data, RATE, floats, probe=probe).astype(np.float64)
ours_int16 = dspk.apply_pipeline(data, RATE, spec, probe=probe)


def report(name, a, b, unit):
    d = np.abs(a - b)
    inner = d[:, EDGE:-EDGE]
    rms = float(np.sqrt(np.mean(b**2)))
    print(f"{name}: max |Δ| {d.max():.3e} {unit}, rms {np.sqrt(np.mean(d**2)):.3e}; "
          f"{EDGE} samples in from the ends: max {inner.max():.3e}, rms {np.sqrt(np.mean(inner**2)):.3e} "
          f"(signal rms {rms:.3g})")


print(f"{CHANNELS} channels × {SAMPLES} samples at {RATE} Hz, torch on {device}, one Kilosort batch")
# The pieces, to explain the whole.
x = data.astype(np.float64)
x = x - x.mean(1, keepdims=True)
ref_car = x - np.sort(x, 0)[(CHANNELS - 1) // 2]
report("median reference: torch (float32) vs lower median in float64", car, ref_car, "counts")
sos = butter(3, 300, btype="high", fs=RATE, output="sos")
report("high-pass: Kilosort's FFT filtfilt response vs scipy sosfiltfilt (float64) of the same input",
       filtered, sosfiltfilt(sos, car, axis=1), "counts")
# The whole chain.
report("kilosort4 preset (float, ×200) vs Kilosort's chain (float, ×200)", ours_float, ks_float, "int16 units")
diff = np.abs(ours_int16.astype(np.int64) - ks_int16.astype(np.int64))
print(f"int16: {int((diff > 0).sum())} of {diff.size} samples differ ({(diff > 0).mean():.1%}), max {diff.max()}; "
      f"{EDGE} in from the ends: max {diff[:, EDGE:-EDGE].max()} (Kilosort truncates, dspk rounds)")
