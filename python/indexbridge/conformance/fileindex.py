"""Python-engine checks for the Paimon file-index vectors: ``bloom``, ``bitmap``, ``bsi``,
``range-bitmap``, ``fileindex``.

Each check decodes the reference binary, answers every recorded query with the decoded reader
and compares kind, ``remain`` and rows; then it builds the index (or the whole container, in
Paimon's HashMap orders) from the JSON input and compares bytes. The ``*_iteration_order``
fields are not used: the writers compute their orders.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

from indexbridge.conformance.paimon import _Failures, _write, rowset_positions, run_case, typed_value
from indexbridge.paimon.fileindex.bitmap import BitmapIndex
from indexbridge.paimon.fileindex.bloom import BloomFilterIndex, bloom_filter_size, fast_hash_array
from indexbridge.paimon.fileindex.bsi import BitSliceIndex
from indexbridge.paimon.fileindex.container import (
    INDEX_TYPES,
    FileIndexContainer,
    build_file_index,
    embedded_in_manifest,
    in_manifest_threshold,
    write_file_index,
)
from indexbridge.paimon.fileindex.predicate import (
    REMAIN,
    SKIP,
    BitmapResult,
    EmptyIndex,
    FileIndexResult,
    IndexReader,
    SortOrder,
    TopN,
    predicate_from_json,
)
from indexbridge.paimon.fileindex.rangebitmap import RangeBitmapIndex, chunk_size_bytes, default_chunk_size, key_kind
from indexbridge.roaring import bitmap_of
from indexbridge.paimon.fileindex.values import DataType, long_key


def _values(type_json: dict, values: list) -> list:
    """A JSON column as internal values; MAP rows as lists of (key, value) pairs or None."""
    if type_json["root"] == "MAP":
        k, v = type_json["key"], type_json["value"]
        return [None if m is None else [(typed_value(k, a), typed_value(v, b)) for a, b in m] for m in values]
    return [typed_value(type_json, v) for v in values]


def _expect_result(failures: _Failures, what: str, got: FileIndexResult, query: dict) -> None:
    failures.expect(f"{what}: result_kind", got.kind, query["result_kind"])
    failures.expect(f"{what}: remain", got.remain, query["remain"])
    if "rows" in query and got.kind == "bitmap":
        failures.expect(f"{what}: rows", np.array(got.rows.to_array(), np.uint64), rowset_positions(query["rows"]))


def _check_queries(failures: _Failures, reader: IndexReader, type_json: dict, queries: list[dict], prefix: str = "") -> None:
    for q in queries:
        literals = [typed_value(type_json, v) for v in q.get("literals", [])]
        got = reader.query(q["op"], literals)
        _expect_result(failures, f"{prefix}{q['op']}({q.get('literals', '')})", got, q)


def _check_bloom(case_dir: Path, case: dict, failures: _Failures, out: Path | None) -> None:
    t = DataType.from_json(case["type"])
    reference = (case_dir / case["bin"]).read_bytes()
    index = BloomFilterIndex.read(reference, t, str(case_dir / case["bin"]))
    failures.expect("num_hash_functions", index.num_hashes, case["num_hash_functions"])
    failures.expect("num_bits", index.num_bits, case["num_bits"])
    options = case["options"]
    items, fpp = int(options.get("items", 1_000_000)), float(options.get("fpp", 0.1))
    expected_size = (case["num_bits"], case["num_hash_functions"])
    failures.expect("sizing (numBits, numHashes)", bloom_filter_size(items, fpp), expected_size)
    for item in case["distinct_value_hashes"]:
        got = int(fast_hash_array(t, [typed_value(case["type"], item["value"])])[0])
        failures.expect(f"FastHash({item['value']!r})", got, int(item["hash64"]))
    _check_queries(failures, index, case["type"], case["queries"])
    equals = [q for q in case["queries"] if q["op"] == "equal"]  # all at once: the batch query
    batch = index.might_contain_many([typed_value(case["type"], q["literals"][0]) for q in equals])
    failures.expect("might_contain_many(equal literals)", batch.tolist(), [q["remain"] for q in equals])
    encoded = BloomFilterIndex.from_options(t, _values(case["type"], case["values"]), options).serialize()
    failures.expect_bytes(case["bin"], encoded, reference)
    _write(out, case["bin"], encoded)


def _check_bitmap(case_dir: Path, case: dict, failures: _Failures, out: Path | None) -> None:
    t = DataType.from_json(case["type"])
    reference = (case_dir / case["bin"]).read_bytes()
    index = BitmapIndex.read(reference, t, str(case_dir / case["bin"]))
    values = _values(case["type"], case["values"])
    failures.expect("version", index.version, case["version"])
    failures.expect("row_count", index.row_count, case["row_count"])
    decoded = index.decode_all()
    expected: dict = {}
    for row, v in enumerate(values):
        expected.setdefault(None if v is None else index.key_of(v), []).append(row)
    expected.setdefault(None, [])
    failures.expect("distinct keys", sorted(map(repr, decoded)), sorted(map(repr, expected)))
    for key, rows in expected.items():
        failures.expect(f"rows of {key!r}", list(decoded.get(key, [])), rows)
    _check_queries(failures, index, case["type"], case["queries"])
    encoded = BitmapIndex.from_options(t, values, case["options"]).serialize()
    failures.expect_bytes(case["bin"], encoded, reference)
    _write(out, case["bin"], encoded)


def _check_bsi(case_dir: Path, case: dict, failures: _Failures, out: Path | None) -> None:
    t = DataType.from_json(case["type"])
    reference = (case_dir / case["bin"]).read_bytes()
    index = BitSliceIndex.read(reference, t, str(case_dir / case["bin"]))
    values = _values(case["type"], case["values"])
    failures.expect("row_count", index.row_count, case["row_count"])
    mapped = [None if v is None else str(long_key(t, v)) for v in values]
    failures.expect("mapped_longs", mapped, case["mapped_longs"])
    _check_queries(failures, index, case["type"], case["queries"])
    encoded = BitSliceIndex.build(t, values).serialize()
    failures.expect_bytes(case["bin"], encoded, reference)
    _write(out, case["bin"], encoded)


def _json_key(kind: str, key: object) -> object:
    """A range-bitmap key as the vectors write it (README "Value and key encoding")."""
    if key is None:
        return None
    if kind == "int64":
        return str(key)
    if kind in ("float32", "float64"):
        return f"0x{key:0{8 if kind == 'float32' else 16}x}"
    if kind == "bool":
        return bool(key)
    if kind == "string":
        return key.decode("utf-8", "surrogatepass")
    return key


def _key_from_json(kind: str, value: object) -> object:
    if kind == "int64":
        return int(value)
    if kind in ("float32", "float64"):
        return int(value, 16)
    if kind == "bool":
        return 1 if value else 0
    if kind == "string":
        return value.encode("utf-8", "surrogatepass")
    return value


def result_from_json(result: dict) -> FileIndexResult:
    """A ``FileIndexResult`` as the vectors write a top-N's input."""
    kind = result["result_kind"]
    if kind == "bitmap":
        return BitmapResult(bitmap_of(rowset_positions(result["rows"])))
    return REMAIN if kind == "remain" else SKIP


