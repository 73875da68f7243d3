"""Segments and joined files from Python: ``dspk.concat`` of SpikeGLX trigger files placed by
``firstSample`` (contiguous files one segment, a gap a new one or zeros, a missing middle file
and a rate mismatch refused), reads equal to each file's own, and ``DspkRecording`` giving
SpikeInterface one segment per dspk segment."""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest

import dspk
from recordings import write_spikeglx


def run(tmp_path, rng, layout, rates=None):
    """Trigger files ``_t0…`` of one run: ``layout`` is [(samples, first_sample)]; every file
    shares the first's gains (its ``.meta`` is the first's with ``firstSample``, sizes and rate
    changed). Returns the ``.bin`` paths and each file's int16 frames."""
    base = write_spikeglx(tmp_path, rng, layout[0][0])
    meta = base.meta.read_text()
    paths, frames = [], []
    for t, (samples, first) in enumerate(layout):
        data = base.frames if t == 0 else rng.integers(-2000, 2000, size=(samples, 385), dtype=np.int16)
        bin_path = tmp_path / f"run_g0_t{t}.imec0.ap.bin"
        bin_path.write_bytes(data.astype("<i2").tobytes())
        text = re.sub(r"firstSample=\d+", f"firstSample={first}", meta)
        text = re.sub(r"fileSizeBytes=\d+", f"fileSizeBytes={data.nbytes}", text)
        if rates is not None:
            text = re.sub(r"imSampRate=\S+", f"imSampRate={rates[t]}", text)
        bin_path.with_suffix(".meta").write_text(text)
        paths.append(bin_path)
        frames.append(data)
    return paths, frames


def test_contiguous_files_are_one_segment_and_read_as_the_files(tmp_path, rng):
    paths, frames = run(tmp_path, rng, [(3000, 500), (2000, 3500), (1000, 5500)])
    rec = dspk.concat(list(reversed(paths)))
    assert rec.samples == 6000 and len(rec.segments) == 1
    assert rec.files[0] == paths[0]
    assert rec.segments[0][2] == 500 and rec.start_time == Fraction(500, 30000)
    whole = np.concatenate([dspk.open(p).read() for p in paths], axis=1)
    np.testing.assert_array_equal(rec.read(), whole)
    np.testing.assert_array_equal(rec.read_stored(start=2500, stop=5200), np.concatenate(frames)[2500:5200].T)


def test_a_gap_is_a_segment_or_zeros_and_spikeinterface_sees_the_segments(tmp_path, rng):
    from dspk.spikeinterface import DspkRecording  # noqa: F401 (needs SpikeInterface)

    paths, frames = run(tmp_path, rng, [(3000, 0), (2000, 3000), (1500, 9000)])
    rec = dspk.concat(paths)
    assert [(a, n, f) for a, n, f, _ in rec.segments] == [(0, 5000, 0), (5000, 1500, 9000)]
    assert rec.segments[1][3] == Fraction(9000, 30000)
    with pytest.raises(dspk.InvalidInputError, match="crosses the end of segment 0"):
        rec.read(start=4990, stop=5010)
    np.testing.assert_array_equal(rec.read(start=5000), dspk.open(paths[2]).read())
    filled = dspk.concat(paths, zero_fill_gaps=True)
    assert filled.samples == 9000 + 1500 and len(filled.segments) == 1
    stored = filled.read_stored()
    assert not stored[:, 5000:9000].any()
    np.testing.assert_array_equal(stored[:, 9000:], frames[2].T)


def test_spikeinterface_gets_a_segment_per_dspk_segment(tmp_path, rng):
    from dspk.spikeinterface import DspkRecording

    paths, frames = run(tmp_path, rng, [(3000, 0), (1500, 6000)])
    # DspkRecording opens one file; a joined recording reaches SpikeInterface as a raw copy.
    out = tmp_path / "joined.bin"
    dspk.convert(dspk.concat(paths), out)
    si = DspkRecording(out)
    assert si.get_num_segments() == 2
    assert [si.get_num_samples(segment_index=k) for k in range(2)] == [3000, 1500]
    for k in range(2):
        want = dspk.open(paths[k]).read()  # the copy is raw: every channel, sync too
        np.testing.assert_allclose(si.get_traces(segment_index=k, return_in_uV=True), want.T, rtol=1e-6)
    assert si.get_times(segment_index=1)[0] == pytest.approx(6000 / 30000)


def test_a_missing_middle_file_and_a_rate_mismatch_are_refused(tmp_path, rng):
    paths, _ = run(tmp_path, rng, [(3000, 0), (3000, 3000), (3000, 6000)], rates=["30000", "30002.826", "30002.826"])
    with pytest.raises(dspk.DspkError, match=r"\+94\.2 ppm, 339\.1 ms per hour"):
        dspk.concat(paths[:2])
    rec = dspk.concat(paths[:2], rate_tolerance_ppm=100)
    assert any("339.1 ms per hour" in w for w in rec.warnings)
    with pytest.raises(dspk.DspkError, match="run_g0_t1.imec0.ap.bin.*not _t1"):
        dspk.concat([paths[0], paths[2]], rate_tolerance_ppm=100)
    with pytest.raises(dspk.RecordingNotFoundError):
        dspk.concat([paths[0], tmp_path / "nothing.bin"])
    with pytest.raises(ValueError, match="rate_tolerance_ppm"):
        dspk.concat(paths, rate_tolerance_ppm=-1)
