"""Open Ephys binary folders written from the format description (recordings.py), read by dspk
and by SpikeInterface's ``read_openephys`` (Neo's ``OpenEphysBinaryRawIO``): the same µV values,
sample counts, channel counts and rates, for the GUI 0.6+ and 0.5 layouts, headstage and ADC
channels, several record nodes, experiments and recordings.

How Neo numbers what dspk opens by path (neo/rawio/openephysbinaryrawio.py): a block is an
experiment (``block_index`` 0 is the lowest-numbered ``experimentK``), a segment a recording of
it; a stream is named ``Record Node N#<folder_name>`` (the bare folder name without record
nodes), stream ids are the sorted stream names' indices, and the ADC channels of a stream are
split off into a stream of their own, ``<name>_ADC`` with id ``index + number of streams``.
dspk keeps a stream's channels together (headstage, then ADC), so its channels are compared with
Neo's two streams in turn. A recording folder opens as one recording; the folder of an experiment
with several recordings opens as one recording of a segment each, as Neo's block of segments.
Gaps in the sample numbers inside one recording are a warning with the samples read as one run
(Neo does not check them at all)."""

from __future__ import annotations

import numpy as np
import pytest

import spikeinterface.extractors as se

import dspk
from recordings import OpenEphysStream, openephys_channel, write_openephys_recording

BOARD = "Acquisition_Board-100.Rhythm Data"  # headstage + ADC channels (0.6+)
PROBE = "Neuropix-PXI-100.ProbeA-AP"  # headstage channels only (0.6+)
FPGA = "Rhythm_FPGA-100.0"  # GUI 0.5's acquisition board

# dspk's unit names → µV per unit (Neo's are "uV" and "V"; SpikeInterface scales V by 10^6).
UV_PER_UNIT = {"µV": 1.0, "uV": 1.0, "V": 1e6, "mV": 1e3}


def board(rng, headstage: int, adc: int) -> list[tuple[str, str, float]]:
    """Headstage channels then ADC channels (Neo refuses them interleaved), random gains."""
    return [openephys_channel(rng, f"CH{i + 1}", "headstage") for i in range(headstage)] + [
        openephys_channel(rng, f"ADC{i + 1}", "adc") for i in range(adc)
    ]


def samples(rng) -> int:
    return int(rng.integers(1_000, 6_000))


def theirs(root, stream_name, block_index, cache):
    """SpikeInterface's recording of ``stream_name`` in block ``block_index`` (one per pair:
    Neo parses the whole folder each time)."""
    key = (stream_name, block_index)
    if key not in cache:
        cache[key] = se.read_openephys(root, stream_name=stream_name, block_index=block_index)
    return cache[key]


def assert_same_stream(stream: OpenEphysStream, neo_name: str, root, block, segment, rng, cache, path=None):
    """dspk's read of ``stream`` (opened by its folder, or ``path``) equals SpikeInterface's
    traces of Neo's stream ``neo_name`` (and ``neo_name + "_ADC"`` for the ADC channels) in
    µV, with the same lengths, channel names and rate."""
    ours = dspk.open(path or stream.dir)
    n = len(stream.names)
    adc = np.array(["ADC" in c for c in stream.names])
    assert ours.format == "openephys"
    assert ours.channel_count == n and ours.samples == stream.frames.shape[0]
    assert ours.channel_names == stream.names
    uv = np.array([UV_PER_UNIT[u] for u in ours.units], dtype=np.float32)[:, None]
    ours_uv = ours.read() * uv
    parts = [(neo_name, ~adc)] + ([(neo_name + "_ADC", adc)] if adc.any() else [])
    for name, pick in parts:
        if not pick.any():
            continue
        rec = theirs(root, name, block, cache)
        ctx = f"{stream.dir} vs Neo {name!r} block {block} segment {segment}"
        assert rec.get_num_channels() == int(pick.sum()), ctx
        assert list(rec.get_channel_ids()) == [c for c, p in zip(stream.names, pick) if p], ctx
        assert rec.get_num_samples(segment_index=segment) == ours.samples, ctx
        assert rec.get_sampling_frequency() == ours.sample_rate_hz == stream.rate, ctx
        full = rec.get_traces(segment_index=segment, return_in_uV=True)
        assert full.dtype == np.float32
        np.testing.assert_allclose(ours_uv[pick], full.T, rtol=1e-6, atol=1e-6, err_msg=ctx)
        a = int(rng.integers(0, ours.samples - 1))
        b = int(rng.integers(a + 1, ours.samples + 1))
        chans = [int(i) for i in np.flatnonzero(pick)]
        part = rec.get_traces(segment_index=segment, start_frame=a, end_frame=b, return_in_uV=True)
        np.testing.assert_allclose(
            ours.read(channels=chans, start=a, stop=b) * uv[pick], part.T, rtol=1e-6, atol=1e-6, err_msg=ctx
        )
    return ours


