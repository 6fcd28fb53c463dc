"""Shared test setup: where the golden vectors are.

``INDEXBRIDGE_VECTORS`` overrides the default, ``../shared/vectors`` next to the repository.
Missing vectors fail the run; they are never skipped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

PAIMON_TABLE_FORMATS = ("dv32", "dv64", "hash")


def _vectors_root() -> Path:
    env = os.environ.get("INDEXBRIDGE_VECTORS")
    return Path(env) if env else (Path(__file__).resolve().parents[1] / ".." / "shared" / "vectors").resolve()


@pytest.fixture(scope="session")
def vectors_dir() -> Path:
    root = _vectors_root()
    if not root.is_dir():
        pytest.fail(f"golden vectors not found at {root} (set INDEXBRIDGE_VECTORS)", pytrace=False)
    return root


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``paimon_table_case`` with every dv32/dv64/hash entry of the Paimon manifest."""
    if "paimon_table_case" in metafunc.fixturenames:
        manifest = _vectors_root() / "paimon" / "manifest.json"
        if not manifest.is_file():
            pytest.fail(f"golden vectors not found: {manifest} (set INDEXBRIDGE_VECTORS)", pytrace=False)
        cases = [c for c in json.loads(manifest.read_text())["cases"] if c["format"] in PAIMON_TABLE_FORMATS]
        metafunc.parametrize("paimon_table_case", cases, ids=[c["case"] for c in cases])
