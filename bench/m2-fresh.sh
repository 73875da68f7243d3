#!/usr/bin/env bash
# Issue 19's M2 in fresh processes, with where the time goes: `dspk scan --json` of the
# synthetic default (DURATION, default 1:00, G4's recording) on one device and on two devices
# opened on the one GPU (`--devices 0,0`), for each binary given, the order rotated run by run.
# Prints every scan's wall, each device's setup, when it joined the pass and its windows (the
# fields a binary reports), each pair's ratio and statistics check, and the medians per binary,
# of the scans' throughput and of the processes' whole time (start to exit).
# Usage (inside .gpu/run.sh on the GPU machine): bench/m2-fresh.sh BIN… [ROUNDS=8 DURATION=1:00]
# Writes m2-fresh.tsv (binary, round, devices, realtime factor, process seconds) to $OUT
# (default .).
set -euo pipefail
rounds=${ROUNDS:-8} duration=${DURATION:-1:00} out=${OUT:-.}
bins=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: > "$out/m2-fresh.tsv"
for round in $(seq 1 "$rounds"); do
  # Rotate which binary goes first, and whether one or two devices go first.
  n=${#bins[@]}
  for k in $(seq 0 $((n - 1))); do
    bin=${bins[$(((k + round) % n))]}
    if [ $((round % 2)) -eq 0 ]; then order="one two"; else order="two one"; fi
    for which in $order; do
      devices=0; [ "$which" = two ] && devices=0,0
      t0=$(date +%s%N)
      "$bin" scan --synthetic-duration "$duration" --json --devices "$devices" > "$work/$which.json"
      echo $(( $(date +%s%N) - t0 )) > "$work/$which.ns"
    done
    python3 - "$bin" "$round" "$work/one.json" "$work/two.json" "$out/m2-fresh.tsv" \
      "$(cat "$work/one.ns")" "$(cat "$work/two.ns")" <<'PY'
import json, sys
bin, round_, one_p, two_p, tsv, one_ns, two_ns = sys.argv[1:]
one, two = json.load(open(one_p)), json.load(open(two_p))
one_s, two_s = int(one_ns) / 1e9, int(two_ns) / 1e9
same = one["channels"] == two["channels"] and one["mask"] == two["mask"]
def devs(d):
    return "; ".join(
        f'{x["device"]}: {x["windows"]} w, wall {x["wall_s"] * 1e3:.1f} ms'
        + (f', setup {x["setup_s"] * 1e3:.1f} ms, started at {x["start_s"] * 1e3:.1f} ms' if "setup_s" in x else "")
        for x in d["devices"])
ratio = two["realtime_factor"] / one["realtime_factor"]
print(f'{bin} round {round_}: one {one["realtime_factor"]:.0f} x ({one["wall_s"] * 1e3:.1f} ms: {devs(one)}) | '
      f'two {two["realtime_factor"]:.0f} x ({two["wall_s"] * 1e3:.1f} ms: {devs(two)}) | ratio {ratio:.3f}, '
      f'statistics identical: {same}; processes {one_s * 1e3:.0f} / {two_s * 1e3:.0f} ms')
with open(tsv, "a") as f:
    f.write(f'{bin}\t{round_}\t1\t{one["realtime_factor"]}\t{one_s}\n'
            f'{bin}\t{round_}\t2\t{two["realtime_factor"]}\t{two_s}\n')
PY
  done
done
python3 - "$out/m2-fresh.tsv" <<'PY'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
for bin in dict.fromkeys(r[0] for r in rows):
    one = {r[1]: float(r[3]) for r in rows if r[0] == bin and r[2] == "1"}
    two = {r[1]: float(r[3]) for r in rows if r[0] == bin and r[2] == "2"}
    ratios = sorted(two[k] / one[k] for k in one)
    proc = {n: statistics.median(float(r[4]) for r in rows if r[0] == bin and r[2] == n)
            for n in ("1", "2")}
    print(f"{bin}: one device median {statistics.median(one.values()):.0f} x, two devices median "
          f"{statistics.median(two.values()):.0f} x; two / one per round {', '.join(f'{r:.3f}' for r in ratios)} "
          f"(median {statistics.median(ratios):.3f}); processes median {proc['1'] * 1e3:.0f} ms "
          f"(one) / {proc['2'] * 1e3:.0f} ms (two)")
PY
