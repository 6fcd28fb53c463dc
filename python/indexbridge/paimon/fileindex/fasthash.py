"""Paimon's `FastHash`: the 64-bit hash of a typed value used by the bloom-filter index (spec
§5.3, App. A.1–A.2).

| type                             | hash                                                    |
|----------------------------------|---------------------------------------------------------|
| CHAR, VARCHAR, STRING            | xxh64(seed 0) of the UTF-8 bytes                        |
| BINARY, VARBINARY                | xxh64(seed 0) of the bytes                              |
| TINYINT … BIGINT, DATE, TIME     | wang64(value sign-extended to 64 bits)                  |
| FLOAT                            | wang64(sign-extended floatToIntBits); NaN → 0x7fc00000  |
| DOUBLE                           | wang64(doubleToLongBits); NaN → 0x7ff8000000000000      |
| TIMESTAMP(p), TIMESTAMP_LTZ(p)   | wang64(millis if p ≤ 3 else micros)                     |

XXH64 comes from the `xxhash` library. `wang64` is hand-written: it is Paimon's own variant of
Thomas Wang's hash, with arithmetic right shifts, which no library provides.
"""

from __future__ import annotations

import math
import struct

import xxhash

_MASK64 = (1 << 64) - 1
CANONICAL_FLOAT_NAN = 0x7FC00000
CANONICAL_DOUBLE_NAN = 0x7FF8000000000000


def to_java_long(value: int) -> int:
    value &= _MASK64
    return value - (1 << 64) if value >= 1 << 63 else value


def xxh64(data: bytes) -> int:
    """XXH64 with seed 0, as a signed Java long."""
    return to_java_long(xxhash.xxh64_intdigest(data))


# wang64's steps ``(~key) + (key << 21)``, ``key + (key << 3) + (key << 8)``, ``key + (key << 2) +
# (key << 4)`` and ``key + (key << 31)`` are, modulo 2^64, ``key * m - 1`` and ``key * m``:
WANG64_MULTIPLIERS = ((1 << 21) - 1, 1 + (1 << 3) + (1 << 8), 1 + (1 << 2) + (1 << 4), 1 + (1 << 31))
_SIGN64 = 1 << 63


# Bits above an arithmetic right shift by 24, 14 and 28 of a negative 64-bit value.
_FILL24, _FILL14, _FILL28 = (_MASK64 >> n ^ _MASK64 for n in (24, 14, 28))


def wang64_unsigned(key: int) -> int:
    """Paimon's `FastHash.getLongHash` (Thomas Wang's 64-bit mix with arithmetic shifts) as an
    unsigned 64-bit pattern. It runs once per bloom-filter probe, so it keeps to few integer
    operations: every step is masked to 64 bits, and a shift of a pattern with bit 63 set fills
    the vacated bits as the signed shift would."""
    m21, m3_8, m2_4, m31 = WANG64_MULTIPLIERS
    k = int(key) & _MASK64  # the key's 64 bits (compiled, fasthash.pxd makes k and these C integers)
    k = k * m21 - 1 & _MASK64
    k ^= k >> 24 if k < _SIGN64 else k >> 24 | _FILL24
    k = k * m3_8 & _MASK64
    k ^= k >> 14 if k < _SIGN64 else k >> 14 | _FILL14
    k = k * m2_4 & _MASK64
    k ^= k >> 28 if k < _SIGN64 else k >> 28 | _FILL28
    return k * m31 & _MASK64


def wang64(key: int) -> int:
    """:func:`wang64_unsigned` as a signed Java long."""
    return to_java_long(wang64_unsigned(key))


def float_to_int_bits(value: float) -> int:
    """Java's `Float.floatToIntBits` (NaNs canonical) as an unsigned 32-bit pattern."""
    return CANONICAL_FLOAT_NAN if math.isnan(value) else struct.unpack("<I", struct.pack("<f", value))[0]


def double_to_long_bits(value: float) -> int:
    """Java's `Double.doubleToLongBits` (NaNs canonical) as an unsigned 64-bit pattern."""
    return CANONICAL_DOUBLE_NAN if math.isnan(value) else struct.unpack("<Q", struct.pack("<d", value))[0]


def timestamp_long(millis: int, nano_of_millisecond: int, precision: int) -> int:
    """The long Paimon's indexes use for a timestamp (spec §1.4): millis, or micros above p=3
    (Java's `Math.multiplyExact`/`addExact`: an overflow is an error)."""
    value = millis if precision <= 3 else millis * 1000 + nano_of_millisecond // 1000
    if to_java_long(value) != value:
        raise ValueError(f"timestamp {millis} ms + {nano_of_millisecond} ns overflows a long at precision {precision}")
    return value


INTEGRAL_ROOTS = {"TINYINT", "SMALLINT", "INTEGER", "INT", "BIGINT", "DATE", "TIME_WITHOUT_TIME_ZONE", "TIME"}


def fast_hash(root: str, value: object, precision: int = 0) -> int:
    """`FastHash` of one Paimon internal value of the type with this root (vectors README
    names: VARCHAR, BINARY, TIMESTAMP_WITH_LOCAL_TIME_ZONE, …). Timestamps are
    `indexbridge.paimon.binary_row.Timestamp`s, FLOAT/DOUBLE Python floats."""
    if root in ("CHAR", "VARCHAR"):
        return xxh64(value.encode("utf-8"))
    if root in ("BINARY", "VARBINARY"):
        return xxh64(bytes(value))
    if root in INTEGRAL_ROOTS:
        return wang64(int(value))
    if root == "FLOAT":
        bits = float_to_int_bits(value)
        return wang64(bits - (1 << 32) if bits & 0x80000000 else bits)
    if root == "DOUBLE":
        return wang64(double_to_long_bits(value))
    if root.startswith("TIMESTAMP"):
        return wang64(timestamp_long(value.millisecond, value.nano_of_millisecond, precision))
    raise ValueError(f"the bloom-filter index does not support {root}")
