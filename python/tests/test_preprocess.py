"""``dspk.preprocess`` and ``dspk.spikeinterface.preprocess``: a recording to a sorter-ready
file on the device, the same bits for any window size, equal to the pipeline run on the array
(``dspk.apply_pipeline``, itself held to SpikeInterface in test_presets.py), with its probe and
its provenance, and the fitted parameters of one run applied unchanged by the next.

Recordings are small (CI runs on lavapipe, at its time limit)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dspk

si = pytest.importorskip("spikeinterface")
probeinterface = pytest.importorskip("probeinterface")
import dspk.spikeinterface as dsi  # noqa: E402
from spikeinterface.core import NumpyRecording  # noqa: E402

RATE = 30_000.0


def probe_of(channels: int):
    """Two columns of contacts 20 µm apart, wired in order."""
    c = np.arange(channels)
    probe = probeinterface.Probe(ndim=2, si_units="um")
    probe.set_contacts(
        positions=np.stack([16.0 + 32.0 * (c % 2), 20.0 * (c // 2)], axis=1),
        shapes="square",
        shape_params={"width": 12},
    )
    probe.set_device_channel_indices(c)
    return probe


def recording(rng, channels: int = 12, samples: int = 45_000):
    """A SpikeInterface recording in µV (gain 1) with DC offsets, a shared slow wave and noise,
    and the array it holds (channels × samples, float32)."""
    t = np.arange(samples) / RATE
    data = (
        rng.uniform(-300, 300, (channels, 1))
        + 80.0 * np.sin(2 * np.pi * 7.0 * t)
        + rng.normal(0, 15.0, (channels, samples))
    ).astype(np.float32)
    rec = NumpyRecording(np.ascontiguousarray(data.T), sampling_frequency=RATE)
    rec.set_channel_gains(1.0)
    rec.set_channel_offsets(0.0)
    rec.set_probe(probe_of(channels))
    return rec, data


def test_the_output_is_the_same_bits_for_any_window_and_equals_the_pipeline(rng, runtime, tmp_path):
    rec, data = recording(rng)
    outs = []
    for window in (15_000, 30_000, 21_900):
        out = tmp_path / f"w{window}.bin"
        got = dsi.preprocess(rec, out, pipeline="spikeinterface", window_samples=window, runtime=runtime)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] == outs[2]
    # The SpikeInterface recording of the output: binary, probe attached, filtered.
    assert got.is_binary_compatible()
    assert got.get_annotation("is_filtered")
    assert got.has_probe()
    np.testing.assert_array_equal(got.get_channel_locations(), rec.get_channel_locations())
    expected = dspk.apply_pipeline(
        data, RATE, dspk.pipeline_preset("spikeinterface"), probe=probe_of(12), runtime=runtime
    )
    traces = got.get_traces(return_in_uV=True).T
    np.testing.assert_array_equal(traces, expected)
    assert np.abs(expected).max() > 1.0


def test_int16_output_with_a_gain_reads_back_in_microvolts(rng, runtime, tmp_path):
    rec, data = recording(rng, channels=6, samples=20_000)
    out = tmp_path / "i16.bin"
    back = dspk.preprocess(
        dspk.from_spikeinterface(rec), out, pipeline="spikeinterface", format="int16", gain=4.0,
        runtime=runtime,
    )
    assert back.dtype == np.int16
    stored = np.fromfile(out, dtype=np.int16).reshape(-1, 6).T
    expected = dspk.apply_pipeline(
        data, RATE, dspk.pipeline_preset("spikeinterface"), probe=probe_of(6), runtime=runtime
    )
    np.testing.assert_array_equal(stored, np.clip(np.rint(expected.astype(np.float64) * 4.0), -32768, 32767))
    np.testing.assert_allclose(back.read(None, 0, 20_000), stored / 4.0, rtol=0, atol=1e-6)


def test_provenance_and_fits_make_the_same_output_again(rng, runtime, tmp_path):
    rec, _ = recording(rng, channels=10, samples=30_000)
    spec = dspk.pipeline_preset("kilosort4")
    for stage in spec["stages"]:
        if "fit" in stage:  # the recording is short: fit on three 0.2 s windows
            stage["fit"] = {"windows": 3, "window_samples": 6000, "seed": 7}
        if stage["kind"] == "whiten":
            stage["neighbours"] = 6
    first = tmp_path / "first.bin"
    dspk.preprocess(dspk.from_spikeinterface(rec), first, pipeline=spec, runtime=runtime)
    sidecar = json.loads((tmp_path / "first.bin.json").read_text())
    provenance = sidecar["provenance"]
    report = provenance["report"]
    assert report["pipeline"]["stages"] == spec["stages"]
    assert [f["kind"] for f in report["fitted"]] == ["center", "whiten"]
    assert all(f["source"] == "fitted" for f in report["fitted"])
    assert [s["kind"] for s in report["stage_times"]] == [s["kind"] for s in spec["stages"]]
    assert report["plan"]["output"] == "int16" and report["plan"]["gain"] == 200.0
    assert set(provenance["fits"]) == {"centers", "whitening"}
    assert sidecar["probe"] is not None
    # The fits of the first run, given to a second with other windows: the same bytes.
    again = tmp_path / "again.bin"
    dspk.preprocess(
        dspk.from_spikeinterface(rec), again, pipeline=spec, fits=tmp_path / "first.bin.json",
        window_samples=7_000, runtime=runtime,
    )
    assert again.read_bytes() == first.read_bytes()
    report = json.loads((tmp_path / "again.bin.json").read_text())["provenance"]["report"]
    assert all(f["source"] == "given" for f in report["fitted"])


def test_a_dry_run_plans_and_writes_nothing(rng, runtime, tmp_path):
    rec, _ = recording(rng, channels=4, samples=10_000)
    plan = dspk.preprocess(
        dspk.from_spikeinterface(rec), tmp_path / "p.bin", pipeline="spikeinterface", dry_run=True,
        runtime=runtime,
    )
    assert [s["kind"] for s in plan["stages"]] == ["filter", "phase_shift", "common_reference"]
    assert plan["halo_before"] > 0 and plan["windows"] >= 1 and plan["channels"] == 4
    assert plan["output_bytes"] == 4 * 10_000 * 4
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(dspk.InvalidInputError, match="kilosort9"):
        dspk.preprocess(dspk.from_spikeinterface(rec), tmp_path / "p.bin", pipeline="kilosort9")
    assert list(tmp_path.iterdir()) == []
