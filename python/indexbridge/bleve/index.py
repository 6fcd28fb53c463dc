"""bleve v1.0.14 index directories (scorch): read the live documents, write whole indexes.

A directory as ``bleve.NewUsing(path, mapping, "scorch", "scorch", nil)`` or bleve's offline
``Builder`` leaves it::

    index_meta.json       {"storage":"scorch","index_type":"scorch"}   (the one file bleve.Open needs first)
    store/root.bolt       BoltDB (bbolt 1.3, :mod:`indexbridge.bleve.bolt`)
    store/%012x.zap       zap v11 segments

``root.bolt``, as scorch's persister (``prepareBoltSnapshot``) writes it::

    s/                                  snapshots, keyed by epoch (EncodeUvarintAscending)
      <epoch>/
        m/  type = "zap", version = u32 BE 11, 0   segment plugin (5 bytes: a MaxVarintLen32 buffer)
        i/  <key> = <value>                        internal values; "_mapping" = the mapping JSON
        <segment id>/                              one per segment, keyed by EncodeUvarintAscending(id)
            p = "000000000002.zap"                 file name within store/
            d = deleted doc numbers                Go roaring's WriteTo (absent: none deleted)

``EncodeUvarintAscending(v)``: one byte ``136 + v`` for ``v <= 109``, else a byte ``245 + n``
and ``v`` in ``n`` big-endian bytes (``n`` = 1 .. 8). scorch opens the highest epoch; an update
or a delete leaves the old version in its segment and sets its bit in ``d``, so the live
documents are each segment's documents minus ``d``.

Writing (:func:`write_index`, :func:`publish_index`) makes what bleve's offline ``Builder``
makes for one segment, generalised to ``n``: segment ``k`` (0-based, in order) has id ``k`` and
file ``%012x.zap`` of ``k + 2``, the snapshot epoch is 3, the internal values are ``_mapping``
(``json.Marshal`` of the mapping, :meth:`IndexMapping.to_json`), no deletions. Each file goes to a
temporary name and is renamed into place; the segments come first, then ``root.bolt``, then
``index_meta.json``: until the last rename bleve.Open refuses the directory ("metadata missing"),
so a crash never leaves an index bleve would open half-built. An existing index is never
overwritten.

Reading (:class:`BleveIndex`) checks everything it follows: the meta file, the bolt file (pages,
meta checksums), the snapshot's buckets, that each segment named exists and is zap version 11
(bleve v2 writes v15..v17: "unsupported zap version N in FILE"), the deleted bitmaps against the
segments' document counts. Stored fields come back as bleve's search results give them
(``Fields: ["*"]``): text as strings, numbers as floats, datetimes as RFC 3339 strings in UTC
(whole seconds), booleans; a field with several values as a list.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyroaring import BitMap

from indexbridge.bleve.bolt import BoltBucket, BoltFile, write_bolt_file
from indexbridge.bleve.mapping import IndexMapping
from indexbridge.bytes import ByteReader
from indexbridge.errors import IndexFormatError
from indexbridge.roaring import read_roaring32
from indexbridge.storage import write_atomically
from indexbridge.zap.analysis import gc_paused
from indexbridge.zap.segment import FOOTER_SIZE, Segment, build_segment

INDEX_META_FILE = "index_meta.json"
STORE_DIR = "store"
ROOT_BOLT = "root.bolt"
INDEX_META = b'{"storage":"scorch","index_type":"scorch"}'
SEGMENT_TYPE = b"zap"
SEGMENT_VERSION = 11
EPOCH = 3  # what the Builder and scorch after one batch persist
FIRST_FILE_NUMBER = 2
MAPPING_KEY = b"_mapping"
DEFAULT_ROWS_PER_SEGMENT = 100_000

_INT_ZERO, _INT_SMALL, _INT_MAX = 136, 109, 253
_U32_BE = struct.Struct(">I")
_INT64_SIGN = 1 << 63


def encode_uvarint_ascending(value: int) -> bytes:
    """scorch's ``segment.EncodeUvarintAscending`` (order-preserving bolt keys)."""
    if value <= _INT_SMALL:
        return bytes((_INT_ZERO + value,))
    n = (value.bit_length() + 7) // 8
    return bytes((_INT_MAX - 8 + n,)) + value.to_bytes(n, "big")


