"""Paimon deletion vectors and deletion files (spec/paimon.md §2).

A deletion vector (DV) is the set of deleted row positions of one data file. Both widths share
one frame (``DeletionVector.serializeToBytes``)::

    i32 BE  size        length of DATA
    DATA    size bytes  magic || bitmap
    i32 BE  crc         CRC-32 of DATA (not of the size field)

32-bit DV (``BitmapDeletionVector``, §2.1), positions 0 .. 2^31-1::

    DATA = i32 BE magic 1581511376 (5e 43 f2 d0) || roaring32(positions)

64-bit DV (``Bitmap64DeletionVector``, Iceberg ``deletion-vector-v1``, §2.2), positions
0 .. 0x7FFFFFFE_80000000::

    DATA = i32 LE magic 1681511377 (d1 d3 39 64)
           i64 LE count                      written dense: count = max key + 1
           count x (i32 LE key, roaring32(low 32 bits of the positions whose high half is key))

    The writer emits every key 0 .. max key (gaps as 8-byte empty bitmaps); the reader also
    accepts sparse, strictly ascending keys in 0 .. 2^31-2.

``roaring32`` is the portable 32-bit roaring serialization, run-optimised (§1.1, little-endian
even inside the big-endian frame). The length Paimon records in the index manifest (§2.5) is
``size`` for a 32-bit DV and the whole frame ``size + 8`` for a 64-bit DV.

Deletion file (index type ``DELETION_VECTORS``, §2.4)::

    u8 version = 1
    DV frame of data file #1      at offset 1
    DV frame of data file #2
    ...

No names, count or footer: the manifest's ranges ``(data file, offset of the size field, length,
cardinality)`` say where each frame is. Frames follow the iteration order of the writer's map,
in practice a ``java.util.HashMap`` (``BucketedDvMaintainer``). An empty map gives the 1-byte
file ``01``. A rolling writer closes the file once the bytes written (version byte included)
exceed the target size, after the frame that crossed it.

Unlike Paimon, readers verify the CRC by default (``verify_crc=False`` to skip) and require the
roaring payload to fill DATA exactly.
"""

from __future__ import annotations

import operator
import os
import struct
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
from pyroaring import BitMap

from indexbridge.bytes import ByteReader, crc32
from indexbridge.errors import IndexFormatError
from indexbridge.paimon.javaorder import hashmap_put_order, java_string_compare, java_string_hash
from indexbridge.roaring import bitmap_of, read_roaring32, read_roaring32_at, serialize32, uint32_array
from indexbridge.storage import write_atomically

BITMAP32_MAGIC = 1581511376  # BitmapDeletionVector.MAGIC_NUMBER, written big-endian
BITMAP64_MAGIC = 1681511377  # Bitmap64DeletionVector.MAGIC_NUMBER, written little-endian
MAX_POSITION_32 = (1 << 31) - 1  # RoaringBitmap32.MAX_VALUE
MAX_POSITION_64 = ((1 << 31) - 2) << 32 | 0x80000000  # OptimizedRoaringBitmap64.MAX_VALUE
MAX_KEY_64 = (1 << 31) - 2
DELETION_FILE_VERSION = 1
MAX_FRAME_BYTES = (1 << 31) - 1  # "Can't serialize index > 2GB"

_MAGIC32_BYTES = struct.pack(">i", BITMAP32_MAGIC)
_MAGIC64_BYTES = struct.pack("<i", BITMAP64_MAGIC)
_EMPTY_ROARING = BitMap().serialize()
_MIN_BITMAP64_ENTRY_BYTES = 4 + len(_EMPTY_ROARING)  # i32 key + empty roaring
_I32_BE = struct.Struct(">i")
_FRAME_HEAD = struct.Struct(">iI")  # size, 32-bit magic
_U32_BE = struct.Struct(">I")
_I32_LE = struct.Struct("<i")
_I64_LE = struct.Struct("<q")
_LOW32 = 0xFFFFFFFF


