#!/usr/bin/env bash
# Issue 19's M2 at steady state on the GPU machine, inside .gpu/run.sh: `dspk bench` over a
# 10-minute raw file (4.6 GB, page cache) with M2 rows, then fresh `dspk scan` processes of that
# file alternating one device and two devices opened on the one GPU.
#   device run, carry [".gpu"]: GPU_SKIP_TESTS=1 bash .gpu/run.sh -- bash bench/multi-h200-long.sh
set -u
rounds=${ROUNDS:-5}
out=${OUT:-/tmp}
dir=$(mktemp -d)
dspk bench --seconds 600 --devices 0,0 | grep -E "^(id|G4|M2)"
# The 10-minute raw file: int16 time-major random values and a JSON sidecar.
python3 - "$dir/raw.bin" <<'PY'
import json, sys
import numpy as np
path = sys.argv[1]
rng = np.random.default_rng(7)
n, c = 600 * 30000, 384
with open(path, "wb") as f:
    for start in range(0, n, 30000):
        f.write(rng.integers(-2000, 2000, size=(30000, c), dtype=np.int16).tobytes())
json.dump({"sample_rate": "30000", "channel_count": c, "format": "int16", "order": "time-major",
           "channels": [{"gain": 0.195, "unit": "uV"} for _ in range(c)]}, open(path + ".json", "w"))
PY
dspk info "$dir/raw.bin" | head -3
cat "$dir/raw.bin" > /dev/null
for i in $(seq "$rounds"); do
  dspk scan "$dir/raw.bin" --json > "$out/one.json"
  dspk scan "$dir/raw.bin" --json --devices 0,0 > "$out/two.json"
  python3 - "$out/one.json" "$out/two.json" <<'PY'
import json, sys
one, two = (json.load(open(p)) for p in sys.argv[1:])
same = one["channels"] == two["channels"] and one["mask"] == two["mask"]
shares = ", ".join(f'{d["device"]}: {d["windows"]} windows' for d in two["devices"])
print(f'raw file: one device {one["realtime_factor"]:.0f} x, two devices {two["realtime_factor"]:.0f} x '
      f'(ratio {two["realtime_factor"] / one["realtime_factor"]:.3f}); statistics identical: {same}; {shares}')
PY
done
rm -rf "$dir" "$out/one.json" "$out/two.json"
