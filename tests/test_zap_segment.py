"""Zap segments against a brute-force in-memory index over generated corpora.

Build: a segment written from random analysed documents (random chunk factor) must read back
exactly what a plain dict-of-lists index of the same documents holds (terms, postings with
freqs/norms/locations, prefix and range queries, stored fields, doc ids, docvalues).
Merge: merging random segments with random drops must read like a segment built from the
surviving documents, with the documented doc-number mapping.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from pathlib import Path

import pytest

from indexbridge.zap.analysis import CompositeField, Document, Field, Token, TokenLocation, id_field
from indexbridge.zap.merge import DROPPED, merge_segments
from indexbridge.zap.postings import Location, is_one_hit, norm_bits
from indexbridge.zap.segment import Segment, build_segment, field_order

VOCABULARY = [b"", b"a", b"ab", b"abc", b"b", b"ba", b"caf\xc3\xa9", b"\xff\x00", b"zz", b"the", b"t", b"te"]
NAMES = ["body", "title", "A", "tag", "\u00e9t\u00e9"]


def _field(rng: random.Random, name: str, dv_names: set[str]) -> Field:
    index = rng.random() < 0.8 or name in dv_names
    tv = rng.random() < 0.6
    tokens = None
    length = 0
    if index:
        length = rng.randrange(1 if name in dv_names else 0, 6)
        occurrences: dict[bytes, list[TokenLocation]] = {}
        freqs: dict[bytes, int] = {}
        for pos in range(1, length + 1):
            term = rng.choice(VOCABULARY)
            freqs[term] = freqs.get(term, 0) + 1
            aps = tuple(rng.randrange(300) for _ in range(rng.randrange(0, 3)))
            occurrences.setdefault(term, []).append(TokenLocation("", pos, 3 * pos, 3 * pos + len(term), aps))
        tokens = tuple(Token(t, freqs[t], tuple(occurrences[t]) if tv else ()) for t in sorted(freqs))
    return Field(
        name, rng.randbytes(rng.randrange(0, 30)), rng.choice("tndbg"), tuple(rng.randrange(5) for _ in range(rng.randrange(0, 2))),
        index, rng.random() < 0.7, tv, name in dv_names, length, tokens,
    )


def _document(rng: random.Random, doc_id: bytes, names: list[str], dv_names: set[str]) -> Document:
    fields = [_field(rng, rng.choice(names), dv_names) for _ in range(rng.randrange(0, 5))]
    composites = ()
    if rng.random() < 0.4:  # _all over the indexed fields, locations naming their source
        tokens: dict[bytes, list] = {}
        for f in fields:
            for t in f.tokens or ():
                entry = tokens.setdefault(t.term, [0, []])
                entry[0] += t.freq
                entry[1].extend(TokenLocation(f.name, loc.pos, loc.start, loc.end, loc.array_positions) for loc in t.locations)
        composites = (CompositeField("_all", sum(f.length for f in fields), tuple(Token(t, f, tuple(l)) for t, (f, l) in sorted(tokens.items()))),)
    return Document(tuple(fields) + (id_field(doc_id),), composites)


def _corpus(rng: random.Random, first_id: int, size: int, names: list[str] | None = None) -> list[Document]:
    names = names or rng.sample(NAMES, rng.randrange(1, len(NAMES) + 1))
    dv_names = {n for n in names if rng.random() < 0.4}
    return [_document(rng, b"doc%05d" % (first_id + i), names, dv_names) for i in range(size)]


def brute_force(docs: list[Document], order: list[str] | None = None) -> dict:
    """The index a reader must report, computed directly from the documents (field ids: ``order``)."""
    names = {"_id"} | {f.name for d in docs for f in d.fields} | {c.name for d in docs for c in d.composite_fields}
    order = order or field_order(names)
    ids = {n: i for i, n in enumerate(order)}
    postings: dict[str, dict[bytes, list]] = {n: {} for n in order}
    stored, doc_values = [], {}
    dv_fields = {f.name for d in docs for f in d.fields if f.doc_values}
    for num, doc in enumerate(docs):
        instances = [(c.name, c.length, c.tokens) for c in doc.composite_fields] + [(f.name, f.length, f.tokens) for f in doc.fields]
        for name in {n for n, _, _ in instances}:
            same = [(length, tokens) for n, length, tokens in instances if n == name]
            bits = norm_bits(sum(length for length, _ in same))
            terms: dict[bytes, list] = {}
            for _, tokens in same:
                for t in tokens or ():
                    entry = terms.setdefault(t.term, [0, []])
                    entry[0] += t.freq
                    entry[1] += [Location(ids[l.field or name], l.pos, l.start, l.end, l.array_positions) for l in t.locations]
            for term, (freq, locs) in terms.items():
                postings[name].setdefault(term, []).append((num, freq, bits, tuple(locs) if locs else None))
            if name in dv_fields and terms:
                # terms joined by 0xFF, split on 0xFF: a term holding 0xFF splits (a format limitation, §7.1)
                joined = b"".join(t + b"\xff" for t in sorted(terms))
                doc_values.setdefault(name, []).append((num, joined.split(b"\xff")[:-1]))
        values = [(f.name, f.type, f.value, f.array_positions) for f in doc.fields if f.store and f.name != "_id"]
        stored.append([("_id", "t", doc.fields[-1].value, ())] + sorted(values, key=lambda v: ids[v[0]]))
    return {"fields": order, "postings": postings, "stored": stored, "docvalues": doc_values}


def read_back(segment: Segment, rng: random.Random) -> dict:
    """The same picture through the reader (and its prefix/range/lookup paths)."""
    postings = {}
    for info in segment.fields:
        dictionary = segment.dictionary(info.id)
        items = list(dictionary.items())
        terms = [t for t, _ in items]
        for probe in rng.sample(VOCABULARY, 4):
            assert [t for t, _ in dictionary.prefix(probe)] == [t for t in terms if t.startswith(probe)]
            assert list(dictionary.items(probe, b"t")) == items[bisect_left(terms, probe) : max(bisect_left(terms, probe), bisect_left(terms, b"t"))]
        postings[info.name] = {
            term: [(p.doc, p.freq, p.norm_bits, p.locations) for p in dictionary.postings(term)] for term in terms
        }
        assert list(dictionary.postings(b"\x00absent")) == []
    stored = [segment.document(d) for d in range(segment.num_docs)]
    for d in range(segment.num_docs):
        assert segment.doc_id(d) == stored[d][0][2]
    doc_values = {}
    for info in segment.fields:
        values = [(doc, terms) for doc, terms in segment.docvalues(info.id)]
        if values:
            doc_values[info.name] = values
    return {"fields": segment.field_names, "postings": postings, "stored": stored, "docvalues": doc_values}


@pytest.mark.parametrize("seed", range(40))
def test_build_reads_back_as_the_brute_force_index(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    docs = _corpus(rng, 0, rng.randrange(0, 60))
    chunk_factor = rng.choice([1, 2, 3, 7, 1024])
    path = tmp_path / "seg.zap"
    path.write_bytes(build_segment(docs, chunk_factor))
    with Segment.open(path) as segment:
        assert segment.num_docs == len(docs) and segment.chunk_factor == chunk_factor
        assert read_back(segment, rng) == brute_force(docs)


@pytest.mark.parametrize("seed", range(30))
def test_merge_reads_like_a_build_of_the_survivors(seed: int) -> None:
    rng = random.Random(1000 + seed)
    corpora, segments, drops = [], [], []
    first = 0
    shared = NAMES if rng.random() < 0.5 else None  # then the inputs' field lists are (likely) the same
    for _ in range(rng.randrange(1, 4)):
        docs = _corpus(rng, first, rng.randrange(0, 25), shared)
        first += len(docs)
        corpora.append(docs)
        segments.append(Segment(build_segment(docs, rng.choice([1, 4, 1024]))))
        drops.append({d for d in range(len(docs)) if rng.random() < 0.3})
    data, mapping = merge_segments(segments, drops)
    survivors = [doc for docs, dropped in zip(corpora, drops) for i, doc in enumerate(docs) if i not in dropped]
    if not survivors:
        assert mapping is None
    else:
        expected_map, n = [], 0
        for docs, dropped in zip(corpora, drops):
            expected_map.append([DROPPED if i in dropped else (n := n + 1) - 1 for i in range(len(docs))])
        assert mapping == expected_map
    merged = Segment(data)
    # the merged segment keeps every input field, also those only in dropped docs (with no terms)
    order = field_order({n for s in segments for n in s.field_names})
    expected = brute_force(survivors, order)
    got = read_back(merged, rng)
    assert got["fields"] == order
    if survivors:  # every _id term has one freq-1 hit without locations, from one input: 1-hit
        assert all(is_one_hit(v) for _, v in merged.dictionary("_id").items())
    for name in got["fields"]:
        assert got["postings"][name] == expected["postings"].get(name, {}), name
    assert got["stored"] == expected["stored"]
    # docvalues come from the inputs that had a section (and terms) for the field, renumbered
    doc_values: dict[str, list] = {}
    for docs, nums in zip(corpora, mapping or []):
        own = brute_force(docs)
        for name, values in sorted(own["docvalues"].items()):
            doc_values.setdefault(name, []).extend((nums[d], terms) for d, terms in values if nums[d] != DROPPED)
    assert got["docvalues"] == {name: values for name, values in doc_values.items() if values}