class DeletionVector:
    """A mutable set of deleted row positions, 32-bit or 64-bit (``bitmap64``).

    Positions are held in 32-bit pyroaring bitmaps keyed by the high half of the position, like
    Paimon's ``OptimizedRoaringBitmap64``; a 32-bit DV only ever uses key 0. The key map is
    sparse so that a sparse 64-bit input cannot force a large allocation; ``serialize`` writes
    the dense key range as Paimon does.
    """

    __slots__ = ("bitmap64", "_bitmaps")

    def __init__(self, bitmap64: bool = False):
        self.bitmap64 = bool(bitmap64)
        self._bitmaps: dict[int, BitMap] = {}

    @classmethod
    def empty(cls, bitmap64: bool = False) -> DeletionVector:
        return cls(bitmap64)

    @classmethod
    def from_positions(cls, positions: Iterable[int] | np.ndarray, bitmap64: bool = False) -> DeletionVector:
        dv = cls(bitmap64)
        dv.delete_all(positions)
        return dv

    @property
    def max_position(self) -> int:
        return MAX_POSITION_64 if self.bitmap64 else MAX_POSITION_32

    def _range_error(self, position: object) -> ValueError:
        width = "64-bit" if self.bitmap64 else "32-bit"
        return ValueError(f"position {position} is outside the {width} deletion vector range 0..{self.max_position}")

    def _checked(self, position: int) -> int:
        position = operator.index(position)
        if not 0 <= position <= self.max_position:
            raise self._range_error(position)
        return position

    def _checked_array(self, positions: Iterable[int] | np.ndarray) -> np.ndarray:
        """Positions as a validated, strictly ascending int64 array: CRoaring bulk-adds sorted
        input ~50x faster, and a run of distinct positions is seen from its ends
        (:func:`~indexbridge.roaring.bitmap_of`)."""
        values = positions if isinstance(positions, np.ndarray) else list(positions)
        arr = np.asarray(values).ravel()
        if arr.size == 0:
            return np.empty(0, np.int64)
        if arr.dtype.kind not in "iu":
            if isinstance(values, np.ndarray):
                raise ValueError(f"positions must be an integer array, got dtype {arr.dtype}")
            # numpy turns Python ints beyond int64 into float64 or object: find the culprit exactly.
            for p in values:
                self._checked(p)
        if (arr[1:] <= arr[:-1]).any():  # (the method: np.any adds 5 us a call)
            arr = np.unique(arr)
        if arr[0] < 0:
            raise self._range_error(arr[0])
        if arr[-1] > self.max_position:
            raise self._range_error(arr[-1])
        if arr.dtype == np.uint64:  # in range, so the same bits as int64: no copy
            return arr.view(np.int64)
        return arr.astype(np.int64, copy=False)

    def _bitmap(self, key: int) -> BitMap:
        bm = self._bitmaps.get(key)
        if bm is None:
            bm = self._bitmaps[key] = BitMap()
        return bm

    def delete(self, position: int) -> None:
        position = self._checked(position)
        self._bitmap(position >> 32).add(position & _LOW32)

    def delete_all(self, positions: Iterable[int] | np.ndarray) -> None:
        arr = self._checked_array(positions)
        if arr.size == 0:
            return
        # sorted, so the positions of each key (high half) form one slice
        if int(arr[0]) >> 32 == int(arr[-1]) >> 32:
            starts = [0]
        else:
            starts = [0, *(np.flatnonzero(np.diff(arr >> 32)) + 1).tolist()]
        for start, end in zip(starts, [*starts[1:], arr.size]):
            key = int(arr[start]) >> 32
            low = arr[start:end] & _LOW32 if key else arr[start:end]
            bm = self._bitmaps.get(key)
            if bm is None:  # a new bitmap: runs of positions are added whole
                self._bitmaps[key] = bitmap_of(low, distinct_ascending=True)
            else:
                bm.update(uint32_array(low))

    def is_deleted(self, position: int) -> bool:
        position = self._checked(position)
        bm = self._bitmaps.get(position >> 32)
        return bm is not None and (position & _LOW32) in bm

    __contains__ = is_deleted

    @property
    def cardinality(self) -> int:
        return sum(len(bm) for bm in self._bitmaps.values())

    def positions(self) -> np.ndarray:
        """The deleted positions, sorted, as uint64."""
        out = np.empty(self.cardinality, np.uint64)
        start = 0
        for key, bm in sorted(self._bitmaps.items()):
            end = start + len(bm)
            out[start:end] = np.frombuffer(bm.to_array(), np.uint32)
            if key:
                out[start:end] |= np.uint64(key << 32)
            start = end
        return out

    def to_arrow(self) -> pa.Int64Array:
        """The deleted positions, sorted, as an Arrow int64 array (Spark's ``bigint``)."""
        return pa.array(self.positions().view(np.int64))

    def merge(self, other: DeletionVector) -> None:
        """Union ``other`` into this DV; only DVs of the same width can be merged."""
        if not isinstance(other, DeletionVector) or other.bitmap64 != self.bitmap64:
            raise ValueError("only deletion vectors of the same width (bitmap64) can be merged")
        for key, bm in other._bitmaps.items():
            mine = self._bitmaps.get(key)
            if mine is None:
                self._bitmaps[key] = BitMap(bm)
            else:
                mine |= bm

    def _data_parts(self) -> list[bytes]:
        """DATA (magic || bitmap) as a list of byte strings."""
        if not self.bitmap64:
            return [_MAGIC32_BYTES, serialize32(self._bitmaps.get(0, BitMap()))]
        count = max(self._bitmaps) + 1 if self._bitmaps else 0
        serialized = {key: serialize32(bm) for key, bm in self._bitmaps.items()}
        size = (
            len(_MAGIC64_BYTES)
            + _I64_LE.size
            + (count - len(serialized)) * _MIN_BITMAP64_ENTRY_BYTES
            + sum(_I32_LE.size + len(b) for b in serialized.values())
        )
        if size + 8 > MAX_FRAME_BYTES:
            raise ValueError(
                f"a 64-bit deletion vector with keys up to {count - 1} serializes to {size + 8} bytes; "
                "Paimon cannot serialize an index > 2GB"
            )
        parts = [_MAGIC64_BYTES, _I64_LE.pack(count)]
        for key in range(count):
            parts += (_I32_LE.pack(key), serialized.get(key, _EMPTY_ROARING))
        return parts

    def serialize(self) -> bytes:
        """The whole frame: i32 BE size, DATA, i32 BE CRC-32 of DATA."""
        parts = self._data_parts()
        crc = 0
        for part in parts:
            crc = crc32(part, crc)
        return b"".join([_I32_BE.pack(sum(map(len, parts))), *parts, _U32_BE.pack(crc)])

    def index_meta_length(self) -> int:
        """The ``length`` Paimon records for this DV in the index manifest (§2.5)."""
        return _index_meta_length(self.bitmap64, len(self.serialize()))

    @classmethod
    def deserialize(
        cls,
        data: bytes | bytearray | memoryview,
        *,
        source: str = "<bytes>",
        offset: int = 0,
        expected_length: int | None = None,
        verify_crc: bool = True,
    ) -> DeletionVector:
        """Read the frame at ``offset`` (§2.3); ``expected_length`` is the manifest's length."""
        dv = _read_sound_frame32(data, source, offset, expected_length, verify_crc)
        return dv if dv is not None else _read_frame(ByteReader(data, source, offset), expected_length, verify_crc)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DeletionVector):
            return NotImplemented
        if self.bitmap64 != other.bitmap64:
            return False
        empty = BitMap()
        return all(
            self._bitmaps.get(key, empty) == other._bitmaps.get(key, empty)
            for key in self._bitmaps.keys() | other._bitmaps.keys()
        )

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return f"DeletionVector(bitmap64={self.bitmap64}, cardinality={self.cardinality})"


