"""`indexbridge inspect` on zap segments: recognised by the footer, summarised, bad files reported."""

from __future__ import annotations

import json
from pathlib import Path

from indexbridge.cli import main


def test_inspect_recognises_a_zap_segment(vectors_dir: Path, capsys) -> None:
    assert main(["inspect", "--json", str(vectors_dir / "zap" / "docvalues.zap")]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["format"] == "zap" and summary["num_docs"] == 40 and summary["chunk_factor"] == 1024
    assert [(f["name"], f["terms"], f["docvalues"]) for f in summary["fields"]][:2] == [("_id", 40, False), ("kw", 15, True)]


def test_inspect_reports_a_truncated_segment(vectors_dir: Path, tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.zap"
    bad.write_bytes((vectors_dir / "zap" / "one_doc.zap").read_bytes()[:300])
    assert main(["inspect", "--format", "zap", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"indexbridge: error: {bad}: offset ") and "version 11" in err
