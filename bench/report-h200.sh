#!/usr/bin/env bash
# Issue 35's figure: what a report costs beyond its pass, on a 1-hour recording (the built-in
# synthetic one, 384 channels, Neuropixels 1.0 geometry from bench/np1-probe.json, which
# probeinterface 0.4.2 wrote). Each command runs twice in one process order (plain, then with
# its report), the same run; the report's own line (stderr `report:`) says how long its
# windows took to read and how long it took to draw and write, and its size.
# Usage: bench/report-h200.sh DSPK [DURATION]
set -euo pipefail
dspk=$1 duration=${2:-1:00:00}
probe=$(dirname "$0")/np1-probe.json
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
t() {
  local s e
  s=$(date +%s%N)
  "$@" >/dev/null 2>"$dir/err" || { cat "$dir/err"; exit 1; }
  e=$(date +%s%N)
  grep -h '^report:' "$dir/err" || true
  echo "wall $(((e - s) / 1000000)) ms: ${*:2}"
}
common=(--synthetic-duration "$duration" --probe "$probe")
t "$dspk" scan "${common[@]}"
t "$dspk" scan "${common[@]}" --report "$dir/scan.html"
t "$dspk" scan "${common[@]}"
t "$dspk" scan "${common[@]}" --report "$dir/scan.html"
ls -l "$dir/scan.html"
# The report of each kind of pipeline: scan, fit and windows (dspk report).
for p in spikeinterface kilosort4 ibl; do
  t "$dspk" report "${common[@]}" --pipeline "$p" -o "$dir/report-$p.html"
  ls -l "$dir/report-$p.html"
done
# preprocess --report on 5 minutes (an hour's output would not fit the disk): the report's
# windows against the preprocessing itself.
short=(--synthetic-duration 5:00 --probe "$probe")
t "$dspk" preprocess "${short[@]}" -o "$dir/pre.bin"
rm -f "$dir/pre.bin" "$dir/pre.bin.json"
t "$dspk" preprocess "${short[@]}" -o "$dir/pre.bin" --report "$dir/pre.html"
ls -l "$dir/pre.html"
mkdir -p "${OUT:-/tmp}/reports"
cp "$dir"/*.html "${OUT:-/tmp}/reports/" 2>/dev/null || true