def _index_meta_length(bitmap64: bool, frame_length: int) -> int:
    return frame_length if bitmap64 else frame_length - 8


def _read_sound_frame32(
    data: bytes | bytearray | memoryview, source: str, offset: int, expected_length: int | None, verify_crc: bool
) -> DeletionVector | None:
    """The 32-bit DV frame at ``offset`` when its framing is sound, else ``None`` and
    :func:`_read_frame` reads it again to name what is wrong. Deserializing many small DVs is
    dominated by per-frame Python overhead, so this path does the checks of :func:`_read_frame`
    in as few steps as possible: one unpack for size and magic, the CRC over a view of DATA, and
    :func:`~indexbridge.roaring.read_roaring32_at` for the bitmap, which raises what
    :func:`_read_frame` would raise for it, and must fill DATA exactly."""
    view = data if type(data) is memoryview and data.format == "B" else memoryview(data).cast("B")
    try:
        size, magic = _FRAME_HEAD.unpack_from(view, offset)
        data_end = offset + 4 + size
        if (
            magic != BITMAP32_MAGIC
            or not 0 <= offset <= data_end - 8 <= len(view) - 12
            or (expected_length is not None and expected_length != size)
            or (verify_crc and crc32(view[offset + 4 : data_end]) != _U32_BE.unpack_from(view, data_end)[0])
        ):
            return None
    except struct.error:
        return None
    bitmap, stop = read_roaring32_at(view, offset + 8, data_end, source)
    if stop != data_end:
        return None
    dv = DeletionVector.__new__(DeletionVector)
    dv.bitmap64, dv._bitmaps = False, {0: bitmap}
    return dv


