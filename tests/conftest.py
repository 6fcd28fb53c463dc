"""Shared test setup: where the golden vectors are.

``INDEXBRIDGE_VECTORS`` overrides the default, ``../shared/vectors`` next to the repository.
Missing vectors fail the run; they are never skipped.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

PAIMON_TABLE_FORMATS = ("dv32", "dv64", "hash")
PAIMON_FILE_INDEX_FORMATS = ("bloom", "bitmap", "bsi", "fileindex")


def _vectors_root() -> Path:
    env = os.environ.get("INDEXBRIDGE_VECTORS")
    return Path(env) if env else (Path(__file__).resolve().parents[1] / ".." / "shared" / "vectors").resolve()


@pytest.fixture(scope="session")
def vectors_dir() -> Path:
    root = _vectors_root()
    if not root.is_dir():
        pytest.fail(f"golden vectors not found at {root} (set INDEXBRIDGE_VECTORS)", pytrace=False)
    return root


def _paimon_cases(formats: tuple[str, ...]) -> list[dict]:
    manifest = _vectors_root() / "paimon" / "manifest.json"
    if not manifest.is_file():
        pytest.fail(f"golden vectors not found: {manifest} (set INDEXBRIDGE_VECTORS)", pytrace=False)
    return [c for c in json.loads(manifest.read_text())["cases"] if c["format"] in formats]


def _zap_manifest() -> dict:
    manifest = _vectors_root() / "zap" / "manifest.json"
    if not manifest.is_file():
        pytest.fail(f"golden vectors not found: {manifest} (set INDEXBRIDGE_VECTORS)", pytrace=False)
    return json.loads(manifest.read_text())


def _range_bitmap_cases() -> list[dict]:
    manifest = _vectors_root() / "range-bitmap" / "manifest.json"
    if not manifest.is_file():
        pytest.fail(f"golden vectors not found: {manifest} (set INDEXBRIDGE_VECTORS)", pytrace=False)
    return json.loads(manifest.read_text())["cases"]


def zap_segment_names() -> list[str]:
    """Every segment of the zap vectors: the top-level cases and their merge inputs."""
    names = []
    for case in _zap_manifest()["cases"]:
        names.append(case["case"])
        names.extend(case["merge_inputs"] or ())
    return names


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``paimon_table_case`` with every dv32/dv64/hash entry of the Paimon manifest,
    ``paimon_fileindex_case`` with every bloom/bitmap/bsi/fileindex entry, ``range_bitmap_case``
    with every case of the range-bitmap manifest, ``zap_case`` with
    every case of the zap manifest (its top-level ``format`` copied in) and ``zap_segment_name``
    with every .zap of the zap vectors, merge inputs included."""
    for fixture, formats in (("paimon_table_case", PAIMON_TABLE_FORMATS), ("paimon_fileindex_case", PAIMON_FILE_INDEX_FORMATS)):
        if fixture in metafunc.fixturenames:
            cases = _paimon_cases(formats)
            metafunc.parametrize(fixture, cases, ids=[c["case"] for c in cases])
    if "range_bitmap_case" in metafunc.fixturenames:
        cases = _range_bitmap_cases()
        metafunc.parametrize("range_bitmap_case", cases, ids=[c["case"] for c in cases])
    if "zap_case" in metafunc.fixturenames:
        manifest = _zap_manifest()
        cases = [{**c, "format": manifest["format"]} for c in manifest["cases"]]
        metafunc.parametrize("zap_case", cases, ids=[c["case"] for c in cases])
    if "zap_segment_name" in metafunc.fixturenames:
        names = zap_segment_names()
        metafunc.parametrize("zap_segment_name", names, ids=names)


@pytest.fixture(scope="session")
def paimon_dv_tables(tmp_path_factory) -> dict[str, str]:
    """Two primary-key tables with deletion vectors, 64-bit ("64") and 32-bit ("32"), written by
    Paimon 1.4.2's Java API (io.indexbridge.reference.PaimonWriteReference); read, never written."""
    from indexbridge.jvm import run_reference

    tmp = tmp_path_factory.mktemp("paimon-dv")
    paths = {}
    for width, bitmap64 in (("64", "true"), ("32", "false")):
        out = tmp / f"t{width}.json"
        run_reference("create", "pk-dv", "1", str(tmp / "wh"), f"t{width}", str(out), f"deletion-vectors.bitmap64={bitmap64}", main="PaimonWriteReference")
        paths[width] = json.loads(out.read_text())["path"]
    return paths


CPU_SECONDS_PER_TEST = 120


@pytest.fixture
def cpu_deadline():
    """Fails a test that spends more than ``CPU_SECONDS_PER_TEST`` of CPU time: a guard against
    decoders that loop forever on malformed input. It counts this process's CPU time, not wall
    time, so a busy machine does not trip it; it is not a speed assertion."""

    def expired(signum, frame):
        raise TimeoutError(f"more than {CPU_SECONDS_PER_TEST} s of CPU time: a decoder is looping")

    previous = signal.signal(signal.SIGPROF, expired)
    signal.setitimer(signal.ITIMER_PROF, CPU_SECONDS_PER_TEST)
    yield
    signal.setitimer(signal.ITIMER_PROF, 0)
    signal.signal(signal.SIGPROF, previous)
