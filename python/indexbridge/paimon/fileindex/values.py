"""Paimon column types and the per-type value encodings the file indexes share (spec §1.4, §5.3,
§6.2, §7.1, App. A.4, App. C).

A column is handed over as a sequence of Paimon internal values (``None`` = SQL NULL), a numpy
array (numeric types; no nulls) or a pyarrow array. Each index maps it to one flat numpy array
plus a validity mask, so building never loops in Python per row except for strings:

| root                                 | internal value          | ``int64`` key (bitmap, BSI)            |
|--------------------------------------|-------------------------|----------------------------------------|
| TINYINT SMALLINT INTEGER BIGINT      | int                     | the value                              |
| DATE / TIME_WITHOUT_TIME_ZONE        | int (days / ms of day)  | the value                              |
| TIMESTAMP_* (precision p)            | ``Timestamp``           | millis if p <= 3 else micros           |
| FLOAT                                | float                   | ``floatToIntBits`` (signed 32-bit)     |
| DOUBLE                               | float                   | ``doubleToLongBits`` (signed 64-bit)   |
| BOOLEAN                              | bool                    | 0 / 1                                  |
| DECIMAL(p, s)                        | ``decimal.Decimal``     | the unscaled value (must fit a long)   |
| CHAR VARCHAR / BINARY VARBINARY      | str / bytes             | (bytes keys: UTF-8 / raw bytes)        |

The Java ``hashCode`` and ``compareTo`` of the bitmap index's key objects (``Integer``,
``Long``, ``Float``, ``BinaryString`` ...) are here too: they decide the writer's
``java.util.HashMap`` order (App. B) and the v2 sort order (§6.2).
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Context, Decimal


import numpy as np
import pandas as pd
import pyarrow as pa

from indexbridge.paimon.binary_row import Timestamp, parse_key_type
from indexbridge.paimon.bucket import murmur_hash_bytes
from indexbridge.paimon.fileindex.fasthash import (
    CANONICAL_DOUBLE_NAN,
    CANONICAL_FLOAT_NAN,
    double_to_long_bits,
    float_to_int_bits,
    timestamp_long,
)

INTEGRAL_ROOTS = frozenset({"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "DATE", "TIME_WITHOUT_TIME_ZONE"})
TIMESTAMP_ROOTS = frozenset({"TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"})
STRING_ROOTS = frozenset({"CHAR", "VARCHAR"})
BINARY_ROOTS = frozenset({"BINARY", "VARBINARY"})
_ROOT_ALIASES = {"INT": "INTEGER", "STRING": "VARCHAR", "BYTES": "VARBINARY", "TIME": "TIME_WITHOUT_TIME_ZONE",
                 "TIMESTAMP": "TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_LTZ": "TIMESTAMP_WITH_LOCAL_TIME_ZONE"}  # fmt: skip
_INT_RANGES = {"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "DATE": 32, "TIME_WITHOUT_TIME_ZONE": 32, "BIGINT": 64}
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


@dataclass(frozen=True)
class DataType:
    """A Paimon column type by its ``DataTypeRoot`` name (vectors README spelling; ``INT``,
    ``STRING``, ``TIMESTAMP``, ``TIMESTAMP_LTZ`` ... are accepted as aliases). ``key``/``value``
    are set for ``MAP``, ``element`` for ``ARRAY`` and ``MULTISET``, ``fields`` (``(id, name,
    type)`` triples) for ``ROW``; ``precision`` is also the length of CHAR, VARCHAR, BINARY and
    VARBINARY. Nullability does not take part in equality."""

    root: str
    precision: int = 0
    scale: int = 0
    key: DataType | None = None
    value: DataType | None = None
    element: DataType | None = None
    fields: tuple[tuple[int, str, DataType], ...] = ()
    nullable: bool = field(default=True, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", _ROOT_ALIASES.get(self.root.upper(), self.root.upper()))

    @classmethod
    def from_json(cls, t: dict) -> DataType:
        """From the vectors' ``{"sql", "root", "precision"?, "scale"?, "key"?, "value"?}``."""
        return cls(
            t["root"],
            t.get("precision", 0) or 0,
            t.get("scale", 0) or 0,
            cls.from_json(t["key"]) if t.get("key") else None,
            cls.from_json(t["value"]) if t.get("value") else None,
        )

    @classmethod
    def from_sql(cls, sql: str) -> DataType:
        """A type in its SQL form (``INT``, ``DECIMAL(10, 2)``, ``TIMESTAMP(3)``, ``STRING`` ...), read
        as the bucket key types are (Scala: ``KeyType.parse``)."""
        t = parse_key_type(sql)
        return cls(t.root, t.precision, t.scale)

    @property
    def is_integral(self) -> bool:
        return self.root in INTEGRAL_ROOTS

    @property
    def is_timestamp(self) -> bool:
        return self.root in TIMESTAMP_ROOTS

    @property
    def is_string(self) -> bool:
        return self.root in STRING_ROOTS

    @property
    def is_binary(self) -> bool:
        return self.root in BINARY_ROOTS


