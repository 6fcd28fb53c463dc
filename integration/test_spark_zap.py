"""zap segments through Spark: reading, searching and merging with the JVM and Python engines,
checked against each other, a brute-force index of the source documents and the codecs' merge."""

from __future__ import annotations

import datetime as dt
import random
from collections import defaultdict
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from indexbridge.spark import functions as ibf
from indexbridge.zap import Document, Field, Segment, Token, TokenLocation, build_segment, id_field, merge_segments
from indexbridge.zap.analyzers import FieldMapping, analyze_document

WORDS = ["spark", "span", "spare", "zap", "zebra", "bleve", "index", "segment", "merge", "query", "alpha", "beta"]
ENGINES = ("jvm", "python")


def _document(doc_id: str, words: list[str], tag: str) -> Document:
    """A doc with a tokenised ``body`` (term vectors, stored) and a keyword ``tag`` (not stored, docvalues)."""
    tokens: dict[str, list[TokenLocation]] = defaultdict(list)
    start = 0
    for pos, w in enumerate(words, 1):
        tokens[w].append(TokenLocation("", pos, start, start + len(w)))
        start += len(w) + 1
    body = Field("body", " ".join(words).encode(), length=len(words),
                 tokens=tuple(Token(w.encode(), len(locs), tuple(locs)) for w, locs in tokens.items()))
    keyword = Field("tag", tag.encode(), store=False, term_vectors=False, doc_values=True, length=1,
                    tokens=(Token(tag.encode(), 1, ()),))
    return Document((body, keyword, id_field(doc_id.encode())))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, dict[str, list[tuple[str, list[str], str]]]]:
    """Four segments of generated docs, and the source docs per segment path."""
    rng = random.Random(7)
    root = tmp_path_factory.mktemp("zap-segments")
    sources = {}
    n = 0
    for s, size in enumerate((40, 1, 25, 60)):
        docs = []
        for _ in range(size):
            docs.append((f"doc-{n:04d}", rng.choices(WORDS, k=rng.randint(1, 6)), f"t{rng.randint(0, 3)}"))
            n += 1
        path = root / f"seg-{s}.zap"
        path.write_bytes(build_segment([_document(*d) for d in docs], chunk_factor=16))
        sources[str(path)] = docs
    return root, sources


def _rows(df) -> list[tuple]:
    return sorted(tuple(bytes(v) if isinstance(v, (bytes, bytearray)) else v for v in r) for r in df.collect())


def _both(read, *args, **kw) -> list[tuple]:
    """The rows of ``read`` with both engines, required to be the same (schema included)."""
    jvm, python = (read(*args, engine=e, **kw) for e in ENGINES)
    assert jvm.schema == python.schema
    rows = _rows(jvm)
    assert rows == _rows(python)
    return rows


def test_documents_and_ids(spark, corpus):
    root, sources = corpus
    expected = sorted(
        row
        for path, docs in sources.items()
        for doc, (doc_id, words, _) in enumerate(docs)
        for row in ((path, doc, doc_id, "_id", "t", doc_id.encode(), []),
                    (path, doc, doc_id, "body", "t", " ".join(words).encode(), []))
    )
    assert _both(ibf.zap_documents, str(root), segments_per_task=2) == expected
    assert _both(ibf.zap_ids, str(root)) == sorted({r[:3] for r in expected})


def test_terms_and_postings_match_a_brute_force_index(spark, corpus):
    root, sources = corpus
    postings, doc_freq = [], defaultdict(int)
    for path, docs in sources.items():
        for doc, (doc_id, words, tag) in enumerate(docs):
            for w in set(words):
                positions = [p for p, x in enumerate(words, 1) if x == w]
                postings.append((path, doc, "body", w.encode(), len(positions), positions))
            postings.append((path, doc, "tag", tag.encode(), 1, None))
            postings.append((path, doc, "_id", doc_id.encode(), 1, None))
    for path, _, field, term, _, _ in postings:
        doc_freq[(path, field, term)] += 1
    got = _both(ibf.zap_postings, [str(p) for p in sorted(root.glob("*.zap"))], segments_per_task=3)
    assert sorted(got, key=repr) == sorted(postings, key=repr)
    assert _both(ibf.zap_terms, str(root)) == sorted((p, f, t, n) for (p, f, t), n in doc_freq.items())


@pytest.mark.parametrize("field,query,prefix", [("body", "spark", False), ("body", "spa", True), ("tag", "t1", False),
                                                ("absent", "x", True)])
def test_search_matches_a_filter_over_the_source(spark, corpus, field, query, prefix):
    root, sources = corpus
    expected = sorted(
        (path, doc, doc_id)
        for path, docs in sources.items()
        for doc, (doc_id, words, tag) in enumerate(docs)
        if any((t.startswith(query) if prefix else t == query) for t in (words if field == "body" else [tag] if field == "tag" else []))
    )
    assert expected or field == "absent"
    search = ibf.zap_prefix_search if prefix else ibf.zap_term_search
    assert _both(search, str(root), field, query) == expected


