"""Generated analysed corpora and the brute-force index a zap reader must report for them.

Shared by the reader/merge property tests (test_zap_segment.py) and the Python-vs-Scala byte
comparison (test_zap_cross_language.py). A corpus mixes field names (non-ASCII too), repeated
instances, array positions, term vectors on/off, docvalues, stored/unstored and unindexed
fields, empty documents (only ``_id``), an ``_all`` composite, and unicode, empty and non-UTF-8
terms.
"""

from __future__ import annotations

import random

from indexbridge.zap.analysis import CompositeField, Document, Field, Token, TokenLocation, id_field
from indexbridge.errors import IndexFormatError
from indexbridge.zap.postings import Location, PostingsList, norm_bits
from indexbridge.zap.segment import Segment, field_order

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


def corpus(rng: random.Random, first_id: int, size: int, names: list[str] | None = None) -> list[Document]:
    """``size`` documents with ids ``doc<first_id>``...; field names drawn from ``names`` (default: a random subset)."""
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


def hits_or_error(decode) -> object:
    """The hits ``decode()`` yields, or IndexFormatError if it raises one."""
    try:
        return list(decode())
    except IndexFormatError as e:
        return type(e)


def check_columns(segment: Segment, values: list[int], dict_offset: int) -> None:
    """The columnar read of ``values`` at once gives every list's checked hits, or raises an
    IndexFormatError naming the segment and an offset in it when the checked decoder (or the
    record read) of any of them raises."""
    expected = []
    for value in values:
        try:
            pl = segment.postings_at(value, dict_offset)
        except IndexFormatError:
            expected = IndexFormatError
            break
        hits = hits_or_error(lambda: (h.posting for h in PostingsList(pl.docs, None, pl._record)._decode()))
        if hits is IndexFormatError:
            expected = IndexFormatError
            break
        expected.append(hits)
    try:  # without locations: they are not read, so damage to them alone may go unnoticed
        hits = segment.postings_columns_at(values, dict_offset, locations=False)
    except IndexFormatError as e:
        assert expected is IndexFormatError, e
        assert e.source == segment.source and 0 <= e.offset < len(segment.data) and e.expected
    else:
        assert len(hits) == len(values) and hits.location_offsets.max(initial=0) == 0 and not len(hits.field_ids)
        if expected is not IndexFormatError:
            assert [[(p.doc, p.freq, p.norm_bits, p.locations is not None) for p in hits.postings(i)] for i in range(len(values))] == \
                [[(p.doc, p.freq, p.norm_bits, p.locations is not None) for p in term] for term in expected]
    try:
        columns = segment.postings_columns_at(values, dict_offset)
    except IndexFormatError as e:
        assert expected is IndexFormatError, e
        assert e.source == segment.source and 0 <= e.offset < len(segment.data) and e.expected
        return
    assert expected is not IndexFormatError
    assert [columns.postings(i) for i in range(len(values))] == expected
