"""The README's main job, small."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_demo_job_passes_its_checks(tmp_path: Path):
    cli = Path(sys.executable).parent / "indexbridge"
    result = subprocess.run(
        [str(cli), "demo", "--rows", "10000", "--buckets", "2", "--workdir", str(tmp_path)],
        capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert ", 0 failed" in result.stdout
    assert "(written by Paimon's Java API)" in result.stdout and "with Spark (ok)" in result.stdout
    assert "verify --rebuild" in result.stdout
    assert "DV 32-bit" in result.stdout and "DV 64-bit" in result.stdout and "HASH index" in result.stdout
    assert "file indexes:" in result.stdout and "files skipped" in result.stdout
    assert "zap queries" in result.stdout
    assert "bleve v1.0.14 opens it" in result.stdout and "read_bleve_index" in result.stdout
