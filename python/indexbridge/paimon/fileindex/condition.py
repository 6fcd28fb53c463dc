"""File-index predicates from conditions written in Spark SQL (what ``Expression.sql`` prints).

``parse(text)`` gives the predicate tree of :mod:`predicate` with SQL literals; ``bind(tree,
types)`` converts each literal to its column's Paimon internal value, ready for
``FileIndexPredicate.evaluate``. The Scala twin is ``io.indexbridge.paimon.fileindex.Condition``;
``tests/conditions.json`` holds both to the same trees and errors.

Grammar (keywords case-insensitive)::

    condition  := or EOF
    or         := and (OR and)*
    and        := not (AND not)*
    not        := NOT not | '(' or ')' | comparison
    comparison := operand (= | == | <> | != | < | <= | > | >=) operand     -- one side a column
                | column [NOT] IN '(' literal (',' literal)* ')'
                | column IS [NOT] NULL
                | column [NOT] BETWEEN literal AND literal
    column     := name | `back``ticked` | column '[' (string | integer) ']'     -- m['k'] is "m[k]"
    literal    := [+|-] number | string | X'hex' | TRUE | FALSE | NULL
                | DATE string | TIMESTAMP string | TIMESTAMP_NTZ string | TIMESTAMP_LTZ string
                | CAST '(' literal AS type ')'
    number     := 12 (INT, BIGINT or DECIMAL by size) | 12L | 12S | 12Y | 1.5 | 1.5BD (DECIMAL)
                | 1.5D | 1e3 (DOUBLE) | 1.5F (FLOAT)
    string     := '...' with '' or Spark's backslash escapes

NOT is pushed down to the leaves with the negated operation (``=``/``<>``, ``IN``/``NOT IN``,
``<``/``>=``, ``<=``/``>``, ``IS NULL``/``IS NOT NULL``, ``BETWEEN`` -> ``< OR >``; AND/OR by
De Morgan). Those hold in SQL's three-valued logic, so no row a filter would keep is skipped.

Parsed literals are Python values: ``int``, ``Decimal``, ``float`` (DOUBLE; a FLOAT literal is
a float32-exact float), ``str``, ``bytes``, ``bool``, ``None``, ``datetime.date`` and
``Timestamp`` (UTC: a TIMESTAMP literal names a UTC wall-clock time unless it carries an offset;
render conditions with ``spark.sql.session.timeZone=UTC``).

What an index cannot decide becomes :data:`UNDECIDED` (an empty AND, which evaluates to
REMAIN): a comparison with NULL (never true), ``NOT IN`` a list holding NULL, a literal that is
not exactly a value of the column's type (``int_col < 1.5``, ``float_col = 0.1BD``, a string
column against a number), and columns without a known type. A literal of a kind the column
cannot be compared with at all (``date_col = TRUE``) is an :class:`IndexFormatError`, as is every
syntax error (naming the offset in the text).
"""

from __future__ import annotations

import datetime
import json
import math
import re
import struct
from collections.abc import Callable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Context, Decimal
from fractions import Fraction

import numpy as np

from indexbridge.errors import IndexFormatError
from indexbridge.paimon.binary_row import Timestamp
from indexbridge.paimon.fileindex.predicate import And, Leaf, Or, Predicate
from indexbridge.paimon.fileindex.values import DataType, unscaled_long

UNDECIDED: Predicate = And(())
"""A subtree no index can decide: evaluates to REMAIN."""

_NEGATED = {
    "equal": "not_equal", "not_equal": "equal", "in": "not_in", "not_in": "in",
    "is_null": "is_not_null", "is_not_null": "is_null", "less_than": "greater_or_equal",
    "greater_or_equal": "less_than", "less_or_equal": "greater_than", "greater_than": "less_or_equal",
}  # fmt: skip
_COMPARISONS = {"=": "equal", "==": "equal", "<>": "not_equal", "!=": "not_equal", "<": "less_than",
                "<=": "less_or_equal", ">": "greater_than", ">=": "greater_or_equal"}  # fmt: skip
