"""Whole bleve indexes (indexbridge.bleve: mapping, index, query) against real bleve.

Generated workloads (indexbridge.bleve.corpus: documents, a mapping, queries, a later update; one
per seed) go through integration/boltgo (bleve v1.0.14, bbolt v1.3.5) and its bleve2 module
(bleve v2.6), built once per session:

* mapping: bleve maps and analyses the documents (kept in key order) and zap writes a segment;
  indexbridge's mapping and writer must write the same bytes; mappings marshal to bleve's bytes,
  dates parse as bleve's default parser parses them;
* indexbridge writes the index (several segments); bleve v1 and v2 open it read-only and answer
  the queries (ids, totals, scores, stored fields): indexbridge's reader and search must return
  the same on the same directory, and bleve's answers must equal those of an index bleve built
  from the same documents in several batches (without history: a prefix or range query's terms
  come from every segment's dictionary, deleted documents' terms included, so an index with
  deletions answers them with other coordination factors);
* bleve builds indexes in batches with updates and deletions: indexbridge reads and searches
  them as bleve does;
* bleve indexes more documents into indexbridge's directory, updates and deletes, and
  force-merges (scorch's merger over indexbridge's segments): its answers equal those of the
  bleve-built index after the same update, and indexbridge reads and searches the merged,
  bleve-written directory as bleve does;
* one segment: indexbridge's root.bolt and index_meta.json are the bytes of bleve's offline
  Builder; the whole directory too for a one-document index;
* directories bleve v2 writes (zap v16/v17) are refused with "unsupported zap version N in FILE";
  damaged directories and mappings get one IndexFormatError naming the file;
* the Scala implementation (io.indexbridge.bleve through BleveBridge, over py4j) writes the same
  segments and directories byte for byte and reads and searches every directory as bleve does.

Hits are compared in order. bleve sums a document's matches of a disjunction of more than ten
terms in its heap's order (indexbridge in term order), so scores may differ in the last bits; hits
whose scores are equal to 1e-12 may therefore come in either order (checked as a set per group).
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest

from indexbridge.bleve import corpus
from indexbridge.bleve.corpus import Workload, answer, reference_binary, run_job, run_reference
from indexbridge.bleve.index import BleveIndex, publish_index, snapshot_tree, write_index
from indexbridge.bleve.mapping import IndexMapping, parse_datetime
from indexbridge.bleve.query import parse_query, search
from indexbridge.errors import IndexFormatError
from indexbridge.jvm import jvm
from indexbridge.zap import build_segment

SEEDS = range(int(os.environ.get("INDEXBRIDGE_BLEVE_SEEDS", "6")))  # more for a deeper run
DOCS = 120
ROWS_PER_SEGMENT = 45


@pytest.fixture(scope="session")
def boltgo() -> Path:
    return reference_binary("boltgo")


@pytest.fixture(scope="session")
def bleve2() -> Path:
    return reference_binary("bleve2")


class Built:
    """One workload through both implementations: the directories and bleve's answers."""

    def __init__(self, seed: int, root: Path, boltgo: Path, bleve2: Path) -> None:
        w = self.workload = Workload.generate(seed, DOCS)
        self.mapping = IndexMapping.parse(w.mapping)
        self.ours = root / "ours"           # indexbridge wrote it
        self.theirs = root / "theirs"       # bleve built it in batches, with updates and deletions
        self.clean = root / "clean"         # bleve built it in batches of the final documents only
        write_index(self.ours, [(d["id"], d) for d in w.docs], self.mapping, rows_per_segment=ROWS_PER_SEGMENT)
        run_job(boltgo, "bleve-build", {"mapping": w.mapping, "ops": w.bleve_batches(random.Random(seed))}, self.theirs)
        pairs = w.pairs
        random.Random(seed).shuffle(pairs)
        run_job(boltgo, "bleve-build", {"mapping": w.mapping, "ops": [{"index": pairs[k:k + 50]} for k in range(0, len(pairs), 50)]},
                self.clean)
        self.ours_bytes = {p.name: p.read_bytes() for p in sorted(self.ours.rglob("*")) if p.is_file()}
        self.v1_ours = answer(boltgo, self.ours, w.queries)
        self.v2_ours = answer(bleve2, self.ours, w.queries)
        self.v1_theirs = answer(boltgo, self.theirs, w.queries)
        self.v1_clean = answer(boltgo, self.clean, w.queries)
        self.v2_clean = answer(bleve2, self.clean, w.queries)
        # later: bleve updates both and merges
        self.ours_after = root / "ours-after"
        self.theirs_after = root / "theirs-after"
        shutil.copytree(self.ours, self.ours_after)
        shutil.copytree(self.clean, self.theirs_after)
        for d in (self.ours_after, self.theirs_after):
            run_job(boltgo, "bleve-update", {"ops": w.update, "merge": True}, d)
        self.v1_ours_after = answer(boltgo, self.ours_after, w.queries)
        self.v1_theirs_after = answer(boltgo, self.theirs_after, w.queries)


