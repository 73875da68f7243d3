"""`dspk plan`, `dspk run` and `dspk gather` on a real Slurm (a single node started by
``tests/cluster/slurm.sh``): a job array over SpikeGLX, raw binary and the built-in synthetic
recording, one task cancelled mid-run and requeued, no partial result at any point, and every
result identical to the same scan run here; a preprocess plan's array over one recording
assembled into the same file, bit for bit, as one `dspk preprocess` run here; and a detect
plan's array concatenated into the same table, byte for byte, as one `dspk detect` here."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

import numpy as np

from engines import figures, local_scan, slurm  # noqa: F401  (slurm: the fixture)
from preprocessed import RATE, preprocess, sidecar_without_provenance, write_probed
from recordings import write_binary, write_spikeglx


class Watcher(threading.Thread):
    """Reads every result record of ``results`` as often as it can while the jobs run: each
    one that exists must be whole (atomic writes: never a partial file)."""

    def __init__(self, results: Path):
        super().__init__(daemon=True)
        self.results = results
        self.stop = threading.Event()
        self.problems: list[str] = []
        self.seen: set[str] = set()
        self.reads = 0

    def run(self):
        while not self.stop.is_set():
            for path in self.results.glob("job-*.json"):
                try:
                    text = path.read_text()
                except FileNotFoundError:
                    continue
                self.reads += 1
                try:
                    record = json.loads(text)
                    assert record["format"] == "dspk-result/1"
                    assert record["result"]["channels"], "no channels"
                    assert record["provenance"]["inputs"] or record["job"]["recording"] is None
                except Exception as e:  # noqa: BLE001  (any flaw is a partial file)
                    self.problems.append(f"{path.name}: {e!r}: {text[:200]!r}")
                self.seen.add(path.name)
            time.sleep(0.005)


def wait_for(predicate, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def test_job_array_with_a_cancelled_and_requeued_task(slurm, dspk_program, tmp_path, rng):  # noqa: F811
    data = tmp_path / "data"
    sglx = write_spikeglx(data / "np1", rng, samples=120_000)  # 4 s of 385 channels
    (data / "raw").mkdir(parents=True)
    raw = write_binary(data / "raw" / "rec.bin", rng, channels=64, samples=180_000, rate="30000")
    plan_dir = tmp_path / "jobs"
    planned = subprocess.run(
        [dspk_program, "plan", str(sglx.bin), str(raw.path), "--synthetic-duration", "4",
         "--chunk", "2", "--base", str(data), "--out", str(plan_dir), "--json"],
        capture_output=True, text=True, check=True,
    )
    assert json.loads(planned.stdout)["jobs"] == 7
    plan = json.loads((plan_dir / "plan.json").read_text())
    jobs = plan["jobs"]
    # Paths relative to the base, as written; 2 + 3 + 2 segments of 2 s.
    assert [j["recording"] for j in jobs] == (
        ["np1/run_g0_t0.imec0.ap.bin"] * 2 + ["raw/rec.bin"] * 3 + [None] * 2
    )
    assert [(j["start_sample"], j["end_sample"]) for j in jobs] == (
        [(0, 60_000), (60_000, 120_000)] + [(0, 60_000), (60_000, 120_000), (120_000, 180_000)]
        + [(0, 60_000), (60_000, 120_000)]
    )

    results = plan_dir / "results"
    watcher = Watcher(results)
    watcher.start()
    job_id = slurm("sbatch", "--parsable", str(plan_dir / "array.sbatch")).stdout.strip().split(";")[0]

    # Cancel a task while it runs (its dspk has started), then requeue it.
    def running():
        for index, state in slurm.states(job_id).items():
            if state == "RUNNING" and not (results / f"job-{index}.json").exists():
                return index
        return None

    cancelled = None
    for _ in range(5):
        index = wait_for(running, 120, "a running task")
        time.sleep(0.3)
        slurm("scancel", f"{job_id}_{index}")
        info = wait_for(
            lambda: (s := slurm("scontrol", "show", "job", f"{job_id}_{index}").stdout)
            and ("JobState=RUNNING" not in s and "JobState=COMPLETING" not in s) and s,
            30, "the cancelled task to stop",
        )
        if "JobState=CANCELLED" in info and not (results / f"job-{index}.json").exists():
            cancelled = index
            break
    assert cancelled is not None, "no task could be cancelled before it finished"
    # Killed mid-run: no result, no failure record, and no partial file of it.
    left = sorted(p.name for p in results.iterdir()
                  if p.name.startswith((f"job-{cancelled}.", f".job-{cancelled}.")) and p.suffix != ".log")
    assert left == [], left
    slurm("scontrol", "requeue", f"{job_id}_{cancelled}")
    # A requeued job waits (BeginTime) before it is eligible again; make it eligible now.
    slurm("scontrol", "update", f"jobid={job_id}_{cancelled}", "starttime=now")

    wait_for(lambda: not slurm.states(job_id), 300, "every task to finish")
    watcher.stop.set()
    watcher.join()
    assert watcher.problems == [], watcher.problems
    assert watcher.reads > 0
    assert not [p.name for p in results.iterdir() if p.name.endswith(".dspk-tmp")]

    gathered = subprocess.run([dspk_program, "gather", str(plan_dir), "--json"], capture_output=True, text=True)
    assert gathered.returncode == 0, gathered.stderr
    report = json.loads(gathered.stdout)
    assert (report["jobs"], report["done"], report["failed"], report["missing"]) == (7, 7, [], [])
    assert json.loads((plan_dir / "gathered.json").read_text()) == report
    by_job = {r["job"]["job"]: r for r in report["results"]}
    assert sorted(by_job) == list(range(7))
    assert by_job[cancelled]["provenance"]["environment"]["SLURM_RESTART_COUNT"] == "1"
    for job in jobs:
        record = by_job[job["job"]]
        path = None if job["recording"] is None else data / job["recording"]
        here = local_scan(dspk_program, path, job["start_sample"], job["end_sample"], job.get("synthetic_samples"))
        assert figures(record["result"]) == figures(here), job
        prov = record["provenance"]
        assert prov["environment"]["SLURM_ARRAY_TASK_ID"] == str(job["job"])
        assert prov["environment"]["SLURM_ARRAY_JOB_ID"] == job_id
        if path is not None:
            sizes = {f["path"]: f["size"] for f in prov["inputs"]}
            assert sizes[job["recording"]] == path.stat().st_size

    # The whole array again: every task finds its result and skips; nothing is rewritten.
    before = {p.name: p.stat().st_mtime_ns for p in results.glob("job-*.json")}
    again = slurm("sbatch", "--parsable", "--wait", str(plan_dir / "array.sbatch"))
    assert again.returncode == 0, again.stderr
    assert {p.name: p.stat().st_mtime_ns for p in results.glob("job-*.json")} == before
    log = (results / "job-3.log").read_text()
    assert "done already" in log, log


def test_a_preprocess_array_writes_the_same_file_as_one_run(slurm, dspk_program, runtime, tmp_path, rng):  # noqa: F811
    """`dspk plan --preprocess kilosort4` over one recording cut into 4 jobs, run as a Slurm
    array, gathered: the one output file equals one `dspk preprocess` of the recording bit for
    bit (windows that do not divide the chunks: the seams are exact). A job whose part is lost
    runs again alone and the output is the same again."""
    data = tmp_path / "data"
    samples = int(rng.integers(int(3.6 * RATE), 4 * RATE))
    recording, probe = write_probed(data, rng, channels=10, samples=samples)
    plan_dir = tmp_path / "jobs"
    env = dict(slurm.env, DSPK_RUNTIME=runtime)
    planned = subprocess.run(
        [dspk_program, "plan", str(recording), "--preprocess", "kilosort4", "--probe", str(probe),
         "--chunk", "1", "--window-samples", "7000", "--base", str(data), "--out", str(plan_dir),
         "--json"],
        capture_output=True, text=True, env=env,
    )
    assert planned.returncode == 0, planned.stderr
    assert json.loads(planned.stdout)["jobs"] == 4
    plan = json.loads((plan_dir / "plan.json").read_text())
    assert plan["command"] == "preprocess"
    assert [(j["start_sample"], j["end_sample"], j["output"]) for j in plan["jobs"]] == [
        (0, RATE, 0), (RATE, 2 * RATE, 0), (2 * RATE, 3 * RATE, 0), (3 * RATE, samples, 0)
    ]
    fitted = json.loads((plan_dir / "preprocess" / "rec-0.json").read_text())
    assert fitted["jobs"] == [0, 1, 2, 3] and fitted["fits"]["whitening"]

    submitted = slurm("sbatch", "--parsable", "--wait", "--export", f"ALL,DSPK_RUNTIME={runtime}",
                      str(plan_dir / "array.sbatch"), check=False)
    assert submitted.returncode == 0, (submitted.stderr, [
        p.read_text() for p in (plan_dir / "results").glob("*.log")])
    gathered = subprocess.run([dspk_program, "gather", str(plan_dir), "--json"],
                              capture_output=True, text=True)
    assert gathered.returncode == 0, gathered.stderr
    report = json.loads(gathered.stdout)
    assert (report["jobs"], report["done"], report["failed"], report["missing"]) == (4, 4, [], [])
    assert [o["output"] for o in report["outputs"]] == ["outputs/rec-0.bin"]
    for r in report["results"]:
        assert r["provenance"]["environment"]["SLURM_ARRAY_TASK_ID"] == str(r["job"]["job"])
        assert r["result"]["report"]["plan"]["samples"] == r["job"]["end_sample"] - r["job"]["start_sample"]

    whole = tmp_path / "whole.bin"
    preprocess(dspk_program, runtime, recording, probe, whole, "--pipeline", "kilosort4")
    assembled = plan_dir / "outputs" / "rec-0.bin"
    assert len(whole.read_bytes()) == 10 * samples * 2
    assert assembled.read_bytes() == whole.read_bytes()
    assert sidecar_without_provenance(assembled) == sidecar_without_provenance(whole)
    merged = json.loads(Path(f"{assembled}.json").read_text())["provenance"]
    one = json.loads(Path(f"{whole}.json").read_text())["provenance"]
    assert merged["fits"] == one["fits"]
    assert [p["job"] for p in merged["parts"]] == [0, 1, 2, 3]
    assert merged["report"]["plan"]["samples"] == samples

    # A part lost (its result and file gone): the array again runs that job alone.
    (plan_dir / "results" / "job-2.json").unlink()
    (plan_dir / "outputs" / "job-2.bin").unlink()
    before = {p.name: p.stat().st_mtime_ns for p in (plan_dir / "results").glob("job-*.json")}
    again = slurm("sbatch", "--parsable", "--wait", "--export", f"ALL,DSPK_RUNTIME={runtime}",
                  str(plan_dir / "array.sbatch"), check=False)
    assert again.returncode == 0, again.stderr
    after = {p.name: p.stat().st_mtime_ns for p in (plan_dir / "results").glob("job-*.json")}
    assert {k: v for k, v in after.items() if k != "job-2.json"} == before
    assert "job-2.json" in after
    assert "done already" in (plan_dir / "results" / "job-1.log").read_text()
    gathered = subprocess.run([dspk_program, "gather", str(plan_dir)], capture_output=True, text=True)
    assert gathered.returncode == 0, gathered.stderr
    assert "assembled" in gathered.stdout
    assert assembled.read_bytes() == whole.read_bytes()


def test_a_detect_array_writes_the_same_table_as_one_run(slurm, dspk_program, runtime, tmp_path, rng):  # noqa: F811
    """`dspk plan --detect --pipeline kilosort4` over one recording cut into 4 jobs, run as a
    Slurm array, gathered: the one table equals one `dspk detect` of the recording byte for
    byte (the noise levels and whitening fitted once in the plan step, windows that do not
    divide the chunks), and NumPy reads it as SpikeInterface's peak dtype."""
    data = tmp_path / "data"
    samples = int(rng.integers(int(3.6 * RATE), 4 * RATE))
    recording, probe = write_probed(data, rng, channels=10, samples=samples)
    plan_dir = tmp_path / "jobs"
    options = ["--pipeline", "kilosort4", "--threshold", "3.5", "--radius", "40",
               "--exclude-sweep", "0.2"]
    env = dict(slurm.env, DSPK_RUNTIME=runtime)
    planned = subprocess.run(
        [dspk_program, "plan", str(recording), "--detect", *options, "--probe", str(probe),
         "--chunk", "1", "--window-samples", "7000", "--base", str(data), "--out", str(plan_dir),
         "--json"],
        capture_output=True, text=True, env=env,
    )
    assert planned.returncode == 0, planned.stderr
    assert (json.loads(planned.stdout)["jobs"], json.loads(planned.stdout)["fitted"]) == (4, 1)
    plan = json.loads((plan_dir / "plan.json").read_text())
    assert plan["command"] == "detect"
    assert plan["options"]["detect"] == {"threshold": 3.5, "sign": "neg", "radius_um": 40.0,
                                         "exclude_sweep_ms": 0.2}
    fitted = json.loads((plan_dir / "detect" / "rec-0.json").read_text())
    assert fitted["jobs"] == [0, 1, 2, 3] and fitted["fitted"]["fits"]["whitening"]

    submitted = slurm("sbatch", "--parsable", "--wait", "--export", f"ALL,DSPK_RUNTIME={runtime}",
                      str(plan_dir / "array.sbatch"), check=False)
    assert submitted.returncode == 0, (submitted.stderr, [
        p.read_text() for p in (plan_dir / "results").glob("*.log")])
    gathered = subprocess.run([dspk_program, "gather", str(plan_dir), "--json"],
                              capture_output=True, text=True)
    assert gathered.returncode == 0, gathered.stderr
    report = json.loads(gathered.stdout)
    assert (report["jobs"], report["done"], report["failed"], report["missing"]) == (4, 4, [], [])
    [table] = report["tables"]
    assert (table["output"], table["parts"]) == ("outputs/rec-0.npy", 4)

    whole = tmp_path / "whole.npy"
    done = subprocess.run(
        [dspk_program, "--runtime", runtime, "detect", str(recording), "--probe", str(probe),
         "-o", str(whole), *options, "--json"],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    one = json.loads(done.stdout)["report"]
    # The same noise levels to the last bit (JSON prints each f64 exactly), so the same
    # thresholds.
    assert fitted["fitted"]["noise"] == one["noise_uv"] == table["noise_uv"]
    assembled = plan_dir / "outputs" / "rec-0.npy"
    assert assembled.read_bytes() == whole.read_bytes()
    peaks = np.load(assembled)
    assert peaks.dtype.names == ("sample_index", "channel_index", "amplitude", "segment_index")
    # Not an empty agreement: noise crossing 3.5 noise levels gives peaks in every job.
    assert len(peaks) == one["peaks"] == table["peaks"] and len(peaks) > 20
    assert np.all(np.diff(peaks["sample_index"]) >= 0)
    for r in report["results"]:
        start, end = r["job"]["start_sample"], r["job"]["end_sample"]
        inside = int(np.count_nonzero((peaks["sample_index"] >= start) & (peaks["sample_index"] < end)))
        assert r["result"]["peaks"] == inside > 0
        assert r["provenance"]["environment"]["SLURM_ARRAY_TASK_ID"] == str(r["job"]["job"])
