"""File-index predicates from conditions written in Spark SQL.

``parse(text)`` gives the predicate tree of :mod:`predicate` with SQL literals; ``bind(tree,
types)`` converts each literal to its column's Paimon internal value, ready for
``FileIndexPredicate.evaluate``. The condition is parsed by sqlglot's Spark dialect and the tree
translated; the Scala twin ``io.indexbridge.paimon.fileindex.Condition`` parses with Spark's own
``CatalystSqlParser``, and ``tests/conditions.json`` plus generated conditions hold both to the
same trees and errors: where the two parsers read a condition differently, Spark's reading wins
(the checks in ``_Translation`` say where). The language is Spark's expression grammar
restricted to what a file index can answer (keywords case-insensitive, comments allowed)::

    condition  := condition AND condition | condition OR condition | NOT condition | ( condition )
                | column op literal | literal op column            -- op: = == <> != < <= > >=
                | column [NOT] IN (literal, ...) | column [NOT] BETWEEN literal AND literal
                | column IS [NOT] NULL
    column     := name | `quoted name` | column[string or integer]   -- m['k'] is the column "m[k]"
    literal    := Spark literal: 12 (INT, BIGINT or DECIMAL by size), 12L, 12S, 12Y, 1.5 and 1.5BD
                  (DECIMAL), 1e3 and 1.5D (DOUBLE), 1.5F (FLOAT), 'string' or "string" (adjacent
                  ones joined), X'hex', TRUE, FALSE, NULL, DATE '…', TIMESTAMP '…',
                  TIMESTAMP_LTZ '…', TIMESTAMP_NTZ '…'; signed, or CAST / TRY_CAST of one

Literals are valued as Spark evaluates them: ANSI casts (Spark 4's default), TIMESTAMP literals in
the UTC session zone unless the text names a zone, microsecond precision.

NOT is pushed down to the leaves with the negated operation (``=``/``<>``, ``IN``/``NOT IN``,
``<``/``>=``, ``<=``/``>``, ``IS NULL``/``IS NOT NULL``, ``BETWEEN`` -> ``< OR >``; AND/OR by
De Morgan). Those hold in SQL's three-valued logic, so no row a filter would keep is skipped.

Parsed literals are Python values: ``int``, ``Decimal``, ``float`` (DOUBLE; a FLOAT literal is
a float32-exact float), ``str``, ``bytes``, ``bool``, ``None``, ``datetime.date`` and
``Timestamp`` (UTC).

What an index cannot decide becomes :data:`UNDECIDED` (an empty AND, which evaluates to
REMAIN): a comparison with NULL (never true), ``NOT IN`` a list holding NULL, a literal that is
not exactly a value of the column's type (``int_col < 1.5``, ``float_col = 0.1BD``, a string
column against a number), and columns without a known type. A literal of a kind the column
cannot be compared with at all (``date_col = TRUE``) is an :class:`IndexFormatError`, as is every
error in the condition (naming the offset in the text).
"""

from __future__ import annotations

import datetime
import json
import math
import re
import struct
import zoneinfo
from collections.abc import Callable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Context, Decimal
from fractions import Fraction

import numpy as np
from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

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

def _floating(text: str) -> float | Decimal:
    """A string cast to FLOAT/DOUBLE: NaN and the infinities by name, else the exact number."""
    word = text.strip().lower()
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


# ---------------------------------------------------------------------------------------------
# Literal values as Spark's parser types them and its ANSI casts convert them. sqlglot parses but
# does not evaluate, so these reproduce Spark's rules by hand (AstBuilder's numbers,
# DateTimeUtils.stringToDate / stringToTimestamp, Cast in ANSI mode); the shared table and the
# generated conditions hold them to what Spark itself evaluates in the Scala twin.

