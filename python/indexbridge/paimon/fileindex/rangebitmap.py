"""Paimon's range-bitmap file index (``range-bitmap``, spec/range-bitmap.md): a dictionary of the
distinct keys in key order (a key's *code* is its rank) and a bit-sliced index of every row's code.

All integers are big-endian; ``roaring32`` is the run-optimised portable bitmap::

    i32   header_length            bytes after this field up to the dictionary
    u8    version = 1              (read signed, any value <= 1)
    i32   row_count                all rows, nulls included
    i32   cardinality              distinct non-null keys
    key   min, key max             only when cardinality > 0
    i32   dictionary_length
    DICTIONARY (ChunkedDictionary)
      i32   header_length = 13
      u8    version = 1
      i32   chunk_count
      i32   offsets_length = 4 * chunk_count
      i32   chunks_length
      i32 x chunk_count            offset of each chunk header in the chunk-header section
      chunk headers                u8 version, key head, i32 head_code, i32 keys_offset, i32 size,
                                   fixed keys:  i32 keys_length, i32 fixed_length
                                   strings:     i32 offsets_length, i32 keys_length
      key areas                    fixed: size keys; strings: size x i32 offset, then the keys
    BSI (BitSliceIndexBitmap)      the rest of the payload
      i32   header_length = 10 + 8 * S
      u8    version = 1
      u8    S                      slices: max(1, bitlength(cardinality - 1)); 64 when cardinality = 0
      i32   ebm_length
      i32   indexes_length = 8 * S
      (i32 offset, i32 length) x S slice i, offset from the end of the ebm
      roaring32(ebm)               rows with a non-null value
      roaring32(slice[i]) x S      rows whose code has bit i set

Keys (§1): int8/int16/int32/int64 (TINYINT, SMALLINT, INT/DATE/TIME, BIGINT; DECIMAL(p <= 18) as
its unscaled long; TIMESTAMP/LTZ(p <= 6) as millis or, above p = 3, micros), float32/float64 (raw
IEEE bits, ``Float.compare`` order: -0.0 < 0.0, every NaN one key and the largest, its stored bits
the first NaN's), bool (1 byte), string (i32 length + UTF-8, unsigned bytewise order). A chunk
takes the first key as its head; a further key joins while its serialized size fits the
``chunk-size`` bytes left in the chunk's key area (§2, §5).

Queries (§7) are exact comparisons on the non-null rows, answered as row sets; ``is_null`` and
top-N on a payload without non-null values answer ``{0, row_count - 1}`` as Paimon 1.4.2 does.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
from pyroaring import BitMap

from indexbridge.bytes import ByteReader
from indexbridge.errors import IndexFormatError
from indexbridge.paimon.binary_row import Timestamp
from indexbridge.paimon.fileindex.bitmap import parse_memory_size
from indexbridge.paimon.fileindex.predicate import REMAIN, BitmapResult, FileIndexResult, IndexReader, TopN
from indexbridge.paimon.fileindex.values import Column, DataType, bytes_key, unscaled_long, value_column
from indexbridge.roaring import bitmap_from_mask, read_roaring32, serialize32

VERSION_1 = 1
CHUNK_SIZE = "chunk-size"
_I32 = struct.Struct(">i")
_INT_KINDS = {"TINYINT": "int8", "SMALLINT": "int16", "INTEGER": "int32", "DATE": "int32",
              "TIME_WITHOUT_TIME_ZONE": "int32", "BIGINT": "int64"}  # fmt: skip
# kind -> (struct format of the stored key, its numpy dtype)
_FIXED = {"int8": (">b", ">i1"), "int16": (">h", ">i2"), "int32": (">i", ">i4"), "int64": (">q", ">i8"),
          "float32": (">I", ">u4"), "float64": (">Q", ">u8"), "bool": (">B", ">u1")}  # fmt: skip
_FLOAT_BITS = {"float32": (32, 0x7F800000, 0x007FFFFF, 0x7FC00000), "float64": (64, 0x7FF << 52, (1 << 52) - 1, 0x7FF8 << 48)}


def key_kind(t: DataType) -> str:
    """``KeyFactory.create``: the key kind of a column type, or the error Paimon raises."""
    if t.root in _INT_KINDS:
        return _INT_KINDS[t.root]
    if t.root in ("FLOAT", "DOUBLE"):
        return "float32" if t.root == "FLOAT" else "float64"
    if t.root == "BOOLEAN":
        return "bool"
    if t.is_string:
        return "string"
    if t.root == "DECIMAL":
        if t.precision > 18:
            raise ValueError("The range-bitmap index only supports DECIMAL with a precision in [0, 18].")
        return "int64"
    if t.is_timestamp:
        if t.precision > 6:
            raise ValueError("The range-bitmap index only supports TIMESTAMP with a precision in [0, 6].")
        return "int64"
    raise ValueError(f"data type {t.root} is not supported by the range-bitmap index")


def default_chunk_size(t: DataType) -> str:
    """The ``chunk-size`` a type gets without the option: ``0b`` (one key per chunk) for BOOLEAN,
    TINYINT and SMALLINT, ``16kb`` otherwise."""
    return "0b" if key_kind(t) in ("bool", "int8", "int16") else "16kb"


def chunk_size_bytes(text: str) -> int:
    """``(int) MemorySize.parse(text).getBytes()``: the low 32 bits, signed (``4gb`` is 0)."""
    n = parse_memory_size(text) & 0xFFFFFFFF
    return n - (1 << 32) if n & 0x80000000 else n


# ---------------------------------------------------------------------------------------------
# Keys


def _float_order(kind: str, bits: int) -> int:
    """The raw bits of a float key as an int in ``Float.compare``/``Double.compare`` order."""
    width, exp, mantissa, canonical = _FLOAT_BITS[kind]
    if bits & exp == exp and bits & mantissa:
        bits = canonical
    if bits >> (width - 1):
        return (bits - (1 << width)) ^ ((1 << (width - 1)) - 1)
    return bits


def order_key(kind: str, key: object) -> object:
    """A key transformed so that Python's order is the index's key order (§1)."""
    return _float_order(kind, key) if kind in _FLOAT_BITS else key


def to_key(t: DataType, kind: str, value: object) -> object:
    """The key of a non-null internal value (or query literal) of type ``t`` (§1)."""
    if kind == "string":
        if not isinstance(value, (str, bytes, bytearray)):
            raise TypeError(f"a {t.root} value must be a str or its UTF-8 bytes, got {type(value).__name__}")
        return bytes_key(t, value)
    if kind == "float32":
        return struct.unpack(">I", struct.pack(">f", value))[0]
    if kind == "float64":
        return struct.unpack(">Q", struct.pack(">d", value))[0]
    if kind == "bool":
        return 1 if value else 0
    if t.root == "DECIMAL":
        return unscaled_long(value, t.scale)
    if t.is_timestamp:
        if isinstance(value, Timestamp):
            if t.precision <= 3:
                return value.millisecond
            return value.millisecond * 1000 + value.nano_of_millisecond // 1000
        return int(value)
    v = int(value)
    bits = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}[kind]
    if not -(1 << (bits - 1)) <= v < 1 << (bits - 1):
        raise ValueError(f"{v} is out of range for {t.root}")
    return v


def _encode_key(kind: str, key: object) -> bytes:
    if kind == "string":
        return _I32.pack(len(key)) + key
    return struct.pack(_FIXED[kind][0], key)


def _read_key(reader: ByteReader, kind: str, what: str) -> object:
    if kind == "string":
        at = reader.pos
        n = reader.i32_be(f"{what} length")
        if n < 0:
            raise reader.error(f"a {what} length >= 0, found {n}", at)
        return bytes(reader.take(n, what))
    fmt = _FIXED[kind][0]
    key = struct.unpack(fmt, reader.take(struct.calcsize(fmt), what))[0]
    return (1 if key == 1 else 0) if kind == "bool" else key


def _column_keys(t: DataType, kind: str, column: Column) -> tuple[np.ndarray, list, int]:
    """Every row's code (-1 for null), the distinct keys in code order, and the row count."""
    if kind == "string":
        if isinstance(column, (pa.Array, pa.ChunkedArray)):
            encoded = column.dictionary_encode()
            if isinstance(encoded, pa.ChunkedArray):
                encoded = encoded.combine_chunks()
            first = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
            distinct = [bytes_key(t, v) for v in encoded.dictionary.to_pylist()]
        else:
            items = np.empty(len(column), object)
            items[:] = list(column)
            first, uniques = pd.factorize(items, use_na_sentinel=True)
            first = first.astype(np.int64)
            distinct = [bytes_key(t, v) for v in uniques.tolist()]
        # distinct strings may map to one key only through surrogates; merge them as a TreeMap would
        keys = sorted(set(distinct))
        rank = {k: i for i, k in enumerate(keys)}
        remap = np.array([rank[k] for k in distinct] + [-1], np.int64)
        return remap[first], keys, len(first)
    if kind in _FLOAT_BITS:
        bits, valid = _float_bits(kind, column)
        width, exp, mantissa, canonical = _FLOAT_BITS[kind]
        signed_dtype = np.int32 if kind == "float32" else np.int64
        unsigned = bits.astype(np.uint32 if kind == "float32" else np.uint64)
        nan = (unsigned & exp == exp) & (unsigned & mantissa != 0)
        s = np.where(nan, canonical, unsigned).astype(unsigned.dtype).view(signed_dtype).astype(np.int64)
        order = np.where(s < 0, s ^ np.int64((1 << (width - 1)) - 1), s)
    else:
        col = value_column(t, column)
        valid = col.valid
        if kind == "bool":
            order = (col.values != 0).astype(np.int64)
        else:
            order = col.values.astype(np.int64)
    n = len(valid)
    codes = np.full(n, -1, np.int64)
    rows = np.flatnonzero(valid)
    if len(rows) == 0:
        return codes, [], n
    values = order[rows]
    found, uniques = pd.factorize(values)
    sorter = np.argsort(uniques, kind="stable")
    rank = np.empty(len(uniques), np.int64)
    rank[sorter] = np.arange(len(uniques))
    codes[rows] = rank[found]
    ordered = uniques[sorter]
    if kind in _FLOAT_BITS:
        width = _FLOAT_BITS[kind][0]
        keys = [(_unorder(width, o)) for o in ordered.tolist()]
        canonical_order = _float_order(kind, _FLOAT_BITS[kind][3])
        if keys and ordered[-1] == canonical_order:  # the NaN key: the first NaN row's bits
            first_nan = rows[np.argmax(values == canonical_order)]
            keys[-1] = int(bits[first_nan]) & ((1 << width) - 1)
    else:
        keys = ordered.tolist()
    return codes, keys, n


