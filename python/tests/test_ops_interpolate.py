"""Device bad-channel interpolation (``dspk.apply_pipeline``) against SpikeInterface's
``interpolate_bad_channels`` on the same float32 traces and probe: its default σ (the most
common step between contact heights), a given σ, bad channels at the ends and side by side."""

from __future__ import annotations

import numpy as np
import pytest

from test_ops_reference import EPS32, apply, np_probe, si_recording, traces

si = pytest.importorskip("spikeinterface")
from spikeinterface.preprocessing import interpolate_bad_channels  # noqa: E402


@pytest.mark.parametrize(
    ("channels", "shanks", "sigma_um"),
    [(32, 1, None), (33, 1, 20.0), (48, 2, None), (40, 1, 37.5)],
)
def test_interpolation_equals_spikeinterface(rng, runtime, channels, shanks, sigma_um):
    data = traces(rng, channels)
    probe = np_probe(channels, shanks)
    rec = si_recording(data, probe)
    bad = sorted({0, channels - 1, 5, 6, int(rng.integers(7, channels - 1))})
    kwargs = {} if sigma_um is None else {"sigma_um": sigma_um}
    want = interpolate_bad_channels(rec, bad_channel_ids=rec.channel_ids[bad], **kwargs).get_traces().T
    stage = {"kind": "interpolate_bad", "channels": bad}
    if sigma_um is not None:
        stage["sigma_um"] = sigma_um
    got = apply(data, stage, probe)
    good = np.setdiff1d(np.arange(channels), bad)
    assert np.array_equal(got[good], data[good]), "good channels are copied bit for bit"
    err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
    # f32 weights and an f32 sum of up to `channels` products against SpikeInterface's f64.
    tol = (channels + 2.0) * EPS32 * float(np.max(np.abs(data)))
    print(f"max |dspk - SpikeInterface| {err:.3e} (tolerance {tol:.3e})")
    assert err <= tol, (err, tol)
    assert np.max(np.abs(got[bad])) > 0, "the bad channels were interpolated, not zeroed"
