"""Deletion vectors through Spark: the JVM functions and the Python DataFrame API, checked
against the Python codec and against plain Spark."""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from indexbridge.paimon.dv import DeletionVector, encode_deletion_files, read_deletion_vectors
from indexbridge.spark import functions as ibf


def _deletes(seed: int, files: int = 6, per_file: int = 3000, high: bool = False):
    """Positions in random order; with `high`, odd files above 2^33, and file 5's positions
    spread at random over three 32-bit keys (ib_dv_agg adds positions in batches, each batch
    split by key)."""
    rng = random.Random(seed)
    rows = []
    for f in range(files):
        for pos in rng.sample(range(100_000), per_file):
            base = (rng.choice((0, 1 << 32, 5 << 32)) if f == 5 else 1 << 33 if f % 2 else 0) if high else 0
            rows.append((f % 3, f"data-{seed}-{f}.parquet", base + pos))
    return rows


def _by_file(rows):
    positions = defaultdict(set)
    for _, file, pos in rows:
        positions[file].add(pos)
    return positions


@pytest.mark.parametrize("bitmap64", [False, True])
def test_dv_agg_writes_the_bytes_of_the_python_codec(spark, bitmap64):
    rows = _deletes(1, high=bitmap64)
    df = spark.createDataFrame(rows, "bucket int, file string, pos long")
    dvs = {r["file"]: bytes(r["dv"]) for r in ibf.build_deletion_vectors(df, bitmap64=bitmap64).collect()}
    expected = _by_file(rows)
    assert set(dvs) == set(expected)
    for file, frame in dvs.items():
        assert frame == DeletionVector.from_positions(sorted(expected[file]), bitmap64=bitmap64).serialize()


def test_sql_functions(spark):
    rows = _deletes(2, files=3, per_file=500)
    spark.createDataFrame(rows, "bucket int, file string, pos long").createOrReplaceTempView("deletes")
    agg = spark.sql("SELECT file, ib_dv_agg(pos) AS dv, count(*) AS n FROM deletes GROUP BY file")
    agg.createOrReplaceTempView("dvs")
    for r in spark.sql("SELECT file, n, ib_dv_cardinality(dv) AS c FROM dvs").collect():
        assert r["c"] == r["n"]
    exploded = spark.sql("SELECT file, ib_dv_positions(dv) FROM dvs")
    assert exploded.columns == ["file", "pos"]
    assert exploded.exceptAll(spark.table("deletes").select("file", "pos")).isEmpty()
    assert exploded.count() == len(rows)
    probe = spark.sql(
        "SELECT d.pos, ib_dv_contains(v.dv, d.pos) AS hit, ib_dv_contains(v.dv, d.pos + 100000) AS miss "
        "FROM deletes d JOIN dvs v USING (file)"
    )
    assert probe.filter("NOT hit OR miss").isEmpty()


def test_dv_agg_rejects_positions_out_of_range(spark):
    df = spark.createDataFrame([("f", 1 << 31)], "file string, pos long")
    with pytest.raises(Exception, match="2147483647|out of range|position"):
        ibf.build_deletion_vectors(df).collect()


def test_write_read_and_apply(spark, tmp_path: Path):
    rows = _deletes(3)
    deletes = spark.createDataFrame(rows, "bucket int, file string, pos long")
    dvs = ibf.build_deletion_vectors(deletes, group_cols=["bucket"]).cache()
    directory = tmp_path / "index"
    ranges = ibf.write_deletion_files(dvs, str(directory), group_cols=["bucket"]).cache()
    manifest = ranges.collect()

    # each bucket's file is what the Python codec writes for that bucket's DVs
    by_bucket = defaultdict(dict)
    for r in dvs.collect():
        by_bucket[r["bucket"]][r["file"]] = DeletionVector.deserialize(bytes(r["dv"]))
    for bucket, vectors in by_bucket.items():
        [(data, file_ranges)] = encode_deletion_files(vectors)
        names = {r["index_file"] for r in manifest if r["bucket"] == bucket}
        assert len(names) == 1
        assert (directory / names.pop()).read_bytes() == data
        assert sorted((r.data_file, r.offset, r.length, r.cardinality) for r in file_ranges) == sorted(
            (r["data_file"], r["offset"], r["length"], r["cardinality"]) for r in manifest if r["bucket"] == bucket
        )
    assert not [p for p in directory.iterdir() if p.name.startswith(".")], "temporary files left behind"

    back = ibf.read_deletion_files(ranges, str(directory))
    assert back.count() == len(rows)
    assert back.exceptAll(deletes.select(F.col("file").alias("data_file"), "pos")).isEmpty()

    data = spark.createDataFrame(
        [(f"data-3-{f}.parquet", pos, pos * 10) for f in range(7) for pos in range(0, 100_000, 37)],
        "file string, pos long, value long",
    )
    kept = ibf.apply_deletion_vectors(data, dvs.select("file", "dv"))
    expected = data.join(deletes, ["file", "pos"], "left_anti")
    assert kept.count() == expected.count()
    assert kept.exceptAll(expected).isEmpty()
    assert kept.columns == data.columns


def test_read_deletion_files_matches_python_reader(spark, tmp_path: Path):
    rows = _deletes(4, files=4, per_file=100)
    dvs = ibf.build_deletion_vectors(spark.createDataFrame(rows, "bucket int, file string, pos long"))
    directory = tmp_path / "index"
    manifest = ibf.write_deletion_files(dvs, str(directory), target_size=300).collect()
    assert len({r["index_file"] for r in manifest}) > 1, "rolling at 300 bytes must start several files"
    expected = _by_file(rows)
    for r in manifest:
        from indexbridge.paimon.dv import DeletionVectorRange

        dv = read_deletion_vectors(directory / r["index_file"], [DeletionVectorRange(r["data_file"], r["offset"], r["length"], r["cardinality"])])[r["data_file"]]
        assert set(dv.positions().tolist()) == expected[r["data_file"]]
