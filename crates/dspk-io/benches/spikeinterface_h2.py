"""BENCH.md H2: SpikeInterface reading the H1 file to channel-major µV over 1 s chunks.

Run through spikeinterface_h2.sh (which builds the venv), or with any Python that has
spikeinterface 0.105 and numpy: python spikeinterface_h2.py /tmp/dspk-h1.bin
"""
import json
import os
import statistics
import sys
import time

import numpy as np
import spikeinterface as si

path = sys.argv[1]
side = json.load(open(path + ".json"))
rate = float(side["sample_rate"])
channels = int(side["channel_count"])
gains = [float(c.get("gain", 1.0)) for c in side.get("channels", [{}] * channels)]
assert side["format"] in ("int16", "i16", "<i2") and side["order"] in ("time-major", "interleaved")
rec = si.read_binary(
    path,
    sampling_frequency=rate,
    dtype="int16",
    num_channels=channels,
    gain_to_uV=gains,
    offset_to_uV=[0.0] * channels,
    time_axis=0,
)
n = rec.get_num_samples()
window = int(round(rate))
file_bytes = os.path.getsize(path)


def one_pass(channel_major):
    t = time.perf_counter()
    check = 0.0
    for s in range(0, n, window):
        tr = rec.get_traces(start_frame=s, end_frame=min(n, s + window), return_in_uV=True)
        if channel_major:
            tr = np.ascontiguousarray(tr.T)
        check += float(tr.flat[0])
    return time.perf_counter() - t


print(f"spikeinterface {si.__version__}, numpy {np.__version__}, {os.cpu_count()} CPUs")
print(f"file: {path} ({file_bytes / 1e6:.1f} MB, {channels} ch × {n} samples int16 time-major)")
for channel_major in (False, True):
    one_pass(channel_major)
    times = [one_pass(channel_major) for _ in range(5)]
    m = statistics.median(times)
    what = "channel-major (transposed, contiguous)" if channel_major else "time-major (as returned)"
    print(
        f"get_traces(return_in_uV=True), 1 s chunks, {what}: median {m * 1e3:.0f} ms "
        f"(min {min(times) * 1e3:.0f}, max {max(times) * 1e3:.0f}) = {file_bytes / m / 1e9:.3f} GB/s of int16"
    )
