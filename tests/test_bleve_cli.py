"""`indexbridge bleve build | inspect | read | search` against bleve v1.0.14 (integration/boltgo).

A generated workload goes through the command line: ``build`` writes the index, bleve opens it
and answers the queries; ``read`` must print bleve's stored fields (and ``--out`` the same bytes),
``search --json`` bleve's totals, ids and scores, ``inspect --json`` the segments and counts. A
bleve-built index with deletions reads and searches as bleve answers. Bad input (a malformed
JSON line, a duplicate id, an unsupported mapping, an existing index, a damaged index, an
unsupported query) is one ``indexbridge: error:`` line and exit status 2.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from indexbridge.bleve.corpus import Workload, answer, reference_binary, run_job
from indexbridge.cli import main

SEED = 9


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("bleve-cli")
    w = Workload.generate(SEED, 80)
    (root / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in w.docs) + "\n")
    (root / "mapping.json").write_text(json.dumps(w.mapping))
    boltgo = reference_binary("boltgo")
    theirs = root / "theirs"
    run_job(boltgo, "bleve-build", {"mapping": w.mapping, "ops": w.bleve_batches(random.Random(SEED))}, theirs)
    return root, w, boltgo, theirs


def _run(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["bleve", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_build_then_bleve_answers_as_the_cli(built, capsys):
    root, w, boltgo, _ = built
    status, out, err = _run(capsys, "build", str(root / "idx"), "--docs", str(root / "docs.jsonl"),
                            "--mapping", str(root / "mapping.json"), "--rows-per-segment", "30")
    assert status == 0 and out == f"{root / 'idx'}: 80 documents in 3 segments\n", err
    queries = w.queries[:15]
    expected = answer(boltgo, root / "idx", queries)
    status, out, _ = _run(capsys, "read", str(root / "idx"))
    docs = [json.loads(line) for line in out.splitlines()]
    assert status == 0 and {d.pop("_id"): d for d in docs} == expected["docs"]
    assert [json.loads(line)["_id"] for line in out.splitlines()] == expected["order"]
    assert _run(capsys, "read", str(root / "idx"), "--out", str(root / "read.jsonl"))[0] == 0
    assert (root / "read.jsonl").read_text() == out
    for q, a in zip(queries, expected["answers"]):
        status, text, err = _run(capsys, "search", str(root / "idx"), "--query", json.dumps(q), "--json")
        if "error" in a:
            assert status == 2 and err.startswith("indexbridge: error: ")
            continue
        got = json.loads(text)
        assert got["total"] == a["total"]
        assert len(got["hits"]) == len(a["hits"])
        for h, (doc_id, score) in zip(got["hits"], a["hits"]):
            assert h["score"] == pytest.approx(score, abs=1e-9)
        assert {h["id"] for h in got["hits"]} == {h[0] for h in a["hits"]}
    (root / "q.json").write_text(json.dumps({"match_all": {}}))
    status, text, _ = _run(capsys, "search", str(root / "idx"), "--query", "@" + str(root / "q.json"), "--size", "2")
    assert status == 0 and text.splitlines()[0] == "total: 80" and len(text.splitlines()) == 3
    status, text, _ = _run(capsys, "inspect", str(root / "idx"), "--json")
    summary = json.loads(text)
    assert [(s["file"], s["docs"], s["deleted"]) for s in summary["segments"]] == [
        ("000000000002.zap", 30, 0), ("000000000003.zap", 30, 0), ("000000000004.zap", 20, 0)]
    assert summary["live_docs"] == 80 and summary["fields"][0] == "_id" and summary["mapping"] == expected["mapping"]
    assert _run(capsys, "inspect", str(root / "idx"))[1].startswith(f"{root / 'idx'}: snapshot 3, 80 live documents in 3 segments")


def test_read_and_search_a_bleve_built_index(built, capsys):
    root, w, boltgo, theirs = built
    queries = w.queries[15:30]
    expected = answer(boltgo, theirs, queries)
    status, out, _ = _run(capsys, "read", str(theirs))
    assert status == 0 and {d.pop("_id"): d for d in map(json.loads, out.splitlines())} == expected["docs"]
    summary = json.loads(_run(capsys, "inspect", str(theirs), "--json")[1])
    assert summary["live_docs"] == 80 and sum(s["deleted"] for s in summary["segments"]) > 0
    for q, a in zip(queries, expected["answers"]):
        status, text, _ = _run(capsys, "search", str(theirs), "--query", json.dumps(q), "--json")
        if "error" not in a:
            got = json.loads(text)
            assert got["total"] == a["total"], q
            assert {h["id"]: pytest.approx(h["score"], abs=1e-9) for h in got["hits"]} == {h[0]: h[1] for h in a["hits"]}, q


def test_bad_input_is_one_error_line(built, capsys, tmp_path):
    root = built[0]
    cases = [
        ("bad.jsonl", '{"id": "a"}\n{not json\n', None, "line 2: a JSON object"),
        ("noid.jsonl", '{"name": "a"}\n', None, "line 1: an id in field 'id'"),
        ("dup.jsonl", '{"id": "a"}\n{"id": "a"}\n', None, "occurs twice"),
        ("ok.jsonl", '{"id": "a"}\n', '{"default_analyzer": "en"}', "default_analyzer 'en'"),
        ("ok2.jsonl", '{"id": "a"}\n', '{"default_mapping": ', "a bleve mapping in JSON"),
    ]
    for name, docs, mapping, expected in cases:
        (tmp_path / name).write_text(docs)
        args = ["build", str(tmp_path / f"out-{name}"), "--docs", str(tmp_path / name)]
        if mapping is not None:
            (tmp_path / "m.json").write_text(mapping)
            args += ["--mapping", str(tmp_path / "m.json")]
        status, out, err = _run(capsys, *args)
        assert status == 2 and out == "" and err.startswith("indexbridge: error: ") and expected in err, (name, err)
        assert len(err.splitlines()) == 1
        assert not (tmp_path / f"out-{name}").exists()
    status, _, err = _run(capsys, "build", str(root / "idx"), "--docs", str(root / "docs.jsonl"))
    assert status == 2 and "an index exists there already" in err
    for args, expected in ((["read", str(tmp_path / "nowhere")], "does not exist"),
                           (["search", str(root / "idx"), "--query", '{"wildcard": "a*"}'], "wildcard queries are not supported"),
                           (["search", str(root / "idx"), "--query", "{"], "a bleve query in JSON"),
                           (["search", str(root / "idx")], "needs --query")):
        status, _, err = _run(capsys, *args)
        assert status == 2 and expected in err and len(err.splitlines()) == 1, err
    damaged = tmp_path / "damaged"
    import shutil

    shutil.copytree(root / "idx", damaged)
    (damaged / "store" / "root.bolt").write_bytes((root / "idx" / "store" / "root.bolt").read_bytes()[:1000])
    status, _, err = _run(capsys, "inspect", str(damaged))
    assert status == 2 and err.startswith(f"indexbridge: error: {damaged / 'store' / 'root.bolt'}: offset ")