def _unorder(width: int, order: int) -> int:
    if order < 0:
        order ^= (1 << (width - 1)) - 1
    return order & ((1 << width) - 1)


def _float_bits(kind: str, column: Column) -> tuple[np.ndarray, np.ndarray]:
    """Raw IEEE bits (int64) of a FLOAT/DOUBLE column and its validity."""
    ftype = np.float32 if kind == "float32" else np.float64
    itype = np.uint32 if kind == "float32" else np.uint64
    if isinstance(column, (pa.Array, pa.ChunkedArray)):
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        valid = column.is_valid().to_numpy(zero_copy_only=False) if column.null_count else np.ones(len(column), bool)
        data = column.fill_null(0).to_numpy(zero_copy_only=False) if column.null_count else column.to_numpy(zero_copy_only=False)
        return np.ascontiguousarray(data.astype(ftype)).view(itype).astype(np.int64), valid
    if isinstance(column, np.ndarray) and column.dtype != object:
        return np.ascontiguousarray(column.astype(ftype)).view(itype).astype(np.int64), np.ones(len(column), bool)
    items = list(column)
    valid = np.fromiter((v is not None for v in items), bool, len(items))
    fmt = ">f" if kind == "float32" else ">d"
    ufmt = ">I" if kind == "float32" else ">Q"
    bits = [struct.unpack(ufmt, struct.pack(fmt, v))[0] if v is not None else 0 for v in items]
    return np.array(bits, np.uint64).astype(np.int64), valid


