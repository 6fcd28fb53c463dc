"""`indexbridge bench table`: reading a real Paimon table (Paimon 1.4.2's own writer: the
``orders`` table of ``io.indexbridge.reference.PaimonTables``, ``--rows`` orders, 8 buckets,
deletion vectors hiding ~8% of the rows written) against baselines measured in the same run
(DESIGN rule 7). No number here is asserted.

* Python: ``FileStoreTable.to_arrow()`` against ``pyarrow.parquet.read_table`` of the same data
  files (which returns the deleted rows too): goal ours >= 0.8x its throughput (rows/s of the
  files read).
* Spark: ``read_paimon`` against ``spark.read.parquet`` of the same files, both written to the
  ``noop`` sink: goal >= 0.8x.
* Pruning: for selective conditions, the data files read, ours against Paimon's own reader
  (goal: not more).
* ``--peers``: pypaimon 2.1 (its Python reader, and its Rust reader pypaimon-rust 0.4), installed
  into ``.venv-peers`` (they pin pyarrow < 20), read the same table in a subprocess.

The table is written once per ``--rows`` under ``--warehouse`` (default: the system's temporary
directory) and reused by later runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from indexbridge.cli.bench import best_time

CONDITIONS = ["customer = 'customer-42'", "order_id = 4242", "status = 'RETURNED' AND amount < 10"]
BUCKETS = 8
PEERS = ["pypaimon==2.1.0", "pypaimon-rust==0.4.0"]

_PEER_SCRIPT = """
import json, sys, time, warnings
warnings.filterwarnings("ignore")
from pypaimon.catalog.catalog_factory import CatalogFactory
warehouse, rounds = sys.argv[1], int(sys.argv[2])
out = {}
for name, options in (("pypaimon", {}), ("pypaimon-rust", {"read.native.enabled": "true"})):
    best, rows, error = None, None, None
    try:
        table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.orders")
        if options:
            table = table.copy(options)
        for _ in range(rounds):
            t0 = time.perf_counter()
            rb = table.new_read_builder()
            rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows
            best = min(best or 1e9, time.perf_counter() - t0)
    except Exception as e:
        error = f"{type(e).__name__}: {e}"[:300]
    out[name] = {"seconds": best, "rows": rows, "error": error}