def _read_frame(reader: ByteReader, expected_length: int | None, verify_crc: bool) -> DeletionVector:
    """The DV frame at ``reader.pos`` (§2.3); ``reader`` then stands after its CRC. Fields are
    read with ``struct`` directly: a DV is a few bytes of framing around one bitmap, and
    deserializing many small DVs is dominated by per-field overhead."""
    data, frame_start, end = reader.data, reader.pos, reader.end
    if end - frame_start < 4:
        raise reader.error(f"4 bytes of DV size field, found {end - frame_start}")
    (size,) = _I32_BE.unpack_from(data, frame_start)
    if size < len(_MAGIC32_BYTES):
        raise reader.error(f"a DV size field of at least 4 (magic + bitmap), found {size}", frame_start)
    data_end = frame_start + 4 + size
    if data_end > end:
        raise reader.error(f"{size} bytes of DV data (magic + bitmap), found {end - frame_start - 4}", frame_start + 4)
    if data_end + 4 > end:
        raise reader.error(f"4 bytes of DV CRC-32, found {end - data_end}", data_end)
    magic = data[frame_start + 4 : frame_start + 8]
    if magic == _MAGIC32_BYTES:
        dv = DeletionVector(bitmap64=False)
    elif magic == _MAGIC64_BYTES:
        dv = DeletionVector(bitmap64=True)
    else:
        raise reader.error(
            f"DV magic {_MAGIC32_BYTES.hex()} (32-bit) or {_MAGIC64_BYTES.hex()} (64-bit), found {bytes(magic).hex()}",
            frame_start + 4,
        )
    length = _index_meta_length(dv.bitmap64, size + 8)
    if expected_length is not None and expected_length != length:
        raise reader.error(
            f"a DV of length {expected_length} as recorded in the index manifest, found {length}", frame_start
        )
    if verify_crc:
        (stored_crc,) = _U32_BE.unpack_from(data, data_end)
        actual_crc = crc32(data[frame_start + 4 : data_end])
        if actual_crc != stored_crc:
            raise reader.error(f"DV CRC-32 {actual_crc:#010x} of the DV data, found {stored_crc:#010x}", data_end)
    if dv.bitmap64:
        bitmap = ByteReader(data, reader.source, frame_start + 8, data_end)
        dv._bitmaps = _read_bitmap64(bitmap)
        stop = bitmap.pos
    else:
        bitmap32, stop = read_roaring32_at(data, frame_start + 8, data_end, reader.source)
        dv._bitmaps = {0: bitmap32}
    if stop != data_end:
        raise IndexFormatError(reader.source, stop, f"the DV data to end after the bitmap, found {data_end - stop} more bytes")
    reader.pos = data_end + 4
    return dv


