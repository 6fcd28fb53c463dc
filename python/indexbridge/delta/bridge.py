"""Paimon's deletion vectors as Delta Lake DV files and descriptors, and Delta's DVs read back.

A Paimon deletion file of 64-bit DVs is a Delta DV file (spec/lakehouse-dv.md §4): with ``u``
descriptors the whole file is copied (every frame checked first) to
``<table>/deletion_vector_<uuid>.bin`` and each data file gets a descriptor at Paimon's offset
(``sizeInBytes`` = Paimon's length - 8); with ``p`` descriptors nothing is copied, the
descriptors point at Paimon's own files. 32-bit DVs cannot be read by Delta in place: ``p`` is
refused, ``u`` writes a new DV file of the converted 64-bit frames. The UUID of each copy is
derived from the deletion file's path, so a rerun writes the same names and bytes.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from indexbridge.delta import log as delta_log
from indexbridge.delta.dv import DeletionVectorDescriptor, encode_dv_file, file_name, read_frame_of
from indexbridge.iceberg.bridge import PaimonDeletionFile, checked_frames, paimon_deletion_files
from indexbridge.paimon.dv import DeletionVector
from indexbridge.storage import write_atomically

_NAMESPACE = uuid.UUID("6f2d9a52-1c1e-4f0b-9d1e-5b0c7c2e4a10")  # indexbridge's, for uuid5 of deletion files


def copy_uuid(deletion_file: Path) -> uuid.UUID:
    return uuid.uuid5(_NAMESPACE, os.fspath(deletion_file.absolute()))


def paimon_to_delta(
    table_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str], *, snapshot: int | None = None, storage: str = "u"
) -> list[tuple[str, DeletionVectorDescriptor]]:
    """Delta DVs of the Paimon snapshot's DVs; ``out_dir`` is the Delta table root (``u``).
    Returns ``(data file name, descriptor)`` per data file with a DV."""
    if storage not in ("u", "p"):
        raise ValueError(f"storage must be 'u' or 'p', got {storage!r}")
    out_dir = Path(out_dir).absolute()
    out_dir.mkdir(parents=True, exist_ok=True)
    return [row for deletion_file in paimon_deletion_files(table_dir, snapshot)
            for row in deletion_file_to_delta(deletion_file, out_dir, storage)]  # fmt: skip


def deletion_file_to_delta(deletion_file: PaimonDeletionFile, out_dir: Path, storage: str = "u") -> list[tuple[str, DeletionVectorDescriptor]]:
    """The Delta DVs of one Paimon deletion file: its copy under ``out_dir`` (``u``) or
    descriptors pointing at it (``p``); ``(data file name, descriptor)`` per data file."""
    if not deletion_file.dvs:
        return []
    data = deletion_file.path.read_bytes()
    checked = list(checked_frames(deletion_file, data, convert=storage == "u"))
    result = []
    if all(dv.bitmap64 for _, _, dv in checked):
        if storage == "p":
            return [(dv_range.data_file, DeletionVectorDescriptor.absolute(deletion_file.path, dv_range.length - 8, dv.cardinality, dv_range.offset))
                    for dv_range, _, dv in checked]  # fmt: skip
        file_uuid = copy_uuid(deletion_file.path)
        write_atomically(out_dir / file_name(file_uuid), data)  # the whole file, as it is
        return [(dv_range.data_file, DeletionVectorDescriptor.uuid_relative(file_uuid, dv_range.length - 8, dv.cardinality, dv_range.offset))
                for dv_range, _, dv in checked]  # fmt: skip
    if storage == "p":
        raise ValueError(
            f"{deletion_file.path} holds 32-bit deletion vectors, which Delta cannot read in place: "
            "use --storage u (converted to 64-bit frames)"
        )
    file_uuid = copy_uuid(deletion_file.path)
    content, offsets = encode_dv_file(frame for _, frame, _ in checked)
    write_atomically(out_dir / file_name(file_uuid), content)
    for (dv_range, frame, dv), offset in zip(checked, offsets):
        result.append((dv_range.data_file, DeletionVectorDescriptor.uuid_relative(file_uuid, len(frame) - 8, dv.cardinality, offset)))
    return result


@dataclass(frozen=True)
class DeltaDv:
    """A data file of a Delta version with its DV: the ``add`` action, the frame as Delta stored
    it (built around the data for inline DVs) and the decoded DV."""

    add: delta_log.AddFile
    frame: bytes | memoryview
    dv: DeletionVector


def delta_deletion_vectors(table: str | os.PathLike[str], version: int | None = None, *, verify_crc: bool = True) -> tuple[int, Iterator[DeltaDv]]:
    """The version read and, lazily, each data file's DV at it."""
    snap = delta_log.snapshot(table, version)
    files: dict[str, bytes] = {}

    def dvs() -> Iterator[DeltaDv]:
        for add in snap.files_with_deletion_vectors():
            frame, dv = read_frame_of(add.deletion_vector, snap.table, verify_crc=verify_crc, files=files,
                                      source=f"{snap.table}/_delta_log (version {snap.version}): {add.path}")  # fmt: skip
            yield DeltaDv(add, frame, dv)

    return snap.version, dvs()
