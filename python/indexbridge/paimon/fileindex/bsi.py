"""Paimon's bit-sliced index (``bsi``, spec §7): exact comparisons on integral values as row sets.

Each value maps to a signed 64-bit long (§7.1: integers, DATE days, TIME millis, TIMESTAMP
millis/micros by precision, DECIMAL unscaled). Values >= 0 go to the positive BSI, values < 0
to the negative BSI as ``|v|``; nulls to neither. Payload::

    u8      version = 1              (readers accept any signed value <= 1)
    i32 BE  rowCount                 all rows, nulls included
    bool8   hasPositive
    [BSI]                            positive side, if hasPositive
    bool8   hasNegative
    [BSI]                            negative side, if hasNegative

    BSI:
    u8      version = 1
    i64 BE  min                      always 0 from Paimon's writer (its running min starts at 0)
    i64 BE  max
    roaring32(ebm)                   rows with a value on this side
    i32 BE  sliceCount               bit length of (max - min)
    roaring32(slice[0]) .. roaring32(slice[sliceCount-1])     slice i = rows whose bit i is set

Queries (§7.4) compare with O'Neil's algorithm after a min/max shortcut; every answer is
restricted to non-null rows except ``is_null``. ``Long.MIN_VALUE`` cannot be written, and as a
literal it is handled specially (nothing is below it).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from pyroaring import BitMap

from indexbridge.bytes import ByteReader
from indexbridge.paimon.fileindex.predicate import REMAIN, BitmapResult, FileIndexResult, IndexReader
from indexbridge.paimon.fileindex.values import Column, DataType, long_key, value_column
from indexbridge.roaring import bitmap_from_mask, read_roaring32, serialize32

VERSION_1 = 1
LONG_MIN = -(1 << 63)
MAX_SLICES = 64
_SUPPORTED = frozenset({"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "DATE", "TIME_WITHOUT_TIME_ZONE",
                        "TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "DECIMAL"})  # fmt: skip


def _check_type(t: DataType) -> None:
    if t.root not in _SUPPORTED:
        raise ValueError(f"the bsi index does not support {t.root}")


@dataclass
class BitSlice:
    """One side (``BitSliceIndexRoaringBitmap``): existence bitmap and bit slices of ``x - min``."""

    min: int = 0
    max: int = 0
    ebm: BitMap = field(default_factory=BitMap)
    slices: list[BitMap] = field(default_factory=list)

    @classmethod
    def build(cls, side: np.ndarray, values: np.ndarray) -> BitSlice:
        """The rows where the bool mask ``side`` is set, holding ``values`` (>= 0, int64, one per
        row; ignored elsewhere). min stays 0 as in Paimon."""
        values = np.where(side, values, 0)
        top = int(values.max()) if len(values) else 0
        bit = np.empty(len(values), np.int64)
        slices = []
        for i in range(top.bit_length()):
            np.bitwise_and(values, 1 << i, out=bit)
            slices.append(bitmap_from_mask(bit != 0))
        return cls(0, top, bitmap_from_mask(side), slices)

    def smallest(self) -> int:
        """The smallest value on this side (``min`` is only a bound: Paimon's writer stores 0),
        found bit by bit from the top slice; ``ebm`` must not be empty."""
        rows, value = self.ebm, 0
        for i in reversed(range(len(self.slices))):
            without = rows - self.slices[i]
            if without:
                rows = without
            else:
                value |= 1 << i
        return self.min + value

    def serialize(self) -> bytes:
        parts = [struct.pack(">bqq", VERSION_1, self.min, self.max), serialize32(self.ebm)]
        parts.append(struct.pack(">i", len(self.slices)))
        parts += [serialize32(s) for s in self.slices]
        return b"".join(parts)

    @classmethod
    def read(cls, reader: ByteReader) -> BitSlice:
        at = reader.pos
        version = reader.u8("BSI version")
        if version > VERSION_1 and version < 0x80:  # a signed byte <= 1
            raise reader.error(f"BSI version <= {VERSION_1}, found {version}", at)
        lo, hi = struct.unpack(">qq", reader.take(16, "BSI min and max"))
        ebm = read_roaring32(reader)
        at = reader.pos
        count = reader.i32_be("BSI sliceCount")
        if not 0 <= count <= MAX_SLICES:
            raise reader.error(f"a BSI sliceCount in 0..{MAX_SLICES}, found {count}", at)
        return cls(lo, hi, ebm, [read_roaring32(reader) for _ in range(count)])

    def compare(self, op: str, x: int) -> BitMap:
        """Rows whose value ``op`` x, for op in EQ GT GTE LT LTE (shortcut, then O'Neil)."""
        lo, hi = self.min, self.max
        shortcut = {
            "EQ": (lo == hi == x, x < lo or x > hi),
            "GT": (x < lo, x >= hi),
            "GTE": (x <= lo, x > hi),
            "LT": (x > hi, x <= lo),
            "LTE": (x >= hi, x < lo),
        }[op]
        if shortcut[0]:
            return BitMap(self.ebm)
        if shortcut[1]:
            return BitMap()
        y = x - lo
        gt, lt, eq = BitMap(), BitMap(), BitMap(self.ebm)
        for i in range(len(self.slices) - 1, -1, -1):
            if y >> i & 1:
                lt |= eq - self.slices[i]
                eq &= self.slices[i]
            else:
                gt |= eq & self.slices[i]
                eq -= self.slices[i]
        result = {"EQ": eq, "GT": gt, "LT": lt, "LTE": lt | eq, "GTE": gt | eq}[op]
        return result & self.ebm


@dataclass
class BitSliceIndex(IndexReader):
    """A BSI payload: ``row_count`` and the positive/negative sides (None when absent)."""

    data_type: DataType
    row_count: int
    positive: BitSlice | None = None
    negative: BitSlice | None = None

    index_type = "bsi"

    @classmethod
    def build(cls, data_type: DataType, column: Column) -> BitSliceIndex:
        """Index every row of ``column`` (None = null) as ``BitSliceIndexBitmapFileIndex.Writer``."""
        _check_type(data_type)
        col = value_column(data_type, column)
        values = col.values
        if np.any(col.valid & (values == LONG_MIN)):
            raise ValueError("the bsi index cannot hold Long.MIN_VALUE (its absolute value overflows)")
        pos = col.valid & (values >= 0)
        neg = col.valid & (values < 0)
        positive = BitSlice.build(pos, values) if pos.any() else None
        negative = BitSlice.build(neg, -values) if neg.any() else None
        return cls(data_type, col.row_count, positive, negative)

    def serialize(self) -> bytes:
        parts = [struct.pack(">bi", VERSION_1, self.row_count)]
        for side in (self.positive, self.negative):
            parts.append(b"\x01" if side is not None else b"\x00")
            if side is not None:
                parts.append(side.serialize())
        return b"".join(parts)

    @classmethod
    def read(cls, data: bytes | bytearray | memoryview, data_type: DataType, source: str = "<bytes>") -> BitSliceIndex:
        """Parse a payload (``data`` is exactly the payload)."""
        _check_type(data_type)
        reader = ByteReader(data, source)
        at = reader.pos
        version = reader.u8("bsi version")
        if version > VERSION_1 and version < 0x80:  # read as a signed byte; any value <= 1
            raise reader.error(f"bsi version <= {VERSION_1}, found {version}", at)
        row_count = reader.i32_be("rowCount")
        positive = BitSlice.read(reader) if reader.u8("hasPositive") else None
        negative = BitSlice.read(reader) if reader.u8("hasNegative") else None
        return cls(data_type, row_count, positive, negative)

    # -- queries ----------------------------------------------------------------------------

    @property
    def _p(self) -> BitSlice:
        return self.positive or BitSlice()

    @property
    def _n(self) -> BitSlice:
        return self.negative or BitSlice()

    def value_range(self) -> tuple[int, int] | None:
        """The smallest and largest indexed value (as longs), or None without non-null rows."""
        if self.positive is None and self.negative is None:
            return None
        high = self.positive.max if self.positive is not None else -self.negative.smallest()
        low = -self.negative.max if self.negative is not None else self.positive.smallest()
        return low, high

    def non_null_rows(self) -> BitMap:
        return self._p.ebm | self._n.ebm

    def _equal(self, v: int) -> BitMap:
        if v == LONG_MIN:
            return BitMap()
        return self._n.compare("EQ", -v) if v < 0 else self._p.compare("EQ", v)

    def _less(self, v: int, inclusive: bool) -> BitMap:
        if v == LONG_MIN:
            return BitMap()
        if v < 0:
            return self._n.compare("GTE" if inclusive else "GT", -v)
        return self._p.compare("LTE" if inclusive else "LT", v) | self._n.ebm

    def _greater(self, v: int, inclusive: bool) -> BitMap:
        if v == LONG_MIN:
            return self.non_null_rows()
        if v < 0:
            return self._p.ebm | self._n.compare("LTE" if inclusive else "LT", -v)
        return self._p.compare("GTE" if inclusive else "GT", v)

    def query(self, op: str, literals: Sequence[object] = ()) -> FileIndexResult:
        if op == "is_not_null":
            return BitmapResult(self.non_null_rows())
        if op == "is_null":
            return BitmapResult(self.non_null_rows().flip(0, self.row_count) if self.row_count > 0 else BitMap())
        if any(v is None for v in literals):
            return REMAIN
        try:
            vs = [long_key(self.data_type, v) for v in literals]
        except ValueError:  # e.g. a DECIMAL(38) literal beyond a long: Paimon throws; REMAIN is safe
            return REMAIN
        if op == "equal":
            return BitmapResult(self._equal(vs[0]))
        if op == "in":
            return BitmapResult(BitMap.union(BitMap(), *(self._equal(v) for v in vs)))
        if op in ("not_equal", "not_in"):
            return BitmapResult(self.non_null_rows() - BitMap.union(BitMap(), *(self._equal(v) for v in vs)))
        if op == "less_than":
            return BitmapResult(self._less(vs[0], False))
        if op == "less_or_equal":
            return BitmapResult(self._less(vs[0], True))
        if op == "greater_than":
            return BitmapResult(self._greater(vs[0], False))
        if op == "greater_or_equal":
            return BitmapResult(self._greater(vs[0], True))
        if op == "between":
            return BitmapResult(self._greater(vs[0], True) & self._less(vs[1], True))
        return REMAIN
