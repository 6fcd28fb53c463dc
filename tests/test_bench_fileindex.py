"""`indexbridge bench fileindex` runs end to end on tiny columns: every index of every column is
built and queried by Paimon, Scala and Python, and all three payloads are the same bytes; the
Spark scale line measures both plans at both sizes. The timings and sizes it prints are not
checked (a benchmark, DESIGN rule 7)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CLI = str(Path(sys.executable).parent / "indexbridge")


def test_bench_fileindex_smoke() -> None:
    # in a process of its own, as a user runs it: its Spark session must not become this test
    # process's (the first session of a process fixes the driver's classpath)
    done = subprocess.run([CLI, "bench", "fileindex", "--rows", "3000", "--queries", "10", "--rounds", "1"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout.splitlines()
    spark_scale = [line for line in out if line.startswith(("spark scale sorted (ours):", "spark scale Spark's plan:"))]
    assert len(spark_scale) == 2 and all(line.count(" MiB (") == 2 for line in spark_scale), "\n".join(spark_scale)
    lines = [line for line in out if line.split(" ", 1)[0] in ("unique_long", "low_card_int", "skewed_string")]
    builds = [line for line in lines if " build " in line]
    batches = [line for line in lines if " batch " in line]
    assert len(lines) == 28 and len(builds) == 11
    assert [line.split()[:2] for line in batches] == [[c, "bloom-filter"] for c in ("unique_long", "low_card_int", "skewed_string")]
    assert all(line.endswith("scala=same python=same") for line in builds), "\n".join(builds)