_INT_BITS = {"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "BIGINT": 64}
_SUFFIXES = {"L": "BIGINT", "S": "SMALLINT", "Y": "TINYINT"}


class _Rejected(Exception):
    """Spark rejects the literal with an error of its own (offset, expectation)."""

    def __init__(self, offset: int, expected: str):
        super().__init__(expected)
        self.offset, self.expected = offset, expected


def _fits(n: int, kind: str) -> bool:
    bits = _INT_BITS[kind]
    return -(1 << (bits - 1)) <= n < 1 << (bits - 1)


def _spark_decimal(d: Decimal) -> Decimal:
    """A BigDecimal as Spark's Decimal holds it: no negative scale, no negative zero, 38 digits at most."""
    if d.as_tuple().exponent > 0:
        d = d.quantize(Decimal(1), context=_EXACT)
    if not d:
        d = abs(d)
    digits, exponent = len(d.as_tuple().digits), -d.as_tuple().exponent
    if max(digits, exponent) > 38:
        raise _Rejected(0, "a valid data type (DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION)")
    return d


def _number(written: str, negative: bool) -> tuple[object, str]:
    """A numeric literal as Spark's parser types it (12 INT/BIGINT/DECIMAL by size, 12L/12S/12Y,
    1.5 and 1.5BD DECIMAL, 1e3 and 1.5D DOUBLE, 1.5F FLOAT)."""
    text = ("-" if negative else "") + written.strip()
    upper = text.upper()
    if upper.endswith("BD"):
        return _spark_decimal(Decimal(text[:-2])), "DECIMAL"
    if upper[-1] in _SUFFIXES:
        n, kind = int(text[:-1]), _SUFFIXES[upper[-1]]
        if not _fits(n, kind):
            raise ValueError(f"{text} is out of range")
        return n, kind
    if upper[-1] == "D" or ("E" in upper and upper[-1] != "F"):
        value = float(text.rstrip("dD"))
        if math.isinf(value):
            raise ValueError(f"{text} is out of range")
        return value, "DOUBLE"
    if upper[-1] == "F":
        exact = Decimal(text[:-1])
        if abs(exact) > Decimal(float(_FLOAT32_MAX)):
            raise ValueError(f"{text} is out of range")
        return (-0.0 if negative and not exact else _float32(exact)), "FLOAT"
    if "." in text:
        return _spark_decimal(Decimal(text)), "DECIMAL"
    n = int(text)
    return (n, "INTEGER") if _fits(n, "INTEGER") else (n, "BIGINT") if _fits(n, "BIGINT") else (_spark_decimal(Decimal(n)), "DECIMAL")


def _minus(value: object, kind: str) -> object:
    """Spark's UnaryMinus (ANSI: integral overflow is an error)."""
    if kind in _INT_BITS:
        if not _fits(-value, kind):
            raise ValueError("integer overflow")
        return -value
    if kind in ("DECIMAL", "FLOAT", "DOUBLE") and value is not None:
        return _spark_decimal(-value) if kind == "DECIMAL" else -value
    raise ValueError(f"cannot negate a {kind}")


_DATE_TEXT = re.compile(r"([+-]?)(\d{4,6})(?:-(\d{1,2})(?:-(\d{1,2})(?:[ T].*)?)?)?", re.ASCII | re.DOTALL)
_TIMESTAMP_TEXT = re.compile(
    r"([+-]?)(\d{4,6})(?:-(\d{1,2})(?:-(\d{1,2}))?)?"
    r"(?:[ T](\d{1,2})(?::(\d{1,2})(?::(\d{1,2})(?:\.(\d*))?)?)?)?"
    r"\s*(Z|[+-]\d{1,2}(?::?\d{2})?|[A-Za-z][A-Za-z0-9_/+:-]*)?",
    re.ASCII,
)
_TIME_TEXT = re.compile(r"\s*(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,9}))?)?\s*", re.ASCII)


def _day(sign: str, year: str, month: str | None, day: str | None) -> datetime.date:
    return datetime.date(int(sign + year), int(month or 1), int(day or 1))  # ValueError outside 1..9999


def spark_date(text: str) -> datetime.date:
    """``DATE '…'`` / a string cast to DATE: Spark's ``stringToDate`` (``yyyy[-m[m][-d[d]]]``, then
    anything after a space or ``T``)."""
    m = _DATE_TEXT.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"'{text}' is not a date")
    return _day(*m.groups())


def _zone_offset(zone: str | None, local: datetime.datetime) -> int:
    """Seconds east of UTC of a timestamp's zone (none: UTC, the session zone of conditions)."""
    if zone is None or zone.upper() in ("Z", "UTC", "UT", "GMT"):
        return 0
    if zone[0] in "+-":
        digits = zone[1:].replace(":", "")
        hours, minutes = (digits, "0") if len(digits) <= 2 else (digits[:-2], digits[-2:])
        if int(hours) > 18 or int(minutes) > 59:
            raise ValueError(f"'{zone}' is not a zone offset")
        return (-1 if zone[0] == "-" else 1) * (int(hours) * 3600 + int(minutes) * 60)
    try:
        return int(local.replace(tzinfo=zoneinfo.ZoneInfo(zone)).utcoffset().total_seconds())
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"'{zone}' is not a time zone") from None


def spark_timestamp(text: str, ntz: bool = False) -> Timestamp:
    """``TIMESTAMP '…'`` / a string cast to TIMESTAMP: Spark's ``stringToTimestamp`` with the UTC
    session zone (a zone in the text wins; TIMESTAMP_NTZ ignores it), microseconds kept."""
    m = _TIMESTAMP_TEXT.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"'{text}' is not a timestamp")
    sign, year, month, day, hour, minute, second, fraction, zone = m.groups()
    local = datetime.datetime.combine(_day(sign, year, month, day), datetime.time(int(hour or 0), int(minute or 0), int(second or 0)))
    micros = int((fraction or "")[:6].ljust(6, "0"))
    offset = 0 if ntz else _zone_offset(zone, local)
    seconds = (local.date().toordinal() - _EPOCH_ORDINAL) * 86400 + local.hour * 3600 + local.minute * 60 + local.second - offset
    return _timestamp(seconds * 1_000_000 + micros)


def _timestamp(micros: int) -> Timestamp:
    millis, rest = divmod(micros, 1000)
    return Timestamp(millis, rest * 1000)


def _micros(t: Timestamp) -> int:
    return t.millisecond * 1000 + t.nano_of_millisecond // 1000


def _parse_time(text: str) -> tuple[int, int]:
    """``hh:mm[:ss[.fraction]]`` as (milliseconds of the day, the nanoseconds below a millisecond)."""
    m = _TIME_TEXT.fullmatch(text)
    if m is None or int(m[1]) > 23 or int(m[2]) > 59 or int(m[3] or 0) > 59:
        raise ValueError(f"'{text}' is not a time (hh:mm:ss[.fraction])")
    nanos = int((m[4] or "").ljust(9, "0"))
    return (int(m[1]) * 3600 + int(m[2]) * 60 + int(m[3] or 0)) * 1000 + nanos // 1_000_000, nanos % 1_000_000


