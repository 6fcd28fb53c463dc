"""Zap postings: freq/norm and location chunk blocks, the postings record, 1-hit values (spec/zap.md §5, §10).

::

    chunked block ("chunked int coder"), C = floor((numDocs-1)/chunkFactor) + 1 chunks:
      uvarint C
      uvarint endOffset × C          cumulative: end of chunk c relative to the data start
      chunk data                     chunk c covers docNums [c·cf, (c+1)·cf); empty chunks take 0 bytes
    freq/norm chunk, per hit:        uvarint (freq << 1 | hasLocs), uvarint float32bits(norm)
    location chunk, per hit with hasLocs:
      uvarint numBytes, then until numBytes are consumed:
        uvarint fieldId, uvarint pos, uvarint start, uvarint end, uvarint n, uvarint arrayPosition × n
    postings record                  <- the term's FST value ("general": top bits 00)
      uvarint freqBlockOffset, uvarint locBlockOffset, uvarint roaringLen, roaring[roaringLen]

    1-hit FST value (top bits 10): (1<<63) | (normBits & 0x7FFFFFFF) << 31 | docNum   (freq 1, no locations)
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import accumulate, islice
from typing import NamedTuple

import numpy as np

from indexbridge.bytes import MAX_UVARINT_BYTES, ByteReader, put_uvarint, small_uvarint
from indexbridge.errors import IndexFormatError
from indexbridge.roaring import read_roaring32, read_roaring32_values_at, serialize_go

ONE_HIT_FLAG = 1 << 63
ENCODING_MASK = 3 << 62
MAX_ONE_HIT_DOC = (1 << 31) - 1


class Location(NamedTuple):
    """One occurrence: the field it came from, 1-based position, byte range, array positions."""

    field_id: int
    pos: int
    start: int
    end: int
    array_positions: tuple[int, ...] = ()


class Posting(NamedTuple):
    """One hit of a term. ``locations`` is None when the hit has none (hasLocs clear, or 1-hit)."""

    doc: int
    freq: int
    norm_bits: int
    locations: tuple[Location, ...] | None

    @property
    def norm(self) -> float:
        return struct.unpack("<f", struct.pack("<I", self.norm_bits))[0]


@lru_cache(maxsize=1 << 12)
def norm_bits(field_length: int) -> int:
    """float32(1/sqrt(field_length)) as its bit pattern (+Inf for 0), as zap computes it."""
    norm = float("inf") if field_length == 0 else 1.0 / field_length**0.5
    return struct.unpack("<I", struct.pack("<f", norm))[0]


def one_hit_value(doc: int, bits: int) -> int:
    """The 1-hit FST value of a single freq-1 hit without locations."""
    return ONE_HIT_FLAG | (bits & 0x7FFFFFFF) << 31 | (doc & 0x7FFFFFFF)


def is_one_hit(value: int) -> bool:
    return value & ENCODING_MASK == ONE_HIT_FLAG


@lru_cache(maxsize=1 << 14)
def encode_freq_norm(freq: int, has_locs: bool, bits: int) -> bytes:
    """A hit's freq/norm entry: uvarint (freq << 1 | hasLocs), uvarint norm bits (cached: few distinct)."""
    return small_uvarint(freq << 1 | has_locs) + small_uvarint(bits)


def put_location(out: bytearray, field_id: int, pos: int, start: int, end: int, array_positions: Sequence[int]) -> None:
    """Append one location: uvarint fieldId, pos, start, end, numArrayPositions, arrayPosition × n
    (each through the small-value cache: a build writes hundreds of thousands of them)."""
    out += small_uvarint(field_id) + small_uvarint(pos) + small_uvarint(start) + small_uvarint(end) + small_uvarint(len(array_positions))
    for ap in array_positions:
        out += small_uvarint(ap)


def location_entry(body: bytes | bytearray) -> bytes:
    """A hit's location entry from its encoded locations: ``uvarint numBytes`` and them (empty bytes if none)."""
    return small_uvarint(len(body)) + body if body else b""


def encode_locations(locations: list[Location] | tuple[Location, ...]) -> bytes:
    """A hit's location entry: ``uvarint numBytes`` and the locations (empty bytes if none)."""
    body = bytearray()
    for loc in locations:
        put_location(body, loc.field_id, loc.pos, loc.start, loc.end, loc.array_positions)
    return location_entry(body)


def num_chunks(num_docs: int, chunk_factor: int) -> int:
    """C = floor((numDocs-1)/cf) + 1: every chunked block of a segment has this many chunks."""
    return (num_docs - 1) // chunk_factor + 1


