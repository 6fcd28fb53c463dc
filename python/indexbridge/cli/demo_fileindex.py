"""The demo's Paimon file-index section: build a file-index container per Parquet data file of
the demo's table (bloom filter on `customer`, bitmap on `amount`, BSI on `id`, the order id),
then answer queries by reading
only the data files the indexes do not skip, and of those only the candidate rows; each answer
is checked against a full-scan filter.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from indexbridge.cli.demo_table import with_data_file_columns

QUERIES = [
    "customer = 'customer-42'",
    "customer = 'nobody'",
    "amount = 7 AND id < 50000",
    "id BETWEEN 1000 AND 1100",
    "amount IN (1, 2) AND customer <> 'nobody' OR customer = 'customer-4999' AND id > 100000",
]


def run(spark, data, table: Path, work: Path, rows_per_file: int, check: Callable[[str, bool], str]) -> None:
    """`data` has the table's columns plus `file` (relative to `table`) and `pos` (row index)."""
    from pyspark.sql import functions as F

    from indexbridge.spark import functions as ibf

    t0 = time.perf_counter()
    options = {
        "file-index.bloom-filter.columns": "customer",
        "file-index.bloom-filter.customer.items": str(max(1000, min(rows_per_file, 5000))),
        "file-index.bloom-filter.customer.fpp": "0.01",
        "file-index.bitmap.columns": "amount",
        "file-index.bsi.columns": "id",
    }
    directory = work / "index" / "file-index"
    indexes = ibf.build_file_indexes(data, options=options, directory=str(directory)).cache()
    summary = indexes.agg(F.count("*").alias("n"), F.sum("size").alias("bytes"), F.count("index_file").alias("written")).first()
    print(
        f"file indexes: {summary['n']} containers, {summary['bytes']} bytes "
        f"({summary['written']} written as <data-file>.index, {summary['n'] - summary['written']} embedded); "
        f"{time.perf_counter() - t0:.1f} s"
    )

    schema = data.schema
    total_files = summary["n"]
    for i, query in enumerate(QUERIES):
        t0 = time.perf_counter()
        engine = "arrow" if i == len(QUERIES) - 1 else "jvm"
        pruned = ibf.prune_files(indexes, query, schema, engine=engine).cache()
        # one small row per data file: its name, whether it is skipped, how many rows remain
        files = pruned.select("file", "skipped", "candidates").collect()
        kept_files = [r["file"] for r in files if not r["skipped"]]
        if kept_files:
            # read only the data files left, then only their candidate rows
            scanned = with_data_file_columns(spark.read.parquet(*[str(table / f) for f in kept_files]), table)
            scanned = scanned.withColumn("id", F.col("order_id"))
            candidates = ibf.apply_pruning(scanned, pruned).cache()
            n_candidates = candidates.count()
            answer = sorted(r["id"] for r in candidates.where(query).select("id").collect())
            candidates.unpersist()
        else:
            n_candidates, answer = 0, []
        # the queries select few rows: their ids are compared on the driver
        expected = sorted(r["id"] for r in data.where(query).select("id").collect())
        n_answer, same = len(answer), answer == expected
        print(
            f"  [{engine}] {query}: {total_files - len(kept_files)}/{total_files} files skipped, "
            f"{n_candidates} candidate rows read, {n_answer} rows ({check(f'file index: {query}', same)}); "
            f"{time.perf_counter() - t0:.1f} s"
        )
        pruned.unpersist()
    indexes.unpersist()
