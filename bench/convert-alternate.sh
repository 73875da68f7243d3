#!/usr/bin/env bash
# Issue 29's speed check: `dspk convert` of a 60 s raw file (64 channels int16, 30 kHz) by two
# programs, alternated in one run; prints each run's pass wall (`--json` wall_s) and process wall.
# Usage: bench/convert-alternate.sh OLD_DSPK NEW_DSPK [PAIRS] (python3 with NumPy writes the file).
set -euo pipefail
old=$1 new=$2 pairs=${3:-6}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$dir" <<'PY'
import json, sys
import numpy as np
d = sys.argv[1]
c, n = 64, 60 * 30000
np.random.default_rng(7).integers(-2000, 2000, size=(n, c), dtype=np.int16).tofile(f"{d}/rec.bin")
json.dump({"sample_rate": "30000", "channel_count": c, "format": "int16", "order": "time-major",
           "channels": [{"name": f"E{i}", "gain": 2.34, "offset": 0.0, "unit": "uV"} for i in range(c)]},
          open(f"{d}/rec.bin.json", "w"))
PY
for _ in $(seq "$pairs"); do
    for which in old new; do
        bin=$old; [ "$which" = new ] && bin=$new
        rm -f "$dir/out.bin" "$dir/out.bin.json"
        start=$(date +%s.%N)
        pass=$("$bin" --runtime wgpu --json convert "$dir/rec.bin" -o "$dir/out.bin" |
            python3 -c 'import json, sys; print(json.load(sys.stdin)["wall_s"])')
        end=$(date +%s.%N)
        echo "$which pass_s=$pass process_s=$(echo "$end - $start" | bc)"
    done
done