# ---------------------------------------------------------------------------------------------
# Dictionary


@dataclass(frozen=True)
class Chunk:
    """One chunk header (§5): its head key and code, where its key area is and how many keys it holds."""

    chunk_offset: int
    version: int
    head: object
    head_code: int
    keys_offset: int
    size: int
    keys_length: int
    fixed_length: int  # strings: -1
    offsets_length: int  # fixed keys: -1
    area_start: int  # absolute offset of the key area


def dictionary_bytes(kind: str, keys: Sequence, capacity: int) -> bytes:
    """``ChunkedDictionary.Appender``: the dictionary of ``keys`` (distinct, in key order) with
    key areas of ``capacity`` bytes."""
    if keys and capacity < 0:
        raise ValueError(f"capacity < 0: ({capacity} < 0)")
    if kind == "string":
        offsets, headers, areas = [], [], []
        chunks_length = keys_offset = 0
        i = 0
        while i < len(keys):
            head, code, area, used = keys[i], i, [], 0
            i += 1
            while i < len(keys) and 4 + len(keys[i]) <= capacity - used and 4 <= capacity - 4 * len(area):
                area.append(keys[i])
                used += 4 + len(keys[i])
                i += 1
            rel = np.cumsum([0] + [4 + len(k) for k in area[:-1]]).tolist() if area else []
            area_bytes = struct.pack(f">{len(area)}i", *rel) + b"".join(_I32.pack(len(k)) + k for k in area)
            header = b"\x01" + _I32.pack(len(head)) + head + struct.pack(">iiiii", code, keys_offset, len(area), 4 * len(area), used)
            offsets.append(chunks_length)
            headers.append(header)
            areas.append(area_bytes)
            chunks_length += len(header)
            keys_offset += len(area_bytes)
        body = struct.pack(f">{len(offsets)}i", *offsets) + b"".join(headers) + b"".join(areas)
        return struct.pack(">ibiii", 13, VERSION_1, len(offsets), 4 * len(offsets), chunks_length) + body
    fmt, dtype = _FIXED[kind]
    width = struct.calcsize(fmt)
    count = len(keys)
    per = 1 + capacity // width if count else 1
    heads = np.arange(0, count, per, dtype=np.int64)
    n = len(heads)
    sizes = np.minimum(per, count - heads) - 1
    keys_length = sizes * width
    header = np.zeros(n, np.dtype([("v", "u1"), ("key", dtype), ("code", ">i4"), ("off", ">i4"), ("size", ">i4"),
                                   ("klen", ">i4"), ("flen", ">i4")]))  # fmt: skip
    all_keys = np.array(keys, np.uint64 if kind in _FLOAT_BITS else np.int64).astype(dtype)
    header["v"] = VERSION_1
    header["key"] = all_keys[heads]
    header["code"] = heads
    header["off"] = np.concatenate(([0], np.cumsum(keys_length)[:-1])) if n else []
    header["size"] = sizes
    header["klen"] = keys_length
    header["flen"] = width
    chunk_size = header.dtype.itemsize
    area_mask = np.ones(count, bool)
    area_mask[heads] = False
    offsets = (np.arange(n, dtype=np.int64) * chunk_size).astype(">i4")
    head = struct.pack(">ibiii", 13, VERSION_1, n, 4 * n, n * chunk_size)
    return head + offsets.tobytes() + header.tobytes() + all_keys[area_mask].tobytes()


