"""bleve v1.0.14's query JSON, searched as bleve searches a scorch index, with its TF-IDF scores.

Queries (``query.ParseQuery``: the first key present decides the kind; other keys are read as Go
reads struct fields, case-insensitively)::

    {"term": T, "field": F, "boost": B}                 the exact term
    {"match": TEXT, "field", "analyzer", "operator": "or"|"and", "boost"}   TEXT analysed by the
                                                         field's analyzer: a disjunction (min 1) or
                                                         conjunction of term queries
    {"match_phrase": TEXT, "field", "analyzer", "boost"} the analysed terms at consecutive positions
    {"prefix": P, "field", "boost"}                     every term of the field starting with P
    {"min": X, "max": Y, "inclusive_min", "inclusive_max", "field", "boost"}   numbers (prefix-coded
                                                         terms of the precision-step ranges)
    {"conjuncts": [q, ...]}   {"disjuncts": [q, ...], "min": N}   {"match_all": {}}   {"match_none": {}}

A missing field is the mapping's ``default_field`` (``_all``). Fuzzy, boolean, query-string,
phrase ``terms``, range over terms or dates, regexp, wildcard, ids, bool-field and geo queries
are refused with an error naming them.

Planning (:func:`plan`) builds bleve's searcher tree with the index-wide numbers it needs, and
evaluation (:func:`evaluate`) runs it over one segment at a time, so a segment's hits can be
computed anywhere (Spark tasks) once the plan is made::

    term       score = sqrt(freq) * norm * idf [* queryWeight]      idf = 1 + ln(docCount / (docFreq + 1))
               docCount: live documents; docFreq: live documents with the term; norm: the float32
               1/sqrt(field length) zap stores
    conjunction  every child matches; the sum of the children's scores (children by docFreq, ascending)
    disjunction  at least ``min`` (>= 1) children match; sum * matched / children (children by
                 docFreq, descending; more than 10 in the given order); a match, prefix or range
                 query is one over its terms
    phrase     the conjunction of its terms, kept where the terms follow one another (positions
               +1, same array positions, per location field: ``_all`` keeps its source fields apart)
    match_all  1 [* queryWeight]
    queryWeight = boost * idf * queryNorm (match_all: boost * queryNorm), queryNorm =
               1/sqrt(sum of the squared boost*idf of the top composite's leaves); a lone term or
               match_all query has none. Boosts of conjunctions and disjunctions are ignored.

Prefix terms and range terms come from the union of the segments' dictionaries (terms whose
documents are all deleted included, as bleve does). Hits are ordered by score, descending, then
by index order (segments in snapshot order, then document number), as bleve's collector does.
Scores are summed in bleve's order, except that a disjunction of more than 10 children (a prefix
or range query over many terms) sums a document's matches in the order of its terms where bleve
sums them in the order its heap pops them: when a document matches three or more of them, its
score may differ from bleve's in the last bits (about 1e-16 relative), and two hits whose scores
differ only there may come in the other order.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pyroaring import BitMap

from indexbridge.bleve.mapping import IndexMapping, go_string
from indexbridge.bytes import list_offsets, ragged_arange
from indexbridge.errors import IndexFormatError
from indexbridge.zap.analyzers import ANALYZERS, analyze, float64_to_int64, prefix_coded_int64
from indexbridge.zap.postings import PostingsColumns
from indexbridge.zap.segment import Segment

_MASK64 = (1 << 64) - 1
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
QUERY_SOURCE = "query"


def _query_error(expected: str, source: str = QUERY_SOURCE) -> IndexFormatError:
    return IndexFormatError(source, 0, expected)


# -- the query AST (bleve's query package) -------------------------------------------------------


@dataclass
class TermQuery:
    term: str
    field: str = ""
    boost: float | None = None


@dataclass
class MatchQuery:
    match: str
    field: str = ""
    analyzer: str = ""
    operator: str = "or"
    boost: float | None = None


@dataclass
class MatchPhraseQuery:
    match_phrase: str
    field: str = ""
    analyzer: str = ""
    boost: float | None = None


@dataclass
class PrefixQuery:
    prefix: str
    field: str = ""
    boost: float | None = None


@dataclass
class NumericRangeQuery:
    min: float | None = None
    max: float | None = None
    inclusive_min: bool | None = None
    inclusive_max: bool | None = None
    field: str = ""
    boost: float | None = None


@dataclass
class ConjunctionQuery:
    conjuncts: list
    boost: float | None = None


@dataclass
class DisjunctionQuery:
    disjuncts: list
    min: float = 0.0
    boost: float | None = None


@dataclass
class MatchAllQuery:
    boost: float | None = None


@dataclass
class MatchNoneQuery:
    boost: float | None = None


Query = (TermQuery | MatchQuery | MatchPhraseQuery | PrefixQuery | NumericRangeQuery | ConjunctionQuery
         | DisjunctionQuery | MatchAllQuery | MatchNoneQuery)

# ParseQuery's order: the first of these keys present decides the kind (after "fuzziness" without "match").
_UNSUPPORTED_KEYS = (("must", "boolean"), ("should", "boolean"), ("must_not", "boolean"), ("terms", "phrase"),
                     ("query", "query string"))


def _field(obj: Mapping, key: str) -> Any:
    """Go's struct field lookup: the exact key, else a case-insensitive match (the last one)."""
    if key in obj:
        return obj[key]
    found = None
    for k, v in obj.items():
        if k.lower() == key:
            found = v
    return found


