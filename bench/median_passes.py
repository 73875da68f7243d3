"""How many passes over a set the device's median selection takes (dspk-ops
`reference/median.rs`, `key_of_rank_by_brackets`), counted on the host with the same float32
arithmetic and thresholds, over 200 sets of 384 values of each kind: the stats pass, the
counting passes and the last pass that sorts the final keys (the pass for the second middle
rank comes after these, on every kind).

Usage: python3 bench/median_passes.py (NumPy)."""
import numpy as np

ALL, SIGN = 0xFFFFFFFF, 0x80000000
GUESSES, COLLECTED = 4, 8
f = np.float32


def key(x):
    b = int(np.float32(x).view(np.uint32))
    return (b ^ ALL) if b > SIGN else (b | SIGN)


def from_key(k):
    return np.uint32((k ^ SIGN) if k >= SIGN else (k ^ ALL)).view(np.float32)


def passes(values, rank):
    n, keys = len(values), [key(v) for v in values]
    total, squares = f(0), f(0)
    for v in values:
        total, squares = f(total + v), f(squares + f(v * v))
    mean = f(total / f(n))
    variance = f(squares / f(n) - mean * mean)
    margin = f(f(np.sqrt(variance)) * f(0.125)) if variance > 0 else f(0)
    guesses = [f(mean - margin), mean, f(mean + margin)]
    lo, hi, below, inside, guessed, count = 0, ALL, 0, n, 0, 1
    while True:
        if lo == hi:
            return count
        if inside <= COLLECTED:
            return count + 1
        t = [key(g) for g in guesses]
        if guessed >= GUESSES:
            q = (hi - lo) // 4 + 1
            t1 = lo + q
            t2 = t1 + min(q, hi - t1)
            t = [t1, t2, t2 + min(q, hi - t2)]
        t1 = min(max(t[0], lo + 1), hi)
        t2 = min(max(t[1], t1), hi)
        t3 = min(max(t[2], t2), hi)
        c1, c2, c3 = (sum(k < t for k in keys) for t in (t1, t2, t3))
        count += 1
        under_hi = below + inside
        if c3 <= rank:
            lo, below = t3, c3
        elif c2 <= rank:
            lo, below, hi, under_hi = t2, c2, t3 - 1, c3
        elif c1 <= rank:
            lo, below, hi, under_hi = t1, c1, t2 - 1, c2
        else:
            hi, under_hi = t1 - 1, c1
        inside = under_hi - below
        guessed += 1
        with np.errstate(all="ignore"):
            v_lo, v_hi = from_key(lo), from_key(hi)
            share = f(f(v_hi - v_lo) / f(inside))
            at = f(v_lo + f(share * f(rank - below + 0.5)))
            spread = f(share * f(f(f(np.sqrt(f(inside))) * f(0.5)) + f(1)))
        guesses = [f(at - spread), at, f(at + spread)]


rng = np.random.default_rng(1)
KINDS = {
    "Gaussian noise, 20 uV": lambda: rng.normal(0, 20, 384),
    "the same on channel offsets of +-400 uV": lambda: rng.normal(0, 20, 384)
    + rng.uniform(-400, 400, 384),
    "int16 steps of 2.34 uV, centred": lambda: rng.normal(0, 20, 384).round() * 2.34375
    - rng.uniform(-1, 1, 384),
    "5 % of the channels 300 uV down": lambda: rng.normal(0, 20, 384)
    - 300 * (rng.random(384) < 0.05),
    "small integers (ties)": lambda: rng.integers(-3, 4, 384).astype(float),
}
for name, make in KINDS.items():
    counts = [passes(make().astype(np.float32), 191) for _ in range(200)]
    print(f"{name}: {np.mean(counts):.2f} passes on average, at most {max(counts)}")
