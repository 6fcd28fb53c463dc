"""Bounds-checked reading of binary index files.

Every decoder in indexbridge reads through a :class:`ByteReader`. The reader checks each
length against the bytes actually available *before* it slices or allocates anything. When a
check fails it raises :class:`~indexbridge.errors.IndexFormatError` with the source name, the
absolute offset and what the format expected there.

Fixed-width integers are two's complement. ``_be`` means big-endian (``java.io.DataOutput``
framing), ``_le`` means little-endian (roaring payloads, Iceberg's 64-bit bitmap).
CRC-32 is :func:`crc32`, ISA-L's (``isal``): the function of ``zlib.crc32`` and
``java.util.zip.CRC32``, six times faster on the few kilobytes of a deletion vector.
``uvarint`` is Go's ``encoding/binary`` unsigned LEB128 (7 bits a byte, low group first, at most
10 bytes for a 64-bit value), the integer framing of zap segments.
"""

from __future__ import annotations

import struct
from functools import lru_cache

import numpy as np
from isal.isal_zlib import crc32

from indexbridge.errors import IndexFormatError

_U8 = struct.Struct("B")
_I32_BE = struct.Struct(">i")
_U32_BE = struct.Struct(">I")
_I32_LE = struct.Struct("<i")
_U32_LE = struct.Struct("<I")
_I64_LE = struct.Struct("<q")
_U64_BE = struct.Struct(">Q")
_U64_LE = struct.Struct("<Q")

MAX_UVARINT_BYTES = 10
__all__ = ["ByteReader", "crc32", "put_uvarint", "small_uvarint", "list_offsets", "ragged_arange", "take_ranges", "uvarint_bytes", "uvarints", "uvarints_at", "MAX_UVARINT_BYTES", "UVARINTS_BELOW_2_14"]


def put_uvarint(out: bytearray, value: int) -> None:
    """Append Go's ``binary.PutUvarint(value)`` (minimal unsigned LEB128) to ``out``."""
    if value < 0x80:
        out.append(value)
        return
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def uvarint_bytes(value: int) -> bytes:
    """Go's ``binary.PutUvarint(value)`` as bytes."""
    out = bytearray()
    put_uvarint(out, value)
    return bytes(out)


# The uvarint bytes of every value below 2^14 (one or two bytes), by value: a zap build writes
# hundreds of thousands of locations, and indexing a tuple costs a fraction of a cached call
UVARINTS_BELOW_2_14 = tuple([bytes((v,)) for v in range(0x80)] + [bytes((v & 0x7F | 0x80, v >> 7)) for v in range(0x80, 1 << 14)])


@lru_cache(maxsize=1 << 16)
def small_uvarint(value: int) -> bytes:
    """:func:`uvarint_bytes`, cached: for the small values (lengths, counts, norms) that repeat a lot."""
    return uvarint_bytes(value)


def list_offsets(counts) -> np.ndarray:
    """[0, c0, c0+c1, ...] as int64: where each of lists of ``counts`` items starts in their
    concatenation, and its end (Arrow's list offsets)."""
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def ragged_arange(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + c) for s, c in zip(starts, counts)])`` as int64."""
    counts = np.asarray(counts, dtype=np.int64)
    ends = np.cumsum(counts)
    total = int(ends[-1]) if len(ends) else 0
    return np.repeat(np.asarray(starts, dtype=np.int64) - (ends - counts), counts) + np.arange(total, dtype=np.int64)


def take_ranges(buf: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> list[bytes]:
    """``[bytes(buf[a:b]) for a, b in zip(starts, stops)]`` (ranges within ``buf``), gathered at
    once: one copy of all of them, then a slice each of that ``bytes``."""
    raw = buf[ragged_arange(starts, stops - starts)].tobytes()
    cuts = list_offsets(stops - starts).tolist()
    return [raw[a:b] for a, b in zip(cuts, cuts[1:])]


def uvarints(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(bytes as uint8, the byte count of each) of Go's ``binary.PutUvarint`` of each of ``values``
    (uint64) in turn, all at once (numpy), a byte position per round over the values still going on."""
    rest = np.asarray(values, dtype=np.uint64)
    sizes = np.ones(len(rest), dtype=np.int64)
    high = rest >> np.uint64(7)
    while high.any():
        sizes += high != 0
        high >>= np.uint64(7)
    at = list_offsets(sizes)
    out = np.empty(int(at[-1]), dtype=np.uint8)
    at = at[:-1]
    while len(rest):
        going = rest >= 0x80
        out[at] = (rest & np.uint64(0x7F)).astype(np.uint8) | (going.astype(np.uint8) << 7)
        rest, at = rest[going] >> np.uint64(7), at[going] + 1
    return out, sizes


