"""BoltDB files as go.etcd.io/bbolt v1.3.5 writes them (bleve v1.0.14 scorch's ``store/root.bolt``).

A bolt file is an array of pages of ``page_size`` bytes (the OS page size of the writer, 4096
here; recorded in the meta pages). Integers are little-endian (bbolt writes its structs in the
machine's order; every platform bleve ships on is little-endian). Page ``n`` starts at
``n * page_size``; a page with ``overflow = k`` spans ``k + 1`` pages::

    page header (16 bytes, every page)
        u64 id          the page's own number
        u16 flags       0x01 branch, 0x02 leaf, 0x04 meta, 0x10 freelist
        u16 count       elements (branch, leaf) or free ids (freelist; 0xFFFF: see below)
        u32 overflow    extra pages that follow this one

    meta pages 0 and 1 (header, then 64 bytes)
        u32 magic 0xED0CDAED | u32 version 2 | u32 page_size | u32 flags
        u64 root        root bucket's root page  | u64 sequence of the root bucket
        u64 freelist    freelist page (0xFFFFFFFFFFFFFFFF: none, NoFreelistSync)
        u64 pgid        high-water mark: pages 0 .. pgid-1 exist
        u64 txid        transaction that wrote it; meta page txid % 2
        u64 checksum    FNV-64a of the 56 bytes before it
      The valid meta page (magic, version, checksum) with the higher txid is the database.

    freelist page (flags 0x10)
        count < 0xFFFF: count x u64 free page ids
        count = 0xFFFF: u64 n, then n x u64 free page ids

    branch page (flags 0x01)                leaf page (flags 0x02)
        count x element (16 bytes):             count x element (16 bytes):
            u32 pos   key at element + pos          u32 flags  0, or 0x01: the value is a bucket
            u32 ksize                               u32 pos    key at element + pos, value after it
            u64 pgid  child page                    u32 ksize
        keys, in element order                      u32 vsize
                                                keys and values, in element order

    bucket value (a leaf element with flags 0x01)
        u64 root        the bucket's root page, or 0: an inline bucket
        u64 sequence    NextSequence's counter
        inline bucket: a leaf page follows in the value itself (header id 0, no nested buckets)

Keys are non-empty and ascend bytewise through a bucket's leaves; a branch element's key is its
child's first key. The writer does what one bbolt transaction does on a new database (``Open``
writes meta pages 0/1 with txid 0/1, an empty freelist page 2 and an empty leaf page 3; the
transaction, txid 2, adds every bucket and key): child buckets that fit in a quarter page and
hold no buckets are inlined, the others spill first (in key order), then the bucket's own node,
split into pages filled to half a page, branch levels above; new pages are numbered from 4; the
freelist lists pages 2 and 3 (freed by the transaction), meta page 0 gets txid 2, meta page 1
keeps txid 1, and the file is padded to bbolt's mmap size (32 KiB, 64 KiB, ... 1 GiB). bbolt
spills sibling buckets in Go's random map order, so its pages for a bucket with two or more
non-inline child buckets come in any order; this writer's layout is the one that spills them
in key order.

The reader checks every page id against the high-water mark and the file, every element against
its page, that no page is reached twice (cycles, shared pages), that keys ascend and that no page
in use is also free; it walks with explicit stacks, so depth costs no recursion.
"""

from __future__ import annotations

import os
import struct
from collections import deque
from collections.abc import Mapping
from pathlib import Path

from indexbridge.errors import IndexFormatError
from indexbridge.storage import write_atomically

MAGIC = 0xED0CDAED
VERSION = 2
DEFAULT_PAGE_SIZE = 4096
PAGE_HEADER_SIZE = 16
ELEMENT_SIZE = 16  # branch and leaf elements alike
META_SIZE = 64
BUCKET_HEADER_SIZE = 16
BRANCH_PAGE, LEAF_PAGE, META_PAGE, FREELIST_PAGE = 0x01, 0x02, 0x04, 0x10
BUCKET_LEAF_FLAG = 0x01
NO_FREELIST = 0xFFFF_FFFF_FFFF_FFFF
MAX_KEY_SIZE = 32768
MAX_VALUE_SIZE = (1 << 31) - 2
MIN_PAGE_SIZE = PAGE_HEADER_SIZE + META_SIZE
FREELIST_COUNT_OVERFLOW = 0xFFFF
_FILL_PERCENT = 0.5  # bbolt's DefaultFillPercent
_MIN_KEYS_PER_PAGE = 2
_ALLOC_SIZE = 16 << 20  # DB.AllocSize: how far the file grows past 16 MiB of mmap
_MAX_MMAP_STEP = 1 << 30
_MAX_MAP_SIZE = 0xFFFFFFFFFFFF  # amd64
_FNV_OFFSET, _FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3

