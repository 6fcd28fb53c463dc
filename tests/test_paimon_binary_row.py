"""BinaryRow: what the writer writes the reader reads back, for every atomic type, nulls and
values in the variable part; malformed rows fail with IndexFormatError at a named offset.
(Paimon's own rows are read in tests/test_paimon_table.py: partitions, keys and statistics.)"""

from __future__ import annotations

import random
import struct
from decimal import Decimal

import pytest

from indexbridge.errors import IndexFormatError
from indexbridge.paimon.binary_row import Timestamp, binary_row, deserialize_binary_row, read_binary_row

TYPES = ["BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DATE", "TIME", "DECIMAL(10, 2)",
         "DECIMAL(38, 4)", "STRING", "BYTES", "TIMESTAMP(3)", "TIMESTAMP(6)", "TIMESTAMP(9) WITH LOCAL TIME ZONE"]  # fmt: skip


def _value(r: random.Random, t: str) -> object:
    if r.random() < 0.15:
        return None
    match t.split("(")[0].split()[0]:
        case "BOOLEAN":
            return r.random() < 0.5
        case "TINYINT":
            return r.randint(-128, 127)
        case "SMALLINT":
            return r.randint(-(1 << 15), (1 << 15) - 1)
        case "INT" | "DATE" | "TIME":
            return r.randint(-(1 << 31), (1 << 31) - 1)
        case "BIGINT":
            return r.randint(-(1 << 63), (1 << 63) - 1)
        case "FLOAT":
            return struct.unpack("<f", struct.pack("<f", r.uniform(-1e6, 1e6)))[0]
        case "DOUBLE":
            return r.uniform(-1e300, 1e300)
        case "DECIMAL":
            precision, scale = (10, 2) if "10" in t else (38, 4)
            return Decimal(r.randint(-(10**precision) + 1, 10**precision - 1)).scaleb(-scale)
        case "STRING":
            return "".join(r.choice("aé€😀 z") for _ in range(r.randint(0, 20)))
        case "BYTES":
            return bytes(r.randrange(256) for _ in range(r.randint(0, 20)))
        case "TIMESTAMP":
            millis = r.randint(-(10**13), 10**13)
            return Timestamp(millis, 0 if "(3)" in t else r.randint(0, 999_999))
    raise AssertionError(t)


@pytest.mark.parametrize("seed", range(200))
def test_round_trip(seed):
    r = random.Random(seed)
    types = [r.choice(TYPES) for _ in range(r.randint(0, 70))]
    values = [_value(r, t) for t in types]
    data = binary_row(values, types)
    assert read_binary_row(data, types) == values
    serialized = struct.pack(">i", len(types)) + data
    assert deserialize_binary_row(serialized, types) == values


def test_malformed_rows_name_the_offset():
    data = binary_row(["a string longer than seven bytes"], ["STRING"])
    with pytest.raises(IndexFormatError, match="offset 8: a variable-part reference"):
        read_binary_row(data[:-8], ["STRING"], source="row")
    with pytest.raises(IndexFormatError, match="fixed bytes"):
        read_binary_row(data[:10], ["STRING"], source="row")
    with pytest.raises(IndexFormatError, match="a BinaryRow of 2 fields, got arity 1"):
        deserialize_binary_row(struct.pack(">i", 1) + data, ["STRING", "INT"], source="row")
