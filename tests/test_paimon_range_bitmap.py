"""The range-bitmap file index (Python): Paimon's golden vectors, generated cases against Paimon
1.4.2's own RangeBitmapFileIndex through the JVM (bytes, every predicate, top-N) with the Scala
codec's bytes beside them, exact answers against brute force, and mutated payloads."""

from __future__ import annotations

import json
import random
import shutil
import struct
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from pyroaring import BitMap

from indexbridge.conformance.fileindex import check_case, result_from_json, top_n_from_json
from indexbridge.conformance.paimon import typed_value
from indexbridge.errors import IndexFormatError
from indexbridge.jvm import PAIMON_BUNDLE, jvm_with
from indexbridge.paimon.binary_row import Timestamp
from indexbridge.paimon.fileindex.container import build_file_index, FileIndexContainer
from indexbridge.paimon.fileindex.predicate import OPS, BitmapResult, SortOrder, TopN
from indexbridge.paimon.fileindex.rangebitmap import RangeBitmapIndex, chunk_size_bytes, key_kind
from indexbridge.paimon.fileindex.values import DataType

RB = "range-bitmap"


def test_vector_case(vectors_dir: Path, range_bitmap_case: dict, tmp_path: Path):
    entry = range_bitmap_case
    assert check_case(vectors_dir / RB, entry, tmp_path) == []
    assert (tmp_path / entry["bin"]).read_bytes() == (vectors_dir / RB / entry["bin"]).read_bytes()


def test_a_wrong_top_n_answer_fails_the_case(vectors_dir: Path, tmp_path: Path):
    (tmp_path / RB).mkdir()
    for ext in ("json", "bin"):
        shutil.copy(vectors_dir / RB / RB / f"rb_int_topn_ties.{ext}", tmp_path / RB / f"rb_int_topn_ties.{ext}")
    path = tmp_path / RB / "rb_int_topn_ties.json"
    case = json.loads(path.read_text())
    query = next(q for q in case["queries"] if q["op"] == "top_n" and len(q["rows"]["ranges"]) > 1)
    query["rows"]["ranges"][0][1] += 1  # one row more, one row less
    query["rows"]["ranges"][-1][1] -= 1
    path.write_text(json.dumps(case))
    failures = check_case(tmp_path, {"format": RB, "case": "x", "json": f"{RB}/rb_int_topn_ties.json", "bin": f"{RB}/rb_int_topn_ties.bin"}, None)
    assert len(failures) == 1 and failures[0].startswith("top_n(") and ": rows: got " in failures[0]


def test_chunk_size_parsing_and_refused_types():
    assert [chunk_size_bytes(s) for s in ("0b", "3", "16 KB", "1k", "4gb", "4100mb")] == [0, 3, 16384, 1024, 0, 4194304]
    assert chunk_size_bytes("2gb") < 0
    for bad in ("-1b", "1.5kb"):
        with pytest.raises(ValueError):
            chunk_size_bytes(bad)
    for t in (DataType("DECIMAL", 19, 2), DataType("TIMESTAMP", 7), DataType("TIMESTAMP_LTZ", 9), DataType("BYTES"), DataType("BINARY", 4)):
        with pytest.raises(ValueError):
            key_kind(t)
    with pytest.raises(ValueError, match="capacity < 0"):
        RangeBitmapIndex.build(DataType("INT"), [1], "2gb")
    assert len(RangeBitmapIndex.build(DataType("INT"), [None], "2gb").serialize()) == 1080


# -- generated cases against Paimon through the JVM ----------------------------------------------