@pytest.fixture(scope="session")
def built(tmp_path_factory, boltgo, bleve2) -> dict[int, Built]:
    root = tmp_path_factory.mktemp("bleve-index")
    return {seed: Built(seed, root / str(seed), boltgo, bleve2) for seed in SEEDS}


def _groups(hits: list) -> list[tuple[float, list[str]]]:
    """Hits as runs of scores equal to 1e-12 (relative), each with its sorted ids."""
    out: list[tuple[float, list[str]]] = []
    for doc_id, score in hits:
        if out and abs(out[-1][0] - score) <= 1e-12 * max(1.0, abs(score)):
            out[-1][1].append(doc_id)
        else:
            out.append((score, [doc_id]))
    return [(s, sorted(ids)) for s, ids in out]


def assert_same_hits(got: list, expected: list, what: str, ordered: bool = True) -> None:
    assert len(got) == len(expected), f"{what}: {len(got)} hits, bleve {len(expected)}"
    exp = {i: s for i, s in expected}
    for doc_id, score in got:
        assert doc_id in exp, f"{what}: {doc_id} is not one of bleve's hits"
        assert abs(score - exp[doc_id]) <= 1e-9, f"{what}: {doc_id} scores {score}, bleve {exp[doc_id]}"
    if ordered:
        ids_got = [i for i, _ in got]
        ids_exp = [i for i, _ in expected]
        if ids_got != ids_exp:  # only near-equal scores may swap (see the module comment)
            assert [ids for _, ids in _groups(got)] == [ids for _, ids in _groups(expected)], f"{what}: order {ids_got[:8]} vs bleve {ids_exp[:8]}"


def assert_answers(index_dir: Path, bleve_answer: dict, queries: list, what: str) -> None:
    """indexbridge's documents and search over ``index_dir`` equal bleve's answers over it."""
    with BleveIndex(index_dir) as ix:
        docs = {d.pop("_id"): d for d in ix.documents()}
        assert docs == bleve_answer["docs"], f"{what}: stored fields differ"
        assert ix.doc_count == bleve_answer["doc_count"]
        for q, expected in zip(queries, bleve_answer["answers"]):
            if "error" in expected:
                with pytest.raises(IndexFormatError):
                    search(ix, q)
                continue
            result = search(ix, q)
            assert result.total == expected["total"], f"{what}: {json.dumps(q)}: total {result.total}, bleve {expected['total']}"
            assert_same_hits(result.hits, expected["hits"], f"{what}: {json.dumps(q)}")


def assert_same_answers(a: dict, b: dict, queries: list, what: str) -> None:
    """Two bleve answers over indexes of the same documents (different segments: ties may differ)."""
    assert a["doc_count"] == b["doc_count"] and a["docs"] == b["docs"], f"{what}: documents differ"
    for q, x, y in zip(queries, a["answers"], b["answers"]):
        assert ("error" in x) == ("error" in y), f"{what}: {json.dumps(q)}: {x.get('error')} / {y.get('error')}"
        if "error" not in x:
            assert x["total"] == y["total"], f"{what}: {json.dumps(q)}"
            assert_same_hits(x["hits"], y["hits"], f"{what}: {json.dumps(q)}", ordered=False)
            assert [s for s, _ in _groups(x["hits"])] == pytest.approx([s for s, _ in _groups(y["hits"])], abs=1e-9)