def _read_bitmap64(data: ByteReader) -> dict[int, BitMap]:
    """``OptimizedRoaringBitmap64.deserialize``: count, then (key, roaring32) with ascending keys."""
    count_pos = data.pos
    count = data.i64_le("64-bit bitmap count")
    if not 0 <= count <= (1 << 31) - 1:
        raise data.error(f"a bitmap count in 0..2147483647, found {count}", count_pos)
    if count * _MIN_BITMAP64_ENTRY_BYTES > data.remaining:
        raise data.error(
            f"{count} bitmaps of at least {_MIN_BITMAP64_ENTRY_BYTES} bytes each, found {data.remaining} bytes",
            count_pos,
        )
    bitmaps: dict[int, BitMap] = {}
    last_key = -1
    for _ in range(count):
        key_pos = data.pos
        key = data.i32_le("64-bit bitmap key")
        if not last_key < key <= MAX_KEY_64:
            raise data.error(f"a bitmap key in {last_key + 1}..{MAX_KEY_64} (ascending), found {key}", key_pos)
        bitmaps[key] = read_roaring32(data)
        last_key = key
    return bitmaps


# ---------------------------------------------------------------------------------------------
# Deletion files


@dataclass(frozen=True)
class DeletionVectorRange:
    """One entry of ``_DELETIONS_VECTORS_RANGES``: where a data file's DV sits in a deletion file.

    ``cardinality`` is ``None`` for manifests written before Paimon recorded it.
    """

    data_file: str
    offset: int
    length: int
    cardinality: int | None


@dataclass(frozen=True)
class DeletionFileMeta:
    """The ``IndexFileMeta`` of one deletion file; ``row_count`` is the number of DVs."""

    file_name: str
    file_size: int
    row_count: int
    ranges: tuple[DeletionVectorRange, ...]


DeletionVectors = Mapping[str, DeletionVector] | Sequence[tuple[str, DeletionVector]]


def deletion_file_order(data_files: Iterable[str]) -> list[str]:
    """``java.util.HashMap`` iteration order after ``put`` of each name, as in ``BucketedDvMaintainer``."""
    return hashmap_put_order(data_files, java_string_hash, java_string_compare)


def encode_deletion_files(
    dvs: DeletionVectors,
    *,
    target_size: int | None = None,
    order: str = "hashmap",
) -> list[tuple[bytes, list[DeletionVectorRange]]]:
    """Deletion files as Paimon's ``DeletionVectorIndexFileWriter`` writes them.

    ``order="hashmap"``: frames in HashMap order of the names, inserted in the given order;
    ``order="given"``: as given. ``target_size=None`` writes one file (``writeSingleFile``, an
    empty input gives the file ``01``); otherwise files roll as ``writeWithRolling`` does (an
    empty input gives no file).
    """
    entries = list(dvs.items()) if isinstance(dvs, Mapping) else list(dvs)
    by_name = dict(entries)
    if len(by_name) != len(entries):
        raise ValueError("each data file may have only one deletion vector")
    if order == "hashmap":
        entries = [(name, by_name[name]) for name in deletion_file_order(by_name)]
    elif order != "given":
        raise ValueError(f"order must be 'hashmap' or 'given', got {order!r}")
    if target_size is not None and target_size < 0:
        raise ValueError(f"target_size must be >= 0, got {target_size}")

    files: list[tuple[bytes, list[DeletionVectorRange]]] = []
    parts: list[bytes] = [bytes([DELETION_FILE_VERSION])]
    ranges: list[DeletionVectorRange] = []
    pos = 1
    for name, dv in entries:
        frame = dv.serialize()
        ranges.append(DeletionVectorRange(name, pos, _index_meta_length(dv.bitmap64, len(frame)), dv.cardinality))
        parts.append(frame)
        pos += len(frame)
        if target_size is not None and pos > target_size:
            files.append((b"".join(parts), ranges))
            parts, ranges, pos = [bytes([DELETION_FILE_VERSION])], [], 1
    if target_size is None or ranges:
        files.append((b"".join(parts), ranges))
    return files


