"""Faults inside Spark jobs on local-cluster: damaged inputs on every read path, failing and
duplicated tasks on every write path, bad zap merge deletes (``spark_faults_cases.py``, run in a
process of its own since it needs its own SparkContext)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CASES = Path(__file__).with_name("spark_faults_cases.py")


def test_faults_inside_spark_on_local_cluster():
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", str(CASES)],
                          cwd=CASES.parent.parent, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " skipped" not in done.stdout, done.stdout[-2000:]
