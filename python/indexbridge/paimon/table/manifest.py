"""Paimon manifest lists, manifests and index manifests: Avro object container files read with
``fastavro`` (``ManifestList``, ``ManifestFile``, ``IndexManifestFile``; records as
``ManifestFileMetaSerializer``, ``ManifestEntrySerializer`` + ``DataFileMetaSerializer`` and
``IndexManifestEntrySerializer`` write them, zstd-compressed by default).

Manifest list (``manifest/manifest-list-…``), one record per manifest::

    _VERSION int, _FILE_NAME string, _FILE_SIZE long, _NUM_ADDED_FILES long,
    _NUM_DELETED_FILES long, _PARTITION_STATS {_MIN_VALUES bytes, _MAX_VALUES bytes,
    _NULL_COUNTS [long?]?}, _SCHEMA_ID long, _MIN_BUCKET/_MAX_BUCKET int?, _MIN_LEVEL/_MAX_LEVEL int?, …

Manifest (``manifest/manifest-…``), one record per file change::

    _VERSION int, _KIND int (0 ADD, 1 DELETE), _PARTITION bytes (serialized BinaryRow),
    _BUCKET int, _TOTAL_BUCKETS int, _FILE {
      _FILE_NAME, _FILE_SIZE, _ROW_COUNT, _MIN_KEY bytes, _MAX_KEY bytes,
      _KEY_STATS {…}, _VALUE_STATS {…}, _MIN_SEQUENCE_NUMBER, _MAX_SEQUENCE_NUMBER, _SCHEMA_ID,
      _LEVEL int, _EXTRA_FILES [string], _CREATION_TIME timestamp-millis?, _DELETE_ROW_COUNT long?,
      _EMBEDDED_FILE_INDEX bytes?, _FILE_SOURCE int?, _VALUE_STATS_COLS [string]?,
      _EXTERNAL_PATH string?, _FIRST_ROW_ID long?, _WRITE_COLS [string]? }

Index manifest (``manifest/index-manifest-…``), the index files live in a snapshot::

    _VERSION int, _KIND int, _PARTITION bytes, _BUCKET int, _INDEX_TYPE string ("HASH",
    "DELETION_VECTORS", …), _FILE_NAME string, _FILE_SIZE long, _ROW_COUNT long,
    _DELETIONS_VECTORS_RANGES [{f0 string data file, f1 int offset, f2 int length,
    _CARDINALITY long?}]?, _EXTERNAL_PATH string?, _GLOBAL_INDEX {…}?

Fields added by later Paimon versions are read when present; older files simply lack them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import fastavro

from indexbridge.errors import IndexFormatError
from indexbridge.paimon.dv import DeletionVectorRange

ADD = 0
DELETE = 1


@dataclass(frozen=True)
class SimpleStats:
    """Min/max rows (serialized BinaryRows) and null counts of some columns."""

    min_values: bytes
    max_values: bytes
    null_counts: tuple[int | None, ...] | None

    @classmethod
    def from_record(cls, r: dict) -> SimpleStats:
        counts = r.get("_NULL_COUNTS")
        return cls(bytes(r["_MIN_VALUES"]), bytes(r["_MAX_VALUES"]), None if counts is None else tuple(counts))


@dataclass(frozen=True)
class ManifestFileMeta:
    file_name: str
    file_size: int
    num_added_files: int
    num_deleted_files: int
    partition_stats: SimpleStats
    schema_id: int


@dataclass(frozen=True)
class DataFileMeta:
    file_name: str
    file_size: int
    row_count: int
    min_key: bytes
    max_key: bytes
    key_stats: SimpleStats
    value_stats: SimpleStats
    min_sequence_number: int
    max_sequence_number: int
    schema_id: int
    level: int
    extra_files: tuple[str, ...]
    delete_row_count: int | None
    embedded_index: bytes | None
    file_source: int | None
    value_stats_cols: tuple[str, ...] | None
    external_path: str | None
    first_row_id: int | None
    write_cols: tuple[str, ...] | None

    @classmethod
    def from_record(cls, r: dict) -> DataFileMeta:
        def names(key: str) -> tuple[str, ...] | None:
            value = r.get(key)
            return None if value is None else tuple(value)

        embedded = r.get("_EMBEDDED_FILE_INDEX")
        return cls(
            file_name=r["_FILE_NAME"],
            file_size=r["_FILE_SIZE"],
            row_count=r["_ROW_COUNT"],
            min_key=bytes(r["_MIN_KEY"]),
            max_key=bytes(r["_MAX_KEY"]),
            key_stats=SimpleStats.from_record(r["_KEY_STATS"]),
            value_stats=SimpleStats.from_record(r["_VALUE_STATS"]),
            min_sequence_number=r["_MIN_SEQUENCE_NUMBER"],
            max_sequence_number=r["_MAX_SEQUENCE_NUMBER"],
            schema_id=r["_SCHEMA_ID"],
            level=r["_LEVEL"],
            extra_files=tuple(r.get("_EXTRA_FILES") or ()),
            delete_row_count=r.get("_DELETE_ROW_COUNT"),
            embedded_index=None if embedded is None else bytes(embedded),
            file_source=r.get("_FILE_SOURCE"),
            value_stats_cols=names("_VALUE_STATS_COLS"),
            external_path=r.get("_EXTERNAL_PATH"),
            first_row_id=r.get("_FIRST_ROW_ID"),
            write_cols=names("_WRITE_COLS"),
        )

    @property
    def index_files(self) -> list[str]:
        """The extra files holding this file's file index (``<file>.index``, ``<file>-1.index`` …)."""
        return [f for f in self.extra_files if f.endswith(".index")]


