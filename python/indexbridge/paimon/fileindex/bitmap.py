"""Paimon's bitmap file index (``bitmap``, versions 1 and 2, spec §6).

One roaring bitmap of row ids per distinct key (§6.2: the key of a value, e.g. micros of a
TIMESTAMP(6), ``floatToIntBits`` of a FLOAT, the UTF-8 of a string), plus the null rows.

Version 1::

    u8      version = 1
    i32 BE  rowCount                 all rows, nulls included
    i32 BE  nonNullBitmapNumber      distinct non-null keys
    bool8   hasNull
    [i32 BE nullOffset]              if hasNull
    nonNullBitmapNumber x (key bytes, i32 BE offset)      in HashMap order O
    BODY

Version 2::

    u8      version = 2
    i32 BE  rowCount
    i32 BE  nonNullBitmapNumber
    bool8   hasNull
    [i32 BE nullOffset, i32 BE nullBitmapLength]           if hasNull
    i32 BE  blockCount
    blockCount x (first key bytes of the block, i32 BE blockOffset)   block directory
    i32 BE  bitmapBodyOffset         = total size of the index blocks
    INDEX BLOCKS, per block: i32 BE entryCount, entryCount x (key bytes, i32 BE offset, i32 BE length)
    BODY                             at index blocks start + bitmapBodyOffset

Key bytes: i8/i16/i32/i64 BE by type, bool8, or i32 BE length + raw UTF-8 for strings.

BODY is ``roaring32(null rows)`` if there are >= 2 null rows, then ``roaring32(rows of k)`` for
each key k in order O that has >= 2 rows. Offsets are relative to the body; a key (or the null
set) with exactly one row stores no bitmap and the offset ``~row`` instead. v2 entry lengths are
the stored bitmap sizes (-1 for single rows); v2 entries are sorted by key (§6.2 order) and
packed into blocks of at most ``index-block-size`` bytes (4 + sum of (8 + key size)).

Order O is the iteration order of Paimon's writer ``HashMap`` filled with ``computeIfAbsent`` for
every non-null row (App. B.2), computed here with ``indexbridge.paimon.javaorder``.

Queries (§6.6) return row sets: ``equal``/``in`` the key's rows, ``not_equal``/``not_in`` and
``is_not_null`` the complement within ``[0, rowCount)`` (so ``not_equal`` includes null rows),
``is_null`` the null rows; range queries are REMAIN.
"""

from __future__ import annotations

import bisect
import functools
import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from pyroaring import AbstractBitMap, BitMap, FrozenBitMap

from indexbridge.bytes import ByteReader
from indexbridge.paimon.fileindex.predicate import REMAIN, BitmapResult, FileIndexResult, IndexReader
from indexbridge.paimon.fileindex.values import (
    Column,
    DataType,
    fixed_key_struct,
    java_comparator,
    java_hash_codes,
    key_function,
    sort_keys,
    sortable_key,
    factorize_column,
)
from indexbridge.paimon.javaorder import compute_if_absent_order_of_new_keys
from indexbridge.roaring import bitmap_from_mask, bitmap_of, read_roaring32_at, serialize32

