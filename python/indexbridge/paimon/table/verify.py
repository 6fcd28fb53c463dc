"""Checking everything a snapshot references, end to end (``indexbridge paimon verify``).

Decoded and checked against the manifests:

* every manifest list, manifest and the index manifest (the scan decodes them);
* every data file: present, with the row count its manifest entry records;
* every deletion file: version byte, its size, and each range: frame, CRC, magic, the length and
  cardinality the index manifest records, positions below the data file's row count;
* every HASH index: a whole number of ints, as many as the index manifest's row count, no
  key hash twice (it is a set), and (with ``rebuild``) the key hash of every row of its bucket's
  data files in it (keys are assigned to the bucket whose index holds their hash);
* every file index (embedded or ``.index``): the container and each index payload.

With ``rebuild``, also re-encoded and compared byte for byte with what Paimon wrote: each file
index rebuilt from its data file (every row, deletion vectors not applied, as Paimon's writer
saw them) with the ``file-index.*`` options of the schema the file was written with; each
deletion file from its decoded vectors (in the recorded order); each HASH index from its
decoded hashes, in the file's order (Paimon writes its ``IntHashSet``'s iteration order, which
depends on the bucket's whole history of commits, not on the hashes alone).

The first problem raises :class:`IndexFormatError` naming the file, the offset and what was
expected.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

import pyarrow.orc as orc
import pyarrow.parquet as pq

from indexbridge.errors import IndexFormatError
from indexbridge.paimon.binary_row import Timestamp
from indexbridge.paimon.bucket import decode_hash_index, encode_hash_index, key_hash, key_hash_array
from indexbridge.paimon.dv import DeletionVector, encode_deletion_files
from indexbridge.paimon.fileindex.container import build_file_index, file_index_options, indexed_type
from indexbridge.paimon.table.read import TableRead
from indexbridge.paimon.table.scan import DELETION_VECTORS, HASH, DataFileEntry, IndexFileEntry
from indexbridge.paimon.table.schema import binary_row_type
from indexbridge.paimon.table.table import FileStoreTable


@dataclass
class VerifyReport:
    snapshot: int | None
    manifests: int = 0
    data_files: int = 0
    rows: int = 0
    deletion_files: int = 0
    deletion_vectors: int = 0
    deleted_rows: int = 0
    hash_indexes: int = 0
    hashes: int = 0
    file_indexes: Counter = field(default_factory=Counter)  # embedded / index-file
    rebuilt: Counter = field(default_factory=Counter)  # what was re-encoded to the same bytes

    def summary(self) -> str:
        lines = [
            f"snapshot {self.snapshot}: {self.manifests} manifests, {self.data_files} data files, {self.rows} rows",
            f"deletion vectors: {self.deletion_vectors} in {self.deletion_files} deletion files, {self.deleted_rows} deleted rows",
            f"hash indexes: {self.hash_indexes} files, {self.hashes} key hashes",
            f"file indexes: {self.file_indexes['embedded']} embedded, {self.file_indexes['index-file']} in .index files",
        ]
        if self.rebuilt:
            lines.append("rebuilt, same bytes: " + ", ".join(f"{n} {what}" for what, n in sorted(self.rebuilt.items())))
        return "\n".join(lines)


def _row_count(entry: DataFileEntry) -> int:
    try:
        if entry.path.suffix.lower() == ".orc":
            return orc.ORCFile(entry.path).nrows
        return pq.ParquetFile(entry.path).metadata.num_rows
    except FileNotFoundError:
        raise IndexFormatError(str(entry.path), 0, f"the data file to exist ({entry.manifest} references it)") from None
    except Exception as e:  # pyarrow reports damage as ArrowInvalid, OSError, …
        raise IndexFormatError(str(entry.path), 0, f"a readable data file: {e}") from None


def _read(index: IndexFileEntry) -> bytes:
    try:
        data = index.path.read_bytes()
    except FileNotFoundError:
        raise IndexFormatError(str(index.path), 0, "the index file to exist (the index manifest references it)") from None
    if len(data) != index.file_size:
        raise IndexFormatError(str(index.path), len(data), f"{index.file_size} bytes as the index manifest records, found {len(data)}")
    return data


def _same(what: str, path: str, ours: bytes, theirs: bytes) -> None:
    if ours != theirs:
        at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
        raise IndexFormatError(path, at, f"the bytes of the {what} rebuilt by indexbridge ({len(ours)} bytes), which differ from this offset on")


def verify(table: FileStoreTable, rebuild: bool = False, progress: Callable[[Iterable, str], Iterable] = lambda items, what: items) -> VerifyReport:
    """Checks what the snapshot references (module docstring); ``progress`` wraps the data files
    and the index files as they are checked (the CLI's terminal progress)."""
    scan = table.scan
    report = VerifyReport(None if table.snapshot is None else table.snapshot.id)
    entries = [scan.entry(e, source) for e, source in scan.live_entries]
    report.manifests = len({e.manifest for e in entries})
    by_bucket = {(e.partition_row, e.bucket, e.file.file_name): e for e in entries}
    for e in progress(entries, "data files"):
        rows = _row_count(e)
        if rows != e.file.row_count:
            raise IndexFormatError(str(e.path), 0, f"{e.file.row_count} rows as {e.manifest} records, found {rows}")
        report.data_files += 1
        report.rows += rows
        _verify_file_index(table, e, report, rebuild)
    for index in progress(scan.index_entries, "index files"):
        if index.index_type == DELETION_VECTORS:
            _verify_deletion_file(index, by_bucket, report, rebuild)
        elif index.index_type == HASH:
            hashes = _verify_hash_index(index, report, rebuild)
            if rebuild:
                files = [e for e in entries if (e.partition_row, e.bucket) == (index.partition_row, index.bucket)]
                _verify_bucket_keys(table, index, files, hashes)
    return report


def _verify_deletion_file(index: IndexFileEntry, data_files: dict, report: VerifyReport, rebuild: bool) -> None:
    data = _read(index)
    if data[:1] != b"\x01":
        raise IndexFormatError(str(index.path), 0, f"deletion file version 1, found {data[:1].hex() or 'an empty file'}")
    ranges = index.meta.dv_ranges or ()
    if len(ranges) != index.row_count:
        raise IndexFormatError(str(index.path), 0, f"{index.row_count} deletion vectors as the index manifest records, it lists {len(ranges)} ranges")
    vectors = []
    for r in ranges:
        if not 1 <= r.offset < len(data):
            raise IndexFormatError(str(index.path), r.offset, f"the deletion vector of {r.data_file} within the file's {len(data)} bytes")
        dv = DeletionVector.deserialize(data, source=str(index.path), offset=r.offset, expected_length=r.length)
        if r.cardinality is not None and dv.cardinality != r.cardinality:
            raise IndexFormatError(str(index.path), r.offset, f"{r.cardinality} deleted positions as the index manifest records, found {dv.cardinality}")
        entry = data_files.get((index.partition_row, index.bucket, r.data_file))
        if entry is not None and dv.cardinality and int(dv.positions()[-1]) >= entry.file.row_count:
            raise IndexFormatError(
                str(index.path), r.offset,
                f"positions below the {entry.file.row_count} rows of {r.data_file}, found {int(dv.positions()[-1])}",
            )  # fmt: skip
        vectors.append((r.data_file, dv))
        report.deletion_vectors += 1
        report.deleted_rows += dv.cardinality
    report.deletion_files += 1
    if rebuild:
        ((ours, _),) = encode_deletion_files(vectors, order="given")
        _same("deletion file", str(index.path), ours, data)
        report.rebuilt["deletion files"] += 1


def _verify_hash_index(index: IndexFileEntry, report: VerifyReport, rebuild: bool) -> np.ndarray:
    data = _read(index)
    if len(data) % 4:
        raise IndexFormatError(str(index.path), len(data) // 4 * 4, f"a whole number of 4-byte key hashes, {len(data) % 4} bytes left over")
    hashes = decode_hash_index(data, source=str(index.path))
    if len(hashes) != index.row_count:
        raise IndexFormatError(str(index.path), 0, f"{index.row_count} key hashes as the index manifest records, found {len(hashes)}")
    unique, first = np.unique(hashes, return_index=True)
    if len(unique) != len(hashes):
        twice = np.setdiff1d(np.arange(len(hashes)), first)[0]
        raise IndexFormatError(str(index.path), 4 * int(twice), f"each key hash once (a set), {hashes[twice]} is there twice")
    report.hash_indexes += 1
    report.hashes += len(hashes)
    if rebuild:
        _same("hash index", str(index.path), encode_hash_index(hashes.astype("int64"), order="given"), data)
        report.rebuilt["hash indexes"] += 1
    return hashes


def _internal_values(array, t) -> list:
    """A key column (Arrow) as Paimon internal values, for ``key_hash``."""
    if pa.types.is_date(array.type):
        return array.cast(pa.int32()).to_pylist()
    if pa.types.is_timestamp(array.type):
        per_milli = {"ms": 1, "us": 1000, "ns": 1_000_000}[array.type.unit]
        nanos_per = 1_000_000 // per_milli
        return [Timestamp(v // per_milli, v % per_milli * nanos_per) for v in array.cast(pa.int64()).to_pylist()]
    return array.to_pylist()


def _verify_bucket_keys(table: FileStoreTable, index: IndexFileEntry, files: list[DataFileEntry], hashes: np.ndarray) -> None:
    keys = table.schema.trimmed_primary_keys
    types = [binary_row_type(table.schema.field(k).type) for k in keys]
    for e in files:
        names = [table.scan._file_fields(e.file.schema_id)[table.schema.field(k).id][0] for k in keys]
        data = TableRead._read_format(e.path, names)
        if all(t.compact and t.root not in ("DECIMAL", "TIMESTAMP") for t in types):
            ours = key_hash_array([data.column(n).to_numpy() for n in names], types)
        else:
            columns = [_internal_values(data.column(n).combine_chunks(), t) for n, t in zip(names, types)]
            ours = np.array([key_hash(list(row), types) for row in zip(*columns)], np.int32)
        missing = np.flatnonzero(~np.isin(ours, hashes))
        if len(missing):
            raise IndexFormatError(
                str(index.path), 0,
                f"the key hash of every row of its bucket's data files; row {missing[0]} of {e.file.file_name} "
                f"(hash {ours[missing[0]]}) is missing",
            )  # fmt: skip

def _verify_file_index(table: FileStoreTable, entry: DataFileEntry, report: VerifyReport, rebuild: bool) -> None:
    container = entry.file_index()
    if container is None:
        return
    report.file_indexes["embedded" if entry.file.embedded_index is not None else "index-file"] += 1
    file_schema = table.schemas.schema(entry.file.schema_id)
    fields = {f.name: f.type for f in file_schema.fields}
    for column in container.columns():
        data_type = indexed_type(column, fields)
        if data_type is None:
            raise IndexFormatError(container.source, 0, f"indexed columns of the data file's schema, found {column!r}")
        container.readers(column, data_type)  # decodes every payload's header
    if not rebuild:
        return
    options = {k: v for k, v in file_schema.options.items() if k.startswith("file-index.")}
    indexed = sorted({column.name for column in file_index_options(options)[0]})
    data = TableRead._read_format(entry.path, indexed)
    columns = {name: data.column(name) for name in indexed}
    ours = build_file_index(options, fields, columns)
    _same("file index", container.source, ours, bytes(container.data))
    report.rebuilt["file indexes"] += 1
