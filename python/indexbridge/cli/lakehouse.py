"""`indexbridge iceberg …` and `indexbridge delta …`: deletion vectors across lakehouse formats.

```
indexbridge iceberg dv-from-paimon TABLE_DIR OUT_DIR [--snapshot ID]
    OUT_DIR/<deletion file>.puffin + OUT_DIR/delete-files.jsonl, one object per data file with deletes:
    {"data_file", "file_path", "file_size_in_bytes", "content_offset", "content_size_in_bytes",
     "referenced_data_file", "record_count"}
indexbridge delta dv-from-paimon TABLE_DIR OUT_DIR [--snapshot ID] [--storage u|p]
    OUT_DIR/deletion_vector_<uuid>.bin (u) + OUT_DIR/descriptors.jsonl, one object per data file:
    {"data_file", "deletionVector": {"storageType", "pathOrInlineDv", "offset", "sizeInBytes", "cardinality"}}
indexbridge delta dvs DELTA_TABLE_DIR [--version N] [--json]
    per data file of that version with a DV: its descriptor and positions {"cardinality", "ranges"}
```

Also the `inspect` summaries of Puffin files and Delta DV files. Errors: one line on stderr,
`indexbridge: error: FILE: offset N: what was expected`, exit status 2.
"""

from __future__ import annotations

import json
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from indexbridge.errors import IndexFormatError
from indexbridge.paimon.dv import DeletionVector


def row_set(dv: DeletionVector) -> dict:
    """The positions as a row set ``{"cardinality", "ranges": [[start, end), ...]}``, every range."""
    positions = dv.positions().astype(np.int64)
    if not len(positions):
        return {"cardinality": 0, "ranges": []}
    breaks = np.flatnonzero(np.diff(positions) != 1) + 1
    starts = np.concatenate(([positions[0]], positions[breaks]))
    ends = np.concatenate((positions[breaks - 1], [positions[-1]])) + 1
    return {"cardinality": int(len(positions)), "ranges": np.stack([starts, ends], axis=1).tolist()}


def _text_ranges(positions: dict, limit: int = 8) -> str:
    ranges = positions["ranges"]
    shown = " ".join(f"[{a},{b})" for a, b in ranges[:limit])
    return shown + (f" … ({len(ranges) - limit} more ranges)" if len(ranges) > limit else "")


def describe_puffin(path: str, data: bytes) -> dict:
    """The `inspect` summary of a Puffin file: footer, and per DV blob its positions."""
    from indexbridge.iceberg.puffin import DV_BLOB_TYPE, read_deletion_vector, read_file_metadata

    meta = read_file_metadata(data, path)
    blobs = []
    for blob in meta.blobs:
        entry = {"type": blob.type, "offset": blob.offset, "length": blob.length, "fields": list(blob.fields),
                 "snapshot_id": blob.snapshot_id, "sequence_number": blob.sequence_number,
                 "compression_codec": blob.compression_codec, "properties": dict(blob.properties)}  # fmt: skip
        if blob.type == DV_BLOB_TYPE:
            recorded = blob.properties.get("cardinality")
            dv = read_deletion_vector(data, blob.offset, blob.length, source=path,
                                      cardinality=int(recorded) if recorded and recorded.isdigit() else None)  # fmt: skip
            entry.update(referenced_data_file=blob.properties.get("referenced-data-file"), cardinality=dv.cardinality, positions=row_set(dv))
        blobs.append(entry)
    return {"file": path, "format": "puffin", "file_size": len(data), "footer_offset": meta.footer_offset,
            "footer_compressed": meta.footer_compressed, "properties": dict(meta.properties), "blobs": blobs}  # fmt: skip


