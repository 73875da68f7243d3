#!/usr/bin/env bash
# BENCH.md H2: SpikeInterface 0.105 reading the file of the H1 benchmark to channel-major µV
# over 1 s chunks, for comparison with dspk-io's figure (examples/h1.rs).
#
#   cargo run --release -p dspk-io --example h1        # writes /tmp/dspk-h1.bin + sidecar
#   crates/dspk-io/benches/spikeinterface_h2.sh [FILE]
#
# Builds a throwaway venv in /tmp (H2_VENV to reuse another) with spikeinterface==0.105.* and
# numpy from PyPI. Prints the median of 5 passes (after a warm-up pass) in GB/s of int16 read:
# get_traces(return_in_uV=True) as SpikeInterface returns it (time-major), and made
# channel-major (transpose + contiguous copy), which is what dspk-io's read produces.
# The workspace's tests never need this.
set -euo pipefail

FILE=${1:-/tmp/dspk-h1.bin}
VENV=${H2_VENV:-/tmp/dspk-h2-venv}

if [[ ! -f "$FILE" || ! -f "$FILE.json" ]]; then
    echo "no $FILE (+ .json): run 'cargo run --release -p dspk-io --example h1' first" >&2
    exit 1
fi
if [[ ! -x "$VENV/bin/python" ]]; then
    echo "+ python3 -m venv $VENV && pip install spikeinterface==0.105.* numpy" >&2
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "spikeinterface==0.105.*" numpy
fi

"$VENV/bin/python" "$(dirname "$0")/spikeinterface_h2.py" "$FILE"