@dataclass(frozen=True)
class ManifestEntry:
    kind: int
    partition: bytes  # serialized BinaryRow
    bucket: int
    total_buckets: int
    file: DataFileMeta

    def identifier(self) -> tuple:
        """What makes two entries the same file (``FileEntry.Identifier``)."""
        f = self.file
        return (self.partition, self.bucket, f.level, f.file_name, f.extra_files, f.embedded_index, f.external_path)


@dataclass(frozen=True)
class IndexManifestEntry:
    kind: int
    partition: bytes
    bucket: int
    index_type: str
    file_name: str
    file_size: int
    row_count: int
    dv_ranges: tuple[DeletionVectorRange, ...] | None
    external_path: str | None

    def identifier(self) -> tuple:
        return (self.partition, self.bucket, self.index_type, self.file_name)


def _records(path: Path) -> Iterator[dict]:
    try:
        with open(path, "rb") as f:
            yield from fastavro.reader(f)
    except FileNotFoundError:
        raise IndexFormatError(str(path), 0, "the file to exist (the snapshot references it)") from None
    except IndexFormatError:
        raise
    except Exception as e:  # fastavro reports damage as ValueError, EOFError, StructError, …
        raise IndexFormatError(str(path), 0, f"an Avro object container file: {type(e).__name__}: {e}") from None


def _checked(path: Path, build, records: Iterator[dict]) -> list:
    out = []
    for i, r in enumerate(records):
        try:
            out.append(build(r))
        except (KeyError, TypeError, ValueError) as e:
            raise IndexFormatError(str(path), 0, f"record {i}: the fields Paimon writes ({type(e).__name__}: {e})") from None
    return out


def _kind(r: dict) -> int:
    kind = r["_KIND"]
    if kind not in (ADD, DELETE):
        raise ValueError(f"_KIND {kind} is neither ADD (0) nor DELETE (1)")
    return kind


def read_manifest_list(path: str | os.PathLike[str]) -> list[ManifestFileMeta]:
    path = Path(path)

    def build(r: dict) -> ManifestFileMeta:
        return ManifestFileMeta(
            r["_FILE_NAME"], r["_FILE_SIZE"], r["_NUM_ADDED_FILES"], r["_NUM_DELETED_FILES"],
            SimpleStats.from_record(r["_PARTITION_STATS"]), r["_SCHEMA_ID"],
        )  # fmt: skip

    return _checked(path, build, _records(path))


def read_manifest(path: str | os.PathLike[str]) -> list[ManifestEntry]:
    path = Path(path)

    def build(r: dict) -> ManifestEntry:
        return ManifestEntry(_kind(r), bytes(r["_PARTITION"]), r["_BUCKET"], r["_TOTAL_BUCKETS"], DataFileMeta.from_record(r["_FILE"]))

    return _checked(path, build, _records(path))


def read_index_manifest(path: str | os.PathLike[str]) -> list[IndexManifestEntry]:
    path = Path(path)

    def build(r: dict) -> IndexManifestEntry:
        ranges = r.get("_DELETIONS_VECTORS_RANGES")
        return IndexManifestEntry(
            _kind(r), bytes(r["_PARTITION"]), r["_BUCKET"], r["_INDEX_TYPE"], r["_FILE_NAME"], r["_FILE_SIZE"], r["_ROW_COUNT"],
            None if ranges is None else tuple(DeletionVectorRange(d["f0"], d["f1"], d["f2"], d.get("_CARDINALITY")) for d in ranges),
            r.get("_EXTERNAL_PATH"),
        )  # fmt: skip

    return _checked(path, build, _records(path))


def merge_entries(entries: list, source: str) -> list:
    """Apply ADD and DELETE entries in order, as ``FileEntry.mergeEntries`` does: a DELETE
    removes the file an earlier ADD added; what is left and added is live."""
    live: dict[tuple, object] = {}  # ADD entries, and DELETEs of files added in earlier manifests
    for e in entries:
        key = e.identifier()
        if e.kind == ADD:
            if key in live:
                raise IndexFormatError(source, 0, f"each file added once; {key[3]} is added again")
            live[key] = e
        elif key in live:
            del live[key]
        else:
            live[key] = e
    return [e for e in live.values() if e.kind == ADD]
