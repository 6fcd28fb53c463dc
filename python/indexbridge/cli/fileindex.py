"""`indexbridge inspect` for Paimon file indexes: containers and raw bloom / bitmap / bsi /
range-bitmap payloads.

The JSON (the same fields as the JVM engine's ``io.indexbridge.cli.FileIndexInspect``)::

    container  {file, format: "file-index", file_size, version, head_length, redundant_length,
                columns: [{column, type, type_source, indexes: [{index_type, start, length,
                          empty?, ...summary}], readers}], query?}
    raw        {file, format: "bloom"|"bitmap"|"bsi"|"range-bitmap", file_size, type, ...summary, query?}

    summary    bloom-filter  num_bits, num_hash_functions, bits_set, fill_ratio
               bitmap        version, row_count, distinct_values, null_rows
               bsi           row_count, non_null_rows, min, max (as long keys), slices {positive, negative}
               range-bitmap  row_count, distinct_values, non_null_rows, null_rows, min, max (keys: integers
                             as numbers, floats as raw bits "0x…", booleans, strings), chunks, slices
    query      {condition, predicate (bound, condition.predicate_json), result: skip|remain|bitmap,
                remain, rows? {cardinality, ranges (first 16, [start, end)), more_ranges}}

A column's ``readers`` are what Paimon's ``FileIndexFormat.Reader.readColumnIndex`` holds for it
(``FileIndexContainer.held``): one per index type, every empty entry sharing one ``"empty"``.

A column's type is the one given (``--type col=TYPE``, or ``--type m=TYPE`` for every ``m[k]``);
else what its indexes tell: bitmap key bytes (the first of BIGINT, INT, SMALLINT, TINYINT,
STRING whose reading loads every bitmap with rows inside the row count), else the first of the
same for a range-bitmap whose chunk headers and keys all read (its chunks record the key width),
else BIGINT for a BSI (it stores longs). A bloom filter alone tells nothing: the column then answers REMAIN. A raw
payload answers for every column the condition names.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from pyroaring import BitMap

from indexbridge.errors import IndexFormatError
from indexbridge.paimon.fileindex.bitmap import BitmapIndex
from indexbridge.paimon.fileindex.bloom import BloomFilterIndex
from indexbridge.paimon.fileindex.bsi import BitSliceIndex
from indexbridge.paimon.fileindex.condition import bind, parse, predicate_json
from indexbridge.paimon.fileindex.container import MAGIC, FileIndexContainer
from indexbridge.paimon.fileindex.predicate import BitmapResult, FileIndexPredicate, IndexReader, Leaf, Predicate
from indexbridge.paimon.fileindex.rangebitmap import RangeBitmapIndex
from indexbridge.paimon.fileindex.values import DataType

CONTAINER_MAGIC = MAGIC.to_bytes(8, "big")
RAW_FORMATS = {"bloom": BloomFilterIndex, "bitmap": BitmapIndex, "bsi": BitSliceIndex, "range-bitmap": RangeBitmapIndex}
_READERS = {"bloom-filter": BloomFilterIndex, "bitmap": BitmapIndex, "bsi": BitSliceIndex, "range-bitmap": RangeBitmapIndex}
_INFERRED_BITMAP_TYPES = ("BIGINT", "INT", "SMALLINT", "TINYINT", "STRING")
_SHOWN_RANGES = 16


def index_summary(reader: IndexReader | BloomFilterIndex) -> dict:
    """What one index tells about itself (module docstring)."""
    if isinstance(reader, BloomFilterIndex):
        bits_set = int(np.unpackbits(reader.bits).sum())
        return {"num_bits": reader.num_bits, "num_hash_functions": reader.num_hashes, "bits_set": bits_set,
                "fill_ratio": bits_set / reader.num_bits}  # fmt: skip
    if isinstance(reader, BitmapIndex):
        return {"version": reader.version, "row_count": reader.row_count, "distinct_values": reader.key_count,
                "null_rows": len(reader.null_rows())}  # fmt: skip
    if isinstance(reader, BitSliceIndex):
        low, high = reader.value_range() or (None, None)
        slices = {side: len(s.slices) if s is not None else 0 for side, s in (("positive", reader.positive), ("negative", reader.negative))}
        return {"row_count": reader.row_count, "non_null_rows": len(reader.non_null_rows()), "min": low, "max": high,
                "slices": slices}  # fmt: skip
    if isinstance(reader, RangeBitmapIndex):
        non_null = len(reader.is_not_null())
        return {"row_count": reader.row_count, "distinct_values": reader.cardinality, "non_null_rows": non_null,
                "null_rows": reader.row_count - non_null, "min": _key_json(reader, reader.min),
                "max": _key_json(reader, reader.max), "chunks": reader.dictionary.chunk_count,
                "slices": reader.bsi.count}  # fmt: skip
    return {}


def _key_json(reader: RangeBitmapIndex, key: object) -> object:
    if key is None or reader.kind in ("int8", "int16", "int32", "int64"):
        return key
    if reader.kind in ("float32", "float64"):
        return f"0x{key:0{8 if reader.kind == 'float32' else 16}x}"
    if reader.kind == "bool":
        return bool(key)
    return key.decode("utf-8", "replace")


def _infer_range_bitmap_type(payload: memoryview, source: str) -> str | None:
    for sql in _INFERRED_BITMAP_TYPES:
        try:
            index = RangeBitmapIndex.read(payload, DataType.from_sql(sql), source)
            for i in range(index.dictionary.chunk_count):
                index.dictionary.chunk_keys(i)
            return sql
        except IndexFormatError:
            continue
    return None


def _infer_bitmap_type(payload: memoryview, source: str) -> str | None:
    for sql in _INFERRED_BITMAP_TYPES:
        try:
            index = BitmapIndex.read(payload, DataType.from_sql(sql), source)
            if all(not rows or rows.max() < index.row_count for rows in index.decode_all().values()):
                return sql
        except IndexFormatError:
            continue
    return None


def _given_type(column: str, types: Mapping[str, str]) -> str | None:
    if column in types:
        return types[column]
    top = column.split("[", 1)[0]
    return types.get(top) if top != column else None


def _query(text: str, readers: Mapping[str, list], types: Mapping[str, DataType], source: str) -> dict:
    predicate = parse(text, "--query")
    try:
        bound = bind(predicate, types)
    except ValueError as error:
        raise QueryError(f"{source}: --query: {error} (pass --type COLUMN=TYPE)") from None
    result = FileIndexPredicate(readers).evaluate(bound)
    out = {"condition": text, "predicate": predicate_json(bound), "result": result.kind, "remain": result.remain}
    if isinstance(result, BitmapResult):
        out["rows"] = rows_summary(result.rows)
    return out


class QueryError(ValueError):
    """A condition whose literals do not fit the file's columns (one line for the CLI)."""