Column = Sequence[object] | np.ndarray | pa.Array | pa.ChunkedArray


@dataclass
class ValueColumn:
    """A column in one flat array: ``values`` for every row (arbitrary where ``valid`` is False).

    ``values`` is ``int64`` (see the module table) or, for strings/binary, an object array of
    ``bytes``."""

    values: np.ndarray
    valid: np.ndarray  # bool per row

    @property
    def row_count(self) -> int:
        return len(self.valid)


def unscaled_long(value: Decimal | int, scale: int) -> int:
    """The unscaled value of a DECIMAL at ``scale`` (exact), as a Java long (spec §7.1)."""
    scaled = Context(prec=200).scaleb(Decimal(value), scale)
    unscaled = int(scaled)
    if scaled != unscaled:
        raise ValueError(f"{value} has more than {scale} fraction digits")
    if not _LONG_MIN <= unscaled <= _LONG_MAX:
        raise ValueError(f"the unscaled value of {value} does not fit in a long (BigInteger.longValueExact)")
    return unscaled


def _signed32(bits: int) -> int:
    return bits - (1 << 32) if bits & 0x80000000 else bits


def _signed64(bits: int) -> int:
    return bits - (1 << 64) if bits & (1 << 63) else bits


def long_key(t: DataType, value: object) -> int:
    """The ``int64`` key of one non-null internal value (module table)."""
    if t.is_integral:
        return _integral_key(t.root, value)
    if t.is_timestamp:
        if isinstance(value, Timestamp):
            return timestamp_long(value.millisecond, value.nano_of_millisecond, t.precision)
        return int(value)  # already the mapped long
    if t.root == "FLOAT":
        return _signed32(float_to_int_bits(value))
    if t.root == "DOUBLE":
        return _signed64(double_to_long_bits(value))
    if t.root == "BOOLEAN":
        return 1 if value else 0
    if t.root == "DECIMAL":
        return unscaled_long(value, t.scale)
    raise ValueError(f"{t.root} values have no long key")


def _integral_key(root: str, value: object) -> int:
    v = int(value)
    bits = _INT_RANGES[root]
    if not -(1 << (bits - 1)) <= v < 1 << (bits - 1):
        raise ValueError(f"{v} is out of range for {root}")
    return v


def key_function(t: DataType) -> Callable[[object], object]:
    """:func:`long_key` or :func:`bytes_key` of ``t`` as one function of the value, the type
    dispatched once: what an index asked one literal at a time keeps (a third of a bitmap
    equality query's time went to dispatching on the type)."""
    if t.is_string:
        return functools.partial(bytes_key, t)
    if t.is_integral:
        return functools.partial(_integral_key, t.root)
    return functools.partial(long_key, t)


