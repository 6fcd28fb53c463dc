"""The condition language (indexbridge.paimon.fileindex.condition): the shared table of conditions
(tests/conditions.json, which ConditionSpec runs against the Scala twin), and on generated files
the property that matters: a file or row the condition may keep is never skipped."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from indexbridge.errors import IndexFormatError
from indexbridge.paimon.fileindex.condition import UNDECIDED, bind, parse, predicate_json
from indexbridge.paimon.fileindex.container import FileIndexContainer, build_file_index
from indexbridge.paimon.fileindex.predicate import BitmapResult
from indexbridge.paimon.fileindex.values import DataType

TABLE = json.loads((Path(__file__).parent / "conditions.json").read_text())
TYPES = {column: DataType.from_sql(sql) for column, sql in TABLE["types"].items()}


@pytest.mark.parametrize("case", TABLE["cases"], ids=lambda c: c["condition"] or "<empty>")
def test_shared_table(case: dict) -> None:
    if "error" in case:
        with pytest.raises(IndexFormatError) as error:
            parse(case["condition"], source="q")
        assert (error.value.source, error.value.offset, error.value.expected) == (
            "q", case["error"]["offset"], case["error"]["message"])  # fmt: skip
        return
    parsed = parse(case["condition"])
    assert predicate_json(parsed) == case["parsed"]
    if case.get("bind_error"):
        with pytest.raises(ValueError):
            bind(parsed, TYPES)
    else:
        assert predicate_json(bind(parsed, TYPES)) == case["bound"]


def test_undecided_evaluates_to_remain() -> None:
    container = FileIndexContainer(build_file_index({"file-index.bitmap.columns": "i"}, {"i": DataType("INTEGER")}, {"i": [1, 2]}))
    predicate = container.predicate({"i": DataType("INTEGER")})
    assert bind(parse("i < 1.5"), {"i": DataType("INTEGER")}) == UNDECIDED
    assert predicate.evaluate(UNDECIDED).kind == "remain"
    assert predicate.evaluate(bind(parse("i = 3 OR i < 1.5"), {"i": DataType("INTEGER")})).kind == "remain"
    assert predicate.evaluate(bind(parse("i = 3 AND i < 1.5"), {"i": DataType("INTEGER")})).remain is False


# ---------------------------------------------------------------------------------------------
# Never a wrong skip: random conditions over random files, against SQL's three-valued logic

_INTS = [-3, -1, 0, 1, 2, 5, 7]
_STRINGS = ["", "a", "b", "it's", "zz"]


def _gen(rng: random.Random, depth: int) -> tuple[str, object]:
    """A random condition as (SQL text, a tree the test evaluates itself)."""
    if depth > 0 and rng.random() < 0.45:
        kind = rng.choice(["and", "or", "not"])
        if kind == "not":
            text, tree = _gen(rng, depth - 1)
            return f"NOT ({text})", ("not", tree)
        (a, ta), (b, tb) = _gen(rng, depth - 1), _gen(rng, depth - 1)
        return f"({a}) {kind.upper()} ({b})", (kind, ta, tb)
    column = rng.choice(["i", "s"])
    pool = _INTS + [1.5, -0.5, None] if column == "i" else _STRINGS + [None]
    lit = lambda v: "NULL" if v is None else repr(v) if not isinstance(v, str) else "'" + v.replace("'", "''") + "'"  # noqa: E731
    op = rng.choice(["=", "<>", "<", "<=", ">", ">=", "in", "not in", "is null", "is not null", "between", "not between"])
    if op in ("is null", "is not null"):
        return f"{column} {op.upper()}", (op, column)
    if op in ("in", "not in"):
        values = [rng.choice(pool) for _ in range(rng.randint(1, 3))]
        return f"{column} {op.upper()} ({', '.join(map(lit, values))})", (op, column, values)
    if op in ("between", "not between"):
        lo, hi = rng.choice(pool), rng.choice(pool)
        return f"{column} {op.upper()} {lit(lo)} AND {lit(hi)}", (op, column, lo, hi)
    v = rng.choice(pool)
    if rng.random() < 0.3:
        return _mirror(op, column, v, lit)
    return f"{column} {op} {lit(v)}", (op, column, v)


def _mirror(op: str, column: str, v: object, lit) -> tuple[str, object]:
    mirrored = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "=": "=", "<>": "<>"}[op]
    return f"{lit(v)} {mirrored} {column}", (op, column, v)


def _cmp(op: str, a: object, b: object) -> bool | None:
    if a is None or b is None:
        return None
    return {"=": a == b, "<>": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def _not(x: bool | None) -> bool | None:
    return None if x is None else not x


def _truth(tree: tuple, row: dict) -> bool | None:
    """SQL's three-valued truth of a generated condition on one row."""
    kind = tree[0]
    if kind == "not":
        return _not(_truth(tree[1], row))
    if kind in ("and", "or"):
        a, b = _truth(tree[1], row), _truth(tree[2], row)
        if kind == "and":
            return False if a is False or b is False else None if a is None or b is None else True
        return True if a is True or b is True else None if a is None or b is None else False
    value = row[tree[1]]
    if kind in ("is null", "is not null"):
        return (value is None) == (kind == "is null")
    if kind in ("in", "not in"):
        answers = [_cmp("=", value, v) for v in tree[2]]
        found = True if True in answers else None if None in answers else False
        return found if kind == "in" else _not(found)
    if kind in ("between", "not between"):
        lo, hi = _cmp(">=", value, tree[2]), _cmp("<=", value, tree[3])
        both = False if lo is False or hi is False else None if lo is None or hi is None else True
        return both if kind == "between" else _not(both)
    return _cmp(kind, value, tree[2])


