#!/usr/bin/env bash
# Issue 32/33: two dspk binaries alternated (DSPK_OLD, then DSPK) on one file, for a change that
# should keep the bits: K1a (`preprocess --on-device`) with the kilosort4 and spikeinterface
# presets and the detect pass (spikeinterface + detection), ROUNDS rounds; then each binary's
# kilosort4 int16 file and detect table, compared. The file: bench/planted_spikes.py's 30 s
# repeated to SECONDS (a multiple of 30) in /dev/shm, so that making it costs seconds, not a
# minute of device time.
# Usage: bench/k1a-alternate-h200.sh DSPK DSPK_OLD [SECONDS=300] [ROUNDS=3] (python3, NumPy).
set -u
new=$1 old=$2 seconds=${3:-300} rounds=${4:-3}
bench=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d /dev/shm/k1a-alt.XXXXXX)
trap 'rm -rf "$d"' EXIT
mkdir "$d/one"
python3 "$bench/planted_spikes.py" "$d/one" 30 > /dev/null
rec=$d/rec_g0_t0.imec0.ap.bin
for _ in $(seq 1 $((seconds / 30))); do cat "$d/one/rec_g0_t0.imec0.ap.bin"; done > "$rec"
rm -rf "$d/one"
(cd "$bench" && python3 -c "from np1_spikeglx import write_meta; write_meta('$d', $seconds * 30000)")
ondev() { # bin preset label
  "$1" --runtime wgpu --json preprocess "$rec" --pipeline "$2" --on-device \
    | python3 -c 'import json,sys; r=json.load(sys.stdin); print("  [%s] K1a %s apply %.3f s (%.0fx)" % (sys.argv[1], sys.argv[2], r["apply_s"], r["realtime_factor"]))' "$3" "$2"
}
det() { # bin label
  "$1" --runtime wgpu --json detect "$rec" --pipeline spikeinterface -o "$d/$2.npy" \
    | python3 -c 'import json,sys; r=json.load(sys.stdin)["report"]; print("  [%s] detect pass %.3f s (%.0fx), %d peaks" % (sys.argv[1], r["detect_s"], r["realtime_factor"], r["peaks"]))' "$2"
}
echo "== $seconds s"
ondev "$new" kilosort4 warm > /dev/null
for _ in $(seq 1 "$rounds"); do
  for which in old new; do
    bin=$old; [ "$which" = new ] && bin=$new
    ondev "$bin" kilosort4 "$which"
    ondev "$bin" spikeinterface "$which"
    det "$bin" "$which"
  done
done
for which in old new; do
  bin=$old; [ "$which" = new ] && bin=$new
  "$bin" --runtime wgpu --json preprocess "$rec" --pipeline kilosort4 -o "$d/$which.bin" > /dev/null
done
cmp "$d/old.bin" "$d/new.bin" && echo "  kilosort4 int16 files: the same bytes ($(stat -c %s "$d/new.bin") B)"
python3 -c "
import numpy as np
a = np.load('$d/old.npy'); b = np.load('$d/new.npy')
print('  detect tables equal:', a.dtype == b.dtype and a.shape == b.shape and bool((a == b).all()), a.shape)"
