"""Recording: every property, and reads equal to independent references bit for bit (NumPy's
decode of the bytes the test wrote, and the ``dspk`` program's own output)."""

from __future__ import annotations

import json
import subprocess
from fractions import Fraction

import numpy as np
import pytest

import dspk
from recordings import scaled, write_binary


def test_spikeglx_properties(spikeglx):
    rec = dspk.open(spikeglx.bin)
    assert rec.format == "spikeglx"
    assert rec.channel_count == 385
    assert rec.samples == spikeglx.frames.shape[0]
    assert rec.sample_rate == Fraction(30000)
    assert rec.sample_rate_hz == 30000.0
    assert rec.duration == Fraction(rec.samples, 30000)
    assert rec.start_time == Fraction(spikeglx.first_sample, 30000)
    assert rec.channel_names == [f"AP{c}" for c in range(384)] + ["SY0"]
    assert rec.dtype == np.dtype("int16")
    assert rec.order == "time-major"
    assert rec.units == ["µV"] * 384 + [""]
    np.testing.assert_allclose(rec.gains[:384], spikeglx.uv_gains, rtol=1e-7)
    assert rec.gains[384] == 1.0 and rec.gains.dtype == np.float32
    assert not rec.offsets.any() and rec.offsets.dtype == np.float32
    assert rec.metadata["imDatPrb_pn"] == "NP1000"
    assert rec.path == spikeglx.bin
    assert sorted(rec.files) == sorted([spikeglx.bin, spikeglx.meta])
    assert rec.warnings == []
    assert rec.planted_dead is None and rec.planted_noisy is None
    assert "385 channels" in repr(rec)


def test_exact_rate_and_start_of_a_binary_file(binary):
    rec = dspk.open(binary.path)
    assert rec.format == "binary"
    assert rec.sample_rate == Fraction(750003, 25)  # 30000.12 Hz, exactly
    assert rec.sample_rate_hz == pytest.approx(30000.12)
    assert rec.start_time == Fraction(1, 3)
    assert rec.duration == Fraction(rec.samples) / Fraction(750003, 25)
    assert rec.channel_names == [f"E{c}" for c in range(binary.values.shape[0])]
    np.testing.assert_array_equal(rec.gains, binary.gains)
    np.testing.assert_array_equal(rec.offsets, binary.offsets)
    assert rec.metadata == {"probe": "test"}


def test_a_partial_last_frame_is_a_warning(tmp_path, rng):
    b = write_binary(tmp_path / "r.bin", rng, channels=4, samples=100)
    with open(b.path, "ab") as f:
        f.write(b"\x01\x02\x03")
    rec = dspk.open(b.path)
    assert rec.samples == 100
    assert len(rec.warnings) == 1 and "r.bin" in rec.warnings[0]


def test_synthetic_properties():
    rec = dspk.synthetic(2)
    assert rec.format == "synthetic" and rec.path is None and rec.files == []
    assert rec.channel_count == 384 and rec.samples == 60_000
    assert rec.sample_rate == 30000 and rec.dtype == np.dtype("int16")
    assert rec.planted_dead and rec.planted_noisy
    small = dspk.synthetic(samples=1000, channels=8, seed=3, dead=[1], noisy=[5], sample_rate=Fraction(24414, 1))
    assert (small.channel_count, small.samples) == (8, 1000)
    assert small.planted_dead == [1] and small.planted_noisy == [5]
    assert small.sample_rate == 24414
    assert dspk.synthetic(Fraction(1, 10)).samples == 3000
    assert dspk.synthetic(0.5).samples == 15000