def top_n_from_json(spec: dict) -> TopN:
    orders = tuple(SortOrder(o["column"], o["direction"], o["null_ordering"]) for o in spec["orders"])
    return TopN(orders, spec["limit"])


def _range_bitmap_layout(index: RangeBitmapIndex) -> tuple[dict, dict, dict]:
    """The header, dictionary and BSI facts the vectors record, read from a parsed payload."""
    kind, d, b = index.kind, index.dictionary, index.bsi
    header = {"header_length": index.header_length, "version": index.version, "row_count": index.row_count,
              "cardinality": index.cardinality, "min": _json_key(kind, index.min), "max": _json_key(kind, index.max),
              "dictionary_length": index.dictionary_length, "dictionary_offset": index.dictionary_offset,
              "bsi_offset": index.bsi_offset}  # fmt: skip
    chunks = []
    for i, c in enumerate(d.chunks()):
        keys = d.chunk_keys(i)
        chunk = {"chunk_offset": c.chunk_offset, "version": c.version, "head_key": _json_key(kind, c.head),
                 "head_code": c.head_code, "keys_offset": c.keys_offset, "size": c.size}  # fmt: skip
        if kind == "string":
            chunk.update(offsets_length=c.offsets_length, keys_length=c.keys_length)
        else:
            chunk.update(keys_length=c.keys_length, fixed_length=c.fixed_length)
        chunk.update(last_code=c.head_code + c.size, last_key=_json_key(kind, keys[-1] if keys else c.head))
        chunks.append(chunk)
    dictionary = {"header_length": d.header_length, "version": d.version, "chunk_count": d.chunk_count,
                  "offsets_length": d.offsets_length, "chunks_length": d.chunks_length, "keys_length": d.keys_length,
                  "chunk_layout": "variable" if kind == "string" else "fixed", "chunks": chunks}  # fmt: skip
    slices = [{"offset": b.slice_index[2 * i], "length": b.slice_index[2 * i + 1], "cardinality": len(b.slice(i))}
              for i in range(b.count)]  # fmt: skip
    bsi = {"header_length": b.header_length, "version": b.version, "slice_count": b.count, "ebm_length": b.ebm_length,
           "indexes_length": b.indexes_length, "ebm_cardinality": len(b.ebm), "slices": slices,
           "length": b.end - index.bsi_offset}  # fmt: skip
    return header, dictionary, bsi


