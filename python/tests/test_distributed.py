"""`dspk.distributed` on a real ``dask.distributed`` ``LocalCluster`` of two worker processes:
seven recordings (one of them corrupt), one worker process killed while it runs a task; every
recording comes back exactly once, each result the report of the same scan run here, the
corrupt one reported by name; and ``devices=`` giving each worker a device of its own."""

from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pytest

import dspk
from engines import missing_engine
from recordings import write_binary, write_spikeglx
from test_device import without_timings

STATS = ("min", "max", "mean", "rms", "std")


@pytest.fixture(scope="module")
def dask_cluster():
    """A LocalCluster of two worker processes, one thread each (one device per process)."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as e:
        missing_engine(f"dask.distributed is not installed ({e}): pip install dask distributed")
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def recordings(folder, rng):
    paths = []
    for i in range(3):
        paths.append(write_spikeglx(folder / f"np{i}", rng, samples=int(rng.integers(40_000, 50_000))).bin)
    for i in range(3):
        paths.append(write_binary(folder / f"raw{i}.bin", rng, channels=int(rng.integers(32, 96)),
                                  samples=int(rng.integers(60_000, 90_000))).path)
    corrupt = folder / "corrupt.bin"
    write_binary(corrupt, rng, channels=4, samples=1000)
    sidecar = corrupt.with_name("corrupt.bin.json")
    sidecar.write_text(sidecar.read_text()[:30])  # a truncated sidecar
    paths.insert(4, corrupt)
    return paths, corrupt


def test_scan_survives_a_killed_worker_and_reports_the_corrupt_file(dask_cluster, tmp_path, rng):
    client = dask_cluster
    import dspk.distributed

    paths, corrupt = recordings(tmp_path, rng)
    pids = client.run(os.getpid)  # {worker address: pid}
    killed = {}
    arrived = []
    lock = threading.Lock()

    def on_result(outcome):
        arrived.append(outcome.index)
        with lock:
            if killed:
                return
            # Kill a worker process while it runs a task of ours.
            for address, keys in client.processing().items():
                ours = [k for k in keys if str(k).startswith("dspk-scan-")]
                if ours and address in pids:
                    os.kill(pids[address], signal.SIGKILL)
                    killed.update(address=address, pid=pids[address], keys=ours)
                    return

    outcomes = dspk.distributed.scan(client, paths, on_result=on_result)

    assert killed, "no worker was running a task when the first result came"
    assert len(outcomes) == len(paths) == 7
    assert [o.index for o in outcomes] == list(range(7))
    assert sorted(arrived) == list(range(7))  # each once, as it finished
    assert [o.recording for o in outcomes] == [str(p) for p in paths]
    # The task the killed worker held ran again on a live worker.
    for key in killed["keys"]:
        i = int(str(key).rsplit("-", 1)[1])
        assert outcomes[i].worker is not None and not outcomes[i].worker.endswith(f":{killed['pid']}"), outcomes[i]
    # The corrupt one by name; the rest complete and identical to a scan here.
    bad = [o for o in outcomes if not o.ok]
    assert [o.recording for o in bad] == [str(corrupt)]
    assert "corrupt.bin" in bad[0].error and bad[0].error_type, bad[0]
    for o in outcomes:
        if not o.ok:
            continue
        here = dspk.scan(dspk.open(o.recording), progress=False)
        # The scan's report (`dspk scan --json`'s schema), the same but for the clocks.
        assert without_timings(o.result) == without_timings(here.to_dict()), o.recording
        for k in STATS:
            assert np.array_equal([c[k] for c in o.result["channels"]], getattr(here, k)), (o.recording, k)
        assert o.result["dead"] == here.dead and o.result["noisy"] == here.noisy
        assert (o.result["start_sample"], o.result["end_sample"]) == (here.start, here.end)


def test_convert_writes_each_output_once(dask_cluster, tmp_path, rng):
    import dspk.distributed

    sources = [write_binary(tmp_path / f"r{i}.bin", rng, channels=5, samples=3000) for i in range(2)]
    outs = [tmp_path / f"out{i}.bin" for i in range(2)]
    outcomes = dspk.distributed.convert(dask_cluster, [s.path for s in sources], outs)
    assert all(o.ok for o in outcomes), outcomes
    for s, out in zip(sources, outs):
        back = dspk.open(out).read()
        assert np.array_equal(back, dspk.open(s.path).read())
    with pytest.raises(dspk.InvalidInputError, match="2 recordings but 1 outputs"):
        dspk.distributed.convert(dask_cluster, [s.path for s in sources], outs[:1])


def test_devices_give_each_worker_its_device(dask_cluster, tmp_path, rng):
    import dspk.distributed

    listed = [d for r in dspk.devices() if r["usable"] for d in r["devices"]]
    index = listed[0]["index"]
    paths = [write_binary(tmp_path / f"d{i}.bin", rng, channels=6, samples=4000).path for i in range(2)]
    outcomes = dspk.distributed.scan(dask_cluster, paths, devices=[index])
    for o in outcomes:
        assert o.ok, o
        here = dspk.scan(dspk.open(o.recording), progress=False, device=index)
        assert np.array_equal([c["std"] for c in o.result["channels"]], here.std)
        assert o.result["device"] == listed[0]["adapter_name"] == here.device
    with pytest.raises(dspk.DspkError, match="device 999 does not exist"):
        dspk.scan(dspk.open(paths[0]), progress=False, device=999)


def workers_by_name(client) -> dict:
    """``{worker name: address}`` of the cluster's two workers (a killed one back first)."""
    client.wait_for_workers(2, timeout=60)
    return {w["name"]: address for address, w in client.scheduler_info()["workers"].items()}


