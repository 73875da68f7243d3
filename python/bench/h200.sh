#!/usr/bin/env bash
# The P figures on the GPU machine, inside .gpu/run.sh (which puts the packed dspk on PATH and
# points Vulkan at the NVIDIA driver): the packed wheels are unpacked into a private
# site-packages (no pip or venv needed there), NumPy only where the system Python lacks it.
set -euo pipefail
site=$(mktemp -d)
python3 - "$site" .gpu/py/*.whl <<'PY'
import importlib.util, sys, zipfile
site, wheels = sys.argv[1], sys.argv[2:]
for w in wheels:
    if "numpy" in w.split("/")[-1] and importlib.util.find_spec("numpy"):
        continue
    zipfile.ZipFile(w).extractall(site)
PY
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
python3 -c "import dspk, numpy; print('dspk', dspk.__version__, 'numpy', numpy.__version__)"
nvidia-smi --query-gpu=name --format=csv,noheader || true
python3 python/bench/bench_python.py --dspk "$(command -v dspk)" --seconds "${SECONDS_OF_DATA:-60}" --rounds "${ROUNDS:-5}"
