"""indexbridge on ``local-cluster`` (separate executor JVMs and Python workers):
``local_cluster_cases.py``, run in a process of its own since it needs its own SparkContext (the
other integration tests share a ``local[2]`` one). One local-cluster session holds every case:
the jar ships through ``spark.jars`` and the workers find pyarrow/pyroaring; damaged inputs on
every read path; failing and duplicated tasks on every write path; bad zap merge deletes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CASES = Path(__file__).with_name("local_cluster_cases.py")


def test_jobs_and_faults_on_local_cluster():
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", str(CASES)],
                          cwd=CASES.parent.parent, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " skipped" not in done.stdout, done.stdout[-2000:]
