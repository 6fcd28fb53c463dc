"""The file actions of a Delta table at a version: what ``_delta_log`` says is live, with each
data file's deletion vector descriptor (spec/lakehouse-dv.md §8).

Layout of ``<table>/_delta_log/`` (Delta protocol, "Delta Log Entries", "Checkpoints")::

    00000000000000000000.json                     commit N: one JSON action per line
    00000000000000000010.checkpoint.parquet       classic checkpoint of version 10
    00000000000000000010.checkpoint.0000000001.0000000002.parquet   multi-part checkpoint, part 1 of 2
    00000000000000000010.checkpoint.<uuid>.json|parquet             V2 checkpoint (+ _sidecars/*.parquet)
    00000000000000000010.crc                      version checksum (not needed to read)
    _last_checkpoint                              a hint; listing the directory decides here

The state at version V: the newest complete checkpoint at or below V (its ``add`` rows; a V2
checkpoint's sidecars too), then the commits after it up to V in order. File actions are keyed
by (path, DV unique id), as Delta reconciles them: ``add`` puts, ``remove`` deletes. Only the
``add`` / ``remove`` actions are read.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from indexbridge.delta.dv import DeletionVectorDescriptor
from indexbridge.errors import IndexFormatError

_COMMIT = re.compile(r"^(\d{20})\.json$")
_CHECKPOINT = re.compile(r"^(\d{20})\.checkpoint(?:\.(\d{10})\.(\d{10})|\.([0-9a-fA-F-]{36}))?\.(parquet|json)$")


@dataclass(frozen=True)
class AddFile:
    """A live data file: its path as the log records it (URL-encoded, relative to the table or
    absolute), size, partition values, row count (from ``stats`` when present) and DV."""

    path: str
    size: int | None
    partition_values: Mapping[str, str | None] = field(default_factory=dict)
    num_records: int | None = None
    deletion_vector: DeletionVectorDescriptor | None = None


@dataclass(frozen=True)
class DeltaSnapshot:
    table: Path
    version: int
    checkpoint: int | None
    files: tuple[AddFile, ...]

    def files_with_deletion_vectors(self) -> list[AddFile]:
        return [f for f in self.files if f.deletion_vector is not None]


def _listing(log_dir: Path) -> tuple[dict[int, Path], dict[int, list[tuple[str, Path]]]]:
    commits: dict[int, Path] = {}
    checkpoints: dict[int, list[tuple[str, Path]]] = {}
    for entry in os.scandir(log_dir):
        name = entry.name
        m = _COMMIT.match(name)
        if m:
            commits[int(m.group(1))] = Path(entry.path)
            continue
        m = _CHECKPOINT.match(name)
        if m:
            kind = "multi" if m.group(2) else ("v2" if m.group(4) else "classic")
            checkpoints.setdefault(int(m.group(1)), []).append((kind, Path(entry.path)))
    return commits, checkpoints


def _complete_checkpoint(files: list[tuple[str, Path]]) -> list[tuple[str, Path]] | None:
    """The files of one usable checkpoint of a version (a V2 or classic one, or all parts)."""
    for kind in ("v2", "classic"):
        for k, path in files:
            if k == kind:
                return [(k, path)]
    parts: dict[int, set[int]] = {}
    by_total: dict[int, list[tuple[str, Path]]] = {}
    for k, path in files:
        m = _CHECKPOINT.match(path.name)
        part, total = int(m.group(2)), int(m.group(3))
        parts.setdefault(total, set()).add(part)
        by_total.setdefault(total, []).append((k, path))
    for total, seen in parts.items():
        if seen == set(range(1, total + 1)):
            return sorted(by_total[total], key=lambda kp: kp[1].name)
    return None


def _descriptor(obj: object, source: str) -> DeletionVectorDescriptor | None:
    if obj is None:
        return None
    return DeletionVectorDescriptor.from_json(obj, source)


def _num_records(stats: object) -> int | None:
    if isinstance(stats, str):
        try:
            value = json.loads(stats).get("numRecords")
        except (json.JSONDecodeError, AttributeError):
            return None
        return value if isinstance(value, int) else None
    return None


def _add(obj: Mapping, source: str) -> AddFile:
    path = obj.get("path")
    if not isinstance(path, str):
        raise IndexFormatError(source, 0, f'an "add" action with a string "path", found {path!r}')
    partition = obj.get("partitionValues") or {}
    if isinstance(partition, list):  # a checkpoint's map column as pairs
        partition = dict(partition)
    return AddFile(path, obj.get("size"), partition, _num_records(obj.get("stats")),
                   _descriptor(obj.get("deletionVector"), f"{source}: deletionVector of {path}"))  # fmt: skip


def _key(path: str, dv: DeletionVectorDescriptor | None) -> tuple[str, str]:
    return path, dv.unique_id if dv is not None else ""


def _replay_json(path: Path, state: dict[tuple[str, str], AddFile], sidecars: list[str]) -> None:
    with open(path, encoding="utf-8") as f:
        offset = 0
        for line in f:
            at = offset
            offset += len(line.encode("utf-8"))
            if not line.strip():
                continue
            try:
                action = json.loads(line)
            except json.JSONDecodeError as error:
                raise IndexFormatError(str(path), at, f"one JSON action per line ({error.msg})") from None
            if not isinstance(action, dict):
                raise IndexFormatError(str(path), at, "one JSON object per line")
            if "add" in action:
                add = _add(action["add"], f"{path}: offset {at}")
                state[_key(add.path, add.deletion_vector)] = add
            elif "remove" in action:
                remove = action["remove"]
                dv = _descriptor(remove.get("deletionVector"), f"{path}: offset {at}: remove")
                state.pop(_key(remove.get("path"), dv), None)
            elif "sidecar" in action:
                sidecars.append(action["sidecar"]["path"])


def _read_parquet_actions(path: Path, state: dict[tuple[str, str], AddFile], sidecars: list[str]) -> None:
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
    except Exception as error:  # pyarrow's ArrowInvalid / OSError
        raise IndexFormatError(str(path), 0, f"a Parquet checkpoint ({error})") from None
    names = set(parquet.schema_arrow.names)
    columns = [c for c in ("add", "sidecar") if c in names]
    for row in parquet.read(columns=columns).to_pylist():
        add = row.get("add")
        if add is not None:
            entry = _add(add, str(path))
            state[_key(entry.path, entry.deletion_vector)] = entry
        sidecar = row.get("sidecar")
        if sidecar is not None:
            sidecars.append(sidecar["path"])


def _read_checkpoint(log_dir: Path, files: list[tuple[str, Path]], state: dict[tuple[str, str], AddFile]) -> None:
    sidecars: list[str] = []
    for _, path in files:
        if path.suffix == ".json":
            _replay_json(path, state, sidecars)
        else:
            _read_parquet_actions(path, state, sidecars)
    for sidecar in sidecars:
        sidecar_path = log_dir / "_sidecars" / sidecar if "/" not in sidecar else Path(sidecar)
        _read_parquet_actions(sidecar_path, state, [])


def snapshot(table: str | os.PathLike[str], version: int | None = None) -> DeltaSnapshot:
    """The live files of a Delta table at ``version`` (default: the latest)."""
    table = Path(table)
    log_dir = table / "_delta_log"
    if not log_dir.is_dir():
        raise IndexFormatError(str(log_dir), 0, "a Delta table's _delta_log directory")
    commits, checkpoints = _listing(log_dir)
    known = set(commits) | set(checkpoints)
    if not known:
        raise IndexFormatError(str(log_dir), 0, "at least one commit (00000000000000000000.json) or checkpoint")
    latest = max(known)
    if version is None:
        version = latest
    if not 0 <= version <= latest:
        raise ValueError(f"version {version} of {table}: the log holds versions up to {latest}")
    start, chosen = -1, None
    for v in sorted((v for v in checkpoints if v <= version), reverse=True):
        chosen = _complete_checkpoint(checkpoints[v])
        if chosen is not None:
            start = v
            break
    state: dict[tuple[str, str], AddFile] = {}
    if chosen is not None:
        _read_checkpoint(log_dir, chosen, state)
    for v in range(start + 1, version + 1):
        path = commits.get(v)
        if path is None:
            raise IndexFormatError(str(log_dir / f"{v:020d}.json"), 0, f"commit {v} of the log (versions {start + 1}..{version} are needed)")
        _replay_json(path, state, [])
    return DeltaSnapshot(table, version, start if chosen is not None else None, tuple(state.values()))


def commit_actions(actions: Iterable[Mapping]) -> str:
    """JSON lines of a commit (compact, one action per line, as Delta writes them)."""
    return "".join(json.dumps(a, separators=(",", ":")) + "\n" for a in actions)
