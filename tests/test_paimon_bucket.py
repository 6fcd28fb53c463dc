"""Dynamic-bucket hash index: BinaryRow key layout, Paimon's Murmur variant, fastutil order."""

from __future__ import annotations

import json
import random
import struct
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from indexbridge.paimon.binary_row import Timestamp, binary_row
from indexbridge.paimon.bucket import (
    decode_hash_index,
    encode_hash_index,
    int_hash_set_order,
    key_hash,
    key_hash_array,
    murmur_hash_bytes,
    murmur_hash_words,
)


def le64(value: int) -> bytes:
    return struct.pack("<q", value)


HEADER = bytes(8)  # RowKind INSERT, no nulls (arity <= 56)


# ---------------------------------------------------------------------------------------------
# Murmur


def test_binary_string_hash_code(vectors_dir: Path):
    items = json.loads((vectors_dir / "paimon/hashes/hash_functions.json").read_text())["binary_string_hash_code"]
    assert items
    for item in items:
        assert murmur_hash_bytes(bytes.fromhex(item["utf8_hex"])) == item["hash_code"], item


def test_words_and_bytes_agree_on_aligned_input():
    rng = random.Random(3)
    for n in range(0, 64, 4):
        data = rng.randbytes(n)
        assert murmur_hash_words(data) == murmur_hash_bytes(data)
    with pytest.raises(ValueError, match="multiple of 4"):
        murmur_hash_words(b"abc")


# ---------------------------------------------------------------------------------------------
# BinaryRow layout


def test_int_key_vectors(vectors_dir: Path):
    case = json.loads((vectors_dir / "paimon/hash/hash_pk_int.json").read_text())
    assert [t["sql"] for t in case["key_type"]] == ["INT"]
    for key in case["keys"]:
        assert binary_row(key["key"], ["INT"]).hex() == key["binary_row_hex"]
        assert key_hash(key["key"], ["INT"]) == key["hash"]


@pytest.mark.parametrize(
    ("sql", "value", "slot"),
    [
        ("BOOLEAN", True, b"\x01" + bytes(7)),
        ("TINYINT", -1, b"\xff" + bytes(7)),
        ("SMALLINT", -2, b"\xfe\xff" + bytes(6)),
        ("INT", 0x01020304, b"\x04\x03\x02\x01" + bytes(4)),
        ("INTEGER NOT NULL", 7, b"\x07" + bytes(7)),
        ("BIGINT", -(2**63), le64(-(2**63))),
        ("FLOAT", 1.5, struct.pack("<f", 1.5) + bytes(4)),
        ("DOUBLE", -0.0, struct.pack("<d", -0.0)),
        ("DATE", 19000, struct.pack("<i", 19000) + bytes(4)),
        ("TIME(0)", 86_399_000, struct.pack("<i", 86_399_000) + bytes(4)),
        ("DECIMAL(10,2)", Decimal("-12.34"), le64(-1234)),
        ("DECIMAL(18,0)", 10**18 - 1, le64(10**18 - 1)),
        ("DECIMAL", Decimal(42), le64(42)),
        ("TIMESTAMP(3)", Timestamp(1_700_000_000_123, 456_000), le64(1_700_000_000_123)),  # nanos dropped
        ("TIMESTAMP(0)", 5, le64(5)),
        ("TIMESTAMP(3) WITH LOCAL TIME ZONE", Timestamp(-1), le64(-1)),
        ("STRING", "", bytes(7) + b"\x80"),
        ("VARCHAR(10)", "abc", b"abc" + bytes(4) + b"\x83"),
        ("CHAR(7)", "abcdefg", b"abcdefg\x87"),
        ("BYTES", b"\x00\xff", b"\x00\xff" + bytes(5) + b"\x82"),
    ],
)
def test_fixed_slot_values(sql: str, value: object, slot: bytes):
    assert binary_row([value], [sql]) == HEADER + slot


def test_variable_length_strings_and_binary():
    # fixed part: 8 (header) + 2 x 8 = 24, so the first variable value starts at offset 24
    row = binary_row(["abcdefgh", b"0123456789"], ["STRING", "VARBINARY(20)"])
    assert row[:8] == HEADER
    assert row[8:16] == le64(24 << 32 | 8)
    assert row[16:24] == le64(32 << 32 | 10)
    assert row[24:32] == b"abcdefgh"  # exactly 8 bytes: no padding
    assert row[32:48] == b"0123456789" + bytes(6)  # padded to the next word
    assert len(row) == 48
    assert binary_row(["日本語"], ["STRING"]) == HEADER + le64(16 << 32 | 9) + "日本語".encode() + bytes(7)


