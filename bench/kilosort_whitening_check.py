"""Kilosort4's local whitening against dspk's, on the same covariance (run where torch and
kilosort are installed, e.g. the H200: `python bench/kilosort_whitening_check.py [cuda|cpu]`).

`kilosort.preprocessing.whitening_local(CC, xc, yc, nrange)` takes each channel's `nrange`
nearest contacts by `np.argsort` of squared distances and keeps the centre's row of
`E·diag(1/√(D+1e-6))·Eᵀ` (a float32 SVD); `dspk.whitening_matrix(cov, positions, "local",
neighbours=nrange, epsilon=1e-6)` does the same in float64 with ties broken by channel index.
Two geometries: jittered contacts (no ties: every row must agree to float32 rounding) and
Neuropixels 1.0's checkerboard (ties at the nrange-th distance are NumPy's choice in Kilosort:
rows whose neighbour sets differ are counted and reported, the others compared).
Also `whitening_from_covariance` (global) against `scope="global"`.
"""

import importlib.util
import sys

import numpy as np
import torch

import dspk


def _kilosort_preprocessing():
    """kilosort/preprocessing.py alone (its package's __init__ imports the whole sorter, with
    faiss, scikit-learn and matplotlib; this module needs torch, NumPy and scipy only)."""
    spec = importlib.util.find_spec("kilosort")
    path = spec.submodule_search_locations[0] + "/preprocessing.py"
    loader = importlib.util.spec_from_file_location("kilosort_preprocessing", path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module


_ks = _kilosort_preprocessing()
whitening_from_covariance, whitening_local = _ks.whitening_from_covariance, _ks.whitening_local

device = torch.device(sys.argv[1] if len(sys.argv) > 1 else ("cuda" if torch.cuda.is_available() else "cpu"))
rng = np.random.default_rng(31)
channels, samples, nrange = 384, 60_000, 32


def covariance() -> torch.Tensor:
    """Kilosort's covariance of correlated float32 data: X @ X.T / n on the device."""
    sources = rng.normal(0, 30, size=(12, samples))
    mix = rng.uniform(0, 1, size=(channels, 12)) / (1 + np.abs(np.arange(channels)[:, None] % 12 - np.arange(12)))
    x = (mix @ sources + rng.normal(0, 10, size=(channels, samples))).astype(np.float32)
    x = torch.from_numpy(x).to(device)
    return (x @ x.T) / x.shape[1]


def compare(name: str, xc: np.ndarray, yc: np.ndarray, cc: torch.Tensor) -> None:
    ks = whitening_local(cc, xc, yc, nrange=nrange, device=device).cpu().numpy().astype(np.float64)
    cov = cc.cpu().numpy().astype(np.float64)
    ours = dspk.whitening_matrix(cov, np.stack([xc, yc], 1).astype(np.float64), scope="local",
                                 neighbours=nrange, epsilon=1e-6)
    same = [c for c in range(channels) if np.array_equal(ks[c] != 0, ours[c] != 0)]
    scale = np.abs(ks).max()
    err = max(np.abs(ks[c] - ours[c]).max() for c in same) / scale if same else float("nan")
    print(f"{name}: {len(same)}/{channels} rows with the same neighbours, worst |Δ| / max|W| = {err:.2e}"
          f" (max|W| {scale:.4g}); rows differing in neighbours (ties at the {nrange}th distance): "
          f"{channels - len(same)}")


cc = covariance()
# Jittered positions: no two distances equal.
xc = rng.uniform(0, 60, channels).astype(np.float32)
yc = (np.arange(channels) * 10 + rng.uniform(-2, 2, channels)).astype(np.float32)
compare("jittered", xc, yc, cc)
# Neuropixels 1.0: x 43, 11, 59, 27 µm, two contacts per 20 µm row.
xc = np.tile(np.array([43, 11, 59, 27], dtype=np.float32), channels // 4)
yc = (20 * (np.arange(channels) // 2)).astype(np.float32)
compare("np1", xc, yc, cc)

ks = whitening_from_covariance(cc).cpu().numpy().astype(np.float64)
ours = dspk.whitening_matrix(cc.cpu().numpy().astype(np.float64), scope="global", epsilon=1e-6)
print(f"global: worst |Δ| / max|W| = {np.abs(ks - ours).max() / np.abs(ks).max():.2e}")

# Kilosort's high-pass: the impulse response of scipy's filtfilt (order-3 Butterworth, 300 Hz, as
# b, a) over 30122 samples, against dspk's order-3 high-pass sections run zero-phase on the
# device over the same impulse (one channel), and against dspk's f64 host sosfiltfilt.
hp = _ks.get_highpass_filter(fs=30000, cutoff=300, device=device).cpu().numpy().astype(np.float64)
impulse = np.zeros((1, 30122), dtype=np.float32)
impulse[0, 30122 // 2] = 1.0
spec = {"stages": [{"kind": "filter", "band": "highpass", "cutoff_hz": [300.0], "order": 3}]}
on_device = dspk.apply_pipeline(impulse, 30000.0, spec)[0].astype(np.float64)
sos = dspk.butter_sos(3, [300.0], "highpass", 30000.0)
host = dspk._dspk._check_sosfiltfilt_f64(sos, impulse[0].astype(np.float64))
print(f"get_highpass_filter vs dspk device filter: max |Δ| = {np.abs(hp - on_device).max():.2e} "
      f"(peak {np.abs(hp).max():.4f}); vs dspk f64 host sosfiltfilt: {np.abs(hp - host).max():.2e}")
