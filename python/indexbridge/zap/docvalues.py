"""Zap docvalues: a field's indexed terms per document ("chunked content coder", spec/zap.md §7).

::

    section of a field (docvalue index entry: start .. end)
      chunk records, chunk by chunk (see below which take bytes):
        uvarint k                              docs with a value in this chunk
        k × (uvarint docNum, uvarint end)      end = cumulative end of the doc's value in the
                                               chunk's *uncompressed* data
        snappy block of the concatenated values
      uvarint chunkEnd × C                     cumulative ends of the chunk records, from the section start
      u64 BE  byte length of the chunkEnd varints
      u64 BE  C
    docvalue index (<- footer.docValueOffset): per field id, uvarint start, uvarint end
                                               (both 2^64-1 when the field has no section)

A doc's value is ``term ‖ 0xFF`` for each of its distinct terms in byte order. The writer keeps a
current chunk (initially 0) and flushes it, even empty, whenever a doc falls into another
chunk, and at the end: chunk 0 is always written, other chunks only when they hold docs.
"""

from __future__ import annotations

from collections.abc import Iterator

from indexbridge.bytes import ByteReader, put_uvarint
from indexbridge.errors import IndexFormatError
from indexbridge.zap import snappy

NOT_UNINVERTED = (1 << 64) - 1
TERM_SEPARATOR = 0xFF
TRAILER_SIZE = 16


def encode_section(values: list[tuple[int, bytes]], chunk_factor: int, chunks: int) -> bytes:
    """The section of ``(docNum, value)`` pairs in ascending docNum order."""
    out = bytearray()
    lengths = [0] * chunks
    current = 0
    pending: list[tuple[int, bytes]] = []

    def flush() -> None:
        start = len(out)
        put_uvarint(out, len(pending))
        end = 0
        for doc, value in pending:
            end += len(value)
            put_uvarint(out, doc)
            put_uvarint(out, end)
        out.extend(snappy.encode(b"".join(v for _, v in pending)))
        lengths[current] = len(out) - start

    for doc, value in values:
        if doc // chunk_factor != current:
            flush()
            pending = []
            current = doc // chunk_factor
        pending.append((doc, value))
    flush()
    data_len = len(out)
    end = 0
    for length in lengths:
        end += length
        put_uvarint(out, end)
    out += (len(out) - data_len).to_bytes(8, "big")
    out += chunks.to_bytes(8, "big")
    return bytes(out)


def split_terms(value: bytes) -> list[bytes]:
    """The terms of a docvalue: every term is followed by 0xFF."""
    parts = value.split(bytes((TERM_SEPARATOR,)))
    return parts[:-1] if parts and parts[-1] == b"" else parts


class DocValueSection:
    """A field's docvalue section over ``data[start:end]`` of a segment."""

    def __init__(self, data: memoryview, source: str, start: int, end: int, chunk_factor: int) -> None:
        if not start + TRAILER_SIZE < end <= len(data):
            raise IndexFormatError(source, start, f"a docvalue section of more than {TRAILER_SIZE} bytes within the file, found [{start}, {end})")
        trailer = ByteReader(data, source, end - TRAILER_SIZE, end)
        offsets_len = trailer.u64_be("docvalue chunk offsets length")
        count = trailer.u64_be("docvalue chunk count")
        offsets_start = end - TRAILER_SIZE - offsets_len
        if offsets_len > end - TRAILER_SIZE - start or count > offsets_len:
            raise IndexFormatError(source, end - TRAILER_SIZE, f"chunk offsets within the docvalue section, found {offsets_len} bytes for {count} chunks")
        reader = ByteReader(data, source, offsets_start, end - TRAILER_SIZE)
        ends = [reader.uvarint("docvalue chunk end") for _ in range(count)]
        previous = 0
        for e in ends:
            if e < previous or start + e > offsets_start:
                raise reader.error(f"ascending docvalue chunk ends within the section, found {e}", offsets_start)
            previous = e
        self.data, self.source, self.start, self.end = data, source, start, end
        self.chunk_factor = chunk_factor
        self.chunk_ends = ends

    def _chunk(self, c: int) -> Iterator[tuple[int, bytes]]:
        """(docNum, value) of chunk c's record (nothing for a 0-byte chunk)."""
        begin = self.start + (self.chunk_ends[c - 1] if c else 0)
        stop = self.start + self.chunk_ends[c]
        if begin == stop:
            return
        reader = ByteReader(self.data, self.source, begin, stop)
        k = reader.uvarint("docvalue doc count")
        if k > reader.remaining:
            raise reader.error(f"at most {reader.remaining} docvalue docs, found {k}", begin)
        metas = [(reader.uvarint("docvalue docNum"), reader.uvarint("docvalue end offset")) for _ in range(k)]
        content = snappy.decode(reader.data[reader.pos : stop], self.source, reader.pos)
        previous = 0
        for doc, end in metas:
            if not previous <= end <= len(content):
                raise reader.error(f"docvalue end offsets ascending within {len(content)} bytes, found {end}", begin)
            yield doc, content[previous:end]
            previous = end

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        """Every (docNum, raw value) of the section, in chunk and doc order."""
        for c in range(len(self.chunk_ends)):
            yield from self._chunk(c)

    def get(self, doc: int) -> bytes | None:
        """The raw value of ``doc`` (terms each followed by 0xFF), None if it has none."""
        c = doc // self.chunk_factor
        if c >= len(self.chunk_ends):
            return None
        for d, value in self._chunk(c):
            if d == doc:
                return value
        return None


def encode_index(sections: list[tuple[int, int]]) -> bytes:
    """The docvalue index: per field id its section (start, end), NOT_UNINVERTED for none."""
    out = bytearray()
    for start, end in sections:
        put_uvarint(out, start)
        put_uvarint(out, end)
    return bytes(out)
