"""Table rows as JSON: what ``indexbridge paimon read`` prints (one object per row, column ->
value), the same form the reference harness renders Paimon's own rows in
(``io.indexbridge.reference.Canonical``)::

    BOOLEAN -> true/false        TINYINT .. BIGINT -> number       FLOAT, DOUBLE -> number, or "NaN", "Infinity", "-Infinity"
    DECIMAL -> "12.30" (plain, scale digits)                        CHAR, VARCHAR -> string
    BINARY, VARBINARY -> base64  DATE -> "2024-05-01"              TIME -> "12:34:56.789"
    TIMESTAMP(p) -> "2024-05-01 12:34:56.123456" (6 fraction digits, 9 when p > 6)
    TIMESTAMP_LTZ(p) -> the same in UTC, followed by "Z"
    ARRAY -> list   MAP -> object (string keys) or list of [key, value]   MULTISET -> the same, element -> count   ROW -> object

Partition values (internal values) render the same way through :func:`value_json`.
"""

from __future__ import annotations

import base64
import datetime
import math
from decimal import Decimal

import numpy as np
import pyarrow as pa

from indexbridge.paimon.binary_row import Timestamp
from indexbridge.paimon.fileindex.values import DataType
from indexbridge.paimon.table.schema import TableSchema

_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_DAY = datetime.date(1970, 1, 1)
_PER_SECOND = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}


def _float(value: float, single: bool) -> object:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return float(str(np.float32(value))) if single else value


def _timestamp(nanos: int, precision: int, zoned: bool) -> str:
    seconds, fraction = divmod(nanos, 1_000_000_000)
    wall = _EPOCH + datetime.timedelta(seconds=seconds)
    text = wall.strftime("%Y-%m-%d %H:%M:%S") + "." + (f"{fraction:09d}" if precision > 6 else f"{fraction // 1000:06d}")
    return text + ("Z" if zoned else "")


def value_json(t: DataType, v: object) -> object:
    """An internal value (as the BinaryRow reader returns it) in the JSON form."""
    if v is None:
        return None
    if t.root in ("FLOAT", "DOUBLE"):
        return _float(v, t.root == "FLOAT")
    if t.root == "DECIMAL":
        return format(Decimal(v), "f")
    if t.root in ("BINARY", "VARBINARY"):
        return base64.b64encode(bytes(v)).decode("ascii")
    if t.root == "DATE":
        return (_EPOCH_DAY + datetime.timedelta(days=v)).isoformat()
    if t.root == "TIME_WITHOUT_TIME_ZONE":
        return (_EPOCH + datetime.timedelta(milliseconds=v)).strftime("%H:%M:%S.%f")[:-3]
    if isinstance(v, Timestamp):
        return _timestamp(v.millisecond * 1_000_000 + v.nano_of_millisecond, t.precision, t.root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE")
    return v


def _column_json(t: DataType, array: pa.Array) -> list[object]:
    """One Arrow column in the JSON form, value by value."""
    if pa.types.is_timestamp(array.type):
        scale = 1_000_000_000 // _PER_SECOND[array.type.unit]
        ints = array.cast(pa.int64()).to_pylist()
        zoned = t.root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE"
        return [None if n is None else _timestamp(n * scale, t.precision, zoned) for n in ints]
    if pa.types.is_time(array.type):
        return [None if v is None else v.strftime("%H:%M:%S.%f")[:-3] for v in array.to_pylist()]
    if pa.types.is_date(array.type):
        return [None if v is None else v.isoformat() for v in array.to_pylist()]
    if t.root == "ARRAY":
        values = _column_json(t.element, array.flatten())
        offsets = array.offsets.to_pylist()
        return [None if not array[i].is_valid else values[offsets[i] : offsets[i + 1]] for i in range(len(array))]
    if t.root in ("MAP", "MULTISET"):
        key_type = t.key if t.root == "MAP" else t.element
        value_type = t.value if t.root == "MAP" else DataType("INTEGER")
        keys, values = _column_json(key_type, array.keys), _column_json(value_type, array.items)
        offsets = array.offsets.to_pylist()
        out: list[object] = []
        for i in range(len(array)):
            if not array[i].is_valid:
                out.append(None)
                continue
            pairs = list(zip(keys[offsets[i] : offsets[i + 1]], values[offsets[i] : offsets[i + 1]]))
            out.append(dict(pairs) if key_type.root in ("CHAR", "VARCHAR") else [list(p) for p in pairs])
        return out
    if t.root == "ROW":
        children = {name: _column_json(ft, array.field(name)) for _, name, ft in t.fields}
        return [None if not array[i].is_valid else {n: c[i] for n, c in children.items()} for i in range(len(array))]
    return [value_json(t, v) for v in array.to_pylist()]


def rows_json(table: pa.Table, schema: TableSchema) -> list[dict[str, object]]:
    """The rows of an Arrow table read from ``schema``'s table, as JSON objects."""
    columns = {}
    for name in table.column_names:
        array = table.column(name).combine_chunks() if table.num_rows else pa.array([], table.schema.field(name).type)
        columns[name] = _column_json(schema.field(name).type, array)
    return [{name: values[i] for name, values in columns.items()} for i in range(table.num_rows)]