_PAGE_HEADER = struct.Struct("<QHHI")
_META = struct.Struct("<IIIIQQQQQQ")
_LEAF_ELEMENT = struct.Struct("<IIII")
_BRANCH_ELEMENT = struct.Struct("<IIQ")
_BUCKET_HEADER = struct.Struct("<QQ")
_U64 = struct.Struct("<Q")


def fnv64a(data: bytes | memoryview) -> int:
    """Go's ``hash/fnv`` New64a over ``data``: the meta page checksum."""
    h = _FNV_OFFSET
    for byte in bytes(data):
        h = ((h ^ byte) * _FNV_PRIME) & 0xFFFF_FFFF_FFFF_FFFF
    return h


class BoltBucket(dict):
    """A bucket: ``key -> bytes`` (a value) or ``key -> BoltBucket`` (a nested bucket), in key
    order when read, and the bucket's ``sequence``. A plain ``dict`` equals it when the items do."""

    __slots__ = ("sequence",)

    def __init__(self, items=(), sequence: int = 0):
        super().__init__(items)
        self.sequence = sequence

    def __repr__(self) -> str:
        return f"BoltBucket({dict.__repr__(self)}, sequence={self.sequence})"


class Meta:
    """One meta page: where the root bucket and the freelist are, the high-water mark, the txid."""

    __slots__ = ("page", "page_size", "flags", "root", "sequence", "freelist", "pgid", "txid", "checksum")

    def __init__(self, page, page_size, flags, root, sequence, freelist, pgid, txid, checksum):
        self.page, self.page_size, self.flags = page, page_size, flags
        self.root, self.sequence, self.freelist = root, sequence, freelist
        self.pgid, self.txid, self.checksum = pgid, txid, checksum

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)}" for name in self.__slots__)
        return f"Meta({fields})"


