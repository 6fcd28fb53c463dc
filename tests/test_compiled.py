"""The modules setup.py compiles with Cython: in this checkout, every one is compiled, and from
its source as it stands (a compiled module older than its source, or than the .pxd of C types
beside some, would run old code in place of an edit). scripts/test.sh's pytest-pure lane runs
six test files over the same sources as plain Python, so that both forms are held to the
references."""

from __future__ import annotations

import ast
import importlib
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import indexbridge

ROOT = Path(__file__).resolve().parents[1]


def _setup_py_compiled() -> list[str]:
    for node in ast.parse((ROOT / "setup.py").read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "COMPILED" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("setup.py assigns no COMPILED list")


def test_the_checkout_is_the_package_under_test() -> None:
    assert Path(indexbridge.__file__).resolve().parent == ROOT / "python" / "indexbridge"


def test_every_module_setup_py_lists_is_compiled() -> None:
    missing = sorted(set(_setup_py_compiled()) - set(indexbridge.compiled()))
    assert not missing, f"plain Python, not compiled: {missing}; scripts/bootstrap.sh builds them (setup.py says why one stays plain)"
    extra = sorted(set(indexbridge.compiled()) - set(_setup_py_compiled()))
    assert not extra, f"compiled modules setup.py no longer lists, which shadow their sources: {extra}; delete their .so files"


def test_every_compiled_module_is_imported_compiled_and_newer_than_its_source() -> None:
    for name in _setup_py_compiled():
        module = importlib.import_module(name)
        assert module.__file__.endswith(tuple(EXTENSION_SUFFIXES)), module.__file__
        stem = ROOT / "python" / Path(*name.split("."))
        # the source, and the .pxd of C types that augments some
        for source in (p for p in (stem.with_suffix(".py"), stem.with_suffix(".pxd")) if p.exists()):
            assert Path(module.__file__).stat().st_mtime >= source.stat().st_mtime, (
                f"{module.__file__} is older than {source}: scripts/bootstrap.sh compiles it again"
            )