def test_merge_with_deletes_equals_the_codec_merge(spark, corpus, tmp_path):
    root, sources = corpus
    paths = sorted(sources)
    rng = random.Random(11)
    drops = {p: set(rng.sample(range(len(sources[p])), len(sources[p]) // 3)) for p in paths}
    drops[paths[1]] = {0}  # the 1-doc segment loses everything
    rows = [(p, d, sources[p][d][0]) for p in paths for d in sorted(drops[p])]
    deletes = spark.createDataFrame(rows, "segment string, doc int, _id string")
    results = {}
    for engine, by in (("jvm", "doc"), ("python", "doc"), ("by_id", "_id")):  # deletes by _id resolve before the engine runs
        out = tmp_path / engine
        merged = ibf.merge_zap_segments(str(root), str(out), group_size=3, deletes=deletes.select("segment", by),
                                        engine="jvm" if engine == "by_id" else engine, chunk_factor=16)
        results[engine] = sorted(merged.collect(), key=lambda r: r["sources"])
    for jvm_row, py_row, id_row in zip(*results.values(), strict=True):
        assert Path(jvm_row["path"]).read_bytes() == Path(id_row["path"]).read_bytes()
        assert Path(jvm_row["path"]).read_bytes() == Path(py_row["path"]).read_bytes()
        assert (jvm_row["sources"], jvm_row["new_docs"], jvm_row["docs"]) == (py_row["sources"], py_row["new_docs"], py_row["docs"])
    groups = [paths[0:3], paths[3:]]
    assert [r["sources"] for r in results["jvm"]] == groups
    for row, group in zip(results["jvm"], groups):
        segments = [Segment.open(p) for p in group]
        data, mapping = merge_segments(segments, [drops[p] for p in group], chunk_factor=16)
        assert Path(row["path"]).read_bytes() == data
        assert row["new_docs"] == mapping
        assert row["size"] == len(data) and row["docs"] == sum(len(sources[p]) - len(drops[p]) for p in group)
        assert row["fields"] == ["_id", "body", "tag"]
    mapping = ibf.zap_doc_mapping(spark.createDataFrame(results["jvm"]))
    assert mapping.filter("new_doc = -1").count() == sum(len(d) for d in drops.values())
    assert mapping.count() == sum(len(d) for d in sources.values())


def test_build_writes_the_same_files_with_both_engines(spark, tmp_path):
    rng = random.Random(3)
    rows = [
        (f"id-{i}", " ".join(rng.choices(WORDS + ["The", "and", "Ünïcode", "x-ray"], k=rng.randint(0, 8))) or None,
         f"t{i % 3}", i * 7 - 50 if i % 5 else None, i / 4, i % 2 == 0,
         dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=i * 3607, microseconds=i), [f"k{i % 4}", "same"][: i % 3])
        for i in range(90)
    ]
    df = spark.createDataFrame(
        rows, "id string, body string, tag string, n long, score double, flag boolean, at timestamp, keys array<string>"
    ).repartition(3).cache()
    fields = [
        FieldMapping("body"),
        FieldMapping("tag", analyzer="keyword", store=False),
        FieldMapping("n", type="number", include_in_all=False),
        FieldMapping("score", type="number", doc_values=False),
        FieldMapping("flag", type="boolean", index=False),
        FieldMapping("at", type="datetime"),
        FieldMapping("keys", analyzer="keyword"),
    ]
    written = {}
    for engine in ENGINES:
        out = tmp_path / engine
        segments = ibf.build_zap_segments(df, str(out), fields=fields, rows_per_segment=20, engine=engine, chunk_factor=8)
        written[engine] = sorted((Path(r["path"]).name, r["docs"], r["size"], tuple(r["fields"])) for r in segments.collect())
        assert sorted(p.name for p in out.iterdir()) == [w[0] for w in written[engine]]  # no temporary files left
    assert written["jvm"] == written["python"]
    assert sum(w[1] for w in written["jvm"]) == len(rows) and all(w[1] <= 20 for w in written["jvm"])
    by_id = {r[0]: r for r in rows}
    for name, docs, size, _ in written["jvm"]:
        data = (tmp_path / "jvm" / name).read_bytes()
        assert data == (tmp_path / "python" / name).read_bytes()
        with Segment.open(tmp_path / "jvm" / name) as segment:  # the codec's bytes for the same documents
            ids = [segment.doc_id(d).decode() for d in range(segment.num_docs)]
        expected = build_segment([
            analyze_document(i, [(f.name, v) for f, v in zip(fields, by_id[i][1:]) if v is not None], fields) for i in ids
        ], chunk_factor=8)
        assert (len(data), data) == (size, expected)
