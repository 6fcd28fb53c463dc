"""`indexbridge demo`, the main job, on an embedded local Spark: a real Paimon table written by
Paimon's own Java API, read, queried and verified by indexbridge; then Paimon's index files
built, written, read back and applied by Spark over that table's data files.

1. The Paimon table (`indexbridge.cli.demo_table`): Paimon writes an orders table with
   deletion vectors and file indexes; indexbridge plans it, reads it with Python and Spark,
   prunes with conditions and rebuilds its index files, each answer checked against Paimon's
   own reader.
2. Delete some rows of the table's data files: (data file, row position) pairs from Spark's
   `_metadata.row_index`.
3. For 32-bit and 64-bit DVs: aggregate one DV per data file (JVM `ib_dv_agg`), write one
   deletion file per bucket as Paimon's maintainer does, read them back from the recorded
   ranges, and apply them to the data (Arrow kernel); each result is checked against plain
   Spark (the deleted set, and an anti-join).
4. Write one HASH index file per bucket and check it holds every key hash of the bucket.
5. Paimon file indexes per data file, and queries answered from only the files and rows they
   leave (`indexbridge.cli.demo_fileindex`).
6. Index a generated text column into zap segments, merge them and query them (`demo_zap`).
7. Write the orders as a whole bleve index directory, then open and search it with bleve itself
   (Go, v1.0.14 and v2) and with indexbridge (`demo_bleve`).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from indexbridge.cli import demo_bleve, demo_fileindex, demo_table, demo_zap


def _bytes_under(directory: Path) -> tuple[int, int]:
    files = [p for p in directory.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def run(args) -> int:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from indexbridge.paimon.bucket import decode_hash_index
    from indexbridge.spark import configure
    from indexbridge.spark import functions as ibf

    started = time.perf_counter()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="indexbridge-demo-")).resolve()
    checks: list[tuple[str, bool]] = []

    def check(label: str, ok: bool) -> str:
        checks.append((label, ok))
        return "ok" if ok else "MISMATCH"

    table, answers = demo_table.create(work, args.rows, args.buckets)
    builder = SparkSession.builder.master(args.master).appName("indexbridge-demo")
    spark = configure(builder).config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "8").config("spark.ui.showConsoleProgress", "false").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    print(f"indexbridge demo on {args.master}, under {work}")
    demo_table.run(spark, table, answers, check)

    # The table's data files, row by row (every version Paimon wrote, as the index files see them)
    data = demo_table.data_files(spark, table).cache()
    n_rows = data.count()
    n_files = data.select("file").distinct().count()
    print(f"index files over the table's data files: {n_rows} rows in {n_files} Parquet data files, {args.buckets} buckets")

    deletes = data.filter((F.col("id") % 10 == 3) | (F.col("id") % 97 == 0)).select("dt", "bucket", "file", "pos").cache()
    n_deleted = deletes.count()
    expected_kept = data.join(deletes, ["file", "pos"], "left_anti").select("id")
    print(f"deleting {n_deleted} rows")

    for bitmap64 in (False, True):
        width = "64-bit" if bitmap64 else "32-bit"
        t0 = time.perf_counter()
        dvs = ibf.build_deletion_vectors(deletes, group_cols=["dt", "bucket"], bitmap64=bitmap64).cache()
        cardinality = dvs.agg(F.sum(ibf.dv_cardinality("dv"))).first()[0]
        directory = work / "index" / f"dv{64 if bitmap64 else 32}"
        ranges = ibf.write_deletion_files(dvs, str(directory), group_cols=["dt", "bucket"]).cache()
        ranges.write.mode("overwrite").json(str(work / "manifest" / f"dv{64 if bitmap64 else 32}"))
        n_index_files, n_bytes = _bytes_under(directory)

        back = ibf.read_deletion_files(ranges, str(directory)).withColumnRenamed("data_file", "file")
        same_positions = (
            back.count() == n_deleted
            and back.exceptAll(deletes.select("file", "pos")).isEmpty()
        )
        kept = ibf.apply_deletion_vectors(data, dvs.select("file", "dv"))
        n_kept = kept.count()
        same_rows = n_kept == n_rows - n_deleted and kept.select("id").exceptAll(expected_kept).isEmpty()
        probe = deletes.limit(100).join(dvs.select("file", "dv"), "file")
        contains_ok = probe.filter(~ibf.dv_contains("dv", "pos")).isEmpty()
        print(
            f"DV {width}: {dvs.count()} vectors, {cardinality} positions ({check(f'{width} cardinality', cardinality == n_deleted)}); "
            f"{n_index_files} deletion files, {n_bytes} bytes; "
            f"read back ({check(f'{width} read back', same_positions)}); "
            f"ib_dv_contains ({check(f'{width} contains', contains_ok)}); "
            f"applied: {n_kept} rows kept ({check(f'{width} applied', same_rows)}); "
            f"{time.perf_counter() - t0:.1f} s"
        )
        dvs.unpersist()

    t0 = time.perf_counter()
    hash_dir = work / "index" / "hash"
    hash_files = ibf.build_hash_index(data.select("dt", "bucket", "id"), ["id"], str(hash_dir), group_cols=["dt", "bucket"])
    written = hash_files.orderBy("dt", "bucket").collect()  # one small row per partition and bucket
    expected = {
        (r["dt"], r["bucket"]): r["n"]
        for r in data.groupBy("dt", "bucket").agg(F.countDistinct(ibf.key_hash("id")).alias("n")).collect()
    }
    hashes_ok = all(
        r["row_count"] == expected[(r["dt"], r["bucket"])]
        and len(decode_hash_index((hash_dir / r["index_file"]).read_bytes(), source=r["index_file"])) == r["row_count"]
        for r in written
    )
    _, n_bytes = _bytes_under(hash_dir)
    print(
        f"HASH index: {len(written)} files, {n_bytes} bytes, {sum(r['row_count'] for r in written)} key hashes "
        f"({check('hash index', hashes_ok)}); {time.perf_counter() - t0:.1f} s"
    )

    demo_fileindex.run(spark, data, table, work, n_rows // max(1, n_files), check)
    demo_zap.run(spark, data, work, check)
    demo_bleve.run(spark, data, work, check)

    failed = [label for label, ok in checks if not ok]
    print(f"done in {time.perf_counter() - started:.1f} s: {len(checks) - len(failed)} checks passed, {len(failed)} failed")
    spark.stop()
    return 1 if failed else 0
