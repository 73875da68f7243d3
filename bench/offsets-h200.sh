#!/usr/bin/env bash
# Issue 28 on the H200: the 16-channel DC-offset file against NumPy, then fresh `dspk scan`
# processes of the commit before (old) and this one (new), alternated. Run from the project root
# with ROOT=$PWD, after `gpu-pack --bin dspk`, with the previous commit's dspk (stripped,
# xz-compressed) at .gpu/extra/dspk-old.xz.
set -u
cd /tmp
xz -dc "$ROOT/.gpu/extra/dspk-old.xz" > /tmp/dspk-old && chmod +x /tmp/dspk-old
python3 "$ROOT/bench/offsets.py" /tmp/gpu/bin/dspk new
python3 "$ROOT/bench/offsets.py" /tmp/dspk-old old
for i in 1 2 3 4 5 6; do
  for which in old new; do
    bin=/tmp/gpu/bin/dspk; [ $which = old ] && bin=/tmp/dspk-old
    $bin scan --json > /tmp/scan-$which.json 2>/dev/null
    python3 -c "import json,sys; r=json.load(open('/tmp/scan-$which.json')); print('$which', i:=$i, 'R1 fresh scan 60 s synthetic:', round(r['throughput_mb_s'],1), 'MB/s', round(r['realtime_factor'],1), 'x real time', 'dead', r['dead'], 'noisy', r['noisy'])"
  done
done