def _check_range_bitmap(case_dir: Path, case: dict, failures: _Failures, out: Path | None) -> None:
    t = DataType.from_json(case["type"])
    reference = (case_dir / case["bin"]).read_bytes()
    kind = key_kind(t)
    failures.expect("key_kind", kind, case["key_kind"])
    options = case["options"]
    failures.expect("chunk_size_bytes", chunk_size_bytes(options.get("chunk-size", default_chunk_size(t))), case["chunk_size_bytes"])
    index = RangeBitmapIndex.read(reference, t, str(case_dir / case["bin"]))
    values = _values(case["type"], case["values"])
    failures.expect("row_count", index.row_count, case["row_count"])
    if "mapped_keys" in case:
        mapped = [None if v is None else _json_key(kind, index.key_of(v)) for v in values]
        failures.expect("mapped_keys", mapped, case["mapped_keys"])
    header, dictionary, bsi = _range_bitmap_layout(index)
    failures.expect("header", header, case["header"])
    failures.expect("dictionary", dictionary, case["dictionary"])
    failures.expect("bsi", bsi, case["bsi"])
    if "row_codes" in case:
        failures.expect("row_codes", [index.bsi.code_of(r) for r in range(index.row_count)], case["row_codes"])
    for item in case.get("dictionary_lookups", []):
        got = index.dictionary.find(_key_from_json(kind, item["key"]))
        failures.expect(f"find({item['key']!r})", got, item["code"])
    for item in case.get("keys_by_code", []):
        failures.expect(f"find(code {item['code']})", _json_key(kind, index.dictionary.key_of(item["code"])), item["key"])
    plain = [q for q in case["queries"] if q["op"] != "top_n"]
    _check_queries(failures, index, case["type"], plain)
    for q in case["queries"]:
        if q["op"] == "top_n":
            got = index.visit_top_n(top_n_from_json(q["top_n"]), result_from_json(q["input"]))
            _expect_result(failures, f"top_n({q['top_n']}, {q['input'].get('result_kind')})", got, q)
    encoded = RangeBitmapIndex.from_options(t, values, options).serialize()
    failures.expect_bytes(case["bin"], encoded, reference)
    _write(out, case["bin"], encoded)


