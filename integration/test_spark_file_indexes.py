"""Paimon file indexes through Spark: the JVM aggregates and the Arrow kernels build the same
containers, and pruning with either engine is sound, exact where the indexes are, and the same."""

from __future__ import annotations

import datetime
import functools
import random
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from pyroaring import BitMap
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from indexbridge.paimon.fileindex.container import FileIndexContainer, build_index
from indexbridge.spark import arrow
from indexbridge.spark import functions as ibf

SCHEMA = (
    "file string, pos long, k bigint, c string, v int, s smallint, y tinyint, d decimal(10,2), ts timestamp, "
    "ntz timestamp_ntz, dt date, f double, r float, b boolean, bin binary, m map<string,int>"
)
OPTIONS = {
    "file-index.bloom-filter.columns": "k,f,r,bin,m[b]",
    "file-index.bloom-filter.k.items": "300",
    "file-index.bloom-filter.k.fpp": "0.01",
    "file-index.bloom-filter.f.items": "200",
    "file-index.bloom-filter.r.items": "200",
    "file-index.bloom-filter.bin.items": "100",
    "file-index.bloom-filter.m[b].items": "100",
    "file-index.bitmap.columns": "c,ts,b,s,m[a]",
    "file-index.bitmap.s.version": "1",
    "file-index.bsi.columns": "v,d,dt,ntz,y",
    "file-index.in-manifest-threshold": "4 kb",
}
DATA_COLUMNS = [c.split()[0] for c in SCHEMA.split(", ")][2:]


def _rows(seed: int, files: int = 4) -> list[tuple]:
    rng = random.Random(seed)

    def maybe(make):
        return None if rng.randrange(9) == 0 else make()

    out = []
    for f in range(files):
        for pos in range(1 if f == 0 else rng.randrange(50, 200)):
            out.append((
                f"dir/part-{f}.parquet", pos,
                maybe(lambda: rng.randrange(1000) * (f + 1)),
                maybe(lambda: f"c{rng.randrange(5)}"),
                maybe(lambda: rng.randrange(200) - 100 + 50 * f),
                maybe(lambda: rng.randrange(-3, 3)),
                maybe(lambda: rng.randrange(-128, 128)),
                maybe(lambda: Decimal(rng.randrange(-50000, 50000)).scaleb(-2)),
                maybe(lambda: datetime.datetime(2023, 11, 14, rng.randrange(24), 0, 0, rng.randrange(1000) * 1000)),
                maybe(lambda: datetime.datetime(2024, 1, 1 + f, 0, rng.randrange(60), 0, rng.randrange(1000))),
                maybe(lambda: datetime.date(2022, 1, 1) + datetime.timedelta(days=rng.randrange(30) + 40 * f)),
                maybe(lambda: rng.randrange(50) / 4 + 0.5),
                maybe(lambda: rng.randrange(8) / 2 + 0.5),
                maybe(lambda: rng.random() < 0.5),
                maybe(lambda: bytes(rng.randrange(3) for _ in range(rng.randrange(4)))),
                maybe(lambda: {k: rng.randrange(4) for k in ("a", "b") if rng.random() < 0.6}),
            ))  # fmt: skip
    return out


@pytest.fixture(scope="module")
def data(spark):
    return spark.createDataFrame(_rows(11), SCHEMA).repartition(3).cache()


@pytest.fixture(scope="module")
def built(data, tmp_path_factory):
    """{engine: (index rows by file, directory)}"""
    out = {}
    for engine in ("jvm", "arrow"):
        directory = tmp_path_factory.mktemp(engine)
        rows = ibf.build_file_indexes(data, options=OPTIONS, directory=str(directory), engine=engine).cache()
        out[engine] = (rows, {r["file"]: r for r in rows.collect()}, directory)
    return out


def _container(row) -> bytes:
    return bytes(row["embedded"]) if row["embedded"] is not None else Path(row["index_file"]).read_bytes()


