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

Two ways to read hits. Per hit, :class:`PostingsList` (one term) yields :class:`Posting` /
:class:`Location` tuples. Columnar, :class:`PostingsColumns` (many terms at once, from
:func:`read_columns`; ``Dictionary.postings_columns`` in segment.py) holds the same values as flat
numpy arrays, each level indexing the next through an offsets array (Arrow's list layout)::

    T terms, H hits, L locations, A array positions
    hit_offsets             int64[T+1]    term i's hits are [hit_offsets[i], hit_offsets[i+1])
      docs                  uint32[H]     docNum, ascending within a term
      freqs                 uint64[H]     freq
      norm_bits             uint32[H]     float32 bits of the norm (.norms: the float32 view)
      has_locations         bool[H]       the hasLocs bit (Posting.locations is None where clear)
      location_offsets      int64[H+1]    hit h's locations are [location_offsets[h], location_offsets[h+1])
        field_ids, pos, starts, ends      uint64[L]   fieldId, 1-based position, byte range
        array_position_offsets int64[L+1] location k's array positions are [.[k], .[k+1])
          array_positions   uint64[A]

:func:`read_columns` decodes in bulk: every term's bytes from its freq/norm block to its record
(zap writes them back to back, all uvarints) gathered and split into uvarints at once, the
blocks' structure checked and indexed with array operations, location entries found in rounds
(round j: every term's j-th entry). What differs from the layout zap writes is read by the per-hit
decoders, which name the fault of a damaged file.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from itertools import chain, islice
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

from indexbridge.bytes import MAX_UVARINT_BYTES, UVARINTS_BELOW_2_14, ByteReader, put_uvarint, small_uvarint, list_offsets, ragged_arange, uvarints, uvarints_at
from indexbridge.errors import IndexFormatError
from indexbridge.roaring import (
    ARRAY_MAX_CARDINALITY,
    SERIAL_COOKIE_NO_RUNCONTAINER,
    read_roaring32,
    read_roaring32_values_at,
    serialize_go,
)

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
    (a merge re-encoding a hit's locations; a build encodes all of a field's at once with
    :func:`encode_location_groups`)."""
    if not array_positions and (field_id | pos | start | end) >= 0:  # (no negative index into the table)
        try:
            out += UVARINTS_BELOW_2_14[field_id] + UVARINTS_BELOW_2_14[pos] + UVARINTS_BELOW_2_14[start] + UVARINTS_BELOW_2_14[end] + b"\x00"
            return
        except IndexError:  # a value past the table (nothing appended yet)
            pass
    out += small_uvarint(field_id) + small_uvarint(pos) + small_uvarint(start) + small_uvarint(end) + small_uvarint(len(array_positions))
    for ap in array_positions:
        out += small_uvarint(ap)


def encode_location_groups(
    field_ids: np.ndarray,
    pos: Sequence[int],
    starts: Sequence[int],
    ends: Sequence[int],
    array_positions: Sequence[Sequence[int]],
    counts: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`put_location` of every location at once, with numpy (a build's hundreds of thousands):
    the bytes of groups of ``counts[i]`` consecutive locations, concatenated (uint8), and each
    group's byte count. Values are taken as Go's ``uint64`` of an ``int``."""
    num_array_positions = np.fromiter(map(len, array_positions), dtype=np.int64, count=len(field_ids))
    value_at = list_offsets(5 + num_array_positions)
    values = np.empty(int(value_at[-1]), dtype=np.int64)
    starts_at = value_at[:-1]
    for k, column in enumerate((field_ids, pos, starts, ends, num_array_positions)):
        values[starts_at + k] = column
    if num_array_positions.any():
        values[ragged_arange(starts_at + 5, num_array_positions)] = np.array(list(chain.from_iterable(array_positions)), dtype=np.int64)
    data, sizes = uvarints(values.view(np.uint64))
    location_ends = np.concatenate(([0], np.cumsum(sizes)[value_at[1:] - 1]))
    group_ends = location_ends[list_offsets(counts)]
    return data, np.diff(group_ends)


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


@lru_cache(maxsize=1 << 10)
def _one_chunk_head(chunks: int, chunk: int, size: int) -> bytes:
    """The head of a chunked block whose data, ``size`` bytes, is all in ``chunk``: C, then the C
    end offsets (0 before it, ``size`` from it on). A block without data when ``size`` is 0."""
    return small_uvarint(chunks) + b"\x00" * chunk + small_uvarint(size) * (chunks - chunk)


def put_chunked(out: bytearray, docs: list[int], data: bytes, sizes: list[int], chunk_factor: int, chunks: int) -> None:
    """Append a chunked block holding ``data``: the entries of ``docs`` (ascending, at least
    one), already encoded, of ``sizes`` bytes each."""
    first = docs[0] // chunk_factor
    if first == docs[-1] // chunk_factor:  # every hit in one chunk, as for most terms
        out += _one_chunk_head(chunks, first, len(data))
    else:
        out += small_uvarint(chunks)
        chunk_sizes: dict[int, int] = {}  # chunk -> bytes, only chunks with hits, ascending (docs are)
        for doc, size in zip(docs, sizes):
            c = doc // chunk_factor
            chunk_sizes[c] = chunk_sizes.get(c, 0) + size
        end = done = 0
        for c, size in chunk_sizes.items():
            out += small_uvarint(end) * (c - done)  # empty chunks repeat the previous end
            end += size
            out += small_uvarint(end)
            done = c + 1
        out += small_uvarint(end) * (chunks - done)
    out += data


def write_postings(
    out: bytearray,
    docs: list[int],
    freq_data: bytes,
    freq_sizes: list[int],
    loc_data: bytes,
    loc_sizes: list[int],
    chunk_factor: int,
    chunks: int,
) -> int:
    """Append a term's freq/norm block, location block and postings record; return the record
    offset. ``freq_data`` and ``loc_data`` are the hits' entries, encoded, of ``*_sizes`` bytes each."""
    if len(docs) == 1 and not loc_data:
        return _write_one_doc_postings(out, docs[0], freq_data, chunk_factor, chunks)
    freq_offset = len(out)
    put_chunked(out, docs, freq_data, freq_sizes, chunk_factor, chunks)
    loc_offset = len(out)
    if loc_data:
        put_chunked(out, docs, loc_data, loc_sizes, chunk_factor, chunks)
    else:
        out += _one_chunk_head(chunks, 0, 0)
    record_offset = len(out)
    roaring = serialize_go(docs)
    put_uvarint(out, freq_offset)
    put_uvarint(out, loc_offset)
    put_uvarint(out, len(roaring))
    out += roaring
    return record_offset


def _write_one_doc_postings(out: bytearray, doc: int, freq_entry: bytes, chunk_factor: int, chunks: int) -> int:
    """:func:`write_postings` of a term with one hit and no locations, as most terms of a build
    are (81% of ``bench zap``'s): the same bytes in fewer steps."""
    freq_offset = len(out)
    out += _one_chunk_head(chunks, doc // chunk_factor, len(freq_entry))
    out += freq_entry
    loc_offset = len(out)
    out += _one_chunk_head(chunks, 0, 0)
    record_offset = len(out)
    put_uvarint(out, freq_offset)
    put_uvarint(out, loc_offset)
    out += _ONE_DOC_ROARING_ENTRY
    out += serialize_go((doc,))
    return record_offset


_ONE_DOC_ROARING_ENTRY = small_uvarint(len(serialize_go((0,))))  # a one-value bitmap's byte length, as a uvarint


# PostingsList's bulk decoder reads the blocks as zap writes them with the functions below, which
# postings.pxd types as C when setup.py compiles this module (a uvarint is then a few machine
# instructions, and Python objects are made only for the values a Posting holds); plain Python
# reads the same bytes the same way, slower. Anything irregular raises one of _IRREGULAR, and
# the checked decoder reads the list instead and names the fault.
_IRREGULAR = (ValueError, IndexError)
# Builds a NamedTuple from its fields without the Python-level __new__ namedtuple generates
# (a third of the time of a Location made per occurrence).
_new = tuple.__new__


def _uvarint_end(buf: memoryview, at: int, end: int) -> int:
    """Where the uvarint at ``buf[at]`` ends. ValueError when it does not end before ``end`` or
    within 9 bytes (values below 2^63, C integers when compiled: the checked decoder reads a
    longer one)."""
    stop = min(end, at + 9)
    while at < stop:
        if buf[at] < 0x80:
            return at + 1
        at += 1
    raise ValueError("a uvarint of at most 9 bytes")


def _uvarint_in(buf: memoryview, at: int, stop: int) -> int:
    """The value of the uvarint ``buf[at:stop]`` (``stop`` from :func:`_uvarint_end`)."""
    value = shift = 0
    while at < stop:
        low7 = buf[at] & 0x7F
        value |= low7 << shift
        shift += 7
        at += 1
    return value


def _chunk_ends(buf: memoryview, at: int, end: int) -> tuple[list[int], int]:
    """A chunked block's C chunk end offsets, read from its head at ``at`` (within ``end``), and
    where its data starts."""
    stop = _uvarint_end(buf, at, end)
    count = _uvarint_in(buf, at, stop)
    if count > end - stop:
        raise ValueError("a chunk count")
    ends = []
    for _ in range(count):
        at, stop = stop, _uvarint_end(buf, stop, end)
        ends.append(_uvarint_in(buf, at, stop))
    return ends, stop


def _locations(buf: memoryview, at: int, end: int) -> tuple[Location, ...]:
    """The locations filling ``buf[at:end]`` exactly: fieldId, pos, start, end, n, and n array
    positions each."""
    found = []
    while at < end:
        values = []
        for _ in range(5):
            if at < end and buf[at] < 0x80:  # (most are one byte: no call in plain Python)
                values.append(buf[at])
                at += 1
            else:
                stop = _uvarint_end(buf, at, end)
                values.append(_uvarint_in(buf, at, stop))
                at = stop
        count = values[4]
        array_positions = []
        for _ in range(count):
            stop = _uvarint_end(buf, at, end)
            array_positions.append(_uvarint_in(buf, at, stop))
            at = stop
        values[4] = tuple(array_positions)
        found.append(_new(Location, values))
    return tuple(found)


def _chunk_hits(buf: memoryview, docs: memoryview, lo: int, cf: int, fat: int, fend: int, lat: int, lend: int, out: list[Posting]) -> int:
    """Appends to ``out`` the hits ``docs[lo:hi]``, the docs of ``docs[lo]``'s chunk, whose
    freq/norm entries must fill ``buf[fat:fend]`` and location entries ``buf[lat:lend]``
    exactly; returns ``hi``."""
    chunk = docs[lo] // cf
    hi, n = lo, len(docs)
    while hi < n and docs[hi] // cf == chunk:
        stop = _uvarint_end(buf, fat, fend)
        code = _uvarint_in(buf, fat, stop)
        fat = _uvarint_end(buf, stop, fend)
        bits = _uvarint_in(buf, stop, fat)
        if bits > 0xFFFFFFFF:
            raise ValueError("norm bits")
        locations = None
        if code & 1:  # uvarint numBytes, then the locations
            stop = _uvarint_end(buf, lat, lend)
            size = _uvarint_in(buf, lat, stop)
            if size > lend - stop:
                raise ValueError("a location byte length")
            lat = stop + size
            locations = _locations(buf, stop, lat)
        out.append(_new(Posting, (docs[hi], code >> 1, bits, locations)))
        hi += 1
    if fat != fend or lat != lend:
        raise ValueError("chunk end offsets")
    return hi


def _u32_le(buf: memoryview, at: int) -> int:
    """The little-endian uint32 at ``buf[at]`` (its top byte shifted as a 64-bit C integer when
    compiled: as a C int, a top bit set would make it negative)."""
    high = buf[at + 3]
    return high << 24 | buf[at + 2] << 16 | buf[at + 1] << 8 | buf[at]


def _one_chunk_data(buf: memoryview, at: int, end: int, chunk: int) -> int:
    """Where the data of the chunked block at ``at`` starts, when all of it, to ``end``, is in
    ``chunk``: C, then C chunk end offsets, 0 before ``chunk`` and the data's size from it on.
    ValueError otherwise."""
    stop = _uvarint_end(buf, at, end)
    count = _uvarint_in(buf, at, stop)
    if not chunk < count <= end - stop:
        raise ValueError("a chunk count")
    size = -1
    for c in range(count):
        at, stop = stop, _uvarint_end(buf, stop, end)
        chunk_end = _uvarint_in(buf, at, stop)
        if c < chunk and chunk_end:
            raise ValueError("an empty chunk")
        if c == chunk:
            size = chunk_end
        elif c > chunk and chunk_end != size:
            raise ValueError("an empty chunk")
    if size != end - stop:
        raise ValueError("chunk end offsets")
    return stop


def _read_small(data: memoryview, source: str, offset: int, file_end: int, cf: int, num_docs: int) -> PostingsList | None:
    """The postings record at ``offset`` when its docNums (below ``num_docs``) are a roaring
    bitmap of one array container without runs, as most are; a record of one doc, as most terms
    of a segment have (90% of ``bench zap``'s), with its hit decoded when its blocks are as the bulk
    decoder takes them. Else None, and :meth:`PostingsList._read_checked` reads the record."""
    buf = data
    try:
        stop = _uvarint_end(buf, offset, file_end)
        freq_offset = _uvarint_in(buf, offset, stop)
        at, stop = stop, _uvarint_end(buf, stop, file_end)
        loc_offset = _uvarint_in(buf, at, stop)
        at, roaring_at = stop, _uvarint_end(buf, stop, file_end)
    except ValueError:
        return None
    # the bitmap: cookie 12346 (no runs), 1 container, key, cardinality - 1, offset 16, the values' low 16 bits
    roaring_len = _uvarint_in(buf, at, roaring_at)
    if (roaring_len < 18 or roaring_len > file_end - roaring_at or not freq_offset < file_end or not loc_offset < file_end
            or _u32_le(buf, roaring_at) != SERIAL_COOKIE_NO_RUNCONTAINER or _u32_le(buf, roaring_at + 4) != 1
            or _u32_le(buf, roaring_at + 12) != 16):
        return None
    key = buf[roaring_at + 9] << 8 | buf[roaring_at + 8]
    count = (buf[roaring_at + 11] << 8 | buf[roaring_at + 10]) + 1
    if count > ARRAY_MAX_CARDINALITY or roaring_len != 16 + 2 * count:
        return None
    docs = np.empty(count, dtype=np.uint32)
    values = memoryview(docs)  # to fill (compiled: a typed view; plain: its items are ints)
    last = -1
    for i in range(count):
        low = buf[roaring_at + 17 + 2 * i] << 8 | buf[roaring_at + 16 + 2 * i]
        if low <= last:
            return None
        values[i] = key << 16 | low
        last = low
    if values[count - 1] >= num_docs:
        return None
    record = (data, source, freq_offset, loc_offset, file_end, cf, roaring_at, roaring_len, offset)
    if count > 1 or not freq_offset < loc_offset < offset:
        return PostingsList(docs, None, record)
    hits: list[Posting] = []
    try:
        chunk = values[0] // cf
        _chunk_hits(buf, values, 0, cf, _one_chunk_data(buf, freq_offset, loc_offset, chunk), loc_offset, _one_chunk_data(buf, loc_offset, offset, chunk), offset, hits)
    except _IRREGULAR:
        return PostingsList(docs, None, record)  # its hit is decoded on first use, and any fault named then
    return PostingsList(docs, None, record, hits)


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

    def __init__(self, docs: np.ndarray, hits: list[RawHit] | None = None, record: tuple | None = None, postings: list[Posting] | None = None) -> None:
        self.docs = docs
        self._hits = hits
        self._record = record
        self._postings_read = postings  # the hits, decoded with the record (_read_small)

    @classmethod
    def empty(cls) -> PostingsList:
        return cls(np.empty(0, dtype=np.uint32), [])

    @classmethod
    def one_hit(cls, value: int) -> PostingsList:
        doc, bits = value & 0x7FFFFFFF, value >> 31 & 0x7FFFFFFF
        return cls(np.array([doc], dtype=np.uint32), [RawHit(Posting(doc, 1, bits, None), encode_freq_norm(1, False, bits), b"")])

    @classmethod
    def read(cls, data: memoryview, source: str, offset: int, file_end: int, chunk_factor: int, num_docs: int) -> PostingsList:
        """The postings record at ``offset`` (hits are decoded on first use); docNums must be < ``num_docs``.

        Most records are small, their docNums one array container: :func:`_read_small` reads
        those (every field that :meth:`_read_checked` checks, checked), and the hit of a record
        of one doc with it. Any other record is read by :meth:`_read_checked`, which names what
        is wrong."""
        small = _read_small(data, source, offset, file_end, chunk_factor, num_docs)
        if small is not None:
            return small
        return cls._read_checked(data, source, offset, file_end, chunk_factor, num_docs)

    @classmethod
    def _read_checked(cls, data: memoryview, source: str, offset: int, file_end: int, chunk_factor: int, num_docs: int) -> PostingsList:
        """:meth:`read` of any record, field by field: a fault raises naming its offset."""
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
        if self._postings_read is not None:
            return iter(self._postings_read)
        if self._hits is None:
            return self._bulk_or_checked()
        return (h.posting for h in self._hits)

    def _bulk_or_checked(self) -> Iterator[Posting]:
        """The bulk decoder's hits, as they are consumed; where it meets bytes it does not take,
        the checked decoder goes on from the same hit and says what is wrong."""
        n = 0
        try:
            for hits in self._chunks():
                yield from hits
                n += len(hits)
        except _IRREGULAR:
            yield from (h.posting for h in islice(self._decode(), n, None))

    def _chunks(self) -> Iterator[list[Posting]]:
        """The hits decoded in bulk, a list of a chunk's hits at a time (a frequent term of a
        large segment is held one chunk at a time). In the layout zap writes, a term's freq/norm
        block, its location block and its record follow each other; each block's chunk end
        offsets ascend, the entries of a chunk with hits fill exactly its [previous end, end)
        span, and the chunks without hits are empty. Raises one of ``_IRREGULAR`` wherever the
        bytes differ from that layout (the checked :meth:`_decode` then reads on, and says what
        is wrong), so its hits are the hits :meth:`_decode` yields."""
        data, _, freq_offset, loc_offset, _, cf, _, _, record_offset = self._record
        if not freq_offset < loc_offset < record_offset:
            raise ValueError("not zap's block layout")
        freq_ends, freq_data = _chunk_ends(data, freq_offset, loc_offset)
        loc_ends, loc_data = _chunk_ends(data, loc_offset, record_offset)
        if (freq_data + freq_ends[-1] != loc_offset or loc_data + loc_ends[-1] != record_offset
                or freq_ends != sorted(freq_ends) or loc_ends != sorted(loc_ends)):
            raise ValueError("block headers")
        docs = memoryview(self.docs)
        lo = spans = 0  # spans: bytes of the chunks with hits, both blocks (with ascending ends, the others are empty when they add up)
        while lo < len(docs):
            chunk = docs[lo] // cf
            freq_start, freq_end = freq_data + (freq_ends[chunk - 1] if chunk else 0), freq_data + freq_ends[chunk]
            loc_start, loc_end = loc_data + (loc_ends[chunk - 1] if chunk else 0), loc_data + loc_ends[chunk]
            spans += freq_end - freq_start + loc_end - loc_start
            hits: list[Posting] = []
            lo = _chunk_hits(data, docs, lo, cf, freq_start, freq_end, loc_start, loc_end, hits)
            yield hits
        if spans != freq_ends[-1] + loc_ends[-1]:
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


# --- Columnar read: the hits of many terms at once, as flat arrays (layout in the module docstring).

_INDEX_CAP = 1 << 62  # uvarint values used as counts or sizes are capped here before int64 index arithmetic


@dataclass(frozen=True)
class PostingsColumns:
    """The hits of T terms, H hits, L locations, A array positions as flat arrays (see the module
    docstring); term ``i``'s hits are ``hit_offsets[i]:hit_offsets[i + 1]``, hit ``h``'s locations
    ``location_offsets[h]:location_offsets[h + 1]``, location ``k``'s array positions
    ``array_position_offsets[k]:array_position_offsets[k + 1]``."""

    hit_offsets: np.ndarray  # int64[T + 1]
    docs: np.ndarray  # uint32[H], docNums ascending within a term
    freqs: np.ndarray  # uint64[H]
    norm_bits: np.ndarray  # uint32[H], float32 bits (``norms`` views them as float32)
    has_locations: np.ndarray  # bool[H], the hasLocs bit (a hit with it set may have 0 locations)
    location_offsets: np.ndarray  # int64[H + 1]
    field_ids: np.ndarray  # uint64[L]
    pos: np.ndarray  # uint64[L], 1-based token position
    starts: np.ndarray  # uint64[L], byte range start
    ends: np.ndarray  # uint64[L], byte range end
    array_position_offsets: np.ndarray  # int64[L + 1]
    array_positions: np.ndarray  # uint64[A]

    def __len__(self) -> int:
        return len(self.hit_offsets) - 1

    @classmethod
    def names(cls) -> list[str]:
        """The column names, in order."""
        return [f.name for f in fields(cls)]

    @property
    def norms(self) -> np.ndarray:
        return self.norm_bits.view(np.float32)

    @classmethod
    def one_hits(cls, values: np.ndarray) -> PostingsColumns:
        """The columns of 1-hit FST values (uint64): one hit each, freq 1, no locations."""
        n = len(values)
        return cls.hits(np.arange(n + 1, dtype=np.int64), (values & np.uint64(0x7FFFFFFF)).astype(np.uint32), np.ones(n, dtype=np.uint64),
                        (values >> np.uint64(31) & np.uint64(0x7FFFFFFF)).astype(np.uint32), np.zeros(n, dtype=bool))

    @classmethod
    def hits(cls, hit_offsets: np.ndarray, docs: np.ndarray, freqs: np.ndarray, norm_bits: np.ndarray, has_locations: np.ndarray) -> PostingsColumns:
        """The columns of hits without their locations (none, whatever ``has_locations`` says)."""
        none = np.zeros(0, dtype=np.uint64)
        return cls(hit_offsets, docs, freqs, norm_bits, has_locations, np.zeros(len(docs) + 1, dtype=np.int64),
                   none, none, none, none, np.zeros(1, dtype=np.int64), none)

    @classmethod
    def from_postings(cls, lists: Sequence[Iterator[Posting] | Sequence[Posting]], locations: bool = True) -> PostingsColumns:
        """The columns of per-hit postings lists (one per term), element by element (without
        the locations unless ``locations``)."""
        hits = [list(pl) for pl in lists]
        flat = [p for pl in hits for p in pl]
        u64 = lambda values: np.array(values, dtype=np.uint64)  # noqa: E731
        hit_columns = (list_offsets([len(pl) for pl in hits]), np.array([p.doc for p in flat], dtype=np.uint32), u64([p.freq for p in flat]),
                       np.array([p.norm_bits for p in flat], dtype=np.uint32), np.array([p.locations is not None for p in flat], dtype=bool))
        if not locations:
            return cls.hits(*hit_columns)
        locs = [loc for p in flat for loc in p.locations or ()]
        return cls(
            *hit_columns,
            list_offsets([len(p.locations or ()) for p in flat]),
            u64([loc.field_id for loc in locs]),
            u64([loc.pos for loc in locs]),
            u64([loc.start for loc in locs]),
            u64([loc.end for loc in locs]),
            list_offsets([len(loc.array_positions) for loc in locs]),
            u64([ap for loc in locs for ap in loc.array_positions]),
        )

    def postings(self, term: int) -> list[Posting]:
        """Term ``term``'s hits as the per-hit API gives them."""
        lo, hi = self.hit_offsets[term : term + 2].tolist()
        loc_off = self.location_offsets[lo : hi + 1].tolist()
        k0, k1 = loc_off[0], loc_off[-1]
        ap_off = self.array_position_offsets[k0 : k1 + 1].tolist()
        aps = self.array_positions[ap_off[0] : ap_off[-1]].tolist()
        base = ap_off[0]
        locations = [
            Location(f, p, s, e, tuple(aps[a - base : b - base]))
            for f, p, s, e, a, b in zip(self.field_ids[k0:k1].tolist(), self.pos[k0:k1].tolist(), self.starts[k0:k1].tolist(),
                                        self.ends[k0:k1].tolist(), ap_off, ap_off[1:])
        ]
        out = []
        for h, (doc, freq, bits, has) in enumerate(zip(self.docs[lo:hi].tolist(), self.freqs[lo:hi].tolist(),
                                                       self.norm_bits[lo:hi].tolist(), self.has_locations[lo:hi].tolist())):
            locs = tuple(locations[loc_off[h] - k0 : loc_off[h + 1] - k0]) if has else None
            out.append(Posting(doc, freq, bits, locs))
        return out

    def to_arrow(self):
        """The columns as one Arrow array, a list of hits per term, without copying:
        ``list<struct<doc, freq, norm_bits, locations: list<struct<field_id, pos, start, end,
        array_positions: list<uint64>>>>>`` (``locations`` null where ``has_locations`` is clear)."""
        import pyarrow as pa

        lists = pa.LargeListArray.from_arrays
        array_positions = lists(self.array_position_offsets, self.array_positions)
        locations = pa.StructArray.from_arrays(
            [self.field_ids, self.pos, self.starts, self.ends, array_positions], ["field_id", "pos", "start", "end", "array_positions"])
        hits = pa.StructArray.from_arrays(
            [self.docs, self.freqs, self.norm_bits, lists(self.location_offsets, locations, mask=pa.array(~self.has_locations))],
            ["doc", "freq", "norm_bits", "locations"])
        return lists(self.hit_offsets, hits)

    def take(self, terms: np.ndarray) -> PostingsColumns:
        """The columns of the terms at ``terms`` (indexes, in that order, repeats allowed)."""
        terms = np.asarray(terms, dtype=np.int64)
        hits = ragged_arange(self.hit_offsets[terms], np.diff(self.hit_offsets)[terms])
        locs = ragged_arange(self.location_offsets[hits], np.diff(self.location_offsets)[hits])
        aps = ragged_arange(self.array_position_offsets[locs], np.diff(self.array_position_offsets)[locs])
        return PostingsColumns(
            list_offsets(np.diff(self.hit_offsets)[terms]), self.docs[hits], self.freqs[hits], self.norm_bits[hits],
            self.has_locations[hits], list_offsets(np.diff(self.location_offsets)[hits]),
            self.field_ids[locs], self.pos[locs], self.starts[locs], self.ends[locs],
            list_offsets(np.diff(self.array_position_offsets)[locs]), self.array_positions[aps],
        )

    @classmethod
    def concat(cls, parts: Sequence[PostingsColumns]) -> PostingsColumns:
        """The terms of ``parts`` one after the other."""
        cat = lambda name: np.concatenate([getattr(p, name) for p in parts])  # noqa: E731
        counts = lambda name: np.concatenate([np.diff(getattr(p, name)) for p in parts])  # noqa: E731
        return cls(
            list_offsets(counts("hit_offsets")), cat("docs"), cat("freqs"), cat("norm_bits"), cat("has_locations"),
            list_offsets(counts("location_offsets")), cat("field_ids"), cat("pos"), cat("starts"), cat("ends"),
            list_offsets(counts("array_position_offsets")), cat("array_positions"),
        )


def _capped(values: np.ndarray) -> np.ndarray:
    """uint64 values as int64, capped at ``_INDEX_CAP`` (so that index arithmetic cannot wrap)."""
    return np.minimum(values, np.uint64(_INDEX_CAP)).astype(np.int64)


def _uvarint_stream(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every uvarint of ``raw`` (which ends with a uvarint's last byte): (values, start offsets
    with ``len(raw)`` appended, too-long mask) — a value over 64 bits is flagged, not decoded."""
    ends = np.flatnonzero(raw < 0x80)
    at = np.empty(len(ends) + 1, dtype=np.int64)
    at[0] = 0
    at[1:] = ends + 1
    lengths = np.diff(at)
    values = raw[ends].astype(np.uint64)
    too_long = (lengths > MAX_UVARINT_BYTES) | ((lengths == MAX_UVARINT_BYTES) & (values > 1))
    sel = np.flatnonzero((lengths > 1) & ~too_long)
    k = 1  # Horner from the last (most significant) byte down
    while sel.size:
        values[sel] = (values[sel] << np.uint64(7)) | (raw[ends[sel] - k] & 0x7F)
        k += 1
        sel = sel[lengths[sel] > k]
    return values, at, too_long


def _bytes_u(buf: np.ndarray, pos: np.ndarray, width: int) -> np.ndarray:
    """The little-endian unsigned integers of ``width`` bytes at ``pos`` (in bounds), as int64."""
    out = np.zeros(len(pos), dtype=np.int64)
    for i in reversed(range(width)):
        out = out << 8 | buf[pos + i]
    return out


_BATCH_BYTES = 1 << 23  # records read together lie within this many bytes (the work arrays take up to ~40x that)


def read_columns(
    data: memoryview, records: np.ndarray, file_end: int, chunk_factor: int, num_docs: int,
    record: Callable[[int], PostingsList], locations: bool = True,
) -> PostingsColumns:
    """The columns of the postings records at ``records`` (int64 offsets in the file, strictly
    ascending), decoded in bulk with numpy; without their locations (not decoded, nor checked
    where the bulk decoder reads the term: scoring needs none) unless ``locations``.

    The bulk decoder takes the layout zap writes: per term its freq/norm block, location block
    and postings record back to back, the roaring bitmap one array container (segments of up to
    65536 docs), every chunk's entries filling exactly its span. A record that differs from that
    in any way is read by ``record(offset)`` (:meth:`PostingsList.read` through the segment),
    hits that differ by :class:`PostingsList`'s per-hit decoder: both name what is wrong with a
    damaged file, so any damage raises their :class:`IndexFormatError`."""
    n = len(records)
    if n and records[-1] - records[0] > _BATCH_BYTES:  # in batches of nearby records: bounded work arrays
        batch = (records - records[0]) // _BATCH_BYTES
        cuts = np.flatnonzero(batch[1:] != batch[:-1]) + 1
        return PostingsColumns.concat([
            read_columns(data, part, file_end, chunk_factor, num_docs, record, locations) for part in np.split(records, cuts)])
    buf = np.frombuffer(data, dtype=np.uint8)[:file_end]
    if file_end < 16 or n == 0:
        return PostingsColumns.from_postings([record(int(r)) for r in records.tolist()], locations)
    # postings records: uvarint freqBlockOffset, uvarint locBlockOffset, uvarint roaringLen, roaring
    freq_offset, at, ok1 = uvarints_at(buf, records, file_end)
    loc_offset, at, ok2 = uvarints_at(buf, at, file_end)
    roaring_len, roaring_at, ok3 = uvarints_at(buf, at, file_end)
    freq_offset, loc_offset, roaring_len = _capped(freq_offset), _capped(loc_offset), _capped(roaring_len)
    roaring_end = roaring_at + roaring_len
    ok = ok1 & ok2 & ok3 & (roaring_end <= np.append(records[1:], file_end))  # bitmaps apart: docs <= file size
    header = buf[np.minimum(roaring_at, file_end - 16)[:, None] + np.arange(16)]
    words = np.ascontiguousarray(header).view("<u4")  # cookie, container count, key | (cardinality-1) << 16, offset
    card = (words[:, 2] >> 16).astype(np.int64) + 1
    ok &= (words[:, 0] == SERIAL_COOKIE_NO_RUNCONTAINER) & (words[:, 1] == 1) & (words[:, 3] == 16)
    ok &= (card <= ARRAY_MAX_CARDINALITY) & (roaring_len == 16 + 2 * card)
    # docNums of the one-array-container bitmaps: key << 16 | low half, strictly ascending, < numDocs
    counts = np.where(ok, card, 0)
    term = np.repeat(np.arange(n), counts)
    low = ragged_arange(np.zeros(n, dtype=np.int64), counts)  # index within the term
    at = roaring_at[term] + 16 + 2 * low
    docs = (words[:, 2] & 0xFFFF).astype(np.int64)[term] << 16 | buf[at] | buf[at + 1].astype(np.int64) << 8
    bad = docs >= num_docs
    bad[1:] |= (docs[1:] <= docs[:-1]) & (low[1:] > 0)
    ok[term[bad]] = False
    # the others: their records read one by one (raising on damage), then the same block decoding
    slow = np.flatnonzero(~ok).tolist()
    slow_lists = [record(int(records[i])) for i in slow]
    hit_counts = np.where(ok, card, 0)
    for i, pl in zip(slow, slow_lists):
        hit_counts[i] = len(pl)
        freq_offset[i], loc_offset[i] = pl.record_info[:2]
    hit_offsets = list_offsets(hit_counts)
    all_docs = np.empty(int(hit_offsets[-1]), dtype=np.int64)
    all_docs[np.repeat(ok, hit_counts)] = docs[ok[term]]
    for i, pl in zip(slow, slow_lists):
        all_docs[hit_offsets[i] : hit_offsets[i + 1]] = pl.docs
    return _read_blocks(buf, records, freq_offset, loc_offset, hit_offsets, all_docs, chunk_factor, record, locations)


def _read_blocks(
    buf: np.ndarray, records: np.ndarray, freq_offset: np.ndarray, loc_offset: np.ndarray, hit_offsets: np.ndarray,
    docs: np.ndarray, chunk_factor: int, record: Callable[[int], PostingsList], locations: bool,
) -> PostingsColumns:
    """The hits of the terms whose records and docNums are given, from their freq/norm and
    location blocks (see :func:`read_columns`)."""
    n = len(records)
    # Each term's uvarints, freq/norm block start to record: [freq_offset, record), apart from the
    # other terms' and ending with a uvarint's last byte (so that no uvarint runs into the next).
    previous_end = np.concatenate(([0], records[:-1]))
    ok = (freq_offset < loc_offset) & (loc_offset < records) & (freq_offset >= previous_end) & (buf[records - 1] < 0x80)
    fast = np.flatnonzero(ok)
    if not len(fast):
        return PostingsColumns.from_postings([record(int(r)) for r in records.tolist()], locations)
    f0, r0 = freq_offset[fast], records[fast]
    m = len(fast)
    lo, hi = int(f0[0]), int(r0[-1])
    inside = np.zeros(hi - lo + 1, dtype=np.int8)  # the regions' bytes, gathered: in from f0, out from r0
    inside[f0 - lo] += 1
    inside[r0 - lo] -= 1
    raw = buf[lo:hi][np.cumsum(inside[:-1], dtype=np.int8).view(bool)]
    values, at, too_long = _uvarint_stream(raw)
    nvals = len(values)
    region = list_offsets(r0 - f0)
    vs = np.searchsorted(at, region[:-1])  # each term's first value ...
    ve = np.searchsorted(at, region[1:])  # ... and the one after its last
    good = np.ones(m, dtype=bool)
    good[np.searchsorted(region, at[np.flatnonzero(too_long)], side="right") - 1] = False
    values[too_long] = 0
    V = lambda idx: values[np.minimum(idx, nvals - 1)]  # noqa: E731  (indexes of bad terms are clipped)
    hits = hit_offsets[fast + 1] - hit_offsets[fast]
    # freq/norm block: C, C chunk ends, (freq << 1 | hasLocs, norm bits) per hit; then the location block
    freq_chunks = _capped(V(vs))
    fe0 = vs + 1 + freq_chunks
    lb = fe0 + 2 * hits
    good &= (lb < ve) & (at[np.minimum(lb, nvals)] - at[vs] == (loc_offset - freq_offset)[fast])
    loc_chunks = _capped(V(lb))
    le0 = lb + 1 + loc_chunks
    good &= le0 <= ve
    freq_chunks[~good] = loc_chunks[~good] = hits[~good] = 0
    tid = np.repeat(np.arange(m), hits)
    hit_start = list_offsets(hits)
    local = np.arange(len(tid)) - hit_start[tid]
    hit_docs = docs[ragged_arange(hit_offsets[fast], hits)]
    chunk = hit_docs // chunk_factor
    last = hit_start[1:] - 1
    has_hits = hits > 0
    good[has_hits] &= (chunk[last[has_hits]] < freq_chunks[has_hits]) & (chunk[last[has_hits]] < loc_chunks[has_hits])
    fv = fe0[tid] + 2 * local
    code, bits = V(fv), V(fv + 1)
    good[tid[bits > 0xFFFFFFFF]] = False
    has_locs = (code & np.uint64(1)).astype(bool)
    key = tid << 32 | chunk  # ascending: terms in order, docs ascending within a term
    # freq/norm chunk c must end after the entries of the hits in chunks <= c
    c_tid = np.repeat(np.arange(m), freq_chunks)
    c = np.arange(len(c_tid)) - list_offsets(freq_chunks)[c_tid]
    k = np.searchsorted(key, c_tid << 32 | c, side="right") - hit_start[c_tid]
    expected = at[np.minimum(fe0[c_tid] + 2 * k, nvals)] - at[np.minimum(fe0[c_tid], nvals)]
    good[c_tid[V(vs[c_tid] + 1 + c) != expected.astype(np.uint64)]] = False
    if not locations:
        columns = PostingsColumns.hits(hit_start, hit_docs.astype(np.uint32), code >> np.uint64(1), bits.astype(np.uint32), has_locs)
    else:
        # location entries, one per hit with hasLocs: uvarint numBytes, then the locations; each entry
        # follows the one before, so they are found in rounds (round j: every term's j-th entry)
        loc_hits = np.flatnonzero(has_locs & good[tid])
        per_term = np.bincount(tid[loc_hits], minlength=m)
        value_at = np.full(len(raw) + 1, -1, dtype=np.int32 if len(raw) < 1 << 31 else np.int64)
        value_at[at] = np.arange(nvals + 1)
        heads, nexts = _chain_entries(values, at, value_at, le0, ve, per_term, good)
        entry_end = np.zeros(len(tid), dtype=np.int64)  # value index after the hit's entry (or the one before)
        entry_end[loc_hits] = nexts
        entry_end = np.maximum.accumulate(np.maximum(entry_end, le0[tid])) if len(tid) else entry_end
        c_tid = np.repeat(np.arange(m), loc_chunks)
        c = np.arange(len(c_tid)) - list_offsets(loc_chunks)[c_tid]
        k = np.searchsorted(key, c_tid << 32 | c, side="right")
        after = np.where(k > hit_start[c_tid], entry_end[np.maximum(k - 1, 0)], le0[c_tid])
        expected = at[np.minimum(after, nvals)] - at[np.minimum(le0[c_tid], nvals)]
        good[c_tid[V(lb[c_tid] + 1 + c) != expected.astype(np.uint64)]] = False
        # locations: fieldId, pos, start, end, n, n array positions, filling the entry's body
        loc_start, loc_count = _chain_locations(values, heads + 1, nexts, good, tid[loc_hits])
        locs_per_hit = np.zeros(len(tid), dtype=np.int64)
        locs_per_hit[loc_hits] = loc_count
        n_aps = _capped(V(loc_start + 4))
        columns = PostingsColumns(
            hit_start, hit_docs.astype(np.uint32), code >> np.uint64(1), bits.astype(np.uint32), has_locs,
            list_offsets(locs_per_hit), V(loc_start), V(loc_start + 1), V(loc_start + 2), V(loc_start + 3),
            list_offsets(n_aps), V(ragged_arange(loc_start + 5, n_aps)),
        )
    bad_terms = np.concatenate((np.flatnonzero(~ok), fast[~good]))
    if not len(bad_terms):
        return columns
    checked = PostingsColumns.from_postings([record(int(records[i])) for i in bad_terms.tolist()], locations)
    order = np.empty(n, dtype=np.int64)  # term i's place in [good fast terms, bad terms]
    good_fast = fast[good]
    order[good_fast] = np.arange(len(good_fast))
    order[bad_terms] = len(good_fast) + np.arange(len(bad_terms))
    return PostingsColumns.concat([columns.take(np.flatnonzero(good)), checked]).take(order)


def _chain_entries(values, at, value_at, le0, ve, per_term, good) -> tuple[np.ndarray, np.ndarray]:
    """(value index of each location entry's numBytes, value index after the entry), entries in
    term order; a term whose entries do not chain within its values is marked not ``good``.
    ``value_at[byte]``: the index of the value starting at that byte, or -1.

    Round j finds every term's j-th entry; once only a few terms are left (the ones with many
    hits), each is finished alone in a loop."""
    nvals = len(values)
    order = np.argsort(-per_term, kind="stable")
    sorted_counts = per_term[order]
    first = list_offsets(per_term)[:-1]
    heads = np.zeros(int(per_term.sum()), dtype=np.int64)
    nexts = np.zeros_like(heads)
    cur = le0[order]
    rounds = int(sorted_counts[0]) if len(order) else 0
    actives = np.searchsorted(-sorted_counts, -np.arange(rounds), side="left").tolist()  # terms with more than j entries
    for j, active in enumerate(actives):
        if active <= _FEW_TERMS:
            for t, h, count in zip(order[:active].tolist(), cur[:active].tolist(), sorted_counts[:active].tolist()):
                _follow_entries(values, at, value_at, h, int(ve[t]), count - j, heads, nexts, int(first[t]) + j, good, t)
            break
        t, h = order[:active], cur[:active]
        inside = h < ve[t]
        h = np.minimum(h, nvals - 1)
        body_end = at[h + 1] + _capped(values[h])
        inside &= body_end <= at[ve[t]]
        nx = value_at[np.where(inside, body_end, 0)]
        fine = inside & (nx >= 0)
        good[t[~fine]] = False
        heads[first[t] + j], nexts[first[t] + j] = h, np.where(fine, nx, h + 1)
        cur[:active] = np.where(fine, nx, ve[t])
    return heads, nexts


_FEW_TERMS = 8


def _follow_entries(values, at, value_at, start, end, count, heads, nexts, out, good, term) -> None:
    """``count`` entries of one term from value index ``start`` (within ``end``) into
    ``heads[out:]`` / ``nexts[out:]``; marks the term not ``good`` if they do not chain."""
    found = []
    h = start
    limit = int(at[end])
    for _ in range(count):
        found.append(h)
        body_end = int(at[h + 1]) + int(values[h]) if h < end else limit + 1
        nx = int(value_at[body_end]) if body_end <= limit else -1
        if nx < 0:
            good[term] = False
            return
        h = nx
    heads[out : out + count] = found
    nexts[out : out + count - 1] = found[1:]
    nexts[out + count - 1] = h


def _chain_locations(values, body_start, body_end, good, term) -> tuple[np.ndarray, np.ndarray]:
    """(value index of every location, locations per entry) of the entries' bodies
    ``[body_start, body_end)`` (value indexes); a term whose bodies do not split into whole
    locations is marked not ``good``. Bodies without array positions are split at once (every
    fifth value a 0 count), the others location by location in rounds."""
    nvals = len(values)
    size = np.maximum(body_end - body_start, 0)  # entries of a term found bad are left empty (0, 0)
    body_end = body_start + size
    whole = size // 5
    slot_body = np.repeat(np.arange(len(size)), whole)
    slots = body_start[slot_body] + 5 * (np.arange(len(slot_body)) - list_offsets(whole)[slot_body]) + 4
    plain = (size % 5 == 0) & (np.bincount(slot_body[values[np.minimum(slots, nvals - 1)] != 0], minlength=len(size)) == 0)
    counts = np.where(plain, whole, 0)
    found_body, found_start = [], []
    cur = body_start.copy()
    active = np.flatnonzero(~plain & (cur < body_end))
    while len(active):
        h = cur[active]
        nx = h + 5 + _capped(values[np.minimum(h + 4, nvals - 1)])
        fine = nx <= body_end[active]
        good[term[active[~fine]]] = False
        found_body.append(active[fine])
        found_start.append(h[fine])
        cur[active] = nx
        active = active[fine & (nx < body_end[active])]
    starts = np.zeros(int(counts.sum()) + sum(map(len, found_body)), dtype=np.int64)
    if found_body:
        other_body = np.concatenate(found_body)
        counts += np.bincount(other_body, minlength=len(size))
    offsets = list_offsets(counts)
    in_plain = np.repeat(plain, counts)
    starts[in_plain] = slots[np.repeat(plain, whole)] - 4
    if found_body:
        rank = np.concatenate([np.full(len(b), r) for r, b in enumerate(found_body)])  # round r: r-th location
        starts[offsets[other_body] + rank] = np.concatenate(found_start)
    return starts, counts
