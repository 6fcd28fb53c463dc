"""Delta Lake deletion vectors: DV files and their descriptors (spec/lakehouse-dv.md §3–§4).

DV file (``deletion_vector_<uuid>.bin``, one per DML statement and table, up to
``deletionVectors.packing.targetSize``)::

    u8 version = 1
    DV frame #1                     at offset 1
    DV frame #2                     back to back; the file ends after the last frame
    ...

    frame = u32 BE size | DATA (size bytes) | u32 BE CRC-32 of DATA
    DATA  = d1 d3 39 64 (magic, LE 1681511377) | portable 64-bit roaring (RoaringBitmapArray's
            portable format: u64 LE count, count x (u32 LE key, portable 32-bit roaring))

That is the layout of a Paimon deletion file of 64-bit DVs, frame for frame; the frames are
:class:`indexbridge.paimon.dv.DeletionVector`'s. Delta does not always run-optimise merged DVs,
so frames read from Delta are moved as they are, never re-encoded unless asked.

Descriptor (``add.deletionVector`` in ``_delta_log``)::

    {"storageType": "u" | "p" | "i" (| "r"), "pathOrInlineDv": ..., "offset": N (not for i),
     "sizeInBytes": len(DATA), "cardinality": n, ["maxRowIndex": m]}

    u  random prefix (0..n characters, also the subdirectory) + Z85 of the UUID (20 characters):
       <table>/<prefix>/deletion_vector_<uuid>.bin
    p  an absolute URI (percent-encoded), as SHALLOW CLONE writes
    i  Z85 of DATA, zero-padded to a multiple of 4 bytes; sizeInBytes = len(DATA)
    r  a path relative to the table root (Delta's adaptive metadata; read only)

``offset`` points at the frame's size field; ``sizeInBytes`` excludes the size and CRC fields
(Paimon's 64-bit ``length`` - 8). Delta's unique id of a DV is ``storageType + pathOrInlineDv``
followed by ``"@" + offset`` when there is an offset.

Reads check what Delta checks (the size field against ``sizeInBytes``, the CRC, the
cardinality) and more (the version byte, the magic, a descriptor inside its file, Z85), each
failure an :class:`~indexbridge.errors.IndexFormatError` naming the file and offset.
"""

from __future__ import annotations

import os
import struct
import uuid as uuid_module
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from indexbridge.bytes import crc32
from indexbridge.delta import z85
from indexbridge.errors import IndexFormatError
from indexbridge.paimon.dv import DeletionVector, scan_deletion_file
from indexbridge.storage import write_atomically

FILE_VERSION = 1
UUID_RELATIVE, ABSOLUTE_PATH, INLINE, RELATIVE_PATH = "u", "p", "i", "r"
STORAGE_TYPES = (UUID_RELATIVE, ABSOLUTE_PATH, INLINE, RELATIVE_PATH)
FILE_NAME_PREFIX = "deletion_vector_"
DV_MAGIC = bytes.fromhex("d1d33964")
MAX_SIZE = (1 << 31) - 1
_U32_BE = struct.Struct(">I")


def file_name(value: uuid_module.UUID) -> str:
    """``deletion_vector_<uuid>.bin``, the file of a ``u`` descriptor."""
    return f"{FILE_NAME_PREFIX}{value}.bin"