def test_jvm_and_arrow_build_the_same_containers(built):
    _, jvm, jvm_dir = built["jvm"]
    _, py, py_dir = built["arrow"]
    assert set(jvm) == set(py) == {f"dir/part-{f}.parquet" for f in range(4)}
    for file in jvm:
        assert _container(jvm[file]) == _container(py[file]), file
        for r, directory in ((jvm[file], jvm_dir), (py[file], py_dir)):
            size = len(_container(r))
            assert r["size"] == size
            assert (r["embedded"] is None) == (size > 4096)
            if r["index_file"] is not None:
                assert r["index_file"] == str(directory / f"{file}.index")
            assert [tuple(e) for e in r["indexes"]] == [
                (e.column, e.index_type, e.length) for e in FileIndexContainer(_container(r)).entries
            ]
    assert any(r["embedded"] is not None for r in jvm.values()) and any(r["index_file"] for r in jvm.values()), [
        r["size"] for r in jvm.values()
    ]
    assert not [p for d in (jvm_dir, py_dir) for p in d.rglob(".*")], "temporary files left behind"


def _arrow_type(df, name):
    from pyspark.sql.pandas.types import to_arrow_type

    return to_arrow_type(df.schema[name].dataType)


def test_single_index_aggregates_and_an_empty_file(spark, data):
    fields = arrow.paimon_fields(data.schema)
    got = data.groupBy("file").agg(
        ibf.bloom_filter_agg("k", {"items": "300", "fpp": "0.01"}).alias("bloom"),
        ibf.bitmap_index_agg("pos", "c", {"version": "1"}).alias("bitmap"),
        ibf.bsi_agg("pos", "dt").alias("bsi"),
    )
    rows = sorted(_rows(11), key=lambda r: (r[0], r[1]))
    for r in got.collect():
        mine = [x for x in rows if x[0] == r["file"]]

        def col(name):
            return [x[2 + DATA_COLUMNS.index(name)] for x in mine]

        assert bytes(r["bloom"]) == build_index("bloom-filter", fields["k"], col("k"), {"items": "300", "fpp": "0.01"})
        assert bytes(r["bitmap"]) == build_index("bitmap", fields["c"], col("c"), {"version": "1"})
        days = [None if d is None else (d - datetime.date(1970, 1, 1)).days for d in col("dt")]
        assert bytes(r["bsi"]) == build_index("bsi", fields["dt"], days, {})

    # a data file without rows: the JVM aggregate over no rows and the Arrow kernel's row agree
    empty = spark.createDataFrame([], SCHEMA)
    jvm = empty.agg(ibf.file_index_agg("pos", F.struct(*DATA_COLUMNS), OPTIONS)).first()[0]
    table = pa.Table.from_pylist([], schema=pa.schema([(f.name, _arrow_type(empty, f.name)) for f in empty.schema.fields]))
    row = arrow.file_index_row("empty", table, "pos", list(OPTIONS.items()), fields, None)
    assert row["embedded"] == bytes(jvm)
    assert any(e.start == -1 for e in FileIndexContainer(bytes(jvm)).entries), "map-nested indexes of an empty file are empty entries"


# (condition, the indexes answer it exactly: every candidate row matches)
CONDITIONS = [
    ("k = 1234", False),
    ("c = 'c3'", True),
    ("c IN ('c1', 'zz') AND v < 0", True),
    ("NOT (v >= 0) OR d IS NULL", True),
    ("v BETWEEN 40 AND 60", True),
    ("d > 400.00 AND dt <= DATE'2022-02-15'", True),
    ("ntz >= TIMESTAMP_NTZ'2024-01-03 00:00:00'", True),
    ("ts = TIMESTAMP'2023-11-14 05:00:00.123'", True),
    ("m['a'] = 3 OR m['b'] = 1", False),
    ("c NOT IN ('c1', 'c2') AND b IS NOT NULL AND s <> 0", False),  # Paimon's NOT IN / <> keep null rows
    ("f = 3.0 AND upper(c) = 'C1'", False),
    ("r = 1.5 OR y > 100", False),
    ("bin = X'0102' OR k IS NULL", False),
]


