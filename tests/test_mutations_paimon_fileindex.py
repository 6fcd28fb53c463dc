"""Malformed bloom / bitmap / bsi payloads and file index containers: decode or IndexFormatError.

Every file-index vector is mutated field by field (each byte flipped, each integer field set
to extreme values, truncated at every field boundary and at sampled lengths), as the table-index
mutation test does (its helpers are reused, with the default run's share of flips and extreme
values). The fields are walked here, independently of the codecs. Decoding means parsing and then
answering queries, which loads every bitmap.
"""

from __future__ import annotations

import json
import random
import struct
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from test_mutations_paimon_table import (
    Field,
    _assert_bounded_allocation,
    _decode,
    _flips_and_truncations,
    _roaring_fields,
    _selected_fields,
)

from indexbridge.conformance.paimon import typed_value
from indexbridge.errors import IndexFormatError
from indexbridge.paimon.fileindex.bitmap import BitmapIndex
from indexbridge.paimon.fileindex.bloom import BloomFilterIndex
from indexbridge.paimon.fileindex.bsi import BitSliceIndex
from indexbridge.paimon.fileindex.container import FileIndexContainer
from indexbridge.paimon.fileindex.predicate import OPS, Leaf
from indexbridge.paimon.fileindex.values import DataType

_KEY_FORMATS = {"TINYINT": ">b", "SMALLINT": ">h", "INTEGER": ">i", "DATE": ">i", "TIME_WITHOUT_TIME_ZONE": ">i",
                "BIGINT": ">q", "FLOAT": ">i", "DOUBLE": ">q", "BOOLEAN": "B",
                "TIMESTAMP_WITHOUT_TIME_ZONE": ">q", "TIMESTAMP_WITH_LOCAL_TIME_ZONE": ">q"}  # fmt: skip


def _key_fields(data: bytes, pos: int, root: str) -> tuple[list[Field], int]:
    fmt = _KEY_FORMATS.get(root)
    if fmt:
        return [Field(pos, struct.calcsize(fmt), fmt)], pos + struct.calcsize(fmt)
    (n,) = struct.unpack_from(">i", data, pos)
    return [Field(pos, 4, ">i")], pos + 4 + n


def _bitmap_fields(data: bytes, start: int, root: str) -> list[Field]:
    fields = [Field(start, 1, "B"), Field(start + 1, 4, ">i"), Field(start + 5, 4, ">i"), Field(start + 9, 1, "B")]
    version, (n,), has_null = data[start], struct.unpack_from(">i", data, start + 5), data[start + 9]
    pos = start + 10
    null_offset = None
    if has_null:
        (null_offset,) = struct.unpack_from(">i", data, pos)
        fields.append(Field(pos, 4, ">i"))
        pos += 4
        if version == 2:
            fields.append(Field(pos, 4, ">i"))
            pos += 4
    offsets = []
    if version == 1:
        for _ in range(n):
            key_fields, pos = _key_fields(data, pos, root)
            fields += key_fields + [Field(pos, 4, ">i")]
            offsets.append(struct.unpack_from(">i", data, pos)[0])
            pos += 4
        body = pos
    else:
        (blocks,) = struct.unpack_from(">i", data, pos)
        fields.append(Field(pos, 4, ">i"))
        pos += 4
        for _ in range(blocks):
            key_fields, pos = _key_fields(data, pos, root)
            fields += key_fields + [Field(pos, 4, ">i")]
            pos += 4
        (body_offset,) = struct.unpack_from(">i", data, pos)
        fields.append(Field(pos, 4, ">i"))
        pos += 4
        body = pos + body_offset
        while pos < body:
            (count,) = struct.unpack_from(">i", data, pos)
            fields.append(Field(pos, 4, ">i"))
            pos += 4
            for _ in range(count):
                key_fields, pos = _key_fields(data, pos, root)
                fields += key_fields + [Field(pos, 4, ">i"), Field(pos + 4, 4, ">i")]
                offsets.append(struct.unpack_from(">i", data, pos)[0])
                pos += 8
    stored = sorted({o for o in offsets if o >= 0} | ({null_offset} if null_offset is not None and null_offset >= 0 and has_null else set()))
    for offset in stored:
        if body + offset < len(data):
            fields += _roaring_fields(data, body + offset)[0]
    return fields


