"""`indexbridge inspect FILE…`: a readable (or JSON) summary of each index file.

Formats: ``dv``, ``dv-file``, ``hash`` (Paimon table indexes), ``file-index`` containers and raw
``bloom`` / ``bitmap`` / ``bsi`` payloads (:mod:`indexbridge.cli.fileindex`, with ``--type`` and
``--query``), ``zap`` segments. Without ``--format`` the magic numbers (zap: the footer) decide;
HASH files and raw file-index payloads have none.

A malformed file gets one line on stderr, `indexbridge: error: FILE: offset N: what was
expected`, and the exit status is 2 if any file failed; never a traceback, whichever engine.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from indexbridge.cli.zap_summary import zap_summary
from indexbridge.cli.fileindex import CONTAINER_MAGIC, RAW_FORMATS, QueryError, describe_container, describe_raw
from indexbridge.errors import IndexFormatError
from indexbridge.paimon.fileindex.condition import parse
from indexbridge.paimon.bucket import decode_hash_index
from indexbridge.paimon.dv import DeletionVector, scan_deletion_file

DV32_MAGIC = bytes.fromhex("5e43f2d0")
DV64_MAGIC = bytes.fromhex("d1d33964")
ZAP_FOOTER_SIZE = 44
ZAP_VERSION = (11).to_bytes(4, "big")
PUFFIN_MAGIC = b"PFA1"
DELTA_DV_FILE_NAME = re.compile(r"^deletion_vector_[0-9a-fA-F-]{36}\.bin$")


def detect(path: str, head: bytes, tail: bytes = b"") -> str:
    """The format of a file from its first bytes (zap: its footer's version); HASH index files
    have no magic (`--format hash`)."""
    if head[:4] == PUFFIN_MAGIC:
        return "puffin"
    if head[4:8] in (DV32_MAGIC, DV64_MAGIC):
        return "dv"
    if head[:1] == b"\x01" and DELTA_DV_FILE_NAME.match(Path(path).name):
        return "delta-dv"
    if head[:1] == b"\x01" and (len(head) == 1 or head[5:9] in (DV32_MAGIC, DV64_MAGIC)):
        return "dv-file"
    if head[:8] == CONTAINER_MAGIC:
        return "file-index"
    if len(tail) == ZAP_FOOTER_SIZE and tail[-8:-4] == ZAP_VERSION:
        return "zap"
    raise IndexFormatError(
        path, 0, "a Paimon deletion vector, deletion file or file index, or a zap segment "
        "(HASH indexes and raw bloom/bitmap/bsi payloads have no magic: pass --format)",
    )


def _dv_summary(dv: DeletionVector) -> dict:
    positions = dv.positions()
    return {
        "bitmap64": dv.bitmap64,
        "cardinality": dv.cardinality,
        "min_position": int(positions[0]) if len(positions) else None,
        "max_position": int(positions[-1]) if len(positions) else None,
    }


@dataclass(frozen=True)
class InspectOptions:
    """What to show beyond the summary: file indexes take ``types`` (column -> SQL type; the key
    "" holds a raw payload's type) and ``query``; zap segments ``terms``, ``prefix`` and ``doc``."""

    types: dict[str, str] = field(default_factory=dict)
    query: str | None = None
    terms: bool = False
    prefix: str | None = None
    doc: int | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self))


def describe(path: str, fmt: str | None, options: InspectOptions = InspectOptions()) -> dict:
    """The summary of one file as a JSON-able dict (the same fields the JVM engine reports)."""
    if fmt != "zap":
        data = Path(path).read_bytes()
        fmt = fmt or detect(path, data[:9], data[-ZAP_FOOTER_SIZE:])
    if fmt == "zap":
        return zap_summary(path, options.terms, options.prefix, options.doc)
    if fmt == "file-index":
        return describe_container(path, data, options.types, options.query)
    if fmt in RAW_FORMATS:
        return describe_raw(path, data, fmt, options.types.get(""), options.query)
    if fmt in ("puffin", "delta-dv"):
        from indexbridge.cli.lakehouse import describe_delta_dv_file, describe_puffin

        return describe_puffin(path, data) if fmt == "puffin" else describe_delta_dv_file(path, data)
    if fmt == "dv":
        dv = DeletionVector.deserialize(data, source=path)
        return {"file": path, "format": "dv", "file_size": len(data), "index_meta_length": dv.index_meta_length(), **_dv_summary(dv)}
    if fmt == "dv-file":
        frames = scan_deletion_file(data, source=path)
        return {
            "file": path,
            "format": "dv-file",
            "file_size": len(data),
            "version": 1,
            "vectors": [{"offset": offset, "length": dv.index_meta_length(), **_dv_summary(dv)} for offset, dv in frames],
        }
    hashes = decode_hash_index(data, source=path)
    return {
        "file": path,
        "format": "hash",
        "file_size": len(data),
        "count": int(len(hashes)),
        "distinct": int(len(np.unique(hashes))),
        "min": int(hashes.min()) if len(hashes) else None,
        "max": int(hashes.max()) if len(hashes) else None,
    }


