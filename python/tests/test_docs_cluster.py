"""Every code block of ``docs/cluster.md`` run as written: the shell blocks in one bash
session on the single-node Slurm (``tests/cluster/slurm.sh``), the Nextflow processes' scripts
with ``params.plan`` and ``job`` filled in, the Python blocks in a child process (the
``SLURMCluster`` one on the same Slurm, without its ``--gres`` line: that Slurm has no GPUs)."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import dspk
from engines import ROOT, missing_engine, slurm  # noqa: F401  (slurm: the fixture)
from recordings import write_spikeglx

PAGE = ROOT / "docs" / "cluster.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", PAGE.read_text(), flags=re.S | re.M)


def test_the_page_has_the_blocks_this_test_runs():
    languages = re.findall(r"^```(\w*)$", PAGE.read_text(), flags=re.M)
    opening = languages[0::2]
    assert sorted(set(opening)) == ["groovy", "python", "sh"], opening
    assert len(blocks("sh")) == 3 and len(blocks("python")) == 2 and len(blocks("groovy")) == 1


@pytest.fixture
def data(tmp_path, rng):
    folder = tmp_path / "data"
    for name in ("m1", "m2"):
        write_spikeglx(folder / name, rng, samples=int(rng.integers(45_000, 60_000)))
    return folder


def session_env(slurm, dspk_program, data):  # noqa: F811
    env = dict(slurm.env, DATA=str(data))
    env["PATH"] = f"{Path(dspk_program).parent}{os.pathsep}{env['PATH']}"
    return env


def test_shell_and_nextflow_blocks(slurm, dspk_program, data, tmp_path):  # noqa: F811
    work = tmp_path / "work"
    work.mkdir()
    env = session_env(slurm, dspk_program, data)
    script = "set -euo pipefail\n" + "\n".join(blocks("sh"))
    run = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "#SBATCH --array=0-3" in run.stdout  # `cat jobs/array.sbatch`: 2 recordings × 2 s
    assert "4 of 4 scan jobs done" in run.stdout, run.stdout
    assert "done already" in run.stdout  # `dspk run jobs --job 0 --base "$DATA"`
    report = json.loads((work / "jobs" / "gathered.json").read_text())
    assert (report["done"], report["failed"], report["missing"]) == (4, [], [])

    # The Nextflow processes' scripts, as Nextflow would fill them in.
    groovy = blocks("groovy")[0]
    scripts = re.findall(r'"""\n(.*?)"""', groovy, flags=re.S)
    assert len(scripts) == 2
    for body in scripts:
        command = body.strip().replace("${params.plan}", str(work / "jobs")).replace("${job}", "2")
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, command + done.stderr
    assert json.loads(done.stdout)["done"] == 4


def test_python_blocks(slurm, dspk_program, data, tmp_path):  # noqa: F811
    try:
        import dask_jobqueue  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as e:
        missing_engine(f"{e.name} is not installed: pip install dask distributed dask-jobqueue")
    env = session_env(slurm, dspk_program, data)
    local, slurm_block = blocks("python")
    assert '["--gres=gpu:1"]' in slurm_block

    def run(code: str) -> str:
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    # The LocalCluster block prints `path dead` per recording, or `path error` for one that
    # failed: each line must carry the dead channels of the same scan run here.
    recordings = sorted(str(p) for p in data.glob("*/*.ap.bin"))
    assert len(recordings) == 2, recordings
    printed = {}
    for line in run(local).splitlines():
        path, _, rest = line.partition(" ")
        printed[path] = rest
    assert sorted(printed) == recordings, printed
    for path in recordings:
        try:
            dead = ast.literal_eval(printed[path])
        except (ValueError, SyntaxError):
            raise AssertionError(f"{path} failed on the LocalCluster: {printed[path]}") from None
        assert dead == dspk.scan(dspk.open(path), progress=False).dead, (path, dead)

    out = run(slurm_block.replace('["--gres=gpu:1"]', "[]"))
    assert out.strip().splitlines()[-1] == f"{len(recordings)} of {len(recordings)} scanned", out