class BoltFile:
    """A bolt file, decoded whole and checked: ``meta`` (the current meta page), ``free_pages``
    (sorted free page ids; ``None`` without a freelist) and ``root``, the tree of buckets."""

    def __init__(self, data: bytes | bytearray | memoryview, source: str = "<bytes>"):
        self.source = source
        self._data = memoryview(data).cast("B")
        self.meta = self._select_meta()
        self.page_size = self.meta.page_size
        self._in_use = bytearray(self.meta.pgid)  # 1 per page reached: meta, freelist, buckets
        self._in_use[0:2] = b"\x01\x01"
        self.free_pages = self._read_freelist()
        self.root = self._read_tree()
        if self.free_pages:
            for pgid in self.free_pages:
                if self._in_use[pgid]:
                    raise self._error(pgid * self.page_size, f"page {pgid} is in use but listed as free")
        del self._in_use

    @classmethod
    def open(cls, path: str | os.PathLike) -> BoltFile:
        return cls(Path(path).read_bytes(), str(path))

    def get(self, *path: bytes) -> bytes | BoltBucket | None:
        """The value or bucket at a key path (``get(b"s", epoch, b"m", b"type")``), or None."""
        node: bytes | BoltBucket | None = self.root
        for key in path:
            if not isinstance(node, BoltBucket):
                return None
            node = node.get(bytes(key))
        return node

    def _error(self, offset: int, expected: str) -> IndexFormatError:
        return IndexFormatError(self.source, offset, expected)

    # -- meta pages -------------------------------------------------------------------------

    def _meta_at(self, index: int, offset: int) -> Meta | str:
        """Meta page ``index`` at ``offset``, or why it is not a valid one."""
        data = self._data
        if offset + PAGE_HEADER_SIZE + META_SIZE > len(data):
            return f"meta page {index} at offset {offset}: {PAGE_HEADER_SIZE + META_SIZE} bytes, the file has {len(data)}"
        pgid, flags, _, _ = _PAGE_HEADER.unpack_from(data, offset)
        if pgid != index or flags != META_PAGE:
            return f"meta page {index} at offset {offset}: header id {index} flags 0x04, found id {pgid} flags {flags:#x}"
        fields = _META.unpack_from(data, offset + PAGE_HEADER_SIZE)
        magic, version, page_size = fields[0], fields[1], fields[2]
        if magic != MAGIC:
            return f"meta page {index} at offset {offset}: magic 0xed0cdaed, found {magic:#x}"
        if version != VERSION:
            return f"meta page {index} at offset {offset}: version 2, found {version}"
        start = offset + PAGE_HEADER_SIZE
        checksum = fnv64a(data[start : start + META_SIZE - 8])
        if checksum != fields[9]:
            return f"meta page {index} at offset {offset}: checksum {checksum:#x}, found {fields[9]:#x}"
        if page_size < MIN_PAGE_SIZE or (index == 1 and page_size != offset):
            return f"meta page {index} at offset {offset}: a page size of {max(offset, MIN_PAGE_SIZE)}, found {page_size}"
        return Meta(index, *fields[2:])

    def _select_meta(self) -> Meta:
        meta0 = self._meta_at(0, 0)
        if isinstance(meta0, Meta):
            meta1 = self._meta_at(1, meta0.page_size)
        else:  # like bbolt, look for meta page 1 one OS page in; also at the other usual sizes
            meta1 = "meta page 1: none found at 512 .. 65536"
            for page_size in (4096, 512, 1024, 2048, 8192, 16384, 32768, 65536):
                candidate = self._meta_at(1, page_size)
                if isinstance(candidate, Meta):
                    meta1 = candidate
                    break
        if isinstance(meta0, str) and isinstance(meta1, str):
            raise self._error(0, f"a valid meta page ({meta0}; {meta1})")
        if isinstance(meta0, str) or (isinstance(meta1, Meta) and meta1.txid > meta0.txid):
            meta = meta1
        else:
            meta = meta0
        at = meta.page * meta.page_size + PAGE_HEADER_SIZE
        pages = len(self._data) // meta.page_size
        if not 2 <= meta.pgid <= pages:
            raise self._error(at + 32, f"a high-water mark within the file's {pages} pages, found {meta.pgid}")
        if not 2 <= meta.root < meta.pgid:
            raise self._error(at + 16, f"a root page in 2..{meta.pgid - 1}, found {meta.root}")
        if meta.freelist != NO_FREELIST and not 2 <= meta.freelist < meta.pgid:
            raise self._error(at + 32, f"a freelist page in 2..{meta.pgid - 1}, found {meta.freelist}")
        return meta

    # -- pages ------------------------------------------------------------------------------

    def _page(self, pgid: int, ref: int, what: str) -> tuple[int, int, int, int]:
        """``(start, end, flags, count)`` of page ``pgid`` (named at offset ``ref``), marked in use."""
        hw = self.meta.pgid
        if not 2 <= pgid < hw:
            raise self._error(ref, f"{what}: a page id in 2..{hw - 1}, found {pgid}")
        start = pgid * self.page_size
        header_id, flags, count, overflow = _PAGE_HEADER.unpack_from(self._data, start)
        if header_id != pgid:
            raise self._error(start, f"{what}: the header of page {pgid}, found id {header_id}")
        last = pgid + overflow
        if last >= hw:
            raise self._error(start + 12, f"{what}: page {pgid}'s overflow within the high-water mark {hw}, found {overflow}")
        if self._in_use.find(1, pgid, last + 1) != -1:
            raise self._error(ref, f"{what}: page {pgid} reached once, found it reached again (a cycle or a shared page)")
        self._in_use[pgid : last + 1] = b"\x01" * (last + 1 - pgid)
        return start, (last + 1) * self.page_size, flags, count

    def _read_freelist(self) -> list[int] | None:
        meta = self.meta
        if meta.freelist == NO_FREELIST:
            return None
        ref = meta.page * meta.page_size + PAGE_HEADER_SIZE + 24
        start, end, flags, count = self._page(meta.freelist, ref, "freelist")
        if flags != FREELIST_PAGE:
            raise self._error(start + 8, f"a freelist page (flags 0x10), found flags {flags:#x}")
        at = start + PAGE_HEADER_SIZE
        if count == FREELIST_COUNT_OVERFLOW:
            if at + 8 > end:
                raise self._error(at, f"the freelist's u64 count within its page (ends at {end})")
            count = _U64.unpack_from(self._data, at)[0]
            at += 8
        if count > (end - at) // 8:
            raise self._error(at, f"{count} free page ids within the freelist page (room for {(end - at) // 8})")
        ids = sorted(struct.unpack_from(f"<{count}Q", self._data, at))
        for i, pgid in enumerate(ids):
            if not 2 <= pgid < meta.pgid:
                raise self._error(at, f"free page ids in 2..{meta.pgid - 1}, found {pgid}")
            if i and ids[i - 1] == pgid:
                raise self._error(at, f"each free page listed once, found page {pgid} twice")
        return ids

    # -- buckets ----------------------------------------------------------------------------

    def _read_tree(self) -> BoltBucket:
        meta = self.meta
        root = BoltBucket(sequence=meta.sequence)
        ref = meta.page * meta.page_size + PAGE_HEADER_SIZE + 16
        tasks: deque[tuple[BoltBucket, int, int, int]] = deque([(root, meta.root, ref, 0)])
        while tasks:  # (bucket, root page or 0, where it was named, inline page end)
            bucket, pgid, ref, inline_end = tasks.popleft()
            if pgid:
                self._read_paged_bucket(bucket, pgid, ref, tasks)
            else:
                self._read_inline_bucket(bucket, ref, inline_end, tasks)
        return root

    def _read_inline_bucket(self, bucket: BoltBucket, start: int, end: int, tasks: deque) -> None:
        if start + PAGE_HEADER_SIZE > end:
            raise self._error(start, f"an inline bucket's {PAGE_HEADER_SIZE}-byte page header, found {end - start} bytes")
        _, flags, count, _ = _PAGE_HEADER.unpack_from(self._data, start)
        if flags != LEAF_PAGE:
            raise self._error(start + 8, f"an inline bucket's leaf page (flags 0x02), found flags {flags:#x}")
        self._read_leaf(bucket, start, end, count, None, tasks, inline=True)

    def _read_paged_bucket(self, bucket: BoltBucket, root: int, ref: int, tasks: deque) -> None:
        stack = [(root, ref)]
        last_key = None
        while stack:
            pgid, ref = stack.pop()
            start, end, flags, count = self._page(pgid, ref, "bucket page")
            if flags == LEAF_PAGE:
                last_key = self._read_leaf(bucket, start, end, count, last_key, tasks, inline=False)
            elif flags == BRANCH_PAGE:
                stack.extend(reversed(self._read_branch(start, end, count)))
            else:
                raise self._error(start + 8, f"a branch (0x01) or leaf (0x02) page, found flags {flags:#x}")

    def _elements_end(self, start: int, end: int, count: int) -> int:
        table_end = start + PAGE_HEADER_SIZE + ELEMENT_SIZE * count
        if table_end > end:
            raise self._error(start + 10, f"{count} elements within the page's {end - start} bytes")
        return table_end

    def _read_branch(self, start: int, end: int, count: int) -> list[tuple[int, int]]:
        data = self._data
        floor = self._elements_end(start, end, count)
        children = []
        for i in range(count):
            element = start + PAGE_HEADER_SIZE + ELEMENT_SIZE * i
            pos, ksize, child = _BRANCH_ELEMENT.unpack_from(data, element)
            key_start = element + pos
            if ksize == 0 or key_start < floor or key_start + ksize > end:
                raise self._error(element, f"branch element {i}: a non-empty key in {floor}..{end}, found {key_start}+{ksize}")
            floor = key_start + ksize
            children.append((child, element + 8))
        return children

    def _read_leaf(self, bucket, start, end, count, last_key, tasks, inline: bool):
        data = self._data
        floor = self._elements_end(start, end, count)
        for i in range(count):
            element = start + PAGE_HEADER_SIZE + ELEMENT_SIZE * i
            flags, pos, ksize, vsize = _LEAF_ELEMENT.unpack_from(data, element)
            key_start = element + pos
            value_start = key_start + ksize
            value_end = value_start + vsize
            if ksize == 0 or key_start < floor or value_end > end:
                raise self._error(
                    element, f"leaf element {i}: a non-empty key and its value in {floor}..{end}, found {key_start}+{ksize}+{vsize}"
                )
            floor = value_end
            key = bytes(data[key_start:value_start])
            if last_key is not None and key <= last_key:
                raise self._error(key_start, f"keys in ascending order, found {key.hex()} after {last_key.hex()}")
            last_key = key
            if flags == 0:
                bucket[key] = bytes(data[value_start:value_end])
            elif flags == BUCKET_LEAF_FLAG:
                if inline:
                    raise self._error(element, "no nested bucket inside an inline bucket")
                if vsize < BUCKET_HEADER_SIZE:
                    raise self._error(value_start, f"a {BUCKET_HEADER_SIZE}-byte bucket header, found {vsize} bytes")
                root, sequence = _BUCKET_HEADER.unpack_from(data, value_start)
                if root and vsize != BUCKET_HEADER_SIZE:
                    raise self._error(value_start, f"a {BUCKET_HEADER_SIZE}-byte bucket value, found {vsize} bytes")
                child = BoltBucket(sequence=sequence)
                bucket[key] = child
                if root:
                    tasks.append((child, root, value_start, 0))
                else:
                    tasks.append((child, 0, value_start + BUCKET_HEADER_SIZE, value_end))
            else:
                raise self._error(element, f"leaf element {i}: flags 0 or 0x01, found {flags:#x}")
        return last_key


