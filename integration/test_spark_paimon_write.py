"""The Paimon write jobs from PySpark and the command line (``rewrite_paimon_file_indexes``,
``delete_paimon_rows``, ``load_paimon_table``; ``indexbridge paimon rewrite-file-index | delete |
load``) on tables Paimon 1.4.2's Java API made, checked by Paimon's own reader, which then writes,
compacts and reads again (``io.indexbridge.reference.PaimonWriteReference``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from indexbridge.errors import IndexFormatError
from indexbridge.jvm import run_reference
from indexbridge.spark.paimon import delete_paimon_rows, load_paimon_table, rewrite_paimon_file_indexes


def _reference(*args: str) -> None:
    run_reference(*args, main="PaimonWriteReference")


def _create(tmp: Path, name: str, kind: str, seed: int, *options: str) -> str:
    out = tmp / f"{name}.json"
    _reference("create", kind, str(seed), str(tmp / "wh"), name, str(out), "file.format=parquet", *options)
    return json.loads(out.read_text())["path"]


def _answer(path: str, where: str | None = None) -> dict:
    out = Path(path).parent / f".answer-{os.getpid()}.json"
    _reference("answer", path, str(out), *([where] if where else []))
    return json.loads(out.read_text())


def _rows(answer: dict) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in answer["rows"])


def test_rewrite_file_indexes_then_paimon_prunes_with_them(spark, tmp_path):
    path = _create(tmp_path, "app", "append", 7, "file-index.*=-")
    before = _answer(path)
    some_id = before["rows"][len(before["rows"]) // 2]["id"]
    summary = rewrite_paimon_file_indexes(spark, path, {"file-index.bloom-filter.columns": "id", "file-index.bitmap.columns": "id"})
    assert summary["commit_kind"] == "COMPACT" and summary["snapshot"] == before["snapshot"] + 1
    assert summary["data_files"] > 0 and summary["embedded"] + summary["index_files"] == summary["data_files"]
    after = _answer(path, f"id = {some_id}L")
    assert after["index_results"] and set(after["index_results"].values()) <= {"remain", "skip"}
    assert _rows(after) == sorted(json.dumps(r, sort_keys=True) for r in before["rows"] if r["id"] == some_id)
    assert "skip" in after["index_results"].values()  # Paimon prunes with the indexes we wrote
    # a second rewrite of files that already have these exact indexes changes nothing
    assert rewrite_paimon_file_indexes(spark, path, {"file-index.bloom-filter.columns": "id", "file-index.bitmap.columns": "id"},
                                       only_missing=True)["snapshot"] is None  # fmt: skip


def test_delete_rows_with_deletion_vectors(spark, tmp_path):
    path = _create(tmp_path, "app_dv", "append", 11, "deletion-vectors.enabled=true")
    before = _answer(path)
    gone = [r for r in before["rows"] if r["id"] % 5 == 0]
    summary = delete_paimon_rows(spark, path, "id % 5 = 0")
    assert summary["commit_kind"] == "OVERWRITE" and summary["deleted_rows"] == len(gone) > 0
    after = _answer(path)
    assert after["row_count"] == before["row_count"] - len(gone)
    assert not [r for r in after["rows"] if r["id"] % 5 == 0]
    assert delete_paimon_rows(spark, path, "id % 5 = 0")["snapshot"] is None  # nothing left to delete
    # Paimon writes and compacts after us (the compaction drops the deleted rows for good)
    out = tmp_path / "write.json"
    _reference("write", path, "3", "4", str(out))
    assert json.loads(out.read_text())["row_count"] == after["row_count"] + 4
    # a damaged deletion-vector index file (cut after its version byte), read by the next delete's
    # tasks: IndexFormatError naming the file and offset, not a Py4J error wrapping a SparkException
    assert delete_paimon_rows(spark, path, "id % 7 = 0")["deleted_rows"] > 0
    index_files = sorted((Path(path) / "index").glob("index-*"))
    assert index_files
    for index_file in index_files:
        index_file.write_bytes(index_file.read_bytes()[:1])
    with pytest.raises(IndexFormatError, match=r"index-[^:]*: offset \d+: ") as damaged:
        delete_paimon_rows(spark, path, "id % 3 = 0")
    assert Path(damaged.value.source).name in {f.name for f in index_files}
    with pytest.raises(IndexFormatError, match="deletion-vectors.enabled"):
        delete_paimon_rows(spark, _create(tmp_path, "app_plain", "append", 12, "deletion-vectors.enabled=-"), "id = 1")


def test_load_creates_and_appends_a_dynamic_bucket_table(spark, tmp_path):
    path = str(tmp_path / "orders")
    rows = [("2024-05-01", i % 40, f"v{i}", float(i)) for i in range(100)] + [("2024-05-02", i, f"w{i}", None) for i in range(10)]
    df = spark.createDataFrame(rows, "dt string, id bigint, note string, amount double")
    with pytest.raises(ValueError, match="primary key"):
        load_paimon_table(spark, path, df)
    summary = load_paimon_table(spark, path, df, primary_key=["dt", "id"], partition_by=["dt"], options={"dynamic-bucket.target-row-num": "8"})
    assert summary["commit_kind"] == "APPEND" and summary["rows"] == 50 and summary["new_buckets"] == summary["buckets"] == 7
    answer = _answer(path)
    expected = {(dt, i): note for dt, i, note, _ in rows}  # the last row of a key wins
    assert sorted((r["dt"], r["id"], r["note"]) for r in answer["rows"]) == sorted((dt, i, n) for (dt, i), n in expected.items())
    # updates and new keys; then Paimon writes, compacts and reads
    more = spark.createDataFrame([("2024-05-01", 3, "updated", 1.0), ("2024-05-03", 1, "new", 2.0)], "dt string, id bigint, note string, amount double")
    load_paimon_table(spark, path, more)
    answer = _answer(path)
    assert answer["row_count"] == 51 and {"updated", "new"} <= {r["note"] for r in answer["rows"]}
    out = tmp_path / "write.json"
    _reference("write", path, "5", "4", str(out))
    assert json.loads(out.read_text())["row_count"] >= 51


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / "indexbridge"), "paimon", *args], capture_output=True, text=True, timeout=600)


def test_cli_load_and_rewrite(tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"dt": "2024-05-0" + str(1 + i % 2), "id": i % 30, "name": f"n{i}"}) + "\n" for i in range(60)))
    table = tmp_path / "t"
    done = _cli("load", str(table), "--from", str(data), "--primary-key", "dt,id", "--partition-by", "dt",
                "--option", "dynamic-bucket.target-row-num=10", "--option", "file-index.bloom-filter.columns=name", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["rows"] == 30 and summary["snapshot"] == 1 and done.stderr == ""
    assert _answer(str(table), "name = 'n59'")["row_count"] == 1
    done = _cli("rewrite-file-index", str(table), "--option", "file-index.bitmap.columns=name")
    assert done.returncode == 0 and "snapshot 2 (COMPACT, rewrite-file-index)" in done.stdout, done.stderr
