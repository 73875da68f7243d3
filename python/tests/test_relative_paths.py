"""A `DspkRecording` saved with SpikeInterface's ``to_dict``/``dump`` and paths relative to a
folder, then loaded with ``spikeinterface.load`` in another process from another working
directory (how SpikeInterface's own Dask and Slurm engines carry recordings)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import spikeinterface.core as si
from spikeinterface.core.core_tools import SIJsonEncoder

from dspk.spikeinterface import DspkRecording
from recordings import write_spikeglx

LOAD = """
import json, sys
from pathlib import Path
import numpy as np
import spikeinterface.core as si
what, where = sys.argv[1], Path(sys.argv[2])
if what == "dict":
    rec = si.load(json.loads((where / "rec.dict.json").read_text()), base_folder=where)
else:
    rec = si.load(where / "rec.json", base_folder=True)
traces = rec.get_traces(start_frame=100, end_frame=400, return_in_uV=True)
np.save(where / f"traces-{what}.npy", traces)
print(type(rec).__name__, rec.get_num_channels(), rec.get_num_samples())
"""


def test_to_dict_and_load_with_relative_paths_from_another_process(tmp_path, rng):
    project = tmp_path / "project"
    sglx = write_spikeglx(project / "raw", rng, samples=3000)
    rec = DspkRecording(sglx.bin)
    d = rec.to_dict(relative_to=project, recursive=True)
    assert d["relative_paths"] is True
    assert d["kwargs"]["path"] == "raw/run_g0_t0.imec0.ap.bin"
    (project / "rec.dict.json").write_text(json.dumps(d, cls=SIJsonEncoder))
    rec.dump_to_json(project / "rec.json", relative_to=True)
    assert str(tmp_path) not in (project / "rec.json").read_text()
    want = rec.get_traces(start_frame=100, end_frame=400, return_in_uV=True)

    # The project moves; another process, in another folder, loads it where it now is.
    moved = tmp_path / "elsewhere" / "project"
    moved.parent.mkdir()
    shutil.move(project, moved)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    for what in ("dict", "json"):
        run = subprocess.run([sys.executable, "-c", LOAD, what, str(moved)], cwd=cwd,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        assert run.stdout.split() == ["DspkRecording", str(rec.get_num_channels()), "3000"]
        assert np.array_equal(np.load(moved / f"traces-{what}.npy"), want)
