"""`indexbridge bench bleve` runs end to end on a few hundred documents: bleve itself (Go,
integration/boltgo, built by the bootstrap) and both Spark engines build the same index, every
query kind is timed on each side with the same totals, and `--scale` prints a line per size with
its growth. The timings are not checked (a benchmark, DESIGN rule 7)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from indexbridge.cli.bench_bleve import QUERIES

CLI = str(Path(sys.executable).parent / "indexbridge")


def test_bench_bleve_smoke() -> None:
    """In a process of its own, as a user runs it (the bench starts its own Spark session)."""
    done = subprocess.run([CLI, "bench", "bleve", "--docs", "600", "--rounds", "1"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout.splitlines()
    builds = [line for line in out if line.startswith("build   ")]
    assert len(builds) == 3 and "(Go)" in builds[0], "\n".join(out)
    assert all(re.search(r"ratio +\d+\.\d\d x Go \(goal <= \d\.\d: (met|not met)\)$", line) for line in builds[1:]), "\n".join(builds)
    assert any("identical root.bolt and index_meta.json" in line for line in out), "\n".join(out)
    rows = [line for line in out if any(line.startswith(f"        {kind:<14} ") for kind in QUERIES)]
    assert len(rows) == len(QUERIES), "\n".join(out)
    assert not any("TOTALS DIFFER" in line for line in rows), "\n".join(rows)


def test_bench_bleve_scale_smoke() -> None:
    done = subprocess.run([CLI, "bench", "bleve", "--scale", "2000,4000"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("scale   write_bleve_index")]
    assert len(lines) == 2, done.stdout
    assert re.search(r" 2000 docs .* docs/s  heap after GC, peak \+\d+ MiB \(\d+ GCs\)$", lines[0]), lines
    assert re.search(r" 4000 docs .* vs 2000: time per doc x\d+\.\d\d, heap x(\d+\.\d\d|n/a)$", lines[1]), lines
