#!/usr/bin/env bash
# Issue 19's figures on the GPU machine, inside .gpu/run.sh (the packed dspk on PATH): the
# devices dspk lists, `dspk bench` with M2 rows (two devices opened on the one GPU against one,
# same run), and fresh `dspk scan` processes alternating one device and two devices on the 10-min
# synthetic default (DURATION, e.g. 1:00 for G4's 60 s default), each pair's statistics compared.
#   ../shared/tools/gpu-pack -p dspk-tests --bin dspk
#   device run, carry [".gpu"]: bash .gpu/run.sh -- bash bench/multi-h200.sh
set -u
rounds=${ROUNDS:-5}
dspk devices
dspk bench --seconds "${SECONDS_OF_DATA:-60}" --devices 0,0
out=${OUT:-/tmp}
for i in $(seq "$rounds"); do
  dspk scan --synthetic-duration "${DURATION:-10:00}" --json > "$out/one.json"
  dspk scan --synthetic-duration "${DURATION:-10:00}" --json --devices 0,0 > "$out/two.json"
  python3 - "$out/one.json" "$out/two.json" <<'PY'
import json, sys
one, two = (json.load(open(p)) for p in sys.argv[1:])
same = one["channels"] == two["channels"] and one["mask"] == two["mask"]
shares = ", ".join(f'{d["device"]}: {d["windows"]} windows' for d in two["devices"])
print(f'one device {one["realtime_factor"]:.0f} x, two devices {two["realtime_factor"]:.0f} x '
      f'(ratio {two["realtime_factor"] / one["realtime_factor"]:.3f}); statistics identical: {same}; {shares}')
PY
done
rm -f "$out/one.json" "$out/two.json"