class ChunkedDictionary:
    """A parsed dictionary over ``reader``'s range: chunk headers are read (and checked) when first
    needed; ``find(key)`` and ``key_of(code)`` search the heads, then one chunk, as Paimon does."""

    def __init__(self, reader: ByteReader, kind: str):
        self.kind = kind
        self.source = reader.source
        self.start = reader.pos
        self.end = reader.end
        header, self.header_length, self.version = _framed_header(reader, 13, "dictionary")
        at = header.pos
        self.chunk_count = header.i32_be("dictionary chunk_count")
        self.offsets_length = header.i32_be("dictionary offsets_length")
        self.chunks_length = header.i32_be("dictionary chunks_length")
        if self.chunk_count < 0 or self.offsets_length != 4 * self.chunk_count:
            raise header.error(f"a chunk_count >= 0 with offsets_length 4 x chunk_count, found {self.chunk_count} and {self.offsets_length}", at)
        if not 0 <= self.chunks_length <= reader.remaining - self.offsets_length:
            raise header.error(f"a chunks_length within the {reader.remaining - self.offsets_length} dictionary bytes left, found {self.chunks_length}", at + 8)
        self.reader = reader
        offsets_at = reader.pos
        raw = reader.take(self.offsets_length, "dictionary chunk offsets")
        self.offsets = list(struct.unpack(f">{self.chunk_count}i", raw))
        bounds = self.offsets + [self.chunks_length]
        for i in range(self.chunk_count):
            if not 0 <= bounds[i] <= bounds[i + 1]:
                raise reader.error(f"ascending chunk offsets within the {self.chunks_length} chunk bytes, found {bounds[i]} for chunk {i}", offsets_at + 4 * i)
        self.chunks_start = reader.pos
        self.keys_start = self.chunks_start + self.chunks_length
        self.keys_length = self.end - self.keys_start
        self._chunks: dict[int, Chunk] = {}
        self._keys: dict[int, list] = {}

    def chunk(self, i: int) -> Chunk:
        """Chunk ``i``'s header, parsed and checked against the dictionary's bytes."""
        c = self._chunks.get(i)
        if c is not None:
            return c
        begin = self.chunks_start + self.offsets[i]
        end = self.chunks_start + (self.offsets[i + 1] if i + 1 < self.chunk_count else self.chunks_length)
        r = ByteReader(self.reader.data, self.source, begin, end)
        at = r.pos
        version = _signed8(r.u8("chunk version"))
        if version > VERSION_1:
            raise r.error(f"chunk version <= {VERSION_1}, found {version}", at)
        head = _read_key(r, self.kind, "chunk head key")
        at = r.pos
        code, keys_offset, size, a, b = struct.unpack(">5i", r.take(20, "chunk header"))
        if self.kind == "string":
            offsets_length, keys_length, fixed = a, b, -1
            if size < 0 or offsets_length != 4 * size or keys_length < 4 * size:
                raise r.error(f"a chunk size >= 0 with offsets_length 4 x size and keys_length >= 4 x size, found {size}, {offsets_length}, {keys_length}", at + 8)
            area = offsets_length + keys_length
        else:
            keys_length, fixed, offsets_length = a, b, -1
            width = struct.calcsize(_FIXED[self.kind][0])
            if fixed != width or size < 0 or keys_length != size * width:
                raise r.error(f"fixed_length {width} and keys_length = size x {width}, found {fixed}, {keys_length} for size {size}", at + 8)
            area = keys_length
        if keys_offset < 0 or keys_offset + area > self.keys_length:
            raise r.error(f"a key area within the {self.keys_length} key bytes, found offset {keys_offset} length {area}", at + 4)
        c = Chunk(self.offsets[i], version, head, code, keys_offset, size, keys_length, fixed, offsets_length,
                  self.keys_start + keys_offset)  # fmt: skip
        self._chunks[i] = c
        return c

    def chunk_keys(self, i: int) -> list:
        """The keys of chunk ``i``'s key area, in code order."""
        keys = self._keys.get(i)
        if keys is not None:
            return keys
        c = self.chunk(i)
        if self.kind == "string":
            r = ByteReader(self.reader.data, self.source, c.area_start, c.area_start + c.offsets_length + c.keys_length)
            rel = struct.unpack(f">{c.size}i", r.take(c.offsets_length, "chunk key offsets"))
            base = r.pos
            keys = []
            for j, o in enumerate(rel):
                if not 0 <= o <= c.keys_length - 4:
                    raise r.error(f"a key offset within the chunk's {c.keys_length} key bytes, found {o}", c.area_start + 4 * j)
                r.pos = base + o
                keys.append(_read_key(r, "string", "chunk key"))
        else:
            fmt, dtype = _FIXED[self.kind]
            raw = np.frombuffer(self.reader.data[c.area_start : c.area_start + c.keys_length], dtype)
            keys = ((raw == 1).astype(np.int64) if self.kind == "bool" else raw).tolist()
        self._keys[i] = keys
        return keys

    def chunks(self) -> list[Chunk]:
        return [self.chunk(i) for i in range(self.chunk_count)]

    def find(self, key: object) -> int:
        """The code of ``key``, else ``-(insertion point) - 1`` (§5 lookup)."""
        target = order_key(self.kind, key)
        low, high = 0, self.chunk_count - 1
        while low <= high:
            mid = (low + high) >> 1
            c = self.chunk(mid)
            head = order_key(self.kind, c.head)
            if head > target:
                high = mid - 1
            elif head < target:
                low = mid + 1
            else:
                return c.head_code
        if low == 0:
            return -1
        c = self.chunk(low - 1)
        keys = self.chunk_keys(low - 1)
        lo, hi = 0, len(keys) - 1
        while lo <= hi:
            mid = (lo + hi) >> 1
            k = order_key(self.kind, keys[mid])
            if k > target:
                hi = mid - 1
            elif k < target:
                lo = mid + 1
            else:
                return c.head_code + 1 + mid
        return -(c.head_code + 1 + lo + 1)

    def key_of(self, code: int) -> object:
        """``find(code)``: the key with this code."""
        if code < 0:
            raise IndexError(f"invalid code: {code}")
        low, high = 0, self.chunk_count - 1
        while low <= high:
            mid = (low + high) >> 1
            c = self.chunk(mid)
            if c.head_code > code:
                high = mid - 1
            elif c.head_code < code:
                low = mid + 1
            else:
                return c.head
        if low == 0:
            raise IndexError(f"invalid code: {code}")
        c = self.chunk(low - 1)
        index = code - c.head_code - 1
        if not 0 <= index < c.size:
            raise IndexError(f"invalid code: {code}")
        return self.chunk_keys(low - 1)[index]


