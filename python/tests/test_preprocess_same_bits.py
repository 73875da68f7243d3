"""``dspk preprocess``'s output files are the same bits for any window size (0.5 s, 1 s and
7.3 s windows, none of which divides the recording) and on two devices as on one (two devices
on one adapter: lavapipe has one); with the ``kilosort4`` preset (centring and whitening
fitted, median reference, high-pass, int16) on a small recording with geometry. The figures
are checked to be more than zeros and clipping."""

from __future__ import annotations

import numpy as np

from preprocessed import RATE, preprocess, sidecar_without_provenance, write_probed

CHANNELS = 12


def test_window_sizes_and_two_devices_write_the_same_file(dspk_program, runtime, tmp_path, rng):
    samples = int(rng.integers(8 * RATE, 9 * RATE))  # longer than the 7.3 s window
    recording, probe = write_probed(tmp_path / "data", rng, CHANNELS, samples)
    runs = {}
    for name, window, devices in (
        ("0.5 s", RATE // 2, None),
        ("1 s", RATE, None),
        ("7.3 s", int(7.3 * RATE), None),
        ("1 s on two devices", RATE, "0,0"),
    ):
        out = tmp_path / f"{name.replace(' ', '_')}.bin"
        report = preprocess(dspk_program, runtime, recording, probe, out, "--pipeline", "kilosort4",
                            "--window-samples", str(window), devices=devices)
        assert report["report"]["plan"]["window_samples"] == window, name
        assert len(report["report"]["plan"]["devices"]) == (2 if devices else 1), name
        runs[name] = out
    first = runs["0.5 s"].read_bytes()
    assert len(first) == CHANNELS * samples * 2
    for name, out in runs.items():
        assert out.read_bytes() == first, f"{name} differs from the 0.5 s windows"
        assert sidecar_without_provenance(out) == sidecar_without_provenance(runs["0.5 s"]), name
    values = np.frombuffer(first, dtype="<i2").reshape(samples, CHANNELS)
    # Whitened int16 ×200: unit-variance noise is about 200 counts; nothing clipped wholesale.
    assert 50 < values.std() < 2000, values.std()
    # Clipped at either end (np.abs of int16 −32768 is itself: it never equals 32767).
    assert ((values == 32767) | (values == -32768)).mean() < 1e-3
