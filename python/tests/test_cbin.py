"""mtscomp ``.cbin`` files written by PyPI's ``mtscomp`` (the writer IBL uses) from recordings of
the tests, read by dspk: bit for bit the original ``.bin`` in either chunk order with a short
last chunk, the SpikeGLX ``.meta`` beside them giving channels, gains and probe as for the
``.bin``; ``dspk convert`` of a ``.cbin`` writes the bytes the ``.bin``'s conversion writes; and
each corrupt input is one clear error naming the file and the chunk."""

from __future__ import annotations

import json
import shutil
import subprocess

import mtscomp
import numpy as np
import pytest

import dspk
from recordings import write_spikeglx


def compress(bin_path, out, *, order: str, chunk_s: float, channels: int = 385, rate: float = 30000.0):
    """``out`` (+ ``.ch``) written by mtscomp from the int16 file ``bin_path``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    mtscomp.compress(
        bin_path,
        out,
        out.with_suffix(".ch"),
        sample_rate=rate,
        n_channels=channels,
        dtype=np.int16,
        chunk_duration=chunk_s,
        chunk_order=order,
        check_after_compress=False,
        quiet=True,
    )
    return out


@pytest.fixture
def sglx(tmp_path, rng):
    # 0.1 s chunks of 3000 samples: the last one is short unless the count is a multiple.
    n = int(rng.integers(10_000, 14_000))
    n += 1 if n % 3000 == 0 else 0
    return write_spikeglx(tmp_path / "sglx", rng, samples=n)


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_cbin_decodes_to_its_bin_bit_for_bit(sglx, tmp_path, order):
    cbin = compress(sglx.bin, tmp_path / order / sglx.bin.name.replace(".bin", ".cbin"), order=order, chunk_s=0.1)
    ch = json.loads(cbin.with_suffix(".ch").read_text())
    bounds = ch["chunk_bounds"]
    assert ch["chunk_order"] == order and bounds[-1] - bounds[-2] < bounds[1] - bounds[0]
    shutil.copy(sglx.meta, cbin.with_suffix(".meta"))
    ours = dspk.open(cbin)
    assert ours.format == "cbin"
    assert ours.samples == sglx.frames.shape[0] and ours.channel_count == 385
    np.testing.assert_array_equal(ours.read_stored().T, sglx.frames)
    # A window across a chunk boundary, channels out of order: the stored values.
    a = bounds[1] - 17
    picks = [384, 3, 200, 3]
    np.testing.assert_array_equal(ours.read_stored(picks, a, a + 40), sglx.frames[a : a + 40, picks].T)
    # Channels, units and µV as the .bin's reader gives them (the .meta's gains).
    theirs = dspk.open(sglx.bin)
    assert ours.channel_names == theirs.channel_names and ours.units == theirs.units
    np.testing.assert_array_equal(ours.read(), theirs.read())
    # µV from SpikeGLX's formula in float64, rounded once to float32.
    uv = (sglx.frames[:, :384].astype(np.float64) * sglx.uv_gains).astype(np.float32)
    np.testing.assert_allclose(ours.read(list(range(384))).T, uv, rtol=1e-6)


def test_a_cbin_without_meta_reads_with_unit_gains(tmp_path, rng):
    frames = rng.integers(-(2**15), 2**15, size=(7_001, 7), dtype=np.int16)  # diffs wrap
    raw = tmp_path / "x.bin"
    raw.write_bytes(frames.tobytes())
    cbin = compress(raw, tmp_path / "x.cbin", order="C", chunk_s=0.05, channels=7, rate=20000.0)
    ours = dspk.open(cbin)
    assert ours.sample_rate_hz == 20000.0 and ours.channel_count == 7
    np.testing.assert_array_equal(ours.read_stored().T, frames)
    np.testing.assert_array_equal(ours.read(), frames.T.astype(np.float32))


def test_convert_writes_what_the_bin_converts_to(sglx, tmp_path, dspk_program, runtime):
    cbin = compress(sglx.bin, tmp_path / "c" / "r.ap.cbin", order="F", chunk_s=0.1)
    shutil.copy(sglx.meta, cbin.with_suffix(".meta"))
    outs = []
    for src, name in ((cbin, "from_cbin.bin"), (sglx.bin, "from_bin.bin")):
        out = tmp_path / name
        run = subprocess.run(
            [dspk_program, "convert", str(src), "-o", str(out), "--runtime", runtime], capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def program_error(dspk_program, *args) -> str:
    run = subprocess.run([dspk_program, *args], capture_output=True, text=True)
    assert run.returncode != 0, run.stdout
    return [line for line in run.stderr.splitlines() if line.startswith("error: ")][-1]


def test_corrupt_inputs_name_the_file_and_the_chunk(sglx, tmp_path, dspk_program):
    cbin = compress(sglx.bin, tmp_path / "c" / "r.ap.cbin", order="F", chunk_s=0.1)
    shutil.copy(sglx.meta, cbin.with_suffix(".meta"))
    good = cbin.read_bytes()
    ch = json.loads(cbin.with_suffix(".ch").read_text())
    offsets = ch["chunk_offsets"]

    def variant(name, data=good, header=ch):
        """A copy in a folder of its own: a file dspk has mapped is never rewritten (the
        readers' contract; read-ahead threads may be reading it)."""
        path = tmp_path / name / cbin.name
        path.parent.mkdir()
        path.write_bytes(data)
        ch_text = header if isinstance(header, str) else json.dumps(header)
        path.with_suffix(".ch").write_text(ch_text)
        shutil.copy(sglx.meta, path.with_suffix(".meta"))
        return path

    # --verify passes on the file as written, and fails on a wrong SHA-1.
    ok = subprocess.run([dspk_program, "info", "--verify", str(cbin)], capture_output=True, text=True)
    assert ok.returncode == 0 and "verified: SHA-1 of the file and of the decoded data" in ok.stderr
    path = variant("sha1", header=dict(ch, sha1_uncompressed="0" * 40))
    e = program_error(dspk_program, "info", "--verify", str(path))
    assert str(path) in e and "SHA-1 of the decoded data" in e and "0" * 40 in e
    assert subprocess.run([dspk_program, "info", str(path)], capture_output=True).returncode == 0

    # A truncated .cbin: its size disagrees with the offsets at open.
    path = variant("truncated", data=good[: offsets[-1] - 100])
    e = program_error(dspk_program, "info", str(path))
    assert str(path) in e and f"end at byte {offsets[-1]}" in e and "truncated" in e
    with pytest.raises(OSError, match="truncated"):
        dspk.open(path)

    # A chunk damaged at its end (chunk 1's last 8 bytes zeroed): reading it names it.
    broken = bytearray(good)
    broken[offsets[2] - 8 : offsets[2]] = bytes(8)
    path = variant("damaged", data=bytes(broken))
    rec = dspk.open(path)
    rec.read_stored(None, 0, 100)  # chunk 0 is fine (chunk 1 read ahead fails unseen)
    with pytest.raises(OSError, match=r"chunk 1: ") as err:
        rec.read_stored(None, ch["chunk_bounds"][1], ch["chunk_bounds"][1] + 10)
    assert str(path) in str(err.value)

    # Wrong offsets (chunk 1 starting 3 bytes late): the chunks that cannot be inflated are named.
    path = variant("offsets", header=dict(ch, chunk_offsets=[offsets[0], offsets[1] + 3, *offsets[2:]]))
    rec = dspk.open(path)
    with pytest.raises(OSError, match=r"chunk 0: ") as err:
        rec.read_stored(None, 0, 10)
    assert str(path) in str(err.value) and "wrong chunk_offsets" in str(err.value)
    with pytest.raises(OSError, match=r"chunk 1: "):
        rec.read_stored(None, ch["chunk_bounds"][1], ch["chunk_bounds"][1] + 10)

    # A .ch whose shape disagrees with the .meta.
    path = variant("channels", header=dict(ch, n_channels=384))
    e = program_error(dspk_program, "info", str(path))
    assert str(path.with_suffix(".ch")) in e and "n_channels is 384" in e and "nSavedChans=385" in e
    short = dict(ch, chunk_bounds=[*ch["chunk_bounds"][:-1], ch["chunk_bounds"][-1] - 1])
    path = variant("samples", header=short)
    e = program_error(dspk_program, "info", str(path))
    assert str(path.with_suffix(".ch")) in e and f"fileSizeBytes={sglx.frames.nbytes}" in e
    path = variant("json", header="{not json")
    e = program_error(dspk_program, "info", str(path))
    assert str(path.with_suffix(".ch")) in e and "not an mtscomp .ch header" in e