def rows_summary(rows: BitMap) -> dict:
    ranges: list[list[int]] = []
    for row in rows:
        if ranges and ranges[-1][1] == row:
            ranges[-1][1] = row + 1
        elif len(ranges) == _SHOWN_RANGES:
            return {"cardinality": len(rows), "ranges": ranges, "more_ranges": True}
        else:
            ranges.append([row, row + 1])
    return {"cardinality": len(rows), "ranges": ranges, "more_ranges": False}


def _columns_of(p: Predicate) -> list[str]:
    if isinstance(p, Leaf):
        return [p.column]
    return [c for child in p.children for c in _columns_of(child)]


def describe_container(path: str, data: bytes, types: Mapping[str, str], query: str | None) -> dict:
    container = FileIndexContainer(data, path)
    columns, readers, bound_types = [], {}, {}
    for column in container.columns():
        entries = [e for e in container.entries if e.column == column]
        sql, source = _given_type(column, types), "given"
        if sql is None:
            bitmap = next((e for e in entries if e.index_type == "bitmap" and e.start != -1), None)
            sql = _infer_bitmap_type(container.data[bitmap.start : bitmap.start + bitmap.length], path) if bitmap else None
            ranged = next((e for e in entries if e.index_type == "range-bitmap" and e.start != -1), None)
            if sql is None and ranged is not None:
                sql = _infer_range_bitmap_type(container.data[ranged.start : ranged.start + ranged.length], path)
            if sql is None and any(e.index_type == "bsi" and e.start != -1 for e in entries):
                sql = "BIGINT"
            source = "inferred" if sql else None
        t = DataType.from_sql(sql) if sql else None
        indexes = []
        for e in entries:
            entry = {"index_type": e.index_type, "start": e.start, "length": e.length}
            if e.start == -1:
                entry["empty"] = True
            elif e.index_type in _READERS:
                kind = _READERS[e.index_type]
                summary_type = t or DataType("BIGINT")  # a bloom filter reads the same whatever the type
                payload = container.data[e.start : e.start + e.length]
                entry.update(index_summary(kind.read(payload, summary_type, f"{path}[{column}/{e.index_type} @{e.start}]")))
            indexes.append(entry)
        if t is not None:
            readers[column] = container.readers(column, t)
            bound_types[column] = t
        held = ["empty" if e.start == -1 else e.index_type for e in container.held(column)]
        columns.append({"column": column, "type": sql, "type_source": source, "indexes": indexes, "readers": held})
    out = {"file": path, "format": "file-index", "file_size": len(data), "version": 1,
           "head_length": container.head_length, "redundant_length": container.redundant_length, "columns": columns}  # fmt: skip
    if query is not None:
        out["query"] = _query(query, readers, bound_types, path)
    return out


def describe_raw(path: str, data: bytes, fmt: str, type_sql: str | None, query: str | None) -> dict:
    if type_sql is None:
        raise QueryError(f"{path}: a raw {fmt} payload needs --type TYPE (its column's data type)")
    t = DataType.from_sql(type_sql)
    reader = RAW_FORMATS[fmt].read(data, t, path)
    out = {"file": path, "format": fmt, "file_size": len(data), "type": type_sql, **index_summary(reader)}
    if query is not None:
        columns = _columns_of(parse(query, "--query"))
        out["query"] = _query(query, {c: [reader] for c in columns}, {c: t for c in columns}, path)
    return out