def test_pruning_is_sound_exact_where_the_indexes_are_and_the_same_for_both_engines(data, built):
    """Per condition: every row a plain filter selects is among the candidates of a file that
    is not skipped; exact indexes (bitmap, BSI) leave exactly those rows; both engines agree.
    (One Spark job for the filters and one per engine for all the conditions.)"""
    flags = data.select("file", "pos", *[F.expr(c).alias(f"_{i}") for i, (c, _) in enumerate(CONDITIONS)]).collect()
    answers = {}
    for engine in ("jvm", "arrow"):
        pruned = [
            ibf.prune_files(built[engine][0].coalesce(1), c, data.schema, engine=engine).select(F.lit(i).alias("i"), "*")
            for i, (c, _) in enumerate(CONDITIONS)
        ]
        answers[engine] = {
            (r["i"], r["file"]): (r["skipped"], None if r["rows"] is None else BitMap.deserialize(bytes(r["rows"])), r["candidates"])
            for r in functools.reduce(DataFrame.unionAll, pruned).collect()
        }
    assert answers["jvm"] == answers["arrow"]
    skips = row_sets = 0
    for (i, file), (skipped, rows, candidates) in answers["jvm"].items():
        condition, exact = CONDITIONS[i]
        matching = {r["pos"] for r in flags if r["file"] == file and r[f"_{i}"]}
        assert not (skipped and matching), (condition, file)
        assert rows is None or (len(rows) == candidates and matching <= set(rows)), (condition, file)
        if exact:
            assert skipped == (not matching) and (skipped or rows == BitMap(matching)), (condition, file)
        skips += skipped
        row_sets += rows is not None
    assert len(answers["jvm"]) == 4 * len(CONDITIONS)
    assert skips >= 10 and row_sets >= 15, (skips, row_sets)


def test_apply_pruning_keeps_the_candidate_rows_of_the_files_not_skipped(data, built):
    condition = "c IN ('c1', 'zz') AND v < 0 OR k = 1234"
    pruned = ibf.prune_files(built["jvm"][0], F.expr(condition), data.schema).cache()
    answers = pruned.collect()
    kept = ibf.apply_pruning(data, pruned)
    assert kept.columns == data.columns
    rows = {(r["file"], r["pos"], r["match"]) for r in data.select("file", "pos", F.expr(condition).alias("match")).collect()}
    candidates = {(r["file"], p) for r in answers if r["rows"] is not None for p in BitMap.deserialize(bytes(r["rows"]))}
    remaining = {r["file"] for r in answers if not r["skipped"] and r["rows"] is None}
    got = {(r["file"], r["pos"]) for r in kept.select("file", "pos").collect()}
    assert got == candidates | {(f, p) for f, p, _ in rows if f in remaining}
    assert {(f, p) for f, p, match in rows if match} <= got
    by_function = data.join(pruned.where("NOT skipped"), "file").where(ibf.row_set_contains("rows", "pos"))
    assert by_function.count() == len(got)


def test_predicates_from_sql_text_and_columns(data):
    from indexbridge.paimon.fileindex.predicate import And, Leaf, Or

    assert ibf.file_index_predicate("c = 'c3' OR v < 5", data.schema) == Or((Leaf("equal", "c", ("c3",)), Leaf("less_than", "v", (5,))))
    assert ibf.file_index_predicate(F.col("k").isin(1, 2) & F.col("m")["a"].isNull(), data.schema) == And(
        (Leaf("in", "k", (1, 2)), Leaf("is_null", "m[a]"))
    )
    assert ibf.file_index_predicate("length(c) = 2", data.schema) == And(())


