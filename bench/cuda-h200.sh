#!/usr/bin/env bash
# The cuda runtime beside wgpu on the GPU host (issue 48), after the packed tests ran with
# DSPK_TEST_RUNTIMES=cuda: the same fixed recording through every preset, each preset cut after
# every stage (float32), and detection, on --runtime cuda and --runtime wgpu, compared byte for
# byte; then scan / preprocess / detect of a long file on both runtimes, timed.
# Usage (packed programs on PATH): bash cuda-h200.sh SHORT_SECONDS LONG_SECONDS
# Writes md5 lists, the first runtime's outputs (gzip, for the comparison with lavapipe and the
# native cpu runtime on the CI-like machine) and timings under $OUT. RUNTIMES="cpu wgpu" runs
# the same on a machine without a GPU; LONG_SECONDS 0 skips the timings.
set -u
short=${1:-1} long=${2:-300}
read -r -a runtimes <<< "${RUNTIMES:-cuda wgpu}"
a=${runtimes[0]} b=${runtimes[1]}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${OUT:-/tmp/out}
mkdir -p "$out/cuts"
export CUDA_PATH=${CUDA_PATH:-/usr/local/cuda-13.0}
s=/dev/shm/np1-short l=/dev/shm/np1-long
mkdir -p "$s" "$l"
python3 "$here/np1_spikeglx.py" "$s" "$short" >/dev/null
rec=$s/rec_g0_t0.imec0.ap.bin

# Each preset cut after every stage, as TOML specs beside the file.
for p in kilosort4 spikeinterface ibl; do
  dspk preprocess --print-pipeline "$p" > "$s/$p.toml"
  python3 - "$s/$p.toml" <<'PY'
import sys, re
path = sys.argv[1]
text = open(path).read()
head, *stages = re.split(r"(?m)^\[\[stages\]\]\n", text)
for k in range(1, len(stages) + 1):
    with open(path.replace(".toml", f"-cut{k}.toml"), "w") as f:
        f.write(head + "".join("[[stages]]\n" + st for st in stages[:k]))
PY
done

for rt in "${runtimes[@]}"; do
  for spec in "$s"/*-cut*.toml; do
    name=$(basename "$spec" .toml)
    dspk --runtime "$rt" preprocess "$rec" -o "$s/$rt-$name.f32" --pipeline "$spec" --format float32 >/dev/null 2>"$s/err" || { echo "$rt $name failed:"; tail -3 "$s/err"; }
  done
  for p in kilosort4 spikeinterface ibl; do
    dspk --runtime "$rt" preprocess "$rec" -o "$s/$rt-$p.i16" --pipeline "$p" >/dev/null 2>"$s/err" || { echo "$rt $p failed:"; tail -3 "$s/err"; }
  done
  dspk --runtime "$rt" detect "$rec" -o "$s/$rt-peaks.npy" >/dev/null 2>"$s/err" || { echo "$rt detect failed:"; tail -3 "$s/err"; }
  dspk --runtime "$rt" scan "$rec" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(json.dumps({k: d[k] for k in ("channels", "dead", "noisy", "median_std")}, sort_keys=True))
' > "$s/$rt-scan.stats"
done
(cd "$s" && md5sum "$a"-* "$b"-* | sort -k2) | tee "$out/md5-short.txt"
echo "== $a vs $b on the short file"
for f in "$s/$a"-*.f32 "$s/$a"-*.i16 "$s/$a"-peaks.npy "$s/$a"-scan.stats; do
  g=${f/\/$a-/\/$b-}
  if cmp -s "$f" "$g"; then echo "same bytes: $(basename "$f")"; else echo "DIFFER: $(basename "$f")"; fi
done
for f in "$s/$a"-*.f32 "$s/$a"-*.i16 "$s/$a"-peaks.npy; do gzip -c "$f" > "$out/cuts/$(basename "$f").gz"; done
[ "$long" -gt 0 ] || { [ -n "${KEEP:-}" ] || rm -rf "$s"; exit 0; }

echo "== the long file: $long s"
python3 "$here/np1_spikeglx.py" "$l" "$long" >/dev/null
rec=$l/rec_g0_t0.imec0.ap.bin
for round in 1 2; do
  for rt in "${runtimes[@]}"; do
    for job in "scan" "preprocess --on-device" "preprocess -o $l/out.bin" "detect -o $l/peaks.npy"; do
      start=$(date +%s.%N)
      dspk --runtime "$rt" $job "$rec" >"$l/log" 2>&1; rc=$?
      end=$(date +%s.%N)
      printf 'round %s %-5s %-40s rc %s  %.2f s  %s\n' "$round" "$rt" "$job" "$rc" "$(python3 -c "print($end - $start)")" \
        "$(grep -Eo '[0-9.]+× real time|[0-9.]+ x real time|real time[^,]*' "$l/log" | tail -1)" | tee -a "$out/timing.txt"
    done
  done
done
rm -rf "$s" "$l"
