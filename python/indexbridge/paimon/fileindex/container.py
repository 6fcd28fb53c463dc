"""Paimon's file index container (``FileIndexFormat``, spec §4) and its producer
``DataFileIndexWriter`` (App. B.3): all index payloads of one data file in one blob.

Layout (big-endian)::

    HEAD
      i64  magic = 1493475289347502           00 05 4e 4e d0 1a 35 ae
      i32  version = 1
      i32  head_length                        bytes from the magic through redundant_length
      i32  column_count
      column_count x
        mutf8  column name                    u16 length + Java modified UTF-8 (§1.3)
        i32    index_count
        index_count x
          mutf8  index type                   "bloom-filter" | "bitmap" | "bsi" | "range-bitmap"
          i32    start                        absolute file offset of the payload, or -1
          i32    length                       payload length (0 when start = -1)
      i32  redundant_length = 0
    BODY: the payloads in header order

An entry with ``start = -1`` has no payload (a map-nested index that received no rows); its
reader is :class:`~indexbridge.paimon.fileindex.predicate.EmptyIndex`. Map-nested indexes are
named ``m[key]``. Paimon orders columns and index types by its ``java.util.HashMap`` iteration
(App. B.3), reproduced by :func:`build_file_index`. A container of at most
``file-index.in-manifest-threshold`` bytes (default 500) is embedded in the manifest entry
(``_EMBEDDED_FILE_INDEX``), a larger one is written next to the data file as
``<data-file>.index`` (§4.4); the bytes are the same either way.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from indexbridge.bytes import ByteReader
from indexbridge.paimon.fileindex.bitmap import BitmapIndex, parse_memory_size
from indexbridge.paimon.fileindex.bloom import BloomFilterIndex
from indexbridge.paimon.fileindex.bsi import BitSliceIndex
from indexbridge.paimon.fileindex.predicate import EmptyIndex, FileIndexPredicate, IndexReader
from indexbridge.paimon.fileindex.rangebitmap import RangeBitmapIndex
from indexbridge.paimon.fileindex.values import Column, DataType
from indexbridge.paimon.javaorder import hashmap_compute_if_absent_order, hashmap_put_order, java_string_compare, java_string_hash

MAGIC = 1493475289347502
VERSION = 1
IN_MANIFEST_THRESHOLD = 500
_HEAD = struct.Struct(">qii")

INDEX_TYPES = {"bloom-filter": BloomFilterIndex, "bitmap": BitmapIndex, "bsi": BitSliceIndex, "range-bitmap": RangeBitmapIndex}


def embedded_in_manifest(container_size: int, threshold: int = IN_MANIFEST_THRESHOLD) -> bool:
    """Whether Paimon embeds a container of this size in the manifest (``size <= threshold``)
    rather than writing ``<data-file>.index``."""
    return container_size <= threshold


# ---------------------------------------------------------------------------------------------
# Java modified UTF-8 (DataOutput.writeUTF), §1.3


def encode_mutf8(s: str) -> bytes:
    """``writeUTF``: u16 BE length, then each UTF-16 unit as 1-3 bytes (NUL as C0 80)."""
    units = s.encode("utf-16-be", "surrogatepass")
    out = bytearray()
    for i in range(0, len(units), 2):
        c = units[i] << 8 | units[i + 1]
        if 0 < c < 0x80:
            out.append(c)
        elif c < 0x800:
            out += bytes((0xC0 | c >> 6, 0x80 | c & 0x3F))
        else:
            out += bytes((0xE0 | c >> 12, 0x80 | c >> 6 & 0x3F, 0x80 | c & 0x3F))
    if len(out) > 0xFFFF:
        raise ValueError(f"{len(out)} bytes of modified UTF-8 exceed writeUTF's 65535")
    return struct.pack(">H", len(out)) + bytes(out)


def read_mutf8(reader: ByteReader, what: str) -> str:
    """``readUTF``: a length-prefixed modified UTF-8 string; malformed bytes are an error."""
    n = reader.take(2, f"{what} length")
    start = reader.pos
    data = reader.take(n[0] << 8 | n[1], what)
    units = []
    i = 0
    while i < len(data):
        b = data[i]
        if b < 0x80:
            units.append(b)
            i += 1
        elif b >> 5 == 0b110 and i + 1 < len(data) and data[i + 1] >> 6 == 0b10:
            units.append((b & 0x1F) << 6 | data[i + 1] & 0x3F)
            i += 2
        elif b >> 4 == 0b1110 and i + 2 < len(data) and data[i + 1] >> 6 == 0b10 and data[i + 2] >> 6 == 0b10:
            units.append((b & 0x0F) << 12 | (data[i + 1] & 0x3F) << 6 | data[i + 2] & 0x3F)
            i += 3
        else:
            raise reader.error(f"modified UTF-8 in {what}", start + i)
    return b"".join(struct.pack(">H", u) for u in units).decode("utf-16-be", "surrogatepass")


# ---------------------------------------------------------------------------------------------
# The container


@dataclass(frozen=True)
class ContainerEntry:
    """One (column, index type) of the header; ``start = -1`` means no payload."""

    column: str
    index_type: str
    start: int
    length: int


def write_file_index(columns: Sequence[tuple[str, Sequence[tuple[str, bytes | None]]]]) -> bytes:
    """``FileIndexFormat.Writer``: the container of these payloads, columns and index types in
    the order given (``None`` payload = empty entry, ``start = -1, length = 0``)."""
    names = [(encode_mutf8(c), [(encode_mutf8(t), p) for t, p in indexes]) for c, indexes in columns]
    head_length = _HEAD.size + 4 + 4
    for name, indexes in names:
        head_length += len(name) + 4 + sum(len(t) + 8 for t, _ in indexes)
    head = [_HEAD.pack(MAGIC, VERSION, head_length), struct.pack(">i", len(names))]
    body = []
    start = head_length
    for name, indexes in names:
        head.append(name + struct.pack(">i", len(indexes)))
        for type_name, payload in indexes:
            if payload is None:
                head.append(type_name + struct.pack(">ii", -1, 0))
            else:
                head.append(type_name + struct.pack(">ii", start, len(payload)))
                body.append(payload)
                start += len(payload)
    head.append(struct.pack(">i", 0))  # redundant_length
    return b"".join(head) + b"".join(body)


class FileIndexContainer:
    """A parsed container: header entries in file order and zero-copy payload views."""

    def __init__(self, data: bytes | bytearray | memoryview, source: str = "<bytes>"):
        reader = ByteReader(data, source)
        self.source = source
        self.data = reader.data
        magic, version, head_length = struct.unpack(">qii", reader.take(_HEAD.size, "file index head"))
        if magic != MAGIC:
            raise reader.error(f"file index magic {MAGIC}, found {magic}", 0)
        if version != VERSION:
            raise reader.error(f"file index version {VERSION}, found {version}", 8)
        if not _HEAD.size + 8 <= head_length <= len(self.data):
            raise reader.error(f"a head_length within the {len(self.data)} bytes, found {head_length}", 12)
        self.head_length = head_length
        head = ByteReader(self.data, source, _HEAD.size, head_length)
        at = head.pos
        column_count = head.i32_be("column_count")
        if not 0 <= column_count <= head.remaining // 6:
            raise head.error(f"a column_count that fits the {head.remaining} header bytes, found {column_count}", at)
        self.entries: list[ContainerEntry] = []
        for _ in range(column_count):
            column = read_mutf8(head, "column name")
            at = head.pos
            index_count = head.i32_be("index_count")
            if not 0 <= index_count <= head.remaining // 10:
                raise head.error(f"an index_count that fits the {head.remaining} header bytes, found {index_count}", at)
            for _ in range(index_count):
                index_type = read_mutf8(head, "index type")
                at = head.pos
                start, length = head.i32_be("start"), head.i32_be("length")
                if start != -1 and not (0 <= start and 0 <= length and start + length <= len(self.data)):
                    raise head.error(
                        f"a payload within the {len(self.data)} bytes (or start -1), found start {start} length {length}", at
                    )
                self.entries.append(ContainerEntry(column, index_type, start, length))
        self.redundant_length = head.i32_be("redundant_length")
        self._by_name = {(e.column, e.index_type): e for e in self.entries}  # duplicates: last wins

    def columns(self) -> list[str]:
        """Column names in file order (duplicates once)."""
        return list(dict.fromkeys(e.column for e in self.entries))

    def payload(self, column: str, index_type: str) -> memoryview | None:
        entry = self._by_name[(column, index_type)]
        return None if entry.start == -1 else self.data[entry.start : entry.start + entry.length]

    def held(self, column: str) -> list[ContainerEntry]:
        """The entries whose readers Paimon's ``FileIndexFormat.Reader.readColumnIndex(column)``
        holds: per index type the last entry of that name (its header is a HashMap per column),
        and of the empty entries only the first, since every empty entry reads as the one
        ``EmptyFileIndexReader.INSTANCE`` and the readers are collected into a Set. In header
        order (Paimon's HashSet has no meaningful order: identity hashes)."""
        out: list[ContainerEntry] = []
        for (name, _), entry in self._by_name.items():
            if name == column and not (entry.start == -1 and any(e.start == -1 for e in out)):
                out.append(entry)
        return out

    def readers(self, column: str, data_type: DataType) -> list[IndexReader]:
        """The index readers of a column (``data_type`` is the indexed value type), one per
        :meth:`held` entry. Indexes of types indexbridge does not know are left out: the column
        then answers as far as the other indexes allow, at worst REMAIN, which is always correct."""
        out: list[IndexReader] = []
        for entry in self.held(column):
            if entry.start == -1:
                out.append(EmptyIndex())
            elif entry.index_type in INDEX_TYPES:
                source = f"{self.source}[{column}/{entry.index_type} @{entry.start}]"
                payload = self.data[entry.start : entry.start + entry.length]
                out.append(INDEX_TYPES[entry.index_type].read(payload, data_type, source))
        return out

    def predicate(self, fields: Mapping[str, DataType]) -> FileIndexPredicate:
        """``FileIndexPredicate`` over the indexed columns of the data file's row type ``fields``
        (a ``m[key]`` column takes the value type of map ``m``; other names are ignored)."""
        readers = {}
        for column in self.columns():
            data_type = indexed_type(column, fields)
            if data_type is not None:
                readers[column] = self.readers(column, data_type)
        return FileIndexPredicate(readers)


def indexed_type(column: str, fields: Mapping[str, DataType]) -> DataType | None:
    """The type of the values an index of ``column`` holds (``m[key]``: the map's value type),
    or None when the row type has no such column."""
    if column in fields:
        return fields[column]
    nested = _split_nested(column)
    if nested and nested[0] in fields and fields[nested[0]].root == "MAP":
        return fields[nested[0]].value
    return None


# ---------------------------------------------------------------------------------------------
# DataFileIndexWriter: options -> writers -> container, in Paimon's HashMap orders (App. B.3)


def _split_nested(column: str) -> tuple[str, str] | None:
    """``FileIndexOptions.topLevelIndexOfNested``: ``m[k]`` -> (m, k)."""
    start = column.find("[")
    if start != -1 and column.endswith("]"):
        return column[:start], column[start + 1 : -1]
    return None


def _column_hash(column: tuple[str, str | None, bool]) -> int:
    """``FileIndexOptions.Column.hashCode`` = ``Arrays.hashCode({name, nestedName, isNested})``."""
    name, nested, is_nested = column
    h = 31 + java_string_hash(name)
    h = 31 * h + (0 if nested is None else java_string_hash(nested))
    return (31 * h + (1231 if is_nested else 1237)) & 0xFFFFFFFF


def _put_order(keys: Sequence[str]) -> list[str]:
    return hashmap_put_order(keys, java_string_hash, java_string_compare)


def _cia_order(calls: Sequence[str]) -> list[str]:
    return hashmap_compute_if_absent_order(calls, java_string_hash, java_string_compare)


@dataclass(frozen=True)
class IndexColumn:
    """A configured index target: ``name``, or map column ``name`` with key ``nested``."""

    name: str
    nested: str | None = None

    @property
    def key(self) -> tuple[str, str | None, bool]:
        return (self.name, self.nested, self.nested is not None)


def file_index_options(
    table_options: Mapping[str, str], iteration_order: Sequence[str] | None = None
) -> tuple[dict[IndexColumn, dict[str, dict[str, str]]], dict[str, dict[str, dict[str, str]]]]:
    """``FileIndexOptions``: {column: {index type: options}} in Paimon's HashMap orders, and the
    map-level options {map column: {index type: options}}.

    ``iteration_order`` is the order the options were handed to ``CoreOptions`` (default: the
    mapping's order); they are put into ``Options``' HashMap, whose order is then followed.
    """
    keys = list(iteration_order if iteration_order is not None else table_options)
    column_calls: list[tuple[str, str | None, bool]] = []
    type_calls: dict[tuple, list[str]] = {}
    top_level: dict[str, dict[str, dict[str, str]]] = {}
    options_pass = []
    for key in _put_order(keys):
        if not key.startswith("file-index."):
            continue
        if not key.endswith(".columns"):
            options_pass.append(key)
            continue
        index_type = key[len("file-index.") : -len(".columns")]
        for name in _java_split(table_options[key], ","):
            if not name.strip():
                raise ValueError(f"Wrong option in {key}, should not have empty column")
            name = name.strip()
            nested = _split_nested(name)
            column = (nested[0], nested[1], True) if nested else (name, None, False)
            column_calls.append(column)
            type_calls.setdefault(column, []).append(index_type)
            if nested:
                top_level.setdefault(nested[0], {}).setdefault(index_type, {})
    options: dict[IndexColumn, dict[str, dict[str, str]]] = {}
    for column in hashmap_compute_if_absent_order(column_calls, _column_hash):  # Column is not Comparable
        options[IndexColumn(column[0], column[1])] = {t: {} for t in _cia_order(type_calls[column])}
    for key in options_pass:
        parts = key[len("file-index.") :].split(".")
        if len(parts) != 3:
            continue
        index_type, name, option = parts
        nested = _split_nested(name)
        target = IndexColumn(*nested) if nested else IndexColumn(name)
        if index_type in options.get(target, {}):
            options[target][index_type][option] = table_options[key]
        elif index_type in top_level.get(name, {}):
            top_level[name][index_type][option] = table_options[key]
        else:
            raise ValueError(f'Wrong option in "{key}", can\'t found column "{name}" in "file-index.{index_type}.columns"')
    return options, top_level


def _java_split(value: str, sep: str) -> list[str]:
    """``String.split``: trailing empty strings are dropped."""
    parts = value.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def build_index(index_type: str, data_type: DataType, column: Column, options: Mapping[str, str]) -> bytes:
    """The payload of one index over one column of values (``None`` = null)."""
    if index_type == "bloom-filter":
        return BloomFilterIndex.from_options(data_type, column, dict(options)).serialize()
    if index_type == "bitmap":
        return BitmapIndex.from_options(data_type, column, dict(options)).serialize()
    if index_type == "bsi":
        return BitSliceIndex.build(data_type, column).serialize()
    if index_type == "range-bitmap":
        return RangeBitmapIndex.from_options(data_type, column, dict(options)).serialize()
    raise ValueError(f"index type {index_type!r} is not supported")


def _map_values(rows: Sequence[object], key: str) -> list[object]:
    """The value of ``key`` in each map row (a dict or [key, value] pairs); None when absent."""
    out = []
    for m in rows:
        if m is None:
            out.append(None)
        else:
            out.append((m if isinstance(m, Mapping) else dict(m)).get(key))
    return out


def build_file_index(
    table_options: Mapping[str, str],
    fields: Mapping[str, DataType],
    columns: Mapping[str, Column],
    options_order: Sequence[str] | None = None,
) -> bytes:
    """The container ``DataFileIndexWriter`` writes for one data file.

    ``table_options`` are the table's ``file-index.*`` options (others are ignored),
    ``options_order`` the order they were handed to Paimon (default: mapping order), ``fields``
    the data file's row type and ``columns`` the values of each indexed column (map columns:
    per row a dict / list of (key, value) pairs, or None).
    """
    index_options, top_level = file_index_options(table_options, options_order)
    # maintainers: {index type: {column: plain or {map key: options}}}, with their call orders
    type_calls: list[str] = []
    column_puts: dict[str, list[str]] = {}
    plain: dict[tuple[str, str], dict[str, str]] = {}
    nested_puts: dict[tuple[str, str], list[str]] = {}
    nested_opts: dict[tuple[str, str, str], dict[str, str]] = {}
    for column, types in index_options.items():
        if column.name not in fields:
            raise ValueError(f"{column.name} does not exist in column fields")
        for index_type, opts in types.items():
            type_calls.append(index_type)
            puts = column_puts.setdefault(index_type, [])
            if column.nested is None:
                if (index_type, column.name) not in plain:
                    puts.append(column.name)
                    plain[(index_type, column.name)] = opts
            else:
                if fields[column.name].root != "MAP":
                    raise ValueError(f"Column {column.name} is nested column, but is not map type")
                if (index_type, column.name) not in nested_puts:
                    puts.append(column.name)
                    nested_puts[(index_type, column.name)] = []
                nested_puts[(index_type, column.name)].append(column.nested)
                merged = dict(top_level[column.name][index_type])
                merged.update(opts)
                nested_opts[(index_type, column.name, column.nested)] = merged
    index_maps: dict[str, dict[str, bytes | None]] = {}
    calls: list[str] = []
    puts_per_key: dict[str, list[tuple[str, bytes | None]]] = {}
    for index_type in _cia_order(type_calls):
        for name in _put_order(column_puts[index_type]):
            if (index_type, name) in plain:
                payloads = {name: build_index(index_type, fields[name], columns[name], plain[(index_type, name)])}
            else:
                rows = list(columns[name])
                payloads = {}
                for key in _put_order(nested_puts[(index_type, name)]):
                    values = _map_values(rows, key)
                    opts = nested_opts[(index_type, name, key)]
                    payload = build_index(index_type, fields[name].value, values, opts) if rows else None
                    payloads[f"{name}[{key}]"] = payload
                payloads = {k: payloads[k] for k in _put_order(list(payloads))}
            for key, payload in payloads.items():
                calls.append(key)
                puts_per_key.setdefault(key, []).append((index_type, payload))
    for key in _cia_order(calls):
        types = dict(puts_per_key[key])
        index_maps[key] = {t: types[t] for t in _put_order([t for t, _ in puts_per_key[key]])}
    return write_file_index([(c, list(m.items())) for c, m in index_maps.items()])


def in_manifest_threshold(table_options: Mapping[str, str]) -> int:
    """``file-index.in-manifest-threshold`` (a memory size, default 500 bytes)."""
    return parse_memory_size(table_options.get("file-index.in-manifest-threshold", f"{IN_MANIFEST_THRESHOLD}b"))
