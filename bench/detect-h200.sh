#!/usr/bin/env bash
# Issue 33's speed figures for `dspk detect`: preprocess (spikeinterface preset) + detection of a
# 384-channel int16 SpikeGLX-like file in the page cache to peaks on disk, against `dspk
# preprocess` alone (same preset, float32 to /dev/shm) in the same run, and against
# SpikeInterface's detect_peaks (all cores) on dspk's preprocessed file where SpikeInterface is
# installed. Spikes (troughs of 150-300 counts over three channels, one every 3 ms) are planted
# in int16 noise. Usage: bench/detect-h200.sh DSPK [SECONDS] (python3 with NumPy writes the file).
set -euo pipefail
dspk=$1 seconds=${2:-60}
dir=$(mktemp -d)
trap 'rm -rf "$dir" /dev/shm/dspk-detect' EXIT
mkdir -p /dev/shm/dspk-detect
python3 "$(dirname "$0")/planted_spikes.py" "$dir" "$seconds"
rec=$dir/rec_g0_t0.imec0.ap.bin
cat "$rec" > /dev/null
out=/dev/shm/dspk-detect
t0=$(date +%s.%N)
"$dspk" --runtime wgpu --json preprocess "$rec" --pipeline spikeinterface --format float32 \
    -o "$out/pre.bin" > "$dir/pre.json"
t1=$(date +%s.%N)
"$dspk" --runtime wgpu --json detect "$rec" --pipeline spikeinterface -o "$out/peaks.npy" \
    > "$dir/detect.json"
t2=$(date +%s.%N)
python3 - "$dir" "$t0" "$t1" "$t2" "$seconds" "$out" <<'PY'
import json, sys, time
import numpy as np
d, t0, t1, t2, seconds, out = sys.argv[1], *map(float, sys.argv[2:6]), sys.argv[6]
p = json.load(open(f"{d}/pre.json"))["report"]
r = json.load(open(f"{d}/detect.json"))["report"]
peaks = np.load(f"{out}/peaks.npy")
print(f"preprocess alone (spikeinterface, float32 to /dev/shm): process {t1 - t0:.2f} s "
      f"({seconds / (t1 - t0):.0f}x real time), apply {p['apply_s']:.2f} s "
      f"({p['realtime_factor']:.0f}x real time)")
print(f"preprocess + detect to {out}/peaks.npy: process {t2 - t1:.2f} s "
      f"({seconds / (t2 - t1):.0f}x real time), fit (noise) {r['fit_s']:.2f} s, detect pass "
      f"{r['detect_s']:.2f} s ({r['realtime_factor']:.0f}x real time), {r['peaks']} peaks "
      f"({r['rate_per_channel_hz']:.2f}/channel/s), median noise {r['median_noise_uv']:.2f} uV, "
      f"{r['windows']} windows of {r['window_samples']}")
assert len(peaks) == r["peaks"]
try:
    import os
    import spikeinterface.core as sc
    from spikeinterface.sortingcomponents.peak_detection import detect_peaks
except ImportError as e:
    print(f"SpikeInterface's detect_peaks: not run on this host ({e})")
    sys.exit(0)
# SpikeInterface's detect_peaks on dspk's preprocessed file (the same values dspk detected on),
# with dspk's noise levels and parameters, all cores, 1 s chunks.
side = json.load(open(f"{out}/pre.bin.json"))
si = sc.read_binary(f"{out}/pre.bin", sampling_frequency=30000.0, dtype="float32",
                    num_channels=side["channel_count"], time_axis=0)
si.set_dummy_probe_from_locations(
    np.array([[c["x_um"], c["y_um"]] for c in side["probe"]["channels"]]))
det = r["detect"]
kwargs = dict(noise_levels=np.asarray(r["noise_uv"]), detect_threshold=det["threshold"],
              peak_sign=det["sign"], radius_um=det["radius_um"],
              exclude_sweep_ms=det["exclude_sweep_ms"])
cores = os.cpu_count()
for rep in (1, 2):
    t = time.perf_counter()
    theirs = detect_peaks(si, method="locally_exclusive", method_kwargs=kwargs,
                          job_kwargs=dict(n_jobs=cores, chunk_duration="1s", progress_bar=False))
    t = time.perf_counter() - t
    print(f"SpikeInterface detect_peaks (locally_exclusive, {cores} jobs, 1 s chunks) on dspk's "
          f"preprocessed file, run {rep}: {t:.2f} s ({seconds / t:.0f}x real time), "
          f"{len(theirs)} peaks")
mine = set(zip(peaks["sample_index"].tolist(), peaks["channel_index"].tolist()))
other = set(zip(theirs["sample_index"].tolist(), theirs["channel_index"].tolist()))
print(f"same (sample, channel): {len(mine & other)}; dspk only {len(mine - other)}; "
      f"SpikeInterface only {len(other - mine)}")
PY
