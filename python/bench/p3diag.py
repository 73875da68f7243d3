"""Diagnosis of P3 after SpikeInterface (not a figure of the plan): dspk.scan's stored MB/s in
one interpreter before and after importing SpikeInterface and after reading through it."""
import sys, tempfile
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from recordings import write_spikeglx
import dspk

with tempfile.TemporaryDirectory() as tmp:
    f = write_spikeglx(Path(tmp) / "sglx", np.random.default_rng(1), samples=60 * 30000)
    rec = dspk.open(f.bin)
    def py(label):
        r = [dspk.scan(rec, progress=False) for _ in range(5)]
        print(label, [round(x.throughput_mb_s) for x in r], flush=True)
    py("fresh")
    import spikeinterface.extractors as se
    from dspk.spikeinterface import DspkRecording
    py("after importing spikeinterface")
    d = DspkRecording(f.bin)
    for s in range(0, 60 * 30000 - 30000, 30000):
        d.get_traces(start_frame=s, end_frame=s + 30000, return_in_uV=True)
    py("after DspkRecording.get_traces")
    n = se.read_spikeglx(f.folder, stream_id="imec0.ap")
    for s in range(0, 60 * 30000 - 30000, 30000):
        n.get_traces(start_frame=s, end_frame=s + 30000, return_in_uV=True)
    py("after read_spikeglx.get_traces")