@pytest.mark.parametrize(
    ("value", "unscaled_bytes"),
    [
        (Decimal("12.34"), b"\x04\xd2"),
        (Decimal("-0.01"), b"\xff"),
        (Decimal("0.00"), b"\x00"),
        (Decimal("1.28"), b"\x00\x80"),  # 128 needs a sign byte
        (Decimal("-1.29"), b"\xff\x7f"),
        (Decimal("9" * 36 + ".99"), (10**38 - 1).to_bytes(16, "big")),
    ],
)
def test_non_compact_decimal(value: Decimal, unscaled_bytes: bytes):
    row = binary_row([value], ["DECIMAL(38,2)"])
    assert row[:16] == HEADER + le64(16 << 32 | len(unscaled_bytes))
    assert row[16:] == unscaled_bytes + bytes(16 - len(unscaled_bytes))


def test_non_compact_timestamp():
    row = binary_row([Timestamp(1_700_000_000_123, 456_789)], ["TIMESTAMP(9)"])
    assert row == HEADER + le64(16 << 32 | 456_789) + le64(1_700_000_000_123)
    assert binary_row([Timestamp(-5, 1)], ["TIMESTAMP_LTZ(6)"]) == HEADER + le64(16 << 32 | 1) + le64(-5)


def test_nulls():
    row = binary_row([None, 7, None, None, None], ["INT", "BIGINT", "STRING", "DECIMAL(20,2)", "TIMESTAMP(6)"])
    fixed = 8 + 5 * 8
    assert row[0] == 0  # RowKind
    assert row[1] == 0b11101  # fields 0, 2, 3, 4 are bits 8, 10, 11, 12
    assert row[8:16] == bytes(8) and row[16:24] == le64(7) and row[24:32] == bytes(8)
    # non-compact DECIMAL and TIMESTAMP keep a zeroed variable slot even when null
    assert row[32:40] == le64(fixed << 32) and row[40:48] == le64(fixed + 16 << 32)
    assert row[fixed:] == bytes(24)


@pytest.mark.parametrize(("arity", "null_bytes"), [(1, 8), (56, 8), (57, 16), (120, 16), (121, 24)])
def test_null_bit_header_width(arity: int, null_bytes: int):
    row = binary_row([1] * (arity - 1) + [None], ["INT"] * arity)
    assert len(row) == null_bytes + 8 * arity
    bit = arity - 1 + 8
    assert row[bit >> 3] == 1 << (bit & 7)


@pytest.mark.parametrize(
    ("values", "types", "message"),
    [
        ([1], ["INT", "INT"], "1 values for 2 key types"),
        ([2**31], ["INT"], "field 0"),
        ([Decimal("1.234")], ["DECIMAL(10,2)"], "not a DECIMAL"),
        ([Decimal("123456789.1")], ["DECIMAL(10,2)"], "not a DECIMAL"),
        ([1], ["ARRAY<INT>"], "unsupported key type"),
        ([1], ["DECIMAL(40,2)"], "invalid DECIMAL"),
        ([1], ["TIMESTAMP(10)"], "invalid TIMESTAMP"),
        ([1], ["BOOLEAN"], "BOOLEAN needs a bool"),
        ([b"x"], ["STRING"], "needs a str"),
        ([5], ["BYTES"], "needs bytes"),
        ([Timestamp(0, 10**6)], ["TIMESTAMP(6)"], "nano_of_millisecond"),
    ],
)
def test_invalid_keys(values: list, types: list[str], message: str):
    with pytest.raises(ValueError, match=message):
        binary_row(values, types)


# ---------------------------------------------------------------------------------------------
# Vectorised key hashing


FIXED_WIDTH = {
    "BOOLEAN": lambda rng, n: rng.integers(0, 2, n).astype(bool),
    "TINYINT": lambda rng, n: rng.integers(-128, 128, n, dtype=np.int8),
    "SMALLINT": lambda rng, n: rng.integers(-(2**15), 2**15, n).astype(np.int16),
    "INT": lambda rng, n: rng.integers(-(2**31), 2**31, n),
    "BIGINT": lambda rng, n: rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64),
    "FLOAT": lambda rng, n: rng.normal(size=n).astype(np.float32),
    "DOUBLE": lambda rng, n: rng.normal(size=n) * 1e300,
    "DATE": lambda rng, n: rng.integers(-(10**6), 10**6, n),
    "TIME": lambda rng, n: rng.integers(0, 86_400_000, n),
    "TIMESTAMP(3)": lambda rng, n: rng.integers(-(2**50), 2**50, n),
    "DECIMAL(18,4)": lambda rng, n: rng.integers(-(10**18) + 1, 10**18, n),
}


def _scalar(sql: str, value: object) -> object:
    if sql.startswith("DECIMAL"):
        return Decimal(int(value)).scaleb(-4)
    if sql.startswith("TIMESTAMP"):
        return Timestamp(int(value))
    return value.item()