def _string(obj: Mapping, key: str, kind: str, default: str = "") -> str:
    v = _field(obj, key)
    if v is None:
        return default
    if not isinstance(v, str):
        raise _query_error(f"a {kind} query: {key} must be a JSON string, found {json.dumps(v)}")
    return go_string(v)


def _number(obj: Mapping, key: str, kind: str) -> float | None:
    v = _field(obj, key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _query_error(f"a {kind} query: {key} must be a JSON number, found {json.dumps(v)}")
    return float(v)


def _bool(obj: Mapping, key: str, kind: str) -> bool | None:
    v = _field(obj, key)
    if v is None:
        return None
    if not isinstance(v, bool):
        raise _query_error(f"a {kind} query: {key} must be true or false, found {json.dumps(v)}")
    return v


def parse_query(query: str | bytes | Mapping, source: str = QUERY_SOURCE) -> Query:
    """bleve's ``query.ParseQuery`` for the supported kinds; :class:`IndexFormatError` otherwise."""
    if isinstance(query, (str, bytes)):
        try:
            obj = json.loads(query)
        except (ValueError, UnicodeDecodeError) as e:
            raise IndexFormatError(source, getattr(e, "pos", 0) or 0, f"a bleve query in JSON: {getattr(e, 'msg', e)}") from None
    else:
        obj = query
    try:
        return _parse(obj)
    except IndexFormatError as e:
        if source != QUERY_SOURCE:
            raise IndexFormatError(source, e.offset, e.expected) from None
        raise


def _parse(obj: Any) -> Query:
    if not isinstance(obj, Mapping):
        raise _query_error(f"a bleve query: a JSON object, found {json.dumps(obj)[:40]}")
    if "fuzziness" in obj and "match" not in obj:
        raise _query_error("a supported query: fuzzy queries are not supported")
    boost = _number(obj, "boost", "query")
    if "term" in obj:
        return TermQuery(_string(obj, "term", "term"), _string(obj, "field", "term"), boost)
    if "match" in obj:
        fuzziness = _field(obj, "fuzziness")
        if fuzziness not in (None, 0):
            raise _query_error("a supported query: match queries with fuzziness are not supported")
        operator = _field(obj, "operator")
        if operator is None:
            operator = "or"
        if operator not in ("or", "and"):
            raise _query_error(f"a match query: operator 'or' or 'and', found {json.dumps(operator)}")
        return MatchQuery(_string(obj, "match", "match"), _string(obj, "field", "match"), _string(obj, "analyzer", "match"),
                          operator, boost)
    if "match_phrase" in obj:
        return MatchPhraseQuery(_string(obj, "match_phrase", "match_phrase"), _string(obj, "field", "match_phrase"),
                                _string(obj, "analyzer", "match_phrase"), boost)
    for key, kind in _UNSUPPORTED_KEYS:
        if key in obj:
            raise _query_error(f"a supported query: {kind} queries are not supported")
    if "conjuncts" in obj:
        items = _field(obj, "conjuncts")
        if not isinstance(items, list):
            raise _query_error("a conjunction query: conjuncts must be a JSON array")
        return ConjunctionQuery([_parse(q) for q in items], boost)
    if "disjuncts" in obj:
        items = _field(obj, "disjuncts")
        if not isinstance(items, list):
            raise _query_error("a disjunction query: disjuncts must be a JSON array")
        minimum = _number(obj, "min", "disjunction") or 0.0
        return DisjunctionQuery([_parse(q) for q in items], minimum, boost)
    min_v, max_v = obj.get("min"), obj.get("max")
    is_num = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)  # noqa: E731
    if is_num(min_v) or is_num(max_v):
        return NumericRangeQuery(_number(obj, "min", "numeric range"), _number(obj, "max", "numeric range"),
                                 _bool(obj, "inclusive_min", "numeric range"), _bool(obj, "inclusive_max", "numeric range"),
                                 _string(obj, "field", "numeric range"), boost)
    if isinstance(min_v, str) or isinstance(max_v, str):
        raise _query_error("a supported query: term range queries are not supported")
    if "start" in obj or "end" in obj:
        raise _query_error("a supported query: date range queries are not supported")
    if "prefix" in obj:
        return PrefixQuery(_string(obj, "prefix", "prefix"), _string(obj, "field", "prefix"), boost)
    for key, kind in (("regexp", "regexp"), ("wildcard", "wildcard")):
        if key in obj:
            raise _query_error(f"a supported query: {kind} queries are not supported")
    if "match_all" in obj:
        return MatchAllQuery(boost)
    if "match_none" in obj:
        return MatchNoneQuery(boost)
    for key, kind in (("ids", "doc id"), ("bool", "bool field"), ("top_left", "geo"), ("distance", "geo"), ("polygon_points", "geo")):
        if key in obj:
            raise _query_error(f"a supported query: {kind} queries are not supported")
    raise _query_error(f"a bleve query: unknown query type {json.dumps(obj)[:60]}")