def _signed8(b: int) -> int:
    return b - 256 if b >= 128 else b


def _framed_header(reader: ByteReader, minimum: int, what: str) -> tuple[ByteReader, int, int]:
    """``i32 header_length``, then that many header bytes starting with the (signed) version byte,
    which must be <= 1: a reader over the rest of the header, its length and the version."""
    at = reader.pos
    header_length = reader.i32_be(f"{what} header_length")
    if not minimum <= header_length <= reader.remaining:
        raise reader.error(f"a {what} header_length in {minimum}..{reader.remaining}, found {header_length}", at)
    header = reader.sub_reader(header_length, f"{what} header")
    at = header.pos
    version = _signed8(header.u8(f"{what} version"))
    if version > VERSION_1:
        raise header.error(f"{what} version <= {VERSION_1}, found {version}", at)
    return header, header_length, version


# ---------------------------------------------------------------------------------------------
# Bit-sliced index of the codes


def slice_count(cardinality: int) -> int:
    """``max(1, 64 - numberOfLeadingZeros((long) (cardinality - 1)))``: 64 for cardinality 0."""
    return 64 if cardinality == 0 else max(1, (cardinality - 1).bit_length())


def bsi_bytes(codes: np.ndarray, cardinality: int) -> bytes:
    """``BitSliceIndexBitmap.Appender``: the BSI of every row's code (-1 = null)."""
    valid = codes >= 0
    filled = np.where(valid, codes, 0)
    ebm = serialize32(bitmap_from_mask(valid))
    count = slice_count(cardinality)
    slices = []
    for i in range(count):
        if cardinality > 0:
            slices.append(serialize32(bitmap_from_mask((filled >> i) & 1 != 0)))
        else:
            slices.append(serialize32(BitMap()))
    index = []
    offset = 0
    for s in slices:
        index += [offset, len(s)]
        offset += len(s)
    header = struct.pack(f">ibbii{2 * count}i", 10 + 8 * count, VERSION_1, count, len(ebm), 8 * count, *index)
    return header + ebm + b"".join(slices)


