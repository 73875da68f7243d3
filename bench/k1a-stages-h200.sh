#!/usr/bin/env bash
# What bounds K1a (issue 32: file -> kilosort4 windows kept on the device, `preprocess
# --on-device`)? The apply pass of each prefix of the PRESET chain (default kilosort4: no
# stage, centring, + median reference, + high-pass, + whitening, + int16: the preset), measured
# in the real pass at its default windows, alternated over ROUNDS; the difference between neighbouring
# prefixes is what a stage costs there. (The command's own `stage_times` time each stage alone
# on a 10,000-sample window; a stage whose units are few and long, as the high-pass's, may cost
# a one-second window about what it costs a third of one, so those times need not add up to the
# pass.) Then the preset with `block_samples` BLOCKS (the high-pass's units: default "1024 256")
# and windows of WINDOWS samples (default 60000), each after one untimed run.
# Usage: bench/k1a-stages-h200.sh DSPK [SECONDS [ROUNDS]] (python3 with NumPy writes the file).
set -euo pipefail
dspk=$1 seconds=${2:-60} rounds=${3:-3}
blocks=${BLOCKS-"1024 256"} windows=${WINDOWS-"60000"} preset=${PRESET:-kilosort4}
dir=$(mktemp -d /dev/shm/k1a.XXXXXX)
trap 'rm -rf "$dir"' EXIT
python3 "$(dirname "$0")/np1_spikeglx.py" "$dir" "$seconds"
rec=$dir/rec_g0_t0.imec0.ap.bin
"$dspk" preprocess --print-pipeline "$preset" > "$dir/full.toml"
# The prefixes: the preset's text cut before its (k+1)-th stage.
python3 - "$dir" <<'PY'
import sys
d = sys.argv[1]
head, *stages = open(f"{d}/full.toml").read().split("[[stages]]")
for k in range(len(stages) + 1):
    text = head + "".join("[[stages]]" + s for s in stages[:k])
    if k == 0:
        text += "stages = []\n"
    open(f"{d}/prefix-{k}.toml", "w").write(text)
open(f"{d}/labels", "w").write("no stage\n" + "".join(
    "+ " + s.split('kind = "')[1].split('"')[0] + "\n" for s in stages))
PY
mapfile -t labels < "$dir/labels"
k1a() { # spec [extra args...] -> "apply_s realtime"
    "$dspk" --runtime wgpu --json preprocess "$rec" --pipeline "$1" --on-device "${@:2}" |
        python3 -c 'import json, sys; r = json.load(sys.stdin); print("%.3f %.0f" % (r["apply_s"], r["realtime_factor"]))'
}
k1a "$dir/full.toml" > /dev/null  # compiles the kernels once
declare -A best
for r in $(seq "$rounds"); do
    for k in "${!labels[@]}"; do
        read -r s x < <(k1a "$dir/prefix-$k.toml")
        echo "round $r, ${labels[$k]}: apply $s s (${x}x real time)"
        if [ -z "${best[$k]:-}" ] || python3 -c "import sys; sys.exit(not $s < ${best[$k]})"; then best[$k]=$s; fi
    done
done
echo "best of $rounds, $seconds s of 384 channels, $preset, its default windows:"
for k in "${!labels[@]}"; do
    if [ "$k" -eq 0 ]; then
        echo "  ${labels[$k]}: ${best[$k]} s"
    else
        python3 -c "print('  %s: %s s (stage: %+.3f s, %.2f ms a second of data)' % ('${labels[$k]}', ${best[$k]}, ${best[$k]} - ${best[$((k - 1))]}, 1e3 * (${best[$k]} - ${best[$((k - 1))]}) / $seconds))"
    fi
done
for b in $blocks; do
    sed "s/^block_samples = .*/block_samples = $b/" "$dir/full.toml" > "$dir/block-$b.toml"
    k1a "$dir/block-$b.toml" > /dev/null
    for r in $(seq "$rounds"); do echo "preset at block_samples $b, round $r: apply $(k1a "$dir/block-$b.toml")"; done
done
for w in $windows; do
    k1a "$dir/full.toml" --window-samples "$w" > /dev/null
    for r in $(seq "$rounds"); do echo "preset, windows of $w samples, round $r: apply $(k1a "$dir/full.toml" --window-samples "$w")"; done
done