def decode_uvarint_ascending(key: bytes) -> int | None:
    """The value of a whole key written by :func:`encode_uvarint_ascending`, or None."""
    if not key or key[0] < _INT_ZERO:
        return None
    length = key[0] - _INT_ZERO
    if length <= _INT_SMALL:
        return length if len(key) == 1 else None
    length -= _INT_SMALL
    if length > 8 or len(key) != 1 + length:
        return None
    return int.from_bytes(key[1:], "big")


def segment_file_name(number: int) -> str:
    """scorch's ``zapFileName``."""
    return f"{number:012x}.zap"


# -- stored values as bleve's search results give them -----------------------------------------


def prefix_coded_int64(raw: bytes) -> int | None:
    """``numeric.PrefixCoded.Int64`` (the stored form of numbers and datetimes is shift 0);
    None where Go returns an error (empty, or a shift byte past 63)."""
    if not raw:
        return None
    shift = (raw[0] - 0x20) & 0xFF
    if shift >= 63:
        return None
    bits = 0
    for b in raw[1:]:
        bits = (bits << 7 | b) & 0xFFFF_FFFF_FFFF_FFFF
    value = ((bits << shift) & 0xFFFF_FFFF_FFFF_FFFF) ^ _INT64_SIGN
    return value - (1 << 64) if value >= _INT64_SIGN else value


def int64_to_float64(value: int) -> float:
    if value < 0:
        value ^= 0x7FFF_FFFF_FFFF_FFFF
    return struct.unpack("<d", struct.pack("<q", value))[0]


def rfc3339_utc(nanos: int) -> str:
    """Go's ``time.Unix(0, nanos).UTC().Format(time.RFC3339)``."""
    seconds = nanos // 1_000_000_000
    days, rem = divmod(seconds, 86400)
    y, m, d = _civil_from_days(days)
    return f"{y:04d}-{m:02d}-{d:02d}T{rem // 3600:02d}:{rem % 3600 // 60:02d}:{rem % 60:02d}Z"


def _civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return y + (m <= 2), m, d


def stored_value(kind: str, raw: bytes) -> Any:
    """One stored value as bleve's ``Fields`` give it; None where bleve leaves it out."""
    if kind == "t":
        return bytes(raw).decode("utf-8", "replace")
    if kind == "n":
        value = prefix_coded_int64(bytes(raw))
        return None if value is None else int64_to_float64(value)
    if kind == "d":
        value = prefix_coded_int64(bytes(raw))
        return None if value is None else rfc3339_utc(value)
    if kind == "b":
        return raw[0:1] == b"T" if len(raw) == 1 else None
    return None  # geopoints and unknown types


def segment_documents(segment: Segment, deleted: BitMap | None, fields: Iterable[str] | None = None) -> Iterator[tuple[int, dict]]:
    """(doc number, ``{"_id": .., field: value(s)}``) of the live documents of one segment."""
    wanted = None if fields is None else set(fields)
    names = segment.field_names
    for doc in range(segment.num_docs):
        if deleted is not None and doc in deleted:
            continue
        doc_id, values = segment.stored_record(doc)
        out: dict[str, Any] = {"_id": bytes(doc_id).decode("utf-8", "replace")}
        multi: set[str] = set()
        for v in values:
            if v.field_id >= len(names):
                raise IndexFormatError(segment.source, 0, f"document {doc}: a stored field id below {len(names)}, found {v.field_id}")
            name = names[v.field_id]
            if wanted is not None and name not in wanted:
                continue
            value = stored_value(v.type, v.value)
            if value is None:
                continue
            if name not in out:
                out[name] = value
            elif name in multi:
                out[name].append(value)
            else:
                out[name] = [out[name], value]
                multi.add(name)
        yield doc, out


# -- reading ------------------------------------------------------------------------------------


@dataclass
class SegmentEntry:
    """One segment of the current snapshot."""

    id: int
    file: str  # name within store/
    path: Path
    deleted: BitMap | None
    deleted_bytes: bytes | None  # the ``d`` value as stored
    segment: Segment | None = None

    @property
    def num_docs(self) -> int:
        return self.segment.num_docs

    @property
    def live_docs(self) -> int:
        return self.segment.num_docs - (len(self.deleted) if self.deleted else 0)