def _boost(b: float | None) -> float:
    return 1.0 if b is None else b


# -- the searcher tree --------------------------------------------------------------------------


@dataclass
class TermNode:
    field: str
    term: bytes
    boost: float
    count: int  # live documents with the term (docFreq)
    idf: float
    query_weight: float = 1.0

    def weight(self) -> float:
        s = self.boost * self.idf
        return s * s

    def set_norm(self, norm: float) -> None:
        self.query_weight = self.boost * self.idf * norm


@dataclass
class ConjunctionNode:
    children: list  # ordered as bleve's OrderedSearcherList (docFreq ascending)

    @property
    def count(self) -> int:
        return sum(c.count for c in self.children)

    def weight(self) -> float:
        total = 0.0
        for c in self.children:
            total += c.weight()
        return total

    def set_norm(self, norm: float) -> None:
        for c in self.children:
            c.set_norm(norm)


@dataclass
class DisjunctionNode:
    children: list  # docFreq descending
    min: int = 0

    @property
    def count(self) -> int:
        return sum(c.count for c in self.children)

    def weight(self) -> float:
        total = 0.0
        for c in self.children:
            total += c.weight()
        return total

    def set_norm(self, norm: float) -> None:
        for c in self.children:
            c.set_norm(norm)


@dataclass
class PhraseNode:
    must: ConjunctionNode
    terms: list  # per position: the terms (bytes) there; [] for a gap

    @property
    def count(self) -> int:
        return self.must.count

    def weight(self) -> float:
        return self.must.weight()

    def set_norm(self, norm: float) -> None:
        self.must.set_norm(norm)


@dataclass
class MatchAllNode:
    boost: float
    count: int
    query_weight: float = 1.0

    def weight(self) -> float:
        return self.boost * self.boost

    def set_norm(self, norm: float) -> None:
        self.query_weight = self.boost * norm


