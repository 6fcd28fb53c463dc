"""`indexbridge paimon rewrite-file-index | delete | load`: what they refuse before starting Spark
(one error line, exit status 2), and that inspect/read/verify keep their arguments."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CLI = str(Path(sys.executable).parent / "indexbridge")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, "paimon", *args], capture_output=True, text=True, timeout=120)


def test_delete_needs_a_condition(tmp_path):
    done = _run("delete", str(tmp_path))
    assert done.returncode == 2 and done.stderr == f"indexbridge: error: {tmp_path}: delete needs --where CONDITION (the rows to delete)\n"


def test_load_needs_data(tmp_path):
    done = _run("load", str(tmp_path / "t"))
    assert done.returncode == 2 and "load needs --from" in done.stderr and done.stdout == ""


def test_write_jobs_need_a_table_directory(tmp_path):
    for args in (("rewrite-file-index", str(tmp_path)), ("delete", str(tmp_path), "--where", "id = 1")):
        done = _run(*args)
        assert done.returncode == 2 and done.stderr == f"indexbridge: error: {tmp_path}: offset 0: a Paimon table directory (with schema/)\n"


def test_bad_option(tmp_path):
    (tmp_path / "schema").mkdir()
    done = _run("rewrite-file-index", str(tmp_path), "--option", "file-index.bloom-filter.columns")
    assert done.returncode == 2 and "expected KEY=VALUE" in done.stderr


def test_read_actions_unchanged(tmp_path):
    done = _run("inspect", str(tmp_path))
    assert done.returncode == 2 and done.stderr.startswith("indexbridge: error:")