def bytes_key(t: DataType, value: object) -> bytes:
    """The key bytes of a CHAR/VARCHAR (raw UTF-8, not modified UTF-8) or BINARY value."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return bytes(value)


_NANOS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


def _arrow_numpy(array: pa.Array | pa.ChunkedArray, target: DataType) -> tuple[object, np.ndarray]:
    """Values (numpy where the type allows, else a Python list) and validity of an Arrow array.

    Temporal arrays become the keys directly: date32 days, time32/time64 milliseconds of day,
    timestamps millis (precision <= 3) or micros, floored like Paimon's ``Timestamp``."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    valid = np.ones(len(array), bool) if array.null_count == 0 else array.is_valid().to_numpy(zero_copy_only=False)
    t = array.type
    if array.null_count and not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)):
        array = array.fill_null(False if pa.types.is_boolean(t) else 0) if not pa.types.is_decimal(t) else array
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
        return array.to_numpy(zero_copy_only=False), valid
    if pa.types.is_date32(t):
        return array.cast(pa.int32()).to_numpy(zero_copy_only=False), valid
    if pa.types.is_time32(t) or pa.types.is_time64(t) or pa.types.is_timestamp(t):
        raw = array.cast(pa.int64()).to_numpy(zero_copy_only=False)
        unit_nanos = _NANOS[t.unit]
        if pa.types.is_timestamp(t):
            key_nanos = 10**6 if target.precision <= 3 else 10**3
        else:
            key_nanos = 10**6  # TIME: milliseconds of day
        if unit_nanos >= key_nanos:
            return raw * (unit_nanos // key_nanos), valid
        return raw // (key_nanos // unit_nanos), valid  # floor division, as Timestamp.fromXxx
    return array.to_pylist(), valid


def value_column(t: DataType, column: Column) -> ValueColumn:
    """Map a column to its keys (module table): int64 for numbers and temporals, bytes objects
    for strings and binary. Numpy/Arrow numeric input is converted without a Python loop."""
    if isinstance(column, (pa.Array, pa.ChunkedArray)):
        data, valid = _arrow_numpy(column, t)
    elif isinstance(column, np.ndarray) and column.dtype != object:
        data, valid = column, np.ones(len(column), bool)
    else:
        data = list(column)
        valid = np.fromiter((v is not None for v in data), bool, len(data))
    n = len(valid)
    if t.is_string or t.is_binary:
        values = np.empty(n, object)
        values[:] = [bytes_key(t, v) if ok else b"" for v, ok in zip(data, valid)]
        return ValueColumn(values, valid)
    if isinstance(data, np.ndarray) and data.dtype != object:
        return ValueColumn(_numpy_keys(t, data, valid), valid)
    values = np.fromiter((long_key(t, v) if ok else 0 for v, ok in zip(data, valid)), np.int64, n)
    return ValueColumn(values, valid)


def _numpy_keys(t: DataType, data: np.ndarray, valid: np.ndarray) -> np.ndarray:
    if t.root == "FLOAT":
        f = data.astype(np.float32)
        bits = f.view(np.int32).astype(np.int64)
        return np.where(np.isnan(f), CANONICAL_FLOAT_NAN, bits)
    if t.root == "DOUBLE":
        d = data.astype(np.float64)
        return np.where(np.isnan(d), CANONICAL_DOUBLE_NAN, d.view(np.int64))
    if t.root == "BOOLEAN":
        return data.astype(bool).astype(np.int64)
    if t.is_integral or t.is_timestamp or t.root == "DECIMAL":
        if data.dtype.kind not in "iub":
            raise ValueError(f"{t.root} column needs integer values, got numpy dtype {data.dtype}")
        bits = _INT_RANGES.get(t.root, 64)
        # a dtype no wider than the type (int64 for BIGINT, int32 for INT ...) cannot overflow it
        fits = data.dtype.kind == "b" or data.dtype.itemsize * 8 <= bits - (data.dtype.kind == "u")
        if t.is_integral and not fits:
            checked = data[valid]
            if len(checked) and (checked.min() < -(1 << (bits - 1)) or checked.max() >= 1 << (bits - 1)):
                raise ValueError(f"values out of range for {t.root}")
        return data.astype(np.int64)
    raise ValueError(f"{t.root} values have no long key")


@dataclass
class FactorizedColumn:
    """A column as distinct keys: ``codes[row]`` indexes ``keys`` (-1 = null). Keys are numbered in
    order of first appearance, which is the order Paimon's writers first see them."""

    codes: np.ndarray  # int64
    keys: list  # int or bytes keys (module table)

    @property
    def row_count(self) -> int:
        return len(self.codes)


def factorize_column(t: DataType, column: Column) -> FactorizedColumn:
    """Distinct keys of a column and each row's key number, without a Python loop per row.

    Strings and binary are factorized before encoding (UTF-8 is injective), so only distinct
    values are encoded; other types are factorized on their int64 keys (a lossy mapping such as
    a timestamp's dropped nanoseconds must merge values)."""
    if t.is_string or t.is_binary:
        if isinstance(column, (pa.Array, pa.ChunkedArray)):
            encoded = column.dictionary_encode()
            if isinstance(encoded, pa.ChunkedArray):
                encoded = encoded.combine_chunks()  # unifies the chunk dictionaries
            codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
            distinct = encoded.dictionary.to_pylist()
        else:
            items = column if isinstance(column, np.ndarray) else list(column)
            data = np.empty(len(items), object)
            data[:] = items
            codes, uniques = pd.factorize(data, use_na_sentinel=True)
            codes = codes.astype(np.int64)
            distinct = uniques.tolist()
        return FactorizedColumn(codes, [bytes_key(t, v) for v in distinct])
    col = value_column(t, column)
    # pandas' masked factorize: one hash pass over all rows, nulls coded -1
    codes, uniques = pd.arrays.IntegerArray(col.values, ~col.valid).factorize()
    return FactorizedColumn(codes.astype(np.int64, copy=False), uniques.tolist())


# ---------------------------------------------------------------------------------------------
# Java hashCode / compareTo of the key objects (App. A.4, §6.2), for HashMap order and v2 sorting


def java_hash_codes(t: DataType, keys: np.ndarray) -> np.ndarray:
    """``hashCode()`` of each key object, as int64 holding the signed 32-bit value."""
    if t.is_string:
        return np.fromiter((murmur_hash_bytes(k) for k in keys), np.int64, len(keys))
    keys = keys.astype(np.int64)
    if t.root == "BOOLEAN":
        return np.where(keys != 0, 1231, 1237).astype(np.int64)
    if t.root == "FLOAT" or (t.is_integral and t.root != "BIGINT"):
        return keys  # Byte/Short/Integer: the value; Float: floatToIntBits
    u = keys.view(np.uint64)  # Long, Double bits, timestamps as Long
    return (u ^ (u >> np.uint64(32))).astype(np.uint32).view(np.int32).astype(np.int64)


def sort_keys(t: DataType, keys: np.ndarray) -> np.ndarray:
    """Keys transformed so that numpy order is Java's ``compareTo`` order (§6.2).

    ``Float.compare``/``Double.compare`` order equals the signed order of the canonical bits with
    the magnitude bits of negative numbers flipped (so -0.0 < 0.0 and NaN is last). Strings
    (bytes) already sort as ``BinaryString.compareTo``: unsigned bytewise, shorter first.
    """
    if t.is_string or t.is_binary:
        return keys
    if t.root == "FLOAT":
        return np.where(keys < 0, keys ^ 0x7FFFFFFF, keys)
    if t.root == "DOUBLE":
        return np.where(keys < 0, keys ^ np.int64(0x7FFFFFFFFFFFFFFF), keys)
    return keys


def sortable_key(t: DataType, key: object) -> object:
    """One key transformed as :func:`sort_keys` does, for Python comparisons."""
    if t.root == "FLOAT" and key < 0:
        return key ^ 0x7FFFFFFF
    if t.root == "DOUBLE" and key < 0:
        return key ^ 0x7FFFFFFFFFFFFFFF
    return key


def java_comparator(t: DataType) -> Callable[[object, object], int]:
    """``compareTo`` of two keys (int64 keys or bytes) of type ``t``, as -1/0/1."""

    def compare(a: object, b: object) -> int:
        a, b = sortable_key(t, a), sortable_key(t, b)
        return (a > b) - (a < b)

    return compare


# ---------------------------------------------------------------------------------------------
# Key bytes in the bitmap index meta (§6.2)

_KEY_STRUCTS = {
    "TINYINT": struct.Struct(">b"),
    "SMALLINT": struct.Struct(">h"),
    "INTEGER": struct.Struct(">i"),
    "DATE": struct.Struct(">i"),
    "TIME_WITHOUT_TIME_ZONE": struct.Struct(">i"),
    "BIGINT": struct.Struct(">q"),
    "FLOAT": struct.Struct(">i"),
    "DOUBLE": struct.Struct(">q"),
    "BOOLEAN": struct.Struct(">?"),
}


def fixed_key_struct(t: DataType) -> struct.Struct | None:
    """The fixed-width big-endian layout of a bitmap key, or None for strings (length-prefixed)."""
    if t.is_timestamp:
        return _KEY_STRUCTS["BIGINT"]
    return _KEY_STRUCTS.get(t.root)
