"""The condition language (indexbridge.paimon.fileindex.condition): the shared table of conditions
(tests/conditions.json, written by the Scala twin from Spark's own parser; ConditionSpec runs it
there), generated conditions against Spark's reading, and on generated files the property that
matters: a file or row the condition may keep is never skipped."""

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
    case = {"condition": case["condition"], **case.get("python", case)}  # the known differences from Spark: pinned
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
    lit = lambda v: "NULL" if v is None else repr(v) if not isinstance(v, str) else "'" + v.replace("'", "\\'") + "'"  # noqa: E731
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
# Generated conditions: Python (sqlglot) gives the trees and errors the Scala twin (Spark's own
# CatalystSqlParser) gives; one py4j call for the whole batch

_COLUMNS = ["i", "b", "t", "s", "f", "d", "dec", "dt", "ts", "ts6", "bo", "bin", "`i`", "`m`['k']", "m[1]", "q", "`a b`"]
_NUMBERS = ["0", "1", "7", "127", "128", "2147483647", "2147483648", "9223372036854775808", "1.5", ".5", "1.", "0.0",
            "1e3", "1.5E-2", "1e309", "12L", "1S", "3Y", "300Y", "1.5D", "1.5F", "1e39F", "12BD", "1.50BD", "1e2BD"]
_STRING_LITERALS = ["'x'", "'it\\'s'", "'a' 'b'", "\"dq\"", "'tab\\there'", "'\\u00e9'", "''", "'7'", "' 7 '", "'2024-01-02'",
            "'true'", "'10:00:00.5'", "'2024-01-01 00:00:00'"]
_OTHERS = ["TRUE", "false", "NULL", "X'CAFE'", "x'abc'", "DATE '2024-01-01'", "date '2024-1-1'", "DATE '2024-02-30'",
           "TIMESTAMP '2024-01-01 10:00:00.123456'", "TIMESTAMP '2024-01-01T10:00:00+02:00'", "TIMESTAMP_NTZ '2024-01-01 10:00'",
           "TIMESTAMP_LTZ '1969-12-31 23:59:59.999999'", "TIMESTAMP 'noon'"]
_TYPES = ["INT", "BIGINT", "TINYINT", "SMALLINT", "DOUBLE", "FLOAT", "DECIMAL(10, 2)", "DECIMAL(4, 2)", "STRING", "BOOLEAN",
          "DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "BINARY"]
_COMPARE = ["=", "==", "<>", "!=", "<", "<=", ">", ">="]


def _literal(rng: random.Random, depth: int = 0) -> str:
    roll = rng.random()
    if roll < 0.35:
        number = rng.choice(_NUMBERS)
        return rng.choice(["", "", "-", "- ", "+"]) + number
    if roll < 0.6:
        return rng.choice(_STRING_LITERALS)
    if roll < 0.8 or depth > 1:
        return rng.choice(_OTHERS)
    inner = _literal(rng, depth + 1)
    return rng.choice([f"CAST({inner} AS {rng.choice(_TYPES)})", f"({inner})", f"-({inner})"])


def _random_case(rng: random.Random, text: str) -> str:
    return "".join(c.lower() if c.isalpha() and rng.random() < 0.3 else c for c in text)


def _condition(rng: random.Random, depth: int) -> str:
    if depth > 0 and rng.random() < 0.4:
        kind = rng.choice(["AND", "OR", "NOT", "()"])
        if kind == "NOT":
            return f"NOT {_condition(rng, depth - 1)}"
        if kind == "()":
            return f"({_condition(rng, depth - 1)})"
        return f"{_condition(rng, depth - 1)} {kind} {_condition(rng, depth - 1)}"
    column = rng.choice(_COLUMNS)
    shape = rng.randrange(6)
    if shape == 0:
        return f"{column} {rng.choice(_COMPARE)} {_literal(rng)}"
    if shape == 1:
        return f"{_literal(rng)} {rng.choice(_COMPARE)} {column}"
    if shape == 2:
        values = ", ".join(_literal(rng) for _ in range(rng.randint(1, 3)))
        return f"{column} {rng.choice(['IN', 'NOT IN'])} ({values})"
    if shape == 3:
        return f"{column} {rng.choice(['BETWEEN', 'NOT BETWEEN'])} {_literal(rng)} AND {_literal(rng)}"
    if shape == 4:
        return f"{column} IS {rng.choice(['', 'NOT '])}NULL"
    return f"{column} {rng.choice(_COMPARE)} {rng.choice(_COLUMNS)}"  # two columns: an error in both


def _generated(seed: int) -> str:
    """A condition of the grammar, in random letter case, sometimes with a comment or line break."""
    rng = random.Random(seed)
    tokens = _random_case(rng, _condition(rng, 3)).split(" ")
    if rng.random() < 0.2:
        tokens.insert(rng.randrange(len(tokens) + 1), rng.choice(["/* c */", "\n", "-- c\n", "\t"]))
    return " ".join(tokens)


def _python_entry(text: str) -> dict:
    try:
        parsed = parse(text, "q")
    except IndexFormatError as e:
        return {"error": {"offset": e.offset, "message": e.expected}}
    try:
        return {"parsed": predicate_json(parsed), "bound": predicate_json(bind(parsed, TYPES))}
    except ValueError:
        return {"parsed": predicate_json(parsed), "bind_error": True}


def test_python_parses_generated_conditions_as_spark_does() -> None:
    """Reference: Spark's CatalystSqlParser (through the Scala engine, io.indexbridge...Condition.tableJson).
    Syntax errors are compared by kind only: sqlglot stops at other tokens than Spark's ANTLR parser."""
    from indexbridge.jvm import jvm

    texts = [_generated(seed) for seed in range(400)]
    scala = json.loads(jvm().io.indexbridge.paimon.fileindex.Condition.tableJson(json.dumps(texts), json.dumps(TABLE["types"])))
    kinds = {"ok": 0, "error": 0}
    for text, expected in zip(texts, scala):
        actual = _python_entry(text)
        if expected.get("error", {}).get("message") == "a condition in Spark SQL syntax":
            assert actual.get("error", {}).get("message") == "a condition in Spark SQL syntax", (text, actual)
        else:
            assert actual == expected, text
        kinds["error" if "error" in expected else "ok"] += 1
    assert kinds["ok"] > 150 and kinds["error"] > 50, kinds  # the grammar reaches both