VERSION_1 = 1
VERSION_2 = 2
DEFAULT_VERSION = VERSION_2
DEFAULT_INDEX_BLOCK_SIZE = 16 * 1024
_SUPPORTED = frozenset({"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "BOOLEAN", "DATE",
                        "TIME_WITHOUT_TIME_ZONE", "TIMESTAMP_WITHOUT_TIME_ZONE",
                        "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "CHAR", "VARCHAR"})  # fmt: skip
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I32X2 = struct.Struct(">ii")
_MEMORY_UNITS = {"": 1, "b": 1, "bytes": 1, "k": 1 << 10, "kb": 1 << 10, "kibibytes": 1 << 10,
                 "m": 1 << 20, "mb": 1 << 20, "mebibytes": 1 << 20, "g": 1 << 30, "gb": 1 << 30,
                 "gibibytes": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tebibytes": 1 << 40}  # fmt: skip

def parse_memory_size(text: str) -> int:
    """Paimon's ``MemorySize.parse``: a number with an optional unit (b, kb, mb, gb, tb ...)."""
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", text)
    if not m or m[2].lower() not in _MEMORY_UNITS:
        raise ValueError(f"invalid memory size {text!r}")
    return int(m[1]) * _MEMORY_UNITS[m[2].lower()]


def _check_type(t: DataType) -> None:
    if t.root not in _SUPPORTED:
        raise ValueError(f"the bitmap index does not support {t.root}")


class _KeyCodec:
    """Key bytes of one type in the meta (§6.2)."""

    def __init__(self, t: DataType):
        self.t = t
        self.fixed = fixed_key_struct(t)

    def size(self, key: object) -> int:
        return self.fixed.size if self.fixed else 4 + len(key)

    def encode(self, key: object) -> bytes:
        if self.fixed:
            return self.fixed.pack(bool(key) if self.t.root == "BOOLEAN" else key)
        return _I32.pack(len(key)) + key

    def read_entries(self, reader: ByteReader, count: int, ints: int, what: str) -> list[tuple]:
        """``count`` x (key, ``ints`` x i32 BE), as tuples. Fixed-width keys are parsed in one
        numpy call; the caller has checked that ``count`` fits the bytes left."""
        if self.fixed:
            names = ["k"] + [f"i{j}" for j in range(ints)]
            fmt = ">u1" if self.t.root == "BOOLEAN" else ">" + self.fixed.format.lstrip(">")
            dtype = np.dtype({"names": names, "formats": [fmt] + [">i4"] * ints})
            raw = reader.take(count * dtype.itemsize, what)
            table = np.frombuffer(raw, dtype, count)
            keys = (table["k"] != 0).astype(np.int64) if self.t.root == "BOOLEAN" else table["k"].astype(np.int64)
            return list(zip(keys.tolist(), *(table[f"i{j}"].tolist() for j in range(ints))))
        # string keys: a loop of bare unpack_from while the entries are sound; the first one
        # that is not (or is cut short) is left to the checked loop below, which names it
        out = []
        data, pos, end, ints_size = reader.data, reader.pos, reader.end, 4 * ints
        unpack_ints = struct.Struct(">" + "i" * ints).unpack_from
        for _ in range(count):
            n = _I32.unpack_from(data, pos)[0] if pos + 4 <= end else -1
            key_end = pos + 4 + n
            if n < 0 or key_end + ints_size > end:
                break
            out.append((bytes(data[pos + 4 : key_end]), *unpack_ints(data, key_end)))
            pos = key_end + ints_size
        reader.pos = pos
        for _ in range(count - len(out)):
            at = reader.pos
            n = reader.i32_be("string key length")
            if n < 0:
                raise reader.error(f"a non-negative string key length, found {n}", at)
            key = bytes(reader.take(n, "string key bytes"))
            out.append((key, *(reader.i32_be(what) for _ in range(ints))))
        return out


@functools.lru_cache(maxsize=None)
def _fixed_entry(t: DataType) -> struct.Struct:
    """A v2 index-block entry of a fixed-width key: key, offset, length (made once per type)."""
    return struct.Struct(">" + ("B" if t.root == "BOOLEAN" else fixed_key_struct(t).format.lstrip(">")) + "ii")


@dataclass
class BitmapIndex(IndexReader):
    """A bitmap index: the rows of each key and the null rows.

    Built with :meth:`build` (then :meth:`serialize`) or parsed with :meth:`read`. Keys are
    int64 ints or bytes (``values`` module table); query literals are internal values.
    """

    data_type: DataType
    row_count: int
    version: int = DEFAULT_VERSION
    index_block_size: int = DEFAULT_INDEX_BLOCK_SIZE
    # writer side: keys in HashMap order O with their rows
    _order: list = field(default_factory=list, repr=False)
    _rows: dict = field(default_factory=dict, repr=False)  # key -> BitMap, or int row for singles
    _nulls: BitMap = field(default_factory=BitMap, repr=False)
    # reader side
    _reader: ByteReader | None = field(default=None, repr=False)
    _entries: dict = field(default_factory=dict, repr=False)  # v1: key -> (offset, -1)
    _blocks: dict = field(default_factory=dict, repr=False)  # v2: parsed blocks, key -> (offset, length)
    _directory: list = field(default_factory=list, repr=False)  # v2: block offsets
    _first_keys: list = field(default_factory=list, repr=False)  # v2: sortable first key per block
    _blocks_start: int = 0
    _entry_size: int = 0  # v2: smallest index-block entry
    _body_start: int = 0
    _null_offset: int = 0
    _null_length: int = -1
    _has_null: bool = False
    _key_count: int = 0  # reader: nonNullBitmapNumber of the meta
    _loaded: dict = field(default_factory=dict, repr=False)  # reader: key -> rows, as Paimon's Reader.bitmaps
    _block_heads: dict = field(default_factory=dict, repr=False)  # v2: block -> (entries start, count), string keys: entry starts

    index_type = "bitmap"

    # -- writer ----------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        data_type: DataType,
        column: Column,
        version: int = DEFAULT_VERSION,
        index_block_size: int = DEFAULT_INDEX_BLOCK_SIZE,
    ) -> BitmapIndex:
        """Index every row of ``column`` (None = null) as Paimon's ``BitmapFileIndex.Writer`` does."""
        _check_type(data_type)
        if version not in (VERSION_1, VERSION_2):
            raise ValueError(f"bitmap index version must be 1 or 2, got {version}")
        col = factorize_column(data_type, column)
        index = cls(data_type, col.row_count, version, index_block_size)
        uniques = col.keys
        if not uniques:
            index._nulls = bitmap_from_mask(col.codes < 0)
            return index
        # rows grouped by key number + 1 (nulls first), each group in row order: one stable sort
        # of every row, which numpy does with a radix sort for 8/16-bit integers
        groups = col.codes + 1
        counts = np.bincount(groups, minlength=len(uniques) + 1)
        narrow = np.uint16 if len(uniques) < 1 << 16 else np.int64
        grouped = np.argsort(groups.astype(narrow), kind="stable")
        ends = np.cumsum(counts)
        starts = ends - counts
        index._nulls = bitmap_of(grouped[: ends[0]], distinct_ascending=True)
        for k, (start, end) in enumerate(zip(starts[1:].tolist(), ends[1:].tolist())):
            index._rows[uniques[k]] = int(grouped[start]) if end - start == 1 else bitmap_of(grouped[start:end], distinct_ascending=True)
        # computeIfAbsent for every non-null row: the keys in first-occurrence order, plus one
        # call if any follows the last insertion (see hashmap_compute_if_absent_order): whether
        # the first row of the last key is before the last row of some key
        follows = int(grouped[starts[-1]]) < int(grouped[ends[1:] - 1].max())
        hash_codes = java_hash_codes(data_type, np.array(uniques, dtype=object if data_type.is_string else np.int64))
        cmp = java_comparator(data_type)
        order = compute_if_absent_order_of_new_keys(
            hash_codes, follows, lambda a, b: cmp(uniques[a], uniques[b])
        )
        index._order = [uniques[i] for i in order.tolist()]
        return index

    @classmethod
    def from_options(cls, data_type: DataType, column: Column, options: dict[str, str]) -> BitmapIndex:
        """Build with Paimon's option strings (``version``, ``index-block-size``)."""
        version = int(options.get("version", DEFAULT_VERSION))
        block = parse_memory_size(options.get("index-block-size", "16kb"))
        return cls.build(data_type, column, version, block)

    def serialize(self) -> bytes:
        if self._reader is not None:
            raise ValueError("serialize() needs an index built with build(), not read()")
        codec = _KeyCodec(self.data_type)
        null_bytes = serialize32(self._nulls)
        null_count = len(self._nulls)
        off = len(null_bytes) if null_count > 1 else 0
        body = [null_bytes] if null_count > 1 else []
        entries = []  # (key, offset, length) in order O
        for key in self._order:
            rows = self._rows[key]
            if isinstance(rows, int):
                entries.append((key, ~rows, -1))
            else:
                payload = serialize32(rows)
                entries.append((key, off, len(payload)))
                body.append(payload)
                off += len(payload)
        null_offset = ~self._nulls.min() if null_count == 1 else 0
        head = struct.pack(">biib", self.version, self.row_count, len(entries), null_count > 0)
        if null_count > 0:
            head += _I32.pack(null_offset)
        if self.version == VERSION_1:
            meta = b"".join(codec.encode(k) + _I32.pack(o) for k, o, _ in entries)
            return head + meta + b"".join(body)
        head += _I32.pack(len(null_bytes)) if null_count > 0 else b""
        return head + self._v2_index(codec, entries) + b"".join(body)

    def _v2_index(self, codec: _KeyCodec, entries: list[tuple[object, int, int]]) -> bytes:
        """Block directory, ``bitmapBodyOffset`` and the index blocks (§6.5)."""
        keys = [k for k, _, _ in entries]
        key_array = np.array(keys, dtype=object if codec.fixed is None else np.int64)
        order = np.argsort(sort_keys(self.data_type, key_array), kind="stable")
        blocks: list[list[bytes]] = []
        firsts: list[object] = []
        sizes: list[int] = []
        for i in order.tolist():
            key, offset, length = entries[i]
            e = 8 + codec.size(key)
            if 4 + e > self.index_block_size:
                raise ValueError(f"bitmap index block size {self.index_block_size} cannot hold a {e}-byte entry")
            if not blocks or sizes[-1] + e > self.index_block_size:
                blocks.append([])
                firsts.append(key)
                sizes.append(4)
            blocks[-1].append(codec.encode(key) + struct.pack(">ii", offset, length))
            sizes[-1] += e
        directory = [_I32.pack(len(blocks))]
        block_offset = 0
        for first, size in zip(firsts, sizes):
            directory.append(codec.encode(first) + _I32.pack(block_offset))
            block_offset += size
        directory.append(_I32.pack(block_offset))
        index_blocks = b"".join(_I32.pack(len(b)) + b"".join(b) for b in blocks)
        return b"".join(directory) + index_blocks

    # -- reader ----------------------------------------------------------------------------

    @classmethod
    def read(cls, data: bytes | bytearray | memoryview, data_type: DataType, source: str = "<bytes>") -> BitmapIndex:
        """Parse the meta of a payload (``data`` is exactly the payload); bitmaps load on demand."""
        _check_type(data_type)
        reader = ByteReader(data, source)
        codec = _KeyCodec(data_type)
        at = reader.pos
        version = reader.u8("bitmap index version")
        if version not in (VERSION_1, VERSION_2):
            raise reader.error(f"bitmap index version 1 or 2, found {version}", at)
        row_count = reader.i32_be("rowCount")
        at = reader.pos
        n = reader.i32_be("nonNullBitmapNumber")
        min_entry = (codec.fixed.size if codec.fixed else 4) + 4
        if n < 0 or (version == VERSION_1 and n * min_entry > reader.remaining):
            raise reader.error(f"a nonNullBitmapNumber that fits the {reader.remaining} bytes left, found {n}", at)
        index = cls(data_type, row_count, version, _reader=reader, _key_count=n)
        index._has_null = reader.u8("hasNull") != 0
        if index._has_null:
            index._null_offset = reader.i32_be("nullOffset")
            if version == VERSION_2:
                index._null_length = reader.i32_be("nullBitmapLength")
        if version == VERSION_1:
            entries = codec.read_entries(reader, n, 1, "bitmap entries")
            index._entries = {key: (offset, -1) for key, offset in entries}
            index._body_start = reader.pos
        else:
            index._read_v2_directory(reader, codec)
        return index

    def _read_v2_directory(self, reader: ByteReader, codec: _KeyCodec) -> None:
        """The block directory; blocks are parsed when a lookup needs them (as Paimon does)."""
        at = reader.pos
        block_count = reader.i32_be("blockCount")
        min_entry = (codec.fixed.size if codec.fixed else 4) + 4
        if block_count < 0 or block_count * min_entry > reader.remaining:
            raise reader.error(f"a blockCount that fits the {reader.remaining} bytes left, found {block_count}", at)
        directory_at = reader.pos
        directory = codec.read_entries(reader, block_count, 1, "block directory")
        at = reader.pos
        body_offset = reader.i32_be("bitmapBodyOffset")
        if not 0 <= body_offset <= reader.remaining:
            raise reader.error(f"a bitmapBodyOffset within the {reader.remaining} bytes left, found {body_offset}", at)
        self._blocks_start = reader.pos
        self._body_start = self._blocks_start + body_offset
        for _, offset in directory:
            if not 0 <= offset < body_offset:
                expected = f"a blockOffset within the {body_offset} bytes of index blocks, found {offset}"
                raise reader.error(expected, directory_at)
        self._directory = [offset for _, offset in directory]
        self._first_keys = [sortable_key(self.data_type, key) for key, _ in directory]
        self._entry_size = min_entry + 4

    def _block_reader(self, i: int) -> tuple[ByteReader, int]:
        """A reader at the entries of v2 index block ``i`` and their count."""
        start = self._blocks_start + self._directory[i]
        reader = ByteReader(self._reader.data, self._reader.source, start, self._body_start)
        at = reader.pos
        count = reader.i32_be("index block entryCount")
        if count < 0 or count * self._entry_size > reader.remaining:
            raise reader.error(f"an entryCount that fits the {reader.remaining} bytes left, found {count}", at)
        return reader, count

    def _block(self, i: int) -> dict:
        """Entries of v2 index block ``i``: key -> (offset, length)."""
        block = self._blocks.get(i)
        if block is None:
            reader, count = self._block_reader(i)
            entries = _KeyCodec(self.data_type).read_entries(reader, count, 2, "index block entries")
            block = self._blocks[i] = {key: (offset, length) for key, offset, length in entries}
        return block

    def _find_fixed(self, i: int, key: int) -> tuple[int, int] | None:
        """The entry of a fixed-width key in v2 block ``i``, by bisection in place: a lookup
        does not parse the whole block."""
        head = self._block_heads.get(i)
        if head is None:
            reader, count = self._block_reader(i)
            head = self._block_heads[i] = (reader.pos, count)
        start, count = head
        unpack, size, plain, boolean = self._fixed_layout
        data = self._reader.data
        # integral keys sort as themselves; floats and booleans need sortable_key / normalising
        target = key if plain else sortable_key(self.data_type, key)
        lo, hi = 0, count - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            k, offset, length = unpack(data, start + mid * size)
            found = k if plain else sortable_key(self.data_type, int(k != 0) if boolean else k)
            if found == target:
                return offset, length
            if found < target:
                lo = mid + 1
            else:
                hi = mid - 1
        return None

    @functools.cached_property
    def _fixed_layout(self) -> tuple[Callable, int, bool, bool]:
        """How :meth:`_find_fixed` reads a v2 entry: the entry's unpack and size, whether keys
        compare as they are (not FLOAT, DOUBLE, BOOLEAN), whether they are BOOLEAN (per reader:
        finding the entry's struct by type took a sixth of a lookup)."""
        entry, root = _fixed_entry(self.data_type), self.data_type.root
        return entry.unpack_from, entry.size, root not in ("FLOAT", "DOUBLE", "BOOLEAN"), root == "BOOLEAN"

    def _entry(self, key: object) -> tuple[int, int] | None:
        if self.version == VERSION_1:
            return self._entries.get(key)
        i = bisect.bisect_right(self._first_keys, sortable_key(self.data_type, key)) - 1
        if i < 0:
            return None
        return self._find_string(i, key) if self.data_type.is_string else self._find_fixed(i, key)

    def _find_string(self, i: int, key: bytes) -> tuple[int, int] | None:
        """The entry of a string key in v2 block ``i``: the entry starts are walked once (one
        unpack each, no key objects), then bisected (bytes order is ``BinaryString`` order). A
        block that does not walk cleanly is parsed by :meth:`_block`, which names the fault."""
        starts = self._block_heads.get(i)
        if starts is None:
            reader, count = self._block_reader(i)
            data, pos, end, starts = reader.data, reader.pos, reader.end, [0] * count
            unpack = _U32.unpack_from
            # Two operations per entry, checked after the walk: read unsigned, a key length only
            # moves forward, so the entries lie in the block when the walk ends inside it (a
            # walk beyond the data stops at struct.error)
            try:
                for j in range(count):
                    starts[j] = pos
                    pos += 12 + unpack(data, pos)[0]
            except struct.error:
                pos = end + 1
            if pos > end:
                return self._block(i).get(key)
            self._block_heads[i] = starts
        data = self._reader.data
        lo, hi = 0, len(starts) - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            at = starts[mid]
            key_end = at + 4 + _I32.unpack_from(data, at)[0]
            found = bytes(data[at + 4 : key_end])
            if found == key:
                return _I32X2.unpack_from(data, key_end)
            if found < key:
                lo = mid + 1
            else:
                hi = mid - 1
        return None

    def _load(self, offset: int, length: int, what: str) -> FrozenBitMap:
        reader = self._reader
        start = self._body_start + offset
        if not 0 <= start <= reader.end:  # offset can be huge in a damaged file
            raise reader.error(f"{what} at body offset {offset} within the data", self._body_start)
        if length < 0:
            return read_roaring32_at(reader.data, start, reader.end, reader.source, FrozenBitMap)[0]
        end = start + length
        if end > reader.end:
            raise reader.error(f"{length} bytes of {what}, found {reader.end - start}", start)
        bitmap, stop = read_roaring32_at(reader.data, start, end, reader.source, FrozenBitMap)
        if stop != end:
            raise reader.error(f"the end of {what} ({length} bytes)", stop)
        return bitmap

    # -- queries ----------------------------------------------------------------------------

    def keys(self) -> list:
        """Every distinct non-null key (writer: in order O; reader: in file order)."""
        if self._reader is None:
            return list(self._order)
        if self.version == VERSION_1:
            return list(self._entries)
        return [key for i in range(len(self._directory)) for key in self._block(i)]

    @property
    def key_count(self) -> int:
        """Distinct non-null keys (reader: as the meta says, without loading v2 blocks)."""
        return len(self._order) if self._reader is None else self._key_count

    @functools.cached_property
    def key_of(self) -> Callable[[object], object]:
        """The key of a literal (internal value of the column type): ``index.key_of(value)``."""
        return key_function(self.data_type)

    def rows_of_key(self, key: object) -> AbstractBitMap:
        """The rows of a key. A reader keeps each bitmap it has read, as Paimon's reader does
        (``Reader.bitmaps``), and hands out that one immutable ``FrozenBitMap``; a built index
        returns a new ``BitMap``."""
        if self._reader is None:
            rows = self._rows.get(key)
            return BitMap() if rows is None else BitMap([rows]) if isinstance(rows, int) else BitMap(rows)
        rows = self._loaded.get(key)
        if rows is None:
            entry = self._entry(key)
            if entry is None:
                return FrozenBitMap()
            offset, length = entry
            rows = self._loaded[key] = FrozenBitMap([~offset]) if offset < 0 else self._load(offset, length, "key bitmap")
        return rows

    def null_rows(self) -> AbstractBitMap:
        if self._reader is None:
            return BitMap(self._nulls)
        if not self._has_null:
            return FrozenBitMap()
        if self._null_offset < 0:
            return FrozenBitMap([~self._null_offset])
        return self._load(self._null_offset, self._null_length, "null bitmap")

    def rows(self, value: object) -> AbstractBitMap:
        """The rows holding ``value`` (``None``: the null rows)."""
        return self.null_rows() if value is None else self.rows_of_key(self.key_of(value))

    def _all_rows_but(self, rows: BitMap) -> BitMap:
        return rows.flip(0, self.row_count) if self.row_count > 0 else rows

    def query(self, op: str, literals: Sequence[object] = ()) -> FileIndexResult:
        if op == "equal":
            return BitmapResult(self.rows(literals[0]))
        if op == "in":
            return BitmapResult(BitMap.union(BitMap(), *(self.rows(v) for v in literals)))
        if op == "not_equal":
            return BitmapResult(self._all_rows_but(self.rows(literals[0])))
        if op == "not_in":
            return BitmapResult(self._all_rows_but(BitMap.union(BitMap(), *(self.rows(v) for v in literals))))
        if op == "is_null":
            return BitmapResult(self.null_rows())
        if op == "is_not_null":
            return BitmapResult(self._all_rows_but(self.null_rows()))
        return REMAIN

    def decode_all(self) -> dict:
        """Load every bitmap (validates the whole payload); key -> rows, plus ``None`` -> nulls."""
        out = {key: self.rows_of_key(key) for key in self.keys()}
        out[None] = self.null_rows()
        return out