@dataclass(frozen=True)
class DeletionVectorDescriptor:
    """Delta's ``DeletionVectorDescriptor``: where a data file's DV is and what it holds."""

    storage_type: str
    path_or_inline_dv: str
    size_in_bytes: int
    cardinality: int
    offset: int | None = None
    max_row_index: int | None = None

    @classmethod
    def uuid_relative(
        cls, value: uuid_module.UUID, size_in_bytes: int, cardinality: int, offset: int, random_prefix: str = ""
    ) -> DeletionVectorDescriptor:
        return cls(UUID_RELATIVE, random_prefix + z85.encode_uuid(value), size_in_bytes, cardinality, offset)

    @classmethod
    def absolute(cls, path_or_uri: str | os.PathLike[str], size_in_bytes: int, cardinality: int, offset: int) -> DeletionVectorDescriptor:
        """A ``p`` descriptor; a local path becomes its ``file://`` URI."""
        text = os.fspath(path_or_uri)
        uri = text if urlparse(text).scheme else Path(os.path.abspath(text)).as_uri()
        return cls(ABSOLUTE_PATH, uri, size_in_bytes, cardinality, offset)

    @classmethod
    def inline(cls, data: bytes | bytearray | memoryview, cardinality: int) -> DeletionVectorDescriptor:
        """``DeletionVectorDescriptor.inlineInLog``: ``data`` is magic + bitmap (no size, no CRC)."""
        return cls(INLINE, z85.encode(data), len(data), cardinality)

    @property
    def unique_id(self) -> str:
        """Delta's (legacy) unique id: storage type, path or inline data, then ``@offset``."""
        base = self.storage_type + self.path_or_inline_dv
        return base if self.offset is None else f"{base}@{self.offset}"

    def to_json(self) -> dict:
        """The descriptor as Delta writes it in the log (field order as Delta's)."""
        out: dict = {"storageType": self.storage_type, "pathOrInlineDv": self.path_or_inline_dv}
        if self.offset is not None:
            out["offset"] = self.offset
        out["sizeInBytes"] = self.size_in_bytes
        out["cardinality"] = self.cardinality
        if self.max_row_index is not None:
            out["maxRowIndex"] = self.max_row_index
        return out

    @classmethod
    def from_json(cls, obj: object, source: str = "<descriptor>") -> DeletionVectorDescriptor:
        """A descriptor from the log's JSON (or a checkpoint's struct as a dict), validated."""
        if not isinstance(obj, Mapping):
            raise IndexFormatError(source, 0, f"a deletion vector descriptor object, found {obj!r}")

        def integer(key: str, required: bool, low: int, high: int) -> int | None:
            value = obj.get(key)
            if value is None and not required:
                return None
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise IndexFormatError(source, 0, f'descriptor "{key}" as an integer in {low}..{high}, found {value!r}')
            return value

        storage = obj.get("storageType")
        if storage not in STORAGE_TYPES:
            raise IndexFormatError(source, 0, f'descriptor "storageType" one of {", ".join(STORAGE_TYPES)}, found {storage!r}')
        path = obj.get("pathOrInlineDv")
        if not isinstance(path, str):
            raise IndexFormatError(source, 0, f'descriptor "pathOrInlineDv" as a string, found {path!r}')
        offset = integer("offset", storage != INLINE, 0 if storage == INLINE else 1, MAX_SIZE)
        if storage == INLINE and offset is not None:
            raise IndexFormatError(source, 0, f"no offset for an inline deletion vector, found {offset}")
        descriptor = cls(
            storage, path, integer("sizeInBytes", True, 0, MAX_SIZE), integer("cardinality", True, 0, (1 << 63) - 1),
            offset, integer("maxRowIndex", False, 0, (1 << 63) - 1),
        )  # fmt: skip
        if storage == UUID_RELATIVE:
            descriptor.random_prefix_and_uuid(source)  # a bad Z85 UUID fails here
        return descriptor

    def random_prefix_and_uuid(self, source: str = "<descriptor>") -> tuple[str, uuid_module.UUID]:
        if self.storage_type != UUID_RELATIVE:
            raise ValueError(f"a {self.storage_type!r} descriptor has no UUID")
        n = len(self.path_or_inline_dv) - z85.ENCODED_UUID_LENGTH
        if n < 0:
            raise IndexFormatError(source, 0, f"a 'u' pathOrInlineDv of at least 20 characters, found {self.path_or_inline_dv!r}")
        prefix, encoded = self.path_or_inline_dv[:n], self.path_or_inline_dv[n:]
        return prefix, z85.decode_uuid(encoded, source=f"{source}: pathOrInlineDv {self.path_or_inline_dv!r}", offset=n)

    def absolute_path(self, table_root: str | os.PathLike[str]) -> Path:
        """The local file holding an on-disk DV (Delta's ``absolutePath``)."""
        root = Path(table_root)
        if self.storage_type == UUID_RELATIVE:
            prefix, value = self.random_prefix_and_uuid()
            return (root / prefix / file_name(value)) if prefix else root / file_name(value)
        if self.storage_type == RELATIVE_PATH:
            return root / self.path_or_inline_dv
        if self.storage_type == ABSOLUTE_PATH:
            return local_path(self.path_or_inline_dv)
        raise ValueError("an inline deletion vector has no file")

    def inline_data(self, source: str = "<descriptor>") -> bytes:
        """DATA (magic + bitmap) of an inline DV, its padding dropped."""
        if self.storage_type != INLINE:
            raise ValueError("only an inline deletion vector carries its data")
        return z85.decode(self.path_or_inline_dv, self.size_in_bytes, source=f"{source}: inline pathOrInlineDv")