# -- mapping ------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_mapped_segment_is_bleves(seed, boltgo, tmp_path):
    w = Workload.generate(seed, DOCS)
    run_job(boltgo, "bleve-segment", {"mapping": w.mapping, "docs": w.pairs}, tmp_path / "go.zap")
    im = IndexMapping.parse(w.mapping)
    assert build_segment([im.map_document(d["id"], d) for d in w.docs]) == (tmp_path / "go.zap").read_bytes()


def test_mapping_json_is_bleves(boltgo, tmp_path):
    rng = random.Random(7)
    texts = [json.dumps(corpus.random_mapping(rng)) for _ in range(60)]
    texts += ["{}", "null", '{"types": {}, "analysis": {}}', '{"default_mapping": {"properties": {"a<b>&": {}}}}',
              '{"default_mapping": {"fields": [], "properties": {}}, "default_field": "x\\u2028"}',
              '{"default_mapping": {"properties": {"t": {"fields": [{"type": "text", "store": null}]}}}}',
              '{"default_mapping": {"enabled": false}, "index_dynamic": false, "unknown_key": 1}',
              '{"types": {"book": {"properties": {"title": {"fields": [{"type": "text"}]}}}}, "type_field": "kind"}']
    (tmp_path / "mappings.json").write_text(json.dumps(texts))
    go = run_reference(boltgo, "bleve-mapping", tmp_path / "mappings.json")
    for text, expected in zip(texts, go):
        assert "error" not in expected, (text, expected)
        assert IndexMapping.parse(text).to_json() == expected["json"], text


def test_dates_parse_as_bleves(boltgo, tmp_path):
    rng = random.Random(11)
    values = list(corpus._DATE_STRINGS)
    pieces = ["2020", "-", "01", "02", "T", " ", "  ", "03", ":", "04", "05", ".", ",", "123", "1234567891", "Z",
              "+01:00", "-23:59", "+24:60", "+2400", "1", "99", "0000", "9999", "02-29", "2000-02-29", "1900-02-29", "x"]
    for _ in range(1500):
        values.append("".join(rng.choice(pieces) for _ in range(rng.randint(1, 9))))
    for _ in range(500):
        y = rng.randint(1678, 2261) if rng.random() < 0.8 else rng.randint(0, 9999)
        m, d = (rng.randint(1, 12), rng.randint(1, 31)) if rng.random() < 0.8 else (rng.randint(0, 13), rng.randint(0, 32))
        sep = rng.choice(["T", " ", "t", "  "])
        frac = rng.choice(["", ".5", ",25", ".123456789", ".1234567891234"])
        zone = rng.choice(["", "Z", "+05:30", "-00:00", "+24:00", "z", "+5:30"])
        values.append(f"{y:04d}-{m:02d}-{d:02d}" + (f"{sep}{rng.randint(0, 24):02d}:{rng.randint(0, 60):02d}:{rng.randint(0, 60):02d}{frac}{zone}"
                                                    if rng.random() < 0.8 else ""))
    (tmp_path / "dates.json").write_text(json.dumps(values))
    go = run_reference(boltgo, "bleve-dates", tmp_path / "dates.json")
    ours = []
    for v in values:
        nanos = parse_datetime(v)
        ours.append(None if nanos is None or not -(1 << 63) <= nanos < 1 << 63 else str(nanos))
    assert ours == go
    assert sum(x is not None for x in go) > 100


def test_unsupported_mappings_are_named():
    cases = {
        '{"analysis": {"analyzers": {"mine": {"type": "custom", "tokenizer": "unicode"}}}}': "custom analysis",
        '{"default_analyzer": "en"}': "default_analyzer 'en'",
        '{"default_mapping": {"properties": {"loc": {"fields": [{"type": "geopoint"}]}}}}': "geopoint",
        '{"default_mapping": {"properties": {"t": {"fields": [{"type": "text", "analyzer": "web"}]}}}}': "analyzer 'web'",
        '{"default_datetime_parser": "flexiblego"}': "default_datetime_parser",
        '{"default_mapping": {"properties": {"d": {"fields": [{"type": "datetime", "date_format": "x"}]}}}}': "date_format",
        '{"default_mapping": {"properties": {"n": {"fields": [{"type": "integer"}]}}}}': "unknown field type",
        '{"default_mapping": {"dynamic": "yes"}}': "dynamic must be a JSON boolean",
        '{"default_mapping": ': "JSON",
        '[1, 2]': "a JSON object",
        '{"default_mapping": null}': "found null",
        '{"analysis": null}': "analysis must be a JSON object",
    }
    for text, expected in cases.items():
        with pytest.raises(IndexFormatError, match=expected.replace("(", r"\(")):
            IndexMapping.parse(text, "m.json")


