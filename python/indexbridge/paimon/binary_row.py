"""Paimon's ``BinaryRow``: the row format of key rows (hash index, bucket keys), partitions and
min/max statistics in the manifests.

A row of ``arity`` fields (``BinaryRowWriter``)::

    null bits   ((arity + 63 + 8) // 64) * 8 bytes; byte 0 = RowKind (0, INSERT),
                then bit 8 + i (LSB first within each byte) is set when field i is null
    fixed part  8 bytes per field, little-endian:
                  BOOLEAN/TINYINT 1 byte, SMALLINT 2, INT/DATE/TIME 4, BIGINT 8,
                  FLOAT 4 (raw IEEE bits), DOUBLE 8, rest of the slot zero
                  DECIMAL(p <= 18)       unscaled long
                  TIMESTAMP(p <= 3)      epoch millis
                  STRING/BINARY <= 7 B   bytes inline in slot bytes 0..6, byte 7 = 0x80 | length
                  STRING/BINARY > 7 B    (offset << 32) | length  -> variable part
                  DECIMAL(p > 18)        (offset << 32) | n       -> 16 bytes in the variable part:
                                          unscaled value, minimal big-endian two's complement
                                          (BigInteger.toByteArray, n bytes), then zeros
                  TIMESTAMP(p > 3)       (offset << 32) | nanoOfMillisecond -> 8 bytes: millis
                  null                   0, except DECIMAL(p > 18) and TIMESTAMP(p > 3), which
                                          still reserve their zeroed variable slot: (offset << 32)
    variable    each value padded with zeros to a multiple of 8 bytes, offsets from row start

In manifests a row is stored as ``SerializationUtils.serializeBinaryRow`` writes it: ``i32 BE
arity`` followed by the row's bytes (:func:`deserialize_binary_row`).

Types are given in their SQL form (``INT``, ``DECIMAL(20, 4)``, ``TIMESTAMP(6) WITH LOCAL TIME
ZONE``, ``VARCHAR(12)`` ...). Values are Paimon's internal values as Python objects: bool; int for
TINYINT..BIGINT, DATE (days) and TIME (millis of day); float; :class:`Timestamp`; ``Decimal``;
str for CHAR/VARCHAR/STRING; bytes for BINARY/VARBINARY/BYTES.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Context, Decimal

import numpy as np

from indexbridge.errors import IndexFormatError


@dataclass(frozen=True)
class Timestamp:
    """Paimon's internal ``Timestamp``: epoch milliseconds and nano-of-millisecond (0..999999)."""

    millisecond: int
    nano_of_millisecond: int = 0


@dataclass(frozen=True)
class FieldType:
    """An atomic Paimon type as far as its ``BinaryRow`` slot is concerned. ``SKIPPED`` stands
    for a field whose value is not read (a nested type in a statistics row: always null)."""

    root: str  # BOOLEAN TINYINT SMALLINT INT BIGINT FLOAT DOUBLE DATE TIME TIMESTAMP DECIMAL STRING BINARY SKIPPED
    precision: int = 0
    scale: int = 0

    @property
    def compact(self) -> bool:
        """Whether the value lives entirely in the fixed slot (``Decimal/Timestamp.isCompact``)."""
        if self.root == "DECIMAL":
            return self.precision <= 18
        if self.root == "TIMESTAMP":
            return self.precision <= 3
        return self.root not in ("STRING", "BINARY")


_TYPE_RE = re.compile(
    r"^\s*(?P<name>[A-Z_]+(?: PRECISION)?)\s*(?:\(\s*(?P<args>[0-9,\s]*)\))?"
    r"\s*(?P<ltz>WITH LOCAL TIME ZONE|WITHOUT TIME ZONE)?\s*(?:NOT NULL|NULL)?\s*$"
)
_SLOT_FORMATS = {"BOOLEAN": "<?", "TINYINT": "<b", "SMALLINT": "<h", "INT": "<i", "BIGINT": "<q",
                 "FLOAT": "<f", "DOUBLE": "<d", "DATE": "<i", "TIME": "<i"}  # fmt: skip
_ALIASES = {"INTEGER": "INT", "CHAR": "STRING", "VARCHAR": "STRING", "STRING": "STRING",
            "VARBINARY": "BINARY", "BYTES": "BINARY", "NUMERIC": "DECIMAL", "DEC": "DECIMAL",
            "DOUBLE PRECISION": "DOUBLE", "TIMESTAMP_LTZ": "TIMESTAMP"}  # fmt: skip


