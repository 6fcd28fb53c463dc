"""The Scala job run by `spark-submit` against the jar; Python reads what it wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import depth
import pyspark
import pytest
import spark_cds

from indexbridge.jvm import jar_path
from indexbridge.paimon.dv import DeletionVectorRange, read_deletion_vectors


@pytest.mark.parametrize("bitmap64", depth.sample([False, True], 0.5, "spark-submit"))  # both when deep
def test_scala_job_writes_deletion_files_python_reads(tmp_path: Path, bitmap64: bool):
    spark_submit = Path(sys.executable).parent / "spark-submit"
    rows = 50_000
    result = subprocess.run(
        [
            str(spark_submit),
            "--master", "local[2]",
            "--conf", "spark.ui.enabled=false",
            "--driver-java-options", spark_cds.JAVA_OPTIONS,  # as the other test JVMs (conftest.py)
            "--class", "io.indexbridge.examples.DeletionVectorsJob",
            str(jar_path()),
            str(tmp_path), str(rows), str(bitmap64).lower(),
        ],
        capture_output=True, text=True, timeout=600,
        # spark-submit locates Spark through SPARK_HOME (its own lookup runs the system Python)
        env={**os.environ, "SPARK_HOME": str(Path(pyspark.__file__).parent)},
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert "indexbridge DeletionVectorsJob" in result.stdout

    expected = defaultdict(set)
    for i in range(0, rows, 7):
        expected[f"data-{i % 16}.parquet"].add(i // 16)
    manifest = [json.loads(line) for p in (tmp_path / "manifest").glob("part-*.json") for line in p.read_text().splitlines()]
    assert sorted(r["data_file"] for r in manifest) == sorted(expected)
    for r in manifest:
        rng = DeletionVectorRange(r["data_file"], r["offset"], r["length"], r["cardinality"])
        dv = read_deletion_vectors(tmp_path / "index" / r["index_file"], [rng])[r["data_file"]]
        assert dv.bitmap64 is bitmap64
        assert set(dv.positions().tolist()) == expected[r["data_file"]]
        assert dv.cardinality == r["cardinality"]