def test_record_nodes_experiments_and_recordings_of_gui_06(tmp_path, rng):
    root = tmp_path / "2026-01-01_10-00-00"
    # Neo needs the same experiments in every record node and the same streams in every
    # recording of an experiment, and takes a stream's channels from its first recording: the
    # channels and gains are drawn once per node, the lengths per recording. (Neo's quirk: it
    # scales every recording by the first recording's bit_volts, where dspk reads each
    # recording's own structure.oebin, as the format describes; recordings of one stream
    # whose gains differ would disagree, so none are written here.)
    layout = {"experiment1": ["recording1", "recording2"], "experiment3": ["recording1"]}
    nodes = {
        "Record Node 101": [
            (BOARD, 30000.0, board(rng, int(rng.integers(2, 9)), int(rng.integers(1, 4)))),
            (PROBE, 30000.0, board(rng, int(rng.integers(3, 12)), 0)),
        ],
        "Record Node 102": [(PROBE, 30000.0, board(rng, int(rng.integers(3, 12)), 0))],
    }
    written = []
    for node, streams in nodes.items():
        for block, (experiment, recordings) in enumerate(layout.items()):
            for segment, recording in enumerate(recordings):
                folder = root / node / experiment / recording
                specs = [(name, rate, chans, samples(rng)) for name, rate, chans in streams]
                for s in write_openephys_recording(folder, rng, specs):
                    written.append((node, block, segment, s))
    cache = {}
    for node, block, segment, s in written:
        ours = assert_same_stream(s, f"{node}#{s.folder}", root, block, segment, rng, cache)
        assert ours.metadata["record_node"] == node and ours.metadata["layout"] == "0.6+"
        assert ours.start_time * int(s.rate) == int(s.sample_numbers[0])
        assert ours.warnings == []
    # Stream ids as Neo numbers them: the sorted names, then the ADC streams after them.
    names = sorted({f"{n}#{s.folder}" for n, _, _, s in written})
    board_id = names.index(f"Record Node 101#{BOARD}")
    ours = dspk.open(next(s for n, b, g, s in written if s.folder == BOARD and b == 1).dir / "continuous.dat")
    adc = [i for i, c in enumerate(ours.channel_names) if "ADC" in c]
    by_id = se.read_openephys(root, stream_id=str(board_id + len(names)), block_index=1)
    np.testing.assert_allclose(ours.read(channels=adc) * 1e6, by_id.get_traces(return_in_uV=True).T, rtol=1e-6, atol=1e-6)


def test_gui_05_layout_with_empty_units(tmp_path, rng):
    root = tmp_path / "2019-05-01_10-00-00"
    cache = {}
    chans = board(rng, int(rng.integers(2, 9)), int(rng.integers(1, 4)))
    written = [
        write_openephys_recording(root / "experiment1" / r, rng, [(FPGA, 20000.0, chans, samples(rng))], "0.5.5")[0]
        for r in ["recording1", "recording2"]
    ]
    for segment, s in enumerate(written):
        assert s.units == [""] * len(s.names) and not (s.dir / "sample_numbers.npy").exists()
        # Opened by its recording folder (one stream), the other tests open stream folders.
        ours = assert_same_stream(s, FPGA, root, 0, segment, rng, cache, path=s.dir.parents[1])
        assert ours.metadata["layout"] == "0.5" and ours.warnings == []
        # Empty units: µV, and V for channels named ADC (Neo's rule, dspk's too).
        assert ours.units == ["V" if "ADC" in c else "µV" for c in s.names]