# -- indexes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_bleve_answers_on_our_index_are_ours(seed, built):
    b = built[seed]
    assert_answers(b.ours, b.v1_ours, b.workload.queries, f"seed {seed}, our index")
    assert len(b.ours_bytes) == 2 + -(-DOCS // ROWS_PER_SEGMENT)  # index_meta.json, root.bolt, segments
    # bleve opened it read-only: not a byte changed
    assert {p.name: p.read_bytes() for p in sorted(b.ours.rglob("*")) if p.is_file()} == b.ours_bytes


@pytest.mark.parametrize("seed", SEEDS)
def test_our_index_answers_as_bleves_own(seed, built):
    b = built[seed]
    assert_same_answers(b.v1_ours, b.v1_clean, b.workload.queries, f"seed {seed}: ours vs bleve-built")
    assert b.v1_ours["mapping"] == json.loads(b.mapping.to_json())


@pytest.mark.parametrize("seed", SEEDS)
def test_bleve_v2_answers_on_our_index(seed, built):
    """bleve v2 reads our directory as it reads the one bleve v1.0.14 built from the same
    documents (v2 scores some queries differently from v1: a prefix query without terms, or whose
    only term is the prefix, is a term query in v2)."""
    b = built[seed]
    assert b.v2_ours["docs"] == b.v1_ours["docs"]
    assert_same_answers(b.v2_ours, b.v2_clean, b.workload.queries, f"seed {seed}: v2 on ours vs v2 on bleve-built")
    same = sum(x == y for x, y in zip(b.v2_ours["answers"], b.v1_ours["answers"]))
    assert same >= len(b.workload.queries) * 3 // 4


@pytest.mark.parametrize("seed", SEEDS)
def test_we_read_and_search_bleve_built_indexes(seed, built):
    b = built[seed]
    assert_answers(b.theirs, b.v1_theirs, b.workload.queries, f"seed {seed}, bleve-built")
    with BleveIndex(b.theirs) as ix:
        assert len(ix.segments) >= 1
        assert ix.mapping.to_json() == b.mapping.to_json()


@pytest.mark.parametrize("seed", SEEDS)
def test_bleve_keeps_writing_our_index(seed, built):
    b = built[seed]
    final = {d["id"] for d in b.workload.final_after_update()}
    assert set(b.v1_ours_after["docs"]) == final
    assert_same_answers(b.v1_ours_after, b.v1_theirs_after, b.workload.queries, f"seed {seed}: after update")
    assert_answers(b.ours_after, b.v1_ours_after, b.workload.queries, f"seed {seed}, ours after bleve's update")
    with BleveIndex(b.ours_after) as ix:
        assert len(ix.segments) == 1 and ix.epoch > 3  # merged into one by scorch


def test_deletions_and_updates_in_bleve_built_index(built):
    """The bleve-built directories hold old versions and deleted documents that must not show."""
    deleted = 0
    for b in built.values():
        with BleveIndex(b.theirs) as ix:
            deleted += sum(len(e.deleted or ()) for e in ix.segments)
            ids = [d["_id"] for d in ix.documents()]
            assert sorted(ids) == sorted(d["id"] for d in b.workload.docs)
    assert deleted > 0


def test_phrases_over_array_values_as_bleve_answers(boltgo, scala, tmp_path):
    """Phrases over arrays of text: consecutive positions in two elements are no phrase (bleve
    compares the locations' array positions), within one element they are. Few words, so that
    both happen often; every ordered pair of them asked, in the array's field and in _all; the
    Python and the Scala search against bleve's answers."""
    rng = random.Random(11)
    words = corpus.WORDS[:8]
    docs = [{"id": f"d{k}", "comments": [{"text": " ".join(rng.choice(words) for _ in range(rng.randint(1, 5)))}
                                         for _ in range(rng.randint(1, 4))],
             "tags": [rng.choice(words) for _ in range(rng.randint(1, 3))]} for k in range(60)]
    queries = [{"match_phrase": f"{a} {b}", **({"field": f} if f else {})}
               for a in words for b in words for f in ("comments.text", "tags", "")]
    write_index(tmp_path / "ours", [(d["id"], d) for d in docs], None)
    expected = answer(boltgo, tmp_path / "ours", queries)
    assert sum(a["total"] for a in expected["answers"]) > 0
    assert_answers(tmp_path / "ours", expected, queries, "phrases over arrays")
    for q, got, want in zip(queries, _scala_answers(scala, tmp_path / "ours", queries, tmp_path)["answers"], expected["answers"]):
        assert got["total"] == want["total"], q
        assert_same_hits([tuple(h) for h in got["hits"]], want["hits"], f"scala {json.dumps(q)}")


def test_one_segment_is_the_builders(boltgo, tmp_path):
    w = Workload.generate(3, 60)
    run_job(boltgo, "bleve-build", {"mapping": w.mapping, "ops": [{"index": w.pairs}], "builder": True, "batch_size": 1000},
            tmp_path / "builder")
    write_index(tmp_path / "ours", [(d["id"], d) for d in w.docs], w.mapping)
    for name in ("index_meta.json", "store/root.bolt"):
        assert (tmp_path / "ours" / name).read_bytes() == (tmp_path / "builder" / name).read_bytes(), name
    assert sorted(p.name for p in (tmp_path / "ours" / "store").iterdir()) == ["000000000002.zap", "root.bolt"]
    # one document with one field: Go's map order cannot differ, so every byte is the Builder's
    doc = {"title": "Offline builders and zap segments"}
    run_job(boltgo, "bleve-build", {"mapping": None, "ops": [{"index": [["only", doc]]}], "builder": True}, tmp_path / "b1")
    write_index(tmp_path / "o1", [("only", doc)])
    files = sorted(str(p.relative_to(tmp_path / "b1")) for p in (tmp_path / "b1").rglob("*") if p.is_file())
    assert files == ["index_meta.json", "store/000000000002.zap", "store/root.bolt"]
    for name in files:
        assert (tmp_path / "o1" / name).read_bytes() == (tmp_path / "b1" / name).read_bytes(), name


def test_empty_index(boltgo, tmp_path):
    write_index(tmp_path / "empty", [])
    a = answer(boltgo, tmp_path / "empty", [{"match_all": {}}])
    assert a["doc_count"] == 0 and a["answers"][0]["total"] == 0
    with BleveIndex(tmp_path / "empty") as ix:
        assert ix.doc_count == 0 and list(ix.documents()) == [] and search(ix, {"match_all": {}}).total == 0


def test_write_is_atomic_and_never_overwrites(tmp_path, monkeypatch):
    docs = [(f"d{k}", {"text": f"word{k}"}) for k in range(10)]
    write_index(tmp_path / "a", docs, rows_per_segment=4)
    with pytest.raises(FileExistsError):
        write_index(tmp_path / "a", docs)
    with pytest.raises(ValueError, match="occurs twice"):
        write_index(tmp_path / "dup", docs + docs[:1])
    assert not (tmp_path / "dup" / "index_meta.json").exists()
    # a crash before the root is published leaves no index_meta.json: bleve.Open refuses it
    import indexbridge.bleve.index as index_module

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(index_module, "write_bolt_file", crash)
    with pytest.raises(OSError):
        write_index(tmp_path / "b", docs, rows_per_segment=4)
    assert not (tmp_path / "b" / "index_meta.json").exists()
    with pytest.raises(IndexFormatError, match="index_meta.json is missing"):
        BleveIndex(tmp_path / "b")


# -- bad input ----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def small_index(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bleve-small") / "idx"
    write_index(path, [(f"d{k}", {"text": f"alpha beta {k}", "n": k}) for k in range(30)], rows_per_segment=10)
    return path


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def test_bad_index_directories(small_index, tmp_path):
    store = "store"
    with pytest.raises(IndexFormatError, match="does not exist"):
        BleveIndex(tmp_path / "nowhere")
    d = _copy(small_index, tmp_path / "meta")
    (d / "index_meta.json").write_text('{"storage":"boltdb","index_type":"upside_down"}')
    with pytest.raises(IndexFormatError, match="upside_down"):
        BleveIndex(d)
    d = _copy(small_index, tmp_path / "nobolt")
    (d / store / "root.bolt").unlink()
    with pytest.raises(IndexFormatError, match="root.bolt.*missing"):
        BleveIndex(d)
    d = _copy(small_index, tmp_path / "truncated")
    data = (d / store / "root.bolt").read_bytes()
    for cut in (0, 10, 100, 4096 + 20, 4 * 4096 + 7):
        (d / store / "root.bolt").write_bytes(data[:cut])
        with pytest.raises(IndexFormatError) as e:
            BleveIndex(d)
        assert "root.bolt" in str(e.value)
    d = _copy(small_index, tmp_path / "flipped")
    rng = random.Random(5)
    for _ in range(300):
        damaged = bytearray(data)
        at = rng.randrange(len(data) if rng.random() < 0.3 else 6 * 4096)
        damaged[at] ^= 1 << rng.randrange(8)
        (d / store / "root.bolt").write_bytes(bytes(damaged))
        try:
            with BleveIndex(d) as ix:
                list(ix.documents())
        except IndexFormatError as e:
            assert str(d) in str(e)
    d = _copy(small_index, tmp_path / "missing")
    (d / store / "000000000003.zap").unlink()
    with pytest.raises(IndexFormatError, match=r"000000000003\.zap.*missing"):
        BleveIndex(d)
    d = _copy(small_index, tmp_path / "footer")
    seg = d / store / "000000000002.zap"
    raw = bytearray(seg.read_bytes())
    raw[-30] ^= 0xFF  # the fields index offset: a CRC mismatch first
    seg.write_bytes(bytes(raw))
    with pytest.raises(IndexFormatError, match="000000000002.zap"):
        BleveIndex(d)
    raw = bytearray((small_index / store / "000000000002.zap").read_bytes())
    raw[-8:-4] = (16).to_bytes(4, "big")
    seg.write_bytes(bytes(raw))
    with pytest.raises(IndexFormatError, match=r"unsupported zap version 16 in .*000000000002\.zap"):
        BleveIndex(d)


def test_snapshot_naming_another_zap_version(small_index, tmp_path):
    d = _copy(small_index, tmp_path / "v15")
    tree = snapshot_tree(["000000000002.zap"], IndexMapping.parse(None).to_json().encode())
    snapshot = next(iter(tree[b"s"].values()))
    snapshot[b"m"][b"version"] = (15).to_bytes(4, "big")
    from indexbridge.bleve.bolt import write_bolt_file
    write_bolt_file(d / "store" / "root.bolt", tree)
    with pytest.raises(IndexFormatError, match=r"unsupported zap version 15 in .*000000000002\.zap"):
        BleveIndex(d)


def test_bleve_v2_written_index_is_refused(bleve2, tmp_path):
    w = Workload.generate(1, 30)
    run_job(bleve2, "build", {"mapping": w.mapping, "ops": [{"index": w.pairs}]}, tmp_path / "v2")
    with pytest.raises(IndexFormatError, match=r"unsupported zap version 1[5-7] in .*\.zap"):
        BleveIndex(tmp_path / "v2")


def test_bad_queries():
    cases = {
        "{": "JSON",
        '{"fuzziness": 1, "term": "x"}': "fuzzy",
        '{"match": "x", "fuzziness": 2}': "fuzziness",
        '{"must": {}}': "boolean",
        '{"query": "a b"}': "query string",
        '{"terms": ["a"]}': "phrase",
        '{"min": "a"}': "term range",
        '{"start": "2020-01-01"}': "date range",
        '{"regexp": "a.*"}': "regexp",
        '{"wildcard": "a*"}': "wildcard",
        '{"ids": ["a"]}': "doc id",
        '{"whatever": 1}': "unknown query type",
        '{"match": "x", "operator": "xor"}': "operator",
        '{"term": 5}': "term must be a JSON string",
        '{"conjuncts": {}}': "conjuncts must be a JSON array",
        "[1]": "a JSON object",
    }
    for text, expected in cases.items():
        with pytest.raises(IndexFormatError, match=expected):
            parse_query(text)


# -- the Scala implementation -------------------------------------------------------------------


@pytest.fixture(scope="session")
def scala():
    return jvm().io.indexbridge.bleve.BleveBridge


def _scala_answers(scala, index_dir: Path, queries: list, tmp: Path) -> dict:
    (tmp / "queries.json").write_text(json.dumps(queries))
    out = json.loads(scala.documentsJson(str(index_dir)))
    out["answers"] = json.loads(scala.searchAll(str(index_dir), str(tmp / "queries.json")))
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_scala_writes_and_answers_as_bleve(seed, built, scala, boltgo, tmp_path):
    b = built[seed]
    w = b.workload
    (tmp_path / "docs.json").write_text(json.dumps(w.pairs))
    mapping = None if w.mapping is None else json.dumps(w.mapping)
    assert scala.mappingJson(mapping) == b.mapping.to_json()
    scala.writeSegment(str(tmp_path / "one.zap"), str(tmp_path / "docs.json"), mapping)
    run_job(boltgo, "bleve-segment", {"mapping": w.mapping, "docs": w.pairs}, tmp_path / "go.zap")
    assert (tmp_path / "one.zap").read_bytes() == (tmp_path / "go.zap").read_bytes()
    scala.writeIndex(str(tmp_path / "idx"), str(tmp_path / "docs.json"), mapping, ROWS_PER_SEGMENT)
    assert {p.name: p.read_bytes() for p in sorted((tmp_path / "idx").rglob("*")) if p.is_file()} == b.ours_bytes
    for where, expected in ((b.ours, b.v1_ours), (b.theirs, b.v1_theirs), (b.ours_after, b.v1_ours_after)):
        got = _scala_answers(scala, where, w.queries, tmp_path)
        assert got["docs"] == expected["docs"] and got["doc_count"] == expected["doc_count"], where
        for q, x, y in zip(w.queries, got["answers"], expected["answers"]):
            assert ("error" in x) == ("error" in y), (q, x, y)
            if "error" not in y:
                assert x["total"] == y["total"], (where, q)
                assert_same_hits([tuple(h) for h in x["hits"]], y["hits"], f"scala {where.name} {json.dumps(q)}")


def test_scala_dates_and_bad_input(scala, small_index, tmp_path):
    values = list(corpus._DATE_STRINGS) + ["2020-02-30", "2020-01-01T00:00:00.5+05:30", "2262-04-11T23:47:16.854775807Z",
                                           "2262-04-11T23:47:16.854775808Z", "1677-09-21T00:12:43.145224192Z"]
    (tmp_path / "dates.json").write_text(json.dumps(values))
    expected = [None if (n := parse_datetime(v)) is None or not -(1 << 63) <= n < 1 << 63 else str(n) for v in values]
    assert json.loads(scala.parseDates(str(tmp_path / "dates.json"))) == expected
    d = _copy(small_index, tmp_path / "missing")
    (d / "store" / "000000000003.zap").unlink()
    with pytest.raises(Exception, match=r"IndexFormatException.*000000000003\.zap.*missing"):
        scala.documentsJson(str(d))
    d = _copy(small_index, tmp_path / "truncated")
    (d / "store" / "root.bolt").write_bytes((small_index / "store" / "root.bolt").read_bytes()[:5000])
    with pytest.raises(Exception, match="IndexFormatException.*root.bolt"):
        scala.documentsJson(str(d))
    raw = bytearray((small_index / "store" / "000000000002.zap").read_bytes())
    raw[-8:-4] = (15).to_bytes(4, "big")
    (tmp_path / "missing" / "store" / "000000000003.zap").write_bytes((small_index / "store" / "000000000003.zap").read_bytes())
    (tmp_path / "missing" / "store" / "000000000002.zap").write_bytes(bytes(raw))
    with pytest.raises(Exception, match=r"unsupported zap version 15 in .*000000000002\.zap"):
        scala.documentsJson(str(tmp_path / "missing"))
    with pytest.raises(Exception, match="a mapping indexbridge supports: geopoint|geopoint"):
        scala.mappingJson('{"default_mapping": {"properties": {"loc": {"fields": [{"type": "geopoint"}]}}}}')