TYPES = [
    {"sql": "TINYINT", "root": "TINYINT"}, {"sql": "SMALLINT", "root": "SMALLINT"}, {"sql": "INT", "root": "INTEGER"},
    {"sql": "BIGINT", "root": "BIGINT"}, {"sql": "FLOAT", "root": "FLOAT"}, {"sql": "DOUBLE", "root": "DOUBLE"},
    {"sql": "BOOLEAN", "root": "BOOLEAN"}, {"sql": "DATE", "root": "DATE"}, {"sql": "TIME(3)", "root": "TIME_WITHOUT_TIME_ZONE", "precision": 3},
    {"sql": "TIMESTAMP(3)", "root": "TIMESTAMP_WITHOUT_TIME_ZONE", "precision": 3},
    {"sql": "TIMESTAMP(6)", "root": "TIMESTAMP_WITHOUT_TIME_ZONE", "precision": 6},
    {"sql": "TIMESTAMP(0) WITH LOCAL TIME ZONE", "root": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": 0},
    {"sql": "DECIMAL(9, 2)", "root": "DECIMAL", "precision": 9, "scale": 2},
    {"sql": "DECIMAL(18, 0)", "root": "DECIMAL", "precision": 18, "scale": 0},
    {"sql": "STRING", "root": "VARCHAR", "length": 2147483647}, {"sql": "CHAR(4)", "root": "CHAR", "length": 4},
    {"sql": "DECIMAL(20, 2)", "root": "DECIMAL", "precision": 20, "scale": 2},  # refused
    {"sql": "TIMESTAMP(9)", "root": "TIMESTAMP_WITHOUT_TIME_ZONE", "precision": 9},  # refused
]  # fmt: skip
_INTS = {"TINYINT": 7, "SMALLINT": 15, "INTEGER": 31, "DATE": 31, "TIME_WITHOUT_TIME_ZONE": 26}


def _value(rng: random.Random, t: dict, spread: int) -> object:
    """One non-null value in the vectors' JSON encoding."""
    root = t["root"]
    if root in _INTS:
        bits = _INTS[root]
        near = rng.randrange(max(-spread, -(1 << bits)), min(spread, 1 << bits))
        return rng.choice([near, rng.randrange(-(1 << bits), 1 << bits), -(1 << bits), (1 << bits) - 1])
    if root == "BIGINT":
        return str(rng.choice([rng.randrange(-spread, spread), rng.randrange(-(1 << 63), 1 << 63), -(1 << 63), (1 << 63) - 1]))
    if root in ("FLOAT", "DOUBLE"):
        fmt, ufmt, width = ("<f", "<I", 8) if root == "FLOAT" else ("<d", "<Q", 16)
        special = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.5]
        v = rng.choice([rng.randrange(-spread, spread) / 4, rng.choice(special)])
        bits = struct.unpack(ufmt, struct.pack(fmt, v))[0]
        if rng.random() < 0.05:  # another NaN payload
            bits = (0x7FC00123 if root == "FLOAT" else 0x7FF8000000000123) | (bits & 0)
        return f"0x{bits:0{width}x}"
    if root == "BOOLEAN":
        return rng.random() < 0.5
    if root.startswith("TIMESTAMP"):
        return {"millis": 1_700_000_000_000 + rng.randrange(-spread, spread) * 997, "nanos": rng.randrange(1_000_000)}
    if root == "DECIMAL":
        digits = t["precision"]
        return str(Decimal(rng.randrange(-(10**digits) + 1, 10**digits)).scaleb(-t["scale"]))
    alphabet = "ab\u00e9\U0001f600z" if rng.random() < 0.3 else "abcdefgh"
    s = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 7 if root == "VARCHAR" else 4)))
    return s.ljust(4) if root == "CHAR" else s