@pytest.mark.parametrize("gui_version", ["0.6.7", "0.5.5"])
def test_a_gap_in_the_sample_numbers_is_a_warning(tmp_path, rng, gui_version):
    root = tmp_path / "gap"
    n = samples(rng)
    at, missing = int(rng.integers(1, n - 1)), int(rng.integers(1, 500))
    (s,) = write_openephys_recording(
        root / "experiment1" / "recording1", rng, [(BOARD, 30000.0, board(rng, 4, 2), n)], gui_version=gui_version, gap=(at, missing)
    )
    # dspk reads the frames as one run from the first sample number and says so; Neo does the
    # same without a word. Neither splits the stream into segments here.
    ours = assert_same_stream(s, BOARD, root, 0, 0, rng, {})
    (warning,) = ours.warnings
    assert "1 gaps in the sample numbers" in warning and f"({missing} samples missing)" in warning
    assert ours.samples == n


def test_an_experiment_of_several_recordings_opens_as_segments_as_neo_reads_a_block(tmp_path, rng):
    from dspk.spikeinterface import DspkRecording

    root = tmp_path / "2026-02-02_10-00-00"
    node = "Record Node 102"
    chans = board(rng, int(rng.integers(3, 9)), 0)
    written = [
        write_openephys_recording(root / node / "experiment2" / r, rng, [(PROBE, 30000.0, chans, samples(rng))])[0]
        for r in ["recording1", "recording2", "recording3"]
    ]
    experiment = root / node / "experiment2"
    ours = dspk.open(experiment)
    lengths = [s.frames.shape[0] for s in written]
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    assert [(a, n) for a, n, _, _ in ours.segments] == list(zip(starts.tolist(), lengths))
    assert [f for _, _, f, _ in ours.segments] == [int(s.sample_numbers[0]) for s in written]
    assert ours.samples == sum(lengths)
    theirs_rec = se.read_openephys(root, stream_name=f"{node}#{PROBE}", block_index=0)
    mine = DspkRecording(experiment)
    assert theirs_rec.get_num_segments() == mine.get_num_segments() == 3
    for k, s in enumerate(written):
        ctx = f"segment {k}"
        assert theirs_rec.get_num_samples(segment_index=k) == mine.get_num_samples(segment_index=k) == lengths[k], ctx
        want = theirs_rec.get_traces(segment_index=k, return_in_uV=True)
        np.testing.assert_allclose(mine.get_traces(segment_index=k, return_in_uV=True), want, rtol=1e-6, atol=1e-6, err_msg=ctx)
        a = int(rng.integers(0, lengths[k] - 1))
        b = int(rng.integers(a + 1, lengths[k] + 1))
        np.testing.assert_allclose(
            mine.get_traces(segment_index=k, start_frame=a, end_frame=b, return_in_uV=True),
            theirs_rec.get_traces(segment_index=k, start_frame=a, end_frame=b, return_in_uV=True),
            rtol=1e-6, atol=1e-6, err_msg=ctx,
        )
        # The segment's values are the recording folder's own, opened alone.
        alone = dspk.open(s.dir)
        np.testing.assert_array_equal(ours.read(start=int(starts[k]), stop=int(starts[k]) + lengths[k]), alone.read())
    # A read across a segment boundary is refused with the boundary named.
    with pytest.raises(dspk.InvalidInputError, match="crosses the end of segment 0"):
        ours.read(start=lengths[0] - 1, stop=lengths[0] + 1)
    # Windows never cross a boundary: each lies inside one segment, and they tile every segment.
    owned = np.zeros(ours.samples, dtype=int)
    for w in ours.windows(batch=700, halo=50):
        seg = next(k for k, (a, n, _, _) in enumerate(ours.segments) if a <= w.start < a + n)
        a, n, _, _ = ours.segments[seg]
        assert a <= w.start and w.start + w.data.shape[1] <= a + n
        owned[w.owned.start : w.owned.stop] += 1
    assert (owned == 1).all()


