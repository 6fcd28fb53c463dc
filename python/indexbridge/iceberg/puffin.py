"""Puffin files (Iceberg's container for indexes and statistics) and Iceberg v3 deletion vectors.

Layout (https://iceberg.apache.org/puffin-spec/, spec/lakehouse-dv.md §2)::

    "PFA1"                          magic, offset 0
    blob 1                          at offset 4, then back to back (as Iceberg writes them;
    blob 2                          a reader goes by the footer's offsets only)
    ...
    "PFA1"                          footer magic, at footer_offset
    payload                         UTF-8 JSON FileMetadata, LZ4-framed if flags bit 0 is set
    u32 LE payload size             (after compression)
    4 bytes flags                   byte 0 bit 0: payload compressed; every other bit reserved (0)
    "PFA1"                          last 4 bytes of the file

    FileMetadata = {"blobs": [BlobMetadata...], "properties"?: {str: str}}
    BlobMetadata = {"type", "fields": [int...], "snapshot-id", "sequence-number", "offset",
                    "length", "compression-codec"? ("lz4" | "zstd"), "properties"?: {str: str}}

A blob of a codec is one LZ4 frame / one zstd frame with its content size. Readers skip blob
types they do not know.

A ``deletion-vector-v1`` blob (Iceberg v3) is Paimon's 64-bit DV frame byte for byte
(:mod:`indexbridge.paimon.dv`: ``u32 BE length(magic+bitmap) | d1 d3 39 64 | portable 64-bit
roaring | u32 BE CRC-32``), never compressed; its footer entry, as ``BaseDVFileWriter`` writes it::

    {"type":"deletion-vector-v1","fields":[2147483645],"snapshot-id":-1,"sequence-number":-1,
     "offset":O,"length":L,"properties":{"referenced-data-file":"<data file>","cardinality":"<n>"}}

and the file's properties are ``{"created-by": ...}``. The footer JSON is Jackson's compact
output: keys in that order, no spaces, ``\\uXXXX`` escapes in upper-case hex. Iceberg's manifest
entry of the DV (its ``DeleteFile``) points at the blob: ``content_offset`` = O (the length
field), ``content_size_in_bytes`` = L (the whole frame), ``record_count`` = the cardinality.
Blobs follow the iteration order of Iceberg's ``HashMap`` of data file paths.

Unlike pyiceberg, every read checks the magics, the flags, the footer's offsets against the
file, and for DVs the frame's magic, CRC (``verify_crc=False`` to skip), length and the
recorded cardinality.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cramjam
import lz4.frame

from indexbridge.bytes import ByteReader
from indexbridge.errors import IndexFormatError
from indexbridge.paimon.dv import DeletionVector
from indexbridge.paimon.javaorder import hashmap_compute_if_absent_order, java_string_compare, java_string_hash
from indexbridge.storage import write_atomically

MAGIC = b"PFA1"
FOOTER_STRUCT_LENGTH = 12  # payload size, flags, magic
FLAG_FOOTER_COMPRESSED = 0x01  # byte 0, bit 0
DV_BLOB_TYPE = "deletion-vector-v1"
ROW_POSITION_FIELD_ID = 2147483645  # MetadataColumns.ROW_POSITION, the field of a DV blob
REFERENCED_DATA_FILE = "referenced-data-file"
CARDINALITY = "cardinality"
CODECS = ("lz4", "zstd")
DEFAULT_CREATED_BY = "indexbridge 0.1.0"
_DV_MAGIC = bytes.fromhex("d1d33964")
_U32_LE = struct.Struct("<I")
_U32_BE = struct.Struct(">I")
# The largest expansion a frame of each codec can declare per input byte (an LZ4 sequence
# produces at most ~255 bytes per byte; a zstd RLE block 128 KiB from 4): larger declared
# content sizes are rejected before anything is allocated.
_MAX_RATIO = {"lz4": 256, "zstd": 1 << 15}


@dataclass(frozen=True)
class BlobMetadata:
    """One entry of the footer's ``blobs``."""

    type: str
    fields: tuple[int, ...]
    snapshot_id: int
    sequence_number: int
    offset: int
    length: int
    compression_codec: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict:
        out: dict = {
            "type": self.type,
            "fields": list(self.fields),
            "snapshot-id": self.snapshot_id,
            "sequence-number": self.sequence_number,
            "offset": self.offset,
            "length": self.length,
        }
        if self.compression_codec is not None:
            out["compression-codec"] = self.compression_codec
        if self.properties:
            out["properties"] = dict(self.properties)
        return out


