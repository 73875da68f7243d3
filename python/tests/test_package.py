"""The package as installed: its stubs in step with the native module, the typing marker, the
public names, and (in CI) a wheel installed without a Rust toolchain."""

from __future__ import annotations

import ast
import inspect
import os
import shutil
from pathlib import Path

import dspk
from dspk import _dspk

PACKAGE = Path(dspk.__file__).parent


def stub_tree() -> ast.Module:
    return ast.parse((PACKAGE / "_dspk.pyi").read_text())


def stub_names(tree: ast.Module) -> dict:
    """Top-level names of the stubs: functions with their parameter names, classes with their
    members."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            a = node.args
            out[node.name] = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
        elif isinstance(node, ast.ClassDef):
            out[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = None
    return out


def native_names() -> set:
    return {n for n in dir(_dspk) if not (n.startswith("__") and n != "__version__")}


def test_stubs_name_every_native_item_and_nothing_else():
    stubs = {n for n in stub_names(stub_tree()) if not n.startswith("_") or n == "__version__" or n.startswith("_from") or n.startswith("_check")}
    assert stubs == native_names()


def test_stub_signatures_match_the_native_ones():
    for name, params in stub_names(stub_tree()).items():
        obj = getattr(_dspk, name, None)
        if isinstance(params, list):
            native = list(inspect.signature(obj).parameters)
            assert native == params, name
        elif isinstance(params, set):
            members = {m for m in vars(obj) if not m.startswith("_")}
            stubbed = {m for m in params if not m.startswith("_")}
            assert members == stubbed, f"{name}: native {sorted(members - stubbed)}, stubs {sorted(stubbed - members)}"
            for m in sorted(m for m in params if callable(getattr(obj, m, None)) and not m.startswith("_")):
                native = [p for p in inspect.signature(getattr(obj, m)).parameters if p != "self"]
                tree = next(n for n in stub_tree().body if isinstance(n, ast.ClassDef) and n.name == name)
                f = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == m)
                stubbed_params = [p.arg for p in f.args.args + f.args.kwonlyargs if p.arg != "self"]
                assert native == stubbed_params, f"{name}.{m}"


def test_the_package_is_typed_and_exports_its_api():
    assert (PACKAGE / "py.typed").is_file()
    for name in dspk.__all__:
        assert hasattr(dspk, name), name
    assert dspk.__version__ == _dspk.__version__
    assert dspk.DspkError.__module__ == "dspk"


def test_installed_from_a_wheel_without_a_rust_toolchain():
    """In CI (``DSPK_WHEEL_TEST=1``) the suite runs against the wheel installed in a fresh venv,
    with no cargo or rustc on PATH: the package must not come from the source tree."""
    if os.environ.get("DSPK_WHEEL_TEST") != "1":
        import pytest

        pytest.skip("SKIP: DSPK_WHEEL_TEST=1 is set by cargo xtask ci, which installs the wheel")
    assert "site-packages" in str(PACKAGE)
    assert shutil.which("cargo") is None and shutil.which("rustc") is None
    assert list(PACKAGE.glob("_dspk*.so")), "the native module is in the installed package"
