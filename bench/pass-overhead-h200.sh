#!/usr/bin/env bash
# Where does the preprocessing pass lose time that `dspk scan` does not (issue 32)? On one
# host, alternated over ROUNDS: `scan` and `preprocess --on-device` with no stage, each on the
# 60 s SpikeGLX file (385 channels; preprocess reads its 384 signal channels, a channel subset)
# and on the same 384 signal channels written as a raw file (no subset); then K1b (kilosort4 ->
# int16 file) on /dev/shm and /tmp with the run's own split of the apply pass into writing and
# waiting for the devices, beside `dd conv=fsync` of the same bytes. With DSPK_EXP set to another
# binary, K1b runs with it too (DSPK_EXP_COPY=1 in its environment).
# With BLOCKS ("4096 1024"), K1a of the kilosort4 preset at each block_samples, alternated.
# Usage: bench/pass-overhead-h200.sh DSPK [SECONDS [ROUNDS]] (python3 with NumPy).
set -euo pipefail
dspk=$1 seconds=${2:-60} rounds=${3:-3}
exp=${DSPK_EXP:-}
dir=$(mktemp -d /dev/shm/po.XXXXXX)
trap 'rm -rf "$dir" /tmp/po-out' EXIT
mkdir -p /tmp/po-out
python3 "$(dirname "$0")/np1_spikeglx.py" "$dir" "$seconds"
glx=$dir/rec_g0_t0.imec0.ap.bin
raw=$dir/raw384.bin
python3 - "$glx" "$raw" <<'PY'
import sys, numpy as np
a = np.fromfile(sys.argv[1], dtype=np.int16).reshape(-1, 385)
np.ascontiguousarray(a[:, :384]).tofile(sys.argv[2])
open(sys.argv[2] + ".json", "w").write('{"sample_rate": "30000", "channel_count": 384, "format": "int16", "order": "time-major"}\n')
PY
"$dspk" preprocess --print-pipeline kilosort4 > "$dir/full.toml"
python3 - "$dir" <<'PY'
import sys
d = sys.argv[1]
head = open(f"{d}/full.toml").read().split("[[stages]]")[0]
open(f"{d}/none.toml", "w").write(head + "stages = []\n")
PY
scan() { "$dspk" --runtime wgpu --json scan "$1" | python3 -c 'import json, sys; r = json.load(sys.stdin); print("pass %.3f s" % r["wall_s"])' 2>/dev/null || "$dspk" --runtime wgpu --json scan "$1" | head -c 600; }
none() { "$dspk" --runtime wgpu --json preprocess "$1" --pipeline "$dir/none.toml" --on-device |
    python3 -c 'import json, sys; r = json.load(sys.stdin); print("apply %.3f s, pass %.3f s, setup %.3f s" % (r["apply_s"], r["pass_wall_s"], r["pass_setup_s"]))'; }
scan "$glx" > /dev/null; none "$glx" > /dev/null
for r in $(seq "$rounds"); do
    echo "round $r: scan 385-ch SpikeGLX: $(scan "$glx")"
    echo "round $r: scan 384-ch raw:      $(scan "$raw")"
    echo "round $r: no stage, SpikeGLX (384 of 385): $(none "$glx")"
    echo "round $r: no stage, 384-ch raw:            $(none "$raw")"
done
for b in ${BLOCKS:-}; do
    sed "s/^block_samples = .*/block_samples = $b/" "$dir/full.toml" > "$dir/block-$b.toml"
done
for r in $(seq "$rounds"); do
    for b in ${BLOCKS:-}; do
        echo "round $r: K1a kilosort4 at block_samples $b: $("$dspk" --runtime wgpu --json preprocess "$glx" --pipeline "$dir/block-$b.toml" --on-device | python3 -c 'import json, sys; r = json.load(sys.stdin); print("apply %.3f s" % r["apply_s"])')"
    done
done
int16_bytes=$((seconds * 30000 * 384 * 2))
dd_rate() {
    local n=$(( ($1 + 16777215) / 16777216 )) t0 t1
    t0=$(date +%s.%N); dd if=/dev/zero of="$2/dd.bin" bs=16M count=$n conv=fsync status=none; t1=$(date +%s.%N)
    rm -f "$2/dd.bin"; python3 -c "print(round($n * 16777216 / 1e6 / ($t1 - $t0), 1))"
}
k1b() { # bin where label [env]
    env ${4:-} "$1" --runtime wgpu --json preprocess "$glx" --pipeline kilosort4 --format int16 -o "$2/k.bin" 2> "$dir/err" > "$dir/k.json"
    python3 - "$dir/k.json" "$3" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["report"]
b = r["plan"]["output_bytes"]
f = json.load(open(sys.argv[1]))["finish_s"]
print(f"  [{sys.argv[2]}] apply {r['apply_s']:.3f} s ({b / 1e6 / r['apply_s']:.0f} MB/s), writing {r['write_s']:.3f} s ({b / 1e6 / max(r['write_s'], 1e-9):.0f} MB/s while writing), waiting {r['wait_s']:.3f} s; finish {f:.3f} s; apply + finish {b / 1e6 / (r['apply_s'] + f):.0f} MB/s")
PY
    grep EXP "$dir/err" | tail -1 || true
    rm -f "$2/k.bin" "$2/k.bin.json"
}
for where in /dev/shm "/tmp/po-out"; do
    echo "K1b kilosort4 -> $where: dd $(dd_rate $int16_bytes $where) MB/s"
    for r in $(seq "$rounds"); do
        echo "  [K1a, kept on the device] $("$dspk" --runtime wgpu --json preprocess "$glx" --pipeline kilosort4 --on-device | python3 -c 'import json, sys; r = json.load(sys.stdin); print("apply %.3f s" % r["apply_s"])')"
        k1b "$dspk" "$where" new
        [ -n "$exp" ] && k1b "$exp" "$where" "copy first" DSPK_EXP_COPY=1
    done
    echo "  dd again: $(dd_rate $int16_bytes $where) MB/s"
done