def uvarints_at(buf: np.ndarray, pos: np.ndarray, end: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(value uint64, offset after it, ok) of the uvarint at each of ``pos`` (int64, >= 0) in the
    bytes ``buf[:end]``, all at once (numpy), a byte position per round over the uvarints still
    going on (most are one or two bytes); ok is False where one starts at or runs to ``end`` or
    goes past 64 bits (a :class:`ByteReader` there then names the fault)."""
    last = end - 1
    byte = buf[np.minimum(pos, last)]
    values = (byte & 0x7F).astype(np.uint64)
    after = pos + 1
    ok = pos < end
    going = np.flatnonzero((byte >= 0x80) & ok)
    for k in range(1, MAX_UVARINT_BYTES):
        if not going.size:
            break
        at = pos[going] + k
        byte = buf[np.minimum(at, last)]
        values[going] |= (byte & 0x7F).astype(np.uint64) << np.uint64(7 * k)
        after[going] = at + 1
        inside = at < end
        bad = ~inside
        if k == MAX_UVARINT_BYTES - 1:  # the tenth byte must end the uvarint, with bit 63 at most
            bad |= byte > 1
        ok[going[bad]] = False
        going = going[inside & (byte >= 0x80)]
    return values, after, ok


class ByteReader:
    """A cursor over ``data[offset:end]`` that never reads past ``end``.

    ``pos`` is absolute (an offset into ``data``), so error messages name file offsets even
    when the reader covers only part of a file.
    """

    __slots__ = ("data", "source", "pos", "end")

    def __init__(
        self,
        data: bytes | bytearray | memoryview,
        source: str = "<bytes>",
        offset: int = 0,
        end: int | None = None,
    ):
        self.data = memoryview(data).cast("B")
        self.source = source
        size = len(self.data)
        self.end = size if end is None else end
        if not 0 <= self.end <= size:
            raise IndexFormatError(source, self.end, f"an end offset within the {size} bytes available")
        if not 0 <= offset <= self.end:
            raise IndexFormatError(source, offset, f"an offset within the {self.end} bytes available")
        self.pos = offset

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def error(self, expected: str, offset: int | None = None) -> IndexFormatError:
        """An :class:`IndexFormatError` at ``offset`` (default: the current position)."""
        return IndexFormatError(self.source, self.pos if offset is None else offset, expected)

    def _short(self, n: int, what: str) -> IndexFormatError:
        return self.error(f"{n} bytes of {what}, found {self.end - self.pos}")

    def take(self, n: int, what: str = "data") -> memoryview:
        """The next ``n`` bytes as a zero-copy view; checked before slicing."""
        start, end = self.pos, self.pos + n
        if n < 0 or end > self.end:
            raise self._short(n, what)
        self.pos = end
        return self.data[start:end]

    def sub_reader(self, n: int, what: str) -> ByteReader:
        """A reader limited to the next ``n`` bytes (same absolute offsets); skips them here."""
        start, end = self.pos, self.pos + n
        if n < 0 or end > self.end:
            raise self._short(n, what)
        self.pos = end
        return ByteReader(self.data, self.source, start, end)

    def _unpack(self, st: struct.Struct, what: str) -> int:
        start, end = self.pos, self.pos + st.size
        if end > self.end:
            raise self._short(st.size, what)
        self.pos = end
        return st.unpack_from(self.data, start)[0]

    def u8(self, what: str = "u8") -> int:
        return self._unpack(_U8, what)

    def i32_be(self, what: str = "i32 BE") -> int:
        return self._unpack(_I32_BE, what)

    def u32_be(self, what: str = "u32 BE") -> int:
        return self._unpack(_U32_BE, what)

    def i32_le(self, what: str = "i32 LE") -> int:
        return self._unpack(_I32_LE, what)

    def u32_le(self, what: str = "u32 LE") -> int:
        return self._unpack(_U32_LE, what)

    def i64_le(self, what: str = "i64 LE") -> int:
        return self._unpack(_I64_LE, what)

    def u64_be(self, what: str = "u64 BE") -> int:
        return self._unpack(_U64_BE, what)

    def u64_le(self, what: str = "u64 LE") -> int:
        return self._unpack(_U64_LE, what)

    def uvarint(self, what: str = "uvarint") -> int:
        """One Go uvarint; like ``binary.Uvarint`` it rejects values over 64 bits."""
        data, pos, end = self.data, self.pos, self.end
        value = shift = 0
        while True:
            if pos >= end:
                raise self.error(f"{what} (uvarint), found end of data")
            byte = data[pos]
            pos += 1
            if byte < 0x80:
                if shift == 63 and byte > 1:
                    raise self.error(f"{what} (uvarint) of at most 64 bits")
                self.pos = pos
                return value | byte << shift
            value |= (byte & 0x7F) << shift
            shift += 7
            if shift > 63:
                raise self.error(f"{what} (uvarint) of at most {MAX_UVARINT_BYTES} bytes")
