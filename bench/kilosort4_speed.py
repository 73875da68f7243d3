"""Kilosort 4.1.7's preprocessing speed on a SpikeGLX-like int16 file: the same-run baseline of
issue 32's K1a (file → preprocessed batches on the GPU) and K1b (file → preprocessed int16
file). Run where torch (CUDA) and the kilosort wheel are installed (the H200):
`python bench/kilosort4_speed.py REC.bin CHANNELS OUT_DIR`.

It uses Kilosort's own `BinaryFiltered` (kilosort/io.py: np.memmap batches of 60 000 samples
with 61 samples of context, to torch on the device, `filter`: mean removal, median reference,
FFT high-pass, whitening) where `kilosort.io` imports; where the installed environment lacks a
dependency of the package's `__init__` (it imports the whole sorter), the same batch loop is
written out around kilosort/preprocessing.py loaded alone (`get_highpass_filter`,
`fft_highpass`, `whitening_local`), line for line as `padded_batch_to_torch` and `filter` do,
and says so. The whitening matrix is fitted on the first batch (its cost is not timed: dspk's
fit pass is timed apart too). K1b writes `(X * 200).astype(int16)` of each batch's owned
samples, time-major, as `save_preprocessing` does, and fsyncs at the end."""

import importlib.util
import os
import sys
import time

import numpy as np
import torch

path, channels, out_dir = sys.argv[1], int(sys.argv[2]), sys.argv[3]
device = torch.device("cuda")
FS, NT, NTPAD = 30000, 60000, 61


def _preprocessing():
    spec = importlib.util.find_spec("kilosort")
    module_path = spec.submodule_search_locations[0] + "/preprocessing.py"
    loader = importlib.util.spec_from_file_location("kilosort_preprocessing", module_path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module


ks = _preprocessing()
raw = np.memmap(path, dtype=np.int16, mode="r").reshape(-1, channels)
samples = raw.shape[0]
signal = channels - 1  # the last channel is the sync word
chan_map = np.arange(signal)
hp_filter = ks.get_highpass_filter(FS, 300, device=device)
# Neuropixels 1.0's checkerboard.
c = np.arange(signal)
xc = np.array([43.0, 11.0, 59.0, 27.0])[c % 4].astype(np.float32)
yc = (20.0 * (c // 2)).astype(np.float32)

try:
    from kilosort.io import BinaryFiltered  # noqa: E402

    which = "kilosort.io.BinaryFiltered"
except Exception as e:  # the package's __init__ imports the sorter and its GUI-free deps
    BinaryFiltered = None
    which = f"BinaryFiltered written out around kilosort/preprocessing.py (kilosort.io: {e!r})"

n_batches = int(np.ceil(samples / NT))


def batch_loop(whiten):
    """Yields each batch's preprocessed owned samples on the device, as Kilosort makes them."""
    if BinaryFiltered is not None:
        bfile = BinaryFiltered(path, channels, FS, NT, NTPAD, chan_map=chan_map, hp_filter=hp_filter,
                               whiten_mat=whiten, device=device, dtype="int16")
        for i in range(bfile.n_batches):
            yield bfile.padded_batch_to_torch(i)[:, NTPAD:-NTPAD]
        return
    fwav = None
    for i in range(n_batches):
        bstart, bend = max(0, i * NT - NTPAD), min(samples, (i + 1) * NT + NTPAD)
        data = raw[bstart:bend].T
        nsamp = data.shape[-1]
        X = torch.zeros((channels, NT + 2 * NTPAD), device=device)
        if i == 0:
            X[:, NTPAD:NTPAD + nsamp] = torch.from_numpy(np.ascontiguousarray(data)).to(device).float()
            X[:, :NTPAD] = X[:, NTPAD:NTPAD + 1]
        elif i == n_batches - 1:
            X[:, :nsamp] = torch.from_numpy(np.ascontiguousarray(data)).to(device).float()
            X[:, nsamp:] = X[:, nsamp - 1:nsamp]
        else:
            X[:] = torch.from_numpy(np.ascontiguousarray(data)).to(device).float()
        X = X[chan_map]
        X = X - X.mean(1).unsqueeze(1)
        X = X - torch.median(X, 0)[0]
        if fwav is None or fwav.shape[-1] != X.shape[1]:
            fwav = ks.fft_highpass(hp_filter, NT=X.shape[1])
        X = torch.real(torch.fft.ifft(torch.fft.fft(X) * torch.conj(fwav)))
        X = torch.fft.fftshift(X, dim=-1)
        X = whiten @ X
        yield X[:, NTPAD:-NTPAD]


# The whitening matrix from the first batch (not timed).
first = next(iter(batch_loop(torch.eye(signal, device=device))))
cc = (first @ first.T) / first.shape[1]
whiten = ks.whitening_local(cc, xc, yc, 32, device=device)
torch.cuda.synchronize()
seconds = samples / FS

t0 = time.perf_counter()
for X in batch_loop(whiten):
    pass
torch.cuda.synchronize()
k1a = time.perf_counter() - t0

out = os.path.join(out_dir, "ks4.bin")
t0 = time.perf_counter()
with open(out, "wb") as f:
    for X in batch_loop(whiten):
        f.write((X * 200).to(torch.int16).T.contiguous().cpu().numpy().tobytes())
    f.flush()
    os.fsync(f.fileno())
k1b = time.perf_counter() - t0
written = os.path.getsize(out)
os.remove(out)
print(f"kilosort4 ({which}): {seconds:.0f} s of {signal} channels")
print(f"  K1a file -> preprocessed batches on the GPU: {k1a:.2f} s, {seconds / k1a:.1f}x real time")
print(f"  K1b file -> int16 file in {out_dir}: {k1b:.2f} s, {seconds / k1b:.1f}x real time, "
      f"{written / 1e6 / k1b:.0f} MB/s written")
