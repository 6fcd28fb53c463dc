"""Zap stored fields: one record per document, then the stored-fields index (spec/zap.md §4).

::

    record (docNum order):
      uvarint metaLen
      uvarint dataLen = len(idBytes) + len(snappyBlock)
      meta[metaLen]:  uvarint len(idBytes)
                      then per stored value other than _id (field id ascending, document order within one id):
                        uvarint fieldId, uvarint typeByte, uvarint start, uvarint length,
                        uvarint numArrayPositions, uvarint arrayPosition × numArrayPositions
      idBytes         the _id value, raw
      snappyBlock     Go snappy block of the concatenated non-_id values (start/length index into it)
    stored-fields index: numDocs × u64 BE record offset   <- footer.storedIndexOffset

``_id`` is kept out of the compressed block so that looking up a document's external id needs
no decompression; a reader reports it first, as type ``t`` without array positions.
"""

from __future__ import annotations

from dataclasses import dataclass

from indexbridge.bytes import ByteReader, put_uvarint, small_uvarint
from indexbridge.zap import snappy

@dataclass(frozen=True)
class StoredValue:
    """One stored value of a document: field id, type byte (``t n d b g c x``), bytes, array positions."""

    field_id: int
    type: str
    value: bytes
    array_positions: tuple[int, ...] = ()


def encode_record(doc_id: bytes, values: list[StoredValue]) -> bytes:
    """A document's record; ``values`` are the non-_id values in on-disk order (field id, then document)."""
    meta = bytearray(small_uvarint(len(doc_id)))
    data = bytearray()
    for v in values:
        put_uvarint(meta, v.field_id)
        put_uvarint(meta, ord(v.type))
        put_uvarint(meta, len(data))
        put_uvarint(meta, len(v.value))
        put_uvarint(meta, len(v.array_positions))
        for ap in v.array_positions:
            put_uvarint(meta, ap)
        data += v.value
    compressed = snappy.encode(data)
    return b"".join((small_uvarint(len(meta)), small_uvarint(len(doc_id) + len(compressed)), meta, doc_id, compressed))


def record_extent(reader: ByteReader) -> tuple[int, int, int]:
    """Parse a record's two lengths at ``reader.pos``: (meta start, data start, record end)."""
    meta_len = reader.uvarint("stored meta length")
    data_len = reader.uvarint("stored data length")
    meta_start = reader.pos
    reader.take(meta_len, "stored meta")
    data_start = reader.pos
    reader.take(data_len, "stored data")
    return meta_start, data_start, reader.pos


def decode_record(reader: ByteReader) -> tuple[bytes, list[StoredValue]]:
    """The (``_id`` bytes, other stored values) of the record at ``reader.pos``."""
    meta_start, data_start, end = record_extent(reader)
    meta = ByteReader(reader.data, reader.source, meta_start, data_start)
    id_len = meta.uvarint("stored _id length")
    if id_len > end - data_start:
        raise meta.error(f"an _id of at most {end - data_start} bytes, found {id_len}", meta_start)
    doc_id = bytes(reader.data[data_start : data_start + id_len])
    block_at = data_start + id_len
    data = snappy.decode(reader.data[block_at:end], reader.source, block_at)
    values = []
    while meta.remaining:
        field_id = meta.uvarint("stored field id")
        at = meta.pos
        type_byte = meta.uvarint("stored type byte")
        if type_byte > 0x7F:
            raise meta.error(f"a stored type byte < 0x80, found {type_byte}", at)
        start = meta.uvarint("stored value start")
        length = meta.uvarint("stored value length")
        if start + length > len(data):
            raise meta.error(f"a stored value within the {len(data)} uncompressed bytes, found [{start}, {start + length})", at)
        count = meta.uvarint("array position count")
        if count > meta.remaining:
            raise meta.error(f"at most {meta.remaining} array positions, found {count}")
        aps = tuple(meta.uvarint("array position") for _ in range(count))
        values.append(StoredValue(field_id, chr(type_byte), data[start : start + length], aps))
    return doc_id, values