def test_each_worker_gets_a_device_of_its_own(dask_cluster):
    """Several devices among the workers, without a GPU each: the device numbers are fakes,
    the mapping is what is checked, on every worker of the cluster (a task pinned to each)."""
    import dspk.distributed

    workers = workers_by_name(dask_cluster)
    assert sorted(workers) == [0, 1], workers
    for devices in ([7, 3], [7, 3, 5], [2, 9, 4, 1]):
        got = {
            name: dask_cluster.submit(
                dspk.distributed._worker_device, devices, workers=[address], pure=False
            ).result()
            for name, address in workers.items()
        }
        assert got == {k: devices[k % len(devices)] for k in workers}, (devices, got)
        assert len(set(got.values())) == len(workers), f"two workers share a device: {got}"


def test_a_scan_task_opens_the_device_of_its_worker(dask_cluster, tmp_path, rng):
    """Two devices, a real one and one that does not exist: worker 0's scan runs on the first,
    worker 1's asks for the second and fails naming it, so each scan reached its own device."""
    import dspk.distributed

    listed = [d for r in dspk.devices() if r["usable"] for d in r["devices"]]
    real = listed[0]
    path = str(write_binary(tmp_path / "d.bin", rng, channels=6, samples=4000).path)
    workers = workers_by_name(dask_cluster)
    done = {
        name: dask_cluster.submit(
            dspk.distributed.scan_task, path, {}, [real["index"], 999], workers=[address], pure=False
        ).result()
        for name, address in workers.items()
    }
    assert "error" not in done[0], done[0]
    assert done[0]["result"]["device"] == real["adapter_name"]
    assert done[1].get("error_type") and "device 999 does not exist" in done[1]["error"], done[1]


def test_worker_names_map_to_devices_round_robin(monkeypatch):
    """LocalCluster's names (0, 1…) and dask-jobqueue's (``SLURMCluster-3``), more workers than
    devices; no cluster needed."""
    import distributed

    import dspk.distributed

    devices = [4, 6, 5]
    cases = [(0, 4), (1, 6), (2, 5), (3, 4), (7, 6), ("SLURMCluster-1", 6), ("SLURMCluster-5", 5),
             ("tcp://worker", 4)]
    for name, want in cases:
        monkeypatch.setattr(distributed, "get_worker", lambda name=name: type("W", (), {"name": name})())
        assert dspk.distributed._worker_device(devices) == want, name
    assert dspk.distributed._worker_device(None) is None and dspk.distributed._worker_device([]) is None


