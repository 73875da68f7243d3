"""Reports a person opens in a browser (``dspk scan --report``, ``dspk preprocess --report``,
``dspk report``, and Python's ``ScanResult.report``, ``Recording.report`` and
``dspk.preprocess(report=)``), each opened in headless Chromium (Debian's package) through
Playwright and checked on its screenshot:

- the page loads with no console message of type error, no page error and no request but the
  page itself (its content security policy forbids any; a violation is a console error);
- the probe is drawn where probeinterface's own geometry puts each contact: the pixels at the
  planted dead and noisy channels' contacts, and at good ones, have their class's colour;
- each heat map's colour range is the 0.5th and 99.5th percentiles (numpy's) of the window's
  values, read independently: the raw windows through the host reader, the preprocessed ones
  from the file ``dspk preprocess`` wrote; the colour bar runs blue to red;
- the Python faces write the same report as the program (the same data, run figures aside).

The screenshots of the synthetic recording's scan and preprocess reports are the README's
(``docs/report-scan.png``, ``docs/report-preprocess.png``): ``DSPK_WRITE_SCREENSHOTS=1``
writes them there; otherwise the committed ones are checked to be what this test produces
(the same size, the probe's pixels passing the same checks, all but a few pixels equal: the
run's timings differ)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import dspk

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CHROMIUM = os.environ.get("DSPK_CHROMIUM", "/usr/bin/chromium")
DEAD = (0x21, 0x21, 0x21)
NOISY = (0xF0, 0x8C, 0x00)
GOOD = (0x2F, 0x9E, 0x44)
#: The page's width in CSS pixels: a preprocess report's window (raw + 5 stages) fits.
VIEWPORT = (2240, 1300)
#: Screenshots at twice the CSS pixels, so a 3-pixel contact is 6 device pixels wide.
SCALE = 2

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _need_browser():
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium; .ci/run does)")
    pytest.importorskip("playwright", reason="playwright is a test package (xtask's TEST_PACKAGES)")


@pytest.fixture(scope="module")
def probe_file(tmp_path_factory) -> tuple[Path, np.ndarray]:
    """A Neuropixels 1.0 probe of 384 channels made by probeinterface (its contact positions
    are the test's geometry), written as probeinterface JSON."""
    from probeinterface import write_probeinterface
    from probeinterface.neuropixels_tools import build_neuropixels_probe

    probe = build_neuropixels_probe("NP1000")
    probe = probe.get_slice(np.arange(384))
    probe.set_device_channel_indices(np.arange(384))
    path = tmp_path_factory.mktemp("probe") / "np1.json"
    write_probeinterface(path, probe)
    return path, np.asarray(probe.contact_positions, dtype=np.float64)


def _run(program: str, *args: str) -> str:
    out = subprocess.run([program, *args], capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, f"dspk {' '.join(args)} failed: {out.stderr}"
    return out.stderr


@pytest.fixture(scope="module")
def reports(dspk_program, probe_file, tmp_path_factory) -> dict:
    """Each report kind of the synthetic recording (2 s, the probe attached), made by the
    program, and the preprocessed file its preprocess report drew."""
    _need_browser()
    probe, _ = probe_file
    d = tmp_path_factory.mktemp("reports")
    common = ["--synthetic-duration", "2", "--probe", str(probe)]
    err = _run(dspk_program, "scan", *common, "--report", str(d / "scan.html"))
    assert "report: " in err
    _run(dspk_program, "preprocess", *common, "-o", str(d / "pre.bin"), "--report", str(d / "preprocess.html"), "--at", "0.5")
    _run(dspk_program, "report", *common, "--pipeline", "spikeinterface", "-o", str(d / "report.html"), "--at", "1")
    return {"dir": d, "scan": d / "scan.html", "preprocess": d / "preprocess.html", "report": d / "report.html"}


def _data(html: Path) -> dict:
    text = html.read_text()
    start = text.index('<script type="application/json" id="dspk-report">') + len(
        '<script type="application/json" id="dspk-report">'
    )
    return json.loads(text[start : text.index("</script>", start)].replace("<\\/", "</"))


def _open(html: Path, screenshot: Path) -> dict:
    """Opens `html` in headless Chromium; returns what the page said and asked for, the probe
    drawing's box, each panel's box and colour range, and the screenshot as an RGB array."""
    from PIL import Image
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": VIEWPORT[0], "height": VIEWPORT[1]}, device_scale_factor=SCALE)
        console, errors, requests = [], [], []
        page.on("console", lambda m: console.append((m.type, m.text)))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(html.as_uri())
        page.wait_for_load_state("load")
        probe_box = page.eval_on_selector("#probe-drawing svg", "e => e.getBoundingClientRect().toJSON()")
        scale = page.eval_on_selector("#probe-drawing", "e => [e.dataset.pxPerUm, e.dataset.originX, e.dataset.originY]")
        panels = page.eval_on_selector_all(
            "figure.panel",
            "es => es.map(e => ({window: +e.dataset.window, panel: +e.dataset.panel, vmin: +e.dataset.vmin, "
            "vmax: +e.dataset.vmax, caption: e.querySelector('figcaption').textContent, "
            "images: [...e.querySelectorAll('image')].map(i => i.getBoundingClientRect().toJSON())}))",
        )
        whole = page.screenshot(full_page=True)
        # The screenshot the README shows, at one device pixel per CSS pixel: the top of the
        # page, down to the first window's row.
        small = browser.new_page(viewport={"width": VIEWPORT[0], "height": VIEWPORT[1]}, device_scale_factor=1)
        small.goto(html.as_uri())
        bottom = small.eval_on_selector(".panels", "e => e.getBoundingClientRect().bottom")
        small.screenshot(
            path=str(screenshot), full_page=True, clip={"x": 0, "y": 0, "width": VIEWPORT[0], "height": bottom + 8}
        )
        browser.close()
    pixels = np.asarray(Image.open(io.BytesIO(whole)).convert("RGB"))
    return {
        "console": console,
        "errors": errors,
        "requests": requests,
        "probe_box": probe_box,
        "px_per_um": float(scale[0]),
        "origin": (float(scale[1]), float(scale[2])),
        "panels": panels,
        "pixels": pixels,
    }


def _near(pixels: np.ndarray, x_css: float, y_css: float, colour, radius_css: float = 1.0, scale: int = SCALE) -> bool:
    """Whether a pixel within `radius_css` CSS pixels of (x, y) has `colour` (±12 per channel),
    on a screenshot of `scale` device pixels per CSS pixel."""
    r = int(round(radius_css * scale))
    cx, cy = int(round(x_css * scale)), int(round(y_css * scale))
    patch = pixels[max(cy - r, 0) : cy + r + 1, max(cx - r, 0) : cx + r + 1].astype(int)
    return bool((np.abs(patch - np.asarray(colour)).max(axis=-1) <= 12).any())


def _check_probe(seen: dict, positions: np.ndarray, dead, noisy, scale: int = SCALE) -> None:
    box, s = seen["probe_box"], seen["px_per_um"]
    ox, oy = seen["origin"]

    def place(ch):
        x_um, y_um = positions[ch]
        return box["x"] + ox + x_um * s, box["y"] + oy - y_um * s

    good = [c for c in (0, 1, 100, 200, 250, 383) if c not in dead and c not in noisy]
    for channels, colour, name in ((dead, DEAD, "dead"), (noisy, NOISY, "noisy"), (good, GOOD, "good")):
        for ch in channels:
            x, y = place(ch)
            assert _near(seen["pixels"], x, y, colour, scale=scale), f"channel {ch} ({name}) is not drawn at {x:.1f}, {y:.1f}"
            for other in {DEAD, NOISY, GOOD} - {colour}:
                assert not _near(seen["pixels"], x, y, other, 0.0, scale), f"channel {ch} drawn {other}"


def _check_page(seen: dict, html: Path) -> None:
    assert not [m for m in seen["console"] if m[0] == "error"], seen["console"]
    assert not seen["errors"], seen["errors"]
    assert seen["requests"] == [html.as_uri()], seen["requests"]


def _percentiles(values: np.ndarray) -> tuple[float, float]:
    v = values.astype(np.float64).ravel()
    return float(np.percentile(v, 0.5)), float(np.percentile(v, 99.5))


def _check_bar(seen: dict) -> None:
    """Each colour bar runs from red (its top) to blue (its bottom)."""
    px = seen["pixels"]
    for panel in seen["panels"]:
        bar = panel["images"][1]
        x = bar["x"] + bar["width"] / 2
        assert _near(px, x, bar["y"] + 1, (178, 24, 43), 0.5), panel["caption"]
        assert _near(px, x, bar["y"] + bar["height"] - 1, (33, 102, 172), 0.5), panel["caption"]


def _screenshot(kind: str, seen_path: Path, seen: dict, positions, dead, noisy) -> None:
    """Writes the README's screenshot (DSPK_WRITE_SCREENSHOTS=1) or checks the committed one is
    what this run produced."""
    from PIL import Image

    committed = DOCS / f"report-{kind}.png"
    if os.environ.get("DSPK_WRITE_SCREENSHOTS") == "1":
        _check_probe({**seen, "pixels": np.asarray(Image.open(seen_path).convert("RGB"))}, positions, dead, noisy, scale=1)
        shutil.copyfile(seen_path, committed)
        return
    assert committed.is_file(), f"{committed} is missing: run with DSPK_WRITE_SCREENSHOTS=1"
    fresh = np.asarray(Image.open(seen_path).convert("RGB"))
    kept = np.asarray(Image.open(committed).convert("RGB"))
    assert kept.shape == fresh.shape, f"{committed.name}: {kept.shape} vs this run's {fresh.shape}"
    _check_probe(seen, positions, dead, noisy)
    _check_probe({**seen, "pixels": fresh}, positions, dead, noisy, scale=1)
    _check_probe({**seen, "pixels": kept}, positions, dead, noisy, scale=1)
    differ = float((kept != fresh).any(axis=-1).mean())
    assert differ < 0.01, f"{committed.name}: {differ:.2%} of its pixels differ from this run's"


def test_scan_report(reports, probe_file, tmp_path):
    html = reports["scan"]
    _, positions = probe_file
    seen = _open(html, tmp_path / "scan.png")
    _check_page(seen, html)
    rec = dspk.synthetic(2)
    _check_probe(seen, positions, rec.planted_dead, rec.planted_noisy)
    _check_bar(seen)
    data = _data(html)
    assert [c["index"] for c in data["channels"] if c["class"] == "dead"] == rec.planted_dead
    assert [c["index"] for c in data["channels"] if c["class"] == "noisy"] == rec.planted_noisy
    assert len(data["windows"]) == 2 and [len(w["panels"]) for w in data["windows"]] == [1, 1]
    for w, window in enumerate(data["windows"]):
        raw = rec.read(start=window["start_sample"], stop=window["end_sample"])
        lo, hi = _percentiles(raw)
        panel = next(p for p in seen["panels"] if p["window"] == w)
        assert panel["vmin"] == pytest.approx(lo, rel=1e-5, abs=1e-4)
        assert panel["vmax"] == pytest.approx(hi, rel=1e-5, abs=1e-4)
        assert f"{lo:.1f} to {hi:.1f} µV" in panel["caption"]
        # Every spike marked is one the recording planted in the window, on a traced channel.
        truth = dspk.synthetic_truth(rec, window["start_sample"], window["end_sample"])
        planted = {(int(t["channel_index"]), int(t["sample_index"])) for t in truth}
        marks = {(m["channel"], m["sample"]) for m in window["spikes"]}
        assert marks and marks <= planted
        assert {c for c, _ in marks} <= set(window["trace_channels"])
    # MAD noise: SpikeInterface's estimate (MAD / 0.6745) of the same samples.
    windows = [rec.read(start=w["start_sample"], stop=w["end_sample"]) for w in data["windows"]]
    pooled = np.concatenate(windows, axis=1).astype(np.float64)
    mad = np.median(np.abs(pooled - np.median(pooled, axis=1, keepdims=True)), axis=1) / 0.6744897501960817
    got = np.array([c["mad_std"] for c in data["channels"]])
    np.testing.assert_allclose(got, mad, rtol=1e-4, atol=1e-4)
    _screenshot("scan", tmp_path / "scan.png", seen, positions, rec.planted_dead, rec.planted_noisy)


def test_preprocess_report(reports, probe_file, tmp_path):
    html = reports["preprocess"]
    _, positions = probe_file
    seen = _open(html, tmp_path / "preprocess.png")
    _check_page(seen, html)
    rec = dspk.synthetic(2)
    _check_probe(seen, positions, rec.planted_dead, rec.planted_noisy)
    _check_bar(seen)
    data = _data(html)
    (window,) = data["windows"]
    titles = [p["title"] for p in window["panels"]]
    assert titles[0] == "raw" and len(titles) == 6, titles
    assert titles[-1] == "after 5: scale (÷200)"
    assert [p["unit"] for p in window["panels"]] == ["µV"] * 4 + ["whitened"] * 2
    assert window["start_sample"] == 15_000 and window["end_sample"] == 45_000
    # The last panel is the file `dspk preprocess` wrote, ÷200; the first the raw samples.
    out = dspk.open(reports["dir"] / "pre.bin")
    written = out.read_stored(start=15_000, stop=45_000).astype(np.float64) / 200.0
    for panel, values in ((seen["panels"][0], rec.read(start=15_000, stop=45_000)), (seen["panels"][-1], written)):
        lo, hi = _percentiles(values)
        assert panel["vmin"] == pytest.approx(lo, rel=1e-4, abs=1e-3), panel["caption"]
        assert panel["vmax"] == pytest.approx(hi, rel=1e-4, abs=1e-3), panel["caption"]
    assert data["run"]["pipeline"] and "whiten" in data["run"]["pipeline"]
    assert len(data["whitening"]) == 1 and data["whitening"][0]["channels"] == 384
    _screenshot("preprocess", tmp_path / "preprocess.png", seen, positions, rec.planted_dead, rec.planted_noisy)


def test_recording_report_and_python_faces(reports, probe_file, tmp_path):
    """`dspk report` loads cleanly; Python's faces write the same report as the program."""
    html = reports["report"]
    probe, positions = probe_file
    seen = _open(html, tmp_path / "report.png")
    _check_page(seen, html)
    rec = dspk.synthetic(2, probe=probe)
    _check_probe(seen, positions, rec.planted_dead, rec.planted_noisy)
    program = _data(html)
    assert [p["title"] for p in program["windows"][0]["panels"]] == [
        "raw",
        "after 1: filter",
        "after 3: common_reference",
    ], "spikeinterface's phase shift does not run: the NP1000 probe file states no ADC shifts"

    def same(a: dict, b: dict) -> None:
        for key in ("channels", "windows", "whitening", "probe", "median_std", "noisy_threshold", "kind"):
            assert a[key] == b[key], key
        for key in ("recording", "format", "sample_rate", "channel_count", "pipeline", "fitted"):
            assert a["run"][key] == b["run"][key], key

    got = rec.report(tmp_path / "py-report.html", pipeline="spikeinterface", at=[1])
    assert Path(got["output"]).is_file() and got["bytes"] == (tmp_path / "py-report.html").stat().st_size
    same(got["report"], program)
    assert _data(tmp_path / "py-report.html") == json.loads(json.dumps(got["report"]))

    scanned = dspk.scan(rec)
    scanned.report(tmp_path / "py-scan.html")
    same(_data(tmp_path / "py-scan.html"), _data(reports["scan"]))

    dspk.preprocess(rec, tmp_path / "py-pre.bin", report=tmp_path / "py-pre.html", at=[0.5])
    py_pre, cli_pre = _data(tmp_path / "py-pre.html"), _data(reports["preprocess"])
    same(py_pre, cli_pre)

    # Coloured by a statistic: the noisiest contacts at the top of the scale (yellow), the
    # flat ones at its bottom (dark purple), each at its place.
    scanned.report(tmp_path / "py-std.html", colour_by="std")
    seen = _open(tmp_path / "py-std.html", tmp_path / "py-std.png")
    _check_page(seen, tmp_path / "py-std.html")
    assert _data(tmp_path / "py-std.html")["colour_by"] == "std"
    box, s = seen["probe_box"], seen["px_per_um"]
    ox, oy = seen["origin"]
    for ch, colour in [(c, (253, 231, 37)) for c in rec.planted_noisy] + [(c, (68, 1, 84)) for c in rec.planted_dead]:
        x_um, y_um = positions[ch]
        x, y = box["x"] + ox + x_um * s, box["y"] + oy - y_um * s
        assert _near(seen["pixels"], x, y, colour), f"channel {ch} is not {colour} at {x:.1f}, {y:.1f}"


def test_bad_report_requests_are_refused(dspk_program, tmp_path):
    rec = dspk.synthetic(2)
    with pytest.raises(dspk.DspkError, match=r"ends past the recording"):
        rec.report(tmp_path / "r.html", at=[1.5])
    with pytest.raises(dspk.DspkError, match=r"is a directory"):
        rec.report(tmp_path)
    with pytest.raises(dspk.DspkError, match=r"sequence of times"):
        rec.report(tmp_path / "r.html", at="1")
    with pytest.raises(dspk.DspkError, match=r"colour_by: .*contacts can be coloured by class, std, mad, mean, not \"depth\""):
        rec.report(tmp_path / "r.html", colour_by="depth")
    out = subprocess.run(
        [dspk_program, "scan", "--synthetic-duration", "2", "--report", str(tmp_path / "r.html"), "--at", "1.5"],
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0 and "--at" in out.stderr and "ends past the recording" in out.stderr
    assert not (tmp_path / "r.html").exists()
    out = subprocess.run([dspk_program, "scan", "--at", "1"], capture_output=True, text=True)
    assert out.returncode == 2 and "--report" in out.stderr
    out = subprocess.run([dspk_program, "report", "--synthetic-duration", "2", "-o", str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 1 and "is a directory" in out.stderr, out.stderr
    out = subprocess.run(
        [dspk_program, "preprocess", "--synthetic-duration", "2", "--pipeline", "spikeinterface", "-o", str(tmp_path / "p.bin"), "--report", str(tmp_path / "p.bin")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1 and "name the same file" in out.stderr, out.stderr
