"""The class-data archive (AppCDS) of the tests' PySpark drivers: Spark's classes, parsed and
verified once, mapped by every driver the tests start (the sessions of pytest, of the CLI's and
the demo's subprocesses, of the benchmarks' smoke runs: dozens per run). A trivial session and
its first job took 18 CPU-s on the 2-core test machine without it, 7 with it.

``python spark_cds.py`` dumps it (scripts/test.sh, when it is missing or older than the jar): a
session with indexbridge configured runs a few jobs that load the classes the tests use (SQL,
Parquet, Arrow, Python workers, the ``ib_`` functions), and its JVM writes the archive as it
exits (``-XX:ArchiveClassesAtExit``). ``driver_java_options()`` is what conftest.py gives every
driver. The JVM maps the archive only for the classpath it was dumped with (``configure``'s
jar, then Spark's jars) and an unchanged jar; any other driver (the integration session, with
Iceberg's and Delta's jars first; the installed wheel's) silently runs without it, as it does
when the archive is missing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ARCHIVE = Path(__file__).resolve().parent / "target" / "cds" / "pyspark-driver.jsa"
# the C1 compiler only: every JVM of the tests lives minutes at most and does the same work for
# far less CPU on a 2-core machine, where C2's compiler threads take a core (integration Spark
# tests 116 -> 65 s); the parallel collector, without G1's concurrent marking, which the large
# arrays of the tests (humongous to G1) start again and again (integration/test_spark_bleve.py
# and test_spark_lakehouse.py: 222 -> 204 CPU-s); the archive's messages (a classpath it does not
# fit) are not the tests' output
JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseParallelGC"
_BASE = f"{JAVA_OPTIONS} -Xlog:cds=off -Xlog:cds+dynamic=off"


def driver_java_options() -> str:
    return f"{_BASE} -XX:SharedArchiveFile={ARCHIVE}" if ARCHIVE.is_file() else _BASE


def dump() -> None:
    partial = ARCHIVE.with_suffix(".partial")
    partial.parent.mkdir(parents=True, exist_ok=True)
    partial.unlink(missing_ok=True)
    os.environ["PYSPARK_SUBMIT_ARGS"] = f"--driver-java-options '{_BASE} -XX:ArchiveClassesAtExit={partial}' pyspark-shell"
    import tempfile

    from pyspark import SparkContext
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from indexbridge.spark import configure
    from indexbridge.spark import functions as ibf

    spark = configure(SparkSession.builder.master("local[2]").appName("spark-cds").config("spark.ui.enabled", "false")).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    with tempfile.TemporaryDirectory() as work:
        rows = spark.range(0, 5000, 1, 2).select((F.col("id") % 7).alias("file"), F.col("id").cast("int").alias("pos"), F.col("id").cast("string").alias("v"))
        rows.write.parquet(f"{work}/rows")
        back = spark.read.parquet(f"{work}/rows")
        back.groupBy("file").agg(ibf.dv_agg("pos").alias("dv")).select(ibf.dv_cardinality("dv")).collect()
        back.mapInArrow(lambda batches: batches, back.schema).join(back.select("v"), "v").count()
    gateway = SparkContext._gateway
    jvm_process = gateway.proc
    spark.stop()
    gateway.shutdown()
    jvm_process.stdin.close()  # the driver exits on its stdin's end, then writes the archive
    if jvm_process.wait() != 0 or not partial.is_file():
        sys.exit(f"the driver exited {jvm_process.returncode} without writing {partial}")
    partial.replace(ARCHIVE)


if __name__ == "__main__":
    dump()
