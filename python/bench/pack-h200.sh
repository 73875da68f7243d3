#!/usr/bin/env bash
# Packs what the P figures need on the GPU machine (no Rust, no network) into .gpu/: the dspk
# program and the Vulkan loader (gpu-pack), the dspk wheel and a NumPy wheel for the machine's
# Python (PYVER, default 3.12: Ubuntu 24.04). SpikeInterface is not packed (P2 is a host
# figure, measured here; the 64 MiB carry limit leaves no room for it).
# Usage, from the project root:
#   python/bench/pack-h200.sh
#   then the device tool's run, carry [".gpu"], command:
#   GPU_SKIP_TESTS=1 bash .gpu/run.sh -- bash python/bench/h200.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
../shared/tools/gpu-pack -p dspk-io --bin dspk
tools=${DSPK_PY_TOOLS:-target/py-tools}
"$tools/bin/maturin" build --release --out target/wheels
mkdir -p .gpu/py
rm -f .gpu/py/*.whl
cp "$(ls -t target/wheels/dspk-*.whl | head -1)" .gpu/py/
"$tools/bin/pip" download --quiet --only-binary=:all: --no-deps --implementation cp \
    --python-version "${PYVER:-3.12}" --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .gpu/py numpy
du -sh .gpu