def write_deletion_files(
    directory: str | os.PathLike[str],
    dvs: DeletionVectors,
    *,
    target_size: int | None = None,
    order: str = "hashmap",
    file_name: Callable[[int], str] | None = None,
) -> list[DeletionFileMeta]:
    """Encode and write deletion files into ``directory``; returns their index metas.

    ``file_name(n)`` names the n-th file (default ``index-<uuid>-<n>`` with one uuid per call,
    like Paimon's ``IndexPathFactory``). Each file is written under a temporary name and renamed
    into place; on any error the files this call already wrote are removed again.
    """
    directory = Path(directory)
    if file_name is None:
        prefix = f"index-{uuid.uuid4()}"
        file_name = lambda n: f"{prefix}-{n}"  # noqa: E731
    encoded = encode_deletion_files(dvs, target_size=target_size, order=order)
    metas: list[DeletionFileMeta] = []
    written: list[Path] = []
    try:
        for n, (content, ranges) in enumerate(encoded):
            name = file_name(n)
            write_atomically(directory / name, content)
            written.append(directory / name)
            metas.append(DeletionFileMeta(name, len(content), len(ranges), tuple(ranges)))
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    return metas


def _load(data_or_path: bytes | bytearray | memoryview | str | os.PathLike[str], source: str | None) -> ByteReader:
    if isinstance(data_or_path, (str, os.PathLike)):
        return ByteReader(Path(data_or_path).read_bytes(), source or os.fspath(data_or_path))
    return ByteReader(data_or_path, source or "<bytes>")


def _check_version(reader: ByteReader) -> None:
    if not reader.remaining:
        raise reader.error(f"deletion file version byte {DELETION_FILE_VERSION}, found end of file")
    version = reader.u8("deletion file version")
    if version != DELETION_FILE_VERSION:
        raise reader.error(f"deletion file version {DELETION_FILE_VERSION}, found {version}", 0)


def read_deletion_vectors(
    data_or_path: bytes | bytearray | memoryview | str | os.PathLike[str],
    ranges: Iterable[DeletionVectorRange],
    *,
    source: str | None = None,
    verify_crc: bool = True,
) -> dict[str, DeletionVector]:
    """The DVs of a deletion file at the manifest's ranges (seek to each offset, §2.3)."""
    reader = _load(data_or_path, source)
    _check_version(reader)
    result: dict[str, DeletionVector] = {}
    for r in ranges:
        if r.offset < 1:
            raise reader.error(f"a DV offset after the version byte, found {r.offset}", 0)
        dv = DeletionVector.deserialize(
            reader.data, source=reader.source, offset=r.offset, expected_length=r.length, verify_crc=verify_crc
        )
        if r.cardinality is not None and dv.cardinality != r.cardinality:
            raise IndexFormatError(
                reader.source,
                r.offset,
                f"a DV of {r.cardinality} positions as recorded in the index manifest, found {dv.cardinality}",
            )
        if r.data_file in result:
            raise ValueError(f"two ranges for data file {r.data_file!r}")
        result[r.data_file] = dv
    return result


def scan_deletion_file(
    data_or_path: bytes | bytearray | memoryview | str | os.PathLike[str],
    *,
    source: str | None = None,
    verify_crc: bool = True,
) -> list[tuple[int, DeletionVector]]:
    """Every ``(offset, DV)`` of a deletion file, walking the frames from offset 1 (no manifest)."""
    reader = _load(data_or_path, source)
    _check_version(reader)
    frames = []
    while reader.remaining:
        offset = reader.pos
        frames.append((offset, _read_frame(reader, None, verify_crc)))
    return frames