def test_preprocess_in_parts_writes_the_same_file_as_one_run(dask_cluster, runtime, tmp_path, rng):
    """`dspk.distributed.preprocess`: the kilosort4 chain (whitening made global: the file has
    no geometry) fitted once on a worker, 3-4 parts on two workers with windows that do not
    divide them, assembled: the same bytes as one `dspk.preprocess` here, the same sidecar but
    its provenance, the same fitted parameters."""
    import json

    import dspk.distributed

    rec = write_binary(tmp_path / "rec.bin", rng, channels=8, samples=int(rng.integers(70_000, 80_000)),
                       rate="30000")
    spec = dspk.pipeline_preset("kilosort4")
    whiten = next(s for s in spec["stages"] if s["kind"] == "whiten")
    whiten["scope"] = "global"
    whiten.pop("neighbours", None)
    text = json.dumps(spec)
    parts_out = tmp_path / "parts.bin"
    got = dspk.distributed.preprocess(dask_cluster, rec.path, parts_out, pipeline=text,
                                      chunk_samples=25_000, window_samples=9_000, runtime=runtime)
    assert got.channel_count == 8
    one = tmp_path / "one.bin"
    dspk.preprocess(dspk.open(rec.path), one, pipeline=text, runtime=runtime, progress=False)
    data = one.read_bytes()
    assert len(data) == 8 * rec.values.shape[1] * 2
    assert parts_out.read_bytes() == data
    sides = [json.loads((tmp_path / f"{name}.bin.json").read_text()) for name in ("parts", "one")]
    provenances = [s.pop("provenance") for s in sides]
    assert sides[0] == sides[1]
    assert provenances[0]["fits"] == provenances[1]["fits"] and provenances[0]["fits"]["whitening"]
    assert len(provenances[0]["parts"]) == (4 if rec.values.shape[1] > 75_000 else 3)
    assert provenances[0]["report"]["plan"]["samples"] == rec.values.shape[1]
    values = np.frombuffer(data, dtype="<i2")
    clipped = (values == 32767) | (values == -32768)  # np.abs(-32768) stays -32768 in int16
    assert values.std() > 10 and clipped.mean() < 0.01


def test_detect_in_parts_gives_the_same_peaks_as_one_run(dask_cluster, runtime, tmp_path, rng):
    """`dspk.distributed.detect`: the kilosort4 chain (whitening made global: the file has no
    geometry) and the noise levels fitted once on a worker, 4 parts on two workers with
    windows that do not divide them, their peaks concatenated: the same array, byte for byte,
    as one `dspk.detect` here, with peaks in every part."""
    import json

    import dspk.distributed

    # The last part holds 10,000-20,000 samples: about 20-45 peaks at this rate (some 55 per
    # 25,000), so "peaks in every part" cannot fail by chance (a last part of a few hundred
    # samples once held none).
    samples = int(rng.integers(85_000, 95_000))
    rec = write_binary(tmp_path / "rec.bin", rng, channels=8, samples=samples, rate="30000")
    spec = dspk.pipeline_preset("kilosort4")
    whiten = next(s for s in spec["stages"] if s["kind"] == "whiten")
    whiten["scope"] = "global"
    whiten.pop("neighbours", None)
    text = json.dumps(spec)
    options = {"pipeline": text, "threshold": 3.5, "exclude_sweep_ms": 0.2, "runtime": runtime}
    got = dspk.distributed.detect(dask_cluster, rec.path, chunk_samples=25_000,
                                  window_samples=9_000, **options)
    one = dspk.detect(dspk.open(rec.path), progress=False, **options)
    assert got.dtype == one.dtype and got.dtype.names[0] == "sample_index"
    assert got.tobytes() == one.tobytes()
    # Not an empty agreement: noise past 3.5 noise levels gives peaks in every part.
    edges = list(range(0, samples, 25_000)) + [samples]
    counts = [int(np.count_nonzero((one["sample_index"] >= a) & (one["sample_index"] < b)))
              for a, b in zip(edges, edges[1:])]
    assert len(counts) == 4 and min(counts) > 0, counts
