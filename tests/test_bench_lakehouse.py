"""`indexbridge bench dv` (and `--lakehouse-only`) runs end to end on a small input: every row
prints its ratio and the goal's verdict, and the generated deletion files convert
to Puffin and Delta files whose DVs are the generated ones. The timings are not checked (a
benchmark, DESIGN rule 7)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from indexbridge.cli import main
from indexbridge.cli.bench_lakehouse import generate
from indexbridge.delta.bridge import deletion_file_to_delta
from indexbridge.delta.dv import read_deletion_vector
from indexbridge.iceberg import puffin
from indexbridge.iceberg.bridge import deletion_file_to_puffin
from indexbridge.paimon.dv import DeletionVectorRange, read_deletion_vectors

CLI = str(Path(sys.executable).parent / "indexbridge")


def test_bench_lakehouse_smoke(capsys) -> None:
    assert main(["bench", "dv", "--lakehouse-only", "--files", "150", "--positions", "30000", "--rounds", "1"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("lakehouse: Paimon DVs")]
    assert len(lines) == 2
    assert all(re.search(r"ratio +\d+\.\d\d +\(goal <= 1\.2: (met|not met)\)$", line) for line in lines), lines


def test_bench_dv_smoke() -> None:
    """The whole of `bench dv` on a small input: the Spark comparison rows, the scale line and its
    memory lines (both plans), the Scala and Python codec rows, the lakehouse rows. In a process
    of its own, as a user runs it: its Spark sessions must not become this test process's (the
    first session of a process fixes the driver's classpath)."""
    done = subprocess.run([CLI, "bench", "dv", "--files", "20", "--positions", "40000", "--rounds", "1"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout.splitlines()
    starts = ("spark: ib_dv_agg", "spark scale: ib_dv_agg", "spark scale memory,", "scala: ", "python CPU: ", "python floor: ", "lakehouse: Paimon DVs")
    counts = {start: sum(line.startswith(start) for line in out) for start in starts}
    assert counts == {"spark: ib_dv_agg": 3, "spark scale: ib_dv_agg": 1, "spark scale memory,": 2, "scala: ": 6, "python CPU: ": 5,
                      "python floor: ": 2, "lakehouse: Paimon DVs": 2}, "\n".join(out)  # fmt: skip
    rows = [line for line in out if line.startswith(("spark: ", "scala: ", "python CPU: ", "python floor: ")) and " vs " in line]
    assert len(rows) == 16
    assert all(re.search(r"ratio +\d+\.\d\d +(goal .*: (met|NOT MET)|informational)$", line) for line in rows), "\n".join(rows)


def test_bench_input_converts(tmp_path) -> None:
    files = generate(tmp_path / "paimon", 150, 30000)
    assert len(files) == 2 and sum(len(f.dvs) for f in files) == 150
    for f in files:
        dvs = read_deletion_vectors(f.path, [DeletionVectorRange(d.data_file, d.offset, d.length, d.cardinality) for d in f.dvs])
        for name, delete_file in deletion_file_to_puffin(f, tmp_path / "iceberg"):
            data = open(delete_file.file_path, "rb").read()
            assert puffin.read_deletion_vector(data, delete_file.content_offset, delete_file.content_size_in_bytes) == dvs[name]
        for name, descriptor in deletion_file_to_delta(f, tmp_path / "delta"):
            assert read_deletion_vector(descriptor, tmp_path / "delta") == dvs[name]