def _check_container(case_dir: Path, case: dict, failures: _Failures, out: Path | None) -> None:
    path = case_dir / case["bin"]
    reference = path.read_bytes()
    container = FileIndexContainer(reference, str(path))
    summary = case["header_summary"]
    failures.expect("magic", str(int.from_bytes(reference[:8], "big")), summary["magic"])
    failures.expect("head_length", container.head_length, summary["head_length"])
    failures.expect("column_count", len(container.columns()), summary["column_count"])
    failures.expect("redundant_length", container.redundant_length, summary["redundant_length"])
    entries = [
        {"column": c, "indexes": [{"index_type": e.index_type, "start": e.start, "length": e.length}
                                  for e in container.entries if e.column == c]}
        for c in container.columns()
    ]  # fmt: skip
    failures.expect("header_entries_in_file_order", entries, case["header_entries_in_file_order"])

    if case["kind"] == "file_index_container_raw":
        given: dict[str, list[tuple[str, bytes | None]]] = {}
        for item in case["input_order"]:
            payload = container.payload(item["column"], item["index_type"])
            payload = None if payload is None else bytes(payload)
            digest = None if payload is None else hashlib.sha256(payload).hexdigest()
            failures.expect(f"payload sha256 of {item['column']}/{item['index_type']}", digest, item["payload_sha256"])
            given.setdefault(item["column"], []).append((item["index_type"], payload))
        encoded = write_file_index(list(given.items()))
    else:
        type_json = {c["name"]: c["type"] for c in case["columns"]}
        for c, t in list(type_json.items()):
            if t["root"] == "MAP":
                type_json.update({e.column: t["value"] for e in container.entries if e.column.startswith(c + "[")})
        fields = {c["name"]: DataType.from_json(c["type"]) for c in case["columns"]}
        predicate = container.predicate(fields)
        for q in case["queries"]:
            column, index_type = q["column"], q["index_type"]
            kind = EmptyIndex if index_type == "empty" else INDEX_TYPES[index_type]
            readers = [r for r in predicate.readers.get(column, []) if isinstance(r, kind)]
            if len(readers) != 1:
                failures.append(f"{column}/{index_type}: {len(readers)} readers in the container, expected 1")
                continue
            _check_queries(failures, readers[0], type_json[column], [q], f"{column}/{index_type} ")
        for p in case["predicates"]:
            tree = predicate_from_json(p["predicate"], lambda c, v: typed_value(type_json[c], v))
            _expect_result(failures, f"predicate {p['predicate']}", predicate.evaluate(tree), p)
        for q in case.get("top_n", []):
            got = predicate.evaluate_top_n(top_n_from_json(q["top_n"]), result_from_json(q["input"]))
            _expect_result(failures, f"top_n {q['top_n']}", got, q)
        for item in case.get("range_bitmap_payloads", []):
            payload = container.payload(item["column"], "range-bitmap")
            failures.expect(f"{item['column']}/range-bitmap sha256", hashlib.sha256(payload).hexdigest(), item["payload_sha256"])
            index = RangeBitmapIndex.read(payload, DataType.from_json(type_json[item["column"]]), f"{path}[{item['column']}]")
            header, dictionary, bsi = _range_bitmap_layout(index)
            dictionary = {k: v for k, v in dictionary.items() if k != "chunks"} | {"chunk_count_listed": dictionary["chunk_count"]}
            bsi = {k: v for k, v in bsi.items() if k != "slices"} | {"slice_count_listed": bsi["slice_count"]}
            failures.expect(f"{item['column']}/range-bitmap header", header, item["header"])
            failures.expect(f"{item['column']}/range-bitmap dictionary", dictionary, item["dictionary_summary"])
            failures.expect(f"{item['column']}/range-bitmap bsi", bsi, item["bsi_summary"])
        columns = {
            c["name"]: _values(c["type"], [row[i] for row in case["rows"]]) for i, c in enumerate(case["columns"])
        }
        encoded = build_file_index(case["table_options"], fields, columns, case["table_options_iteration_order"])
        threshold = in_manifest_threshold(case["table_options"])
        failures.expect("in_manifest_threshold_bytes", threshold, case["in_manifest_threshold_bytes"])
        failures.expect("embedded_in_manifest", embedded_in_manifest(len(encoded), threshold), case["embedded_in_manifest"])
    failures.expect_bytes(case["bin"], encoded, reference)
    _write(out, case["bin"], encoded)


_FORMATS = {"bloom": _check_bloom, "bitmap": _check_bitmap, "bsi": _check_bsi, "range-bitmap": _check_range_bitmap,
            "fileindex": _check_container}  # fmt: skip


def check_case(vectors_dir: Path, entry: dict, out_dir: Path | None) -> list[str]:
    """Check one manifest case of a file-index format; returns its failures (empty = passed)."""
    check = _FORMATS.get(entry["format"])
    if check is None:
        return [f"not implemented: format {entry['format']}"]
    return run_case(check, vectors_dir, entry, out_dir)


CHECKERS: dict[str, Callable[[Path, dict, Path | None], list[str]]] = {fmt: check_case for fmt in _FORMATS}