def _typed_literal(kind: str, text: str) -> tuple[object, str]:
    """``DATE '…'``, ``TIMESTAMP '…'``, ``TIMESTAMP_LTZ '…'``, ``TIMESTAMP_NTZ '…'``."""
    if kind == "DATE":
        return spark_date(text), "DATE"
    if kind in ("TIMESTAMP", "TIMESTAMPTZ", "TIMESTAMPLTZ"):
        return spark_timestamp(text), "TIMESTAMP"
    if kind == "TIMESTAMPNTZ":
        return spark_timestamp(text, ntz=True), "TIMESTAMP_NTZ"
    raise ValueError(f"no {kind} literals")


_TARGETS = {"TINYINT": "TINYINT", "SMALLINT": "SMALLINT", "INT": "INTEGER", "BIGINT": "BIGINT", "FLOAT": "FLOAT",
            "DOUBLE": "DOUBLE", "DECIMAL": "DECIMAL", "TEXT": "STRING", "VARCHAR": "STRING", "CHAR": "STRING",
            "BOOLEAN": "BOOLEAN", "DATE": "DATE", "TIMESTAMP": "TIMESTAMP", "TIMESTAMPTZ": "TIMESTAMP",
            "TIMESTAMPLTZ": "TIMESTAMP", "TIMESTAMPNTZ": "TIMESTAMP_NTZ", "BINARY": "BINARY", "VARBINARY": "BINARY"}  # fmt: skip


def _target(to: exp.DataType) -> tuple[str, int, int]:
    """A CAST's type as (name, precision, scale)."""
    name = _TARGETS.get(to.this.name)
    if name is None:
        raise ValueError(f"no casts to {to.this.name}")
    params = [int(p.this.this) for p in to.expressions if isinstance(p, exp.DataTypeParam)]
    if name != "DECIMAL":
        return name, 0, 0
    precision, scale = (params + [10, 0][len(params) :])[:2] if params else (10, 0)
    if precision > 38:
        raise _Rejected(0, "a valid data type (DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION)")
    if scale > precision:
        raise _Rejected(0, "a condition in Spark SQL syntax")
    return name, precision, scale


_TRUE_WORDS, _FALSE_WORDS = {"t", "true", "y", "yes", "1"}, {"f", "false", "n", "no", "0"}
_JAVA_DOUBLE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?", re.ASCII)
_FLOAT_WORDS = {"inf": math.inf, "+inf": math.inf, "infinity": math.inf, "+infinity": math.inf,
                "-inf": -math.inf, "-infinity": -math.inf, "nan": math.nan}  # fmt: skip


def _java_double_string(value: float, single: bool) -> str:
    """Java's Double.toString / Float.toString (shortest digits; plain for 1e-3 <= |x| < 1e7)."""
    if math.isnan(value) or math.isinf(value):
        return "NaN" if math.isnan(value) else ("-" if value < 0 else "") + "Infinity"
    text = repr(float(np.float32(value))) if single else repr(value)
    digits, _, exponent = text.partition("e")
    d = Decimal(text)
    if d != 0 and not Decimal("1e-3") <= abs(d) < Decimal("1e7"):
        mantissa = Decimal(digits).scaleb(0)
        shift = mantissa.adjusted()
        m = format(mantissa.scaleb(-shift).normalize(), "f")
        return f"{m if '.' in m else m + '.0'}E{int(exponent or 0) + shift}"
    plain = format(d, "f")
    return plain if "." in plain else plain + ".0"