def put_chunked(out: bytearray, docs: list[int], entries: list[bytes], chunk_factor: int, chunks: int) -> None:
    """Append a chunked block holding ``entries[i]`` (already encoded) for ``docs[i]`` (ascending, at least one)."""
    data = b"".join(entries)
    out += small_uvarint(chunks)
    first = docs[0] // chunk_factor
    if first == docs[-1] // chunk_factor:  # every hit in one chunk, as for most terms
        out += b"\x00" * first  # the empty chunks before it end at 0
        out += small_uvarint(len(data)) * (chunks - first)
    else:
        sizes: dict[int, int] = {}  # chunk -> bytes, only chunks with hits, ascending (docs are)
        for doc, entry in zip(docs, entries):
            c = doc // chunk_factor
            sizes[c] = sizes.get(c, 0) + len(entry)
        end = done = 0
        for c, size in sizes.items():
            out += small_uvarint(end) * (c - done)  # empty chunks repeat the previous end
            end += size
            out += small_uvarint(end)
            done = c + 1
        out += small_uvarint(end) * (chunks - done)
    out += data


@lru_cache(maxsize=64)
def _empty_block(chunks: int) -> bytes:
    """A chunked block without data: C, then C end offsets of 0."""
    return small_uvarint(chunks) + b"\x00" * chunks


def write_postings(
    out: bytearray,
    docs: list[int],
    freq_entries: list[bytes],
    loc_entries: list[bytes],
    chunk_factor: int,
    chunks: int,
) -> int:
    """Append a term's freq/norm block, location block and postings record; return the record offset."""
    freq_offset = len(out)
    put_chunked(out, docs, freq_entries, chunk_factor, chunks)
    loc_offset = len(out)
    if any(loc_entries):
        put_chunked(out, docs, loc_entries, chunk_factor, chunks)
    else:
        out += _empty_block(chunks)
    record_offset = len(out)
    roaring = serialize_go(docs)
    put_uvarint(out, freq_offset)
    put_uvarint(out, loc_offset)
    put_uvarint(out, len(roaring))
    out += roaring
    return record_offset


# Bulk uvarint decoding for PostingsList's fast path: a regular expression splits bytes into
# uvarints (at C speed), a table maps each uvarint's bytes to its value. Anything irregular
# raises ValueError (or a lookup error) and the checked decoder reads the list instead.
_UVARINT = re.compile(rb"[\x80-\xff]*[\x00-\x7f]", re.DOTALL)
_UVARINT_TABLE_SIZE = 1 << 16
_IRREGULAR = (ValueError, IndexError, AttributeError)


class _UvarintValues(dict):
    """uvarint bytes -> value, filled as met (up to ``_UVARINT_TABLE_SIZE`` kept)."""

    def __missing__(self, raw: bytes) -> int:
        if len(raw) > MAX_UVARINT_BYTES or (len(raw) == MAX_UVARINT_BYTES and raw[-1] > 1):
            raise ValueError("a uvarint over 64 bits")
        value = 0
        for i, byte in enumerate(raw):
            value |= (byte & 0x7F) << (7 * i)
        if len(self) < _UVARINT_TABLE_SIZE:
            self[raw] = value
        return value


_uvarint_value = _UvarintValues().__getitem__
# Builds a NamedTuple from its fields without the Python-level __new__ namedtuple generates
# (a third of the time of a Location made per occurrence).
_new = tuple.__new__


class _ChunkedReader:
    """A chunked block: hands out a reader over chunk c's bytes."""

    def __init__(self, data: memoryview, source: str, offset: int, file_end: int, what: str) -> None:
        reader = ByteReader(data, source, offset, file_end)
        self.what = what
        self.count = reader.uvarint(f"{what} chunk count")
        if self.count > reader.remaining:
            raise reader.error(f"at most {reader.remaining} {what} chunks, found {self.count}", offset)
        ends = [reader.uvarint(f"{what} chunk end offset") for _ in range(self.count)]
        self.data_start = reader.pos
        previous = 0
        for end in ends:
            if end < previous or self.data_start + end > file_end:
                raise reader.error(f"ascending {what} chunk end offsets within the file, found {end}", offset)
            previous = end
        self.ends = ends
        self.data, self.source = data, source

    def chunk(self, c: int) -> ByteReader:
        if c >= self.count:
            raise IndexFormatError(self.source, self.data_start, f"{self.what} chunk {c} of at most {self.count}")
        start = self.data_start + (self.ends[c - 1] if c else 0)
        return ByteReader(self.data, self.source, start, self.data_start + self.ends[c])