def local_path(uri: str) -> Path:
    """A ``file:`` URI (or an absolute path) as a local path; other schemes are refused."""
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file"):
        path = unquote(parsed.path)
        if os.path.isabs(path):
            return Path(path)
    raise ValueError(f"only local absolute paths and file: URIs are supported, got {uri!r}")


# ---------------------------------------------------------------------------------------------
# Reading


def _frame_data_check(data: memoryview, at: int, source: str) -> None:
    if data[at + 4:at + 8] != DV_MAGIC:
        raise IndexFormatError(source, at + 4, f"Delta deletion vector magic {DV_MAGIC.hex()} (portable RoaringBitmapArray), found {bytes(data[at + 4:at + 8]).hex()}")


def read_frame(
    data: bytes | bytearray | memoryview,
    descriptor: DeletionVectorDescriptor,
    *,
    source: str = "<bytes>",
    verify_crc: bool = True,
) -> tuple[memoryview, DeletionVector]:
    """The frame an on-disk descriptor points at in a DV file's bytes, as it is, and its DV."""
    data = memoryview(data).cast("B")
    if not data:
        raise IndexFormatError(source, 0, f"deletion vector file version byte {FILE_VERSION}, found an empty file")
    if data[0] != FILE_VERSION:
        raise IndexFormatError(source, 0, f"deletion vector file version {FILE_VERSION}, found {data[0]}")
    offset, size = descriptor.offset, descriptor.size_in_bytes
    if offset is None or offset < 1:
        raise IndexFormatError(source, 0, f"a descriptor offset >= 1 (after the version byte), found {offset}")
    end = offset + 4 + size + 4
    if end > len(data):
        raise IndexFormatError(source, offset, f"a deletion vector of {size} bytes (+ size and CRC) inside the file of {len(data)} bytes, at offset {offset}")
    (stored,) = _U32_BE.unpack_from(data, offset)
    if stored != size:
        raise IndexFormatError(source, offset, f"a deletion vector size field of {size} (the descriptor's sizeInBytes), found {stored}")
    _frame_data_check(data, offset, source)
    dv = DeletionVector.deserialize(data[:end], source=source, offset=offset, expected_length=size + 8, verify_crc=verify_crc)
    if dv.cardinality != descriptor.cardinality:
        raise IndexFormatError(source, offset, f"a deletion vector of {descriptor.cardinality} positions (the descriptor's cardinality), found {dv.cardinality}")
    return data[offset:end], dv


def inline_frame(descriptor: DeletionVectorDescriptor, source: str = "<descriptor>") -> bytes:
    """The frame (size, DATA, CRC) of an inline DV's DATA."""
    data = descriptor.inline_data(source)
    return _U32_BE.pack(len(data)) + data + _U32_BE.pack(crc32(data))


def read_deletion_vector(
    descriptor: DeletionVectorDescriptor,
    table_root: str | os.PathLike[str],
    *,
    verify_crc: bool = True,
    files: dict[str, bytes] | None = None,
    source: str | None = None,
) -> DeletionVector:
    """The DV a descriptor stands for. ``files`` caches DV files by path across calls.
    ``source`` names an inline DV in errors (e.g. the log file)."""
    return read_frame_of(descriptor, table_root, verify_crc=verify_crc, files=files, source=source)[1]


