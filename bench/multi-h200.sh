#!/usr/bin/env bash
# Issue 19's figures on the GPU machine, inside .gpu/run.sh (the packed dspk on PATH): the
# devices dspk lists, `dspk bench` with M2 rows (two devices opened on the one GPU against one,
# same run), and fresh `dspk scan` processes alternating one device and two devices on the 10-min
# synthetic default (DURATION, e.g. 1:00 for G4's 60 s default; ROUNDS pairs), each pair's
# statistics compared, through bench/m2-fresh.sh.
#   ../shared/tools/gpu-pack -p dspk-tests --bin dspk
#   device run, carry [".gpu"]: bash .gpu/run.sh -- bash bench/multi-h200.sh
set -u
dspk devices
dspk bench --seconds "${SECONDS_OF_DATA:-60}" --devices 0,0
ROUNDS=${ROUNDS:-5} DURATION=${DURATION:-10:00} OUT=${OUT:-/tmp} \
  bash "$(dirname "${BASH_SOURCE[0]}")/m2-fresh.sh" "$(command -v dspk)"