def _bsi_fields(data: bytes, start: int) -> list[Field]:
    fields = [Field(start, 1, "B"), Field(start + 1, 4, ">i")]
    pos = start + 5
    for _ in range(2):
        fields.append(Field(pos, 1, "B"))
        present = data[pos]
        pos += 1
        if present:
            fields += [Field(pos, 1, "B"), Field(pos + 1, 8, ">q"), Field(pos + 9, 8, ">q")]
            roaring, pos = _roaring_fields(data, pos + 17)
            fields += roaring + [Field(pos, 4, ">i")]
            (count,) = struct.unpack_from(">i", data, pos)
            pos += 4
            for _ in range(count):
                roaring, pos = _roaring_fields(data, pos)
                fields += roaring
    return fields


def _payload_fields(data: bytes, start: int, index_type: str, root: str) -> list[Field]:
    if index_type == "bloom-filter":
        return [Field(start, 4, ">i")]
    if index_type == "bitmap":
        return _bitmap_fields(data, start, root)
    return _bsi_fields(data, start)


def _container_fields(data: bytes, types: dict[str, DataType]) -> list[Field]:
    fields = [Field(0, 8, ">q"), Field(8, 4, ">i"), Field(12, 4, ">i"), Field(16, 4, ">i")]
    (columns,) = struct.unpack_from(">i", data, 16)
    pos = 20
    payloads = []
    for _ in range(columns):
        (n,) = struct.unpack_from(">H", data, pos)
        name = data[pos + 2 : pos + 2 + n].decode("utf-8", "replace")
        fields.append(Field(pos, 2, ">H"))
        pos += 2 + n
        (count,) = struct.unpack_from(">i", data, pos)
        fields.append(Field(pos, 4, ">i"))
        pos += 4
        for _ in range(count):
            (n,) = struct.unpack_from(">H", data, pos)
            index_type = data[pos + 2 : pos + 2 + n].decode()
            fields.append(Field(pos, 2, ">H"))
            pos += 2 + n
            (start,) = struct.unpack_from(">i", data, pos)
            fields += [Field(pos, 4, ">i"), Field(pos + 4, 4, ">i")]
            pos += 8
            if start >= 0:
                payloads.append((start, index_type, types.get(name)))
    fields.append(Field(pos, 4, ">i"))
    for start, index_type, t in payloads:
        fields += _payload_fields(data, start, index_type, t.root if t else "VARCHAR")
    return fields