@pytest.mark.parametrize("dtype", ["int16", "uint16", "int32", "int8", "float32", "float64"])
@pytest.mark.parametrize("order", ["time-major", "channel-major"])
def test_read_equals_numpy_decode_bit_for_bit(tmp_path, rng, dtype, order):
    b = write_binary(tmp_path / "r.bin", rng, channels=int(rng.integers(2, 9)), samples=3000, dtype=dtype, order=order)
    rec = dspk.open(b.path)
    want = scaled(b.values, b.gains, b.offsets)
    np.testing.assert_array_equal(rec.read(), want)
    np.testing.assert_array_equal(rec.read_stored(), b.values)
    assert rec.read_stored().dtype == np.dtype(dtype)
    for _ in range(5):
        c = rng.permutation(b.values.shape[0])[: int(rng.integers(1, b.values.shape[0] + 1))].tolist()
        start = int(rng.integers(0, 2999))
        stop = int(rng.integers(start, 3001))
        got = rec.read(c, start, stop)
        assert got.dtype == np.float32 and got.shape == (len(c), stop - start)
        np.testing.assert_array_equal(got, want[c, start:stop])
        np.testing.assert_array_equal(rec.read_stored(c, start, stop), b.values[c, start:stop])


def test_spikeglx_read_equals_numpy_and_repeats_allowed(spikeglx, rng):
    rec = dspk.open(spikeglx.bin)
    stored = spikeglx.frames.T
    np.testing.assert_array_equal(rec.read_stored(), stored)
    want = scaled(stored, rec.gains, rec.offsets)
    channels = [384, 7, 7, 0, 383]
    start = int(rng.integers(0, 1000))
    np.testing.assert_array_equal(rec.read(channels, start, start + 999), want[channels, start : start + 999])
    np.testing.assert_array_equal(rec.read(range(3), stop=10), want[:3, :10])
    np.testing.assert_array_equal(rec.read(np.array([5, 2])), want[[5, 2]])


def test_read_equals_the_program_bit_for_bit(spikeglx, dspk_program, tmp_path, rng):
    """The ``dspk`` program's convert writes the Rust read (decoded on the device, which equals
    the host decode bit for bit) as float32; the package's read must equal it."""
    out = tmp_path / "prog.bin"
    start = int(rng.integers(0, 5000))
    end = start + int(rng.integers(1000, 5000))
    run = subprocess.run(
        [dspk_program, "convert", str(spikeglx.bin), "-o", str(out), "--order", "channel-major",
         "--start", f"{start}smp", "--end", f"{end}smp", "--json"],
        capture_output=True, text=True, check=True,
    )
    assert json.loads(run.stdout)["samples"] == end - start
    program = np.fromfile(out, dtype="<f4").reshape(385, end - start)
    rec = dspk.open(spikeglx.bin)
    np.testing.assert_array_equal(rec.read(start=start, stop=end), program)


def test_out_fills_the_callers_array(binary, rng):
    rec = dspk.open(binary.path)
    c = binary.values.shape[0]
    out = np.full((c, 500), np.nan, dtype=np.float32)
    got = rec.read(start=100, stop=600, out=out)
    assert got is out
    np.testing.assert_array_equal(out, scaled(binary.values, binary.gains, binary.offsets)[:, 100:600])
    raw = np.zeros((2, 50), dtype=np.int16)
    assert rec.read_stored([1, 0], 10, 60, out=raw) is raw
    np.testing.assert_array_equal(raw, binary.values[[1, 0], 10:60])


@pytest.mark.parametrize(
    "bad, says",
    [
        (np.zeros((3, 10), dtype=np.float64), "dtype float64"),
        (np.zeros((2, 10), dtype=np.float32), "shape (2, 10)"),
        (np.zeros((3, 11), dtype=np.float32), "shape (3, 11)"),
        (np.zeros(30, dtype=np.float32), "shape (30,)"),
        (np.zeros((10, 3), dtype=np.float32).T, "not C-contiguous"),
        (np.zeros((3, 20), dtype=np.float32)[:, ::2], "not C-contiguous"),
        (np.zeros((3, 10), dtype=">f4"), "dtype >f4"),
        ([[0.0] * 10] * 3, "not list"),
    ],
)
def test_out_of_the_wrong_shape_or_dtype_is_refused(binary, bad, says):
    rec = dspk.open(binary.path)
    with pytest.raises(dspk.InvalidInputError) as e:
        rec.read([0, 1, 2], 0, 10, out=bad)
    assert says in str(e.value)
    assert "float32 array of shape (3, 10)" in str(e.value)
    assert isinstance(e.value, ValueError) and isinstance(e.value, dspk.DspkError)


