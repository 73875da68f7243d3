"""NWB (HDF5) files read by dspk and by SpikeInterface's ``read_nwb_recording`` (its h5py path):
the same µV values, stored values, channel names, rates, start times, positions and groups.

Files written here by ``pynwb`` (int16 and float32 data, gzip-compressed and plain, ``rate`` and
``timestamps``, series in ``/acquisition`` and in a processing module, an electrodes table with
``rel_x``/``rel_y`` over two groups), and the real recording of the Open Ephys GUI 0.6.7 (16
channels, 40 kHz) that PyPI's ``open-ephys-python-tools`` 1.0.1 source distribution ships as NWB
and as Open Ephys binary (fetched with pip). That GUI's NWB writer stores the bit-volts in both
``conversion`` and ``channel_conversion``: read as the NWB specification says (by SpikeInterface
and dspk alike) the values are scaled twice, so dspk warns, and its µV over ``conversion`` are the
binary copy's µV."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from datetime import datetime, timezone
from pathlib import Path

import h5py
import numpy as np
import pytest
import spikeinterface.extractors as se
from hdmf.backends.hdf5.h5_utils import H5DataIO
from pynwb import NWBHDF5IO, NWBFile
from pynwb.ecephys import LFP, ElectricalSeries

import dspk

AP = "acquisition/ElectricalSeriesAP"
RAW = "acquisition/ElectricalSeriesRaw"
LFP_PATH = "processing/ecephys/LFP/ElectricalSeriesLFP"


def write_nwb(path: Path, rng, *, channel_names: bool) -> dict[str, np.ndarray]:
    """An NWB file of three series over 6 electrodes in two groups; returns each series' data."""
    nwb = NWBFile(
        session_description="dspk test",
        identifier="dspk-nwb",
        session_start_time=datetime(2026, 12, 3, tzinfo=timezone.utc),
    )
    device = nwb.create_device(name="probe")
    groups = [
        nwb.create_electrode_group(name=f"shank{k}", description="", location="CA1", device=device)
        for k in range(2)
    ]
    if channel_names:
        nwb.add_electrode_column(name="channel_name", description="the channel's name")
    for i in range(6):
        extra = {"channel_name": f"AP{i}"} if channel_names else {}
        nwb.add_electrode(
            group=groups[i // 3],
            location="CA1",
            rel_x=float(rng.uniform(0, 50)),
            rel_y=float(20 * (i % 3) + rng.uniform(0, 5)),
            id=100 + i,
            **extra,
        )
    data = {}
    # int16, gzip, rate + starting_time, channel_conversion and offset, a permuted region.
    n = int(rng.integers(20_000, 30_000))
    data[AP] = rng.integers(-2000, 2000, size=(n, 5), dtype=np.int16)
    nwb.add_acquisition(
        ElectricalSeries(
            name="ElectricalSeriesAP",
            data=H5DataIO(data[AP], compression="gzip", chunks=(4096, 5)),
            electrodes=nwb.create_electrode_table_region([4, 0, 1, 5, 2], "the AP channels"),
            rate=30_000.0,
            starting_time=float(rng.uniform(0.5, 2.0)),
            conversion=float(rng.uniform(1e-6, 5e-6)),
            offset=float(rng.uniform(-1e-4, 1e-4)),
            channel_conversion=rng.uniform(0.5, 2.0, size=5).astype(np.float32),
        )
    )
    # float32, uncompressed, timestamps of a clock 20 ppm fast.
    n = int(rng.integers(8_000, 12_000))
    data[RAW] = rng.normal(0, 1e-4, size=(n, 6)).astype(np.float32)
    t0 = float(rng.uniform(0.0, 3.0))
    nwb.add_acquisition(
        ElectricalSeries(
            name="ElectricalSeriesRaw",
            data=data[RAW],
            electrodes=nwb.create_electrode_table_region(list(range(6)), "all"),
            timestamps=t0 + np.arange(n) / (20_000.0 * (1 + 20e-6)),
        )
    )
    # int16, gzip, in a processing module.
    n = int(rng.integers(2_000, 4_000))
    data[LFP_PATH] = rng.integers(-500, 500, size=(n, 3), dtype=np.int16)
    module = nwb.create_processing_module(name="ecephys", description="processed")
    lfp = LFP(name="LFP")
    lfp.add_electrical_series(
        ElectricalSeries(
            name="ElectricalSeriesLFP",
            data=H5DataIO(data[LFP_PATH], compression="gzip", chunks=(512, 3)),
            electrodes=nwb.create_electrode_table_region([3, 4, 5], "shank 1"),
            rate=2_500.0,
            conversion=2.5e-6,
        )
    )
    module.add(lfp)
    with NWBHDF5IO(str(path), "w") as io:
        io.write(nwb)
    return data


def assert_same_as_spikeinterface(path: Path, series: str, stored: np.ndarray, rng):
    ours = dspk.open(path, stream=series)
    theirs = se.read_nwb_recording(path, electrical_series_path=series)
    assert ours.format == "nwb"
    assert ours.channel_names == [str(c) for c in theirs.get_channel_ids()]
    assert ours.samples == theirs.get_num_samples() == stored.shape[0]
    assert ours.channel_count == theirs.get_num_channels() == stored.shape[1]
    assert float(ours.sample_rate) == theirs.sampling_frequency
    assert float(ours.start_time) == pytest.approx(theirs.get_start_time(), abs=1e-12)
    assert ours.units == ["µV"] * ours.channel_count
    np.testing.assert_allclose(ours.gains, theirs.get_channel_gains(), rtol=1e-6)
    np.testing.assert_allclose(ours.offsets, theirs.get_channel_offsets(), rtol=1e-6, atol=1e-6)
    assert ours.read_stored().dtype == stored.dtype
    np.testing.assert_array_equal(ours.read_stored(), stored.T)
    want = theirs.get_traces(return_in_uV=True).T
    atol = 1e-6 * float(np.abs(want).max())
    np.testing.assert_allclose(ours.read(), want, rtol=1e-6, atol=atol)
    # A window of a few channels, in any order.
    start = int(rng.integers(0, ours.samples - 100))
    stop = int(rng.integers(start + 1, ours.samples + 1))
    chans = [int(c) for c in rng.permutation(ours.channel_count)[:2]]
    np.testing.assert_array_equal(ours.read(chans, start, stop), ours.read()[chans, start:stop])
    np.testing.assert_array_equal(ours.read_frames(start, stop), ours.read()[:, start:stop].T)
    return ours, theirs


def test_pynwb_series_read_as_spikeinterface_reads_them(tmp_path, rng):
    path = tmp_path / "three.nwb"
    data = write_nwb(path, rng, channel_names=True)
    for series, stored in data.items():
        ours, theirs = assert_same_as_spikeinterface(path, series, stored, rng)
        assert ours.metadata["series"] == series
        assert ours.warnings == []
        assert ours.files == [path]
        # Positions and groups: SpikeInterface's probe per group, dspk's shank per group.
        probe = ours.probe
        order = np.argsort(probe.device_channel_indices)
        np.testing.assert_allclose(probe.contact_positions[order], theirs.get_channel_locations())
        groups = theirs.get_channel_groups()
        shanks = np.searchsorted(np.unique(groups), groups)
        np.testing.assert_array_equal(np.asarray(probe.shank_ids[order], dtype=int), shanks)
    raw = dspk.open(path, stream=RAW)
    # The timestamps' clock: the rate over the whole series, 20 ppm above the nominal 20 kHz.
    assert float(raw.measured_rate) == pytest.approx(20_000 * (1 + 20e-6), rel=1e-9)
    assert raw.metadata["time_source"] == "timestamps"


def test_channel_names_are_the_electrode_ids_without_a_channel_name_column(tmp_path, rng):
    path = tmp_path / "ids.nwb"
    data = write_nwb(path, rng, channel_names=False)
    ours, _ = assert_same_as_spikeinterface(path, LFP_PATH, data[LFP_PATH], rng)
    assert ours.channel_names == ["103", "104", "105"]


def test_series_are_chosen_by_path_or_last_name(tmp_path, rng):
    path = tmp_path / "three.nwb"
    write_nwb(path, rng, channel_names=True)
    with pytest.raises(dspk.DspkError) as e:
        dspk.open(path)
    for series in (AP, RAW, LFP_PATH):
        assert series in str(e.value)
    assert dspk.open(path, stream="ElectricalSeriesLFP").metadata["series"] == LFP_PATH
    assert dspk.open(path, stream="/" + AP).metadata["series"] == AP
    with pytest.raises(dspk.DspkError, match="no ElectricalSeries 'ElectricalSeriesXYZ'"):
        dspk.open(path, stream="ElectricalSeriesXYZ")


def test_the_program_reads_a_series(tmp_path, rng, dspk_program):
    path = tmp_path / "three.nwb"
    write_nwb(path, rng, channel_names=True)
    run = subprocess.run(
        [dspk_program, "info", str(path), "--stream", "ElectricalSeriesLFP"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert "ElectricalSeriesLFP" in run.stdout


def test_bad_files_are_errors_naming_the_file_and_dataset(tmp_path, rng):
    path = tmp_path / "three.nwb"
    write_nwb(path, rng, channel_names=True)
    shorter = tmp_path / "short_timestamps.nwb"
    shutil.copy(path, shorter)
    with h5py.File(shorter, "a") as f:
        ts = f[RAW + "/timestamps"][:-3]
        del f[RAW + "/timestamps"]
        f[RAW + "/timestamps"] = ts
    with pytest.raises(dspk.DspkError) as e:
        dspk.open(shorter, stream=RAW)
    assert str(shorter) in str(e.value) and f"/{RAW}/timestamps" in str(e.value)
    cc = tmp_path / "channel_conversion.nwb"
    shutil.copy(path, cc)
    with h5py.File(cc, "a") as f:
        del f[AP + "/channel_conversion"]
        f[AP + "/channel_conversion"] = np.ones(2, dtype=np.float32)
    with pytest.raises(dspk.DspkError, match="channel_conversion: holds 2 values for 5 channels"):
        dspk.open(cc, stream=AP)
    # Truncated: an error (at open or at the read), never a crash.
    cut = tmp_path / "cut.nwb"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(dspk.DspkError):
        dspk.open(cut, stream=AP).read()


@pytest.fixture(scope="module")
def open_ephys_tools(tmp_path_factory) -> Path:
    """The test data of PyPI's ``open-ephys-python-tools`` 1.0.1 source distribution."""
    where = tmp_path_factory.mktemp("open-ephys-python-tools")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
         "open-ephys-python-tools==1.0.1", "-d", str(where)],
        check=True,
    )
    (sdist,) = where.glob("open_ephys_python_tools-1.0.1.tar.gz")
    with tarfile.open(sdist) as tar:
        tar.extractall(where, filter="data")
    return where / "open_ephys_python_tools-1.0.1" / "tests" / "data"


def test_the_open_ephys_gui_recording_as_nwb_equals_its_binary_copy(open_ephys_tools):
    nwb_path = open_ephys_tools / "v0.6.7_NWB" / "Record Node 105" / "experiment1.nwb"
    binary = open_ephys_tools / "v0.6.7_Binary" / "Record Node 105" / "experiment1" / "recording1"
    series = "acquisition/File Reader-100.example_data"
    ours = dspk.open(nwb_path)  # its only ElectricalSeries (the spike series are not ones)
    theirs = se.read_nwb_recording(nwb_path, electrical_series_path=series)
    assert ours.metadata["series"] == series
    assert (ours.channel_count, ours.samples) == (16, 131_362)
    assert float(ours.sample_rate) == theirs.sampling_frequency
    assert float(ours.start_time) == theirs.get_start_time()
    want = theirs.get_traces(return_in_uV=True).T
    np.testing.assert_allclose(ours.read(), want, rtol=1e-6, atol=1e-6 * float(np.abs(want).max()))
    # The scaling trap: warned, and undone by dividing by conversion.
    (warning,) = ours.warnings
    assert "conversion and channel_conversion are both" in warning
    assert ours.metadata["conversion"] == "0.00000005"  # float32 in the file
    conversion = float(np.float32(5e-8))
    copy = dspk.open(binary)
    assert copy.format == "openephys" and copy.samples == ours.samples
    np.testing.assert_array_equal(ours.read_stored(), copy.read_stored())
    np.testing.assert_allclose(ours.read() / conversion, copy.read(), rtol=1e-5, atol=1e-4)
    # The same clock: start, and the rate measured from the timestamps against the sample numbers.
    assert float(ours.start_time) == pytest.approx(float(copy.start_time), abs=1e-9)
    assert float(ours.measured_rate) == pytest.approx(float(copy.measured_rate), rel=1e-9)
    # And SpikeInterface's reader of the binary copy.
    si_binary = se.read_openephys(binary.parents[1], stream_name="Record Node 105#File_Reader-100.example_data")
    np.testing.assert_allclose(copy.read(), si_binary.get_traces(return_in_uV=True).T, rtol=1e-6, atol=1e-3)