def parse_key_type(sql: str) -> FieldType:
    """The :class:`FieldType` of an atomic type in its SQL form (``DataType.asSQLString``)."""
    m = _TYPE_RE.match(sql.upper())
    if not m:
        raise ValueError(f"unsupported key type {sql!r}")
    name = _ALIASES.get(m["name"], m["name"])
    args = [int(a) for a in m["args"].split(",")] if m["args"] and m["args"].strip() else []
    if m["ltz"] and name not in ("TIMESTAMP", "TIME"):
        raise ValueError(f"unsupported key type {sql!r}")
    if name == "DECIMAL":
        if len(args) > 2:
            raise ValueError(f"invalid DECIMAL precision/scale in {sql!r}")
        precision = args[0] if args else 10  # DecimalType defaults: DECIMAL(10, 0)
        scale = args[1] if len(args) == 2 else 0
        if not (1 <= precision <= 38 and 0 <= scale <= precision):
            raise ValueError(f"invalid DECIMAL precision/scale in {sql!r}")
        return FieldType("DECIMAL", precision, scale)
    if name == "TIMESTAMP":
        precision = args[0] if args else 6
        if len(args) > 1 or not 0 <= precision <= 9:
            raise ValueError(f"invalid TIMESTAMP precision in {sql!r}")
        return FieldType("TIMESTAMP", precision)
    if name == "TIME":
        if len(args) > 1 or not 0 <= (args[0] if args else 0) <= 9:
            raise ValueError(f"invalid TIME precision in {sql!r}")
        return FieldType("TIME", args[0] if args else 0)
    if name in _SLOT_FORMATS or name in ("STRING", "BINARY"):
        return FieldType(name)
    raise ValueError(f"unsupported key type {sql!r}")


def null_bits_size(arity: int) -> int:
    """``BinaryRow.calculateBitSetWidthInBytes``: 8-bit header plus one bit per field, in longs."""
    return (arity + 63 + 8) // 64 * 8


def _unscaled(value: Decimal | int, t: FieldType) -> int:
    """The unscaled value of ``value`` at the type's scale, which must be exact (no rounding)."""
    exact = Context(prec=t.precision + 80)  # wide enough that scaling never rounds
    scaled = exact.scaleb(Decimal(value), t.scale)
    unscaled = int(scaled)
    if scaled != unscaled or abs(unscaled) >= 10**t.precision:
        raise ValueError(f"{value} is not a DECIMAL({t.precision},{t.scale}) value")
    return unscaled


def _pad8(b: bytes) -> bytes:
    return b + bytes(-len(b) % 8)


# ---------------------------------------------------------------------------------------------
# Writing


def binary_row(values: Sequence[object], types: Sequence[str | FieldType]) -> bytes:
    """The bytes of Paimon's ``BinaryRow`` holding ``values`` (``None`` = null).

    TIMESTAMP values may also be int millis, DECIMAL values ints; decimals must be exact at the
    type's scale.
    """
    if len(values) != len(types):
        raise ValueError(f"{len(values)} values for {len(types)} key types")
    key_types = [t if isinstance(t, FieldType) else parse_key_type(t) for t in types]
    null_bits = null_bits_size(len(key_types))
    fixed = bytearray(null_bits + 8 * len(key_types))
    variable = bytearray()

    def append_variable(content: bytes) -> int:
        offset = len(fixed) + len(variable)
        variable.extend(_pad8(content))
        return offset

    for i, (value, t) in enumerate(zip(values, key_types)):
        slot = null_bits + 8 * i
        if value is None:
            fixed[(i + 8) >> 3] |= 1 << ((i + 8) & 7)
            if not t.compact and t.root in ("DECIMAL", "TIMESTAMP"):
                offset = append_variable(bytes(16 if t.root == "DECIMAL" else 8))
                struct.pack_into("<q", fixed, slot, offset << 32)
            continue
        try:
            fixed[slot : slot + 8] = _slot_bytes(value, t, append_variable)
        except (struct.error, TypeError, ValueError, ArithmeticError) as e:
            raise ValueError(f"field {i}: cannot write {value!r} as {types[i]}: {e}") from None
    return bytes(fixed + variable)


def _slot_bytes(value: object, t: FieldType, append_variable: Callable[[bytes], int]) -> bytes:
    """The 8 slot bytes of a non-null value; variable-length content goes to ``append_variable``."""
    if t.root in _SLOT_FORMATS:
        if t.root == "BOOLEAN" and not isinstance(value, (bool, np.bool_)):
            raise TypeError("BOOLEAN needs a bool")
        return _pad8(struct.pack(_SLOT_FORMATS[t.root], value))
    if t.root == "DECIMAL":
        unscaled = _unscaled(value, t)
        if t.compact:
            return struct.pack("<q", unscaled)
        # BigInteger.toByteArray(): minimal two's complement, big-endian, in a zeroed 16-byte slot
        length = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
        big_endian = unscaled.to_bytes(length, "big", signed=True)
        return struct.pack("<q", append_variable(big_endian + bytes(16 - length)) << 32 | length)
    if t.root == "TIMESTAMP":
        ts = value if isinstance(value, Timestamp) else Timestamp(value)
        if not 0 <= ts.nano_of_millisecond <= 999_999:
            raise ValueError("nano_of_millisecond must be in 0..999999")
        if t.compact:
            return struct.pack("<q", ts.millisecond)
        return struct.pack("<q", append_variable(struct.pack("<q", ts.millisecond)) << 32 | ts.nano_of_millisecond)
    if t.root == "STRING":
        if not isinstance(value, str):
            raise TypeError("STRING needs a str")
        content = value.encode("utf-8")
    elif isinstance(value, (bytes, bytearray, memoryview)):
        content = bytes(value)
    else:
        raise TypeError("BINARY needs bytes")
    if len(content) <= 7:
        return content + bytes(7 - len(content)) + bytes([0x80 | len(content)])
    return struct.pack("<q", append_variable(content) << 32 | len(content))


