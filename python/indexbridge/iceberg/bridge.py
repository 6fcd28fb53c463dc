"""Paimon's deletion vectors moved into Iceberg v3 Puffin files, frames copied as they are.

A Paimon 64-bit DV frame is an Iceberg ``deletion-vector-v1`` blob byte for byte (spec/
lakehouse-dv.md §1, §4): each frame of a snapshot's deletion files is checked (magic, CRC,
length and cardinality against the index manifest) and copied into a Puffin file, one Puffin
file per Paimon deletion file, named after it, so a rerun writes the same bytes. 32-bit DVs are
converted to the 64-bit frame Paimon would write for the same positions (run-optimised).

:func:`paimon_deletion_files` lists the DVs of a snapshot (shared with :mod:`indexbridge.delta.bridge`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from indexbridge.errors import IndexFormatError
from indexbridge.iceberg.puffin import DeleteFile, DvFrame, to_bitmap64, write_deletion_vector_puffin
from indexbridge.paimon.dv import DeletionVector

DELETION_VECTORS = "DELETION_VECTORS"


@dataclass(frozen=True)
class PaimonDv:
    """One data file's DV: its range in the deletion file, as the index manifest records it."""

    data_file: str  # the data file's name, as Paimon's manifest records it
    data_path: Path  # its absolute path
    offset: int
    length: int
    cardinality: int | None


@dataclass(frozen=True)
class PaimonDeletionFile:
    index_file: str
    path: Path
    dvs: tuple[PaimonDv, ...]


def paimon_deletion_files(table_dir: str | os.PathLike[str], snapshot: int | None = None) -> list[PaimonDeletionFile]:
    """The deletion files of a Paimon snapshot with the DV range of each data file."""
    from indexbridge.paimon.table import FileStoreTable

    table = FileStoreTable.open(table_dir, snapshot)
    scan = table.scan
    data_paths = {}
    for manifest_entry, source in scan.live_entries:
        entry = scan.entry(manifest_entry, source)
        data_paths[(entry.partition_row, entry.bucket, entry.file.file_name)] = entry.path.absolute()
    out = []
    for index in scan.index_entries:
        if index.index_type != DELETION_VECTORS:
            continue
        dvs = []
        for r in index.meta.dv_ranges or ():
            path = data_paths.get((index.partition_row, index.bucket, r.data_file))
            if path is None:
                raise IndexFormatError(str(index.path), r.offset, f"a deletion vector of a live data file of bucket {index.bucket}, found one of {r.data_file}")
            dvs.append(PaimonDv(r.data_file, path, r.offset, r.length, r.cardinality))
        out.append(PaimonDeletionFile(index.file_name, index.path, tuple(dvs)))
    return out


def checked_frames(deletion_file: PaimonDeletionFile, data: bytes, *, convert: bool = True) -> Iterator[tuple[PaimonDv, memoryview | bytes, DeletionVector]]:
    """Each DV's frame as it is in the file (64-bit), or converted to 64-bit (``convert``; else
    the 32-bit frame), after checking it against the manifest's range."""
    view = memoryview(data)
    source = str(deletion_file.path)
    if not view or view[0] != 1:
        raise IndexFormatError(source, 0, f"deletion file version 1, found {view[0] if view else 'an empty file'}")
    for dv_range in deletion_file.dvs:
        dv = DeletionVector.deserialize(view, source=source, offset=dv_range.offset, expected_length=dv_range.length)
        if dv_range.cardinality is not None and dv.cardinality != dv_range.cardinality:
            raise IndexFormatError(source, dv_range.offset, f"a DV of {dv_range.cardinality} positions as recorded in the index manifest, found {dv.cardinality}")
        if dv.bitmap64:
            yield dv_range, view[dv_range.offset:dv_range.offset + dv_range.length], dv
        elif convert:
            yield dv_range, to_bitmap64(dv).serialize(), dv
        else:
            yield dv_range, view[dv_range.offset:dv_range.offset + dv_range.length + 8], dv


def puffin_file_name(deletion_file: PaimonDeletionFile) -> str:
    return f"{deletion_file.index_file}.puffin"


def deletion_file_to_puffin(deletion_file: PaimonDeletionFile, out_dir: Path, *, created_by: str | None = None) -> list[tuple[str, DeleteFile]]:
    """Writes ``out_dir/<deletion file>.puffin`` of one deletion file's DVs (none if it has
    none); returns ``(data file name, Iceberg DeleteFile)`` per data file, in blob order."""
    if not deletion_file.dvs:
        return []
    data = deletion_file.path.read_bytes()
    frames: list[DvFrame] = []
    names = {}
    for dv_range, frame, dv in checked_frames(deletion_file, data):
        frames.append((str(dv_range.data_path), frame, dv.cardinality))
        names[str(dv_range.data_path)] = dv_range.data_file
    kwargs = {"created_by": created_by} if created_by else {}
    written = write_deletion_vector_puffin(out_dir / puffin_file_name(deletion_file), frames, **kwargs)
    return [(names[delete_file.referenced_data_file], delete_file) for delete_file in written]


def paimon_to_puffin(
    table_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str], *, snapshot: int | None = None, created_by: str | None = None
) -> list[tuple[str, DeleteFile]]:
    """Writes ``OUT_DIR/<deletion file>.puffin`` per deletion file of the snapshot; returns
    ``(data file name, Iceberg DeleteFile)`` per data file with a DV, in blob order."""
    out_dir = Path(out_dir).absolute()
    out_dir.mkdir(parents=True, exist_ok=True)
    return [row for deletion_file in paimon_deletion_files(table_dir, snapshot)
            for row in deletion_file_to_puffin(deletion_file, out_dir, created_by=created_by)]  # fmt: skip