@dataclass
class MatchNoneNode:
    count: int = 0

    def weight(self) -> float:
        return 0.0

    def set_norm(self, norm: float) -> None:
        pass


Node = TermNode | ConjunctionNode | DisjunctionNode | PhraseNode | MatchAllNode | MatchNoneNode


def _query_norm(weight: float) -> float:
    return 1.0 / math.sqrt(weight) if weight > 0 else math.inf


class IndexStats:
    """The index-wide numbers a plan needs, over the segments of one snapshot:
    ``segments`` is a list of (Segment, deleted BitMap or None)."""

    def __init__(self, segments: list[tuple[Segment, BitMap | None]]) -> None:
        self.segments = segments
        self.doc_count = sum(s.num_docs - (len(d) if d else 0) for s, d in segments)
        self._counts: dict[tuple[str, bytes], int] = {}
        self._deleted = [None if not d else np.array(d, dtype=np.uint32) for _, d in segments]

    def count(self, field: str, term: bytes) -> int:
        key = (field, term)
        found = self._counts.get(key)
        if found is None:
            found = 0
            for (seg, _), deleted in zip(self.segments, self._deleted):
                if seg.field(field) is None:
                    continue
                docs = seg.dictionary(field).postings(term).docs
                found += len(docs) - (int(np.isin(docs, deleted).sum()) if deleted is not None and len(docs) else 0)
            self._counts[key] = found
        return found

    def contains(self, field: str, term: bytes) -> bool:
        for seg, _ in self.segments:
            if seg.field(field) is not None:
                fst = seg.dictionary(field).fst
                if fst is not None and fst.get(term) is not None:
                    return True
        return False

    def prefix_terms(self, field: str, prefix: bytes) -> list[bytes]:
        terms: set[bytes] = set()
        for seg, _ in self.segments:
            if seg.field(field) is not None:
                terms.update(t for t, _ in seg.dictionary(field).prefix(prefix))
        return sorted(terms)


def _term_node(stats: IndexStats, field: str, term: bytes, boost: float) -> TermNode:
    count = stats.count(field, term)
    total = stats.doc_count
    idf = 1.0 + (math.log(total / (count + 1)) if total else -math.inf)
    return TermNode(field, term, boost, count, idf)


def _conjunction(children: list) -> ConjunctionNode:
    return ConjunctionNode(sorted(children, key=lambda c: c.count))  # stable, as Go's insertion sort


DISJUNCTION_HEAP_TAKEOVER = 10  # searcher.DisjunctionHeapTakeover


def _disjunction(children: list, minimum: float) -> DisjunctionNode:
    """bleve's slice disjunction sorts its children by docFreq, descending (stable); with more
    than 10 children it is the heap disjunction, which keeps them in the given order."""
    if len(children) > DISJUNCTION_HEAP_TAKEOVER:
        return DisjunctionNode(list(children), int(minimum))
    return DisjunctionNode(sorted(children, key=lambda c: -c.count), int(minimum))


def _analyzer(mapping: IndexMapping, field: str, requested: str, kind: str) -> str:
    name = requested or mapping.analyzer_for_path(field)
    if name not in ANALYZERS:
        raise _query_error(f"a {kind} query over field {field!r}: analyzer {name!r} is not supported "
                           f"(analyzers: {', '.join(ANALYZERS)})")
    return name