def read_bolt(src: bytes | bytearray | memoryview | str | os.PathLike, source: str | None = None) -> BoltBucket:
    """The whole tree of a bolt file (bytes, or a path): nested :class:`BoltBucket` dicts."""
    if isinstance(src, (bytes, bytearray, memoryview)):
        return BoltFile(src, source or "<bytes>").root
    return BoltFile(Path(src).read_bytes(), source or str(src)).root


# -- writer ---------------------------------------------------------------------------------


def _mmap_size(size: int, page_size: int) -> int:
    """bbolt's ``DB.mmapSize``: doubling from 32 KiB to 1 GiB, then whole GiBs."""
    for shift in range(15, 31):
        if size <= 1 << shift:
            return 1 << shift
    if size > _MAX_MAP_SIZE:
        raise ValueError(f"a bolt file of {size} bytes is larger than bbolt can map")
    size += -size % _MAX_MMAP_STEP
    size += -size % page_size
    return min(size, _MAX_MAP_SIZE)


class _Writer:
    """One bbolt write transaction on a new database, page by page."""

    def __init__(self, page_size: int):
        if not isinstance(page_size, int) or page_size < MIN_PAGE_SIZE:
            raise ValueError(f"page_size must be an int of at least {MIN_PAGE_SIZE}, not {page_size!r}")
        self.page_size = page_size
        self.init_size = 4 * page_size  # what Open writes: meta 0, meta 1, freelist, root leaf
        self.high_water = 4
        self.mmap_size = _mmap_size(self.init_size, page_size)
        self.pages: list[tuple[int, bytes]] = []

    def allocate(self, count: int) -> int:
        pgid = self.high_water
        wanted = (pgid + count + 1) * self.page_size
        if wanted >= self.mmap_size:
            self.mmap_size = _mmap_size(max(self.init_size, wanted), self.page_size)
        self.high_water += count
        return pgid

    def write_node(self, inodes: list[tuple[int, bytes, bytes, int]], is_leaf: bool) -> int:
        """Spill one node (the bucket's whole content) into pages; the root page id."""
        nodes = _split(inodes, self.page_size)
        parents = []
        for node in nodes:
            count = (_node_size(node) + self.page_size - 1) // self.page_size
            pgid = self.allocate(count)
            buf = bytearray(count * self.page_size)
            _write_page(buf, 0, node, is_leaf, pgid, count - 1)
            self.pages.append((pgid, bytes(buf)))
            if len(nodes) == 1:
                return pgid
            parents.append((0, node[0][1], b"", pgid))
        return self.write_node(parents, is_leaf=False)

    def bucket_value(self, inodes: list, sequence: int) -> bytes:
        """What the parent stores for a child bucket: inline, or spilled to pages."""
        size = PAGE_HEADER_SIZE
        inline = True
        for flags, key, value, _ in inodes:
            size += ELEMENT_SIZE + len(key) + len(value)
            if flags & BUCKET_LEAF_FLAG or size > self.page_size // 4:
                inline = False
                break
        if inline:
            buf = bytearray(BUCKET_HEADER_SIZE + _node_size(inodes))
            _BUCKET_HEADER.pack_into(buf, 0, 0, sequence)
            _write_page(buf, BUCKET_HEADER_SIZE, inodes, True, 0, 0)
            return bytes(buf)
        return _BUCKET_HEADER.pack(self.write_node(inodes, is_leaf=True), sequence)

    def write(self, tree: Mapping) -> bytes:
        ps = self.page_size
        if getattr(tree, "sequence", 0):
            raise ValueError("bbolt does not keep the root bucket's sequence (Tx.Commit copies only its root page)")
        root_inodes = _spill_buckets(self, tree)
        touched = bool(root_inodes)  # bbolt reads the root leaf (page 3) only then
        root = self.write_node(root_inodes, is_leaf=True) if touched else 3
        pending = [2, 3] if touched else [2]  # the old freelist page, the old root leaf
        freelist_size = PAGE_HEADER_SIZE + 8 * (len(pending) + (len(pending) >= FREELIST_COUNT_OVERFLOW))
        freelist_pages = freelist_size // ps + 1
        freelist = self.allocate(freelist_pages)
        buf = bytearray(freelist_pages * ps)
        _PAGE_HEADER.pack_into(buf, 0, freelist, FREELIST_PAGE, len(pending), freelist_pages - 1)
        struct.pack_into(f"<{len(pending)}Q", buf, PAGE_HEADER_SIZE, *pending)
        self.pages.append((freelist, bytes(buf)))
        # DB.grow after the freelist moved the high-water mark: to the mmap size (below 16 MiB)
        file_size = self.mmap_size if self.mmap_size < _ALLOC_SIZE else (self.high_water + 1) * ps + _ALLOC_SIZE
        out = bytearray(max(file_size, self.high_water * ps))
        _write_meta(out, 0, ps, root, 0, freelist, self.high_water, 2)
        _write_meta(out, ps, ps, 3, 0, 2, 4, 1)
        _PAGE_HEADER.pack_into(out, 2 * ps, 2, FREELIST_PAGE, 0, 0)
        _PAGE_HEADER.pack_into(out, 3 * ps, 3, LEAF_PAGE, 0, 0)
        for pgid, page in self.pages:
            out[pgid * ps : pgid * ps + len(page)] = page
        return bytes(out)