def describe_delta_dv_file(path: str, data: bytes) -> dict:
    """The `inspect` summary of a Delta DV file (the layout of a Paimon 64-bit deletion file)."""
    from indexbridge.delta.dv import scan_dv_file

    frames = scan_dv_file(data, source=path)
    vectors = []
    for offset, dv in frames:
        size = int.from_bytes(data[offset:offset + 4], "big")  # checked by the scan
        vectors.append({"offset": offset, "length": size + 8, "size_in_bytes": size, "cardinality": dv.cardinality, "positions": row_set(dv)})
    return {"file": path, "format": "delta-dv", "file_size": len(data), "version": 1, "vectors": vectors}


def _fail(error: Exception) -> int:
    print(f"indexbridge: error: {error}", file=sys.stderr)
    return 2


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    from indexbridge.storage import write_atomically

    write_atomically(path, "".join(json.dumps(r) + "\n" for r in rows).encode())


def _check_out_dir(out: str) -> Path:
    path = Path(out)
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise ValueError(f"{out}: OUT_DIR must be an empty directory or not exist")
    return path


@contextmanager
def _out_dir(out: str):
    """OUT_DIR (empty or absent); on any failure it is left as it was found."""
    path = _check_out_dir(out)
    existed = path.exists()
    try:
        yield path
    except BaseException:
        if existed:
            for child in path.iterdir():
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        else:
            shutil.rmtree(path, ignore_errors=True)
        raise


def run_iceberg(args) -> int:
    from indexbridge.iceberg.bridge import paimon_to_puffin

    try:
        with _out_dir(args.out_dir) as out:
            written = paimon_to_puffin(args.table, out, snapshot=args.snapshot)
            _write_jsonl(out / "delete-files.jsonl", [{"data_file": name, **f.to_json()} for name, f in written])
    except (IndexFormatError, ValueError) as error:
        return _fail(error)
    except OSError as error:
        return _fail(f"{error.filename or args.table}: {error.strerror or error}")
    files = len({f.file_path for _, f in written})
    print(f"{len(written)} deletion vectors ({sum(f.record_count for _, f in written)} deleted rows) in {files} Puffin files, "
          f"{out / 'delete-files.jsonl'}")  # fmt: skip
    return 0


def run_delta(args) -> int:
    try:
        if args.action == "dv-from-paimon":
            from indexbridge.delta.bridge import paimon_to_delta

            if args.out_dir is None:
                raise ValueError("dv-from-paimon needs OUT_DIR")
            with _out_dir(args.out_dir) as out:
                written = paimon_to_delta(args.table, out, snapshot=args.snapshot, storage=args.storage)
                _write_jsonl(out / "descriptors.jsonl", [{"data_file": name, "deletionVector": d.to_json()} for name, d in written])
            print(f"{len(written)} deletion vectors ({sum(d.cardinality for _, d in written)} deleted rows), {out / 'descriptors.jsonl'}")
            return 0
        return _delta_dvs(args)
    except (IndexFormatError, ValueError) as error:
        return _fail(error)
    except OSError as error:
        return _fail(f"{error.filename or args.table}: {error.strerror or error}")


def _delta_dvs(args) -> int:
    from indexbridge.delta.bridge import delta_deletion_vectors

    version, dvs = delta_deletion_vectors(args.table, args.version)
    rows = [{"data_file": d.add.path, "deletionVector": d.add.deletion_vector.to_json(), "positions": row_set(d.dv)} for d in dvs]
    if args.json:
        print(json.dumps({"table": str(args.table), "version": version, "files": rows}))
        return 0
    print(f"{args.table}: version {version}, {len(rows)} data files with deletion vectors, "
          f"{sum(r['positions']['cardinality'] for r in rows)} deleted rows")  # fmt: skip
    for r in rows:
        d = r["deletionVector"]
        where = "inline" if d["storageType"] == "i" else f"{d['storageType']} {d['pathOrInlineDv']} @{d.get('offset')}"
        print(f"  {r['data_file']}: {d['cardinality']} deleted ({where}, {d['sizeInBytes']} bytes) {_text_ranges(r['positions'])}")
    return 0