def _exercise(reader: object, literals: list) -> None:
    """Load the bitmaps (every one, or 100 spread over a big index) and answer every op."""
    if isinstance(reader, BitmapIndex):
        keys = reader.keys()
        for key in keys[:: max(1, len(keys) // 100)]:
            reader.rows_of_key(key)
        reader.null_rows()
    for op in OPS:
        needs = 2 if op == "between" else 0 if op in ("is_null", "is_not_null") else 1
        if len(literals) >= needs:
            reader.query(op, literals if op in ("in", "not_in") else literals[:needs])


def _literals(case: dict, type_json: dict) -> list:
    present = [v for v in case.get("values", []) if v is not None][:3]
    return [typed_value(type_json, v) for v in present] or [typed_value(type_json, q["literals"][0])
                                                           for q in case.get("queries", []) if q.get("literals")][:1]  # fmt: skip


def _container_decoder(case: dict) -> tuple[dict[str, DataType], Callable[[bytes], object]]:
    fields = {c["name"]: DataType.from_json(c["type"]) for c in case.get("columns", [])}
    type_json = {c["name"]: c["type"] for c in case.get("columns", [])}
    literals = {q["column"]: typed_value(type_json.get(q["column"]) or type_json[q["column"].split("[")[0]]["value"],
                                         q["literals"][0]) for q in case.get("queries", []) if q.get("literals")}  # fmt: skip

    def decode(data: bytes) -> object:
        container = FileIndexContainer(data)
        predicate = container.predicate(fields)
        for column, readers in predicate.readers.items():
            for reader in readers:
                _exercise(reader, [literals[column]] if column in literals else [])
            if column in literals:
                predicate.evaluate(Leaf("equal", column, (literals[column],)))
        return container

    return {**fields}, decode


def _decoders(case: dict) -> tuple[list[Field], list[Callable[[bytes], object]]]:
    fmt = case["format"]
    if fmt == "fileindex":
        fields, decode = _container_decoder(case)
        return [], [decode]  # fields are walked per file below (they need the bytes)
    t = DataType.from_json(case["type"])
    literals = _literals(case, case["type"])
    cls = {"bloom": BloomFilterIndex, "bitmap": BitmapIndex, "bsi": BitSliceIndex}[fmt]

    def decode(data: bytes) -> object:
        reader = cls.read(data, t)
        _exercise(reader, literals)
        return reader

    return [], [decode]


def _fields(case: dict, data: bytes) -> list[Field]:
    fmt = case["format"]
    if fmt == "fileindex":
        types = {c["name"]: DataType.from_json(c["type"]) for c in case.get("columns", [])}
        return _container_fields(data, types)
    root = DataType.from_json(case["type"]).root
    return _payload_fields(data, 0, {"bloom": "bloom-filter", "bitmap": "bitmap", "bsi": "bsi"}[fmt], root)


def test_mutated_inputs(vectors_dir: Path, paimon_fileindex_case: dict, cpu_deadline: None):
    case_dir = vectors_dir / "paimon" / Path(paimon_fileindex_case["json"]).parent
    case = json.loads((vectors_dir / "paimon" / paimon_fileindex_case["json"]).read_text())
    rng = random.Random(paimon_fileindex_case["case"])
    original = (case_dir / case["bin"]).read_bytes()
    _, decoders = _decoders(case)
    assert all(_decode(d, original) for d in decoders), "the reference itself must decode"
    fields = _selected_fields(_fields(case, original), rng)
    rejected = 0
    for mutated in _flips_and_truncations(case["bin"], original, fields, rng):
        rejected += sum(not _decode(decode, mutated) for decode in decoders)
    assert rejected > 0, case["bin"]

    _assert_bounded_allocation(case["bin"], original, fields, decoders[-1])


def test_huge_counts_are_rejected_before_allocating():
    """Counts and lengths claiming gigabytes fail at the field, from a few dozen bytes."""
    int_type, string_type = DataType("INTEGER"), DataType("VARCHAR")
    cases: list[tuple[Callable[[bytes], object], bytes, int]] = [
        (lambda d: BitmapIndex.read(d, int_type), struct.pack(">biib", 1, 10, 2**31 - 1, 0), 5),  # entries
        (lambda d: BitmapIndex.read(d, int_type), struct.pack(">biibi", 2, 10, 1, 0, 2**30), 10),  # blocks
        (lambda d: BitmapIndex.read(d, string_type), struct.pack(">biibi", 1, 10, 1, 0, 2**31 - 1) + bytes(8), 14),  # key bytes
        (lambda d: BitSliceIndex.read(d, int_type),
         struct.pack(">bibbqq", 1, 10, 1, 1, 0, 5) + bytes.fromhex("3a30000000000000") + struct.pack(">i", 2**31 - 1), 31),
        (lambda d: BloomFilterIndex.read(d, int_type), struct.pack(">i", 2**31 - 1) + bytes(8), 0),
        (FileIndexContainer, struct.pack(">qiii", 1493475289347502, 1, 2**31 - 1, 0), 12),
        (FileIndexContainer, struct.pack(">qiiiii", 1493475289347502, 1, 28, 2**31 - 1, 0, 0), 16),
    ]  # fmt: skip
    tracemalloc.start()
    try:
        for decode, data, offset in cases:
            tracemalloc.reset_peak()
            with pytest.raises(IndexFormatError) as error:
                decode(data)
            assert tracemalloc.get_traced_memory()[1] < 1 << 20
            assert error.value.offset == offset, str(error.value)
    finally:
        tracemalloc.stop()