def _describe_jvm(path: str, fmt: str | None, options: InspectOptions = InspectOptions()) -> dict:
    from indexbridge.jvm import java_error_message, java_errors, jvm

    try:
        return json.loads(jvm().io.indexbridge.cli.Inspect.describe(path, fmt or "", options.to_json()))
    except java_errors() as error:
        raise _JvmError(java_error_message(error)) from None


class _JvmError(Exception):
    pass


def _text(summary: dict) -> str:
    lines = [f"{summary['file']}: {summary['format']}"]
    for key, value in summary.items():
        if key in ("file", "format"):
            continue
        if key == "fields":
            lines.append(f"  fields: {len(value)}")
            for f in value:
                lines.append(f"    {f['id']} {f['name']}: {f['terms']} terms" + (", docvalues" if f["docvalues"] else ""))
                lines += [f"      {t['term'] if 'term' in t else '0x' + t['term_hex']}: {t['docs']} docs" for t in f.get("term_list", ())]
        elif key == "doc":
            lines.append(f"  doc {value['doc']}:")
            lines += [f"    {v['field']} ({v['type']}{', ' + str(v['array_positions']) if v['array_positions'] else ''}): "
                      + (v["value"] if "value" in v else "0x" + v["value_hex"]) for v in value["stored"]]  # fmt: skip
        elif key in ("vectors", "blobs"):
            lines.append(f"  {key}: {len(value)}")
            lines += [f"    @{v['offset']}: " + _pairs(v, "offset", "positions", "properties")
                      + ("".join(f" [{a},{b})" for a, b in v["positions"]["ranges"][:8]) + (" ..." if len(v["positions"]["ranges"]) > 8 else "")
                         if "positions" in v else "") for v in value]  # fmt: skip
        elif key == "columns":
            lines.append(f"  columns: {len(value)}")
            for c in value:
                lines.append(f"    {c['column']}: " + (f"{c['type']} ({c['type_source']})" if c["type"] else "type unknown"))
                lines += [f"      {i['index_type']} @{i['start']}+{i['length']}: " + _pairs(i, "index_type", "start", "length") for i in c["indexes"]]
        elif key == "query":
            result = value["result"].upper()
            if "rows" in value:
                result += f" {value['rows']['cardinality']} rows" + "".join(f" [{a},{b})" for a, b in value["rows"]["ranges"])
                result += " ..." if value["rows"]["more_ranges"] else ""
            lines.append(f"  query: {value['condition']}\n    {result}")
        else:
            lines.append(f"  {key}: {value}")
    return "\n".join(lines)


def _pairs(d: dict, *skip: str) -> str:
    return ", ".join(f"{k}={x}" for k, x in d.items() if k not in skip)


def run(files: list[str], fmt: str | None, as_json: bool, engine: str, options: InspectOptions = InspectOptions()) -> int:
    if options.query is not None:
        try:
            parse(options.query, "--query")  # one error for all files, whichever engine
        except IndexFormatError as error:
            print(f"indexbridge: error: {error}", file=sys.stderr)
            return 2
    status = 0
    for path in files:
        try:
            summary = _describe_jvm(path, fmt, options) if engine == "jvm" else describe(path, fmt, options)
        except (IndexFormatError, QueryError, _JvmError) as error:
            print(f"indexbridge: error: {error}", file=sys.stderr)
            status = 2
            continue
        except ValueError as error:  # a type the index does not take, an unknown --type
            print(f"indexbridge: error: {path}: {error}", file=sys.stderr)
            status = 2
            continue
        except OSError as error:
            print(f"indexbridge: error: {path}: {error.strerror or error}", file=sys.stderr)
            status = 2
            continue
        print(json.dumps(summary) if as_json else _text(summary))
    return status