_MIRRORED = {"equal": "equal", "not_equal": "not_equal", "less_than": "greater_than", "greater_than": "less_than",
             "less_or_equal": "greater_or_equal", "greater_or_equal": "less_or_equal"}  # fmt: skip
_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()

# ---------------------------------------------------------------------------------------------
# Tree building: flattening and UNDECIDED absorption, the same in parse, negate and bind


def conjunction(children: Sequence[Predicate]) -> Predicate:
    """AND of the children: nested ANDs flattened, UNDECIDED children dropped (x AND REMAIN = x)."""
    flat: list[Predicate] = []
    for c in children:
        flat.extend(c.children if isinstance(c, And) else (c,))
    return flat[0] if len(flat) == 1 else And(tuple(flat))


def disjunction(children: Sequence[Predicate]) -> Predicate:
    """OR of the children: nested ORs flattened; UNDECIDED if any child is (x OR REMAIN = REMAIN)."""
    flat: list[Predicate] = []
    for c in children:
        if c == UNDECIDED:
            return UNDECIDED
        flat.extend(c.children if isinstance(c, Or) else (c,))
    return flat[0] if len(flat) == 1 else Or(tuple(flat))


def negate(p: Predicate) -> Predicate:
    """NOT p, pushed down to the leaves (module docstring)."""
    if isinstance(p, And):
        return UNDECIDED if p == UNDECIDED else disjunction([negate(c) for c in p.children])
    if isinstance(p, Or):
        return conjunction([negate(c) for c in p.children])
    if p.op == "between":
        lo, hi = p.literals
        return disjunction([Leaf("less_than", p.column, (lo,)), Leaf("greater_than", p.column, (hi,))])
    return Leaf(_NEGATED[p.op], p.column, p.literals)


# ---------------------------------------------------------------------------------------------
# Tokens

_TOKEN = re.compile(
    r"""(?P<space>\s+)
      | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d{1,4})?(?:BD|[LSYDF])?(?![A-Za-z0-9_]))
      | (?P<hex>[xX]'[0-9A-Fa-f]*')
      | (?P<string>'(?:[^'\\]|\\.|'')*')
      | (?P<quoted>`(?:[^`]|``)*`)
      | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<op><=|>=|<>|!=|==|[=<>(),\[\]+-])""",
    re.VERBOSE | re.DOTALL | re.IGNORECASE | re.ASCII,
)
_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a", "%": "\\%", "_": "\\_"}


