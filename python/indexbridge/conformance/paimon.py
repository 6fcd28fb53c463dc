"""Python-engine checks for the Paimon table-index vectors: ``dv32``, ``dv64``, ``hash``, ``hashes``.

``check_case(vectors_dir, entry, out_dir)`` takes one ``cases`` item of ``manifest.json``. It
decodes the reference binary and compares everything the case JSON says a reader must
report, then encodes the JSON input and compares bytes. It returns human-readable failures;
an empty list means the case passed. With ``out_dir``, each encoded file is written to
``out_dir / <the case's relative path>``.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Callable
from dataclasses import asdict
from decimal import Decimal
from pathlib import Path

import numpy as np

from indexbridge.paimon.binary_row import Timestamp, binary_row
from indexbridge.paimon.bucket import (
    decode_hash_index,
    encode_hash_index,
    key_hash,
    murmur_hash_bytes,
)
from indexbridge.paimon.dv import (
    DeletionVector,
    DeletionVectorRange,
    deletion_file_order,
    encode_deletion_files,
    read_deletion_vectors,
    scan_deletion_file,
)
from indexbridge.paimon.fileindex.fasthash import fast_hash, xxh64
from indexbridge.paimon.javaorder import java_string_hash
from indexbridge.storage import write_atomically


def rowset_positions(rowset: dict) -> np.ndarray:
    """The members of a JSON row set ``{"cardinality": n, "ranges": [[start, end), ...]}`` (uint64)."""
    parts = [np.arange(start, end, dtype=np.uint64) for start, end in rowset["ranges"]]
    positions = np.concatenate(parts) if parts else np.empty(0, np.uint64)
    if len(positions) != rowset["cardinality"]:
        raise ValueError(f"row set ranges hold {len(positions)} rows, its cardinality says {rowset['cardinality']}")
    return positions


def typed_value(type_json: dict, value: object) -> object:
    """A JSON typed value (vectors README, "Value encoding") as the Paimon internal value."""
    root = type_json["root"]
    if value is None:
        return None
    if root == "BIGINT":
        return int(value)
    if root == "FLOAT":
        return struct.unpack("<f", struct.pack("<I", int(value, 16)))[0]
    if root == "DOUBLE":
        return struct.unpack("<d", struct.pack("<Q", int(value, 16)))[0]
    if root in ("BINARY", "VARBINARY"):
        return bytes.fromhex(value)
    if root == "DECIMAL":
        return Decimal(value)
    if root.startswith("TIMESTAMP"):
        return Timestamp(value["millis"], value["nanos"])
    if root == "MAP":
        raise ValueError("MAP values are not key values")
    return value


class _Failures(list):
    """The failure messages of one case."""

    def expect(self, what: str, got: object, expected: object) -> None:
        if isinstance(got, np.ndarray) or isinstance(expected, np.ndarray):
            same = np.array_equal(got, expected)
        else:
            same = got == expected
        if not same:
            self.append(f"{what}: got {_brief(got)}, expected {_brief(expected)}")

    def expect_bytes(self, what: str, got: bytes, expected: bytes) -> None:
        if got != expected:
            first = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
            self.append(
                f"{what}: encoded {len(got)} bytes, reference {len(expected)} bytes, first difference at offset {first}"
            )


def _brief(value: object) -> str:
    text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    return text if len(text) <= 120 else text[:117] + "..."


def _write(out: Path | None, name: str, content: bytes) -> None:
    if out is not None:
        write_atomically(out / name, content)


def _check_dv(case_dir: Path, case: dict, failures: _Failures, out: Path | None) -> None:
    if case.get("kind") == "deletion_file":
        _check_deletion_file(case_dir, case, failures, out)
        return
    path = case_dir / case["bin"]
    reference = path.read_bytes()
    positions = rowset_positions(case["positions"])
    dv = DeletionVector.deserialize(reference, source=str(path))
    size = int.from_bytes(reference[:4], "big", signed=True)
    failures.expect("bitmap64", dv.bitmap64, case["bitmap64"])
    failures.expect("positions", dv.positions(), positions)
    failures.expect("cardinality", dv.cardinality, case["cardinality"])
    failures.expect("size_field", size, case["size_field"])
    failures.expect("crc32", f"{zlib.crc32(reference[4 : 4 + size]):#010x}", case["crc32"])
    failures.expect("magic_bytes_hex", reference[4:8].hex(), case["magic_bytes_hex"])
    failures.expect("index_meta_length", dv.index_meta_length(), case["index_meta_length"])
    for check in case["checks"]:
        failures.expect(f"isDeleted({check['position']})", dv.is_deleted(check["position"]), check["deleted"])
    encoded = DeletionVector.from_positions(positions, bitmap64=case["bitmap64"]).serialize()
    failures.expect_bytes(case["bin"], encoded, reference)
    _write(out, case["bin"], encoded)


def _check_deletion_file(case_dir: Path, case: dict, failures: _Failures, out: Path | None) -> None:
    dvs = {
        name: DeletionVector.from_positions(rowset_positions(entry["positions"]), bitmap64=case["bitmap64"])
        for name, entry in case["data_files"].items()
    }
    for index_file in case["index_files"]:
        path = case_dir / index_file["bin"]
        reference = path.read_bytes()
        ranges = [DeletionVectorRange(**r) for r in index_file["dv_ranges"]]
        for name, dv in read_deletion_vectors(reference, ranges, source=str(path)).items():
            failures.expect(f"{index_file['bin']}: DV of {name}", dv, dvs[name])
        scanned = scan_deletion_file(reference, source=str(path))
        offsets = [offset for offset, _ in scanned]
        failures.expect(f"{index_file['bin']}: frame offsets", offsets, [r.offset for r in ranges])
        failures.expect(f"{index_file['bin']}: file_size", len(reference), index_file["file_size"])
        failures.expect(f"{index_file['bin']}: row_count", len(ranges), index_file["row_count"])

    if case["input_map"].startswith("java.util.HashMap"):
        order = "hashmap"
        failures.expect("HashMap order", deletion_file_order(dvs), case["input_iteration_order"])
    else:
        order = "given"
        dvs = {name: dvs[name] for name in case["input_iteration_order"]}
    target_size = case["rolling_target_size_bytes"] if case["writer"] == "writeWithRolling" else None
    encoded = encode_deletion_files(dvs, target_size=target_size, order=order)
    failures.expect("number of index files", len(encoded), len(case["index_files"]))
    for (content, ranges), index_file in zip(encoded, case["index_files"]):
        name = index_file["bin"]
        failures.expect_bytes(name, content, (case_dir / name).read_bytes())
        failures.expect(f"{name}: file_size", len(content), index_file["file_size"])
        failures.expect(f"{name}: row_count", len(ranges), index_file["row_count"])
        failures.expect(f"{name}: dv_ranges", [asdict(r) for r in ranges], index_file["dv_ranges"])
        _write(out, name, content)


def _check_hash(case_dir: Path, case: dict, failures: _Failures, out: Path | None) -> None:
    path = case_dir / case["bin"]
    reference = path.read_bytes()
    hashes = decode_hash_index(reference, source=str(path))
    failures.expect("hashes", hashes.tolist(), case["hashes"])
    failures.expect("row_count", len(hashes), case["row_count"])
    failures.expect("file_size", len(reference), case["file_size"])
    key_types = case.get("key_type", [])
    sql_types = [t["sql"] for t in key_types]
    for key in case.get("keys", []):
        values = [typed_value(t, v) for t, v in zip(key_types, key["key"])]
        failures.expect(f"binary_row({key['key']})", binary_row(values, sql_types).hex(), key["binary_row_hex"])
        failures.expect(f"key_hash({key['key']})", key_hash(values, sql_types), key["hash"])
    encoded = encode_hash_index(case["hashes"], order="given")
    failures.expect_bytes(case["bin"], encoded, reference)
    _write(out, case["bin"], encoded)


_HASH_SECTIONS: dict[str, Callable[[dict], tuple[str, int, int]]] = {
    "binary_string_hash_code": lambda item: (
        f"BinaryString.hashCode({item['utf8']!r})",
        murmur_hash_bytes(bytes.fromhex(item["utf8_hex"])),
        item["hash_code"],
    ),
    "xxh64_seed0": lambda item: (
        f"xxh64({item['input_hex']})",
        xxh64(bytes.fromhex(item["input_hex"])),
        int(item["xxh64"]),
    ),
    "fasthash": lambda item: (
        f"FastHash({item['type']['sql']} {item['value']!r})",
        fast_hash(item["type"]["root"], typed_value(item["type"], item["value"]), item["type"].get("precision", 0)),
        int(item["hash64"]),
    ),
    "java_string_hash_code": lambda item: (
        f"String.hashCode({item['string']!r})",
        java_string_hash(item["string"]),
        item["hash_code"],
    ),
}


def check_hash_section(section: str, items: list[dict]) -> list[str]:
    """The failures of one section of ``hashes/hash_functions.json``."""
    compute = _HASH_SECTIONS.get(section)
    if compute is None:
        return [f"not implemented: {section}"]
    failures = _Failures()
    for item in items:
        failures.expect(*compute(item))
    return failures


def _check_hashes(case_dir: Path, case: dict, failures: _Failures, out: Path | None) -> None:
    for section, items in case.items():
        if isinstance(items, list):
            failures.extend(check_hash_section(section, items))


_FORMATS = {"dv32": _check_dv, "dv64": _check_dv, "hash": _check_hash, "hashes": _check_hashes}


def check_case(vectors_dir: Path, entry: dict, out_dir: Path | None) -> list[str]:
    """Check one manifest case; returns its failures (empty = passed)."""
    check = _FORMATS.get(entry["format"])
    if check is None:
        return [f"not implemented: format {entry['format']}"]
    return run_case(check, vectors_dir, entry, out_dir)


def run_case(
    check: Callable[[Path, dict, _Failures, Path | None], None], vectors_dir: Path, entry: dict, out_dir: Path | None
) -> list[str]:
    """Run one format's ``check(case_dir, case_json, failures, out)`` on a manifest case."""
    case_json = Path(vectors_dir) / entry["json"]
    out = Path(out_dir) / Path(entry["json"]).parent if out_dir is not None else None
    failures = _Failures()
    try:
        check(case_json.parent, json.loads(case_json.read_text()), failures, out)
    except Exception as e:  # a reference file the engine cannot handle fails the case with its cause
        failures.append(f"{type(e).__name__}: {e}")
    return list(failures)


CHECKERS: dict[str, Callable[[Path, dict, Path | None], list[str]]] = {fmt: check_case for fmt in _FORMATS}
