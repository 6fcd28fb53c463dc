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


def _raw(entry: dict, key: str) -> bytes:
    return entry[key].encode("utf-8") if key in entry else bytes.fromhex(entry[f"{key}_hex"])


def _recorded_bytes(value: str | dict) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes.fromhex(value["hex"])


def test_inspect_terms_doc_and_sections_as_the_vectors_record(vectors_dir: Path) -> None:
    from indexbridge.cli.inspect import InspectOptions, describe

    manifest = json.loads((vectors_dir / "zap" / "manifest.json").read_text())
    checked_terms = 0
    for case in manifest["cases"]:
        if not case["json"].endswith(".json"):
            continue  # the compressed record of a large segment: too big for a cheap test
        recorded = json.loads((vectors_dir / "zap" / case["json"]).read_text())["segment"]
        path = str(vectors_dir / "zap" / recorded["file"])
        summary = describe(path, None, InspectOptions(terms=True, doc=0 if recorded["footer"]["num_docs"] else None))
        assert sum(summary["sections"].values()) == summary["file_size"] == recorded["file_size"]
        assert summary["footer"]["doc_value_offset"] == int(recorded["footer"]["doc_value_offset"])
        for field, dictionary in zip(summary["fields"], recorded["dictionaries"]):
            assert field["name"] == dictionary["field"]
            expected = [(_recorded_bytes(t["term"]), len(t["docs"])) for t in dictionary["terms"]]
            assert [(_raw(t, "term"), t["docs"]) for t in field["term_list"]] == expected, (case["case"], field["name"])
            checked_terms += len(expected)
        if recorded["footer"]["num_docs"]:
            stored = [[v["field"], v["type"], _raw(v, "value"), v["array_positions"]] for v in summary["doc"]["stored"]]
            assert stored == [[f, t, _recorded_bytes(v), p] for f, t, v, p in recorded["stored"][0]], case["case"]
    assert checked_terms > 1000


def test_inspect_engines_agree_on_every_zap_segment(vectors_dir: Path, zap_segment_name: str) -> None:
    from indexbridge.cli.inspect import InspectOptions, _describe_jvm, describe

    path = str(vectors_dir / "zap" / f"{zap_segment_name}.zap")
    docs = describe(path, None)["num_docs"]
    for options in (InspectOptions(terms=True, doc=0 if docs else None), InspectOptions(prefix="a", doc=docs - 1 if docs else None)):
        assert _describe_jvm(path, None, options) == describe(path, None, options)


def test_inspect_prefix_and_doc_on_the_command_line(vectors_dir: Path, capsys) -> None:
    path = vectors_dir / "zap" / "docvalues.zap"
    assert main(["inspect", str(path), "--prefix", "ka", "--doc", "3"]) == 0
    text = capsys.readouterr().out
    assert "    4 tag: 59 terms, docvalues\n      ka: 1 docs\n      kaumb: 1 docs\n" in text
    assert "  doc 3:\n    _id (t): dv003\n    plain (t): no docvalues here 3" in text
    for engine in ("python", "jvm"):
        assert main(["inspect", "--engine", engine, str(path), "--doc", "40"]) == 2
        assert capsys.readouterr().err == f"indexbridge: error: {path}: --doc 40: a document number below 40\n"
