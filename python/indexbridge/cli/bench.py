"""`indexbridge bench dv`: deletion-vector speed, as ratios against baselines measured in the
same run (DESIGN rule 7). Timings are the best of a few rounds; no number here is asserted.

* Spark: `ib_dv_agg` (JVM aggregate) against `groupBy(file).count()` and against Spark's
  `bitmap_construct_agg` over the same positions.
* Scala codec against raw RoaringBitmap and against Paimon's own `BitmapDeletionVector`
  (inside the JVM, through `io.indexbridge.bench.DvBench`).
* Python codec against raw pyroaring.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

# Paimon's own classes, the Scala codec's baseline; scripts/bootstrap.sh fetches the jar with Maven.
PAIMON_BUNDLE = Path.home() / ".m2/repository/org/apache/paimon/paimon-bundle/1.4.2/paimon-bundle-1.4.2.jar"


def best_time(fn: Callable[[], object], rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _line(label: str, ours: float, baseline_label: str, baseline: float, target: str) -> None:
    print(f"{label:<44} {ours * 1000:9.1f} ms   vs {baseline_label:<34} {baseline * 1000:9.1f} ms   ratio {ours / baseline:5.2f}   ({target})")


def file_positions(files: int, per_file: int, seed: int = 7) -> list[np.ndarray]:
    """Sorted distinct positions per data file: half dense runs, half scattered."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(files):
        if i % 2:
            start = int(rng.integers(0, 1_000_000))
            out.append(np.arange(start, start + per_file, dtype=np.uint64))
        else:
            out.append(np.unique(rng.integers(0, 4 * per_file, size=per_file, dtype=np.uint64)))
    return out


def bench_python(files: int, per_file: int) -> None:
    from pyroaring import BitMap

    from indexbridge.paimon.dv import DeletionVector

    sets = file_positions(files, per_file)

    def raw_serialize() -> list[bytes]:
        out = []
        for s in sets:
            bm = BitMap(s)
            bm.run_optimize()
            out.append(bm.serialize())
        return out

    def ours_serialize() -> list[bytes]:
        return [DeletionVector.from_positions(s).serialize() for s in sets]

    raw_bytes, our_bytes = raw_serialize(), ours_serialize()
    _line("python: build+serialize DeletionVector", best_time(ours_serialize), "raw pyroaring", best_time(raw_serialize), "target <= 1.25")
    raw = best_time(lambda: [BitMap.deserialize(b) for b in raw_bytes])
    for label, verify_crc in (("python: deserialize DeletionVector, CRC checked", True), ("python: deserialize DeletionVector, no CRC", False)):
        ours = best_time(lambda: [DeletionVector.deserialize(b, verify_crc=verify_crc) for b in our_bytes])
        _line(label, ours, "raw pyroaring", raw, "target <= 1.25")


def bench_jvm(files: int, per_file: int) -> None:
    from indexbridge.jvm import jvm

    report = json.loads(jvm().io.indexbridge.bench.DvBench.run(files, per_file, 5))
    for row in report:
        _line(f"scala: {row['label']}", row["ours_s"], row["baseline_label"], row["baseline_s"], row["target"])


def bench_spark(positions: int, files: int) -> None:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from indexbridge.spark import configure
    from indexbridge.spark import functions as ibf

    builder = SparkSession.builder.master("local[2]").appName("indexbridge-bench")
    if PAIMON_BUNDLE.is_file():  # the baseline for the Scala codec rows
        builder.config("spark.driver.extraClassPath", str(PAIMON_BUNDLE))
    spark = configure(builder).config("spark.ui.enabled", "false").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    rows = spark.range(positions).select((F.col("id") % files).alias("file"), (F.col("id") / files).cast("long").alias("pos")).cache()
    rows.count()

    def run(df) -> Callable[[], None]:
        return lambda: df.write.format("noop").mode("overwrite").save()

    count = best_time(run(rows.groupBy("file").count()), 2)
    ours = best_time(run(rows.groupBy("file").agg(ibf.dv_agg("pos").alias("dv"))), 2)
    builtin = best_time(
        run(
            rows.groupBy("file", F.bitmap_bucket_number("pos").alias("b")).agg(
                F.bitmap_construct_agg(F.bitmap_bit_position("pos")).alias("bm")
            )
        ),
        2,
    )
    print(f"spark: {positions} positions over {files} files, local[2]")
    _line("spark: ib_dv_agg", ours, "groupBy(file).count()", count, "target <= 1.5")
    _line("spark: ib_dv_agg", ours, "bitmap_construct_agg", builtin, "target <= 0.33")
    rows.unpersist()


def run(args) -> int:
    per_file = max(1, args.positions // args.files)
    print(f"indexbridge bench dv: {args.positions} positions, {args.files} files")
    bench_spark(args.positions, args.files)
    bench_jvm(args.files, per_file)
    bench_python(args.files, per_file)
    return 0
