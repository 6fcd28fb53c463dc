"""indexbridge on `local-cluster`: separate executor JVMs and Python workers, so the jar has to
ship through `spark.jars` and the workers have to find pyarrow/pyroaring."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    from pyspark.sql import SparkSession, functions as F
    from indexbridge.paimon.dv import DeletionVector
    from indexbridge.spark import configure, functions as ibf

    builder = SparkSession.builder.master("local-cluster[2,1,1024]").appName("indexbridge-local-cluster")
    spark = configure(builder).config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4").getOrCreate()
    rows = spark.range(40000).select((F.col("id") % 5).cast("string").alias("file"), (F.col("id") * 3).alias("pos"), "id")
    deletes = rows.filter(F.col("id") % 11 == 0)
    dvs = ibf.build_deletion_vectors(deletes).cache()
    frames = {r["file"]: bytes(r["dv"]) for r in dvs.collect()}
    for file, frame in frames.items():
        expected = sorted(i * 3 for i in range(40000) if i % 5 == int(file) and i % 11 == 0)
        assert frame == DeletionVector.from_positions(expected).serialize(), file
    kept = ibf.apply_deletion_vectors(rows, dvs)
    assert kept.count() == 40000 - deletes.count()
    executors = spark.sparkContext._jsc.sc().getExecutorIds().size()  # after the jobs: all registered
    hashes = rows.select(ibf.key_hash("id").alias("h")).agg(F.countDistinct("h")).first()[0]
    print(f"executors={executors} kept={kept.count()} hashes={hashes}")
    spark.stop()
    """
)


def test_local_cluster_runs_jvm_functions_and_arrow_kernels():
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "executors=2 kept=" in result.stdout, result.stdout