def _unescape(body: str) -> str:
    """Spark's ``unescapeSQLString`` for one literal (backslash escapes, ``\\uXXXX``), plus the
    standard ``''`` for a quote."""
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "'" and body.startswith("''", i):
            out.append("'")
            i += 2
        elif c == "\\" and i + 1 < len(body):
            n = body[i + 1]
            if n == "u" and re.fullmatch(r"[0-9A-Fa-f]{4}", body[i + 2 : i + 6]):
                out.append(chr(int(body[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append(_ESCAPES.get(n, n))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


class _Token:
    __slots__ = ("kind", "text", "pos")

    def __init__(self, kind: str, text: str, pos: int):
        self.kind, self.text, self.pos = kind, text, pos

    def keyword(self, *words: str) -> bool:
        return self.kind == "name" and self.text.upper() in words

    def describe(self) -> str:
        return "the end of the condition" if self.kind == "end" else f"'{self.text}'"


def _tokens(text: str, source: str) -> list[_Token]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            what = "a closing quote" if text[pos] in "'`" else "a name, literal, operator or parenthesis"
            raise IndexFormatError(source, pos, f"{what}, found '{text[pos:pos + 10]}'")
        if m.lastgroup != "space":
            out.append(_Token(m.lastgroup, m.group(), pos))
        pos = m.end()
    out.append(_Token("end", "", len(text)))
    return out


# ---------------------------------------------------------------------------------------------
# Literal values


_FLOAT32_MAX = Fraction(struct.unpack("<f", bytes.fromhex("ffff7f7f"))[0])
_FLOAT32_OVERFLOW = Fraction(2**128 - 2**103)  # max + half an ulp: from here on (ties to even) infinity


def _float32(value: object) -> float:
    """``Float.parseFloat`` / ``(float)`` of an exact number: the nearest float32, ties to even
    (rounded once, from the exact value, not through a double)."""
    if isinstance(value, float) and (not math.isfinite(value) or value == 0):
        return value  # NaN, the infinities and both zeros are floats as they are
    exact = Fraction(value)
    if abs(exact) >= _FLOAT32_OVERFLOW:
        return math.copysign(math.inf, exact)
    near = np.float32(min(max(float(exact), -float(_FLOAT32_MAX)), float(_FLOAT32_MAX)))
    with np.errstate(over="ignore"):
        candidates = [c for c in (near, np.nextafter(near, np.float32(-np.inf)), np.nextafter(near, np.float32(np.inf))) if np.isfinite(c)]
    best = min(candidates, key=lambda c: (abs(Fraction(float(c)) - exact), int(c.view(np.uint32)) & 1))
    return float(best)


_EXACT = Context(prec=200)  # wide enough that no literal arithmetic rounds
_INT_BITS = {"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "BIGINT": 64}
_SUFFIX_TYPES = {"L": "BIGINT", "S": "SMALLINT", "Y": "TINYINT"}


def _number(text: str, negative: bool) -> object:
    """A numeric literal as Spark's parser types it (grammar in the module docstring)."""
    upper = text.upper()
    sign = -1 if negative else 1
    if upper.endswith("BD"):
        return _signed_decimal(Decimal(text[:-2]), negative)
    suffix = upper[-1]
    if suffix in _SUFFIX_TYPES:
        bits = _INT_BITS[_SUFFIX_TYPES[suffix]]
        if not text[:-1].isdigit() or not -(1 << (bits - 1)) <= sign * int(text[:-1]) < 1 << (bits - 1):
            raise ValueError(f"{'-' if negative else ''}{text} is not a {_SUFFIX_TYPES[suffix]} literal")
        return sign * int(text[:-1])
    if suffix == "D":
        return sign * float(text[:-1])
    if suffix == "F":
        return sign * _float32(Decimal(text[:-1]))
    if "E" in upper:
        return sign * float(text)
    if "." in text or not -(1 << 63) <= sign * int(text) < 1 << 63:
        return _signed_decimal(Decimal(text), negative)
    return sign * int(text)


def _signed_decimal(d: Decimal, negative: bool) -> Decimal:
    return d.copy_negate() if negative and d else d  # -0.0 stays 0.0, as BigDecimal.negate


_DATE = re.compile(r"\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*", re.ASCII)
_TIMESTAMP = re.compile(
    r"\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,9}))?)?)?"
    r"\s*(Z|UTC|[+-]\d{1,2}:\d{2})?\s*",
    re.IGNORECASE | re.ASCII,
)
_TIME = re.compile(r"\s*(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,9}))?)?\s*", re.ASCII)


def parse_date(text: str) -> datetime.date:
    m = _DATE.fullmatch(text)
    if m is None:
        raise ValueError(f"'{text}' is not a date (yyyy-mm-dd)")
    return _date(m, text)


def _date(m: re.Match, text: str) -> datetime.date:
    try:
        return datetime.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        raise ValueError(f"'{text}' is not a valid date") from None


def parse_timestamp(text: str) -> Timestamp:
    """``yyyy-mm-dd[ hh:mm[:ss[.fraction]]][Z|UTC|+hh:mm]`` as a UTC ``Timestamp``."""
    m = _TIMESTAMP.fullmatch(text)
    if m is None:
        raise ValueError(f"'{text}' is not a timestamp (yyyy-mm-dd hh:mm:ss[.fraction][+hh:mm])")
    day = _date(m, text)
    hour, minute, second = int(m[4] or 0), int(m[5] or 0), int(m[6] or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise ValueError(f"'{text}' is not a valid time of day")
    nanos = int((m[7] or "").ljust(9, "0"))
    seconds = (day.toordinal() - _EPOCH_ORDINAL) * 86400 + hour * 3600 + minute * 60 + second
    zone = (m[8] or "Z").upper()
    if zone not in ("Z", "UTC"):
        sign = -1 if zone[0] == "-" else 1
        hh, mm = zone[1:].split(":")
        seconds -= sign * (int(hh) * 3600 + int(mm) * 60)
    return Timestamp(seconds * 1000 + nanos // 1_000_000, nanos % 1_000_000)


def _parse_time(text: str) -> tuple[int, int]:
    """``hh:mm[:ss[.fraction]]`` as (milliseconds of the day, the nanoseconds below a millisecond)."""
    m = _TIME.fullmatch(text)
    if m is None or int(m[1]) > 23 or int(m[2]) > 59 or int(m[3] or 0) > 59:
        raise ValueError(f"'{text}' is not a time (hh:mm:ss[.fraction])")
    nanos = int((m[4] or "").ljust(9, "0"))
    return (int(m[1]) * 3600 + int(m[2]) * 60 + int(m[3] or 0)) * 1000 + nanos // 1_000_000, nanos % 1_000_000


_FLOAT_WORDS = {"NAN": math.nan, "INFINITY": math.inf, "+INFINITY": math.inf, "-INFINITY": -math.inf,
                "INF": math.inf, "+INF": math.inf, "-INF": -math.inf}  # fmt: skip


def _floating(text: str) -> float | Decimal:
    """A string cast to FLOAT/DOUBLE: NaN and the infinities by name, else the exact number."""
    word = text.strip().upper()
    if word in _FLOAT_WORDS:
        return _FLOAT_WORDS[word]
    d = decimal_of(text)
    return -0.0 if d == 0 and d.is_signed() else d  # Float.parseFloat("-0.0") is negative zero


_DECIMAL_TEXT = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d{1,4})?\s*", re.ASCII)


def decimal_of(text: str) -> Decimal:
    """A number in a string, as ``java.math.BigDecimal(String)`` reads it (no NaN, no ``_``)."""
    if not _DECIMAL_TEXT.fullmatch(text):
        raise ValueError(f"'{text}' is not a number")
    return Decimal(text.strip())


_CAST_TYPES = {
    "TINYINT": "TINYINT", "BYTE": "TINYINT", "SMALLINT": "SMALLINT", "SHORT": "SMALLINT", "INT": "INTEGER",
    "INTEGER": "INTEGER", "BIGINT": "BIGINT", "LONG": "BIGINT", "FLOAT": "FLOAT", "REAL": "FLOAT",
    "DOUBLE": "DOUBLE", "DECIMAL": "DECIMAL", "DEC": "DECIMAL", "NUMERIC": "DECIMAL", "STRING": "STRING",
    "VARCHAR": "STRING", "CHAR": "STRING", "BOOLEAN": "BOOLEAN", "DATE": "DATE", "TIMESTAMP": "TIMESTAMP",
    "TIMESTAMP_NTZ": "TIMESTAMP", "TIMESTAMP_LTZ": "TIMESTAMP", "BINARY": "BINARY",
}  # fmt: skip


def _cast(value: object, target: str, args: Sequence[int]) -> object:
    """``CAST(literal AS target)`` for the literals Spark prints that way (raises ValueError)."""
    if value is None:
        return None
    if isinstance(value, bool) and target != "BOOLEAN":
        raise ValueError(f"cannot cast a boolean to {target}")
    numeric = isinstance(value, (str, int, float, Decimal))
    if target in _INT_BITS and numeric:
        n = int(decimal_of(value)) if isinstance(value, str) else int(value)
        if not -(1 << (_INT_BITS[target] - 1)) <= n < 1 << (_INT_BITS[target] - 1):
            raise ValueError(f"{value} is out of range for {target}")
        return n
    if target in ("FLOAT", "DOUBLE") and numeric:
        exact = _floating(value) if isinstance(value, str) else value
        return _float32(exact) if target == "FLOAT" else float(exact)
    if target == "DECIMAL" and isinstance(value, (str, int, Decimal)):
        precision, scale = (list(args) + [10, 0][len(args) :])[:2]
        if not (1 <= precision <= 38 and 0 <= scale <= precision):
            raise ValueError(f"DECIMAL({precision}, {scale}) is not a valid type")
        d = decimal_of(value) if isinstance(value, str) else Decimal(value)
        d = d.quantize(Decimal(1).scaleb(-scale), ROUND_HALF_UP, _EXACT)
        if abs(_EXACT.scaleb(d, scale)) >= 10**precision:
            raise ValueError(f"{value} does not fit DECIMAL({precision}, {scale})")
        return d
    if target == "STRING" and isinstance(value, (str, int, Decimal)):
        return value if isinstance(value, str) else format(value, "f") if isinstance(value, Decimal) else str(value)
    if target == "BOOLEAN":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise ValueError(f"{value!r} is not a boolean")
    if target == "DATE":
        if isinstance(value, str):
            return parse_date(value)
        if isinstance(value, datetime.date):
            return value
    if target == "TIMESTAMP":
        if isinstance(value, str):
            return parse_timestamp(value)
        if isinstance(value, Timestamp):
            return value
        if isinstance(value, datetime.date):
            return Timestamp((value.toordinal() - _EPOCH_ORDINAL) * 86_400_000)
    if target == "BINARY" and isinstance(value, (str, bytes)):
        return value.encode("utf-8") if isinstance(value, str) else value
    raise ValueError(f"cannot cast {json.dumps(literal_json(value))} to {target}")


# ---------------------------------------------------------------------------------------------
# Parser


class _Parser:
    def __init__(self, text: str, source: str):
        self.source, self.text = source, text
        self.tokens = _tokens(text, source)
        self.i = 0

    @property
    def token(self) -> _Token:
        return self.tokens[self.i]

    def error(self, expected: str, token: _Token | None = None) -> IndexFormatError:
        token = token or self.token
        return IndexFormatError(self.source, token.pos, f"{expected}, found {token.describe()}")

    def span(self, start: _Token) -> str:
        """The text from ``start`` to the current token (what a literal was written as)."""
        end = self.token.pos if self.token.pos > start.pos else start.pos + len(start.text)
        return self.text[start.pos : end].strip()

    def advance(self) -> _Token:
        token = self.token
        self.i += 1
        return token

    def accept(self, *words: str) -> bool:
        if self.token.keyword(*words) or (self.token.kind == "op" and self.token.text in words):
            self.i += 1
            return True
        return False

    def expect(self, word: str, expected: str | None = None) -> None:
        if not self.accept(word):
            raise self.error(expected or repr(word))

    def condition(self) -> Predicate:
        p = self.disjunction()
        if self.token.kind != "end":
            raise self.error("AND, OR or the end of the condition")
        return p

    def disjunction(self) -> Predicate:
        children = [self.conjunction()]
        while self.accept("OR"):
            children.append(self.conjunction())
        return disjunction(children)

    def conjunction(self) -> Predicate:
        children = [self.negation()]
        while self.accept("AND"):
            children.append(self.negation())
        return conjunction(children)

    def negation(self) -> Predicate:
        if self.accept("NOT"):
            return negate(self.negation())
        if self.accept("("):
            p = self.disjunction()
            self.expect(")", "')'")
            return p
        return self.comparison()

    def comparison(self) -> Predicate:
        start = self.token
        left = self.operand()
        if isinstance(left, _Column):
            negated = self.accept("NOT")
            if self.accept("IN"):
                self.expect("(", "'(' after IN")
                values = [self.literal()]
                while self.accept(","):
                    values.append(self.literal())
                self.expect(")", "',' or ')' in the IN list")
                leaf: Predicate = Leaf("in", left.name, tuple(values))
                return negate(leaf) if negated else leaf
            if self.accept("BETWEEN"):
                lo = self.literal()
                self.expect("AND", "AND in BETWEEN")
                leaf = Leaf("between", left.name, (lo, self.literal()))
                return negate(leaf) if negated else leaf
            if negated:
                raise self.error("IN or BETWEEN after NOT")
            if self.accept("IS"):
                op = "is_not_null" if self.accept("NOT") else "is_null"
                self.expect("NULL", "NULL")
                return Leaf(op, left.name)
        if self.token.kind != "op" or self.token.text not in _COMPARISONS:
            raise self.error("a comparison (=, <>, <, <=, >, >=, IN, BETWEEN, IS)")
        op = _COMPARISONS[self.advance().text]
        right = self.operand()
        if isinstance(left, _Column) == isinstance(right, _Column):
            raise IndexFormatError(self.source, start.pos, "a comparison of one column with a literal")
        if isinstance(right, _Column):
            return Leaf(_MIRRORED[op], right.name, (left.value,))
        return Leaf(op, left.name, (right.value,))

    def operand(self) -> _Column | _Literal:
        t = self.token
        if t.kind == "quoted" or (t.kind == "name" and not self._starts_literal(t)):
            return self.column()
        return _Literal(self.literal())

    def _starts_literal(self, t: _Token) -> bool:
        if t.keyword("TRUE", "FALSE", "NULL", "CAST"):
            return True
        following = self.tokens[self.i + 1]
        return t.keyword("DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ") and following.kind == "string"

    def column(self) -> _Column:
        t = self.advance()
        if t.kind == "quoted":
            name = t.text[1:-1].replace("``", "`")
        elif t.kind == "name":
            name = t.text
        else:
            raise self.error("a column name", t)
        while self.accept("["):
            key = self.token
            if key.kind == "string":
                name += f"[{_unescape(key.text[1:-1])}]"
            elif key.kind == "number" and key.text.isdigit():
                name += f"[{key.text}]"
            else:
                raise self.error("a map key (a string or an integer)")
            self.advance()
            self.expect("]", "']'")
        return _Column(name)

    def literal(self) -> object:
        t = self.advance()
        try:
            if t.kind == "op" and t.text in "+-" and self.token.kind == "number":
                return _number(self.advance().text, t.text == "-")
            if t.kind == "number":
                return _number(t.text, False)
            if t.kind == "string":
                return _unescape(t.text[1:-1])
            if t.kind == "hex":
                digits = t.text[2:-1]
                if len(digits) % 2:
                    digits = "0" + digits
                return bytes.fromhex(digits)
            if t.keyword("TRUE", "FALSE"):
                return t.text.upper() == "TRUE"
            if t.keyword("NULL"):
                return None
            if t.keyword("DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ") and self.token.kind == "string":
                text = _unescape(self.advance().text[1:-1])
                return parse_date(text) if t.text.upper() == "DATE" else parse_timestamp(text)
            if t.keyword("CAST"):
                return self.cast()
        except IndexFormatError:
            raise
        except (ValueError, ArithmeticError):  # InvalidOperation is an ArithmeticError
            raise IndexFormatError(self.source, t.pos, f"a valid literal, found '{self.span(t)}'") from None
        raise self.error("a literal (number, string, TRUE, FALSE, NULL, DATE '…', TIMESTAMP '…', CAST)", t)

    def cast(self) -> object:
        self.expect("(", "'(' after CAST")
        value = self.literal()
        self.expect("AS", "AS")
        t = self.advance()
        if t.kind != "name" or t.text.upper() not in _CAST_TYPES:
            raise self.error("a type name", t)
        args: list[int] = []
        if self.accept("("):
            while True:
                if self.token.kind != "number" or not self.token.text.isdigit():
                    raise self.error("a type argument (an integer)")
                args.append(int(self.advance().text))
                if not self.accept(","):
                    break
            self.expect(")", "')'")
        self.expect(")", "')' closing CAST")
        return _cast(value, _CAST_TYPES[t.text.upper()], args)


class _Column:
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


class _Literal:
    __slots__ = ("value",)

    def __init__(self, value: object):
        self.value = value


def parse(text: str, source: str = "condition") -> Predicate:
    """The predicate of a Spark SQL condition, with SQL literals (module docstring)."""
    return _Parser(text, source).condition()


# ---------------------------------------------------------------------------------------------
# Binding literals to column types


class Inexact(Exception):
    """The literal is no value of the column's type: the leaf is UNDECIDED."""


def _exact_integral(value: object) -> int:
    if isinstance(value, int):
        return value
    if isinstance(value, Decimal) and value.is_finite() and value == value.to_integral_value():
        return int(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    raise Inexact


def column_value(t: DataType, value: object) -> object:
    """The internal value (values.py table) a non-null SQL literal stands for in a column of type
    ``t``. Raises ``Inexact`` when no value of the type equals it and ValueError when the two
    cannot be compared."""
    if isinstance(value, bool) and t.root != "BOOLEAN" and not t.is_string:
        raise ValueError(f"a {t.root} column is not comparable with {json.dumps(literal_json(value))}")
    if t.is_string:
        if isinstance(value, str):
            return value
        raise Inexact  # Spark would cast the column: the index holds other values
    if t.is_binary:
        if isinstance(value, (bytes, str)):
            return value.encode("utf-8") if isinstance(value, str) else value
    elif t.root == "BOOLEAN":
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            return _cast(value, "BOOLEAN", ())
    elif isinstance(value, str):
        return column_value(t, _from_string(t, value))
    elif t.is_integral and t.root not in ("DATE", "TIME_WITHOUT_TIME_ZONE"):
        if isinstance(value, (int, float, Decimal)):
            n = _exact_integral(value)
            if not -(1 << (_INT_BITS[t.root] - 1)) <= n < 1 << (_INT_BITS[t.root] - 1):
                raise Inexact
            return n
    elif t.root in ("FLOAT", "DOUBLE"):
        if isinstance(value, (int, float, Decimal)):
            if isinstance(value, float) and not math.isfinite(value):
                return value  # NaN and the infinities are values of both types
            f = _float32(value) if t.root == "FLOAT" else float(value)
            if not math.isfinite(f) or Fraction(f) != Fraction(value):
                raise Inexact
            return f
    elif t.root == "DECIMAL":
        if isinstance(value, (int, float, Decimal)):
            try:
                unscaled = unscaled_long(value, t.scale)  # exact Decimal(float): a double's digits
            except (ValueError, ArithmeticError):  # fractions left, beyond a long, NaN or infinite
                raise Inexact from None
            if abs(unscaled) >= 10**t.precision:
                raise Inexact
            return Decimal(unscaled).scaleb(-t.scale)
    elif t.root == "DATE":
        if isinstance(value, datetime.date):
            return value.toordinal() - _EPOCH_ORDINAL
        if isinstance(value, Timestamp):
            days, rest = divmod(value.millisecond, 86_400_000)
            if rest or value.nano_of_millisecond:
                raise Inexact
            return days
    elif t.root == "TIME_WITHOUT_TIME_ZONE":
        if isinstance(value, tuple):
            millis, nanos = value
            if nanos:  # finer than the millisecond key
                raise Inexact
            return millis
    elif t.is_timestamp:
        if isinstance(value, datetime.date):
            return Timestamp((value.toordinal() - _EPOCH_ORDINAL) * 86_400_000)
        if isinstance(value, Timestamp):
            nanos_of_second = value.millisecond % 1000 * 1_000_000 + value.nano_of_millisecond
            if nanos_of_second % (1_000_000 if t.precision <= 3 else 1_000 if t.precision <= 6 else 1):
                raise Inexact  # finer than the key (millis or micros)
            return value
    raise ValueError(f"a {t.root} column is not comparable with {json.dumps(literal_json(value))}")


def _from_string(t: DataType, text: str) -> object:
    """A string literal compared with a column of another type, read as Spark casts it."""
    try:
        if t.root == "DATE":
            return parse_date(text)
        if t.root == "TIME_WITHOUT_TIME_ZONE":
            return _parse_time(text)
        if t.is_timestamp:
            return parse_timestamp(text)
        if t.root in ("FLOAT", "DOUBLE"):
            return _floating(text)
        return decimal_of(text)
    except (ValueError, ArithmeticError):
        raise ValueError(f"'{text}' is not a {t.root} value") from None


def bind(predicate: Predicate, types: Mapping[str, DataType] | Callable[[str], DataType | None]) -> Predicate:
    """The predicate with each literal converted to its column's internal value; leaves the
    indexes cannot decide become :data:`UNDECIDED` (module docstring). ``types`` gives the type
    of the values each indexed column holds (None: unknown)."""
    type_of = types.get if isinstance(types, Mapping) else types
    if isinstance(predicate, And):
        return conjunction([bind(c, type_of) for c in predicate.children]) if predicate.children else predicate
    if isinstance(predicate, Or):
        return disjunction([bind(c, type_of) for c in predicate.children])
    t = type_of(predicate.column)
    literals = predicate.literals
    if predicate.op == "in":
        literals = tuple(v for v in literals if v is not None)
    if t is None or any(v is None for v in literals) or (predicate.op == "in" and not literals):
        return UNDECIDED
    try:
        return Leaf(predicate.op, predicate.column, tuple(column_value(t, v) for v in literals))
    except Inexact:
        return UNDECIDED


# ---------------------------------------------------------------------------------------------
# JSON (the shared table of conditions, `inspect --query`)


def literal_json(value: object) -> object:
    """A literal as JSON, the same in both engines: ``null``, ``true``/``false``, ``{"int": "12"}``,
    ``{"decimal": "1.50"}``, ``{"double": "<16 hex digits of the IEEE bits>"}``, ``{"string": s}``,
    ``{"binary": hex}``, ``{"date": epoch_days}``, ``{"timestamp": [epoch_millis, nano_of_milli]}``."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return {"int": str(value)}
    if isinstance(value, Decimal):
        return {"decimal": format(value, "f")}
    if isinstance(value, float):
        return {"double": struct.pack(">d", value).hex()}
    if isinstance(value, str):
        return {"string": value}
    if isinstance(value, bytes):
        return {"binary": value.hex()}
    if isinstance(value, datetime.date):
        return {"date": value.toordinal() - _EPOCH_ORDINAL}
    if isinstance(value, Timestamp):
        return {"timestamp": [value.millisecond, value.nano_of_millisecond]}
    raise TypeError(f"not a literal: {value!r}")


def predicate_json(p: Predicate) -> dict:
    """A tree in the vectors' predicate form (``{"and": [...]}``, ``{"op", "column", "literals"}``)."""
    if isinstance(p, And):
        return {"and": [predicate_json(c) for c in p.children]}
    if isinstance(p, Or):
        return {"or": [predicate_json(c) for c in p.children]}
    return {"op": p.op, "column": p.column, "literals": [literal_json(v) for v in p.literals]}