def _split_int64_range(min_bound: int, max_bound: int, step: int = 4) -> list[tuple[bytes, bytes]]:
    """bleve's ``splitInt64Range`` (int64 arithmetic wraps as in Go): the (start, end) prefix-coded terms."""
    def w(x: int) -> int:
        return ((x + (1 << 63)) & _MASK64) - (1 << 63)

    def new_range(lo: int, hi: int, shift: int) -> tuple[bytes, bytes]:
        hi = w(hi | w((1 << shift) - 1))
        return prefix_coded_int64(lo, shift), prefix_coded_int64(hi, shift)

    out: list[tuple[bytes, bytes]] = []
    if min_bound > max_bound:
        return out
    shift = 0
    while True:
        diff = w(1 << (shift + step)) if shift + step < 64 else 0
        mask = w(((1 << step) - 1) << shift)
        has_lower = (min_bound & mask) != 0
        has_upper = (max_bound & mask) != mask
        next_min = w(w(min_bound + diff) & ~mask) if has_lower else w(min_bound & ~mask)
        next_max = w(w(max_bound - diff) & ~mask) if has_upper else w(max_bound & ~mask)
        lower_wrapped = next_min < min_bound
        upper_wrapped = next_max > max_bound
        if shift + step >= 64 or next_min > next_max or lower_wrapped or upper_wrapped:
            out.append(new_range(min_bound, max_bound, shift))
            break
        if has_lower:
            out.append(new_range(min_bound, w(min_bound | mask), shift))
        if has_upper:
            out.append(new_range(w(max_bound & ~mask), max_bound, shift))
        min_bound, max_bound = next_min, next_max
        shift += step
    return out


def _increment(term: bytes) -> bytes:
    out = bytearray(term)
    for i in range(len(out) - 1, -1, -1):
        out[i] = (out[i] + 1) & 0xFF
        if out[i]:
            break
    return bytes(out)


def numeric_range_terms(stats: IndexStats, field: str, q: NumericRangeQuery) -> list[bytes]:
    """``NewNumericRangeSearcher``'s terms: each range enumerated, kept if some dictionary has it."""
    lo = -math.inf if q.min is None else q.min
    hi = math.inf if q.max is None else q.max
    inc_min = True if q.inclusive_min is None else q.inclusive_min
    inc_max = False if q.inclusive_max is None else q.inclusive_max
    min_i, max_i = float64_to_int64(lo), float64_to_int64(hi)
    if not inc_min and min_i != _INT64_MAX:
        min_i += 1
    if not inc_max and max_i != _INT64_MIN:
        max_i -= 1
    terms = []
    for start, end in _split_int64_range(min_i, max_i):
        term = start
        while term <= end:
            if stats.contains(field, term):
                terms.append(term)
            term = _increment(term)
    return terms


def plan(query: Query, mapping: IndexMapping, stats: IndexStats) -> Node:
    """bleve's searcher tree for ``query``, with the index-wide numbers and the query norm set."""
    root = _build(query, mapping, stats)
    if isinstance(root, (ConjunctionNode, DisjunctionNode, PhraseNode)):
        root.set_norm(_query_norm(root.weight()))
    return root


def _build(q: Query, mapping: IndexMapping, stats: IndexStats) -> Node:
    field_of = lambda f: f or mapping.default_field  # noqa: E731
    if isinstance(q, TermQuery):
        return _term_node(stats, field_of(q.field), q.term.encode(), _boost(q.boost))
    if isinstance(q, MatchQuery):
        fld = field_of(q.field)
        tokens = analyze(q.match, _analyzer(mapping, fld, q.analyzer, "match"))
        if not tokens:
            return MatchNoneNode()
        boost = _boost(q.boost)
        terms = [_term_node(stats, fld, t.term, boost) for t in tokens]
        return _disjunction(terms, 1) if q.operator == "or" else _conjunction(terms)
    if isinstance(q, MatchPhraseQuery):
        fld = field_of(q.field)
        tokens = analyze(q.match_phrase, _analyzer(mapping, fld, q.analyzer, "match_phrase"))
        if not tokens:
            return MatchNoneNode()
        first = min(t.position for t in tokens)
        last = max(t.position for t in tokens)
        slots: list[list[bytes]] = [[] for _ in range(last - first + 1)]
        for t in tokens:
            slots[t.position - first].append(t.term)
        children = []
        for slot in slots:
            if len(slot) == 1 and slot[0]:
                children.append(_term_node(stats, fld, slot[0], 1.0))
            elif len(slot) > 1:
                children.append(_disjunction([_term_node(stats, fld, t, 1.0) for t in slot if t], 1))
        must = _conjunction(children)
        return PhraseNode(must, slots)
    if isinstance(q, PrefixQuery):
        fld = field_of(q.field)
        terms = stats.prefix_terms(fld, q.prefix.encode())
        return _disjunction([_term_node(stats, fld, t, _boost(q.boost)) for t in terms], 0)
    if isinstance(q, NumericRangeQuery):
        if q.min is None and q.max is None:
            raise _query_error("a numeric range query: min or max")
        fld = field_of(q.field)
        terms = numeric_range_terms(stats, fld, q)
        return _disjunction([_term_node(stats, fld, t, _boost(q.boost)) for t in terms], 0)
    if isinstance(q, ConjunctionQuery):
        children = [_build(c, mapping, stats) for c in q.conjuncts]
        return _conjunction(children) if children else MatchNoneNode()
    if isinstance(q, DisjunctionQuery):
        if int(q.min) > len(q.disjuncts):
            raise _query_error("a disjunction query: fewer than the minimum number of clauses to satisfy")
        children = [_build(c, mapping, stats) for c in q.disjuncts]
        return _disjunction(children, q.min) if children else MatchNoneNode()
    if isinstance(q, MatchAllQuery):
        return MatchAllNode(_boost(q.boost), stats.doc_count)
    if isinstance(q, MatchNoneQuery):
        return MatchNoneNode()
    raise TypeError(f"not a query: {q!r}")