@dataclass(frozen=True)
class FileMetadata:
    """The footer of a Puffin file, and where it sits."""

    blobs: tuple[BlobMetadata, ...]
    properties: Mapping[str, str]
    footer_offset: int
    footer_compressed: bool
    file_size: int


@dataclass(frozen=True)
class Blob:
    """A blob to write: its bytes (uncompressed) and its footer fields."""

    type: str
    fields: tuple[int, ...]
    data: bytes | bytearray | memoryview
    snapshot_id: int = -1
    sequence_number: int = -1
    compression_codec: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DeleteFile:
    """What Iceberg's manifest records for one DV (``DeleteFile`` of format PUFFIN)."""

    file_path: str
    file_size_in_bytes: int
    content_offset: int
    content_size_in_bytes: int
    referenced_data_file: str
    record_count: int

    def to_json(self) -> dict:
        return {
            "file_path": self.file_path,
            "file_size_in_bytes": self.file_size_in_bytes,
            "content_offset": self.content_offset,
            "content_size_in_bytes": self.content_size_in_bytes,
            "referenced_data_file": self.referenced_data_file,
            "record_count": self.record_count,
        }


# ---------------------------------------------------------------------------------------------
# Reading


def _load(data_or_path: bytes | bytearray | memoryview | str | os.PathLike[str], source: str | None) -> tuple[memoryview, str]:
    if isinstance(data_or_path, (str, os.PathLike)):
        return memoryview(Path(data_or_path).read_bytes()), source or os.fspath(data_or_path)
    return memoryview(data_or_path).cast("B"), source or "<bytes>"


