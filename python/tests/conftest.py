"""Fixtures of dspk's Python tests: fresh seeded random recordings (``recordings.py`` writes
them), the ``dspk`` program as the Rust oracle, and the runtimes the device tests must run on."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

import dspk
from recordings import BinaryFile, SpikeGlxFile, write_binary, write_spikeglx


def skips_fail() -> bool:
    """Whether a skipped test fails the run: in CI (``CI`` set) and under ``cargo xtask ci``
    (``DSPK_WHEEL_TEST=1``), where every test must run."""
    return os.environ.get("CI", "") not in ("", "0", "false") or os.environ.get("DSPK_WHEEL_TEST") == "1"


def _skipped(config) -> list:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    return list(reporter.stats.get("skipped", [])) if reporter is not None else []


def pytest_sessionfinish(session, exitstatus):
    """Under CI a skip is a failure: the run exits non-zero when any test was skipped."""
    if skips_fail() and _skipped(session.config) and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Names each skipped test and why, when skips fail the run."""
    skipped = _skipped(config)
    if not (skips_fail() and skipped):
        return
    terminalreporter.section("skips are failures here (CI or DSPK_WHEEL_TEST=1)", sep="=", red=True, bold=True)
    for report in skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        terminalreporter.line(f"SKIPPED {report.nodeid}: {reason}", red=True)
    terminalreporter.line(f"{len(skipped)} skipped: the run fails", red=True, bold=True)


@pytest.fixture
def rng(request):
    """A generator with a fresh seed, printed so a failure can be replayed
    (``DSPK_TEST_SEED`` replays one)."""
    seed = int(os.environ.get("DSPK_TEST_SEED", time.time_ns() % 2**32))
    print(f"{request.node.name}: seed {seed}")
    return np.random.default_rng(seed)


@pytest.fixture
def spikeglx(tmp_path, rng) -> SpikeGlxFile:
    """A half-second NP1.0 AP file (fresh random values and gains)."""
    return write_spikeglx(tmp_path / "sglx", rng, samples=int(rng.integers(14_000, 16_000)))


@pytest.fixture
def binary(tmp_path, rng) -> BinaryFile:
    """A small time-major int16 raw binary recording."""
    return write_binary(tmp_path / "rec.bin", rng, channels=int(rng.integers(3, 12)), samples=int(rng.integers(2_000, 5_000)))


@pytest.fixture(scope="session")
def dspk_program() -> str:
    """The ``dspk`` program (``$DSPK_BIN``, else the workspace's release build): the Rust
    reads the package is compared with."""
    given = os.environ.get("DSPK_BIN")
    candidates = [given] if given else []
    root = Path(__file__).resolve().parents[2]
    candidates += [str(root / "target" / "release" / "dspk"), shutil.which("dspk")]
    for c in candidates:
        if c and Path(c).is_file():
            return c
    if os.environ.get("DSPK_TEST_RUNTIMES"):
        pytest.fail("the dspk program was not found (set DSPK_BIN); CI needs it as the oracle")
    pytest.skip("SKIP: the dspk program was not found (set DSPK_BIN)")


@pytest.fixture(scope="session")
def runtime() -> str:
    """The runtime device tests run on: the first of ``DSPK_TEST_RUNTIMES``, else the first
    usable one; a required runtime without a device fails the test, never skips it."""
    required = [r.strip() for r in os.environ.get("DSPK_TEST_RUNTIMES", "").split(",") if r.strip()]
    report = {r["runtime"]: r for r in dspk.devices()}
    for name in required:
        if not report.get(name, {}).get("usable"):
            pytest.fail(f"DSPK_TEST_RUNTIMES lists {name}, which has no usable device: {report.get(name)}")
    if required:
        return required[0]
    for name, r in report.items():
        if r["usable"]:
            return name
    pytest.skip("SKIP: no runtime has a usable device (set DSPK_TEST_RUNTIMES to require one)")
