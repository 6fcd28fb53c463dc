"""Testing a predicate against min/max statistics, as Paimon's scan does
(``LeafPredicate.test(rowCount, min, max, nullCounts)``, ``SimpleStatsEvolution``).

A file's (or a partition range's) statistics are, per column, ``min``, ``max`` (internal values,
``None`` when unknown) and ``null_count`` (``None`` when unknown). A leaf keeps the file when::

    unknown bounds (min or max None) and not all rows null   -> keep
    nulls == rows                                             -> drop (for comparisons)
    equal: min <= v <= max        not_equal: v != min or v != max
    less_than: v > min            less_or_equal: v >= min
    greater_than: v < max         greater_or_equal: v <= max
    in: some v in [min, max]      not_in: no v equals both min and max
    between(a, b): a <= max and b >= min
    is_null: nulls unknown or > 0   is_not_null: nulls unknown or < rows

AND keeps when every child keeps, OR when one does; ``UNDECIDED`` (an empty AND) keeps. Values
compare as Java's ``compareTo`` does (:func:`java_order`): strings by UTF-8 bytes, binary by
signed bytes, floats with -0.0 < 0.0 and NaN above everything, timestamps by millis then nanos.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from indexbridge.paimon.binary_row import Timestamp
from indexbridge.paimon.fileindex.predicate import And, Leaf, Or, Predicate


def java_order(value: object) -> object:
    """A key whose Python order is the Java ``compareTo`` order of the internal value."""
    if isinstance(value, float):
        return (1, 0.0, 0.0) if math.isnan(value) else (0, value, math.copysign(1.0, value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return tuple(b - 256 if b > 127 else b for b in bytes(value))
    if isinstance(value, Timestamp):
        return (value.millisecond, value.nano_of_millisecond)
    return value


@dataclass(frozen=True)
class ColumnStats:
    min: object
    max: object
    null_count: int | None


Stats = Callable[[str], ColumnStats | None]
"""Statistics by column name; None when the column has none (the leaf keeps)."""


def _compare(a: object, b: object) -> int:
    a, b = java_order(a), java_order(b)
    return (a > b) - (a < b)


def _leaf(p: Leaf, row_count: int, s: ColumnStats) -> bool:
    nc = s.null_count
    if (nc is None or nc != row_count) and (s.min is None or s.max is None):
        return True  # unknown bounds, not all null
    if p.op == "is_null":
        return nc is None or nc > 0
    if p.op == "is_not_null":
        return nc is None or nc < row_count
    if nc is not None and nc == row_count:
        return False  # every row null: no comparison holds
    lo, hi = s.min, s.max
    match p.op:
        case "equal":
            v = p.literals[0]
            return _compare(v, lo) >= 0 and _compare(v, hi) <= 0
        case "not_equal":
            v = p.literals[0]
            return _compare(v, lo) != 0 or _compare(v, hi) != 0
        case "less_than":
            return _compare(p.literals[0], lo) > 0
        case "less_or_equal":
            return _compare(p.literals[0], lo) >= 0
        case "greater_than":
            return _compare(p.literals[0], hi) < 0
        case "greater_or_equal":
            return _compare(p.literals[0], hi) <= 0
        case "in":
            return any(_compare(v, lo) >= 0 and _compare(v, hi) <= 0 for v in p.literals)
        case "not_in":
            return not any(_compare(v, lo) == 0 and _compare(v, hi) == 0 for v in p.literals)
        case "between":
            a, b = p.literals
            return _compare(a, hi) <= 0 and _compare(b, lo) >= 0
    raise AssertionError(p.op)


def test(predicate: Predicate, row_count: int, stats: Stats) -> bool:
    """Whether the rows these statistics describe may hold a row the predicate keeps."""
    if isinstance(predicate, Leaf):
        s = stats(predicate.column)
        return True if s is None else _leaf(predicate, row_count, s)
    if isinstance(predicate, And):
        return all(test(c, row_count, stats) for c in predicate.children)
    return any(test(c, row_count, stats) for c in predicate.children)


# ---------------------------------------------------------------------------------------------
# Predicate surgery shared by the scan

_IN_EXPANSION_LIMIT = 20  # PredicateBuilder.in: larger IN lists stay one leaf


def paimon_shape(p: Predicate) -> Predicate:
    """The tree Paimon's ``PredicateBuilder`` builds for the same condition, which its file
    indexes then answer: an IN of 1..20 literals is an OR of ``=`` (NOT IN: an AND of ``<>``);
    ``and`` flattens and merges a column's ``<=`` and ``>=`` into BETWEEN when the range is not
    empty (``Between.optimize``) — a bitmap index answers BETWEEN with REMAIN but the two bounds
    with rows, so the shape decides which files are read."""
    if isinstance(p, Leaf):
        if p.op in ("in", "not_in") and 1 <= len(p.literals) <= _IN_EXPANSION_LIMIT:
            if p.op == "in":
                return _or([Leaf("equal", p.column, (v,)) for v in p.literals])
            negated = [Leaf("not_equal", p.column, (v,)) for v in p.literals]
            return negated[0] if len(negated) == 1 else And(tuple(negated))
        return p
    if isinstance(p, Or):
        return _or([paimon_shape(c) for c in p.children])
    return _and([paimon_shape(c) for c in p.children]) if p.children else p


def _or(children: list[Predicate]) -> Predicate:
    if any(isinstance(c, And) and not c.children for c in children):
        return And(())  # a true child makes the OR true
    flat = [g for c in children for g in (c.children if isinstance(c, Or) else (c,))]
    return flat[0] if len(flat) == 1 else Or(tuple(flat))


def _and(children: list[Predicate]) -> Predicate:
    kept = [c for c in children if not (isinstance(c, And) and not c.children)]
    if len(kept) <= 1:
        return kept[0] if kept else And(())
    leaves = split_and(And(tuple(kept)))
    by_column: dict[str, list[Leaf]] = {}
    others = []
    for leaf in leaves:
        (by_column.setdefault(leaf.column, []) if isinstance(leaf, Leaf) else others).append(leaf)
    merged = others + [m for column in sorted(by_column) for m in _merge_ranges(column, by_column[column])]
    return merged[0] if len(merged) == 1 else And(tuple(merged))


def _merge_ranges(column: str, leaves: list[Leaf]) -> list[Leaf]:
    """``Between.mergeLessAndGreaterToBetween`` then ``mergeMultipleBetweens`` for one column."""

    def key(leaf: Leaf, i: int = 0) -> object:
        return java_order(leaf.literals[i])

    le = ge = None
    rest = []
    for leaf in leaves:
        if leaf.op == "less_or_equal":
            le = leaf if le is None or key(leaf) <= key(le) else le  # the tighter; on a tie the later one
        elif leaf.op == "greater_or_equal":
            ge = leaf if ge is None or key(leaf) >= key(ge) else ge
        else:
            rest.append(leaf)
    if le is not None and ge is not None:
        if key(ge) >= key(le):
            rest += [le, ge]
        else:
            rest.append(Leaf("between", column, (ge.literals[0], le.literals[0])))
    else:
        rest += [x for x in (le, ge) if x is not None]
    betweens = [x for x in rest if x.op == "between"]
    if len(betweens) <= 1:
        return rest
    lower = max(betweens, key=lambda b: key(b, 0)).literals[0]
    upper = min(betweens, key=lambda b: key(b, 1)).literals[1]
    others = [x for x in rest if x.op != "between"]
    if java_order(lower) <= java_order(upper):
        return others + [Leaf("between", column, (lower, upper))]
    return others + betweens


def split_and(p: Predicate | None) -> list[Predicate]:
    """``PredicateBuilder.splitAnd``: the top-level conjuncts."""
    if p is None:
        return []
    if isinstance(p, And):
        return [c for child in p.children for c in split_and(child)]
    return [p]


def columns_of(p: Predicate) -> set[str]:
    if isinstance(p, Leaf):
        return {p.column}
    return set().union(*(columns_of(c) for c in p.children)) if p.children else set()


def and_all(ps: Sequence[Predicate]) -> Predicate | None:
    return None if not ps else ps[0] if len(ps) == 1 else And(tuple(ps))


def split_or(p: Predicate) -> list[Predicate]:
    """``PredicateBuilder.splitOr``: the disjuncts, nested ORs flattened."""
    if isinstance(p, Or):
        return [c for child in p.children for c in split_or(child)]
    return [p]


def project_conjuncts(conjuncts: Sequence[Predicate], fields: set[str]) -> list[Predicate]:
    """Each conjunct :func:`project`-ed on ``fields``, those with nothing left dropped: how Paimon
    1.4 picks the partition filter, the key filter and the bucket keys' values of a condition."""
    return [q for q in (project(c, fields) for c in conjuncts) if q is not None]


def project(p: Predicate, fields: set[str]) -> Predicate | None:
    """``PredicateProjectionConverter``: the part of ``p`` on ``fields`` alone (an AND keeps the
    children it can project, one of them alone unwrapped; an OR needs all of them); None when
    nothing is left."""
    if isinstance(p, Leaf):
        return p if p.column in fields else None
    children = [project(c, fields) for c in p.children]
    if isinstance(p, And):
        kept = [c for c in children if c is not None]
        return (kept[0] if len(kept) == 1 else And(tuple(kept))) if kept else (p if not p.children else None)
    return None if any(c is None for c in children) else Or(tuple(children))


def rename(p: Predicate, names: dict[str, str]) -> Predicate:
    if isinstance(p, Leaf):
        return Leaf(p.op, names.get(p.column, p.column), p.literals)
    return type(p)(tuple(rename(c, names) for c in p.children))
