"""Python-engine checks for the Paimon file-index vectors: ``bloom``, ``bitmap``, ``bsi``, ``fileindex``.

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
from indexbridge.paimon.fileindex.predicate import EmptyIndex, FileIndexResult, IndexReader, predicate_from_json
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
        columns = {
            c["name"]: _values(c["type"], [row[i] for row in case["rows"]]) for i, c in enumerate(case["columns"])
        }
        encoded = build_file_index(case["table_options"], fields, columns, case["table_options_iteration_order"])
        threshold = in_manifest_threshold(case["table_options"])
        failures.expect("in_manifest_threshold_bytes", threshold, case["in_manifest_threshold_bytes"])
        failures.expect("embedded_in_manifest", embedded_in_manifest(len(encoded), threshold), case["embedded_in_manifest"])
    failures.expect_bytes(case["bin"], encoded, reference)
    _write(out, case["bin"], encoded)


_FORMATS = {"bloom": _check_bloom, "bitmap": _check_bitmap, "bsi": _check_bsi, "fileindex": _check_container}


def check_case(vectors_dir: Path, entry: dict, out_dir: Path | None) -> list[str]:
    """Check one manifest case of a file-index format; returns its failures (empty = passed)."""
    check = _FORMATS.get(entry["format"])
    if check is None:
        return [f"not implemented: format {entry['format']}"]
    return run_case(check, vectors_dir, entry, out_dir)


CHECKERS: dict[str, Callable[[Path, dict, Path | None], list[str]]] = {fmt: check_case for fmt in _FORMATS}