# -- evaluation over one segment ------------------------------------------------------------------


class SegmentView:
    """One segment with its deletions, as the evaluation reads it. The postings of the term
    leaves of ``plan`` are decoded together, a field's at once (columnar), on the first read of
    that field: a phrase's with their locations, the others without (scoring needs none);
    another term is decoded alone."""

    def __init__(self, segment: Segment, deleted: BitMap | None, plan: Node | None = None) -> None:
        self.segment = segment
        self.deleted = None if not deleted else np.array(deleted, dtype=np.uint32)
        # (field, with locations) -> term -> its index in those columns
        self._planned: dict[tuple[str, bool], dict[bytes, int]] = {}
        if plan is not None:
            self._plan(plan, False)
        self._columns: dict[tuple[str, bool], PostingsColumns] = {}

    def _plan(self, node: Node, located: bool) -> None:
        if isinstance(node, TermNode):
            terms = self._planned.setdefault((node.field, located), {})
            terms.setdefault(node.term, len(terms))
        elif isinstance(node, PhraseNode):  # its scoring reads the terms with their locations too
            self._plan(node.must, True)
        elif isinstance(node, (ConjunctionNode, DisjunctionNode)):
            for child in node.children:
                self._plan(child, located)

    def live(self, docs: np.ndarray) -> np.ndarray:
        """A mask over ``docs``: not deleted."""
        if self.deleted is None or not len(docs):
            return np.ones(len(docs), dtype=bool)
        return ~np.isin(docs, self.deleted)

    def _hits_of(self, fld: str, term: bytes, locations: bool) -> tuple[PostingsColumns, int]:
        """The columns holding the hits of ``term`` in ``fld`` (a field the segment has), with
        their locations if ``locations``, and its index there."""
        key = (fld, True)
        if not locations and term not in self._planned.get(key, ()):
            key = (fld, False)
        planned = self._planned.get(key, {})
        if term not in planned:
            return self.segment.dictionary(fld).postings_columns([term], locations), 0
        columns = self._columns.get(key)
        if columns is None:
            columns = self._columns[key] = self.segment.dictionary(fld).postings_columns(list(planned), key[1])
        return columns, planned[term]

    def postings(self, fld: str, term: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(docs int64, freqs, norms float64) of the live hits."""
        if self.segment.field(fld) is None:
            empty = np.empty(0, dtype=np.int64)
            return empty, empty, np.empty(0)
        columns, i = self._hits_of(fld, term, False)
        lo, hi = columns.hit_offsets[i : i + 2].tolist()
        docs = columns.docs[lo:hi].astype(np.int64)
        keep = self.live(docs)
        return docs[keep], columns.freqs[lo:hi][keep].astype(np.float64), columns.norms[lo:hi][keep].astype(np.float64)

    def locations(self, fld: str, term: bytes, docs: np.ndarray) -> tuple[list[int], list[list[tuple[str, int, tuple[int, ...]]]]]:
        """The docs of ``docs`` (live ones) with ``term`` in ``fld``, ascending, and the term's
        locations in each: (field name, position, array positions)."""
        seg = self.segment
        if seg.field(fld) is None:
            return [], []
        columns, i = self._hits_of(fld, term, True)
        lo, hi = columns.hit_offsets[i : i + 2].tolist()
        hits = lo + np.flatnonzero(np.isin(columns.docs[lo:hi], docs))
        loc_offsets, ap_offsets = columns.location_offsets, columns.array_position_offsets
        counts = loc_offsets[hits + 1] - loc_offsets[hits]
        located = ragged_arange(loc_offsets[hits], counts)  # the picked hits' locations, in order
        ap_counts = ap_offsets[located + 1] - ap_offsets[located]
        aps = columns.array_positions[ragged_arange(ap_offsets[located], ap_counts)].tolist()
        ap_bounds = list_offsets(ap_counts).tolist()
        names = seg.field_names
        locs = [(names[f] if f < len(names) else "", p, tuple(aps[a:b]))
                for f, p, a, b in zip(columns.field_ids[located].tolist(), columns.pos[located].tolist(), ap_bounds, ap_bounds[1:])]
        bounds = list_offsets(counts).tolist()
        return columns.docs[hits].tolist(), [locs[a:b] for a, b in zip(bounds, bounds[1:])]


_EMPTY = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64))


def evaluate(node: Node, view: SegmentView) -> tuple[np.ndarray, np.ndarray]:
    """(doc numbers, scores) of the live documents of one segment that ``node`` matches, by doc."""
    if isinstance(node, TermNode):
        docs, freqs, norms = view.postings(node.field, node.term)
        scores = np.sqrt(freqs) * norms * node.idf
        if node.query_weight != 1.0:
            scores = scores * node.query_weight
        return docs, scores
    if isinstance(node, ConjunctionNode):
        results = [evaluate(c, view) for c in node.children]
        return _intersect(results)
    if isinstance(node, DisjunctionNode):
        return _union(node, [evaluate(c, view) for c in node.children])
    if isinstance(node, PhraseNode):
        return _phrase(node, view)
    if isinstance(node, MatchAllNode):
        seg = view.segment
        docs = np.arange(seg.num_docs, dtype=np.int64)
        docs = docs[view.live(docs)]
        score = 1.0 * node.query_weight if node.query_weight != 1.0 else 1.0
        return docs, np.full(len(docs), score)
    if isinstance(node, MatchNoneNode):
        return _EMPTY
    raise TypeError(f"not a searcher node: {node!r}")


def _intersect(results: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    if not results:
        return _EMPTY
    docs = results[0][0]
    for d, _ in results[1:]:
        docs = np.intersect1d(docs, d, assume_unique=True)
    total = np.zeros(len(docs))
    for d, s in results:
        total += s[np.searchsorted(d, docs)]
    return docs, total


def _union(node: DisjunctionNode, results: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    if not results:
        return _EMPTY
    docs = np.unique(np.concatenate([d for d, _ in results])) if results else np.empty(0, dtype=np.int64)
    total = np.zeros(len(docs))
    count = np.zeros(len(docs), dtype=np.int64)
    for d, s in results:
        at = np.searchsorted(docs, d)
        total[at] += s
        count[at] += 1
    keep = count >= max(node.min, 1)
    coord = count[keep].astype(np.float64) / float(len(node.children))
    return docs[keep], total[keep] * coord


def _leaves(node: Node) -> list[TermNode]:
    if isinstance(node, TermNode):
        return [node]
    if isinstance(node, (ConjunctionNode, DisjunctionNode)):
        return [leaf for c in node.children for leaf in _leaves(c)]
    return []


def _phrase(node: PhraseNode, view: SegmentView) -> tuple[np.ndarray, np.ndarray]:
    docs, scores = evaluate(node.must, view)
    if not len(docs):
        return docs, scores
    # doc -> location field -> term -> locations, over every term searcher of the phrase (bleve
    # merges them), for the docs that have them all
    by_doc: dict[int, dict[str, dict[bytes, list]]] = {}
    for leaf in _leaves(node.must):
        for doc, doc_locs in zip(*view.locations(leaf.field, leaf.term, docs)):
            fields = by_doc.setdefault(doc, {})
            for fld, pos, aps in doc_locs:
                fields.setdefault(fld, {}).setdefault(leaf.term, []).append((pos, aps))
    keep = np.array([any(_phrase_paths(node.terms, tlm) for tlm in by_doc.get(doc, {}).values()) for doc in docs.tolist()], dtype=bool)
    return docs[keep], scores[keep]


def _phrase_paths(slots: list[list[bytes]], tlm: dict[bytes, list]) -> bool:
    """Whether ``findPhrasePaths`` (slop 0) finds a path through one location field's terms."""
    def walk(i: int, prev_pos: int, aps: tuple) -> bool:
        if i == len(slots):
            return True
        slot = slots[i]
        if not slot or slot == [b""]:
            next_pos = prev_pos + 1 if prev_pos else 0
            return walk(i + 1, next_pos, aps)
        for term in slot:
            for pos, loc_aps in tlm.get(term, ()):
                if prev_pos and tuple(loc_aps) != tuple(aps):
                    continue
                if prev_pos and pos != prev_pos + 1:
                    continue
                if walk(i + 1, pos, loc_aps):
                    return True
        return False

    return walk(0, 0, ())


# -- searching a whole index ----------------------------------------------------------------------


@dataclass
class SearchResult:
    total: int
    hits: list[tuple[str, float]] = field(default_factory=list)


def search_segments(segments: list[tuple[Segment, BitMap | None]], mapping: IndexMapping, query: Query | str | Mapping,
                    size: int | None = None) -> SearchResult:
    """Every hit of ``query`` (or the first ``size``), ordered as bleve orders them."""
    q = query if isinstance(query, (TermQuery, MatchQuery, MatchPhraseQuery, PrefixQuery, NumericRangeQuery, ConjunctionQuery,
                                     DisjunctionQuery, MatchAllQuery, MatchNoneQuery)) else parse_query(query)
    root = plan(q, mapping, IndexStats(segments))
    seg_ix, docs_all, scores_all = [], [], []
    for k, (seg, deleted) in enumerate(segments):
        docs, scores = evaluate(root, SegmentView(seg, deleted, root))
        seg_ix.append(np.full(len(docs), k, dtype=np.int64))
        docs_all.append(docs)
        scores_all.append(scores)
    if not docs_all:
        return SearchResult(0, [])
    segs = np.concatenate(seg_ix)
    docs = np.concatenate(docs_all)
    scores = np.concatenate(scores_all)
    order = np.lexsort((docs, segs, -scores))
    if size is not None:
        order = order[:size]
    hit_segs, hit_docs = segs[order], docs[order]
    ids = [b""] * len(order)
    for k in np.unique(hit_segs).tolist():  # each segment's ids at once, in the hits' order
        at = np.flatnonzero(hit_segs == k)
        for i, doc_id in zip(at.tolist(), segments[k][0].doc_ids(hit_docs[at])):
            ids[i] = doc_id
    hits = [(i.decode("utf-8", "replace"), sc) for i, sc in zip(ids, scores[order].tolist())]
    return SearchResult(len(docs), hits)


def search(index, query: Query | str | Mapping, size: int | None = None) -> SearchResult:
    """Search a :class:`indexbridge.bleve.index.BleveIndex` at its current snapshot."""
    segments = [(e.segment, e.deleted) for e in index.segments]
    return search_segments(segments, index.mapping, query, size)


__all__ = ["ConjunctionQuery", "DisjunctionQuery", "IndexStats", "MatchAllQuery", "MatchNoneQuery", "MatchPhraseQuery",
           "MatchQuery", "NumericRangeQuery", "PrefixQuery", "SearchResult", "SegmentView", "TermQuery", "evaluate",
           "numeric_range_terms", "parse_query", "plan", "search", "search_segments"]
