"""Every class of bad input is a dspk exception with a natural built-in base and the program's
one-line message; none crashes the interpreter."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import dspk


def program_error(dspk_program, *args) -> str:
    """The line ``dspk`` prints after ``error: ``."""
    run = subprocess.run([dspk_program, *args], capture_output=True, text=True)
    assert run.returncode != 0
    line = [l for l in run.stderr.splitlines() if l.startswith("error: ")][-1]
    return line[len("error: ") :]


def test_the_hierarchy():
    assert issubclass(dspk.InvalidInputError, ValueError)
    assert issubclass(dspk.UnsupportedFormatError, ValueError)
    assert issubclass(dspk.RecordingFileError, OSError)
    assert issubclass(dspk.RecordingNotFoundError, FileNotFoundError)
    assert issubclass(dspk.RecordingNotFoundError, dspk.RecordingFileError)
    assert issubclass(dspk.DeviceError, RuntimeError)
    for e in (dspk.InvalidInputError, dspk.UnsupportedFormatError, dspk.RecordingFileError, dspk.DeviceError):
        assert issubclass(e, dspk.DspkError)
        assert e.__module__ == "dspk"


def test_a_missing_file(tmp_path, dspk_program):
    path = tmp_path / "nothing.bin"
    with pytest.raises(FileNotFoundError) as e:
        dspk.open(path)
    assert isinstance(e.value, dspk.RecordingNotFoundError)
    assert str(e.value) == program_error(dspk_program, "info", str(path))


def test_files_that_are_not_recordings(tmp_path, dspk_program):
    lone = tmp_path / "lone.bin"
    lone.write_bytes(b"\0" * 64)
    with pytest.raises(dspk.DspkError) as e:
        dspk.open(lone)
    assert str(e.value) == program_error(dspk_program, "info", str(lone))
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\0" * 64)
    (tmp_path / "bad.bin.json").write_text('{"sample_rate": -3, "channel_count": 2, "format": "int16", "order": "time-major"}')
    with pytest.raises(dspk.DspkError) as e:
        dspk.open(bad)
    assert str(e.value) == program_error(dspk_program, "info", str(bad))
    assert "\n" not in str(e.value)


def test_reads_outside_the_recording(binary, dspk_program):
    rec = dspk.open(binary.path)
    n, c = rec.samples, rec.channel_count
    with pytest.raises(dspk.InvalidInputError) as e:
        rec.read(stop=n + 1)
    assert str(e.value) == f"sample range 0..{n + 1} is outside the recording of {n} samples"
    with pytest.raises(ValueError, match=f"sample range 10..5 is outside the recording of {n} samples"):
        rec.read(start=10, stop=5)
    with pytest.raises(dspk.InvalidInputError) as e:
        rec.read([c])
    assert str(e.value) == f"channel {c} does not exist: the recording has {c} channels"
    # A range far beyond memory is refused before anything is allocated.
    with pytest.raises(dspk.InvalidInputError):
        rec.read(stop=2**62)


@pytest.mark.parametrize(
    "kwargs, says",
    [
        ({"start": -1}, "start must be at least 0, not -1"),
        ({"start": 1.0}, "start must be a whole number, not float"),
        ({"stop": "10"}, "stop must be a whole number, not str"),
        ({"start": True}, "start must be a whole number, not bool"),
        ({"stop": 2**70}, "too large"),
        ({"channels": "0,1"}, "channels must be a sequence of channel indices"),
        ({"channels": 3}, "channels must be a sequence of channel indices"),
        ({"channels": []}, "channels is empty"),
        ({"channels": [0, -2]}, "a channel index must be at least 0, not -2"),
        ({"channels": [0.5]}, "a channel index must be a whole number, not float"),
        ({"channels": None, "out": "x"}, "out must be"),
    ],
)
def test_bad_arguments(binary, kwargs, says):
    rec = dspk.open(binary.path)
    with pytest.raises(dspk.InvalidInputError) as e:
        rec.read(**kwargs)
    assert says in str(e.value)


def test_bad_runtime_and_options(binary, dspk_program):
    rec = dspk.open(binary.path)
    with pytest.raises(dspk.InvalidInputError) as e:
        dspk.scan(rec, runtime="nope", progress=False)
    assert str(e.value) == program_error(dspk_program, "scan", str(binary.path), "--runtime", "nope").replace(
        "--runtime: ", "runtime: "
    )
    with pytest.raises(dspk.InvalidInputError, match="names no decode route"):
        dspk.scan(rec, decode="fast", progress=False)
    with pytest.raises(dspk.InvalidInputError, match="order \"sideways\" is not a layout"):
        dspk.convert(rec, binary.path.parent / "o.bin", order="sideways", progress=False)
    with pytest.raises(dspk.InvalidInputError, match="progress must be a callable"):
        dspk.scan(rec, progress=3)
    with pytest.raises(dspk.InvalidInputError, match="give seconds or samples, not both"):
        dspk.synthetic(1, samples=10)
    with pytest.raises(dspk.InvalidInputError, match="invalid sample rate"):
        dspk.synthetic(1, sample_rate=-5.0)
    with pytest.raises(dspk.InvalidInputError, match="would be empty"):
        dspk.synthetic(samples=0)


def test_a_bad_input_never_crashes_the_interpreter(binary):
    """Each bad call in a child interpreter: it must raise, never abort (a Rust panic across
    the FFI boundary would be a PanicException or an abort)."""
    code = f"""
import numpy as np, dspk
rec = dspk.open({str(binary.path)!r})
bad = [
    lambda: rec.read(stop=2**63), lambda: rec.read(out=np.zeros((0,), np.float32)),
    lambda: rec.read_stored(start=5, stop=2), lambda: rec.windows(2**63),
    lambda: rec.windows(10, (2**63, 2**63)), lambda: dspk.synthetic(samples=2**64 - 1, channels=2**40),
    lambda: dspk.synthetic(channels=0), lambda: dspk.scan(rec, start=3, end=3, progress=False),
    lambda: dspk.scan(rec, window_samples=0, progress=False),
    lambda: next(iter(rec.windows(10, channels=[0, 0, 0]))),
    lambda: dspk.synthetic(samples=10, channels=2**30),
]
for f in bad:
    try:
        f()
    except dspk.DspkError:
        pass
    except (TypeError, OverflowError, MemoryError):
        pass
print("survived")
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "survived" in run.stdout
    assert "PanicException" not in run.stderr