def _spill_buckets(writer: _Writer, tree: Mapping) -> list[tuple[int, bytes, bytes, int]]:
    """The root bucket's leaf items; child buckets spilled depth first, in key order, before
    their parents (an explicit stack: the tree's depth costs no recursion)."""
    stack = [(tree, iter(_sorted_items(tree)), [], None)]  # mapping, items left, inodes, key in parent
    while True:
        mapping, items, inodes, key = stack[-1]
        for item_key, value in items:
            if isinstance(value, Mapping):
                stack.append((value, iter(_sorted_items(value)), [], item_key))
                break
            inodes.append((0, item_key, _checked_value(item_key, value), 0))
        else:
            stack.pop()
            if not stack:
                return inodes
            value = writer.bucket_value(inodes, getattr(mapping, "sequence", 0))
            stack[-1][2].append((BUCKET_LEAF_FLAG, key, value, 0))


def _sorted_items(mapping: Mapping) -> list[tuple[bytes, object]]:
    items = []
    for key, value in mapping.items():
        if not isinstance(key, (bytes, bytearray, memoryview)):
            raise TypeError(f"bolt keys are bytes, not {type(key).__name__}: {key!r}")
        key = bytes(key)
        if not 0 < len(key) <= MAX_KEY_SIZE:
            raise ValueError(f"a bolt key has 1..{MAX_KEY_SIZE} bytes, not {len(key)}")
        items.append((key, value))
    items.sort(key=lambda item: item[0])
    for i in range(1, len(items)):
        if items[i][0] == items[i - 1][0]:
            raise ValueError(f"key {items[i][0].hex()} given twice")
    return items


