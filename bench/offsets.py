"""The issue-28 file: 16 int16 channels at 0..30000 counts (0..70 mV), ~10 µV noise, 300 000
samples, gain 2.34375 µV; `dspk scan --json` against NumPy float64."""
import json, subprocess, sys
import numpy as np

binary, label = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(28)
samples, channels, gain = 300_000, 16, 2.34375
levels = np.linspace(0, 30_000, channels)
frames = np.clip(np.round(levels + rng.normal(0, 10 / gain, (samples, channels))), -32768, 32767).astype("<i2")
frames.tofile("/tmp/offsets.bin")
json.dump({"sample_rate": "30000", "channel_count": channels, "format": "int16", "order": "time-major",
           "channels": [{"name": f"E{c}", "gain": gain, "offset": 0.0, "unit": "uV"} for c in range(channels)]},
          open("/tmp/offsets.bin.json", "w"))
v = frames.T.astype(np.float64) * gain
r = json.loads(subprocess.run([binary, "scan", "/tmp/offsets.bin", "--json"], capture_output=True, text=True, check=True).stdout)
rows = r["channels"]
std = v.std(axis=1)
worst = {k: 0.0 for k in ("std", "rms", "mean/std")}
for c, row in enumerate(rows):
    worst["std"] = max(worst["std"], abs(row["std"] - std[c]) / std[c])
    rms = np.sqrt((v[c] ** 2).mean())
    worst["rms"] = max(worst["rms"], abs(row["rms"] - rms) / rms)
    worst["mean/std"] = max(worst["mean/std"], abs(row["mean"] - v[c].mean()) / std[c])
    assert row["min"] == v[c].min() and row["max"] == v[c].max(), (label, c)
print(label, "offsets file on", r.get("device"), ": worst relative errors", {k: f"{x:.2e}" for k, x in worst.items()},
      "dead", r["dead"], "std at 0/19/28/56/70 mV:", [round(rows[c]["std"], 3) for c in (0, 4, 6, 12, 15)],
      "numpy:", [round(std[c], 3) for c in (0, 4, 6, 12, 15)])
