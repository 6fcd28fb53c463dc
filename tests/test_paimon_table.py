"""The Python table layer against Paimon 1.4.2 itself (reference: ``paimon_suite``, tables made
and read by Paimon's own Java API): the same plan, the same data files opened, the same
file-index verdicts and the same rows, for the latest snapshot, an older one and seeded
conditions; ``inspect --json``, ``read`` and ``verify --rebuild`` on the same tables."""

from __future__ import annotations

import io
import json
import random
from collections import Counter
from contextlib import redirect_stdout

import pyarrow.parquet as pq
import pytest

from indexbridge.cli import main
from indexbridge.paimon.binary_row import deserialize_binary_row
from indexbridge.paimon.table.canonical import rows_json, value_json
from indexbridge.paimon.table.options import TableOptions
from indexbridge.paimon.table.schema import binary_row_type
from indexbridge.paimon.table.table import FileStoreTable
from indexbridge.paimon.table.verify import verify


def _multiset(rows: list[dict]) -> Counter:
    return Counter(json.dumps(r, sort_keys=True) for r in rows)


def _their_plan(read: dict) -> list[tuple]:
    return sorted(
        (json.dumps(s["partition"], sort_keys=True), s["bucket"], f["file"], f["level"], json.dumps(f["deletion_file"], sort_keys=True))
        for s in read["plan"]
        for f in s["files"]
    )


def _our_plan(table: FileStoreTable, plan) -> list[tuple]:
    out = []
    for split in plan.splits:
        for e in split.files:
            d = e.deletion_file
            dv = None if d is None else {"cardinality": d.cardinality, "index_file": d.index_file, "length": d.length, "offset": d.offset}
            partition = {k: value_json(table.schema.field(k).type, v) for k, v in e.partition.items()}
            out.append((json.dumps(partition, sort_keys=True), e.bucket, e.file.file_name, e.file.level, json.dumps(dv, sort_keys=True)))
    return sorted(out)


def test_reads_match_paimon(paimon_suite, paimon_table):
    t = paimon_suite[paimon_table]
    latest = FileStoreTable.open(t["path"])
    assert latest.snapshot.id == t["latest_snapshot"]
    mismatches = []
    tables = {}  # one table object per snapshot: plans must not leak into each other
    for read in t["reads"]:
        table = tables.setdefault(read["snapshot"], FileStoreTable.open(t["path"], snapshot=read["snapshot"]))
        where = read.get("where")
        plan = table.plan(where)
        what = f"snapshot {read['snapshot']} where {where}"
        if _our_plan(table, plan) != _their_plan(read):
            mismatches.append(f"{what}: plan {_our_plan(table, plan)} != Paimon's {_their_plan(read)}")
        if sorted(e.file.file_name for e in plan.data_files) != sorted(read["files_read"]):
            mismatches.append(f"{what}: files read {sorted(e.file.file_name for e in plan.data_files)} != Paimon's {read['files_read']}")
        if where is not None:
            predicate = table.predicate(where)
            ours = {e.file.file_name: table.scan.index_result(predicate, e) for s in plan.splits for e in s.files if e.file_index() is not None}
            theirs = {f: v for f, v in read["index_results"].items() if f in ours}
            if ours != theirs:
                mismatches.append(f"{what}: index verdicts {ours} != Paimon's {theirs}")
        rows = rows_json(table.to_arrow(where), table.schema)
        if _multiset(rows) != _multiset(read["rows"]):
            extra, missing = _multiset(rows) - _multiset(read["rows"]), _multiset(read["rows"]) - _multiset(rows)
            mismatches.append(f"{what}: rows differ; ours only {list(extra)[:3]}, Paimon's only {list(missing)[:3]}")
    assert not mismatches, "\n".join(mismatches)


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        status = main(list(argv))
    return status, out.getvalue()


def test_inspect_json_lists_paimons_plan_and_verdicts(paimon_suite, paimon_table_sample):
    t = paimon_suite[paimon_table_sample]
    read = next(r for r in t["reads"] if r.get("where") and r["snapshot"] == t["latest_snapshot"])
    status, out = _cli("paimon", "inspect", t["path"], "--json", "--where", read["where"])
    assert status == 0
    doc = json.loads(out)
    assert doc["snapshot"] == t["latest_snapshot"]
    unfiltered = t["reads"][0]
    assert sorted(f["file"] for f in doc["data_files"]) == sorted(f["file"] for s in unfiltered["plan"] for f in s["files"])
    assert sorted(f["file"] for f in doc["data_files"] if f["read"]) == sorted(read["files_read"])
    for f in doc["data_files"]:
        if f["file"] in read["index_results"] and f["file_index"] is not None:
            assert f["index_result"] == read["index_results"][f["file"]], f["file"]
        assert (f["deletion_vector"] is None) == all(
            g["deletion_file"] is None for s in unfiltered["plan"] for g in s["files"] if g["file"] == f["file"]
        )


def test_read_prints_paimons_rows(paimon_suite, paimon_table_sample, tmp_path):
    t = paimon_suite[paimon_table_sample]
    read = t["reads"][-1]
    status, out = _cli("paimon", "read", t["path"], "--where", read["where"])
    assert status == 0
    assert _multiset([json.loads(line) for line in out.splitlines()]) == _multiset(read["rows"])
    target = tmp_path / "rows.parquet"
    status, _ = _cli("paimon", "read", t["path"], "--where", read["where"], "--columns", "id", "--out", str(target))
    assert status == 0
    assert sorted(map(str, pq.read_table(target).column("id").to_pylist())) == sorted(str(r["id"]) for r in read["rows"])


