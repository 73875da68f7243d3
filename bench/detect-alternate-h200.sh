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
python3 "$bench/planted_spikes.py" "$d" "$1" > /dev/null
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
