#!/usr/bin/env bash
# Issue 33: the detect pass of two dspk binaries alternated (DSPK_OLD, then DSPK), beside
# `preprocess --on-device` of the same preset; files with planted spikes in /dev/shm
# (bench/detect-h200.sh's generator), SECONDS each (default "60 300"), three rounds.
# Usage: bench/detect-alternate-h200.sh DSPK DSPK_OLD [SECONDS...] (python3 with NumPy).
set -u
new=$1 old=$2; shift 2
seconds=("${@:-60 300}")
bench=$(dirname "$0")
d=$(mktemp -d /dev/shm/detect-alt.XXXXXX)
trap 'rm -rf "$d"' EXIT
gen() {
python3 - $d $1 "$bench" <<'PY'
import sys
import numpy as np
sys.path.insert(0, sys.argv[3])
from np1_spikeglx import write_meta
d, seconds = sys.argv[1], int(sys.argv[2])
n, c = seconds * 30000, 385
rng = np.random.default_rng(7)
shape = np.exp(-((np.arange(-4, 5) / 2.0) ** 2))
with open(f"{d}/rec_g0_t0.imec0.ap.bin", "wb") as f:
    for start in range(0, n, 300000):
        m = min(300000, n - start)
        block = rng.normal(0, 20, size=(m, c)).astype(np.int16)
        block[:, :384] += rng.integers(-400, 400, size=384, dtype=np.int16)
        times = np.arange(10, m - 10, 90)
        chans = rng.integers(1, 383, size=len(times))
        amps = rng.uniform(150, 300, size=len(times))
        for k, s in enumerate(shape):
            for dc, w in ((-1, 0.5), (0, 1.0), (1, 0.5)):
                block[times + k - 4, chans + dc] -= (amps * s * w).astype(np.int16)
        block[:, 384] = 0
        block.tofile(f)
write_meta(d, n)
PY
}
rec=$d/rec_g0_t0.imec0.ap.bin
det() { # bin label
  local t0 t1
  t0=$(date +%s.%N)
  $1 --runtime wgpu --json detect $rec --pipeline spikeinterface -o $d/$2.npy > $d/$2.json
  t1=$(date +%s.%N)
  python3 - $d/$2.json $t0 $t1 $2 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["report"]
w = float(sys.argv[3]) - float(sys.argv[2])
print(f"  [{sys.argv[4]}] process {w:.2f} s, noise fit {r['fit_s']:.3f} s, detect pass {r['detect_s']:.3f} s ({r['realtime_factor']:.0f}x), {r['peaks']} peaks")
PY
}
ondev() { $1 --runtime wgpu --json preprocess $rec --pipeline spikeinterface --on-device | python3 -c 'import json,sys; r=json.load(sys.stdin); print("  [on device, spikeinterface] apply %.3f s (%.0fx)" % (r["apply_s"], r["realtime_factor"]))'; }
for s in ${seconds[@]}; do
  gen $s; cat $rec > /dev/null
  echo "== $s s"
  det "$new" warm > /dev/null
  for r in 1 2 3; do
    ondev "$new"
    det "$old" old
    det "$new" new
  done
  python3 -c "
import numpy as np, sys
a = np.load('$d/old.npy'); b = np.load('$d/new.npy')
print('  old vs new tables equal:', a.dtype == b.dtype and a.shape == b.shape and bool((a == b).all()), a.shape)"
done