@pytest.mark.parametrize("sql", sorted(FIXED_WIDTH))
def test_key_hash_array_matches_key_hash(sql: str):
    rng = np.random.default_rng(len(sql))
    column = FIXED_WIDTH[sql](rng, 300)
    hashes = key_hash_array([column], [sql])
    assert hashes.dtype == np.int32
    assert hashes.tolist() == [key_hash([_scalar(sql, v)], [sql]) for v in column]


def test_key_hash_array_multi_column_and_wide_rows():
    rng = np.random.default_rng(11)
    types = sorted(FIXED_WIDTH) * 6  # 66 fields: a two-word null header
    columns = [FIXED_WIDTH[t](rng, 50) for t in types]
    expected = [key_hash([_scalar(t, c[i]) for t, c in zip(types, columns)], types) for i in range(50)]
    assert key_hash_array(columns, types).tolist() == expected
    assert key_hash_array([np.array([], dtype=np.int32)], ["INT"]).tolist() == []


@pytest.mark.parametrize(
    ("columns", "types", "message"),
    [
        ([np.array(["a"])], ["STRING"], "not fixed-width"),
        ([np.array([1])], ["TIMESTAMP(6)"], "not fixed-width"),
        ([np.array([1.0])], ["INT"], "integer array"),
        ([np.array([1])], ["DOUBLE"], "float array"),
        ([np.array([128])], ["TINYINT"], "range"),
        ([np.array([2])], ["BOOLEAN"], "range"),
        ([np.array([10**18])], ["DECIMAL(18,0)"], "range"),
        ([np.ma.masked_array([1, 2], mask=[0, 1])], ["INT"], "non-null"),
        ([np.array([1, 2]), np.array([1])], ["INT", "INT"], "non-null"),
    ],
)
def test_key_hash_array_rejects(columns: list, types: list[str], message: str):
    with pytest.raises(ValueError, match=message):
        key_hash_array(columns, types)


# ---------------------------------------------------------------------------------------------
# Hash index file and fastutil IntOpenHashSet order


def test_known_int_hash_set_order():
    # mix(k) = h ^ (h >>> 16) with h = k * 0x9E3779B9; slot = mix & 31 in the initial 32-slot table:
    # mix(1) = 0x9E37E78E -> 14, mix(2) = 0x3C6ECF1C -> 28, mix(3) = 0xDAA6B78D -> 13.
    # Iteration scans slots from the top down.
    assert int_hash_set_order([1, 2, 3]) == [2, 1, 3]
    # 19 and 45 both start at slot 5: the later one probes to slot 6 and iterates first
    assert int_hash_set_order([19, 45]) == [45, 19]
    assert int_hash_set_order([45, 19]) == [19, 45]
    # 33 and 66 both start at slot 31: the later one wraps to slot 0 and iterates last
    assert int_hash_set_order([33, 66, 1]) == [33, 1, 66]
    # 0 is fastutil's free-slot marker: kept aside and returned first
    assert int_hash_set_order([5, 0, 7, 0, 5]) == [0] + int_hash_set_order([5, 7])


@pytest.mark.parametrize("n", [0, 1, 24, 25, 49, 97, 1000, 5000])
def test_int_hash_set_order_is_the_distinct_set(n: int):
    rng = random.Random(n)
    adds = [rng.getrandbits(32) - 2**31 for _ in range(n)] + [0, -1, 2**31 - 1, -(2**31)] * (n > 10)
    adds += adds[: n // 3]  # duplicates change nothing
    order = int_hash_set_order(adds)
    assert sorted(order) == sorted(set(adds))
    assert order == int_hash_set_order(list(dict.fromkeys(adds)))


def test_encode_and_decode_hash_index(vectors_dir: Path):
    hashes = [5, -1, 0, 2**31 - 1, -(2**31), 5]
    given = encode_hash_index(hashes, order="given")
    assert given == b"".join(struct.pack(">i", h) for h in hashes)
    assert decode_hash_index(given).tolist() == hashes
    assert decode_hash_index(given + b"\x01\x02\x03").tolist() == hashes  # a partial int is EOF
    assert encode_hash_index(hashes) == encode_hash_index(int_hash_set_order(hashes), order="given")
    assert encode_hash_index(np.array(hashes, dtype=np.int32), order="given") == given
    assert encode_hash_index([], order="given") == encode_hash_index([]) == b""
    with pytest.raises(ValueError, match="32-bit"):
        encode_hash_index([2**31], order="given")
    with pytest.raises(ValueError, match="32-bit"):
        encode_hash_index([2**31])
    with pytest.raises(ValueError, match="order"):
        encode_hash_index(hashes, order="sorted")
    for path in (vectors_dir / "paimon/hash").glob("*.bin"):
        case = json.loads(path.with_suffix(".json").read_text())
        assert encode_hash_index(decode_hash_index(path.read_bytes()), order="given") == path.read_bytes()
        assert decode_hash_index(path.read_bytes()).tolist() == case["hashes"]