def read_file_metadata(data: bytes | bytearray | memoryview, source: str = "<bytes>") -> FileMetadata:
    """The footer of the Puffin file ``data``: magics, flags, payload (LZ4 if compressed), JSON."""
    data = memoryview(data).cast("B")
    size = len(data)
    minimum = len(MAGIC) + len(MAGIC) + FOOTER_STRUCT_LENGTH
    if size < minimum:
        raise IndexFormatError(source, 0, f"a Puffin file of at least {minimum} bytes (magic, footer magic, footer struct), found {size}")
    if data[:4] != MAGIC:
        raise IndexFormatError(source, 0, f"Puffin magic {MAGIC.hex()} ('PFA1'), found {bytes(data[:4]).hex()}")
    if data[size - 4 :] != MAGIC:
        raise IndexFormatError(source, size - 4, f"Puffin footer magic {MAGIC.hex()} at the end of the file, found {bytes(data[size - 4:]).hex()}")
    flags_at = size - 8
    flags = bytes(data[flags_at:flags_at + 4])
    if flags[0] & ~FLAG_FOOTER_COMPRESSED or any(flags[1:]):
        raise IndexFormatError(source, flags_at, f"Puffin footer flags with only byte 0 bit 0 (compressed payload) set, found {flags.hex()}")
    compressed = bool(flags[0] & FLAG_FOOTER_COMPRESSED)
    (payload_size,) = _U32_LE.unpack_from(data, size - 12)
    footer_offset = size - FOOTER_STRUCT_LENGTH - payload_size - len(MAGIC)
    if footer_offset < len(MAGIC):
        raise IndexFormatError(source, size - 12, f"a footer payload size of at most {size - minimum} bytes (the file's size), found {payload_size}")
    if data[footer_offset:footer_offset + 4] != MAGIC:
        raise IndexFormatError(source, footer_offset, f"Puffin footer magic {MAGIC.hex()} before the footer payload, found {bytes(data[footer_offset:footer_offset + 4]).hex()}")
    payload_at = footer_offset + 4
    payload = data[payload_at:payload_at + payload_size]
    if compressed:
        payload = _decompress("lz4", payload, source, payload_at)
    try:
        footer = json.loads(bytes(payload).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise IndexFormatError(source, payload_at, f"a UTF-8 JSON footer payload ({error})") from None
    blobs = _parse_footer(footer, source, payload_at, footer_offset)
    properties = _string_map(footer, "properties", source, payload_at, "file")
    return FileMetadata(blobs, properties, footer_offset, compressed, size)


def _parse_footer(footer: object, source: str, at: int, footer_offset: int) -> tuple[BlobMetadata, ...]:
    if not isinstance(footer, dict) or not isinstance(footer.get("blobs"), list):
        raise IndexFormatError(source, at, 'a footer JSON object with a "blobs" array')
    blobs = []
    for i, b in enumerate(footer["blobs"]):
        what = f"blob {i}"
        if not isinstance(b, dict):
            raise IndexFormatError(source, at, f"{what} of the footer as a JSON object")
        def integer(key: str, low: int = -(1 << 63), *, required: bool = True) -> int:
            value = b.get(key)
            if value is None and not required:
                return -1
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value < 1 << 63:
                raise IndexFormatError(source, at, f'{what}: "{key}" as an integer >= {low}, found {value!r}')
            return value
        kind = b.get("type")
        if not isinstance(kind, str):
            raise IndexFormatError(source, at, f'{what}: "type" as a string, found {kind!r}')
        fields = b.get("fields")
        if not isinstance(fields, list) or not all(isinstance(f, int) and not isinstance(f, bool) and -(1 << 31) <= f < 1 << 31 for f in fields):
            raise IndexFormatError(source, at, f'{what}: "fields" as an array of int field ids, found {fields!r}')
        offset, length = integer("offset", 0), integer("length", 0)
        if offset < len(MAGIC) or offset + length > footer_offset:
            raise IndexFormatError(source, at, f"{what}: a blob between the magic and the footer (offsets 4..{footer_offset}), found offset {offset}, length {length}")
        codec = b.get("compression-codec")
        if codec is not None and not isinstance(codec, str):
            raise IndexFormatError(source, at, f'{what}: "compression-codec" as a string, found {codec!r}')
        blobs.append(BlobMetadata(
            kind, tuple(fields), integer("snapshot-id"), integer("sequence-number"), offset, length, codec,
            _string_map(b, "properties", source, at, what),
        ))  # fmt: skip
    return tuple(blobs)


def _string_map(obj: dict, key: str, source: str, at: int, what: str) -> dict[str, str]:
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise IndexFormatError(source, at, f'{what}: "{key}" as a JSON object of strings')
    return value


def _frame_content_size(codec: str, data: memoryview) -> int | None:
    """The content size an LZ4 / zstd frame header declares (None if absent or unreadable)."""
    try:
        if codec == "lz4":  # magic, FLG, BD, [content size u64 LE if FLG bit 3]
            if len(data) >= 15 and bytes(data[:4]) == b"\x04\x22\x4d\x18" and data[4] & 0x08:
                return struct.unpack_from("<Q", data, 6)[0]
            return None
        if len(data) < 6 or bytes(data[:4]) != b"\x28\xb5\x2f\xfd":  # zstd frame header
            return None
        fhd = data[4]
        size_flag, single_segment, dict_flag = fhd >> 6, (fhd >> 5) & 1, fhd & 3
        pos = 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[dict_flag]
        width = (1 if single_segment else 0, 2, 4, 8)[size_flag]
        if width == 0 or pos + width > len(data):
            return None
        value = int.from_bytes(data[pos:pos + width], "little")
        return value + 256 if width == 2 else value
    except (IndexError, struct.error):
        return None


def _decompress(codec: str, data: memoryview, source: str, at: int) -> bytes:
    """One LZ4 or zstd frame with its declared content size, checked before allocating."""
    if codec not in CODECS:
        raise IndexFormatError(source, at, f"a Puffin compression codec of {', '.join(CODECS)}, found {codec!r}")
    declared = _frame_content_size(codec, data)
    if declared is None:
        raise IndexFormatError(source, at, f"one {codec} frame with its content size (Puffin's {codec} codec)")
    if declared > _MAX_RATIO[codec] * len(data) + 64:
        raise IndexFormatError(source, at, f"a {codec} frame of at most {_MAX_RATIO[codec]}x its {len(data)} bytes, found a declared size of {declared}")
    try:
        if codec == "lz4":
            out = lz4.frame.decompress(bytes(data))
        else:
            out = bytes(cramjam.zstd.decompress(bytes(data), output_len=declared))
    except Exception as error:  # lz4's RuntimeError, cramjam's DecompressionError
        raise IndexFormatError(source, at, f"a valid {codec} frame ({error})") from None
    if len(out) != declared:
        raise IndexFormatError(source, at, f"a {codec} frame of {declared} bytes as declared, found {len(out)}")
    return out


def read_blob(data: bytes | bytearray | memoryview, blob: BlobMetadata, source: str = "<bytes>") -> bytes:
    """A blob's bytes, decompressed by its codec."""
    data = memoryview(data).cast("B")
    if blob.offset + blob.length > len(data):
        raise IndexFormatError(source, blob.offset, f"a blob of {blob.length} bytes inside the file of {len(data)} bytes")
    raw = data[blob.offset:blob.offset + blob.length]
    if blob.compression_codec is None:
        return bytes(raw)
    return _decompress(blob.compression_codec, raw, source, blob.offset)


def read_puffin(
    data_or_path: bytes | bytearray | memoryview | str | os.PathLike[str], *, source: str | None = None
) -> tuple[FileMetadata, list[bytes]]:
    """The footer and every blob (decompressed), whatever their types."""
    data, source = _load(data_or_path, source)
    meta = read_file_metadata(data, source)
    return meta, [read_blob(data, blob, source) for blob in meta.blobs]


def read_deletion_vector(
    data: bytes | bytearray | memoryview,
    offset: int,
    length: int,
    *,
    source: str = "<bytes>",
    cardinality: int | None = None,
    verify_crc: bool = True,
) -> DeletionVector:
    """The DV at a manifest entry's ``content_offset`` / ``content_size_in_bytes`` (how Iceberg's
    scan reads it: no footer). The frame must fill ``length`` exactly and be 64-bit."""
    data = memoryview(data).cast("B")
    if offset < 0 or length < 0 or offset + length > len(data):
        raise IndexFormatError(source, max(offset, 0), f"a deletion vector of {length} bytes inside the file of {len(data)} bytes, at offset {offset}")
    if length >= 4 and _U32_BE.unpack_from(data, offset)[0] != length - 8:
        size = _U32_BE.unpack_from(data, offset)[0]
        raise IndexFormatError(source, offset, f"a deletion vector frame of {length} bytes as recorded (size field {length - 8}), found size field {size} ({size + 8} bytes)")
    if length >= 8 and data[offset + 4:offset + 8] != _DV_MAGIC:
        raise IndexFormatError(source, offset + 4, f"deletion-vector-v1 magic {_DV_MAGIC.hex()}, found {bytes(data[offset + 4:offset + 8]).hex()}")
    dv = DeletionVector.deserialize(data[:offset + length], source=source, offset=offset, expected_length=length, verify_crc=verify_crc)
    if cardinality is not None and dv.cardinality != cardinality:
        raise IndexFormatError(source, offset, f"a deletion vector of {cardinality} positions as recorded, found {dv.cardinality}")
    return dv


def read_deletion_vectors(
    data_or_path: bytes | bytearray | memoryview | str | os.PathLike[str],
    *,
    source: str | None = None,
    verify_crc: bool = True,
) -> list[tuple[BlobMetadata, DeletionVector]]:
    """Every ``deletion-vector-v1`` blob of a Puffin file through its footer (other blob types
    are skipped): uncompressed, with a referenced data file and a cardinality that matches."""
    data, source = _load(data_or_path, source)
    meta = read_file_metadata(data, source)
    out = []
    for blob in meta.blobs:
        if blob.type != DV_BLOB_TYPE:
            continue
        if blob.compression_codec is not None:
            raise IndexFormatError(source, blob.offset, f"an uncompressed deletion-vector-v1 blob, found codec {blob.compression_codec!r}")
        if not blob.properties.get(REFERENCED_DATA_FILE):
            raise IndexFormatError(source, blob.offset, f'a deletion-vector-v1 blob with the property "{REFERENCED_DATA_FILE}"')
        recorded = blob.properties.get(CARDINALITY)
        if recorded is None or not recorded.isdigit():
            raise IndexFormatError(source, blob.offset, f'a deletion-vector-v1 blob with a decimal "{CARDINALITY}" property, found {recorded!r}')
        out.append((blob, read_deletion_vector(data, blob.offset, blob.length, source=source, cardinality=int(recorded), verify_crc=verify_crc)))
    return out


# ---------------------------------------------------------------------------------------------
# Writing


def _json_string(s: str) -> str:
    """``s`` as Jackson writes a JSON string: \\" \\\\ \\b \\t \\n \\f \\r, other controls as
    \\u00XX (upper-case hex), everything else as is (UTF-8 later)."""
    if s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'
    out = []
    for ch in s:
        code = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif code < 0x20:
            out.append({8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(code) or f"\\u{code:04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _json(value: object) -> str:
    """Compact JSON as Jackson's generator writes Iceberg's footer (insertion order, no spaces)."""
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, bool) or value is None:
        raise TypeError(f"no such value in a Puffin footer: {value!r}")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{_json_string(k)}:{_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_json(v) for v in value) + "]"
    raise TypeError(f"no such value in a Puffin footer: {value!r}")


def footer_json(blobs: Sequence[BlobMetadata], properties: Mapping[str, str]) -> bytes:
    """The footer payload (uncompressed) Iceberg's ``FileMetadataParser.toJson`` writes."""
    footer: dict = {"blobs": [b.to_json() for b in blobs]}
    if properties:
        footer["properties"] = dict(properties)
    # json.dumps writes what Jackson writes except for \u escapes (lower- vs upper-case hex):
    # take the fast writer unless its output has one.
    text = json.dumps(footer, separators=(",", ":"), ensure_ascii=False)
    return (_json(footer) if "\\u" in text else text).encode("utf-8")


def _compress(codec: str, data: bytes | memoryview) -> bytes:
    if codec == "zstd":
        return bytes(cramjam.zstd.compress(bytes(data)))
    if codec == "lz4":
        return lz4.frame.compress(bytes(data), store_size=True)
    raise ValueError(f"a Puffin compression codec is one of {', '.join(CODECS)}, got {codec!r}")


def encode_puffin(
    blobs: Iterable[Blob], properties: Mapping[str, str] = {}, *, compress_footer: bool = False
) -> tuple[bytes, list[BlobMetadata]]:
    """A whole Puffin file as ``PuffinWriter`` writes it: magic, the blobs back to back (each
    compressed by its codec), the footer (LZ4-framed if ``compress_footer``)."""
    parts = [MAGIC]
    pos = len(MAGIC)
    written = []
    for blob in blobs:
        raw = blob.data if blob.compression_codec is None else _compress(blob.compression_codec, blob.data)
        written.append(BlobMetadata(blob.type, tuple(blob.fields), blob.snapshot_id, blob.sequence_number, pos, len(raw),
                                    blob.compression_codec, dict(blob.properties)))  # fmt: skip
        parts.append(raw)
        pos += len(raw)
    payload = footer_json(written, properties)
    if compress_footer:
        payload = _compress("lz4", payload)
    flags = bytes([FLAG_FOOTER_COMPRESSED if compress_footer else 0, 0, 0, 0])
    parts += [MAGIC, payload, _U32_LE.pack(len(payload)), flags, MAGIC]
    return b"".join(parts), written


DvFrame = tuple[str, bytes | bytearray | memoryview, int]
"""(referenced data file, a 64-bit DV frame, its cardinality): a blob to be, taken as it is."""


def blob_order(frames: Sequence[DvFrame]) -> list[str]:
    """The order ``BaseDVFileWriter`` writes blobs: its ``HashMap`` of paths, which sees one
    ``computeIfAbsent`` per deleted position (the data files in turn, each once per position). Only
    whether a call follows the last insertion matters beyond the distinct paths (it may perform a
    resize the insertion made due: at 13, 25, 49 ... files), so the calls reduce to the paths plus
    the last one again when its file has two or more positions."""
    calls = [name for name, _, _ in frames]
    if frames and frames[-1][2] >= 2:
        calls.append(frames[-1][0])
    return hashmap_compute_if_absent_order(calls, java_string_hash, java_string_compare)


def _check_frame(frame: memoryview, name: str) -> None:
    if len(frame) < 12 or frame[4:8] != _DV_MAGIC or _U32_BE.unpack_from(frame, 0)[0] != len(frame) - 8:
        raise ValueError(f"the deletion vector of {name} is not one 64-bit (deletion-vector-v1) frame")


def dv_frames(dvs: Mapping[str, DeletionVector] | Iterable[tuple[str, DeletionVector]]) -> list[DvFrame]:
    """Frames of DVs: 64-bit DVs serialize as they are, 32-bit ones as the 64-bit DV of the same
    positions (run-optimised, as Paimon's ``Bitmap64DeletionVector`` would write them)."""
    items = dvs.items() if isinstance(dvs, Mapping) else dvs
    return [(name, to_bitmap64(dv).serialize(), dv.cardinality) for name, dv in items]


def to_bitmap64(dv: DeletionVector) -> DeletionVector:
    """``dv`` as a 64-bit DV (itself if it is one)."""
    if dv.bitmap64:
        return dv
    return DeletionVector.from_positions(dv.positions().view("int64"), bitmap64=True)


def encode_deletion_vector_puffin(
    frames: Iterable[DvFrame], *, created_by: str = DEFAULT_CREATED_BY, order: str = "hashmap"
) -> tuple[bytes, list[BlobMetadata]]:
    """A Puffin file of ``deletion-vector-v1`` blobs as Iceberg's ``BaseDVFileWriter`` writes
    it, the frames copied as they are. ``order="hashmap"``: blobs in the order of Iceberg's
    HashMap of data file paths; ``"given"``: as given."""
    frames = list(frames)
    by_name = {name: (memoryview(frame).cast("B"), cardinality) for name, frame, cardinality in frames}
    if len(by_name) != len(frames):
        raise ValueError("each data file may have only one deletion vector")
    if order == "hashmap":
        names = blob_order(frames)
    elif order == "given":
        names = [name for name, _, _ in frames]
    else:
        raise ValueError(f"order must be 'hashmap' or 'given', got {order!r}")
    blobs = []
    for name in names:
        frame, cardinality = by_name[name]
        _check_frame(frame, name)
        blobs.append(Blob(DV_BLOB_TYPE, (ROW_POSITION_FIELD_ID,), frame, -1, -1, None,
                          {REFERENCED_DATA_FILE: name, CARDINALITY: str(cardinality)}))  # fmt: skip
    return encode_puffin(blobs, {"created-by": created_by})


def write_deletion_vector_puffin(
    path: str | os.PathLike[str],
    frames: Iterable[DvFrame],
    *,
    created_by: str = DEFAULT_CREATED_BY,
    order: str = "hashmap",
    file_path: str | None = None,
) -> list[DeleteFile]:
    """Writes :func:`encode_deletion_vector_puffin` to ``path`` atomically; returns the manifest
    entries Iceberg needs per data file (``file_path`` defaults to the absolute ``path``)."""
    content, blobs = encode_deletion_vector_puffin(frames, created_by=created_by, order=order)
    write_atomically(path, content)
    return delete_files(file_path or os.path.abspath(path), len(content), blobs)


def delete_files(location: str, file_size: int, blobs: Sequence[BlobMetadata]) -> list[DeleteFile]:
    """The manifest entries Iceberg needs per data file of the deletion-vector ``blobs`` of the
    Puffin file at ``location`` of ``file_size`` bytes."""
    return [
        DeleteFile(location, file_size, b.offset, b.length, b.properties[REFERENCED_DATA_FILE], int(b.properties[CARDINALITY]))
        for b in blobs
    ]
