"""`read_paimon` and `paimon_plan` (PySpark wrappers over the Scala reader) against Paimon 1.4.2's
own answers on real tables made by Paimon's Java API (the session's ``paimon_suite``, shared with
tests/test_paimon_table.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from indexbridge.errors import IndexFormatError
from indexbridge.paimon.table.canonical import rows_json
from indexbridge.paimon.table.table import FileStoreTable
from indexbridge.spark.paimon import paimon_plan, read_paimon

KINDS = ("pk", "pk-dv", "dynamic", "append")


@pytest.fixture(scope="session")
def tables(paimon_suite) -> list[dict]:
    """One suite table per kind: the first whose data files are Parquet (the Spark read refuses
    ORC), with its reads of the latest and an older snapshot and its first five conditions."""
    out = []
    for kind in KINDS:
        made = [t for name, t in paimon_suite.items() if t["kind"] == kind]
        table = next((t for t in made if FileStoreTable.open(t["path"]).schema.options.get("file.format", "parquet") == "parquet"), None)
        if table is None:
            pytest.fail(f"no {kind} table of the Paimon suite has Parquet data files: {[t['name'] for t in made]}")
        out.append({**table, "reads": table["reads"][:7]})
    return out


def _snapshot(table: dict, read: dict) -> int | None:
    return None if read["snapshot"] == table["latest_snapshot"] else read["snapshot"]


def _readable(path: str, snapshot: int | None) -> tuple[list[str], list[str]]:
    """Columns Spark holds exactly, and the others (TIMESTAMP(7..9))."""
    fields = FileStoreTable.open(path, snapshot).schema.fields
    exact = [f.name for f in fields if not (f.type.root.startswith("TIMESTAMP") and f.type.precision > 6)]
    return exact, [f.name for f in fields if f.name not in exact]


def _canonical(rows: list[dict]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in rows)


def test_read_paimon_returns_paimons_rows(spark, tables):
    compared = 0
    for t in tables:
        for read in t["reads"]:
            snapshot, where = _snapshot(t, read), read.get("where")
            columns, others = _readable(t["path"], snapshot)
            if where is not None and any(f"`{c}`" in where for c in others):
                with pytest.raises(IndexFormatError, match="nanoseconds"):
                    read_paimon(spark, t["path"], snapshot, where, columns)
                continue
            df = read_paimon(spark, t["path"], snapshot, where, columns)
            assert df.columns == columns
            schema = FileStoreTable.open(t["path"], snapshot).schema
            got = _canonical(rows_json(df.toArrow(), schema))
            want = _canonical([{c: r[c] for c in columns} for r in read["rows"]])
            assert got == want, f"{t['name']} snapshot {read['snapshot']} where {where}"
            compared += 1
    assert compared > 0


def test_paimon_plan_reports_paimons_verdicts_and_files_read(spark, tables):
    for t in tables:
        for read in t["reads"]:
            where = read.get("where")
            columns, others = _readable(t["path"], None)
            if where is None or any(f"`{c}`" in where for c in others):
                continue
            rows = paimon_plan(spark, t["path"], _snapshot(t, read), where).collect()
            opened = set(read["files_read"])
            assert {r["file"] for r in rows if r["read"]} == opened
            for r in rows:
                if r["file"] in read["index_results"]:
                    assert r["index_result"] == read["index_results"][r["file"]]
                    assert r["file_index"] is not None and r["file_index"]["indexes"]


def test_a_column_condition_reads_like_its_text(spark, tables):
    t = next(t for t in tables if t["kind"] == "append")
    columns, others = _readable(t["path"], None)
    read = next(r for r in t["reads"] if r.get("where") and not any(f"`{c}`" in r["where"] for c in others))
    schema = FileStoreTable.open(t["path"]).schema
    by_column = rows_json(read_paimon(spark, t["path"], where=F.expr(read["where"]), columns=columns).toArrow(), schema)
    assert _canonical(by_column) == _canonical([{c: r[c] for c in columns} for r in read["rows"]])


def test_a_missing_snapshot_is_an_index_format_error_naming_it(spark, tables):
    t = tables[0]
    with pytest.raises(IndexFormatError) as e:
        read_paimon(spark, t["path"], snapshot=999)
    assert e.value.source.endswith("snapshot-999")
    with pytest.raises(IndexFormatError):
        paimon_plan(spark, Path(t["path"]) / "no-such-table")