def _checked_value(key: bytes, value) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"the value of key {key.hex()} is bytes or a mapping (a bucket), not {type(value).__name__}")
    value = bytes(value)
    if len(value) > MAX_VALUE_SIZE:
        raise ValueError(f"the value of key {key.hex()} has {len(value)} bytes, more than bbolt's {MAX_VALUE_SIZE}")
    return value


def _node_size(inodes) -> int:
    return PAGE_HEADER_SIZE + sum(ELEMENT_SIZE + len(key) + len(value) for _, key, value, _ in inodes)


def _split(inodes: list, page_size: int) -> list[list]:
    """``node.split``: cut off nodes filled to half a page while more than a page remains."""
    threshold = int(page_size * _FILL_PERCENT)
    nodes = []
    start, n = 0, len(inodes)
    while n - start > 2 * _MIN_KEYS_PER_PAGE and not _size_less_than(inodes, start, page_size):
        size = PAGE_HEADER_SIZE  # node.splitIndex
        index = start
        for i in range(start, n - _MIN_KEYS_PER_PAGE):
            index = i
            _, key, value, _ = inodes[i]
            element = ELEMENT_SIZE + len(key) + len(value)
            if i - start >= _MIN_KEYS_PER_PAGE and size + element > threshold:
                break
            size += element
        nodes.append(inodes[start:index])
        start = index
    nodes.append(inodes[start:])
    return nodes


