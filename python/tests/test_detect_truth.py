"""``dspk.detect`` on the synthetic recording reports its peaks scored against the spikes it
planted (``report["truth"]``), the same scoring ``dspk detect`` prints.

The recording: 16 channels × 1 s of the default model (seeded), channel 3 dead, 5 spikes/s
(bins of 6000 samples): 5 spikes on each of 15 live channels, each wholly inside, 75 planted.
Without a pipeline a spike's raw trough is its depth (50–150 µV) against a threshold of about
5 × 10.5 µV: half of them are 4.5σ past it and most of the rest are found too (recall above
0.75), and noise alone crosses 5σ about once in 3·10⁶ samples (precision above 0.95: at most
3 false of ~70)."""

from __future__ import annotations

import numpy as np
import pytest

import dspk


def test_detect_on_the_synthetic_recording_scores_the_planted_spikes(runtime, record_property):
    seed = int(np.random.SeedSequence().entropy % 2**63)
    print(f"seed {seed}")
    rec = dspk.synthetic(samples=30_000, channels=16, seed=seed)
    peaks, report = dspk.detect(rec, runtime=runtime, return_report=True)
    t = report["truth"]
    record_property("truth", t)
    assert t["planted"] == 75, (seed, t)
    assert t["peaks"] == len(peaks) == report["peaks"], (seed, t)
    assert t["found"] + t["false_positives"] == t["peaks"], (seed, t)
    assert t["recall"] == t["found"] / 75, (seed, t)
    assert t["precision"] == t["found"] / t["peaks"], (seed, t)
    assert (t["tolerance_ms"], t["tolerance_samples"]) == (0.4, 12), (seed, t)
    assert t["recall"] > 0.75 and t["precision"] > 0.95, (seed, t)
    # The dead channel planted nothing and has no peaks.
    assert not np.any(peaks["channel_index"] == 3), (seed, t)


def test_a_files_detection_has_no_ground_truth(runtime, tmp_path):
    rng = np.random.default_rng(7)
    raw = tmp_path / "noise.bin"
    rng.normal(0, 50, size=(6000, 2)).astype(np.int16).tofile(raw)
    (tmp_path / "noise.bin.json").write_text(
        '{"sample_rate": 30000, "channel_count": 2, "format": "int16", "order": "time-major"}'
    )
    _, report = dspk.detect(dspk.open(raw), runtime=runtime, return_report=True)
    assert "truth" not in report


def _waveform_trough(rate: float = 30_000.0) -> int:
    """The documented 2 ms waveform's trough sample, recomputed: a trough 0.6 ms in and a
    repolarisation 1.1 ms in."""
    ms = np.arange(round(0.002 * rate)) * 1000.0 / rate
    w = -np.exp(-(((ms - 0.6) / 0.15) ** 2)) + 0.35 * np.exp(-(((ms - 1.1) / 0.3) ** 2))
    return int(np.argmin(w))


def test_synthetic_truth_lists_the_spikes_the_values_hold(runtime):
    seed = int(np.random.SeedSequence().entropy % 2**63)
    print(f"seed {seed}")
    rec = dspk.synthetic(samples=30_000, channels=16, seed=seed)
    truth = dspk.synthetic_truth(rec)
    assert truth.dtype == np.dtype(dspk.TRUTH_DTYPE)
    assert len(truth) == 75, seed
    assert not np.any(truth["channel_index"] == 3)
    # One spike per 6000-sample bin (5 spikes/s) on each live channel, wholly inside it.
    for c in set(range(16)) - {3}:
        mine = truth[truth["channel_index"] == c]
        assert sorted(mine["start_index"] // 6000) == [0, 1, 2, 3, 4], (seed, c)
        assert np.all(mine["start_index"] % 6000 + 60 <= 6000), (seed, c)
    assert np.all(truth["sample_index"] - truth["start_index"] == _waveform_trough())
    assert np.allclose(truth["depth_uv"], truth["depth_counts"] * 0.195)
    assert np.all((truth["depth_uv"] >= 49.9) & (truth["depth_uv"] <= 150.1))
    order = np.lexsort((truth["channel_index"], truth["sample_index"]))
    assert np.array_equal(order, np.arange(len(truth)))
    # At its trough a channel holds minus the depth plus noise (10 µV RMS) and two 3 µV sines.
    data = rec.read()
    values = data[truth["channel_index"], truth["sample_index"]]
    assert np.all(np.abs(values + truth["depth_uv"]) < 66.0), (seed, values + truth["depth_uv"])
    # A range lists the whole's spikes overlapping it, a cut spike included.
    part = dspk.synthetic_truth(rec, 1_000, 7_000)
    overlap = (truth["start_index"] < 7_000) & (truth["start_index"] + 60 > 1_000)
    assert np.array_equal(part, truth[overlap])

    # The report's score equals pairing by hand: spikes of one channel are bins apart, so a
    # spike is found when any peak of its channel lies within 12 samples of its trough.
    peaks, report = dspk.detect(rec, runtime=runtime, return_report=True)
    found = sum(
        np.any(
            (peaks["channel_index"] == s["channel_index"])
            & (np.abs(peaks["sample_index"] - s["sample_index"]) <= 12)
        )
        for s in truth
    )
    assert report["truth"]["found"] == found, (seed, report["truth"])


def test_only_the_synthetic_recording_has_a_ground_truth(tmp_path):
    raw = tmp_path / "noise.bin"
    np.zeros((100, 2), dtype=np.int16).tofile(raw)
    (tmp_path / "noise.bin.json").write_text(
        '{"sample_rate": 30000, "channel_count": 2, "format": "int16", "order": "time-major"}'
    )
    with pytest.raises(ValueError, match="not the built-in synthetic recording"):
        dspk.synthetic_truth(dspk.open(raw))
    with pytest.raises(ValueError):
        dspk.synthetic_truth(dspk.synthetic(samples=100, channels=2), 50, 101)
