"""Paimon snapshots: ``snapshot/snapshot-<id>`` JSON files and the ``LATEST`` / ``EARLIEST`` hints
(``Snapshot``, ``SnapshotManager``, ``HintFileUtils``).

A table directory's ``snapshot/`` holds::

    snapshot-<id>   JSON, one per commit (ids from 1, gaps where old snapshots expired)
    LATEST          the latest id as decimal text: a hint, trusted only if snapshot-<id + 1> is absent
    EARLIEST        the earliest id: a hint, trusted only if snapshot-<id> exists

When a hint is missing, unreadable or stale, the ids are found by listing ``snapshot-*``, as
``HintFileUtils.findLatest`` / ``findEarliest`` do. A snapshot's JSON (version 3)::

    {"version": 3, "id": 6, "schemaId": 0,
     "baseManifestList": "manifest-list-…-2", "baseManifestListSize": 1208,
     "deltaManifestList": "manifest-list-…-3", "deltaManifestListSize": 1130,
     "changelogManifestList": null, "indexManifest": "index-manifest-…-0",
     "commitUser": "…", "commitIdentifier": 9223372036854775807, "commitKind": "COMPACT",
     "timeMillis": 1795575727813, "totalRecordCount": 38, "deltaRecordCount": -19,
     "watermark": …, "statistics": …, "properties": …, "nextRowId": 0}

The data files of a snapshot are those of its base manifest list followed by its delta manifest
list; ``indexManifest`` (optional) lists the index files that are live in it. Changelog
manifests are not part of a batch read.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from indexbridge.errors import IndexFormatError

LATEST = "LATEST"
EARLIEST = "EARLIEST"
_SNAPSHOT_FILE = re.compile(r"snapshot-(\d+)")


@dataclass(frozen=True)
class Snapshot:
    id: int
    schema_id: int
    base_manifest_list: str
    delta_manifest_list: str
    index_manifest: str | None
    commit_kind: str
    commit_user: str
    commit_identifier: int
    time_millis: int
    total_record_count: int | None
    delta_record_count: int | None
    version: int

    @classmethod
    def from_json(cls, data: bytes, source: str) -> Snapshot:
        try:
            doc = json.loads(data)
            if not isinstance(doc, dict):
                raise ValueError("not a JSON object")
            return cls(
                id=_int(doc, "id"),
                schema_id=_int(doc, "schemaId"),
                base_manifest_list=_str(doc, "baseManifestList"),
                delta_manifest_list=_str(doc, "deltaManifestList"),
                index_manifest=doc.get("indexManifest"),
                commit_kind=_str(doc, "commitKind"),
                commit_user=str(doc.get("commitUser", "")),
                commit_identifier=int(doc.get("commitIdentifier", 0)),
                time_millis=int(doc.get("timeMillis", 0)),
                total_record_count=doc.get("totalRecordCount"),
                delta_record_count=doc.get("deltaRecordCount"),
                version=int(doc.get("version", 1)),
            )
        except (ValueError, TypeError, KeyError) as e:  # json.JSONDecodeError is a ValueError
            raise IndexFormatError(source, 0, f"a snapshot JSON document: {e}") from None


def _int(doc: dict, key: str) -> int:
    value = doc.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"field {key!r} must be an integer, got {value!r}")
    return value


def _str(doc: dict, key: str) -> str:
    value = doc.get(key)
    if not isinstance(value, str):
        raise ValueError(f"field {key!r} must be a string, got {value!r}")
    return value


class SnapshotManager:
    """The snapshots of the table at ``table_path``."""

    def __init__(self, table_path: str | os.PathLike[str]):
        self.directory = Path(table_path) / "snapshot"

    def path(self, snapshot_id: int) -> Path:
        return self.directory / f"snapshot-{snapshot_id}"

    def _hint(self, name: str) -> int | None:
        try:
            return int((self.directory / name).read_text().strip())
        except (OSError, ValueError):
            return None

    def snapshot_ids(self) -> list[int]:
        """Every id with a snapshot file, ascending (by listing the directory)."""
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return []
        return sorted(int(m[1]) for m in map(_SNAPSHOT_FILE.fullmatch, names) if m)

    def latest_snapshot_id(self) -> int | None:
        hint = self._hint(LATEST)
        if hint is not None and hint > 0 and not self.path(hint + 1).exists():
            return hint
        ids = self.snapshot_ids()
        return ids[-1] if ids else None

    def earliest_snapshot_id(self) -> int | None:
        hint = self._hint(EARLIEST)
        if hint is not None and self.path(hint).exists():
            return hint
        ids = self.snapshot_ids()
        return ids[0] if ids else None

    def snapshot(self, snapshot_id: int) -> Snapshot:
        path = self.path(snapshot_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            ids = self.snapshot_ids()
            have = f"snapshots {ids[0]}..{ids[-1]} exist" if ids else "the table has no snapshot"
            raise IndexFormatError(str(path), 0, f"snapshot {snapshot_id} to exist ({have})") from None
        snapshot = Snapshot.from_json(data, str(path))
        if snapshot.id != snapshot_id:
            raise IndexFormatError(str(path), 0, f"snapshot id {snapshot_id}, the file says {snapshot.id}")
        return snapshot

    def latest_snapshot(self) -> Snapshot | None:
        latest = self.latest_snapshot_id()
        return None if latest is None else self.snapshot(latest)