print(json.dumps(out))
"""


def _table(args) -> tuple[Path, dict]:
    from indexbridge.jvm import run_reference

    warehouse = Path(args.warehouse or Path(tempfile.gettempdir()) / f"indexbridge-bench-table-{args.rows}")
    answers = warehouse / "answers.json"
    t0 = time.perf_counter()
    run_reference("orders", str(warehouse), str(args.rows), str(BUCKETS), str(answers), *CONDITIONS, long_running=True)
    print(f"table: {args.rows} orders, {BUCKETS} buckets, deletion vectors, under {warehouse} ({time.perf_counter() - t0:.0f} s, Paimon's answers included)")
    return warehouse, json.loads(answers.read_text())


def _peers(warehouse: Path, rounds: int) -> dict:
    venv = Path.cwd() / ".venv-peers"
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", *PEERS], check=True)
    done = subprocess.run([str(venv / "bin" / "python"), "-c", _PEER_SCRIPT, str(warehouse), str(rounds)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(args) -> int:
    from indexbridge.paimon.table.table import FileStoreTable

    warehouse, answers = _table(args)
    table = FileStoreTable.open(answers["path"])
    plan = table.plan()
    files = [str(e.path) for e in plan.data_files]
    written = sum(e.file.row_count for e in plan.data_files)
    deleted = sum(e.deletion_file.cardinality or 0 for e in plan.data_files if e.deletion_file)
    live = answers["reads"][0]["row_count"]
    print(f"snapshot {table.snapshot.id}: {len(files)} data files, {written} rows written, {deleted} deleted by deletion vectors ({deleted / written:.1%}), {live} live")

    rows = {}

    def ours() -> None:
        rows["ours"] = FileStoreTable.open(answers["path"]).to_arrow().num_rows

    def read_table() -> None:
        rows["pyarrow"] = pa.concat_tables([pq.read_table(f) for f in files]).num_rows

    def parquet_file() -> None:
        rows["pyarrow"] = pa.concat_tables([pq.ParquetFile(f).read() for f in files]).num_rows

    t_base, t_file, t_ours = best_time(read_table, args.rounds), best_time(parquet_file, args.rounds), best_time(ours, args.rounds)
    check = "same row count as Paimon" if rows["ours"] == live else f"MISMATCH: Paimon reads {live}"
    print(f"python  pyarrow.parquet.read_table {t_base:7.2f} s  {written / t_base / 1e6:6.2f} M rows/s of files")
    print(f"        pyarrow ParquetFile.read   {t_file:7.2f} s  {written / t_file / 1e6:6.2f} M rows/s of files  (a second baseline: no dataset layer)")
    print(f"        FileStoreTable.to_arrow    {t_ours:7.2f} s  {written / t_ours / 1e6:6.2f} M rows/s of files  "
          f"ratio {t_base / t_ours:.2f}x (goal >= 0.8; {t_file / t_ours:.2f}x against ParquetFile.read)  {rows['ours']} rows, {check}")  # fmt: skip

    _spark(args, answers, files, written, live)

    for read in answers["reads"][1:]:
        where = read["where"]
        ours_files = sorted(e.file.file_name for e in table.plan(where).data_files)
        t = best_time(lambda: FileStoreTable.open(answers["path"]).to_arrow(where), args.rounds)
        n = FileStoreTable.open(answers["path"]).to_arrow(where).num_rows
        verdict = "same files" if ours_files == sorted(read["files_read"]) else "DIFFERENT files"
        print(f"pruning {where!r}: files read ours {len(ours_files)} / Paimon {len(read['files_read'])} of {len(files)} ({verdict}); "
              f"{n} rows ({'same' if n == read['row_count'] else 'MISMATCH'}), python {t:.2f} s")  # fmt: skip

    if args.peers:
        for name, r in _peers(warehouse, args.rounds).items():
            if r["error"]:
                print(f"peer    {name:28s} failed: {r['error']}")
            else:
                print(f"peer    {name:28s} {r['seconds']:7.2f} s  {r['rows']} rows ({'same' if r['rows'] == live else 'MISMATCH'})  "
                      f"ours is {r['seconds'] / t_ours:.2f}x faster")  # fmt: skip
    return 0


def _spark(args, answers: dict, files: list[str], written: int, live: int) -> None:
    from pyspark.sql import SparkSession

    from indexbridge.spark import configure
    from indexbridge.spark.paimon import read_paimon

    spark = (
        configure(SparkSession.builder.master("local[2]").appName("indexbridge-bench-table"))
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", os.environ.get("SPARK_DRIVER_MEMORY", "4g"))
        .getOrCreate()
    )  # fmt: skip
    spark.sparkContext.setLogLevel("ERROR")
    counts = {}

    def parquet() -> None:
        spark.read.parquet(*files).write.format("noop").mode("overwrite").save()

    def ours() -> None:
        df = read_paimon(spark, answers["path"])
        df.write.format("noop").mode("overwrite").save()

    t_base, t_ours = best_time(parquet, args.rounds), best_time(ours, args.rounds)
    counts["ours"] = read_paimon(spark, answers["path"]).count()
    check = "same row count as Paimon" if counts["ours"] == live else f"MISMATCH: Paimon reads {live}"
    print(f"spark   spark.read.parquet         {t_base:7.2f} s  {written / t_base / 1e6:6.2f} M rows/s of files")
    print(f"        read_paimon                {t_ours:7.2f} s  {written / t_ours / 1e6:6.2f} M rows/s of files  "
          f"ratio {t_base / t_ours:.2f}x (goal >= 0.8)  {counts['ours']} rows, {check}")  # fmt: skip
    spark.stop()
