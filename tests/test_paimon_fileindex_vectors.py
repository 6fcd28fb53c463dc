"""The Python engine against every Paimon file-index vector (bloom, bitmap, bsi, fileindex)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from indexbridge.cli.conformance import PYTHON_CHECKERS
from indexbridge.conformance.fileindex import CHECKERS, check_case


def test_case(vectors_dir: Path, paimon_fileindex_case: dict, tmp_path: Path):
    assert check_case(vectors_dir / "paimon", paimon_fileindex_case, tmp_path) == []
    name = paimon_fileindex_case["bin"]  # --out: the encoded file, at the reference's relative path
    assert (tmp_path / name).read_bytes() == (vectors_dir / "paimon" / name).read_bytes()


def test_checkers_are_registered():
    assert set(CHECKERS) == {"bloom", "bitmap", "bsi", "range-bitmap", "fileindex"}
    assert all(PYTHON_CHECKERS[f] is CHECKERS[f] for f in CHECKERS)


def _copy_case(vectors_dir: Path, tmp_path: Path, fmt: str, case: str) -> dict:
    (tmp_path / fmt).mkdir()
    for ext in ("json", "bin"):
        shutil.copy(vectors_dir / "paimon" / fmt / f"{case}.{ext}", tmp_path / fmt / f"{case}.{ext}")
    return {"format": fmt, "case": case, "json": f"{fmt}/{case}.json", "bin": f"{fmt}/{case}.bin"}


def test_a_wrong_answer_fails_the_case(vectors_dir: Path, tmp_path: Path):
    entry = _copy_case(vectors_dir, tmp_path, "bsi", "bsi_int_mixed")
    path = tmp_path / entry["json"]
    case = json.loads(path.read_text())
    query = next(q for q in case["queries"] if q["op"] == "less_than" and q["rows"]["ranges"])
    query["rows"]["ranges"][0][0] += 1  # one row fewer
    query["rows"]["cardinality"] -= 1
    path.write_text(json.dumps(case))
    [failure] = check_case(tmp_path, entry, None)
    assert failure.startswith("less_than(") and ": rows: got " in failure


def test_a_wrong_reference_byte_fails_the_case(vectors_dir: Path, tmp_path: Path):
    entry = _copy_case(vectors_dir, tmp_path, "bitmap", "bitmap_v2_string")
    path = tmp_path / entry["bin"]
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x40  # inside the last stored bitmap
    path.write_bytes(bytes(data))
    failures = check_case(tmp_path, entry, None)
    assert failures and any("bitmap_v2_string.bin: encoded" in f or "rows" in f or "IndexFormatError" in f for f in failures)

