"""dspk's SpikeGLX probe geometry against probeinterface's ``read_spikeglx`` on the real ``.meta``
files of two PyPI source distributions (fetched by ``pip download``, cached between runs, not
copied into the repository): positions, shank and contact ids, ``device_channel_indices`` and the
per-channel sample shift SpikeInterface's ``phase_shift`` derives from the probe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import warnings
from pathlib import Path

import numpy as np
import pytest

from conftest import skips_fail

#: The source distributions whose test fixtures are real rigs' ``.meta`` files (≈ 40 of them).
SDISTS = ("probeinterface==0.4.2", "ibl-neuropixel==1.14.0")

#: Fewest files probeinterface must read for the comparison to mean something (40 of the 43
#: with probeinterface 0.4.2: it refuses the two LF files and the NI one).
LEAST_COMPARED = 35

#: Samples of the sparse ``.bin`` made where a ``.meta`` gives no ``fileSizeBytes``.
SAMPLES = 1000


def sdist_cache(request) -> Path:
    """Where the sdists are kept between runs: ``$DSPK_TEST_DATA/sdists``, else pytest's cache."""
    given = os.environ.get("DSPK_TEST_DATA")
    if given:
        path = Path(given) / "sdists"
        path.mkdir(parents=True, exist_ok=True)
        return path
    if request.config.cache is not None:
        return Path(request.config.cache.mkdir("dspk-probe-sdists"))
    return Path(request.getfixturevalue("tmp_path_factory").mktemp("sdists"))


def fetch_sdists(cache: Path) -> list[Path]:
    """The two sdists in ``cache``, downloaded by pip where missing. A failed download fails the
    test under CI and skips it (visibly) elsewhere."""
    def have() -> list[Path]:
        found = []
        for spec in SDISTS:
            name, version = spec.split("==")
            stem = f"{name.replace('-', '_')}-{version}"
            found += [p for p in (cache / f"{stem}.tar.gz", cache / f"{name}-{version}.tar.gz") if p.is_file()][:1]
        return found

    if len(have()) == len(SDISTS):
        return have()
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
           "--no-deps", "--no-binary", ":all:", *SDISTS, "-d", str(cache)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if done.returncode != 0 or len(have()) != len(SDISTS):
        why = f"pip download of {' '.join(SDISTS)} failed ({done.returncode}): {done.stderr.strip()[-400:]}"
        if skips_fail():
            pytest.fail(why)
        pytest.skip(f"SKIP: {why}")
    return have()


def meta_value(text: str, key: str) -> str | None:
    """A ``key=value`` line's value in a ``.meta``."""
    for line in text.splitlines():
        k, _, v = line.partition("=")
        if k.strip() == key:
            return v.strip()
    return None


@pytest.fixture(scope="module")
def metas(request, tmp_path_factory) -> list[Path]:
    """Every SpikeGLX ``.meta`` of the sdists, extracted with its folders, each with a sparse
    ``.bin`` beside it of the size the ``.meta`` states."""
    sdists = fetch_sdists(sdist_cache(request))
    root = tmp_path_factory.mktemp("sdist-metas")
    out = []
    for sdist in sdists:
        with tarfile.open(sdist) as tar:
            members = [m for m in tar.getmembers() if m.isfile() and m.name.endswith(".meta")]
            for m in members:
                target = root / m.name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(tar.extractfile(m).read())
                out.append(target)
    for meta in out:
        text = meta.read_text(errors="replace")
        size = meta_value(text, "fileSizeBytes")
        if size is None or not size.isdigit():
            size = int(meta_value(text, "nSavedChans") or 1) * 2 * SAMPLES
        with open(meta.with_suffix(".bin"), "wb") as f:
            f.truncate(int(size))
    assert len(out) >= 40, f"the sdists hold {len(out)} .meta files, not the ≈ 43 expected"
    return sorted(out)


def dspk_info(program: str, meta: Path) -> subprocess.CompletedProcess:
    return subprocess.run([program, "info", "--json", str(meta.with_suffix(".bin"))],
                          capture_output=True, text=True, timeout=60)