def zap_version(path: Path) -> int | None:
    """The version field of a zap footer (the u32 before the CRC), or None for a short file."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < 8:
            return None
        f.seek(size - 8)
        return _U32_BE.unpack(f.read(4))[0]


def read_meta(path: Path) -> dict:
    meta_path = path / INDEX_META_FILE
    try:
        data = meta_path.read_bytes()
    except FileNotFoundError:
        if not path.is_dir():
            raise IndexFormatError(str(path), 0, "a bleve index directory: it does not exist") from None
        raise IndexFormatError(str(meta_path), 0, "a bleve index directory: index_meta.json is missing") from None
    try:
        meta = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise IndexFormatError(str(meta_path), getattr(e, "pos", 0) or 0, f"index_meta.json in JSON: {getattr(e, 'msg', e)}") from None
    if not isinstance(meta, dict):
        raise IndexFormatError(str(meta_path), 0, "index_meta.json: a JSON object")
    index_type = meta.get("index_type") or "upside_down"
    if index_type != "scorch":
        raise IndexFormatError(str(meta_path), 0, f"a scorch index: index_type {index_type!r} is not supported")
    return meta


class BleveIndex:
    """A bleve scorch index directory at its current snapshot. Use as a context manager (segments
    are memory-mapped)."""

    def __init__(self, path: str | os.PathLike, verify_crc: bool = True, open_segments: bool = True) -> None:
        self.path = Path(path)
        self.meta = read_meta(self.path)
        self.store = self.path / STORE_DIR
        self.root_bolt = self.store / ROOT_BOLT
        try:
            data = self.root_bolt.read_bytes()
        except FileNotFoundError:
            raise IndexFormatError(str(self.root_bolt), 0, "a bleve index's store/root.bolt: it is missing") from None
        bolt = BoltFile(data, str(self.root_bolt))
        self.epoch, self.internal, self.segments = self._snapshot(bolt)
        self._mapping: IndexMapping | None = None
        if open_segments:
            try:
                for entry in self.segments:
                    self._open(entry, verify_crc)
            except BaseException:
                self.close()
                raise

    def _error(self, expected: str) -> IndexFormatError:
        return IndexFormatError(str(self.root_bolt), 0, expected)

    def _snapshot(self, bolt: BoltFile) -> tuple[int | None, dict[bytes, bytes], list[SegmentEntry]]:
        snapshots = bolt.get(b"s")
        if snapshots is None:
            return None, {}, []
        if not isinstance(snapshots, BoltBucket):
            raise self._error("a bucket 's' of snapshots, found a value")
        if not snapshots:
            return None, {}, []
        key = max(snapshots)  # scorch opens the last key
        epoch = decode_uvarint_ascending(key)
        snapshot = snapshots[key]
        if epoch is None or not isinstance(snapshot, BoltBucket):
            raise self._error(f"snapshot key {key.hex()}: an epoch bucket (EncodeUvarintAscending)")
        where = f"snapshot {epoch}"
        meta = snapshot.get(b"m")
        if not isinstance(meta, BoltBucket):
            raise self._error(f"{where}: the meta-data bucket 'm'")
        seg_type, seg_version = meta.get(b"type"), meta.get(b"version")
        if not isinstance(seg_version, bytes) or len(seg_version) < 4:
            raise self._error(f"{where}: m/version, a u32 BE segment version")
        version = _U32_BE.unpack_from(seg_version)[0]
        entries: list[SegmentEntry] = []
        internal: dict[bytes, bytes] = {}
        for k, v in snapshot.items():
            if k[:1] == b"i":
                if not isinstance(v, BoltBucket):
                    raise self._error(f"{where}: the internal bucket 'i'")
                internal.update((ik, bytes(iv)) for ik, iv in v.items() if isinstance(iv, bytes))
            elif k[:1] != b"m":
                seg_id = decode_uvarint_ascending(k)
                if seg_id is None or not isinstance(v, BoltBucket):
                    raise self._error(f"{where}: segment key {k.hex()}: a segment bucket keyed by EncodeUvarintAscending")
                file = v.get(b"p")
                if not isinstance(file, bytes) or not file:
                    raise self._error(f"{where}: segment {seg_id}: its path 'p'")
                name = file.decode("utf-8", "replace")
                if "/" in name or "\\" in name or name in (".", ".."):
                    raise self._error(f"{where}: segment {seg_id}: a file name within store/, found {name!r}")
                deleted_bytes = v.get(b"d")
                deleted = None
                if deleted_bytes is not None:
                    if not isinstance(deleted_bytes, bytes):
                        raise self._error(f"{where}: segment {seg_id}: deleted docs 'd', a value")
                    reader = ByteReader(deleted_bytes, f"{self.root_bolt} (s/{epoch}/{seg_id}/d)")
                    bm = read_roaring32(reader)
                    if reader.remaining:
                        raise reader.error(f"a roaring bitmap of {len(deleted_bytes)} bytes, it ends {reader.remaining} bytes early")
                    deleted = bm or None
                entries.append(SegmentEntry(seg_id, name, self.store / name, deleted, deleted_bytes))
        if seg_type != SEGMENT_TYPE:
            raise self._error(f"{where}: segment type 'zap', found {seg_type!r}")
        if version != SEGMENT_VERSION:
            named = str(entries[0].path) if entries else str(self.root_bolt)
            raise self._error(f"unsupported zap version {version} in {named} ({where}); indexbridge reads zap version {SEGMENT_VERSION}")
        return epoch, internal, entries

    def _open(self, entry: SegmentEntry, verify_crc: bool) -> None:
        entry.segment = open_segment(entry, self.root_bolt, verify_crc)

    def close(self) -> None:
        for entry in self.segments:
            if entry.segment is not None:
                entry.segment.close()
                entry.segment = None

    def __enter__(self) -> BleveIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what it holds --

    @property
    def mapping_json(self) -> bytes | None:
        return self.internal.get(MAPPING_KEY)

    @property
    def mapping(self) -> IndexMapping:
        """The index's mapping as bleve reads it (``_mapping``; bleve's default when absent)."""
        if self._mapping is None:
            raw = self.mapping_json
            source = f"{self.root_bolt} (_mapping)"
            self._mapping = IndexMapping.decode(raw, source)
            self._mapping.validate()
        return self._mapping

    @property
    def doc_count(self) -> int:
        """Live documents (bleve's ``DocCount``)."""
        return sum(e.live_docs for e in self.segments)

    def field_names(self) -> list[str]:
        """Every field of every segment, ``_id`` first, in order of first appearance."""
        seen: dict[str, None] = {}
        for entry in self.segments:
            for name in entry.segment.field_names:
                seen.setdefault(name, None)
        return list(seen)

    def documents(self, fields: Iterable[str] | None = None) -> Iterator[dict]:
        """The live documents, in index order: ``{"_id": .., field: value(s)}``."""
        for entry in self.segments:
            for _, doc in segment_documents(entry.segment, entry.deleted, fields):
                yield doc

    def inspect(self) -> dict:
        """What ``indexbridge bleve inspect --json`` prints."""
        mapping = self.mapping_json
        try:
            mapping_value = json.loads(mapping) if mapping is not None else None
        except ValueError:
            mapping_value = mapping.decode("utf-8", "replace")
        return {
            "path": str(self.path),
            "epoch": self.epoch,
            "segments": [{"id": e.id, "file": e.file, "docs": e.num_docs, "deleted": len(e.deleted) if e.deleted else 0,
                          "size": e.path.stat().st_size} for e in self.segments],
            "live_docs": self.doc_count,
            "fields": self.field_names(),
            "internal": sorted(k.decode("utf-8", "replace") for k in self.internal),
            "mapping": mapping_value,
        }


def open_segment(entry: SegmentEntry, root_bolt: Path, verify_crc: bool = True) -> Segment:
    """One segment of a snapshot, checked: present, zap version 11, deleted doc numbers in range."""
    path = entry.path
    if not path.is_file():
        raise IndexFormatError(str(path), 0, f"segment {entry.id} named in {root_bolt}: the file is missing")
    version = zap_version(path)
    if version is not None and version != SEGMENT_VERSION:
        raise IndexFormatError(str(path), path.stat().st_size - 8, f"unsupported zap version {version} in {path}; indexbridge reads zap version {SEGMENT_VERSION}")
    segment = Segment.open(path, verify_crc)
    if entry.deleted and entry.deleted.max() >= segment.num_docs:
        segment.close()
        raise IndexFormatError(str(root_bolt), 0, f"segment {entry.id}: deleted doc numbers below {segment.num_docs}, found {entry.deleted.max()}")
    return segment


def open_index(path: str | os.PathLike, verify_crc: bool = True) -> BleveIndex:
    return BleveIndex(path, verify_crc)


# -- writing ------------------------------------------------------------------------------------


def snapshot_tree(segment_files: Sequence[str], mapping_json: bytes, epoch: int = EPOCH) -> BoltBucket:
    """The bucket tree of ``root.bolt`` for one snapshot of fresh segments (ids 0 .. n-1)."""
    snapshot = BoltBucket({
        # scorch puts the u32 into a buffer of binary.MaxVarintLen32 (5) bytes
        b"m": BoltBucket({b"type": SEGMENT_TYPE, b"version": _U32_BE.pack(SEGMENT_VERSION) + b"\x00"}),
        b"i": BoltBucket({MAPPING_KEY: mapping_json}),
    })
    for k, name in enumerate(segment_files):
        snapshot[encode_uvarint_ascending(k)] = BoltBucket({b"p": name.encode()})
    return BoltBucket({b"s": BoltBucket({encode_uvarint_ascending(epoch): snapshot})})


def check_new_index(path: str | os.PathLike) -> Path:
    """``path`` ready for a new index: absent or an empty directory (bleve never overwrites)."""
    path = Path(path)
    if path.exists():
        if not path.is_dir():
            raise FileExistsError(f"{path}: not a directory")
        if (path / INDEX_META_FILE).exists() or (path / STORE_DIR / ROOT_BOLT).exists():
            raise FileExistsError(f"{path}: an index exists there already")
    return path


def publish_index(path: str | os.PathLike, segment_files: Sequence[str | os.PathLike], mapping: IndexMapping) -> list[str]:
    """Make ``path`` a bleve index of the given segment files, in order: each is renamed to its
    name in ``store/`` (``%012x.zap`` of 2, 3, ...), then ``root.bolt`` and ``index_meta.json``
    are written, each atomically, ``index_meta.json`` last. Returns the segment file names."""
    path = check_new_index(path)
    store = path / STORE_DIR
    store.mkdir(parents=True, exist_ok=True)
    names = []
    for k, src in enumerate(segment_files):
        name = segment_file_name(FIRST_FILE_NUMBER + k)
        target = store / name
        if Path(src).resolve() != target.resolve():
            if target.exists():
                raise FileExistsError(f"{target}: a segment file is in the way")
            os.replace(src, target)
        names.append(name)
    write_bolt_file(store / ROOT_BOLT, snapshot_tree(names, mapping.to_json().encode()))
    write_atomically(path / INDEX_META_FILE, INDEX_META)
    return names


def document_id(doc: Any, id_field: str, where: str) -> str:
    """A document's ``_id``: its ``id_field`` value, a string or an integer."""
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: a JSON object, found {type(doc).__name__}")
    value = doc.get(id_field)
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"{where}: an id in field {id_field!r} (a non-empty string or an integer), found {value!r}")


