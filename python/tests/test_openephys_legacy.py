"""A real recording of the Open Ephys GUI 0.6.7 (16 channels, 40 kHz, a File Reader playing the
GUI's example data), shipped in PyPI's ``open-ephys-python-tools`` 1.0.1 source distribution in
the legacy format (``.continuous`` files) and as Open Ephys binary: dspk reads the legacy
folders with the µV of SpikeInterface's legacy reader (``read_openephys``, Neo's
``OpenEphysRawIO``), and the same µV as its own reading of the binary copy of the session.

The two copies were recorded at different times of the looping File Reader, so they overlap
from an offset the test finds by searching one channel's first samples; over the overlap every
channel's values are equal (record node 101, the File Reader's stream), or within one count
(record node 105, behind a Bandpass Filter, whose float output each writer rounds itself)."""

from __future__ import annotations

import subprocess
import sys
import tarfile

import numpy as np
import pytest

import spikeinterface.extractors as se

import dspk

SDIST = "open-ephys-python-tools==1.0.1"
NODES = ["Record Node 101", "Record Node 105"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The sdist's ``tests/data`` folder, fetched with pip in the test venv (the sdist only)."""
    where = tmp_path_factory.mktemp("oe-tools")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", SDIST, "-d", str(where)],
        check=True,
        capture_output=True,
    )
    (sdist,) = where.glob("open_ephys_python_tools-1.0.1.tar.gz")
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if "/tests/data/v0.6.7_OpenEphys/" in m.name or "/tests/data/v0.6.7_Binary/" in m.name]
        tar.extractall(where, members=members, filter="data")
    return where / "open_ephys_python_tools-1.0.1" / "tests" / "data"


@pytest.mark.parametrize("node", NODES)
def test_legacy_reads_as_spikeinterface_reads_it(data, node):
    folder = data / "v0.6.7_OpenEphys" / node
    ours = dspk.open(folder)
    theirs = se.read_openephys(folder)
    assert ours.format == "openephys-legacy"
    assert ours.channel_count == theirs.get_num_channels() == 16
    assert ours.samples == theirs.get_num_samples() == 130 * 1024
    assert ours.sample_rate_hz == theirs.get_sampling_frequency() == 40000.0
    assert ours.channel_names == list(theirs.get_property("channel_name")) == [f"CH{i}" for i in range(1, 17)]
    assert set(ours.units) == {"µV"}
    assert float(ours.start_time) == pytest.approx(theirs.get_times()[0], abs=1e-12)
    np.testing.assert_array_equal(ours.read(), theirs.get_traces(return_in_uV=True).T)
    # A window across records, channels out of order.
    np.testing.assert_array_equal(
        ours.read([15, 0, 7], 1000, 5000), theirs.get_traces(start_frame=1000, end_frame=5000, return_in_uV=True)[:, [15, 0, 7]].T
    )


@pytest.mark.parametrize("node", NODES)
def test_legacy_and_binary_copies_hold_the_same_microvolts(data, node):
    legacy = dspk.open(data / "v0.6.7_OpenEphys" / node).read()
    binary_rec = dspk.open(data / "v0.6.7_Binary" / node / "experiment1" / "recording1")
    assert binary_rec.format == "openephys" and binary_rec.channel_names == [f"CH{i}" for i in range(1, 17)]
    binary = binary_rec.read()
    probe = legacy[0, :64]
    hits = [o for o in range(binary.shape[1] - 64) if np.array_equal(binary[0, o : o + 64], probe)]
    assert len(hits) == 1, hits
    o = hits[0]
    n = binary.shape[1] - o
    assert n > 100_000
    if node == "Record Node 101":  # the File Reader's int16 stream, written as is by both
        np.testing.assert_array_equal(legacy[:, :n], binary[:, o:])
    else:
        # Behind a Bandpass Filter the GUI's two writers round the float stream to int16 each
        # their own way: a few values (6 of 1.9 million) differ by one count (0.05 µV).
        diff = np.abs(legacy[:, :n].astype(np.float64) - binary[:, o:])
        assert diff.max() <= 0.05 + 1e-6 and (diff > 0).mean() < 1e-5