def read_frame_of(
    descriptor: DeletionVectorDescriptor,
    table_root: str | os.PathLike[str],
    *,
    verify_crc: bool = True,
    files: dict[str, bytes] | None = None,
    source: str | None = None,
) -> tuple[bytes | memoryview, DeletionVector]:
    """The frame (as stored, or built around inline DATA) and DV of a descriptor."""
    if descriptor.storage_type == INLINE:
        where = source or "<inline descriptor>"
        if descriptor.size_in_bytes == 0:
            if descriptor.cardinality:
                raise IndexFormatError(where, 0, f"an empty inline deletion vector of cardinality 0, found {descriptor.cardinality}")
            return b"", DeletionVector(bitmap64=True)
        frame = inline_frame(descriptor, where)
        _frame_data_check(memoryview(frame), 0, f"{where}: inline DV (offsets in its frame)")
        dv = DeletionVector.deserialize(frame, source=f"{where}: inline DV (offsets in its frame)", verify_crc=False)
        if dv.cardinality != descriptor.cardinality:
            raise IndexFormatError(where, 0, f"an inline deletion vector of {descriptor.cardinality} positions (the descriptor's cardinality), found {dv.cardinality}")
        return frame, dv
    path = descriptor.absolute_path(table_root)
    key = os.fspath(path)
    data = files.get(key) if files is not None else None
    if data is None:
        data = path.read_bytes()
        if files is not None:
            files[key] = data
    return read_frame(data, descriptor, source=key, verify_crc=verify_crc)


def scan_dv_file(
    data_or_path: bytes | bytearray | memoryview | str | os.PathLike[str], *, source: str | None = None, verify_crc: bool = True
) -> list[tuple[int, DeletionVector]]:
    """Every ``(offset of the size field, DV)`` of a DV file, walking it from offset 1."""
    name = source or (os.fspath(data_or_path) if isinstance(data_or_path, (str, os.PathLike)) else "<bytes>")
    frames = scan_deletion_file(data_or_path, source=name, verify_crc=verify_crc)
    for offset, dv in frames:
        if not dv.bitmap64:
            raise IndexFormatError(name, offset + 4, f"Delta deletion vector magic {DV_MAGIC.hex()}, found a 32-bit Paimon frame")
    return frames


# ---------------------------------------------------------------------------------------------
# Writing


DvFrame = tuple[str, bytes | bytearray | memoryview, int]
"""(data file, a 64-bit DV frame, its cardinality), copied as it is."""


def encode_dv_file(frames: Iterable[bytes | bytearray | memoryview]) -> tuple[bytes, list[int]]:
    """A DV file of the frames as given, and the offset of each frame's size field."""
    parts: list = [bytes([FILE_VERSION])]
    offsets = []
    pos = 1
    for frame in frames:
        frame = memoryview(frame).cast("B")
        if len(frame) < 12 or frame[4:8] != DV_MAGIC or _U32_BE.unpack_from(frame, 0)[0] != len(frame) - 8:
            raise ValueError(f"frame #{len(offsets)} is not one 64-bit deletion vector frame")
        offsets.append(pos)
        parts.append(frame)
        pos += len(frame)
    return b"".join(parts), offsets


def write_dv_file(
    table_root: str | os.PathLike[str],
    frames: Iterable[DvFrame],
    *,
    random_prefix: str = "",
    file_uuid: uuid_module.UUID | None = None,
) -> list[tuple[str, DeletionVectorDescriptor]]:
    """Writes one DV file of ``frames`` (in the given order) under the table root as Delta
    names it, atomically; returns each data file's ``u`` descriptor."""
    frames = list(frames)
    content, offsets = encode_dv_file(frame for _, frame, _ in frames)
    return write_encoded_dv_file(table_root, frames, content, offsets, random_prefix=random_prefix, file_uuid=file_uuid or uuid_module.uuid4())


def write_encoded_dv_file(
    table_root: str | os.PathLike[str],
    frames: Sequence[DvFrame],
    content: bytes,
    offsets: Sequence[int],
    *,
    random_prefix: str,
    file_uuid: uuid_module.UUID,
) -> list[tuple[str, DeletionVectorDescriptor]]:
    """:func:`write_dv_file` of ``frames`` already encoded (``content``, ``offsets``: what
    :func:`encode_dv_file` returned for them), for a name derived from the content."""
    directory = Path(table_root) / random_prefix if random_prefix else Path(table_root)
    write_atomically(directory / file_name(file_uuid), content)
    return [
        (name, DeletionVectorDescriptor.uuid_relative(file_uuid, len(frame) - 8, cardinality, offset, random_prefix))
        for (name, frame, cardinality), offset in zip(frames, offsets)
    ]
