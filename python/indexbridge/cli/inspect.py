"""`indexbridge inspect FILE…`: a readable (or JSON) summary of each index file.

A malformed file gets one line on stderr, `indexbridge: error: FILE: offset N: what was
expected`, and the exit status is 2 if any file failed; never a traceback, whichever engine.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from indexbridge.errors import IndexFormatError
from indexbridge.paimon.bucket import decode_hash_index
from indexbridge.paimon.dv import DeletionVector, scan_deletion_file

DV32_MAGIC = bytes.fromhex("5e43f2d0")
DV64_MAGIC = bytes.fromhex("d1d33964")
ZAP_FOOTER_SIZE = 44
ZAP_VERSION = (11).to_bytes(4, "big")


def detect(path: str, head: bytes, tail: bytes = b"") -> str:
    """The format of a file from its first bytes (zap: its footer's version); HASH index files
    have no magic (`--format hash`)."""
    if head[4:8] in (DV32_MAGIC, DV64_MAGIC):
        return "dv"
    if head[:1] == b"\x01" and (len(head) == 1 or head[5:9] in (DV32_MAGIC, DV64_MAGIC)):
        return "dv-file"
    if len(tail) == ZAP_FOOTER_SIZE and tail[-8:-4] == ZAP_VERSION:
        return "zap"
    raise IndexFormatError(
        path, 0, "a Paimon deletion vector or deletion file (a HASH index has no magic: pass --format hash)"
    )


def _dv_summary(dv: DeletionVector) -> dict:
    positions = dv.positions()
    return {
        "bitmap64": dv.bitmap64,
        "cardinality": dv.cardinality,
        "min_position": int(positions[0]) if len(positions) else None,
        "max_position": int(positions[-1]) if len(positions) else None,
    }


def _zap_summary(path: str) -> dict:
    from indexbridge.zap.segment import Segment

    with Segment.open(path) as segment:
        f = segment.footer
        return {
            "file": path,
            "format": "zap",
            "file_size": len(segment.data),
            "version": f.version,
            "num_docs": f.num_docs,
            "chunk_factor": f.chunk_factor,
            "crc": f.crc,
            "fields": [
                {"id": i.id, "name": i.name, "terms": len(segment.dictionary(i.id)), "docvalues": i.docvalues is not None}
                for i in segment.fields
            ],
        }


def describe(path: str, fmt: str | None) -> dict:
    """The summary of one file as a JSON-able dict (the same fields the JVM engine reports)."""
    if fmt == "zap":
        return _zap_summary(path)
    data = Path(path).read_bytes()
    fmt = fmt or detect(path, data[:9], data[-ZAP_FOOTER_SIZE:])
    if fmt == "zap":
        return _zap_summary(path)
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


def _describe_jvm(path: str, fmt: str | None) -> dict:
    from py4j.protocol import Py4JJavaError

    from indexbridge.jvm import java_error_message, jvm

    try:
        return json.loads(jvm().io.indexbridge.cli.Inspect.describe(path, fmt or ""))
    except Py4JJavaError as error:
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
            lines += [f"    {f['id']} {f['name']}: {f['terms']} terms" + (", docvalues" if f["docvalues"] else "") for f in value]
        elif key == "vectors":
            lines.append(f"  vectors: {len(value)}")
            lines += [f"    @{v['offset']}: " + ", ".join(f"{k}={x}" for k, x in v.items() if k != "offset") for v in value]
        else:
            lines.append(f"  {key}: {value}")
    return "\n".join(lines)


def run(files: list[str], fmt: str | None, as_json: bool, engine: str) -> int:
    status = 0
    for path in files:
        try:
            summary = _describe_jvm(path, fmt) if engine == "jvm" else describe(path, fmt)
        except (IndexFormatError, _JvmError) as error:
            print(f"indexbridge: error: {error}", file=sys.stderr)
            status = 2
            continue
        except OSError as error:
            print(f"indexbridge: error: {path}: {error.strerror or error}", file=sys.stderr)
            status = 2
            continue
        print(json.dumps(summary) if as_json else _text(summary))
    return status