def name(meta: Path) -> str:
    return "/".join(meta.parts[-3:])


def shanks(probe) -> np.ndarray:
    """A probeinterface probe's shank ids as numbers (0 where it gives none)."""
    ids = probe.shank_ids
    if ids is None or (len(ids) and ids[0] == ""):
        return np.zeros(probe.get_contact_count(), int)
    return np.asarray(ids).astype(int)


def differences(ours: dict, ref, shifts) -> list[str]:
    """How dspk's probe (``dspk info --json``'s ``probe``) differs from probeinterface's."""
    chans = ours["contacts"]["channels"]
    idx = [i for i, c in enumerate(chans) if c is not None]
    if len(idx) != ref.get_contact_count():
        return [f"{len(idx)} contacts, probeinterface {ref.get_contact_count()}"]
    errs = []
    pos = np.array([[chans[i]["x_um"], chans[i]["y_um"]] for i in idx])
    if not np.allclose(pos, ref.contact_positions, atol=1e-6, rtol=0):
        errs.append(f"positions differ by up to {np.abs(pos - ref.contact_positions).max()} µm")
    if [chans[i]["id"] for i in idx] != list(ref.contact_ids):
        errs.append("contact ids differ")
    if not np.array_equal([chans[i].get("shank", 0) for i in idx], shanks(ref)):
        errs.append("shank ids differ")
    if not np.array_equal(idx, ref.device_channel_indices):
        errs.append("device_channel_indices differ")
    if shifts is not None:
        cycle = (ours["contacts"].get("adc_cycle") or {}).get("cycle_samples")
        got = np.array([chans[i]["adc"]["order"] / cycle if cycle and chans[i].get("adc") else np.nan for i in idx])
        if not np.allclose(got, shifts, atol=1e-12, rtol=0):
            errs.append("sample shifts differ from SpikeInterface's")
    return errs


def test_spikeglx_probes_equal_probeinterface(metas, dspk_program):
    """On every file probeinterface reads, dspk's probe is probeinterface's; on the others dspk
    reads the file or refuses it with one line, and never panics."""
    pi = pytest.importorskip("probeinterface")
    np_utils = pytest.importorskip("spikeinterface.extractors.neuropixels_utils")
    compared, refused_by_pi, problems = 0, [], []
    for meta in metas:
        done = dspk_info(dspk_program, meta)
        if "panicked" in done.stderr or done.returncode not in (0, 1):
            problems.append(f"{name(meta)}: dspk exited {done.returncode}: {done.stderr.strip()}")
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = pi.read_spikeglx(meta)
        except Exception as e:  # noqa: BLE001 - any refusal of probeinterface's
            refused_by_pi.append(f"{name(meta)}: {type(e).__name__}")
            if done.returncode == 1 and len(done.stderr.strip().splitlines()) != 1:
                problems.append(f"{name(meta)}: dspk's refusal is not one line: {done.stderr!r}")
            continue
        if done.returncode != 0:
            problems.append(f"{name(meta)}: probeinterface reads it, dspk refuses: {done.stderr.strip()}")
            continue
        ours = json.loads(done.stdout).get("probe")
        if ours is None:
            problems.append(f"{name(meta)}: probeinterface reads a probe, dspk has none: {done.stderr.strip()}")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            shifts = np_utils.get_neuropixels_sample_shifts_from_probe(ref)
        problems += [f"{name(meta)}: {e}" for e in differences(ours, ref, shifts)]
        compared += 1
    print(f"{compared} probes equal to probeinterface's; it refused {len(refused_by_pi)}: {refused_by_pi}")
    assert not problems, "\n".join(problems)
    assert compared >= LEAST_COMPARED, f"only {compared} files compared; probeinterface refused {refused_by_pi}"


