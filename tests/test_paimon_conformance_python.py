"""The Python engine against every Paimon table-index vector (dv32, dv64, hash) and hash function."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from indexbridge.conformance.paimon import CHECKERS, check_case, check_hash_section


def _bins(entry: dict) -> list[str]:
    return [entry["bin"]] if "bin" in entry else [extra["bin"] for extra in entry["extra_bins"]]


def test_case(vectors_dir: Path, paimon_table_case: dict, tmp_path: Path):
    assert check_case(vectors_dir / "paimon", paimon_table_case, tmp_path) == []
    for name in _bins(paimon_table_case):  # --out: the encoded files, at the reference's relative path
        assert (tmp_path / name).read_bytes() == (vectors_dir / "paimon" / name).read_bytes()


@pytest.mark.parametrize("section", ["xxh64_seed0", "fasthash", "binary_string_hash_code", "java_string_hash_code"])
def test_hash_function_section(vectors_dir: Path, section: str):
    items = json.loads((vectors_dir / "paimon/hashes/hash_functions.json").read_text())[section]
    assert items
    assert check_hash_section(section, items) == []


def test_checkers_cover_the_table_index_formats():
    assert set(CHECKERS) == {"dv32", "dv64", "hash", "hashes"}


def test_a_wrong_reference_fails_the_case(vectors_dir: Path, tmp_path: Path):
    for name in ("dv32_sparse_random.json", "dv32_sparse_random.bin"):
        shutil.copy(vectors_dir / "paimon/dv32" / name, tmp_path / name)
    entry = {"format": "dv32", "case": "dv32_sparse_random", "json": "dv32_sparse_random.json"}
    data = bytearray((tmp_path / "dv32_sparse_random.bin").read_bytes())
    data[100] ^= 1
    (tmp_path / "dv32_sparse_random.bin").write_bytes(bytes(data))
    [failure] = check_case(tmp_path, entry, None)
    assert failure.startswith("IndexFormatError: ") and "DV CRC-32" in failure

    case = json.loads((tmp_path / "dv32_sparse_random.json").read_text())
    case["checks"][0]["deleted"] = not case["checks"][0]["deleted"]
    (tmp_path / "dv32_sparse_random.json").write_text(json.dumps(case))
    shutil.copy(vectors_dir / "paimon/dv32/dv32_sparse_random.bin", tmp_path / "dv32_sparse_random.bin")
    assert check_case(tmp_path, entry, None) == [
        f"isDeleted({case['checks'][0]['position']}): got {not case['checks'][0]['deleted']}, "
        f"expected {case['checks'][0]['deleted']}"
    ]
