"""Recording.windows: halo windows that tile the recording exactly, with halos equal to reads
of the same samples, event remapping, early stops."""

from __future__ import annotations

import numpy as np
import pytest

import dspk
from recordings import write_binary


@pytest.mark.parametrize("halo", [0, 7, (3, 11)])
def test_windows_tile_the_recording_with_halos(tmp_path, rng, halo):
    b = write_binary(tmp_path / "w.bin", rng, channels=5, samples=int(rng.integers(3000, 6000)))
    rec = dspk.open(b.path)
    full = rec.read()
    batch = int(rng.integers(100, 900))
    left, right = (halo, halo) if isinstance(halo, int) else halo
    windows = rec.windows(batch, halo)
    assert len(windows) == -(-rec.samples // batch)
    owned, seen = [], 0
    for i, w in enumerate(windows):
        assert w.index == i
        assert w.owned.start == seen and w.owned.stop == min(seen + batch, rec.samples)
        assert w.samples.start == max(0, w.owned.start - left)
        assert w.samples.stop == min(rec.samples, w.owned.stop + right)
        assert w.start == w.samples.start
        assert w.data.shape == (5, len(w.samples)) and w.data.dtype == np.float32
        np.testing.assert_array_equal(w.data, full[:, w.samples.start : w.samples.stop])
        assert w.data[:, w.valid].shape[1] == len(w.owned)
        np.testing.assert_array_equal(w.owned_data, full[:, w.owned.start : w.owned.stop])
        owned.append(w.owned_data)
        seen = w.owned.stop
    assert seen == rec.samples
    np.testing.assert_array_equal(np.concatenate(owned, axis=1), full)


def test_every_nth_window_and_a_channel_subset(tmp_path, rng):
    b = write_binary(tmp_path / "w.bin", rng, channels=6, samples=5000)
    rec = dspk.open(b.path)
    full = rec.read([4, 1])
    got = list(rec.windows(400, 10, channels=[4, 1], every=3))
    assert [w.index for w in got] == list(range(0, 13, 3))
    for w in got:
        np.testing.assert_array_equal(w.data, full[:, w.samples.start : w.samples.stop])


def test_events_are_remapped_once(tmp_path, rng):
    b = write_binary(tmp_path / "w.bin", rng, channels=2, samples=2000)
    rec = dspk.open(b.path)
    events = np.sort(rng.choice(2000, size=50, replace=False))
    found = []
    for w in rec.windows(300, 25):
        local = events[(events >= w.samples.start) & (events < w.samples.stop)] - w.start
        found.extend(w.remap_events(local).tolist())
        for l in local:
            g = w.remap(int(l))
            assert g == (w.start + l if w.owned.start <= w.start + l < w.owned.stop else None)
        assert w.remap(-1) is None and w.remap(10**6) is None
    assert found == events.tolist()


def test_breaking_early_and_closing(tmp_path, rng):
    b = write_binary(tmp_path / "w.bin", rng, channels=3, samples=10_000)
    rec = dspk.open(b.path)
    it = rec.windows(100)
    first = next(it)
    assert first.index == 0
    it.close()
    assert list(it) == []
    for w in rec.windows(100, 5):
        if w.index == 2:
            break
    # A new iterator starts from the first window.
    assert next(iter(rec.windows(100))).index == 0


def test_bad_window_arguments(binary):
    rec = dspk.open(binary.path)
    with pytest.raises(dspk.InvalidInputError, match="batch must be at least 1"):
        rec.windows(0)
    with pytest.raises(dspk.InvalidInputError, match="halo must be at least 0"):
        rec.windows(10, -1)
    with pytest.raises(dspk.InvalidInputError, match="every must be at least 1"):
        rec.windows(10, every=0)
    with pytest.raises(dspk.InvalidInputError, match="channel 99 does not exist"):
        rec.windows(10, channels=[99])
    with pytest.raises(dspk.InvalidInputError, match="batch must be a whole number, not float"):
        rec.windows(1.5)