@pytest.mark.parametrize("seed", range(6))
def test_never_skips_a_matching_row(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice([1, 7, 40])
    rows = [{"i": rng.choice(_INTS[:5] + [None]), "s": rng.choice(_STRINGS[:3] + [None])} for _ in range(n)]
    fields = {"i": DataType("INTEGER"), "s": DataType("VARCHAR")}
    options = {
        "file-index.bitmap.columns": rng.choice(["i", "s", "i,s"]),
        "file-index.bsi.columns": rng.choice(["i", ""]),
        "file-index.bloom-filter.columns": rng.choice(["s", "i,s"]),
    }
    options = {k: v for k, v in options.items() if v}
    container = FileIndexContainer(build_file_index(options, fields, {c: [r[c] for r in rows] for c in fields}))
    predicate = container.predicate(fields)
    for _ in range(60):
        text, tree = _gen(rng, 3)
        result = predicate.evaluate(bind(parse(text), fields))
        matching = [r for r, row in enumerate(rows) if _truth(tree, row) is True]
        if isinstance(result, BitmapResult):
            assert set(matching) <= set(result.rows), text
        else:
            assert result.remain or not matching, text


# ---------------------------------------------------------------------------------------------
# The Scala twin parses generated conditions to the same trees and errors

_LITERALS = [
    "1", "-1", "0", "1.5", "-0.0", "1e3", "1e400", "-1e400", "12BD", "10L", "3Y", "3S", "1.5F", "1.5D", "'x'", "'a\\'b'", "'it''s'", "'é'",
    "X'ab'", "X'abc'", "TRUE", "FALSE", "NULL", "DATE '2024-01-01'", "DATE '2024-02-30'", "TIMESTAMP '2024-01-01 10:00:00.123456789+02:00'",
    "TIMESTAMP 'x'", "TIMESTAMP_NTZ '1970-01-01'", "CAST('1' AS INT)", "CAST('1.23456' AS DECIMAL(38, 10))", "CAST('1.5' AS DECIMAL(2, 1))",
    "CAST('NaN' AS FLOAT)", "CAST('-0' AS FLOAT)", "CAST('1e-46' AS FLOAT)", "CAST('3.4028235677973366e38' AS FLOAT)", "CAST('0.1' AS FLOAT)",
    "CAST(12.5 AS INT)", "CAST(-12.5 AS BIGINT)", "CAST(1.5D AS FLOAT)", "CAST('-Infinity' AS DOUBLE)", "CAST(NULL AS DATE)",
    "9999999999999999999999", "-9223372036854775808", "-9223372036854775809", ".5", "CAST('9999' AS TINYINT)", "CAST(TRUE AS STRING)",
    "CAST(1.50 AS STRING)", "CAST(DATE '2024-01-01' AS TIMESTAMP)", "`x`", "m['k']", "-", "(",
]  # fmt: skip
_SHAPES = ["c = {0}", "c <> {0}", "c < {0}", "c >= {0}", "c IN ({0}, {1})", "c NOT IN ({0}, {1})", "c BETWEEN {0} AND {1}",
           "c NOT BETWEEN {0} AND {1}", "c IS NOT {0}", "{0} < c", "NOT (c = {0}) OR `d` IS NULL AND NOT c = {1}"]  # fmt: skip


def test_scala_parses_generated_conditions_alike() -> None:
    from py4j.protocol import Py4JJavaError

    from indexbridge.jvm import jvm

    scala = jvm().io.indexbridge.paimon.fileindex.Condition
    rng = random.Random(3)
    for _ in range(1500):
        text = rng.choice(_SHAPES).format(rng.choice(_LITERALS), rng.choice(_LITERALS))
        try:
            python = predicate_json(parse(text, "q"))
        except IndexFormatError as e:
            python = ("error", e.offset, e.expected)
        try:
            tree = json.loads(scala.predicateJson(scala.parse(text, "q")).toString())
        except Py4JJavaError as e:
            tree = ("error", e.java_exception.offset(), e.java_exception.expected())
        assert tree == python, text
