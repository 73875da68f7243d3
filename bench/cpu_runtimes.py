"""A machine without a GPU, same run: `dspk scan` and each preset (`dspk preprocess` to an int16
file) on wgpu (Mesa's lavapipe) and on CubeCL's native cpu runtime, against SpikeInterface's
chain (band-pass 300-6000 Hz order 5 -> global median reference -> int16 file, `n_jobs` = the
core count) on the same SpikeGLX NP1 recording of random int16 values, alternated by round.

Usage: python bench/cpu_runtimes.py [--seconds 5] [--rounds 2] [--dspk PATH]
Needs a dspk built with the cpu runtime (`--features wgpu,cpu`) and SpikeInterface importable.
Prints one line per run and a table of the best of each, in x real time.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "tests"))
from recordings import write_spikeglx  # noqa: E402
from si_chain_speed import si_chain  # noqa: E402

JOBS = ["scan", "kilosort4", "spikeinterface", "ibl"]


def dspk_run(dspk: str, runtime: str, job: str, rec: Path, out: Path) -> float:
    args = [dspk, "--runtime", runtime]
    if job == "scan":
        args += ["scan", str(rec)]
    else:
        args += ["preprocess", str(rec), "-o", str(out), "--pipeline", job, "--format", "int16"]
    t = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--dspk", default=os.environ.get("DSPK_BIN", "dspk"))
    a = ap.parse_args()
    jobs = os.cpu_count()
    work = Path(tempfile.mkdtemp(prefix="cpu-runtimes-"))
    best: dict = {}
    try:
        rec = write_spikeglx(work / "rec", np.random.default_rng(7), int(a.seconds * 30000))
        for r in range(a.rounds):
            for runtime in ("cpu", "wgpu"):
                for job in JOBS:
                    t = dspk_run(a.dspk, runtime, job, rec.bin, work / "out.bin")
                    best[(runtime, job)] = min(best.get((runtime, job), t), t)
                    print(f"round {r}: dspk {runtime:4s} {job:15s} {t:7.2f} s "
                          f"({a.seconds / t:6.2f} x real time)", flush=True)
            t = si_chain(rec.bin, work / f"si{r}", jobs, False)
            best[("si", "chain")] = min(best.get(("si", "chain"), t), t)
            print(f"round {r}: SpikeInterface chain n_jobs={jobs} {t:7.2f} s "
                  f"({a.seconds / t:6.2f} x real time)", flush=True)
        si = a.seconds / best[("si", "chain")]
        print(f"\nbest of {a.rounds}, {a.seconds:g} s of 385 channels, x real time "
              f"(SpikeInterface's chain: {si:.2f} x)")
        print("| job | lavapipe (wgpu) | native cpu | cpu / lavapipe | cpu / SpikeInterface |")
        print("|---|---:|---:|---:|---:|")
        for job in JOBS:
            lv = a.seconds / best[("wgpu", job)]
            cp = a.seconds / best[("cpu", job)]
            print(f"| {job} | {lv:.2f} | {cp:.2f} | {cp / lv:.2f} | {cp / si:.2f} |")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