class RawHit(NamedTuple):
    """A decoded hit with its on-disk freq/norm and location bytes (the latter including numBytes)."""

    posting: Posting
    freq_bytes: bytes
    loc_bytes: bytes


class PostingsList:
    """The hits of one term: from a postings record (general) or from a 1-hit FST value."""

    def __init__(self, docs: np.ndarray, hits: list[RawHit] | None = None, record: tuple | None = None) -> None:
        self.docs = docs
        self._hits = hits
        self._record = record

    @classmethod
    def empty(cls) -> PostingsList:
        return cls(np.empty(0, dtype=np.uint32), [])

    @classmethod
    def one_hit(cls, value: int) -> PostingsList:
        doc, bits = value & 0x7FFFFFFF, value >> 31 & 0x7FFFFFFF
        return cls(np.array([doc], dtype=np.uint32), [RawHit(Posting(doc, 1, bits, None), encode_freq_norm(1, False, bits), b"")])

    @classmethod
    def read(cls, data: memoryview, source: str, offset: int, file_end: int, chunk_factor: int, num_docs: int) -> PostingsList:
        """The postings record at ``offset`` (hits are decoded on first use); docNums must be < ``num_docs``."""
        reader = ByteReader(data, source, offset, file_end)
        freq_offset = reader.uvarint("freq/norm block offset")
        loc_offset = reader.uvarint("location block offset")
        roaring_len = reader.uvarint("roaring length")
        roaring_at = reader.pos
        one_array = read_roaring32_values_at(data, roaring_at, min(file_end, roaring_at + roaring_len))
        if one_array is not None and one_array[1] == roaring_at + roaring_len and one_array[0][-1] < num_docs:
            docs = one_array[0]  # the common small list, read straight
        else:
            sub = reader.sub_reader(roaring_len, "postings roaring bitmap")
            bitmap = read_roaring32(sub)
            if sub.remaining:
                raise sub.error(f"a roaring bitmap of {roaring_len} bytes, it ends {sub.remaining} bytes early")
            if bitmap and bitmap.max() >= num_docs:  # also bounds the docs array (run containers are compact)
                raise IndexFormatError(source, roaring_at, f"postings docNums below {num_docs}, found {bitmap.max()}")
            docs = np.array(bitmap.to_array(), dtype=np.uint32)
        for what, at in (("freq/norm", freq_offset), ("location", loc_offset)):
            if at >= file_end:
                raise IndexFormatError(source, offset, f"a {what} block offset within the file, found {at}")
        return cls(docs, None, (data, source, freq_offset, loc_offset, file_end, chunk_factor, roaring_at, roaring_len, offset))

    @property
    def record_info(self) -> tuple[int, int, int, int] | None:
        """(freq block offset, location block offset, roaring offset, roaring length), general lists only."""
        if self._record is None:
            return None
        return self._record[2], self._record[3], self._record[6], self._record[7]

    def __len__(self) -> int:
        return len(self.docs)

    def raw_hits(self) -> list[RawHit]:
        """Every hit with its on-disk bytes (decoded once, then kept)."""
        if self._hits is None:
            self._hits = list(self._decode())
        return self._hits

    def __iter__(self) -> Iterator[Posting]:
        """The hits in docNum order."""
        if self._hits is None:
            return self._bulk_or_checked()
        return (h.posting for h in self._hits)

    def _bulk_or_checked(self) -> Iterator[Posting]:
        """The bulk decoder's hits, as they are consumed (a list of a million hits is not made
        for the first ten); where it meets bytes it does not take, the checked decoder goes on
        from the same hit and says what is wrong."""
        n = 0
        try:
            for n, posting in enumerate(self._postings(), 1):
                yield posting
        except _IRREGULAR:
            yield from (h.posting for h in islice(self._decode(), n, None))

    def _postings(self) -> Iterator[Posting]:
        """The hits decoded in bulk. In the layout zap writes, a term's bytes from its freq/norm
        block to its postings record are nothing but uvarints (freq/norm block, location block),
        so one regex split and one table look-up per uvarint read them all; every chunk's entries
        must then fill exactly its [previous end, end) span. Raises one of ``_IRREGULAR`` wherever
        the bytes differ from that layout (the checked :meth:`_decode` then reads on, and says
        what is wrong), so what it yields is what :meth:`_decode` yields."""
        data, _, freq_offset, loc_offset, _, cf, _, _, record_offset = self._record
        if not freq_offset < loc_offset < record_offset or data[record_offset - 1] & 0x80:
            raise ValueError("not zap's block layout")
        parts = _UVARINT.findall(data, freq_offset, record_offset)
        values = list(map(_uvarint_value, parts))
        at = list(accumulate(map(len, parts), initial=0))  # at[v]: where values[v] starts, from freq_offset
        docs = self.docs.tolist()
        freq_ends = values[1 : values[0] + 1]  # C, C chunk end offsets, then (freq|hasLocs, norm bits) per hit
        i = values[0] + 1
        loc_count = i + 2 * len(docs)  # the location block: C, C chunk end offsets, then entries
        loc_ends = values[loc_count + 1 : loc_count + 1 + values[loc_count]]
        k = loc_count + 1 + values[loc_count]
        freq_start, loc_start = at[i], at[k]
        if (at[loc_count] != loc_offset - freq_offset or freq_ends[-1] != at[loc_count] - freq_start
                or loc_ends[-1] != at[-1] - loc_start or freq_ends != sorted(freq_ends) or loc_ends != sorted(loc_ends)):
            raise ValueError("block headers")
        chunk = -1
        for doc in docs:
            if doc // cf != chunk:  # the chunk before ends here, the next one starts here
                if chunk >= 0 and (freq_ends[chunk] != at[i] - freq_start or loc_ends[chunk] != at[k] - loc_start):
                    raise ValueError("chunk end offsets")
                chunk = doc // cf
                if chunk and (freq_ends[chunk - 1] != at[i] - freq_start or loc_ends[chunk - 1] != at[k] - loc_start):
                    raise ValueError("chunk end offsets")
                if not chunk and (at[i] != freq_start or at[k] != loc_start):
                    raise ValueError("chunk end offsets")
            code, bits = values[i], values[i + 1]
            i += 2
            if bits > 0xFFFFFFFF:
                raise ValueError("norm bits")
            locations = None
            if code & 1:  # uvarint numBytes, then locations: fieldId, pos, start, end, n, n array positions
                body_end = at[k + 1] + values[k]
                k += 1
                found = []
                while at[k] < body_end:
                    n = values[k + 4]
                    aps = tuple(values[k + 5 : k + 5 + n]) if n else ()
                    found.append(_new(Location, (values[k], values[k + 1], values[k + 2], values[k + 3], aps)))
                    k += 5 + n
                if at[k] != body_end:
                    raise ValueError("a location byte length")
                locations = tuple(found)
            yield _new(Posting, (doc, code >> 1, bits, locations))
        if chunk >= 0 and (freq_ends[chunk] != at[i] - freq_start or loc_ends[chunk] != at[k] - loc_start):
            raise ValueError("chunk end offsets")

    def _decode(self) -> Iterator[RawHit]:
        data, source, freq_offset, loc_offset, file_end, cf, _, _, _ = self._record
        freq_block = _ChunkedReader(data, source, freq_offset, file_end, "freq/norm")
        loc_block = _ChunkedReader(data, source, loc_offset, file_end, "location")
        chunk = -1
        freqs = locs = None
        for doc in self.docs.tolist():
            if doc // cf != chunk:
                chunk = doc // cf
                freqs, locs = freq_block.chunk(chunk), loc_block.chunk(chunk)
            at = freqs.pos
            code = freqs.uvarint("freq|hasLocs")
            bits = freqs.uvarint("norm bits")
            if bits > 0xFFFFFFFF:
                raise freqs.error(f"float32 norm bits, found {bits}", at)
            freq_bytes = bytes(freqs.data[at : freqs.pos])
            locations = None
            loc_bytes = b""
            if code & 1:
                loc_at = locs.pos
                size = locs.uvarint("location byte length")
                body = locs.sub_reader(size, "locations")
                found = []
                while body.remaining:
                    field_id = body.uvarint("location field id")
                    pos = body.uvarint("location position")
                    start = body.uvarint("location start")
                    end = body.uvarint("location end")
                    count = body.uvarint("array position count")
                    if count > body.remaining:
                        raise body.error(f"at most {body.remaining} array positions, found {count}")
                    aps = tuple(body.uvarint("array position") for _ in range(count))
                    found.append(Location(field_id, pos, start, end, aps))
                locations = tuple(found)
                loc_bytes = bytes(locs.data[loc_at : locs.pos])
            yield RawHit(Posting(doc, code >> 1, bits, locations), freq_bytes, loc_bytes)
