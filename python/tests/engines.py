"""The cluster engines the cluster tests run on, started by scripts in the project: a
single-node Slurm (``tests/cluster/slurm.sh``) and a ``dask.distributed`` ``LocalCluster``; and
what those tests compare: the statistics of a scan, without its timings and device labels."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SLURM_SCRIPT = ROOT / "tests" / "cluster" / "slurm.sh"

# What a scan computed; the rest of its JSON is where and how fast.
SCAN_FIGURES = (
    "channel_count", "sample_rate", "start_sample", "end_sample", "window_samples", "windows",
    "channels", "dead", "noisy", "median_std", "noisy_threshold", "mask", "stored_bytes", "name",
)


def in_ci() -> bool:
    return os.environ.get("CI", "") not in ("", "0", "false")


def missing_engine(why: str):
    """A missing engine fails the test in CI (``CI=true``) and is a visible SKIP elsewhere
    (which still fails the run under ``cargo xtask ci``: see ``conftest.py``)."""
    if in_ci():
        pytest.fail(f"{why} (CI=true: .ci/run installs it; a missing engine is a failure)")
    pytest.skip(f"SKIP: {why}")


def figures(scan: dict) -> dict:
    return {k: scan[k] for k in SCAN_FIGURES}


def local_scan(dspk_program: str, recording, start: int, end: int, synthetic_samples=None) -> dict:
    """``dspk scan --json`` of samples ``start:end``, run here (not on the cluster)."""
    rec = [] if recording is None else [str(recording)]
    extra = [] if synthetic_samples is None else ["--synthetic-duration", f"{synthetic_samples}smp"]
    out = subprocess.run(
        [dspk_program, "scan", *rec, *extra, "--start", f"{start}smp", "--end", f"{end}smp", "--json"],
        capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout)


class Slurm:
    """A running single-node Slurm; ``env`` has its ``SLURM_CONF``."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.env = dict(os.environ, SLURM_CONF=str(folder / "slurm.conf"))

    def __call__(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(list(args), capture_output=True, text=True, env=self.env, check=check, timeout=120)

    def states(self, job_id: str) -> dict:
        """``{array index: state}`` of the array's tasks still known to squeue."""
        out = self("squeue", "-h", "-r", "-j", job_id, "-o", "%K %T", check=False).stdout
        return {int(k): v for k, v in (line.split() for line in out.splitlines() if line.strip())}


@pytest.fixture(scope="session")
def slurm(tmp_path_factory):
    """A single-node Slurm on this machine for the session, stopped after it."""
    folder = tmp_path_factory.mktemp("slurm")
    start = subprocess.run([str(SLURM_SCRIPT), "start", str(folder)], capture_output=True, text=True)
    if start.returncode == 3:
        missing_engine(start.stderr.strip())
    if start.returncode != 0:
        pytest.fail(f"{SLURM_SCRIPT} start failed ({start.returncode}): {start.stderr}")
    try:
        yield Slurm(folder)
    finally:
        subprocess.run([str(SLURM_SCRIPT), "stop", str(folder)], capture_output=True, text=True)