def write_index(path: str | os.PathLike, docs: Iterable[tuple[str, Any]], mapping: IndexMapping | str | dict | None = None,
                rows_per_segment: int | None = DEFAULT_ROWS_PER_SEGMENT) -> list[str]:
    """Write a bleve index of ``docs``, ``(id, JSON value)`` pairs, at ``path``: segments of
    ``rows_per_segment`` documents in order (None: one segment; no documents: no segment), then
    ``root.bolt`` and ``index_meta.json``. Ids must be unique (bleve's Builder requires it too)."""
    im = mapping if isinstance(mapping, IndexMapping) else IndexMapping.parse(mapping)
    if rows_per_segment is not None and rows_per_segment < 1:
        raise ValueError(f"rows_per_segment must be positive, got {rows_per_segment}")
    path = check_new_index(path)
    created = [p for p in (path, path / STORE_DIR) if not p.exists()]
    store = path / STORE_DIR
    store.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    files: list[Path] = []
    pending = []

    def flush() -> None:
        target = store / segment_file_name(FIRST_FILE_NUMBER + len(files))
        with gc_paused():
            write_atomically(target, build_segment(pending))
        files.append(target)
        pending.clear()

    try:
        for doc_id, value in docs:
            if doc_id in seen:
                raise ValueError(f"document id {doc_id!r} occurs twice (an index holds one document per id)")
            seen.add(doc_id)
            pending.append(im.map_document(doc_id, value))
            if rows_per_segment is not None and len(pending) >= rows_per_segment:
                flush()
        if pending:
            flush()
    except BaseException:  # leave nothing behind: the segments written so far, the directories made
        for f in files:
            f.unlink(missing_ok=True)
        for d in reversed(created):
            try:
                d.rmdir()
            except OSError:
                pass
        raise
    return publish_index(path, files, im)


__all__ = ["BleveIndex", "SegmentEntry", "check_new_index", "decode_uvarint_ascending", "document_id",
           "encode_uvarint_ascending", "open_index", "open_segment", "publish_index", "segment_documents", "segment_file_name",
           "snapshot_tree", "stored_value", "write_index"]