class BitSliceIndexBitmap:
    """A parsed BSI: header checked on open, existence bitmap and slices read when first needed."""

    def __init__(self, reader: ByteReader, row_count: int):
        self.source = reader.source
        self.data = reader.data
        self.row_count = row_count
        header, self.header_length, self.version = _framed_header(reader, 10, "bsi")
        at = header.pos
        self.count = _signed8(header.u8("bsi slice count"))
        if not 1 <= self.count <= 64:
            raise header.error(f"a bsi slice count in 1..64, found {self.count}", at)
        at = header.pos
        self.ebm_length = header.i32_be("bsi ebm_length")
        self.indexes_length = header.i32_be("bsi indexes_length")
        if self.indexes_length != 8 * self.count:
            raise header.error(f"bsi indexes_length {8 * self.count} (8 x slice count), found {self.indexes_length}", at + 4)
        self.slice_index = list(struct.unpack(f">{2 * self.count}i", header.take(self.indexes_length, "bsi slice index")))
        body = reader.pos
        if not 0 <= self.ebm_length <= reader.remaining:
            raise reader.error(f"a bsi ebm_length within the {reader.remaining} bytes left, found {self.ebm_length}", at)
        self.ebm_start = body
        self.slices_start = body + self.ebm_length
        left = reader.end - self.slices_start
        for i in range(self.count):
            offset, length = self.slice_index[2 * i], self.slice_index[2 * i + 1]
            if offset < 0 or length < 0 or offset + length > left:
                raise reader.error(f"slice {i} within the {left} bytes after the ebm, found offset {offset} length {length}", at + 8 + 8 * i)
        self.end = reader.end
        self._ebm: BitMap | None = None
        self._slices: list[BitMap | None] = [None] * self.count

    def _bitmap(self, start: int, length: int, what: str) -> BitMap:
        r = ByteReader(self.data, self.source, start, start + length)
        bm = read_roaring32(r)
        if r.remaining:
            raise r.error(f"{what}: a roaring bitmap of exactly {length} bytes, found {r.pos - start}", start)
        return bm

    @property
    def ebm(self) -> BitMap:
        """The rows with a non-null value (shared: callers copy before changing it)."""
        if self._ebm is None:
            ebm = self._bitmap(self.ebm_start, self.ebm_length, "bsi ebm")
            if ebm and ebm.max() >= self.row_count:
                raise IndexFormatError(self.source, self.ebm_start, f"existence bitmap rows below row_count {self.row_count}, found {ebm.max()}")
            self._ebm = ebm
        return self._ebm

    def slice(self, i: int) -> BitMap:
        bm = self._slices[i]
        if bm is None:
            offset, length = self.slice_index[2 * i], self.slice_index[2 * i + 1]
            bm = self._slices[i] = self._bitmap(self.slices_start + offset, length, f"bsi slice {i}")
        return bm

    def code_of(self, row: int) -> int | None:
        """``get(row)``: the code of a row, None for a null row."""
        if row not in self.ebm:
            return None
        return sum(1 << i for i in range(self.count) if row in self.slice(i))

    def eq(self, code: int) -> BitMap:
        if not self.ebm:
            return BitMap()
        state = self.ebm & self.slice(0) if code & 1 else self.ebm - self.slice(0)  # an empty state stays empty
        for i in range(1, self.count):
            if not state:
                break
            if code >> i & 1:
                state &= self.slice(i)
            else:
                state -= self.slice(i)
        return state

    def gt(self, code: int) -> BitMap:
        if code < 0:
            return BitMap(self.ebm)
        if not self.ebm:
            return BitMap()
        start = 0
        while code >> start & 1:
            start += 1
        if start >= self.count:
            return BitMap()
        state = BitMap(self.slice(start))
        for i in range(start + 1, self.count):
            if code >> i & 1:
                state &= self.slice(i)
            else:
                state |= self.slice(i)
        return state & self.ebm

    def gte(self, code: int) -> BitMap:
        return self.gt(code - 1)

    def top_k(self, k: int, found: BitMap | None, strict: bool, bottom: bool) -> BitMap:
        """O'Neil's top-k (largest codes), or bottom-k (smallest) with ``bottom``; ties at the
        boundary are trimmed (smallest row ids first) when ``strict`` (§8)."""
        if k == 0 or (found is not None and not found):
            return BitMap()
        if k < 0:
            raise ValueError(f"the k param can not be negative in {'bottomK' if bottom else 'topK'}, k={k}")
        g = BitMap()
        e = BitMap(self.ebm) if found is None else self.ebm & found
        if len(e) <= k:
            return e
        for i in range(self.count - 1, -1, -1):
            s = self.slice(i)
            picked = e - s if bottom else e & s
            x = g | picked
            n = len(x)
            if n > k:
                e = picked
            elif n < k:
                g = x
                e = e & s if bottom else e - s
            else:
                e = picked
                break
        f = g | e
        extra = len(f) - k
        if strict and extra > 0:
            f -= e[:extra]
        return f


# ---------------------------------------------------------------------------------------------
# The index


