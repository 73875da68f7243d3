#!/usr/bin/env bash
# Issue 34's F1 figure: an mtscomp .cbin streaming through `dspk scan` (the device pass) against
# mtscomp's own reader and SpikeInterface's read_cbin_ibl on the same file, in the same run.
# A SECONDS-long, 384-channel (+ sync) int16 SpikeGLX-like file (Gaussian noise of 20 counts,
# per-channel offsets: compresses to about what IBL's recordings do) is compressed by mtscomp
# (1 s chunks, F order, as IBL writes) with the .meta beside it, then read by each reader in
# 1 s windows; every figure is × real time (SECONDS of recording / wall seconds).
# Usage: bench/cbin-h200.sh DSPK [SECONDS [BASELINE_SECONDS]] (python3 with NumPy; mtscomp and
# SpikeInterface importable, e.g. from PYTHONPATH). The Python readers read the first
# BASELINE_SECONDS (default 20) only: at about real time they would take the whole budget.
set -euo pipefail
dspk=$1 seconds=${2:-60} base_s=${3:-20}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
threads=$(nproc)
python3 - "$dir" "$seconds" "$threads" "$(dirname "$0")" <<'PY'
import sys, time
import numpy as np
sys.path.insert(0, sys.argv[4])
from np1_spikeglx import write_meta
d, seconds, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
n, c = seconds * 30000, 385
rng = np.random.default_rng(7)
bin_path = f"{d}/rec_g0_t0.imec0.ap.bin"
with open(bin_path, "wb") as f:
    for start in range(0, n, 300000):
        m = min(300000, n - start)
        block = (rng.standard_normal((m, c), dtype=np.float32) * 20).astype(np.int16)
        block[:, :384] += rng.integers(-400, 400, size=384, dtype=np.int16)
        block[:, 384] = 0
        block.tofile(f)
write_meta(d, n)
import mtscomp
t0 = time.perf_counter()
mtscomp.compress(bin_path, f"{d}/rec_g0_t0.imec0.ap.cbin", f"{d}/rec_g0_t0.imec0.ap.ch", sample_rate=30000.0,
                 n_channels=c, dtype=np.int16, chunk_duration=1.0, n_threads=threads, check_after_compress=False, quiet=True)
import os
print(f"mtscomp compress: {time.perf_counter() - t0:.2f} s on {threads} threads; "
      f"{os.path.getsize(bin_path) / 1e6:.0f} MB -> {os.path.getsize(f'{d}/rec_g0_t0.imec0.ap.cbin') / 1e6:.0f} MB")
PY
cbin=$dir/rec_g0_t0.imec0.ap.cbin
cat "$cbin" "$dir/rec_g0_t0.imec0.ap.bin" > /dev/null
echo "host: $threads cores; recording: $seconds s, 385 ch"
echo "== dspk info --verify (both SHA-1s, every chunk decoded)"
t0=$(date +%s.%N); "$dspk" info --verify "$cbin" > /dev/null; t1=$(date +%s.%N)
python3 -c "print(f'verify: {$t1 - $t0:.2f} s, {$seconds / ($t1 - $t0):.0f} x real time')"
for rep in 1 2 3; do
  echo "== dspk scan .cbin (rep $rep)"
  t0=$(date +%s.%N); "$dspk" scan "$cbin" 2>&1 | grep -E "throughput|on (wgpu|cuda)" ; t1=$(date +%s.%N)
  python3 -c "print(f'dspk scan .cbin wall: {$t1 - $t0:.2f} s, {$seconds / ($t1 - $t0):.1f} x real time')"
done
echo "== dspk scan .bin (the same samples uncompressed, for reference)"
t0=$(date +%s.%N); "$dspk" scan "$dir/rec_g0_t0.imec0.ap.bin" 2>&1 | grep -E "throughput"; t1=$(date +%s.%N)
python3 -c "print(f'dspk scan .bin wall: {$t1 - $t0:.2f} s, {$seconds / ($t1 - $t0):.1f} x real time')"
python3 - "$cbin" "$base_s" "$threads" <<'PY'
import sys, time
import numpy as np
cbin, base_s, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
n = base_s * 30000
import mtscomp
r = mtscomp.Reader(n_threads=threads)
r.open(cbin, cbin[:-5] + ".ch")
t0 = time.perf_counter()
for a in range(0, n, 30000):
    x = r[a:a + 30000]
t = time.perf_counter() - t0
print(f"mtscomp Reader, 1 s slices, {threads} threads: {base_s} s in {t:.2f} s, {base_s / t:.1f} x real time")
r.close()
r = mtscomp.Reader(n_threads=threads)
r.open(cbin, cbin[:-5] + ".ch")
t0 = time.perf_counter()
chunks = list(range(base_s))
pool = r.start_thread_pool()
for first in range(0, base_s, threads):
    r.decompress_chunks(chunks[first:first + threads], pool=pool)
t = time.perf_counter() - t0
print(f"mtscomp Reader.decompress_chunks, batches of {threads}: {base_s} s in {t:.2f} s, {base_s / t:.1f} x real time")
try:
    import spikeinterface.extractors as se
    rec = se.read_cbin_ibl(cbin_file_path=cbin)
    t0 = time.perf_counter()
    for a in range(0, n, 30000):
        x = rec.get_traces(start_frame=a, end_frame=a + 30000, return_in_uV=True)
    t = time.perf_counter() - t0
    print(f"SpikeInterface read_cbin_ibl get_traces(return_in_uV=True), 1 s chunks: {base_s} s in {t:.2f} s, {base_s / t:.1f} x real time")
except Exception as e:
    print(f"SpikeInterface read_cbin_ibl: failed: {type(e).__name__}: {e}")
PY
