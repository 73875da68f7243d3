#!/usr/bin/env bash
# Alternates two dspk binaries, run after run, on the same machine and files (BENCH.md's R1: a
# refactor of the device pass must stay >= 0.95 x the binary of the commit before it):
#   G3 from `dspk bench --json`, a fresh `dspk scan --json` of the 60 s synthetic default, and a
#   fresh `dspk scan --json` of a raw int16 file (384 channels, 60 s, page-cached).
# Usage: bench/alternate.sh OLD NEW [RUNS=8] [OUT_DIR=.]
# Prints one line per run and writes alternate.tsv (binary, run, figure, value) to OUT_DIR.
set -euo pipefail
old=$1 new=$2 runs=${3:-8} out=${4:-.}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
raw=$work/raw.bin
# Uniform random int16 samples: the figures are throughput, not statistics.
head -c $((384 * 60 * 30000 * 2)) /dev/urandom > "$raw"
printf '{"sample_rate": "30000", "channel_count": 384, "format": "int16", "order": "time-major"}\n' \
  > "$raw.json"
cat "$raw" > /dev/null
: > "$out/alternate.tsv"
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
for run in $(seq 1 "$runs"); do
  for which in old new; do
    bin=$old; [ "$which" = new ] && bin=$new
    g3=$("$bin" bench --json --seconds 20 2>/dev/null | field "[r['value'] for r in d['rows'] if r['id']=='G3'][0]")
    syn=$("$bin" scan --json 2>/dev/null | field "d['throughput_mb_s']")
    file=$("$bin" scan "$raw" --json 2>/dev/null | field "d['throughput_mb_s']")
    printf '%s\t%s\tG3_GBps\t%s\n%s\t%s\tscan_synthetic_MBps\t%s\n%s\t%s\tscan_raw_MBps\t%s\n' \
      "$which" "$run" "$g3" "$which" "$run" "$syn" "$which" "$run" "$file" >> "$out/alternate.tsv"
    echo "run $run $which: G3 $g3 GB/s, scan synthetic $syn MB/s, scan raw $file MB/s"
  done
done
python3 - "$out/alternate.tsv" <<'PY'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
for fig in ["G3_GBps", "scan_synthetic_MBps", "scan_raw_MBps"]:
    old = [float(r[3]) for r in rows if r[0] == "old" and r[2] == fig]
    new = [float(r[3]) for r in rows if r[0] == "new" and r[2] == fig]
    mo, mn = statistics.median(old), statistics.median(new)
    print(f"{fig}: old median {mo:.1f} [{min(old):.1f}..{max(old):.1f}], "
          f"new median {mn:.1f} [{min(new):.1f}..{max(new):.1f}], new/old {mn / mo:.3f}")
PY