def test_probe_out_is_read_back_by_probeinterface(metas, dspk_program, tmp_path):
    """``dspk info --probe-out`` writes probeinterface JSON that ``read_probeinterface`` reads
    back with the contacts ``dspk info --json`` lists: positions, ids, shanks and channels."""
    pi = pytest.importorskip("probeinterface")
    written = 0
    for k, meta in enumerate(metas):
        out = tmp_path / f"probe{k}.json"
        done = subprocess.run([dspk_program, "info", "--json", "--probe-out", str(out), str(meta.with_suffix(".bin"))],
                              capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            assert not out.exists() and len(done.stderr.strip().splitlines()) == 1, f"{name(meta)}: {done.stderr}"
            continue
        chans = json.loads(done.stdout)["probe"]["contacts"]["channels"]
        idx = [i for i, c in enumerate(chans) if c is not None]
        group = pi.read_probeinterface(out)
        assert len(group.probes) == 1, name(meta)
        back = group.probes[0]
        assert np.allclose(back.contact_positions, [[chans[i]["x_um"], chans[i]["y_um"]] for i in idx], atol=1e-9, rtol=0), name(meta)
        assert list(back.contact_ids) == [chans[i]["id"] for i in idx], name(meta)
        assert list(back.shank_ids.astype(int)) == [chans[i].get("shank", 0) for i in idx], name(meta)
        assert list(back.device_channel_indices) == idx, name(meta)
        written += 1
    assert written >= LEAST_COMPARED, f"only {written} probes written"


def test_probe_out_to_an_unwritable_path_is_one_line(metas, dspk_program, tmp_path):
    """A ``--probe-out`` that cannot be written (a missing folder) is one error line naming it,
    and no file."""
    meta = next(m for m in metas if m.name == "NP2_4_shanks.imec0.ap.meta")
    out = tmp_path / "no-such-folder" / "probe.json"
    done = subprocess.run([dspk_program, "info", "--probe-out", str(out), str(meta.with_suffix(".bin"))],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "no-such-folder" in lines[0] and "--probe-out" in lines[0], done.stderr
    assert not out.parent.exists()


def test_recording_probe_is_probeinterfaces(metas, monkeypatch):
    """``Recording.probe`` is a ``probeinterface.Probe`` equal to ``read_spikeglx``'s where
    probeinterface is installed, a dict of the same arrays where it cannot be imported, and
    ``None`` where the format gives no geometry (the NI file)."""
    import dspk

    pi = pytest.importorskip("probeinterface")
    compared, without = 0, []
    for meta in metas:
        rec = dspk.open(meta.with_suffix(".bin"))
        ours = rec.probe
        if ours is None:
            without.append(name(meta))
            continue
        assert isinstance(ours, pi.Probe), name(meta)
        with monkeypatch.context() as m:
            m.setitem(sys.modules, "probeinterface", None)
            plain = rec.probe
        assert isinstance(plain, dict), name(meta)
        assert np.array_equal(plain["x_um"], ours.contact_positions[:, 0]), name(meta)
        assert np.array_equal(plain["y_um"], ours.contact_positions[:, 1]), name(meta)
        assert list(plain["contact_id"]) == list(ours.contact_ids), name(meta)
        assert np.array_equal(plain["device_channel_index"], ours.device_channel_indices), name(meta)
        assert np.array_equal(plain["shank"], ours.shank_ids.astype(int)), name(meta)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = pi.read_spikeglx(meta)
        except Exception:  # noqa: BLE001 - the files probeinterface refuses are checked above
            continue
        assert np.allclose(ours.contact_positions, ref.contact_positions, atol=1e-6, rtol=0), name(meta)
        assert list(ours.contact_ids) == list(ref.contact_ids), name(meta)
        assert np.array_equal(ours.device_channel_indices, ref.device_channel_indices), name(meta)
        assert np.array_equal(shanks(ours), shanks(ref)), name(meta)
        if "adc_sample_order" in ref.contact_annotations:
            assert np.array_equal(plain["adc_order"], ref.contact_annotations["adc_sample_order"]), name(meta)
        compared += 1
    assert compared >= LEAST_COMPARED, f"only {compared} compared"
    assert [w for w in without if "nidq" not in w] == [], without