def _size_less_than(inodes: list, start: int, limit: int) -> bool:
    """``node.sizeLessThan``: whether ``inodes[start:]`` serialise to fewer than ``limit`` bytes."""
    size = PAGE_HEADER_SIZE
    for i in range(start, len(inodes)):
        _, key, value, _ = inodes[i]
        size += ELEMENT_SIZE + len(key) + len(value)
        if size >= limit:
            return False
    return True


def _write_page(buf: bytearray, at: int, inodes: list, is_leaf: bool, pgid: int, overflow: int) -> None:
    """``node.write``: header, elements, then keys and values in element order."""
    if len(inodes) >= 0xFFFF:
        raise ValueError(f"{len(inodes)} elements do not fit one bolt page (page size too large)")
    _PAGE_HEADER.pack_into(buf, at, pgid, LEAF_PAGE if is_leaf else BRANCH_PAGE, len(inodes), overflow)
    data = at + PAGE_HEADER_SIZE + ELEMENT_SIZE * len(inodes)
    for i, (flags, key, value, child) in enumerate(inodes):
        element = at + PAGE_HEADER_SIZE + ELEMENT_SIZE * i
        if is_leaf:
            _LEAF_ELEMENT.pack_into(buf, element, flags, data - element, len(key), len(value))
        else:
            _BRANCH_ELEMENT.pack_into(buf, element, data - element, len(key), child)
        buf[data : data + len(key)] = key
        data += len(key)
        buf[data : data + len(value)] = value
        data += len(value)


def _write_meta(out: bytearray, at: int, page_size: int, root: int, sequence: int, freelist: int, pgid: int, txid: int) -> None:
    _PAGE_HEADER.pack_into(out, at, txid % 2, META_PAGE, 0, 0)
    fields = (MAGIC, VERSION, page_size, 0, root, sequence, freelist, pgid, txid)
    _META.pack_into(out, at + PAGE_HEADER_SIZE, *fields, 0)
    checksum = fnv64a(out[at + PAGE_HEADER_SIZE : at + PAGE_HEADER_SIZE + META_SIZE - 8])
    _U64.pack_into(out, at + PAGE_HEADER_SIZE + META_SIZE - 8, checksum)


def write_bolt(tree: Mapping, page_size: int = DEFAULT_PAGE_SIZE) -> bytes:
    """The bolt file one bbolt v1.3.5 transaction writes for ``tree`` on a new database.

    ``tree`` maps keys (non-empty bytes) to values (bytes) or nested buckets (mappings; a
    :class:`BoltBucket` also carries its sequence). Its own items are the top-level buckets;
    bbolt keeps no sequence for the root bucket, so a non-zero one is refused."""
    return _Writer(page_size).write(tree)


def write_bolt_file(path: str | os.PathLike, tree: Mapping, page_size: int = DEFAULT_PAGE_SIZE) -> None:
    """:func:`write_bolt` into ``path``, atomically (temporary name, then rename)."""
    write_atomically(path, write_bolt(tree, page_size))
