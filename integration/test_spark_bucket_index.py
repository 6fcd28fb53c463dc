"""Paimon's key hash and HASH index files through Spark, checked against the Python codec."""

from __future__ import annotations

import datetime as dt
import random
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

from pyspark.sql import functions as F

from indexbridge.paimon.binary_row import Timestamp
from indexbridge.paimon.bucket import decode_hash_index, encode_hash_index, key_hash
from indexbridge.spark import functions as ibf

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _timestamp(value: dt.datetime) -> Timestamp:
    micros = (value - EPOCH) // dt.timedelta(microseconds=1)
    return Timestamp(micros // 1000, (micros % 1000) * 1000)


def test_ib_key_hash_equals_python_key_hash_for_every_type(spark):
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    rng = random.Random(5)
    rows = []
    for i in range(300):
        text = "".join(rng.choice("aé€😀z") for _ in range(rng.choice([0, 1, 3, 7, 8, 20])))
        rows.append(
            (
                rng.getrandbits(32) - 2**31,
                rng.getrandbits(64) - 2**63,
                text if i % 17 else None,
                Decimal(rng.randint(-(10**9), 10**9)).scaleb(-2),
                Decimal(rng.randint(-(10**30), 10**30)).scaleb(-6),
                dt.date(1970, 1, 1) + dt.timedelta(days=rng.randint(-5000, 50000)),
                EPOCH + dt.timedelta(microseconds=rng.randint(-(10**15), 10**16)),
                bool(i % 2),
                rng.randbytes(rng.choice([0, 5, 7, 8, 30])),
                rng.randint(-128, 127),
                rng.randint(-32768, 32767),
                rng.uniform(-1e6, 1e6),
            )
        )
    schema = (
        "i int, l bigint, s string, d decimal(10,2), big decimal(38,6), day date, ts timestamp, b boolean, "
        "bin binary, t tinyint, sm smallint, x double"
    )
    df = spark.createDataFrame([(k, *row) for k, row in enumerate(rows)], "k int, " + schema)
    columns = df.columns[1:]
    types = ["INT", "BIGINT", "STRING", "DECIMAL(10,2)", "DECIMAL(38,6)", "DATE", "TIMESTAMP_LTZ(6)", "BOOLEAN",
             "VARBINARY", "TINYINT", "SMALLINT", "DOUBLE"]
    got = df.select("k", ibf.key_hash(*columns).alias("h"), ibf.key_hash("s", "i").alias("h2")).collect()
    assert len(got) == len(rows)
    for r in got:
        values = list(rows[r["k"]])
        values[5] = (values[5] - dt.date(1970, 1, 1)).days
        values[6] = _timestamp(values[6])
        assert r["h"] == key_hash(values, types), values
        assert r["h2"] == key_hash([values[2], values[0]], ["STRING", "INT"])


def test_build_hash_index_writes_paimon_files(spark, tmp_path: Path):
    df = spark.range(20000).select(F.col("id"), (F.col("id") % 3).cast("int").alias("bucket"))
    directory = tmp_path / "hash"
    files = ibf.build_hash_index(df, ["id"], str(directory), group_cols=["bucket"]).collect()
    assert sorted(r["bucket"] for r in files) == [0, 1, 2]
    expected = defaultdict(set)
    for i in range(20000):
        expected[i % 3].add(key_hash([i], ["BIGINT"]))
    for r in files:
        data = (directory / r["index_file"]).read_bytes()
        assert r["file_size"] == len(data) and r["row_count"] == len(expected[r["bucket"]])
        assert set(decode_hash_index(data).tolist()) == expected[r["bucket"]]
        assert data == encode_hash_index(sorted(expected[r["bucket"]]), order="paimon")