def _cast(value: object, kind: str, target: tuple[str, int, int]) -> tuple[object, str]:
    """Spark's ``Cast`` in ANSI mode of a literal (value, type) to ``target`` (raises ValueError
    where Spark raises)."""
    name, precision, scale = target
    if value is None:
        return None, name
    if kind == "TIMESTAMP" and (name in _INT_BITS or name in ("DECIMAL", "FLOAT", "DOUBLE")):  # seconds since the epoch
        if name in _INT_BITS:
            value, kind = _micros(value) // 1_000_000, "BIGINT"
        else:
            value, kind = Decimal(_micros(value)).scaleb(-6), "DECIMAL"
    numeric = kind in _INT_BITS or kind in ("DECIMAL", "FLOAT", "DOUBLE")
    if name in _INT_BITS:
        if kind in _INT_BITS or kind == "DECIMAL":
            n = int(value)  # toward zero
        elif kind in ("FLOAT", "DOUBLE") and math.isfinite(value):
            n = int(value)
        elif kind == "STRING" and re.fullmatch(r"[+-]?\d+", value.strip()):
            n = int(value.strip())
        elif kind == "BOOLEAN":
            n = int(value)
        else:
            raise ValueError(f"cannot cast {kind} to {name}")
        if not _fits(n, name):
            raise ValueError(f"{n} overflows {name}")
        return n, name
    if name in ("FLOAT", "DOUBLE"):
        if kind == "STRING":
            word = value.strip().lower()
            if word in _FLOAT_WORDS:
                exact: object = _FLOAT_WORDS[word]
            elif _JAVA_DOUBLE.fullmatch(value.strip()):
                exact = Decimal(value.strip().rstrip("fFdD"))
                exact = -0.0 if exact == 0 and exact.is_signed() else exact
            else:
                raise ValueError(f"'{value}' is not a number")
        elif numeric or kind == "BOOLEAN":
            exact = int(value) if kind == "BOOLEAN" else value
        else:
            raise ValueError(f"cannot cast {kind} to {name}")
        if isinstance(exact, float):
            return (_float32(exact) if name == "FLOAT" else exact), name
        return (_float32(exact) if name == "FLOAT" else float(exact)), name
    if name == "DECIMAL":
        if kind == "STRING" and _DECIMAL_TEXT.fullmatch(value):
            d = Decimal(value.strip())
        elif kind in _INT_BITS or kind == "DECIMAL" or kind == "BOOLEAN":
            d = Decimal(int(value)) if kind == "BOOLEAN" else Decimal(value)
        elif kind in ("FLOAT", "DOUBLE") and math.isfinite(value):
            d = Decimal(repr(value))
        else:
            raise ValueError(f"cannot cast {kind} to DECIMAL")
        d = d.quantize(Decimal(1).scaleb(-scale), ROUND_HALF_UP, _EXACT)
        if precision == 0 or abs(_EXACT.scaleb(d, scale)) >= 10**precision:
            raise ValueError(f"{value} does not fit DECIMAL({precision}, {scale})")
        return (abs(d) if not d else d), "DECIMAL"
    if name == "STRING":
        if kind == "STRING":
            return value, name
        if kind in _INT_BITS:
            return str(value), name
        if kind == "DECIMAL":
            return format(value, "f"), name
        if kind in ("FLOAT", "DOUBLE"):
            return _java_double_string(value, kind == "FLOAT"), name
        if kind == "BOOLEAN":
            return ("true" if value else "false"), name
        if kind == "DATE":
            return value.isoformat(), name
        if kind in ("TIMESTAMP", "TIMESTAMP_NTZ"):
            days, micros = divmod(_micros(value), 86_400_000_000)
            day = datetime.date.fromordinal(_EPOCH_ORDINAL + days).isoformat()
            clock = f"{micros // 3_600_000_000:02}:{micros // 60_000_000 % 60:02}:{micros // 1_000_000 % 60:02}"
            fraction = f"{micros % 1_000_000:06}".rstrip("0")
            return f"{day} {clock}{'.' + fraction if fraction else ''}", name
        if kind == "BINARY":
            return value.decode("utf-8", "replace"), name
        raise ValueError(f"cannot cast {kind} to STRING")
    if name == "BOOLEAN":
        if kind == "BOOLEAN":
            return value, name
        if kind == "STRING" and value.strip().lower() in _TRUE_WORDS | _FALSE_WORDS:
            return value.strip().lower() in _TRUE_WORDS, name
        if numeric:
            return value != 0, name
        raise ValueError(f"cannot cast {kind} to BOOLEAN")
    if name == "DATE":
        if kind == "STRING":
            return spark_date(value), name
        if kind == "DATE":
            return value, name
        if kind in ("TIMESTAMP", "TIMESTAMP_NTZ"):
            return datetime.date.fromordinal(_EPOCH_ORDINAL + _micros(value) // 86_400_000_000), name
        raise ValueError(f"cannot cast {kind} to DATE")
    if name in ("TIMESTAMP", "TIMESTAMP_NTZ"):
        if kind == "STRING":
            return spark_timestamp(value, ntz=name == "TIMESTAMP_NTZ"), name
        if kind in ("TIMESTAMP", "TIMESTAMP_NTZ"):
            return value, name
        if kind == "DATE":
            return _timestamp((value.toordinal() - _EPOCH_ORDINAL) * 86_400_000_000), name
        if name == "TIMESTAMP" and (kind in _INT_BITS or kind == "DECIMAL"):
            return _timestamp(int(Decimal(value) * 1_000_000)), name
        if name == "TIMESTAMP" and kind in ("FLOAT", "DOUBLE") and math.isfinite(value):
            return _timestamp(int(value * 1_000_000)), name
        raise ValueError(f"cannot cast {kind} to {name}")
    if name == "BINARY" and kind in ("STRING", "BINARY"):
        return (value.encode("utf-8") if kind == "STRING" else value), name
    raise ValueError(f"cannot cast {kind} to {name}")


# ---------------------------------------------------------------------------------------------
# Parsing: sqlglot's Spark dialect, its tree translated; where sqlglot reads a condition otherwise
# than Spark's own parser (which the Scala twin runs), small explicit checks say so.

_SPARK = Spark()
_SYNTAX = "a condition in Spark SQL syntax"
_CONDITION = "a comparison, IN, BETWEEN, IS [NOT] NULL, AND, OR or NOT"
_LITERAL = "a literal (number, string, TRUE, FALSE, NULL, typed literal, CAST)"
_LEAVES = (exp.Null, exp.Boolean, exp.Literal, exp.Placeholder)  # matched to their tokens when sqlglot gives no position
_LEAF_TOKENS = {exp.Null: {TokenType.NULL}, exp.Boolean: {TokenType.TRUE, TokenType.FALSE},
                exp.Placeholder: {TokenType.PLACEHOLDER, TokenType.PARAMETER}}
# Spark places these predicates' errors after their operand (its `predicate` rule starts there)
_PREDICATES = (exp.Like, exp.ILike, exp.RegexpLike, exp.Is, exp.In, exp.NullSafeNEQ, exp.SimilarTo)


def parse(text: str, source: str = "condition") -> Predicate:
    """The predicate of a Spark SQL condition, with SQL literals (module docstring)."""
    return _Translation(text, source).run()


class _Translation:
    def __init__(self, text: str, source: str):
        self.text, self.source = text, source

    def error(self, offset: int, expected: str) -> IndexFormatError:
        return IndexFormatError(self.source, offset, expected)

    def found(self, node: exp.Expression, expected: str) -> IndexFormatError:
        # Spark's TRUE and FALSE are shared constants that carry no position: its errors name the whole text
        start, end = (0, len(self.text)) if isinstance(node, exp.Boolean) else self.span(node)
        return self.error(start, f"{expected}, found '{self.text[start:end]}'")

    # --- the tree and the positions of its nodes

    def run(self) -> Predicate:
        # Spark's lexer reads number suffixes in any case (1e2bd), sqlglot's only in upper case:
        # the same text with upper-case suffixes (same offsets) is what sqlglot is given
        self.read = _SUFFIXED.sub(lambda m: m[1] + m[2].upper(), self.text)
        try:
            self.tokens = _SPARK.tokenize(self.read)
        except TokenError:
            raise self.error(self._unterminated(), _SYNTAX) from None
        if not self.tokens:
            raise self.error(0, _SYNTAX)
        for i, t in enumerate(self.tokens):
            after_operand = i > 0 and not self._prefix(t)
            if (t.token_type == TokenType.SEMICOLON or t.text[:1] in ("@", "$", "#", "{", "}")
                    or (t.token_type == TokenType.L_BRACKET and not after_operand)):
                raise self.error(t.start, _SYNTAX)  # no statements, variables, parameters or arrays in Spark's grammar
            if t.token_type == TokenType.R_PAREN and i and self.tokens[i - 1].token_type == TokenType.L_PAREN and (
                    i < 2 or self.tokens[i - 2].token_type != TokenType.IN):
                raise self.error(t.start, _SYNTAX)  # `()`
        try:
            trees = _SPARK.parser().parse(self.tokens, self.read)
        except ParseError as e:
            raise self._parse_error(e) from None
        if len(trees) != 1 or trees[0] is None:
            raise self.error(0, _SYNTAX)
        self.tree = trees[0]
        self._place_leaves()
        self._literals_first()
        return self.condition(self.tree)

    def _literals_first(self) -> None:
        """Spark's parser rejects malformed literals (DATE '2024-02-30', 300Y, 1e309, INTERVAL …)
        while it parses, before anything else is judged: the first in the text is the error."""
        found = []
        for node in self._in_order(self.tree):
            parent = node.parent
            signed = isinstance(parent, exp.Neg) and self._number_token(node)
            if (isinstance(node, exp.Cast) and self._typed(node, self._before(self.span(node.this)[0]))):
                found.append(node)
            elif isinstance(node, exp.Literal) and not node.is_string and not isinstance(parent, exp.Cast):
                found.append(parent if signed else node)
            elif isinstance(node, exp.Cast) and not isinstance(node, exp.Interval) and isinstance(node.this, exp.Literal) \
                    and not node.this.is_string or (isinstance(node, exp.Cast) and self.text[slice(*self.span(node))][-2:].upper() == "BD"):
                if not self._written_cast(node, self.span(node.this)[0]):
                    found.append(parent if isinstance(parent, exp.Neg) else node)
        for node in sorted(found, key=lambda n: self.span(n)[0]):
            self.literal(node)

    def _unterminated(self) -> int:
        """Where the string, name or comment sqlglot could not close begins (Spark's offset)."""
        tokenizer = _SPARK.tokenizer()
        try:
            tokenizer.tokenize(self.text)
        except TokenError:
            pass
        pos = tokenizer.tokens[-1].end + 1 if tokenizer.tokens else 0
        while pos < len(self.text) and self.text[pos].isspace():
            pos += 1
        return len(self.text) if self.text.startswith("/*", pos) else pos

    def _parse_error(self, e: ParseError) -> IndexFormatError:
        """sqlglot's syntax error at the offset Spark's parser reports, where the two agree on it."""
        info = e.errors[0] if e.errors else {}
        message, highlight = info.get("description", ""), info.get("highlight", "")
        token = next((t for t in self.tokens if t.end + 1 == self._column_offset(info)), None)
        last = self.tokens[-1]
        if last.token_type in (TokenType.NOT, TokenType.AND, TokenType.OR) and token is last:
            # Spark reads a trailing keyword as a name: `NOT` alone is the column NOT, `i = 1 AND` aliases it
            head = self.text[: last.start]
            try:
                whole = head.strip() and parse(head, self.source)
            except IndexFormatError:
                whole = None
            if last.token_type == TokenType.NOT and not head.strip(" (") or head.rstrip().upper().endswith("NOT"):
                return self.error(last.start, f"{_CONDITION}, found '{last.text}'")
            if whole:
                return self.error(last.start, f"AND, OR or the end of the condition, found '{last.text}'")
        if token is None:
            return self.error(len(self.text), _SYNTAX)
        following = self.tokens.index(token) + 1
        if token.token_type == TokenType.NOT:  # `i NOT = 1`, `i IS NOT`: Spark stops after NOT
            return self.error(self.tokens[following].start if following < len(self.tokens) else len(self.text), _SYNTAX)
        if message.startswith("Expecting )"):
            opened = self._unclosed()
            if opened is not None and opened > 0 and self.tokens[opened - 1].token_type == TokenType.IN:
                return self.error(self.tokens[opened].start, _SYNTAX)  # an unclosed IN list: Spark stops at '('
            if following < len(self.tokens):
                return self.error(token.start, _SYNTAX)
        if message.startswith("Expected TYPE") and token.token_type == TokenType.VAR:
            return self.error(token.start, f"a type name, found '{token.text}'")
        if message.startswith(("Invalid expression", "Expected AS", "Expected TYPE")):
            return self.error(token.start, _SYNTAX)
        after = self.tokens.index(token) + 1
        return self.error(self.tokens[after].start if after < len(self.tokens) else len(self.text), _SYNTAX)

    def _unclosed(self) -> int | None:
        """The index of the last '(' token never closed."""
        stack = []
        for i, t in enumerate(self.tokens):
            if t.token_type == TokenType.L_PAREN:
                stack.append(i)
            elif t.token_type == TokenType.R_PAREN and stack:
                stack.pop()
        return stack[-1] if stack else None

    def _column_offset(self, info: dict) -> int:
        lines = self.text.split("\n")
        return sum(len(line) + 1 for line in lines[: info.get("line", 1) - 1]) + info.get("col", 0)

    def _place_leaves(self) -> None:
        """NULL, TRUE and FALSE carry no position in sqlglot's tree: the n-th in source order is the
        n-th such token."""
        leaves = [n for n in self._in_order(self.tree) if isinstance(n, _LEAVES)]
        claimed = {n.meta["start"] for n in leaves if "start" in n.meta}
        cursor = 0
        for node in leaves:
            if "start" not in node.meta:
                kinds = _LEAF_TOKENS[type(node)] if not isinstance(node, exp.Literal) else (
                    {TokenType.STRING} if node.is_string else {TokenType.NUMBER}) | {TokenType.NUMBER}
                token = next((t for t in self.tokens if t.start >= cursor and t.start not in claimed and t.token_type in kinds), None)
                if token is None:
                    continue
                node.meta["start"], node.meta["end"] = token.start, token.end
                claimed.add(token.start)
            cursor = node.meta["start"]

    def _in_order(self, node: exp.Expression):
        yield node
        for child in node.iter_expressions():
            if not isinstance(child, exp.DataType):  # sqlglot's own parameters (1.5BD is a DECIMAL(38, …) cast)
                yield from self._in_order(child)

    def _before(self, offset: int, signs: bool = False):
        """The token before `offset`; a sign '+' (which sqlglot drops from its tree) skipped unless `signs`."""
        i = next((i for i, t in enumerate(self.tokens) if t.start >= offset), len(self.tokens))
        token = self.tokens[i - 1] if i > 0 else None
        if token is not None and token.token_type == TokenType.PLUS and not signs and self._prefix(token):
            return self._before(token.start)
        return token

    def _after(self, end: int):
        return next((t for t in self.tokens if t.start >= end), None)

    def _closing(self, end: int) -> int:
        """The end of the ')' closing the '(' open at `end` (one level deeper)."""
        depth = 1
        for t in self.tokens:
            if t.start < end:
                continue
            depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(t.token_type, 0)
            if depth == 0:
                return t.end + 1
        return len(self.text)

    def span(self, node: exp.Expression) -> tuple[int, int]:
        """[start, end) of the text `node` was read from (the whole text if sqlglot kept no trace)."""
        return self._span(node) or (0, len(self.text))

    def _span(self, node: exp.Expression) -> tuple[int, int] | None:
        if not isinstance(node, exp.Expression):
            return None
        if "start" in node.meta:
            start, end = node.meta["start"], node.meta["end"] + 1
            if isinstance(node, exp.Literal) and not node.is_string and start and self.text[start - 1] == ".":
                start -= 1  # sqlglot's token for `.5` starts at the digit
            if isinstance(node, exp.Func):  # the name: the call runs to its ')'
                opening = self._after(end)
                end = self._closing(opening.end + 1) if opening and opening.token_type == TokenType.L_PAREN else end
            if isinstance(node, exp.Identifier) and node.args.get("quoted"):
                start, end = self.text.rfind("`", 0, start + 1), self.text.find("`", end - 1) + 1
            return start, end
        children = list(node.iter_expressions())
        spans = [sp for sp in (self._span(c) for c in children if not isinstance(c, exp.DataType)) if sp]
        if not spans:
            return None
        start, end = min(s for s, _ in spans), max(e for _, e in spans)
        before = self._before(start)
        if isinstance(node, (exp.In, exp.Bracket)) and node.expressions:
            return start, self._after(end).end + 1
        if before is None:
            return start, end
        if isinstance(node, (exp.Paren, exp.Tuple, exp.Subquery)) and before.token_type == TokenType.L_PAREN:
            return before.start, self._closing(end)
        if isinstance(node, exp.Interval):
            last = self._after(end)
            while last is not None and last.text.upper().rstrip("S") in _INTERVAL_UNITS:
                end, last = last.end + 1, self._after(last.end + 1)
            return before.start, end
        if isinstance(node, exp.Neg) or (isinstance(node, exp.Not) and before and before.token_type == TokenType.NOT):
            return before.start, end
        if self._typed(node, before):
            return before.start, end  # typed literal: DATE '…'
        if isinstance(node, exp.Cast) and self._cast_keyword(node, start):
            return self._cast_keyword(node, start).start, self._closing(end)
        if isinstance(node, exp.Func) and not isinstance(node, exp.Cast):
            name = self._before(before.start) if before.token_type == TokenType.L_PAREN else None
            name = name if name is not None and name.text[:1].isalpha() else None
            return (name.start, self._closing(end)) if name is not None else (start, end)
        return start, end

    def _typed(self, node: exp.Expression, before) -> bool:
        """DATE '…', TIMESTAMP '…' (sqlglot reads them as casts)."""
        return (isinstance(node, exp.Cast) and not isinstance(node, exp.TryCast) and isinstance(node.this, exp.Literal)
                and before is not None and before.text.upper() in ("DATE", "TIMESTAMP", "TIMESTAMP_LTZ", "TIMESTAMP_NTZ", "TIME"))

    def _written_cast(self, node: exp.Cast, child_start: int) -> bool:
        """CAST(…) / TRY_CAST(…) as written, not a suffixed number (sqlglot reads `1L` as a cast)."""
        return self._cast_keyword(node, child_start) is not None

    def _cast_keyword(self, node: exp.Cast, child_start: int):
        if isinstance(node.this, exp.Literal) and self.text[self.span(node.this)[1] - 1].isalpha():
            return None  # 1.5D: the literal's token holds its suffix
        before = self._before(child_start)
        name = self._before(before.start) if before is not None and before.token_type == TokenType.L_PAREN else None
        return name if name is not None and name.text.upper() in ("CAST", "TRY_CAST") else None

    # --- conditions

    def condition(self, node: exp.Expression) -> Predicate:
        if isinstance(node, exp.Paren):
            return self.condition(node.this)
        if isinstance(node, exp.And):
            return conjunction([self.condition(node.this), self.condition(node.expression)])
        if isinstance(node, exp.Or):
            return disjunction([self.condition(node.this), self.condition(node.expression)])
        if isinstance(node, exp.Not):
            return negate(self.condition(node.this))
        if type(node) in _OPERATORS:
            return self.comparison(node, _OPERATORS[type(node)])
        if isinstance(node, exp.In) and not node.args.get("query") and not node.args.get("unnest"):
            keyword = next(t for t in self.tokens if t.start >= self.span(node.this)[1] and t.token_type == TokenType.IN)
            opening = self._after(keyword.end + 1)
            if opening is None or opening.token_type != TokenType.L_PAREN:
                raise self.error(opening.start if opening else len(self.text), _SYNTAX)  # `i IN 1`
            if not node.expressions or self._before(self._closing(opening.end + 1) - 1).token_type == TokenType.COMMA:
                raise self.error(opening.start, _SYNTAX)  # `i IN ()`, `i IN (1,)`: Spark stops at '('
            return Leaf("in", self.column(node.this), tuple(self.literal(v) for v in node.expressions))
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
            return Leaf("is_null", self.column(node.this))
        if isinstance(node, exp.Is) and not isinstance(node.expression, exp.Boolean):
            raise self.error(self.span(node.expression)[0], _SYNTAX)  # `i IS 1`: only NULL, TRUE, FALSE follow IS
        if isinstance(node, exp.Between):
            low_end, high_start = self.span(node.args["low"])[1], self.span(node.args["high"])[0]
            between = [t for t in self.tokens if low_end <= t.start < high_start and t.token_type not in (TokenType.PLUS, TokenType.R_PAREN)]
            if [t.token_type for t in between] != [TokenType.AND]:
                raise self.error(high_start, _SYNTAX)  # sqlglot takes `BETWEEN 1 5`
            return Leaf("between", self.column(node.this), (self.literal(node.args["low"]), self.literal(node.args["high"])))
        if isinstance(node, exp.Alias) and node is not self.tree:  # `(i s)`: Spark names only the whole condition
            after = self._after(self.span(node)[1])
            raise self.error(after.start if after else len(self.text), _SYNTAX)
        if isinstance(node, exp.Alias):  # `i = 1 b` is `i = 1 AS b` to Spark: text after a whole condition
            self.condition(node.this)
            start = self._after(self.span(node.this)[1]).start
            return_end = self.span(node.args["alias"])[1]
            raise self.error(start, f"AND, OR or the end of the condition, found '{self.text[start:return_end]}'")
        if isinstance(node, _PREDICATES) and node.this is not None:
            after = self._after(self.span(node.this)[1])
            raise self.error(after.start, f"{_CONDITION}, found '{self.text[after.start:self.span(node)[1]]}'")
        raise self.found(node, _CONDITION)

    def comparison(self, node: exp.Expression, op: str) -> Predicate:
        if isinstance(node.expression, exp.Is):  # `i = 1 IS NULL` is `(i = 1) IS NULL` to Spark
            start, end = self.span(node)[0], self.span(node.expression.this)[1]
            raise self.error(start, f"a column name, found '{self.text[start:end]}'")
        if any(isinstance(side, (*_OPERATORS, exp.Is, exp.In, exp.Between)) for side in (node.this, node.expression)):
            raise self.error(self.span(node)[0], "a comparison of one column with a literal")  # Spark: left to right
        left, right = self.column_name(node.this), self.column_name(node.expression)
        if left is not None and right is None:
            return Leaf(op, left, (self.literal(node.expression),))
        if left is None and right is not None:
            return Leaf(_MIRRORED[op], right, (self.literal(node.this),))
        raise self.error(self.span(node)[0], "a comparison of one column with a literal")

    def column(self, node: exp.Expression) -> str:
        name = self.column_name(node)
        while isinstance(node, exp.Paren):
            node = node.this
        if name is None:
            raise self.found(node, "a column name")
        return name

    def column_name(self, node: exp.Expression) -> str | None:
        """`name`, `` `quoted` ``, and map entries `m['k']` / `m[1]` named `m[k]` / `m[1]`."""
        if isinstance(node, exp.Paren):
            return self.column_name(node.this)
        if isinstance(node, exp.Column):
            if node.args.get("table") is not None:
                raise self.found(node, "a column name (backquote a name holding '.')")
            return node.name
        if isinstance(node, exp.HexString) and not self.text[self.span(node)[0]].upper() == "X":
            return self.text.__getitem__(slice(*self.span(node)))  # `0x10` is a name to Spark
        if isinstance(node, exp.Bracket) and len(node.expressions) == 1:
            name = self.column_name(node.this)
            if name is None:
                return None
            key = node.expressions[0]
            if isinstance(key, (exp.Literal, exp.Neg)):
                value = self.literal(key)
                if isinstance(value, (str, int)) and not isinstance(value, bool):
                    return f"{name}[{value}]"
            raise self.found(key, "a map key (a string or an integer)")
        return None

    # --- literals: valued as Spark evaluates them (ANSI casts)

    def literal(self, node: exp.Expression) -> object:
        while isinstance(node, exp.Paren):
            node = node.this  # Spark reports the literal inside
        try:
            value, _ = self.value(node)
        except _NotLiteral:
            raise self.found(node, _LITERAL) from None
        except _Rejected as e:
            raise self.error(e.offset, e.expected) from None
        except (ValueError, ArithmeticError, OverflowError, KeyError):
            raise self.found(node, "a valid literal") from None
        return value

    def value(self, node: exp.Expression) -> tuple[object, str]:
        """(value, Spark type) of a literal expression; raises _NotLiteral, or ValueError for a
        literal Spark rejects."""
        start, end = self.span(node)
        written = self.text[start:end]
        plus = self._before(start, signs=True)
        if plus is not None and plus.token_type == TokenType.PLUS and self._prefix(plus):
            value, kind = self._value(node, start, end, written)
            if kind not in _INT_BITS and kind not in ("DECIMAL", "FLOAT", "DOUBLE"):  # Spark's UnaryPositive
                raise _Rejected(plus.start, f"a valid literal, found '{self.text[plus.start:end]}'")
            return value, kind
        return self._value(node, start, end, written)

    def _prefix(self, token) -> bool:
        """Whether `token` starts an operand (a sign) rather than following one (addition)."""
        before = self._before(token.start)
        return before is None or before.token_type not in (TokenType.NUMBER, TokenType.STRING, TokenType.VAR,
                                                           TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.NULL, TokenType.TRUE,
                                                           TokenType.FALSE, TokenType.IDENTIFIER)

    def _value(self, node: exp.Expression, start: int, end: int, written: str) -> tuple[object, str]:
        if isinstance(node, exp.Interval):
            raise ValueError("no INTERVAL columns")
        if isinstance(node, exp.Paren) and self._constant(node.this):
            return self.value(node.this)
        if isinstance(node, exp.Null):
            return None, "NULL"
        if isinstance(node, exp.Boolean):
            return node.this, "BOOLEAN"
        if isinstance(node, exp.Literal) and node.is_string:
            return node.this, "STRING"
        if isinstance(node, (exp.RawString,)):
            return node.this, "STRING"
        if isinstance(node, exp.Concat) and all(isinstance(p, exp.Literal) and p.is_string for p in node.expressions):
            return "".join(p.this for p in node.expressions), "STRING"  # Spark joins adjacent strings: 'a' 'b'
        if isinstance(node, exp.HexString):
            digits = node.this
            return bytes.fromhex(digits if len(digits) % 2 == 0 else "0" + digits), "BINARY"
        if isinstance(node, exp.Literal) or (isinstance(node, exp.Cast) and not self._written_cast(node, self.span(node.this)[0])
                                             and isinstance(node.this, exp.Literal) and not node.this.is_string or
                                             isinstance(node, exp.Cast) and written[-2:].upper() == "BD"):
            if written[-1:].upper() in _SUFFIXES and "." in written:
                raise _Rejected(start + written.index(".") + 1, _SYNTAX)  # Spark: `1.` then `5L`
            return _number(written, False)
        if isinstance(node, exp.Neg):
            inner = node.this
            if isinstance(inner, (exp.Literal, exp.Cast)) and not isinstance(inner, exp.Paren) and self._number_token(inner):
                return _number(self.text[self.span(inner)[0] : self.span(inner)[1]], True)
            v, t = self.value(inner)
            return _minus(v, t), t
        if isinstance(node, exp.Cast) and self._typed(node, self._before(self.span(node.this)[0])):
            return _typed_literal(node.to.this.name, node.this.this)
        if isinstance(node, exp.Cast):
            written_cast = self._written_cast(node, self.span(node.this)[0])
            if written_cast and self._closing(self.span(node.this)[1]) == len(self.text) and not self.text.rstrip().endswith(")"):
                raise _Rejected(len(self.text), _SYNTAX)  # sqlglot takes `CAST('1' AS INT` unclosed
            for p in node.to.expressions:
                if isinstance(p, exp.DataTypeParam) and not (isinstance(p.this, exp.Literal) and p.this.is_int):
                    raise _Rejected(self.span(p.this)[0], _SYNTAX)
            v, t = self.value(node.this)
            target = _target(node.to)
            if node.args.get("safe") and self.text[self._before(self._before(self.span(node.this)[0]).start).start:].upper().startswith("TRY_CAST"):
                try:
                    return _cast(v, t, target)
                except (ValueError, ArithmeticError, OverflowError):
                    return None, target[0]
            return _cast(v, t, target)
        raise _NotLiteral

    def _number_token(self, node: exp.Expression) -> bool:
        start, _ = self.span(node)
        return self.text[start].isdigit() or self.text[start] == "."

    def _constant(self, node: exp.Expression) -> bool:
        return isinstance(node, (exp.Literal, exp.Null, exp.Boolean, exp.HexString, exp.Cast, exp.Neg, exp.Concat, exp.Paren))


_SUFFIXED = re.compile(r"(?<![\w.])((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(bd|BD|bD|Bd|[lsydfLSYDF])(?!\w)")
_INTERVAL_UNITS = {"YEAR", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND", "TO"}


class _NotLiteral(Exception):
    pass


_OPERATORS = {exp.EQ: "equal", exp.NEQ: "not_equal", exp.LT: "less_than", exp.LTE: "less_or_equal",
              exp.GT: "greater_than", exp.GTE: "greater_or_equal"}  # fmt: skip


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
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
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
            return spark_date(text)
        if t.root == "TIME_WITHOUT_TIME_ZONE":
            return _parse_time(text)
        if t.is_timestamp:
            return spark_timestamp(text)
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