def _case(seed: int) -> dict:
    rng = random.Random(seed)
    t = TYPES[seed % len(TYPES)]
    shape = rng.choice(["random", "random", "all_distinct", "one_distinct", "all_null", "empty"])
    rows = rng.choice([1, 2, 5, 40, 300, 2000])
    spread = rng.choice([3, 50, 10**6])
    pool = [_value(rng, t, spread) for _ in range(rng.randrange(1, 40))]
    if shape == "empty":
        values = []
    elif shape == "all_null":
        values = [None] * rows
    elif shape == "one_distinct":
        values = [None if rng.random() < 0.2 else pool[0] for _ in range(rows)]
    elif shape == "all_distinct":
        values = list({json.dumps(v): v for v in (_value(rng, t, 10**6) for _ in range(rows))}.values())
    else:
        nulls = rng.choice([0.0, 0.1, 0.5])
        values = [None if rng.random() < nulls else rng.choice(pool) if rng.random() < 0.7 else _value(rng, t, spread) for _ in range(rows)]
    options = rng.choice([{}, {"chunk-size": "0b"}, {"chunk-size": f"{rng.randrange(1, 60)}b"}, {"chunk-size": "1 kb"}])
    present = [v for v in values if v is not None]
    literals = [rng.choice(present) if present and rng.random() < 0.6 else _value(rng, t, spread) for _ in range(8)]
    queries = [{"op": "is_null"}, {"op": "is_not_null"}]
    for lit in literals:
        queries += [{"op": op, "literals": [lit]} for op in ("equal", "not_equal", "less_than", "less_or_equal", "greater_than", "greater_or_equal")]
    queries += [{"op": op, "literals": literals[i : i + 3]} for op in ("in", "not_in") for i in (0, 3)]
    queries += [{"op": "between", "literals": literals[i : i + 2]} for i in (0, 2, 4)]
    for _ in range(6):
        order = {"column": "c", "direction": rng.choice(["ASCENDING", "DESCENDING"]), "null_ordering": rng.choice(["NULLS_FIRST", "NULLS_LAST"])}
        orders = [order] if rng.random() < 0.7 else [order, {**order, "column": "other"}]
        found = sorted(rng.sample(range(len(values)), rng.randrange(len(values) + 1))) if values else []
        given = rng.choice([{"result_kind": "remain"}, {"result_kind": "bitmap", "rows": {"cardinality": len(found), "ranges": [[r, r + 1] for r in found]}}])
        queries.append({"op": "top_n", "top_n": {"limit": rng.choice([0, 1, 3, len(values) // 2, len(values) + 1]), "orders": orders}, "input": given})
    return {"case": f"gen_{seed}", "type": t, "options": options, "values": values, "queries": queries}


def _python_answer(index: RangeBitmapIndex, t: dict, q: dict):
    if q["op"] == "top_n":
        return index.visit_top_n(top_n_from_json(q["top_n"]), result_from_json(q["input"]))
    return index.query(q["op"], [typed_value(t, v) for v in q.get("literals", [])])


def _as_json(result) -> dict:
    if not isinstance(result, BitmapResult):
        return {"result_kind": result.kind, "remain": result.remain}
    ranges: list[list[int]] = []
    for row in result.rows:
        if ranges and ranges[-1][1] == row:
            ranges[-1][1] = row + 1
        else:
            ranges.append([row, row + 1])
    return {"result_kind": "bitmap", "remain": result.remain, "rows": {"cardinality": len(result.rows), "ranges": ranges}}


def test_generated_cases_against_paimon_and_scala(tmp_path: Path):
    """~110 seeded cases over every type (and two Paimon refuses), nulls, one distinct value, all
    distinct, all null, empty input, chunk sizes from one key per chunk to one chunk: Paimon's
    writer, the Scala writer and the Python writer give the same bytes, and Paimon's reader and
    the Python reader the same answer to every predicate and top-N."""
    if not PAIMON_BUNDLE.is_file():
        pytest.fail(f"Paimon's jar is missing at {PAIMON_BUNDLE} (scripts/bootstrap.sh)")
    cases = [_case(seed) for seed in range(110)]
    for c in cases:
        (tmp_path / f"{c['case']}.json").write_text(json.dumps(c))
    report = json.loads(jvm_with(PAIMON_BUNDLE).io.indexbridge.reference.RangeBitmapReference.run(str(tmp_path)))
    compared = refused = 0
    for c in cases:
        t = DataType.from_json(c["type"])
        theirs = report[c["case"]]
        values = [typed_value(c["type"], v) for v in c["values"]]
        if "error" in theirs:
            refused += 1
            assert "scala_error" in theirs, (c["case"], theirs["error"])
            with pytest.raises(ValueError):
                RangeBitmapIndex.from_options(t, values, c["options"])
            continue
        expected = (tmp_path / f"{c['case']}.paimon.bin").read_bytes()
        ours = RangeBitmapIndex.from_options(t, values, c["options"]).serialize()
        assert ours == expected, (c["case"], c["type"]["sql"], c["options"])
        assert (tmp_path / f"{c['case']}.scala.bin").read_bytes() == expected, c["case"]
        index = RangeBitmapIndex.read(expected, t)
        for q, answer in zip(c["queries"], theirs["answers"]):
            assert _as_json(_python_answer(index, c["type"], q)) == answer, (c["case"], q)
            compared += 1
        if c["type"]["root"] in ("INTEGER", "BIGINT", "DOUBLE", "VARCHAR", "BOOLEAN"):  # the Arrow path
            arrow = {"INTEGER": pa.int32(), "BIGINT": pa.int64(), "DOUBLE": pa.float64(), "VARCHAR": pa.string(), "BOOLEAN": pa.bool_()}
            column = pa.array(values, arrow[c["type"]["root"]])
            assert RangeBitmapIndex.from_options(t, column, c["options"]).serialize() == expected, c["case"]
    assert refused >= 8 and compared > 5000, (refused, compared)


# -- exact answers (brute force) -------------------------------------------------------------------


def _java_order(root: str, v: object) -> object:
    """Java's order of a value: Float/Double.compare for floats, bytes for strings."""
    if root in ("FLOAT", "DOUBLE"):
        return (1, 0.0, 0) if v != v else (0, v, -1 if str(v).startswith("-") and v == 0 else 1)
    if root == "VARCHAR":
        return v.encode("utf-8")
    if isinstance(v, Timestamp):
        return (v.millisecond, v.nano_of_millisecond // 1000)
    return v


@pytest.mark.parametrize("root", ["INTEGER", "BIGINT", "DOUBLE", "VARCHAR", "TIMESTAMP"])
def test_answers_are_the_exact_comparisons(root: str):
    rng = random.Random(root)
    t = DataType(root, 6) if root == "TIMESTAMP" else DataType(root)
    make = {
        "INTEGER": lambda: rng.randrange(-30, 30),
        "BIGINT": lambda: rng.randrange(-(1 << 63), 1 << 63) if rng.random() < 0.2 else rng.randrange(-30, 30),
        "DOUBLE": lambda: rng.choice([rng.randrange(-30, 30) / 2, float("nan"), -0.0, 0.0, float("inf")]),
        "VARCHAR": lambda: "".join(rng.choice("ab\u00e9") for _ in range(rng.randrange(4))),
        "TIMESTAMP": lambda: Timestamp(1_700_000_000_000 + rng.randrange(40), rng.randrange(0, 1_000_000, 250_000)),
    }[root]
    for _ in range(25):
        values = [None if rng.random() < 0.15 else make() for _ in range(rng.randrange(0, 120))]
        index = RangeBitmapIndex.read(RangeBitmapIndex.build(t, values, rng.choice(["0b", "9b", "16kb"])).serialize(), t)
        keyed = [(r, _java_order(t.root, v)) for r, v in enumerate(values) if v is not None]
        for lit in [make() for _ in range(6)]:
            x = _java_order(t.root, lit)
            expect = {
                "equal": {r for r, v in keyed if v == x}, "not_equal": {r for r, v in keyed if v != x},
                "less_than": {r for r, v in keyed if v < x}, "less_or_equal": {r for r, v in keyed if v <= x},
                "greater_than": {r for r, v in keyed if v > x}, "greater_or_equal": {r for r, v in keyed if v >= x},
            }  # fmt: skip
            for op, rows in expect.items():
                assert set(index.query(op, [lit]).rows) == rows, (op, lit, values)
        assert set(index.query("is_null").rows) == ({r for r, v in enumerate(values) if v is None} if keyed or len(values) <= 2 else {0, len(values) - 1})
        # top-N: strict bottom-k keeps the largest row ids among the tied rows, nulls last
        k = rng.randrange(0, len(values) + 2)
        got = index.visit_top_n(TopN((SortOrder("c"),), k), BitmapResult(BitMap(range(len(values)))))
        if keyed:
            ranked = sorted(keyed, key=lambda rv: (rv[1], -rv[0]))[:k]
            nulls = [r for r, v in enumerate(values) if v is None][: max(0, k - len(keyed))]
            assert set(got.rows) == {r for r, _ in ranked} | set(nulls), (k, values)


# -- containers and mutations ------------------------------------------------------------------------


def test_container_top_n_and_predicates():
    fields = {"k": DataType("INT"), "s": DataType("STRING"), "m": DataType("MAP", key=DataType("STRING"), value=DataType("INT"))}
    rows = 50
    columns = {"k": [None if i % 7 == 0 else i % 10 for i in range(rows)], "s": [f"s{i % 4}" for i in range(rows)],
               "m": [{"a": i} if i % 2 else None for i in range(rows)]}  # fmt: skip
    options = {"file-index.range-bitmap.columns": "k,s,m[a]", "file-index.range-bitmap.s.chunk-size": "4b", "file-index.bloom-filter.columns": "k"}
    container = FileIndexContainer(build_file_index(options, fields, columns))
    predicate = container.predicate(fields)
    from indexbridge.paimon.fileindex.predicate import And, Leaf

    result = predicate.evaluate(And((Leaf("greater_or_equal", "k", (5,)), Leaf("less_than", "s", ("s2",)), Leaf("greater_than", "m[a]", (20,)))))
    assert set(result.rows) == {i for i in range(rows) if i % 7 and i % 10 >= 5 and i % 4 < 2 and i % 2 and i > 20}
    top = predicate.evaluate_top_n(TopN((SortOrder("k", "DESCENDING"),), 3), BitmapResult(BitMap(range(rows))))
    assert set(top.rows) == {19, 29, 39}  # value 9 (49 is null): strict keeps the largest row ids
    assert predicate.evaluate_top_n(TopN((SortOrder("k"),), 3), BitmapResult(BitMap([1, 2]))).rows == BitMap([1, 2])
    assert predicate.evaluate_top_n(TopN((SortOrder("nothing"),), 3), BitmapResult(BitMap(range(9)))).rows == BitMap(range(9))


def test_mutated_payloads_decode_or_raise_index_format_error():
    rng = random.Random(5)
    samples = [(DataType("INT"), [5, None, 3, 5, 9, -1, 3, None, 100], "4b"), (DataType("STRING"), ["b", "a", None, "ccc", "a", "", "dd"], "9b"),
               (DataType("DOUBLE"), [1.5, float("nan"), -0.0, 0.0, None], None), (DataType("BIGINT"), [], None)]  # fmt: skip
    for t, values, chunk in samples:
        data = RangeBitmapIndex.build(t, values, chunk).serialize()
        mutants = [data[:n] for n in range(len(data))]
        for _ in range(300):
            b = bytearray(data)
            b[rng.randrange(len(b))] = rng.randrange(256)
            mutants.append(bytes(b))
        for _ in range(150):
            b = bytearray(data)
            at = rng.randrange(max(1, len(b) - 3))
            b[at : at + 4] = struct.pack(">i", rng.choice([-1, 0, 2**31 - 1, -(2**31), 64, 65]))
            mutants.append(bytes(b[: len(data)]))
        for m in mutants:
            try:
                index = RangeBitmapIndex.read(m, t)
                for v in [v for v in values if v is not None][:3]:
                    for op in OPS:
                        index.query(op, [v, v] if op == "between" else [] if op.startswith("is_") else [v])
                index.visit_top_n(TopN((SortOrder("c"),), 2), BitmapResult(BitMap(range(5))))
                for i in range(index.dictionary.chunk_count):
                    index.dictionary.chunk_keys(i)
                [index.bsi.code_of(r) for r in range(min(index.row_count, 20))]
            except IndexFormatError:
                pass