def test_verify_rebuilds_paimons_bytes(paimon_suite, paimon_table):
    t = paimon_suite[paimon_table]
    report = verify(FileStoreTable.open(t["path"]), rebuild=True)
    assert report.data_files >= len({f["file"] for s in t["reads"][0]["plan"] for f in s["files"]}) > 0
    assert report.rebuilt["file indexes"] == sum(report.file_indexes.values())
    assert report.rebuilt["deletion files"] == report.deletion_files
    assert report.rebuilt["hash indexes"] == report.hash_indexes


def _key_literal(root: str, value: object) -> str:
    """A SQL literal of a primary-key value as the canonical JSON holds it (STRING, INT, BIGINT or SMALLINT keys)."""
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return f"{value}{ {'BIGINT': 'L', 'SMALLINT': 'S', 'TINYINT': 'Y'}.get(root, '')}"


# Generated tables (seeded, the same every day) whose trimmed first key's largest value differs
# between live data files, and that test no value filter on files: a condition's projected key
# filter alone can rule out one of their files. The day's suite holds such a table on few days.
KEY_RANGE_TABLES = [{"name": "pk_5", "kind": "pk", "seed": 5}, {"name": "dynamic_1", "kind": "dynamic", "seed": 1}]


@pytest.fixture(scope="module")
def key_range_tables(tmp_path_factory) -> dict[str, dict]:
    from indexbridge.jvm import run_reference

    root = tmp_path_factory.mktemp("key-range-tables")
    spec = {"warehouse": str(root / "warehouse"), "tables": [{**t, "conditions": 0} for t in KEY_RANGE_TABLES]}
    (root / "spec.json").write_text(json.dumps(spec))
    run_reference("suite", str(root / "spec.json"), str(root / "answers.json"))
    return {t["name"]: t for t in json.loads((root / "answers.json").read_text())["tables"]}


def test_key_filters_projected_out_of_ors_as_paimon(paimon_suite, key_range_tables, tmp_path):
    """``(c AND k >= a) OR k <= b`` prunes files by their key stats with ``k >= a OR k <= b``
    (Paimon 1.4's PredicateProjectionConverter; the generated conditions seldom take this shape):
    our plans are Paimon's, and some condition pruned a file. Four conditions of that shape take
    their literals from a table's key values; a fifth takes it from a data file's largest key, so
    that in ``key_range_tables`` the projected key filter alone rules that file out."""
    from indexbridge.jvm import run_reference

    requests = []
    targeted = set()  # indexes of the requests whose key filter alone rules out a file
    for name, t in {**paimon_suite, **key_range_tables}.items():
        if t["kind"] == "append":
            continue
        table = FileStoreTable.open(t["path"])
        schema = table.schema
        key = schema.trimmed_primary_keys[0]
        root = schema.field(key).type.root
        others = [f.name for f in schema.fields if f.name != key]
        values = sorted({r[key] for r in t["reads"][0]["rows"]}, key=lambda v: (str(type(v)), v))
        rnd = random.Random(t["seed"])

        def lit() -> str:
            return _key_literal(root, rnd.choice(values))

        def other() -> str:
            return f"`{rnd.choice(others)}` IS {rnd.choice(['', 'NOT '])}NULL"

        k = f"`{key}`"
        largest = _key_literal(root, _smallest_largest_key(table))
        if name in key_range_tables:
            targeted.add(len(requests) + 4)
        requests += [
            {"name": name, "path": t["path"], "where": where}
            for where in (
                f"({other()} AND {k} >= {lit()}) OR {k} <= {lit()}",
                f"({k} >= {lit()} AND {other()}) OR ({k} < {lit()} AND {other()})",
                f"{k} = {lit()} OR ({k} = {lit()} AND {other()}) OR {k} = {lit()}",
                f"({other()} AND {k} > {lit()}) OR ({other()} OR {k} < {lit()})",  # the second OR needs every child: no key filter
                f"({other()} AND {k} > {largest}) OR {k} > {largest}",
            )
        ]
    (tmp_path / "requests.json").write_text(json.dumps(requests))
    run_reference("answers", str(tmp_path / "requests.json"), str(tmp_path / "answers.json"))
    pruned = 0
    for i, (request, answer) in enumerate(zip(requests, json.loads((tmp_path / "answers.json").read_text()), strict=True)):
        table = FileStoreTable.open(request["path"])
        plan = table.plan(request["where"])
        assert _our_plan(table, plan) == _their_plan(answer), f"{request['name']}: {request['where']}"
        pruned += len(plan.data_files) < len(table.plan(None).data_files)
        if i in targeted:
            assert not TableOptions(table.schema.options).value_filter_enabled, request["name"]
            assert any(e.pruned == "stats" for e in plan.pruned), f"{request['name']}: {request['where']} ruled out no file by its key stats"
    assert pruned > 0, "no condition pruned a file"


def _smallest_largest_key(table: FileStoreTable) -> object:
    """The first trimmed key's largest value in the live data file where it is smallest."""
    keys = table.schema.trimmed_primary_keys
    types = [binary_row_type(table.schema.field(k).type) for k in keys]
    return min(deserialize_binary_row(e.file.key_stats.max_values, types)[0] for s in table.plan(None).splits for e in s.files)
