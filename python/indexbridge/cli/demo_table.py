"""The demo's Paimon table section: a real table written by Paimon 1.4.2's own Java API, then
inspected, read, queried and verified by indexbridge, every answer checked against Paimon's
own reader.

1. ``io.indexbridge.reference.PaimonTables.orders``: orders of two days (partition ``dt``),
   primary key (``dt``, ``order_id``), deletion vectors, a bloom filter on ``customer``, a
   bitmap on ``status``, a BSI on ``amount``; three commits (insert, update 6%, delete 2%).
   Paimon's own reader answers the reads below (``PaimonAnswers``).
2. The snapshot's plan (``indexbridge paimon inspect``).
3. The live rows, with Python (``FileStoreTable.to_arrow``) and Spark (``read_paimon``): equal
   to Paimon's rows.
4. Conditions: the data files read equal Paimon's, the rows equal Paimon's.
5. ``verify --rebuild``: every file index, deletion file and hash index decoded and re-encoded
   to Paimon's bytes.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

CONDITIONS = [
    "customer = 'customer-42'",
    "order_id = 4242",
    "status = 'RETURNED' AND amount < 10",
    "dt = '2024-05-02' AND amount BETWEEN 990 AND 999",
]


def with_data_file_columns(df, table: Path):
    """``df`` (read from ``table``'s data files) with ``file`` (the data file's path under the
    table, e.g. ``dt=2024-05-01/bucket-3/data-….parquet``), ``bucket`` and ``pos`` (its row index)."""
    from pyspark.sql import functions as F

    path = F.col("_metadata.file_path")
    return df.select(
        "*",
        F.regexp_extract(path, r"([^/]+=[^/]*/)*bucket-[0-9]+/[^/]+$", 0).alias("file"),
        F.regexp_extract(path, r"bucket-([0-9]+)/[^/]+$", 1).cast("int").alias("bucket"),
        F.col("_metadata.row_index").alias("pos"),
    )


def data_files(spark, table: Path):
    """Every row of the table's live data files (each version Paimon wrote, deleted or not):
    ``dt``, ``id`` (the order id), ``amount``, ``customer``, ``file``, ``bucket``, ``pos``."""
    from pyspark.sql import functions as F

    from indexbridge.paimon.table.table import FileStoreTable

    scan = FileStoreTable.open(table).scan
    paths = [str(scan.entry(e, source).path) for e, source in scan.live_entries]
    rows = spark.read.parquet(*paths).select(F.col("order_id").alias("id"), "dt", "amount", "customer")
    return with_data_file_columns(rows, table)


def _multiset(rows: list[dict]) -> Counter:
    return Counter(json.dumps(r, sort_keys=True) for r in rows)


def create(work: Path, rows: int, buckets: int) -> tuple[Path, dict]:
    """The orders table under ``work/warehouse`` and Paimon's answers about it."""
    from indexbridge.jvm import run_reference

    answers = work / "paimon-answers.json"
    run_reference("orders", str(work / "warehouse"), str(rows), str(buckets), str(answers), *CONDITIONS)
    doc = json.loads(answers.read_text())
    return Path(doc["path"]), doc


def run(spark, path: Path, answers: dict, check: Callable[[str, bool], str]) -> None:
    from indexbridge.cli.paimon import describe
    from indexbridge.paimon.table.canonical import rows_json
    from indexbridge.paimon.table.table import FileStoreTable
    from indexbridge.paimon.table.verify import verify
    from indexbridge.spark.paimon import read_paimon

    t0 = time.perf_counter()
    table = FileStoreTable.open(path)
    summary = describe(table, None)
    files = summary["data_files"]
    written = sum(f["row_count"] for f in files)
    deleted = sum(f["deletion_vector"]["cardinality"] for f in files if f["deletion_vector"])
    kinds = Counter(i["index_type"] for i in summary["index_files"])
    indexed = sum(1 for f in files if f["file_index"])
    print(
        f"Paimon table {path} (written by Paimon's Java API): snapshot {summary['snapshot']}, {len(files)} data files, "
        f"{written} rows written, {deleted} deleted by deletion vectors in {kinds['DELETION_VECTORS']} deletion files, "
        f"{indexed} data files with file indexes"
    )

    unfiltered = answers["reads"][0]
    schema = table.schema
    ours = rows_json(table.to_arrow(), schema)
    spark_rows = rows_json(read_paimon(spark, str(path)).toArrow(), schema)
    print(
        f"  read: {len(ours)} live rows with Python ({check('python read = Paimon', _multiset(ours) == _multiset(unfiltered['rows']))}), "
        f"{len(spark_rows)} with Spark ({check('spark read = Paimon', _multiset(spark_rows) == _multiset(unfiltered['rows']))}); "
        f"Paimon's reader: {unfiltered['row_count']}"
    )
    for read in answers["reads"][1:]:
        where = read["where"]
        plan = table.plan(where)
        same_files = sorted(e.file.file_name for e in plan.data_files) == sorted(read["files_read"])
        rows = rows_json(table.to_arrow(where), schema)
        spark_rows = rows_json(read_paimon(spark, str(path), where=where).toArrow(), schema)
        print(
            f"  where {where}: {len(plan.data_files)}/{len(files)} data files read "
            f"({check(f'files read: {where}', same_files)} with Paimon's {len(read['files_read'])}), "
            f"{len(rows)} rows (python {check(f'python: {where}', _multiset(rows) == _multiset(read['rows']))}, "
            f"spark {check(f'spark: {where}', _multiset(spark_rows) == _multiset(read['rows']))})"
        )
    report = verify(table, rebuild=True)
    rebuilt = report.rebuilt["file indexes"] == indexed and report.rebuilt["deletion files"] == report.deletion_files
    print(
        f"  verify --rebuild: {report.rebuilt['file indexes']} file indexes and {report.rebuilt['deletion files']} deletion files "
        f"re-encoded to Paimon's bytes ({check('verify --rebuild', rebuilt)}); {time.perf_counter() - t0:.1f} s"
    )
