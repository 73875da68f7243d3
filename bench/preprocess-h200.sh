#!/usr/bin/env bash
# Issue 32's speed figures for `dspk preprocess` (K1b) and `dspk convert`, each with the host's
# own sequential write of the same bytes (`dd conv=fsync`) measured in the same run, to the same
# filesystem: a 60 s, 384-channel (+ sync) int16 SpikeGLX-like file in the page cache,
# preprocessed with the kilosort4 and spikeinterface presets to /tmp and /dev/shm.
# Usage: bench/preprocess-h200.sh DSPK [SECONDS [BASELINE]] (python3 with NumPy writes the file);
# BASELINE, a command such as "python3 bench/kilosort4_speed.py", runs after dspk on each
# filesystem with the file, its channel count and the output folder appended. With DSPK_OLD set
# to another dspk binary, each figure is measured for both, alternated (new, old, new, old).
# K1a (file -> kilosort4 windows kept on the device, `--on-device`) runs once, before the
# filesystems. With DSPK_SPEC set to a pipeline file, that spec runs beside the presets (K1a and
# the file on each filesystem; the same binary): a preset's earlier form, measured in the same run.
set -euo pipefail
dspk=$1 seconds=${2:-60} baseline=${3:-}
old=${DSPK_OLD:-}
spec=${DSPK_SPEC:-}
bins=("$dspk") labels=(new)
[ -n "$old" ] && bins+=("$old" "$dspk" "$old") labels+=(old new old)
dir=$(mktemp -d)
trap 'rm -rf "$dir" /tmp/dspk-out /dev/shm/dspk-out' EXIT
mkdir -p /tmp/dspk-out /dev/shm/dspk-out
python3 "$(dirname "$0")/np1_spikeglx.py" "$dir" "$seconds"
rec=$dir/rec_g0_t0.imec0.ap.bin
cat "$rec" > /dev/null
int16_bytes=$((seconds * 30000 * 384 * 2))
f32_bytes=$((seconds * 30000 * 385 * 4))
dd_rate() { # bytes target -> MB/s of dd conv=fsync
    local n=$(( ($1 + 16777215) / 16777216 ))
    local t0 t1
    t0=$(date +%s.%N)
    dd if=/dev/zero of="$2/dd.bin" bs=16M count=$n conv=fsync status=none
    t1=$(date +%s.%N)
    rm -f "$2/dd.bin"
    python3 -c "print(round($n * 16777216 / 1e6 / ($t1 - $t0), 1))"
}
for i in 1 2; do
  for preset in kilosort4 ${spec:+"$spec"}; do
    "$dspk" --runtime wgpu --json preprocess "$rec" --pipeline "$preset" --on-device |
        python3 -c 'import json, sys; r = json.load(sys.stdin); print("K1a %s kept on the device: fit %.2f s, apply %.2f s (%.0fx real time)" % (sys.argv[1], r["fit_s"], r["apply_s"], r["realtime_factor"]))' "$(basename "$preset")"
  done
done
for where in /tmp/dspk-out /dev/shm/dspk-out; do
    echo "dd int16 bytes to $where: $(dd_rate $int16_bytes $where) MB/s (same run)"
    for preset in kilosort4 spikeinterface ${spec:+"$spec"}; do
      name=$(basename "$preset" .toml)
      for k in "${!bins[@]}"; do
        bin=${bins[$k]} label=${labels[$k]}
        out=$where/$name.bin
        t0=$(date +%s.%N)
        "$bin" --runtime wgpu --json preprocess "$rec" --pipeline "$preset" --format int16 \
            -o "$out" > "$dir/$name.json"
        t1=$(date +%s.%N)
        python3 - "$dir/$name.json" "$t0" "$t1" "$seconds" "$name" "$where" "$label" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["report"]
t0, t1, seconds = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
written = r["plan"]["output_bytes"]
# (A binary before 2026-12-04 reports no finish, writing or waiting time: nan.)
finish = json.load(open(sys.argv[1])).get("finish_s", float("nan"))
durable = r["apply_s"] + finish
print(f"[{sys.argv[7]}] preprocess {sys.argv[5]} -> {sys.argv[6]}: process {t1 - t0:.2f} s "
      f"({seconds / (t1 - t0):.1f}x real time), fit {r['fit_s']:.2f} s, apply {r['apply_s']:.2f} s "
      f"({r['realtime_factor']:.1f}x real time; writing {r.get('write_s', float('nan')):.2f} s, waiting "
      f"for the devices {r.get('wait_s', float('nan')):.2f} s), then {finish:.2f} s to durable: {written / 1e6 / durable:.0f} MB/s "
      f"written, apply to durable")
print("  stages (one window, device time): " + ", ".join(
    f"{s['kind']} {s['window_ms']:.2f} ms ({s['realtime']:.0f}x)" for s in r["stage_times"]))
PY
        # The first output of each binary is kept: new and old must be the same bytes.
        [ -f "$dir/$name-$label.bin" ] || cp "$out" "$dir/$name-$label.bin"
        rm -f "$out" "$out.json"
      done
      if [ -n "$old" ]; then
        if cmp "$dir/$name-new.bin" "$dir/$name-old.bin"; then echo "$name: new and old outputs are the same bytes"; else echo "$name: new and old outputs DIFFER"; fi
      fi
      rm -f "$dir/$name-new.bin" "$dir/$name-old.bin"
    done
    if [ -n "$baseline" ]; then
        $baseline "$rec" 385 "$where" || echo "baseline failed: $baseline"
    fi
    echo "dd float32 bytes to $where: $(dd_rate $f32_bytes $where) MB/s (same run)"
    for k in "${!bins[@]}"; do
        bin=${bins[$k]} label=${labels[$k]}
        t0=$(date +%s.%N)
        wall=$("$bin" --runtime wgpu --json convert "$rec" -o "$where/conv.bin" |
            python3 -c 'import json, sys; print(json.load(sys.stdin)["wall_s"])')
        t1=$(date +%s.%N)
        python3 -c "print(f'[$label] convert -> $where: pass {$wall:.2f} s, process {$t1 - $t0:.2f} s, {$f32_bytes / 1e6 / $wall:.0f} MB/s written, {$seconds / $wall:.1f}x real time')"
        [ -f "$dir/conv-$label.bin" ] || cp "$where/conv.bin" "$dir/conv-$label.bin"
        rm -f "$where/conv.bin" "$where/conv.bin.json"
    done
    if [ -n "$old" ]; then
        if cmp "$dir/conv-new.bin" "$dir/conv-old.bin"; then echo "convert: new and old outputs are the same bytes"; else echo "convert: new and old outputs DIFFER"; fi
    fi
    rm -f "$dir/conv-new.bin" "$dir/conv-old.bin"
done
