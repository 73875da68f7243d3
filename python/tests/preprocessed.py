"""What the tests of a preprocessed file's sameness share: a small recording with a probe (a
raw binary + sidecar and a probeinterface JSON file), one ``dspk preprocess`` of it by the
program, and a sidecar without what differs between runs (its provenance: timings, devices,
jobs)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import probeinterface

from recordings import write_binary

RATE = 30_000


def write_probed(folder: Path, rng, channels: int, samples: int):
    """A time-major int16 recording at 30 kHz (random values, gains and offsets) and a probe
    file of two columns of contacts 20 µm apart wired in order: ``(recording, probe file)``."""
    folder.mkdir(parents=True, exist_ok=True)
    rec = write_binary(folder / "rec.bin", rng, channels=channels, samples=samples, rate=str(RATE))
    c = np.arange(channels)
    probe = probeinterface.Probe(ndim=2, si_units="um")
    probe.set_contacts(
        positions=np.stack([16.0 + 32.0 * (c % 2), 20.0 * (c // 2)], axis=1),
        shapes="square",
        shape_params={"width": 12},
    )
    probe.set_device_channel_indices(c)
    group = probeinterface.ProbeGroup()
    group.add_probe(probe)
    probe_file = folder / "probe.json"
    probeinterface.write_probeinterface(probe_file, group)
    return rec.path, probe_file


def preprocess(dspk_program: str, runtime: str, recording: Path, probe: Path, out: Path, *extra: str,
               devices: str | None = None) -> dict:
    """``dspk --runtime RUNTIME [--devices D] preprocess REC --probe PROBE -o OUT EXTRA…
    --json``, run here; its JSON."""
    pre = ["--runtime", runtime] + ([] if devices is None else ["--devices", devices])
    done = subprocess.run(
        [dspk_program, *pre, "preprocess", str(recording), "--probe", str(probe), "-o", str(out),
         *extra, "--json"],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def sidecar_without_provenance(data: Path) -> dict:
    """The sidecar of ``data`` but its provenance and the name of what it was made from."""
    side = json.loads(Path(f"{data}.json").read_text())
    side.pop("provenance", None)
    side.get("metadata", {}).pop("dspk_converted_from", None)
    return side
