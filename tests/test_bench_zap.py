"""`indexbridge bench zap` runs end to end on a small corpus: Go (integration/zapgo, built by the
bootstrap), Scala and Python time the same workloads, see the same terms and postings, and every
row prints its ratio and the goal's verdict (or is informational). The timings are not checked
(a benchmark, DESIGN rule 7)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

CLI = str(Path(sys.executable).parent / "indexbridge")


def test_bench_zap_smoke() -> None:
    """In a process of its own, as a user runs it (its JVM is started with the bench's heap)."""
    done = subprocess.run([CLI, "bench", "zap", "--docs", "60", "--rounds", "1"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout.splitlines()
    rows = [line for line in out if line.startswith(("scala: ", "python: ", "python floor: ")) and " vs " in line]
    assert [line.split(":")[0] for line in rows] == ["scala"] * 4 + ["python"] * 4 + ["python floor"] + ["python"] * 2, "\n".join(out)
    assert all(re.search(r"ratio +\d+\.\d\d +(goal .*: (met|NOT MET)|informational)$", line) for line in rows), "\n".join(rows)
    assert sum(line.startswith(("go ", "scala ", "python ")) and "docs/s" in line for line in out) == 3, "\n".join(out)


def test_bench_zap_scale_names_a_size_beyond_the_memory_and_skips_it(capsys) -> None:
    """A corpus whose analysed documents could not fit is not started (a billion documents would
    need 61 TiB), and the line says why."""
    from indexbridge.cli.bench import bench_zap_scale

    bench_zap_scale([10**9])
    out = capsys.readouterr().out
    assert re.search(r"^python zap scale 1000000000 docs   not run: needs about \d+ GiB \(64 KB a document\), \d+ GiB available", out), out