# ---------------------------------------------------------------------------------------------
# Reading

_SLOT = struct.Struct("<q")


def read_binary_row(
    data: bytes | memoryview, types: Sequence[str | FieldType], *, source: str = "<bytes>", base: int = 0
) -> list[object]:
    """The values of the ``BinaryRow`` in ``data`` (exactly the row's bytes) with one field per
    type. Every slot and variable-part reference is checked against the bytes; ``base`` is the
    row's offset in ``source``, for error messages."""
    field_types = [t if isinstance(t, FieldType) else parse_key_type(t) for t in types]
    arity = len(field_types)
    null_bits = null_bits_size(arity)
    fixed_end = null_bits + 8 * arity
    if len(data) < fixed_end:
        raise IndexFormatError(source, base + len(data), f"a BinaryRow of {arity} fields needs {fixed_end} fixed bytes, {len(data)} present")
    view = memoryview(data)
    values: list[object] = []
    for i, t in enumerate(field_types):
        if view[(i + 8) >> 3] & (1 << ((i + 8) & 7)):
            values.append(None)
            continue
        slot = null_bits + 8 * i
        values.append(_read_slot(view, slot, t, fixed_end, source, base))
    return values


def _variable(view: memoryview, slot: int, offset: int, length: int, fixed_end: int, source: str, base: int) -> bytes:
    if offset < fixed_end or length < 0 or offset + length > len(view):
        raise IndexFormatError(
            source, base + slot, f"a variable-part reference within the row's {len(view)} bytes, got offset {offset} length {length}"
        )
    return bytes(view[offset : offset + length])


def _read_slot(view: memoryview, slot: int, t: FieldType, fixed_end: int, source: str, base: int) -> object:
    if t.root == "SKIPPED":
        return None
    if t.root in _SLOT_FORMATS:
        fmt = _SLOT_FORMATS[t.root]
        (value,) = struct.unpack_from(fmt, view, slot)
        return bool(view[slot]) if t.root == "BOOLEAN" else value
    (word,) = _SLOT.unpack_from(view, slot)
    if t.root == "DECIMAL":
        if t.compact:
            return Decimal(word).scaleb(-t.scale)
        content = _variable(view, slot, (word >> 32) & 0xFFFFFFFF, word & 0xFFFFFFFF, fixed_end, source, base)
        if not 1 <= len(content) <= 16:
            raise IndexFormatError(source, base + slot, f"a DECIMAL of 1 to 16 bytes, got {len(content)}")
        return Decimal(int.from_bytes(content, "big", signed=True)).scaleb(-t.scale)
    if t.root == "TIMESTAMP":
        if t.compact:
            return Timestamp(word)
        nanos = word & 0xFFFFFFFF
        content = _variable(view, slot, (word >> 32) & 0xFFFFFFFF, 8, fixed_end, source, base)
        if nanos > 999_999:
            raise IndexFormatError(source, base + slot, f"a nano-of-millisecond in 0..999999, got {nanos}")
        return Timestamp(_SLOT.unpack(content)[0], nanos)
    # STRING / BINARY: inline when the slot's highest bit is set
    if word < 0:
        length = (view[slot + 7] & 0x7F)
        if length > 7:
            raise IndexFormatError(source, base + slot + 7, f"an inline length of at most 7, got {length}")
        content = bytes(view[slot : slot + length])
    else:
        content = _variable(view, slot, word >> 32, word & 0xFFFFFFFF, fixed_end, source, base)
    if t.root == "STRING":
        try:
            return content.decode("utf-8")
        except UnicodeDecodeError as e:
            raise IndexFormatError(source, base + slot, f"UTF-8 text: {e}") from None
    return content


def deserialize_binary_row(
    data: bytes | memoryview, types: Sequence[str | FieldType], *, source: str = "<bytes>", base: int = 0
) -> list[object]:
    """A row as ``SerializationUtils.serializeBinaryRow`` stores it in manifests: ``i32 BE
    arity`` then the row's bytes. The arity must equal the number of types."""
    if len(data) < 4:
        raise IndexFormatError(source, base, f"a serialized BinaryRow (4-byte arity), got {len(data)} bytes")
    (arity,) = struct.unpack_from(">i", data, 0)
    if arity != len(types):
        raise IndexFormatError(source, base, f"a BinaryRow of {len(types)} fields, got arity {arity}")
    return read_binary_row(memoryview(data)[4:], types, source=source, base=base + 4)
