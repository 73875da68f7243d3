"""The Python figures of the benchmark plan (P1, P2, P3), each against its baseline measured in
the same run, alternated round by round, medians of the rounds.

- P1: ``Recording.read(out=)`` of every channel, 1 s windows, vs the Rust read of the same
  windows (``dspk bench``'s H1: the window loader over the same file), GB/s counting 2 B read +
  4 B written per value.
- P2: ``DspkRecording.get_traces(return_in_uV=True)`` vs SpikeInterface's ``read_spikeglx``
  on the same file, 1 s chunks, every channel, GB/s of int16 read.
- P3: ``dspk.scan`` from Python vs the ``dspk scan`` program on the same file, stored MB/s of
  the device pass (both from the pass's own wall time).

    python python/bench/bench_python.py --dspk target/release/dspk [--seconds 20] [--rounds 5]

Writes a SpikeGLX NP1.0 file (385 channels, int16, random values) in a temporary directory and
prints a Markdown table (``--json`` for JSON).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from recordings import write_spikeglx  # noqa: E402  (the tests' own SpikeGLX writer)

import dspk  # noqa: E402


def p1_python(rec, second: int, out: np.ndarray) -> float:
    # `out` is the caller's, kept between rounds as H1's loader keeps its buffers between
    # passes (and as a reader that passes out= does): its pages are touched once, in the
    # warm-up, not in every timed round.
    started = time.perf_counter()
    for start in range(0, rec.samples - second + 1, second):
        rec.read(start=start, stop=start + second, out=out)
    elapsed = time.perf_counter() - started
    values = (rec.samples // second) * second * rec.channel_count
    return values * 6 / elapsed / 1e9


def p1_program(dspk_bin: str, path: Path) -> float:
    run = subprocess.run([dspk_bin, "bench", str(path), "--json"], capture_output=True, text=True, check=True)
    rows = json.loads(run.stdout)
    rows = rows["rows"] if isinstance(rows, dict) else rows
    return next(r["value"] for r in rows if r["id"] == "H1")


def p2(recording, second: int) -> float:
    n = recording.get_num_samples()
    started = time.perf_counter()
    for start in range(0, n - second + 1, second):
        recording.get_traces(start_frame=start, end_frame=start + second, return_in_uV=True)
    elapsed = time.perf_counter() - started
    return (n // second) * second * recording.get_num_channels() * 2 / elapsed / 1e9


def p3_python(rec) -> float:
    return dspk.scan(rec, progress=False).throughput_mb_s


def p3_program(dspk_bin: str, path: Path) -> float:
    run = subprocess.run([dspk_bin, "scan", str(path), "--json"], capture_output=True, text=True, check=True)
    return json.loads(run.stdout)["throughput_mb_s"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dspk", required=True, help="the dspk program")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=None, help="where to write the recording (default: a temporary directory)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        rng = np.random.default_rng(int(time.time_ns() % 2**32))
        f = write_spikeglx(Path(tmp) / "sglx", rng, samples=int(args.seconds * 30000))
        rec = dspk.open(f.bin)
        second = 30000
        try:
            from dspk.spikeinterface import DspkRecording
            import spikeinterface.extractors as se

            ours, theirs = DspkRecording(f.bin), se.read_spikeglx(f.folder, stream_id="imec0.ap")
        except ImportError:
            ours = theirs = None
        figures = {"P1": ([], []), "P2": ([], []), "P3": ([], [])}
        out = np.empty((rec.channel_count, second), dtype=np.float32)
        # Warm-up: page cache, the output's pages, device, kernel caches.
        p1_python(rec, second, out), p3_python(rec), p3_program(args.dspk, f.bin)
        for _ in range(args.rounds):
            figures["P1"][0].append(p1_python(rec, second, out))
            figures["P1"][1].append(p1_program(args.dspk, f.bin))
            figures["P3"][0].append(p3_python(rec))
            figures["P3"][1].append(p3_program(args.dspk, f.bin))
        # P2 last: on the H200, the first device passes of this process after SpikeInterface's
        # read_spikeglx read the file (through Neo's memmap) ran at less than half speed
        # (python/bench/p3diag.py), which would have charged SpikeInterface's cost to P3.
        for _ in range(args.rounds if ours is not None else 0):
            figures["P2"][0].append(p2(ours, second))
            figures["P2"][1].append(p2(theirs, second))

    what = {
        "P1": ("Recording.read(out=), 385 ch, 1 s windows", "dspk bench H1 (Rust read, window loader)", "GB/s", 0.9),
        "P2": ("DspkRecording.get_traces(return_in_uV=True), 1 s", "SpikeInterface read_spikeglx, same", "GB/s", 3.0),
        "P3": ("dspk.scan from Python", "dspk scan (program)", "MB/s", 0.95),
    }
    rows = []
    for key, (ours_v, base_v) in figures.items():
        if not ours_v:
            continue
        a, b = statistics.median(ours_v), statistics.median(base_v)
        rows.append({
            "id": key, "figure": what[key][0], "value": a, "spread": [min(ours_v), max(ours_v)],
            "baseline": what[key][1], "baseline_value": b, "baseline_spread": [min(base_v), max(base_v)],
            "unit": what[key][2], "ratio": a / b, "target": what[key][3],
        })
    if args.json:
        print(json.dumps({"seconds": args.seconds, "rounds": args.rounds, "rows": rows}, indent=2))
        return
    print(f"{args.seconds:g} s SpikeGLX NP1.0 (385 ch int16), {args.rounds} rounds, medians (min–max)\n")
    print("| # | figure | value | baseline (same run) | baseline value | ratio | target |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['id']} | {r['figure']} | {r['value']:.3g} {r['unit']} ({r['spread'][0]:.3g}–{r['spread'][1]:.3g}) "
            f"| {r['baseline']} | {r['baseline_value']:.3g} {r['unit']} ({r['baseline_spread'][0]:.3g}–{r['baseline_spread'][1]:.3g}) "
            f"| {r['ratio']:.2f} × | ≥ {r['target']} × |"
        )


if __name__ == "__main__":
    main()
