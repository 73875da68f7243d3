"""Writes src/edge/reference.json, the reference table of dspk's halo edge modes.

Run once, from crates/dspk-types: python scripts/edge_reference.py (needs NumPy; SciPy is used
for the odd extension when it is installed, else the transcription of scipy.signal's odd_ext
below, checked against NumPy's own odd reflection). The Rust test compares dspk's padding with
these values exactly, so every input is a small dyadic number whose padded values are exact in
f32.
"""

import json
import pathlib

import numpy as np

try:
    from scipy.signal._arraytools import odd_ext
except ImportError:

    def odd_ext(x, n, axis=-1):
        """scipy.signal._arraytools.odd_ext for 1-D input, transcribed from SciPy 1.x."""
        if n < 1:
            return x
        if n > x.shape[axis] - 1:
            raise ValueError(
                f"The extension length n ({n}) is too big. "
                f"It must not exceed x.shape[axis]-1, which is {x.shape[axis] - 1}."
            )
        left_end = x[0:1]
        left_ext = x[n:0:-1]
        right_end = x[-1:]
        right_ext = x[-2 : -(n + 2) : -1]
        return np.concatenate((2 * left_end - left_ext, x, 2 * right_end - right_ext))


def odd(x, left, right):
    """scipy's odd_ext pads both sides alike: take each side from its own extension."""
    lpart = odd_ext(x, left)[:left] if left else x[:0]
    rpart = odd_ext(x, right)[len(odd_ext(x, right)) - right :] if right else x[:0]
    out = np.concatenate((lpart, x, rpart))
    # NumPy's odd reflection agrees wherever odd_ext is defined.
    assert np.array_equal(out, np.pad(x, (left, right), mode="reflect", reflect_type="odd"))
    return out


MODES = {
    "zeros": lambda x, l, r: np.pad(x, (l, r), mode="constant", constant_values=0),
    "reflect": lambda x, l, r: np.pad(x, (l, r), mode="reflect"),
    "nearest": lambda x, l, r: np.pad(x, (l, r), mode="edge"),
    "odd": odd,
}

# (data, [(pad_left, pad_right), ...]); reflect and odd only where pad <= len - 1 (dspk's rule).
CASES = [
    ([1.0, 2.0, 3.0], [(0, 0), (1, 1), (2, 2), (2, 0), (0, 1)]),
    ([1.5, -2.25, 3.0, 0.125, 4.0], [(4, 4), (3, 1), (0, 4), (2, 0), (1, 3)]),
    ([-8.0, 0.5, 2.75, -1.0, 6.0, 0.0, 3.5, -0.25], [(7, 7), (5, 2), (1, 6)]),
    ([2.5, -4.0], [(1, 1), (0, 1)]),
]
# Data too short for reflect and odd at these pads: zeros and nearest only.
SHORT_CASES = [
    ([7.0], [(0, 0), (2, 3)]),
    ([1.0, -3.0], [(3, 2)]),
]
EMPTY_CASES = [([], [(1, 2), (0, 0), (0, 2), (3, 0)])]


def row(mode, data, left, right):
    x = np.asarray(data, dtype=np.float64)
    out = MODES[mode](x, left, right)
    assert out.shape == (left + len(data) + right,)
    assert np.array_equal(out.astype(np.float32).astype(np.float64), out), "not exact in f32"
    return {
        "mode": mode,
        "data": [float(v) for v in data],
        "pad_left": left,
        "pad_right": right,
        "padded": [float(v) for v in out],
    }


def main():
    rows = []
    for data, pads in CASES:
        for left, right in pads:
            for mode in MODES:
                rows.append(row(mode, data, left, right))
    for data, pads in SHORT_CASES:
        for left, right in pads:
            for mode in ("zeros", "nearest"):
                rows.append(row(mode, data, left, right))
    for data, pads in EMPTY_CASES:
        for left, right in pads:
            rows.append(row("zeros", data, left, right))
    # The rule dspk shares with scipy: odd_ext refuses n > len - 1.
    try:
        odd_ext(np.array([1.0, 2.0, 3.0]), 3)
        raise AssertionError("odd_ext accepted n = len")
    except ValueError:
        pass
    doc = {
        "generator": "crates/dspk-types/scripts/edge_reference.py",
        "numpy": np.__version__,
        "cases": rows,
    }
    path = pathlib.Path(__file__).resolve().parent.parent / "src" / "edge" / "reference.json"
    # One case a line, so that a regenerated table diffs case by case.
    cases = ",\n".join("  " + json.dumps(c) for c in rows)
    head = json.dumps({k: v for k, v in doc.items() if k != "cases"})[:-1]
    path.write_text(f'{head}, "cases": [\n{cases}\n]}}\n')
    print(f"wrote {len(rows)} cases to {path}")


if __name__ == "__main__":
    main()