def test_an_experiment_of_several_streams_opens_on_the_stream_named(tmp_path, rng, dspk_program, runtime):
    """Neuropixels recordings in Open Ephys have several streams (a probe's AP and LFP, the
    board): the folder of an experiment opens on the stream named (``stream=``, ``--stream``),
    a segment per recording, each segment that recording's stream as SpikeInterface reads it;
    with no name it is an error listing the streams; the program scans the same recording."""
    import json
    import subprocess

    from dspk.spikeinterface import DspkRecording

    root = tmp_path / "2026-03-03_09-00-00"
    node = "Record Node 101"
    probe, chans = board(rng, int(rng.integers(3, 7)), 0), board(rng, 2, int(rng.integers(1, 3)))
    written = [
        write_openephys_recording(
            root / node / "experiment1" / r, rng, [(PROBE, 30000.0, probe, samples(rng)), (BOARD, 30000.0, chans, samples(rng))]
        )
        for r in ["recording1", "recording2"]
    ]
    experiment = root / node / "experiment1"
    with pytest.raises(dspk.InvalidInputError, match="choose one"):
        dspk.open(experiment)
    for name in [PROBE, "ProbeA-AP"]:
        ours = dspk.open(experiment, stream=name)
        assert len(ours.segments) == 2 and ours.channel_count == len(probe), name
        theirs_rec = se.read_openephys(root, stream_name=f"{node}#{PROBE}", block_index=0)
        mine = DspkRecording(experiment, stream=name)
        assert mine.get_num_segments() == theirs_rec.get_num_segments() == 2
        for k, streams in enumerate(written):
            probe_stream = streams[0]
            start, length, first, _ = ours.segments[k]
            assert length == probe_stream.frames.shape[0] and first == int(probe_stream.sample_numbers[0])
            np.testing.assert_array_equal(ours.read(start=start, stop=start + length), dspk.open(probe_stream.dir).read())
            np.testing.assert_allclose(
                mine.get_traces(segment_index=k, return_in_uV=True),
                theirs_rec.get_traces(segment_index=k, return_in_uV=True),
                rtol=1e-6, atol=1e-6, err_msg=f"{name} segment {k}",
            )
    with pytest.raises(dspk.InvalidInputError, match="no continuous stream 'ProbeZ-LFP'"):
        dspk.open(experiment, stream="ProbeZ-LFP")
    # The program opens the same recording with --stream, and scans it as the package does.
    run = lambda *args: subprocess.run([dspk_program, *args], capture_output=True, text=True)
    info = run("info", str(experiment), "--stream", "ProbeA-AP", "--json")
    assert info.returncode == 0, info.stderr
    assert len(json.loads(info.stdout)["segments"]) == 2
    refused = run("info", str(experiment))
    assert refused.returncode != 0 and "choose one" in refused.stderr, refused.stderr
    scan = run("scan", str(experiment), "--stream", PROBE, "--json", "--runtime", runtime)
    assert scan.returncode == 0, scan.stderr
    program = json.loads(scan.stdout)
    package = dspk.scan(dspk.open(experiment, stream=PROBE), runtime=runtime, progress=False)
    assert [c["rms"] for c in program["channels"]] == pytest.approx(list(package.rms), rel=1e-6)
    # A dspk.distributed task opens the folder on the stream named, on its worker.
    from dspk.distributed import scan_task

    task = scan_task(str(experiment), {"runtime": runtime}, None, stream=PROBE)
    assert "result" in task, task
    np.testing.assert_array_equal([c["rms"] for c in task["result"]["channels"]], package.rms)
    assert "choose one" in scan_task(str(experiment), {"runtime": runtime})["error"]
    # A cluster plan of the folder: a job per stream and recording, each result the scan of that
    # stream's segment run locally.
    plan_dir = tmp_path / "plan"
    planned = run("plan", str(experiment), "--out", str(plan_dir), "--base", str(tmp_path))
    assert planned.returncode == 0, planned.stderr
    jobs = json.loads((plan_dir / "plan.json").read_text())["jobs"]
    segments = {s: dspk.open(experiment, stream=s).segments for s in [PROBE, BOARD]}
    assert sorted((j["stream"], j["start_sample"], j["end_sample"]) for j in jobs) == sorted(
        (s, a, a + n) for s, segs in segments.items() for a, n, _, _ in segs
    )
    for j in jobs:
        done = run("run", str(plan_dir), "--job", str(j["job"]), "--runtime", runtime)
        assert done.returncode == 0, done.stderr
    gathered = json.loads(run("gather", str(plan_dir), "--json").stdout)
    assert gathered["done"] == len(jobs) == 4 and not gathered["failed"] and not gathered["missing"]
    for record in gathered["results"]:
        job = record["job"]
        local = run(
            "scan", str(experiment), "--stream", job["stream"], "--start", f"{job['start_sample']}smp",
            "--end", f"{job['end_sample']}smp", "--json", "--runtime", runtime,
        )
        assert local.returncode == 0, local.stderr
        assert record["result"]["channels"] == json.loads(local.stdout)["channels"], job
