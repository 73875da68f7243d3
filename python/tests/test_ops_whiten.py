"""Whitening matrices against SpikeInterface's ``compute_whitening_matrix`` (global and local by
radius) on the same covariance, and the ZCA laws. Kilosort4's ``whitening_local`` needs torch,
too heavy for CI: ``bench/kilosort_whitening_check.py`` compares it on the GPU machine."""

from __future__ import annotations

import numpy as np
import pytest

import dspk

si = pytest.importorskip("spikeinterface")
from spikeinterface.core import NumpyRecording  # noqa: E402
from spikeinterface.preprocessing.whiten import (  # noqa: E402
    compute_covariance_matrix,
    compute_whitening_matrix,
)


def np_positions(channels: int) -> np.ndarray:
    """A two-column probe: columns 32 µm apart, rows 20 µm apart (NP-like)."""
    c = np.arange(channels)
    return np.stack([np.where(c % 2 == 0, 0.0, 32.0), (c // 2) * 20.0], axis=1)


def correlated(rng, channels: int, samples: int) -> np.ndarray:
    """(samples, channels) float32: own noise plus shared sources, neighbours sharing more."""
    sources = rng.normal(0, 30, size=(samples, 6))
    mix = rng.uniform(0, 1, size=(6, channels)) / (1 + np.abs(np.arange(6)[:, None] - np.arange(channels) % 6))
    return (sources @ mix + rng.normal(0, 10, size=(samples, channels))).astype(np.float32)


def si_recording(traces: np.ndarray) -> NumpyRecording:
    rec = NumpyRecording(traces, sampling_frequency=30_000.0)
    rec.set_dummy_probe_from_locations(np_positions(traces.shape[1]))
    return rec


# One chunk that is the whole recording: SpikeInterface's random choice cannot move it.
def chunk_kwargs(samples: int) -> dict:
    return dict(num_chunks_per_segment=1, chunk_size=samples, seed=0)


def relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.mark.parametrize("channels", [16, 40])
def test_global_equals_spikeinterface(rng, channels):
    samples = 6000
    rec = si_recording(correlated(rng, channels, samples))
    eps = 1e-8
    w_si, _ = compute_whitening_matrix(rec, "global", chunk_kwargs(samples), apply_mean=False, eps=eps)
    _, cov, _ = compute_covariance_matrix(rec, False, False, None, chunk_kwargs(samples))
    w = dspk.whitening_matrix(cov.astype(np.float64), epsilon=eps)
    assert w.shape == (channels, channels)
    # SpikeInterface computes `traces @ W` in float32; ours is `W @ x` in float64: W is symmetric.
    print(f"relative difference from SpikeInterface: {relative(w, w_si.T):.2e}")
    assert relative(w, w_si.T) < 1e-5, relative(w, w_si.T)
    c = cov.astype(np.float64)
    np.testing.assert_allclose(w @ c @ w.T, np.eye(channels), atol=1e-8)


@pytest.mark.parametrize("radius_um", [25.0, 45.0, 100.0])
def test_local_radius_equals_spikeinterface(rng, radius_um):
    channels, samples = 32, 6000
    rec = si_recording(correlated(rng, channels, samples))
    eps = 1e-6
    w_si, _ = compute_whitening_matrix(
        rec, "local", chunk_kwargs(samples), apply_mean=False, radius_um=radius_um, eps=eps
    )
    _, cov, _ = compute_covariance_matrix(rec, False, False, None, chunk_kwargs(samples))
    w = dspk.whitening_matrix(
        cov.astype(np.float64), np_positions(channels), scope="local", radius_um=radius_um, epsilon=eps
    )
    # SpikeInterface writes each channel's row as a column (`traces @ W`): ours is its transpose.
    assert np.array_equal(w != 0, w_si.T != 0)
    print(f"relative difference from SpikeInterface: {relative(w, w_si.T):.2e}")
    assert relative(w, w_si.T) < 1e-5, relative(w, w_si.T)


def test_local_neighbours_keep_the_nearest(rng):
    channels = 24
    c = np.cov(correlated(rng, channels, 4000).T.astype(np.float64), bias=True)
    pos = np_positions(channels)
    w = dspk.whitening_matrix(c, pos, scope="local", neighbours=5, epsilon=1e-6)
    d = np.linalg.norm(pos[:, None] - pos[None], axis=2)
    for ch in range(channels):
        nz = set(np.flatnonzero(w[ch]))
        assert ch in nz and len(nz) == 5
        # Every kept contact is at least as near as every dropped one.
        kept = max(d[ch, j] for j in nz)
        assert all(d[ch, j] >= kept for j in set(range(channels)) - nz)
    # With every channel in reach, local is global.
    everyone = dspk.whitening_matrix(c, pos, scope="local", neighbours=channels, epsilon=1e-6)
    np.testing.assert_allclose(everyone, dspk.whitening_matrix(c, epsilon=1e-6), rtol=0, atol=1e-12)


def test_bad_arguments_raise_value_errors():
    c = np.eye(3)
    with pytest.raises(ValueError, match="square"):
        dspk.whitening_matrix(np.ones((2, 3)))
    with pytest.raises(ValueError, match="scope"):
        dspk.whitening_matrix(c, scope="nearby")
    with pytest.raises(ValueError, match="probe"):
        dspk.whitening_matrix(c, scope="local", neighbours=2)
    with pytest.raises(ValueError, match="exactly one"):
        dspk.whitening_matrix(c, np_positions(3), scope="local")
