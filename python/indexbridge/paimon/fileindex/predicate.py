"""Index answers and how Paimon combines them (``FileIndexResult``, ``FileIndexPredicate``, spec §8).

An index reader answers a leaf predicate with one of:

* ``REMAIN``: the index cannot exclude the file;
* ``SKIP``: no row can match;
* ``BitmapResult(rows)``: exactly these rows may match; it "remains" when non-empty.

Combining (``and`` / ``or``)::

    REMAIN.and(x) = x          SKIP.and(x) = SKIP        Bitmap.and(Bitmap) = intersection
    Bitmap.and(x) = Bitmap if x.remain else SKIP
    REMAIN.or(x)  = REMAIN     SKIP.or(x)  = x           Bitmap.or(Bitmap)  = union
    Bitmap.or(x)  = REMAIN if x.remain else Bitmap

``FileIndexPredicate.evaluate``: a leaf ANDs the answers of every index of its column, stopping
at the first result that does not remain; an AND node folds its children with ``and`` (same
early stop); an OR node folds with ``or``. A column without an index answers REMAIN. The file is
skipped when the final result does not remain.

Paimon iterates a column's readers in the order of a ``HashSet`` of reader objects (identity
hash codes, so not reproducible); the order only decides whether "no row" comes back as SKIP
or as an empty row set. indexbridge asks the row-set indexes (bitmap, BSI, range-bitmap) first,
so an empty row set is reported when one exists.

``evaluate_top_n(top_n, result)`` (Paimon's ``evaluateTopN``): ``result`` comes back unchanged
when it does not remain or is a row set of at most ``limit`` rows; otherwise the first answer
other than REMAIN of the first order's column's indexes (only range-bitmap ranks rows), else
``result``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pyroaring import BitMap

OPS = (
    "equal", "not_equal", "in", "not_in", "is_null", "is_not_null",
    "less_than", "less_or_equal", "greater_than", "greater_or_equal", "between",
)  # fmt: skip


class FileIndexResult:
    """An index answer: ``REMAIN``, ``SKIP`` or a :class:`BitmapResult`."""

    kind: str

    @property
    def remain(self) -> bool:
        raise NotImplementedError

    def and_(self, other: FileIndexResult) -> FileIndexResult:
        raise NotImplementedError

    def or_(self, other: FileIndexResult) -> FileIndexResult:
        raise NotImplementedError


class _Remain(FileIndexResult):
    kind = "remain"
    remain = True  # type: ignore[assignment]

    def and_(self, other: FileIndexResult) -> FileIndexResult:
        return other

    def or_(self, other: FileIndexResult) -> FileIndexResult:
        return self

    def __repr__(self) -> str:
        return "REMAIN"


class _Skip(FileIndexResult):
    kind = "skip"
    remain = False  # type: ignore[assignment]

    def and_(self, other: FileIndexResult) -> FileIndexResult:
        return self

    def or_(self, other: FileIndexResult) -> FileIndexResult:
        return other

    def __repr__(self) -> str:
        return "SKIP"


REMAIN: FileIndexResult = _Remain()
SKIP: FileIndexResult = _Skip()


@dataclass(eq=False)
class BitmapResult(FileIndexResult):
    """The rows (0-based row ids of the data file) that may match."""

    rows: BitMap
    kind = "bitmap"

    @property
    def remain(self) -> bool:  # type: ignore[override]
        return len(self.rows) > 0

    def and_(self, other: FileIndexResult) -> FileIndexResult:
        if isinstance(other, BitmapResult):
            return BitmapResult(self.rows & other.rows)
        return self if other.remain else SKIP

    def or_(self, other: FileIndexResult) -> FileIndexResult:
        if isinstance(other, BitmapResult):
            return BitmapResult(self.rows | other.rows)
        return REMAIN if other.remain else self

    def __repr__(self) -> str:
        return f"BitmapResult({len(self.rows)} rows)"


@dataclass(frozen=True)
class SortOrder:
    """One order of a top-N (Paimon's ``SortValue``): ``direction`` ``ASCENDING``/``DESCENDING``,
    ``null_ordering`` ``NULLS_FIRST``/``NULLS_LAST``."""

    column: str
    direction: str = "ASCENDING"
    null_ordering: str = "NULLS_LAST"


@dataclass(frozen=True)
class TopN:
    """Paimon's ``TopN``: the sort orders and the limit (indexes look at the first order only)."""

    orders: tuple[SortOrder, ...]
    limit: int


class IndexReader:
    """What every index reader offers: its type name, ``query(op, literals)`` and
    ``visit_top_n(top_n, result)`` (REMAIN unless the index can rank rows: range-bitmap)."""

    index_type: str

    def query(self, op: str, literals: Sequence[object] = ()) -> FileIndexResult:
        raise NotImplementedError

    def visit_top_n(self, top_n: TopN, result: FileIndexResult) -> FileIndexResult:
        return REMAIN


class EmptyIndex(IndexReader):
    """The reader of a container entry without payload (``start = -1``, §4.1): no row was indexed,
    so every "some value matches" question is SKIP and the rest REMAIN."""

    index_type = "empty"
    _SKIPPED = frozenset({"equal", "in", "is_not_null", "less_than", "less_or_equal", "greater_than",
                          "greater_or_equal", "starts_with", "ends_with", "contains"})  # fmt: skip

    def query(self, op: str, literals: Sequence[object] = ()) -> FileIndexResult:
        return SKIP if op in self._SKIPPED else REMAIN


# ---------------------------------------------------------------------------------------------
# Predicate trees


@dataclass(frozen=True)
class Leaf:
    op: str
    column: str
    literals: tuple = ()


@dataclass(frozen=True)
class And:
    children: tuple


@dataclass(frozen=True)
class Or:
    children: tuple


Predicate = Leaf | And | Or

_READER_ORDER = {"bitmap": 0, "bsi": 1, "range-bitmap": 2, "bloom-filter": 3, "empty": 4}


def predicate_from_json(p: dict, literal: Callable[[str, object], object] = lambda column, v: v) -> Predicate:
    """A tree from the vectors' ``{"and": [...]}`` / ``{"or": [...]}`` / ``{op, column, literals?}``.
    ``literal(column, json_value)`` converts each literal to the column's internal value."""
    if "and" in p:
        return And(tuple(predicate_from_json(c, literal) for c in p["and"]))
    if "or" in p:
        return Or(tuple(predicate_from_json(c, literal) for c in p["or"]))
    if p["op"] not in OPS:
        raise ValueError(f"unknown predicate op {p['op']!r}")
    return Leaf(p["op"], p["column"], tuple(literal(p["column"], v) for v in p.get("literals", [])))


@dataclass
class FileIndexPredicate:
    """Evaluates predicates against the index readers of one data file, keyed by column name
    (``m[key]`` for map-nested indexes)."""

    readers: Mapping[str, Sequence[IndexReader]] = field(default_factory=dict)

    def evaluate(self, predicate: Predicate | None) -> FileIndexResult:
        if predicate is None:
            return REMAIN
        if isinstance(predicate, Leaf):
            result = REMAIN
            readers = sorted(self.readers.get(predicate.column, ()), key=lambda r: _READER_ORDER.get(r.index_type, 9))
            for reader in readers:
                result = result.and_(reader.query(predicate.op, predicate.literals))
                if not result.remain:
                    break
            return result
        combined: FileIndexResult | None = None
        for child in predicate.children:
            answer = self.evaluate(child)
            if combined is None:
                combined = answer
            elif isinstance(predicate, And):
                combined = combined.and_(answer)
            else:
                combined = combined.or_(answer)
            if isinstance(predicate, And) and not combined.remain:
                break
        return REMAIN if combined is None else combined

    def evaluate_top_n(self, top_n: TopN | None, result: FileIndexResult) -> FileIndexResult:
        if top_n is None or not result.remain:
            return result
        if isinstance(result, BitmapResult) and len(result.rows) <= top_n.limit:
            return result
        for reader in self.readers.get(top_n.orders[0].column, ()):
            visit = getattr(reader, "visit_top_n", None)  # readers that do not rank answer REMAIN
            answer = REMAIN if visit is None else visit(top_n, result)
            if answer is not REMAIN:
                return answer
        return result
