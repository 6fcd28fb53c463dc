"""The `indexbridge` command as a user runs it: conformance and inspect, both engines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CLI = str(Path(sys.executable).parent / "indexbridge")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)


def test_conformance_table_index_formats_both_engines(vectors_dir: Path, tmp_path: Path):
    result = _run("conformance", str(vectors_dir / "paimon"), "--engine", "all", "--only", "dv32,dv64,hash", "--out", str(tmp_path))
    manifest = json.loads((vectors_dir / "paimon" / "manifest.json").read_text())
    n = sum(1 for c in manifest["cases"] if c["format"] in ("dv32", "dv64", "hash"))
    assert result.stdout.strip().splitlines()[-1] == f"{2 * n} passed, 0 failed", result.stdout + result.stderr
    assert result.returncode == 0
    # --out: every encoded file, byte-identical to the reference, under OUT/<engine>/<case path>
    for engine in ("python", "jvm"):
        written = (tmp_path / engine / "dv32" / "dvfile32_three_files.bin").read_bytes()
        assert written == (vectors_dir / "paimon" / "dv32" / "dvfile32_three_files.bin").read_bytes()


def test_conformance_counts_unsupported_formats_as_failed(tmp_path: Path):
    manifest = {"cases": [{"format": "range-bitmap", "case": "rb", "json": "range-bitmap/rb.json", "bin": "range-bitmap/rb.bin"}]}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    result = _run("conformance", str(tmp_path), "--engine", "python")
    assert result.stdout.strip().splitlines()[-1] == "0 passed, 1 failed"
    assert result.returncode == 1


@pytest.mark.parametrize("engine", ["python", "jvm"])
def test_inspect_summaries_agree_between_engines(vectors_dir: Path, engine: str):
    files = [
        vectors_dir / "paimon/dv32/dv32_mixed_containers.bin",
        vectors_dir / "paimon/dv64/dv64_beyond_2_32.bin",
        vectors_dir / "paimon/dv32/dvfile32_three_files.bin",
    ]
    result = _run("inspect", "--json", "--engine", engine, *map(str, files))
    assert result.returncode == 0, result.stderr
    summaries = [json.loads(line) for line in result.stdout.splitlines()]
    assert [s["format"] for s in summaries] == ["dv", "dv", "dv-file"]
    assert summaries[0]["cardinality"] == json.loads(files[0].with_suffix(".json").read_text())["cardinality"]
    assert summaries[1]["bitmap64"] is True and summaries[1]["max_position"] == 21474836487
    recorded = json.loads(files[2].with_suffix(".json").read_text())["index_files"][0]["dv_ranges"]
    assert [(v["offset"], v["length"], v["cardinality"]) for v in summaries[2]["vectors"]] == [
        (r["offset"], r["length"], r["cardinality"]) for r in recorded
    ]
    hashes = _run("inspect", "--json", "--engine", engine, "--format", "hash", str(vectors_dir / "paimon/hash/hash_pk_int.bin"))
    assert json.loads(hashes.stdout)["count"] == 50


def test_inspect_engines_report_identical_json(vectors_dir: Path):
    files = sorted(str(p) for p in (vectors_dir / "paimon").glob("dv*/*.bin"))
    outputs = {e: _run("inspect", "--json", "--engine", e, *files) for e in ("python", "jvm")}
    assert outputs["python"].returncode == outputs["jvm"].returncode == 0
    assert [json.loads(l) for l in outputs["python"].stdout.splitlines()] == [json.loads(l) for l in outputs["jvm"].stdout.splitlines()]


@pytest.mark.parametrize("engine", ["python", "jvm"])
def test_inspect_malformed_file_is_one_line_and_exit_2(vectors_dir: Path, tmp_path: Path, engine: str):
    good = vectors_dir / "paimon/dv32/dv32_sparse_random.bin"
    bad = tmp_path / "truncated.bin"
    bad.write_bytes(good.read_bytes()[:100])
    result = _run("inspect", "--engine", engine, str(good), str(bad), str(tmp_path / "missing.bin"))
    assert result.returncode == 2
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 2, result.stderr
    assert errors[0].startswith(f"indexbridge: error: {bad}: offset ")
    assert errors[1].startswith(f"indexbridge: error: {tmp_path / 'missing.bin'}: ")
    assert "Traceback" not in result.stderr
    assert result.stdout.startswith(f"{good}: dv")