def test_read_only_out_is_refused(binary):
    rec = dspk.open(binary.path)
    out = np.zeros((1, 10), dtype=np.float32)
    out.flags.writeable = False
    with pytest.raises(dspk.InvalidInputError, match="read-only"):
        rec.read([0], 0, 10, out=out)
    with pytest.raises(dspk.InvalidInputError, match="dtype float32; the read needs a C-contiguous int16 array"):
        rec.read_stored([0], 0, 10, out=np.zeros((1, 10), dtype=np.float32))


def test_synthetic_reads_are_its_stored_values_scaled():
    rec = dspk.synthetic(samples=4000, channels=6, dead=[2], noisy=[])
    stored = rec.read_stored()
    np.testing.assert_array_equal(rec.read(), scaled(stored, rec.gains, rec.offsets))
    assert np.all(stored[2] == stored[2, 0]) and stored[0].std() > 0


@pytest.mark.parametrize("order", ["time-major", "channel-major"])
def test_read_frames_is_the_time_major_read(tmp_path, rng, order):
    b = write_binary(tmp_path / "f.bin", rng, channels=5, samples=2500, order=order)
    rec = dspk.open(b.path)
    want = scaled(b.values, b.gains, b.offsets).T
    got = rec.read_frames()
    assert got.shape == (2500, 5) and got.flags.c_contiguous
    np.testing.assert_array_equal(got, want)
    out = np.empty((1000, 5), dtype=np.float32)
    assert rec.read_frames(100, 1100, out=out) is out
    np.testing.assert_array_equal(out, want[100:1100])
    with pytest.raises(dspk.InvalidInputError, match="shape"):
        rec.read_frames(0, 10, out=np.empty((5, 10), dtype=np.float32))


def test_open_takes_the_programs_probe_and_rate(tmp_path, rng, dspk_program):
    """`dspk.open(probe=, rate=)` does what `--probe` and `--rate` do."""
    import probeinterface as pi

    b = write_binary(tmp_path / "in.bin", rng, channels=6, samples=3000, rate="30000.12")
    probe = pi.generate_linear_probe(num_elec=6, ypitch=20.0)
    probe.set_device_channel_indices(rng.permutation(6))
    group = pi.ProbeGroup()
    group.add_probe(probe)
    path = tmp_path / "probe.json"
    pi.write_probeinterface(path, group)
    rec = dspk.open(b.path, probe=path, rate="nominal")
    assert rec.sample_rate == Fraction(3000012, 100)
    got, want = rec.probe, probe
    np.testing.assert_allclose(got.contact_positions[np.argsort(got.device_channel_indices)],
                               want.contact_positions[np.argsort(want.device_channel_indices)], atol=1e-6)
    cli = json.loads(subprocess.run([str(dspk_program), "info", str(b.path), "--probe", str(path), "--json"],
                                    check=True, capture_output=True, text=True).stdout)
    want_xy = np.zeros((6, 2))
    want_xy[probe.device_channel_indices] = probe.contact_positions
    cli_xy = np.array([[c["x_um"], c["y_um"]] for c in cli["probe"]["contacts"]["channels"]])
    np.testing.assert_allclose(cli_xy, want_xy, atol=1e-9)
    assert dspk.open(b.path, rate=1000).sample_rate == 1000
    assert dspk.open(b.path, rate="750003/25").sample_rate == Fraction(750003, 25)
    with pytest.raises(ValueError, match="states no measured rate"):
        dspk.open(b.path, rate="measured")
    with pytest.raises(ValueError, match="rate: "):
        dspk.open(b.path, rate="fast")
    with pytest.raises(dspk.DspkError, match="probe"):
        dspk.open(b.path, probe=b.path)
