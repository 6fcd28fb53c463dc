"""`indexbridge bench table-write`: the Paimon write jobs on a real table (Paimon 1.4.2's own
writer made it: ``--rows`` orders in an append table with deletion vectors,
``io.indexbridge.reference.PaimonWriteReference bench-table``) against baselines measured in the
same run (DESIGN rule 7). No number here is asserted; every job's result is checked.

* Rewriting file indexes (bloom filter on ``customer``, bitmap on ``status``, BSI on ``amount``):
  ``rewrite_paimon_file_indexes`` (Spark tasks + commit) against Paimon's own index writer
  (``FileIndexProcessor`` over the same files, one JVM): goal ours <= 1.0x its time.
* Deleting 1% of the rows: ``delete_paimon_rows`` against reading the table once
  (``read_paimon`` into the ``noop`` sink): goal <= 1.5x.
* Bulk load of ``--rows`` rows into a new dynamic-bucket table: ``load_paimon_table`` against
  ``df.write.parquet`` of the same DataFrame: goal <= 2x.

The table is written once per ``--rows`` under ``--warehouse`` (default: the temp dir) and
reused; each job runs on a fresh copy of it.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

INDEX_OPTIONS = {"file-index.bloom-filter.columns": "customer", "file-index.bitmap.columns": "status", "file-index.bsi.columns": "amount"}


def _reference(*args: str) -> dict:
    from indexbridge.jvm import run_reference

    out = Path(tempfile.mkstemp(suffix=".json")[1])
    options = [f"{k}={v}" for k, v in INDEX_OPTIONS.items()] if args[0] == "bench-rewrite" else []
    run_reference(*args, str(out), *options, main="PaimonWriteReference", long_running=True)
    return json.loads(out.read_text())


def _copy(path: str, name: str) -> str:
    target = Path(path).parent / name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(path, target)
    return str(target)


def _timed(fn):
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def _ratio(label: str, ours: float, baseline_label: str, baseline: float, goal: float, note: str = "") -> None:
    ratio = ours / baseline
    print(f"{label:<28} {ours:8.2f} s   vs {baseline_label:<36} {baseline:8.2f} s   ratio {ratio:5.2f}x "
          f"(goal <= {goal}x, {'met' if ratio <= goal else 'not met'}){note}")  # fmt: skip


def run(args) -> int:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from indexbridge.spark import configure
    from indexbridge.spark.paimon import delete_paimon_rows, load_paimon_table, read_paimon, rewrite_paimon_file_indexes

    warehouse = Path(args.warehouse or Path(tempfile.gettempdir()) / f"indexbridge-bench-table-write-{args.rows}")
    made = _reference("bench-table", str(warehouse), str(args.rows))
    table = made["path"]
    print(f"table: {args.rows} orders, append, deletion vectors, Paimon's batch writer, under {warehouse} ({made['seconds']:.0f} s to make)")
    spark = (
        configure(SparkSession.builder.master("local[2]").appName("indexbridge-bench-table-write"))
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", os.environ.get("SPARK_DRIVER_MEMORY", "4g"))
        .config("spark.sql.shuffle.partitions", "8")
        .getOrCreate()
    )  # fmt: skip
    spark.sparkContext.setLogLevel("ERROR")
    try:
        # 1. file indexes
        paimon_seconds = _reference("bench-rewrite", _copy(table, "bench_rewrite_paimon"))["seconds"]
        ours_path = _copy(table, "bench_rewrite_ours")
        seconds, summary = _timed(lambda: rewrite_paimon_file_indexes(spark, ours_path, INDEX_OPTIONS))
        _ratio("rewrite file indexes", seconds, "Paimon FileIndexProcessor (1 JVM)", paimon_seconds, 1.0,
               f"  {summary['data_files']} files: {summary['embedded']} embedded, {summary['index_files']} .index")  # fmt: skip

        # 2. delete 1%
        read_seconds, _ = _timed(lambda: read_paimon(spark, table).write.format("noop").mode("overwrite").save())
        delete_path = _copy(table, "bench_delete")
        seconds, summary = _timed(lambda: delete_paimon_rows(spark, delete_path, "id % 100 = 7"))
        left = read_paimon(spark, delete_path).count()
        check = "same count" if left == args.rows - summary["deleted_rows"] and summary["deleted_rows"] == args.rows // 100 else "MISMATCH"
        _ratio("delete 1% of the rows", seconds, "read_paimon once (noop sink)", read_seconds, 1.5,
               f"  {summary['deleted_rows']} rows deleted, {left} left ({check})")  # fmt: skip

        # 3. bulk load
        df = spark.range(args.rows).select(
            F.col("id"), F.concat(F.lit("customer-"), (F.col("id") * 7919 % 100000).cast("string")).alias("customer"),
            (F.col("id") * 31 % 1000).cast("int").alias("amount"), F.element_at(F.array(*[F.lit(s) for s in ("NEW", "PAID", "SHIPPED", "RETURNED")]),
            (F.col("id") % 4 + 1).cast("int")).alias("status"), F.concat(F.lit("note "), F.col("id").cast("string")).alias("note"))  # fmt: skip
        parquet_dir = warehouse / "bench_parquet"
        parquet_seconds, _ = _timed(lambda: df.write.mode("overwrite").parquet(str(parquet_dir)))
        load_path = warehouse / "db.db" / "bench_load"
        shutil.rmtree(load_path, ignore_errors=True)
        seconds, summary = _timed(lambda: load_paimon_table(spark, str(load_path), df, primary_key=["id"]))
        _ratio("bulk load (dynamic bucket)", seconds, "df.write.parquet", parquet_seconds, 2.0,
               f"  {summary['rows']} rows, {summary['buckets']} buckets, {summary['data_files']} files")  # fmt: skip
    finally:
        spark.stop()
    return 0
