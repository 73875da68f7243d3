"""The H200 benches' recording: an NP1000 SpikeGLX AP file of SECONDS at 30 kHz, 384 channels
plus a zero sync channel, int16 noise (uniform in ±200) on a per-channel offset (±400), NumPy's
generator seeded 7 — the same bytes on every run. Written as DIR/rec_g0_t0.imec0.ap.bin with
its .meta (two columns of contacts, 20 µm rows, one shank).

Usage: python3 bench/np1_spikeglx.py DIR SECONDS
"""

import sys

import numpy as np


def write_meta(d: str, samples: int) -> None:
    """The .meta of a 385-channel NP1000 AP file of `samples` samples in folder `d`."""
    imro = "(0,384)" + "".join(f"({i} 0 0 500 250 1)" for i in range(384))
    chans = "(384,384,1)" + "".join(f"(AP{i};{i}:{i})" for i in range(384)) + "(SY0;768:768)"
    shank = "(1,2,480)" + "".join(f"(0:{i % 2}:{i // 2}:1)" for i in range(384))
    meta = f"""typeThis=imec
imSampRate=30000.0
nSavedChans=385
snsApLfSy=384,0,1
acqApLfSy=384,384,1
snsSaveChanSubset=0:383,768
imAiRangeMax=0.6
imAiRangeMin=-0.6
imMaxInt=512
imDatPrb_type=0
imDatPrb_pn=NP1000
fileSizeBytes={samples * 385 * 2}
~imroTbl={imro}
~snsChanMap={chans}
~snsShankMap={shank}
"""
    with open(f"{d}/rec_g0_t0.imec0.ap.meta", "w") as f:
        f.write(meta)


def main() -> None:
    d, seconds = sys.argv[1], int(sys.argv[2])
    n, c = seconds * 30000, 385
    rng = np.random.default_rng(7)
    with open(f"{d}/rec_g0_t0.imec0.ap.bin", "wb") as f:
        for start in range(0, n, 300000):
            m = min(300000, n - start)
            block = rng.integers(-200, 200, size=(m, c), dtype=np.int16)
            block[:, :384] += rng.integers(-400, 400, size=384, dtype=np.int16)
            block[:, 384] = 0
            block.tofile(f)
    write_meta(d, n)


if __name__ == "__main__":
    main()
