"""The hook that makes a skipped test fail the run under CI (``conftest.py``), itself tested: a
throwaway test directory whose conftest loads these hooks, with one passing and one skipped
test, run by pytest in a child process with and without ``CI``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run_pytest(folder: Path, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "DSPK_WHEEL_TEST")}
    clean.update(env)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
                          capture_output=True, text=True, env=clean, cwd=folder)


def test_a_skip_fails_the_run_under_ci_and_only_there(tmp_path):
    (tmp_path / "conftest.py").write_text(textwrap.dedent(f"""
        import importlib.util, sys
        sys.path.insert(0, {str(HERE)!r})
        spec = importlib.util.spec_from_file_location("dspk_conftest", {str(HERE / "conftest.py")!r})
        hooks = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(hooks)
        pytest_sessionfinish = hooks.pytest_sessionfinish
        pytest_terminal_summary = hooks.pytest_terminal_summary
    """))
    (tmp_path / "test_one.py").write_text(textwrap.dedent("""
        import pytest

        def test_passes():
            pass

        def test_skips():
            pytest.skip("SKIP: no such device here")
    """))
    for env in ({"CI": "true"}, {"DSPK_WHEEL_TEST": "1"}):
        run = run_pytest(tmp_path, **env)
        out = run.stdout + run.stderr
        assert run.returncode == 1, (env, out)
        assert "skips are failures here" in out, out
        assert "SKIPPED test_one.py::test_skips" in out and "no such device here" in out, out
        assert "1 skipped: the run fails" in out, out
    # Outside CI a skip is a skip: the run passes and says nothing of failing.
    for env in ({}, {"CI": "false"}, {"CI": "0"}):
        run = run_pytest(tmp_path, **env)
        out = run.stdout + run.stderr
        assert run.returncode == 0, (env, out)
        assert "skips are failures here" not in out, out
    # A real failure stays a failure either way (exit status 1, not masked).
    (tmp_path / "test_two.py").write_text("def test_fails():\n    assert False\n")
    assert run_pytest(tmp_path).returncode == 1