# -- range-bitmap ------------------------------------------------------------------------------

RB_OPTIONS = {
    "file-index.range-bitmap.columns": "k,c,v,s,y,d,ts,ntz,dt,f,r,b,m[a]",
    "file-index.range-bitmap.c.chunk-size": "8b",
    "file-index.range-bitmap.v.chunk-size": "12b",
    "file-index.range-bitmap.m[a].chunk-size": "0b",
    "file-index.bloom-filter.columns": "k",
}
# range-bitmap answers every comparison exactly (nulls never match, as in SQL)
RB_CONDITIONS = [
    "k > 1500",
    "c >= 'c2' AND c < 'c4'",
    "v BETWEEN -20 AND 20 OR s <> 0",
    "d <= -100.00 AND dt > DATE'2022-02-01'",
    "ts < TIMESTAMP'2023-11-14 06:00:00' AND ntz >= TIMESTAMP_NTZ'2024-01-02 00:00:00'",
    "f > 10.0 OR f <= 1.0",
    "b = true AND y NOT IN (1, 2, 3)",
    "m['a'] >= 2",
    "c IS NULL OR k IS NULL",
]


@pytest.fixture(scope="module")
def built_range_bitmap(data, tmp_path_factory):
    out = {}
    for engine in ("jvm", "arrow"):
        directory = tmp_path_factory.mktemp(f"rb-{engine}")
        rows = ibf.build_file_indexes(data, options=RB_OPTIONS, directory=str(directory), engine=engine).cache()
        out[engine] = (rows, {r["file"]: r for r in rows.collect()})
    return out


def test_range_bitmap_containers_pruning_and_aggregate(data, built_range_bitmap):
    jvm, py = built_range_bitmap["jvm"][1], built_range_bitmap["arrow"][1]
    assert set(jvm) == set(py) and len(jvm) == 4
    for file in jvm:
        assert _container(jvm[file]) == _container(py[file]), file
        assert {e.index_type for e in FileIndexContainer(_container(jvm[file])).entries} == {"range-bitmap", "bloom-filter"}
    flags = data.select("file", "pos", *[F.expr(c).alias(f"_{i}") for i, c in enumerate(RB_CONDITIONS)]).collect()
    answers = {}
    for engine in ("jvm", "arrow"):
        pruned = [
            ibf.prune_files(built_range_bitmap[engine][0].coalesce(1), c, data.schema, engine=engine).select(F.lit(i).alias("i"), "*")
            for i, c in enumerate(RB_CONDITIONS)
        ]
        answers[engine] = {
            (r["i"], r["file"]): (r["skipped"], None if r["rows"] is None else BitMap.deserialize(bytes(r["rows"])))
            for r in functools.reduce(DataFrame.unionAll, pruned).collect()
        }
    assert answers["jvm"] == answers["arrow"]
    for (i, file), (skipped, rows) in answers["jvm"].items():
        matching = {r["pos"] for r in flags if r["file"] == file and r[f"_{i}"]}
        assert skipped == (not matching) and (skipped or rows == BitMap(matching)), (RB_CONDITIONS[i], file)

    fields = arrow.paimon_fields(data.schema)
    got = data.groupBy("file").agg(
        ibf.range_bitmap_agg("pos", "c", {"chunk-size": "8b"}).alias("c"), ibf.range_bitmap_agg("pos", "f").alias("f")
    )
    rows = sorted(_rows(11), key=lambda r: (r[0], r[1]))
    for r in got.collect():
        mine = [x for x in rows if x[0] == r["file"]]
        assert bytes(r["c"]) == build_index("range-bitmap", fields["c"], [x[2 + DATA_COLUMNS.index("c")] for x in mine], {"chunk-size": "8b"})
        assert bytes(r["f"]) == build_index("range-bitmap", fields["f"], [x[2 + DATA_COLUMNS.index("f")] for x in mine], {})
