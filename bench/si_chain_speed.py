"""Same-host speed of `dspk preprocess --pipeline spikeinterface` against SpikeInterface's own
chain (band-pass 300-6000 Hz order 5 -> global median reference -> int16 file; with
`--phase-shift`, SpikeInterface's `phase_shift` first and dspk's preset whole, else dspk's preset
without its phase-shift stage), on one SpikeGLX NP1 recording of random int16 values written here.

Usage: python bench/si_chain_speed.py [--seconds 10] [--jobs N] [--rounds 2] [--dspk PATH]
                                      [--phase-shift]
Prints one line per run and the best of each; `--jobs` is SpikeInterface's n_jobs (default: every
core). The two are alternated so that a busy machine slows both alike.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "tests"))
from recordings import write_spikeglx  # noqa: E402


def si_chain(bin_path: Path, out: Path, jobs: int, shift: bool) -> float:
    import spikeinterface.extractors as se
    import spikeinterface.preprocessing as spre

    t = time.perf_counter()
    rec = se.read_spikeglx(bin_path.parent, stream_id="imec0.ap")
    if shift:
        rec = spre.phase_shift(rec)
    rec = spre.bandpass_filter(rec, freq_min=300.0, freq_max=6000.0, filter_order=5)
    rec = spre.common_reference(rec, reference="global", operator="median")
    rec.save(folder=out, format="binary", dtype="int16", n_jobs=jobs, chunk_duration="1s",
             progress_bar=False, overwrite=True)
    return time.perf_counter() - t


def dspk_chain(dspk: str, bin_path: Path, out: Path, pipeline: str) -> float:
    t = time.perf_counter()
    subprocess.run([dspk, "preprocess", str(bin_path), "-o", str(out), "--pipeline",
                    pipeline, "--format", "int16"], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--dspk", default=os.environ.get("DSPK_BIN", "dspk"))
    ap.add_argument("--phase-shift", action="store_true")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="si-chain-"))
    try:
        pipeline = "spikeinterface"
        if not a.phase_shift:
            toml = subprocess.run([a.dspk, "preprocess", "--print-pipeline", pipeline],
                                  check=True, capture_output=True, text=True).stdout
            kept = [s for s in toml.split("[[stages]]") if 'kind = "phase_shift"' not in s]
            pipeline = str(work / "no-shift.toml")
            Path(pipeline).write_text("[[stages]]".join(kept))
        rec = write_spikeglx(work / "rec", np.random.default_rng(7), int(a.seconds * 30000))
        si, ds = [], []
        for r in range(a.rounds):
            ds.append(dspk_chain(a.dspk, rec.bin, work / f"dspk{r}.bin", pipeline))
            si.append(si_chain(rec.bin, work / f"si{r}", a.jobs, a.phase_shift))
            print(f"round {r}: dspk {ds[-1]:.2f} s ({a.seconds / ds[-1]:.2f} x real time), "
                  f"SpikeInterface n_jobs={a.jobs} {si[-1]:.2f} s ({a.seconds / si[-1]:.2f} x)")
        print(f"best: dspk {a.seconds / min(ds):.2f} x real time, SpikeInterface "
              f"{a.seconds / min(si):.2f} x, ratio {min(si) / min(ds):.2f}")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