class RangeBitmapIndex(IndexReader):
    """A range-bitmap payload. Build with :meth:`build` / :meth:`from_options` (then
    :meth:`serialize`), or parse with :meth:`read`; ``query`` answers the leaf predicates and
    :meth:`top_n` the top-N (§7, §8)."""

    index_type = "range-bitmap"

    def __init__(self, data_type: DataType, row_count: int, cardinality: int, min_key: object, max_key: object):
        self.data_type = data_type
        self.kind = key_kind(data_type)
        self.row_count = row_count
        self.cardinality = cardinality
        self.min = min_key
        self.max = max_key
        self.header_length = 0
        self.version = VERSION_1
        self.dictionary_length = 0
        self.dictionary_offset = 0
        self.bsi_offset = 0
        self.dictionary: ChunkedDictionary | None = None
        self._bsi_reader: ByteReader | None = None
        self._bsi: BitSliceIndexBitmap | None = None
        self._payload: memoryview | None = None

    # -- writer ----------------------------------------------------------------------------

    @classmethod
    def build(cls, data_type: DataType, column: Column, chunk_size: str | None = None) -> RangeBitmapIndex:
        """Index every row of ``column`` (None = null) as ``RangeBitmapFileIndex.Writer`` does;
        ``chunk_size`` is the ``chunk-size`` option (default: the type's)."""
        kind = key_kind(data_type)
        capacity = chunk_size_bytes(chunk_size if chunk_size is not None else default_chunk_size(data_type))
        codes, keys, rows = _column_keys(data_type, kind, column)
        dictionary = dictionary_bytes(kind, keys, capacity)
        bsi = bsi_bytes(codes, len(keys))
        bounds = _encode_key(kind, keys[0]) + _encode_key(kind, keys[-1]) if keys else b""
        header = struct.pack(">bii", VERSION_1, rows, len(keys)) + bounds + _I32.pack(len(dictionary))
        index = cls.read(_I32.pack(len(header)) + header + dictionary + bsi, data_type)
        return index

    @classmethod
    def from_options(cls, data_type: DataType, column: Column, options: Mapping[str, str]) -> RangeBitmapIndex:
        """The writer with Paimon's options (``chunk-size``)."""
        return cls.build(data_type, column, options.get(CHUNK_SIZE))

    def serialize(self) -> bytes:
        if self._payload is None:
            raise ValueError("only a built or read index has bytes")
        return bytes(self._payload)

    # -- reader ----------------------------------------------------------------------------

    @classmethod
    def read(cls, data: bytes | bytearray | memoryview, data_type: DataType, source: str = "<bytes>") -> RangeBitmapIndex:
        """Parse a payload (``data`` is exactly the payload); the dictionary's chunks and the BSI's
        bitmaps are read when a query first needs them."""
        kind = key_kind(data_type)
        reader = ByteReader(data, source)
        header, header_length, version = _framed_header(reader, 9, "range-bitmap")
        at = header.pos
        row_count = header.i32_be("row_count")
        cardinality = header.i32_be("cardinality")
        if row_count < 0 or not 0 <= cardinality <= row_count:
            raise header.error(f"a row_count >= 0 and a cardinality in 0..row_count, found {row_count} and {cardinality}", at)
        lo = _read_key(header, kind, "min key") if cardinality > 0 else None
        hi = _read_key(header, kind, "max key") if cardinality > 0 else None
        at = header.pos
        dictionary_length = header.i32_be("dictionary_length")
        if not 0 <= dictionary_length <= reader.remaining:
            raise header.error(f"a dictionary_length within the {reader.remaining} bytes left, found {dictionary_length}", at)
        index = cls(data_type, row_count, cardinality, lo, hi)
        index.version = version
        index.header_length = header_length
        index.dictionary_length = dictionary_length
        index.dictionary_offset = reader.pos
        index.dictionary = ChunkedDictionary(reader.sub_reader(dictionary_length, "dictionary"), kind)
        if (index.dictionary.chunk_count > 0) != (cardinality > 0):
            raise reader.error(f"dictionary chunks exactly when cardinality > 0, found {index.dictionary.chunk_count} chunks for cardinality {cardinality}", index.dictionary_offset + 5)
        index.bsi_offset = reader.pos
        index._bsi = BitSliceIndexBitmap(reader, row_count)
        index._payload = reader.data
        return index

    @property
    def bsi(self) -> BitSliceIndexBitmap:
        return self._bsi

    def key_of(self, value: object) -> object:
        """The key of a non-null value or literal of the column."""
        return to_key(self.data_type, self.kind, value)

    def _cmp(self, a: object, b: object) -> int:
        x, y = order_key(self.kind, a), order_key(self.kind, b)
        return (x > y) - (x < y)

    # -- queries (RangeBitmap) -------------------------------------------------------------

    def is_not_null(self) -> BitMap:
        return BitMap() if self.cardinality <= 0 else BitMap(self.bsi.ebm)

    def is_null(self, found: BitMap | None = None) -> BitMap:
        if self.cardinality <= 0:
            return BitMap([0, self.row_count - 1]) if self.row_count > 0 else BitMap()
        if found is not None and not found:
            return BitMap()
        rows = self.bsi.ebm.flip(0, self.row_count)
        return rows & found if found is not None else rows

    def _not(self, rows: BitMap) -> BitMap:
        """The non-null rows not in ``rows`` (Paimon: flip within the row count, then AND the ebm)."""
        return self.bsi.ebm - rows

    def eq(self, key: object) -> BitMap:
        if self.cardinality <= 0:
            return BitMap()
        lo, hi = self._cmp(key, self.min), self._cmp(key, self.max)
        if lo == 0 and hi == 0:
            return self.is_not_null()
        if lo < 0 or hi > 0:
            return BitMap()
        code = self.dictionary.find(key)
        return BitMap() if code < 0 else self.bsi.eq(code)

    def neq(self, key: object) -> BitMap:
        return BitMap() if self.cardinality <= 0 else self._not(self.eq(key))

    def in_(self, keys: Sequence) -> BitMap:
        return BitMap() if self.cardinality <= 0 else BitMap.union(BitMap(), *(self.eq(k) for k in keys))

    def not_in(self, keys: Sequence) -> BitMap:
        return BitMap() if self.cardinality <= 0 else self._not(self.in_(keys))

    def lt(self, key: object) -> BitMap:
        if self.cardinality <= 0:
            return BitMap()
        if self._cmp(key, self.max) > 0:
            return self.is_not_null()
        if self._cmp(key, self.min) <= 0:
            return BitMap()
        return self._not(self.gte(key))

    def lte(self, key: object) -> BitMap:
        if self.cardinality <= 0:
            return BitMap()
        if self._cmp(key, self.max) >= 0:
            return self.is_not_null()
        if self._cmp(key, self.min) < 0:
            return BitMap()
        return self._not(self.gt(key))

    def gt(self, key: object) -> BitMap:
        if self.cardinality <= 0:
            return BitMap()
        if self._cmp(key, self.min) < 0:
            return self.is_not_null()
        if self._cmp(key, self.max) >= 0:
            return BitMap()
        code = self.dictionary.find(key)
        return self.bsi.gte(-code - 1) if code < 0 else self.bsi.gt(code)

    def gte(self, key: object) -> BitMap:
        if self.cardinality <= 0:
            return BitMap()
        if self._cmp(key, self.min) <= 0:
            return self.is_not_null()
        if self._cmp(key, self.max) > 0:
            return BitMap()
        code = self.dictionary.find(key)
        return self.bsi.gte(-code - 1 if code < 0 else code)

    def query(self, op: str, literals: Sequence[object] = ()) -> FileIndexResult:
        """A leaf predicate (spec §7); a null or unconvertible literal answers REMAIN (Paimon's
        reader throws on nulls; its planner never asks)."""
        if op == "is_null":
            return BitmapResult(self.is_null())
        if op == "is_not_null":
            return BitmapResult(self.is_not_null())
        if op not in _COMPARISONS:
            return REMAIN
        if any(v is None for v in literals):
            return REMAIN
        try:
            keys = [self.key_of(v) for v in literals]
        except (ValueError, TypeError, OverflowError, struct.error):
            return REMAIN
        if op in ("in", "not_in"):
            return BitmapResult(self.in_(keys) if op == "in" else self.not_in(keys))
        if op == "between":
            return BitmapResult(self.gte(keys[0]) & self.lte(keys[1]))
        return BitmapResult(getattr(self, _COMPARISONS[op])(keys[0]))

    def top_n(self, limit: int, descending: bool = False, nulls_first: bool = False,
              found: BitMap | None = None, strict: bool = True) -> BitMap:  # fmt: skip
        """``topK``/``bottomK`` with the nulls placed as ``NULLS_FIRST``/``NULLS_LAST`` (§8);
        ``found`` restricts the rows (None: every row)."""
        if self.cardinality <= 0:
            return BitMap([0, self.row_count - 1]) if self.row_count > 0 else BitMap()
        if not nulls_first:
            rows = self.bsi.top_k(limit, found, strict, bottom=not descending)
            if len(rows) >= limit:
                return rows
            return rows | self.is_null(found)[: limit - len(rows)]
        rows = self.is_null(found)
        if len(rows) >= limit:
            return rows[:limit]
        return rows | self.bsi.top_k(limit - len(rows), found, strict, bottom=not descending)

    def visit_top_n(self, top_n: TopN, result: FileIndexResult) -> FileIndexResult:
        """``visitTopN``: the first order decides; ``result`` restricts the rows if it is a row set."""
        found = result.rows if isinstance(result, BitmapResult) else None
        first = top_n.orders[0]
        return BitmapResult(self.top_n(top_n.limit, first.direction == "DESCENDING", first.null_ordering == "NULLS_FIRST",
                                       found, strict=len(top_n.orders) == 1))  # fmt: skip


_COMPARISONS = {"equal": "eq", "not_equal": "neq", "in": "in_", "not_in": "not_in", "less_than": "lt",
                "less_or_equal": "lte", "greater_than": "gt", "greater_or_equal": "gte", "between": "between"}  # fmt: skip
