"""A SpikeGLX-like 385-channel int16 file with spikes planted in noise, for issue 33's detection
figures: Gaussian noise (20 counts) on a per-channel offset, one spike every 90 samples (a trough
of 150-300 counts over three neighbouring channels), the sync channel zero, and its `.meta`.

Usage: python3 bench/planted_spikes.py DIR SECONDS (writes DIR/rec_g0_t0.imec0.ap.bin)."""
import sys

import numpy as np

from np1_spikeglx import write_meta


def write(d, seconds):
    n, c = seconds * 30000, 385
    rng = np.random.default_rng(7)
    shape = np.exp(-((np.arange(-4, 5) / 2.0) ** 2))
    with open(f"{d}/rec_g0_t0.imec0.ap.bin", "wb") as f:
        for start in range(0, n, 300000):
            m = min(300000, n - start)
            block = rng.normal(0, 20, size=(m, c)).astype(np.int16)
            block[:, :384] += rng.integers(-400, 400, size=384, dtype=np.int16)
            times = np.arange(10, m - 10, 90)
            chans = rng.integers(1, 383, size=len(times))
            amps = rng.uniform(150, 300, size=len(times))
            for k, s in enumerate(shape):
                for dc, w in ((-1, 0.5), (0, 1.0), (1, 0.5)):
                    block[times + k - 4, chans + dc] -= (amps * s * w).astype(np.int16)
            block[:, 384] = 0
            block.tofile(f)
    write_meta(d, n)
    return n


if __name__ == "__main__":
    d, seconds = sys.argv[1], int(sys.argv[2])
    n = write(d, seconds)
    print(f"planted one spike every 90 samples: {n // 90} in {seconds} s")
