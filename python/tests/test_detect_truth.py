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
