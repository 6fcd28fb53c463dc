"""A zap v11 segment: writer from analysed documents, reader over a mapped file (spec/zap.md §2–§9, §15, §17).

::

    [stored-field records, one per doc]                         stored.py
    [stored-fields index: numDocs × u64 BE]                     <- storedIndexOffset
    per field id f = 0..F-1:
        per term of f, byte order: freq/norm block, location block, postings record   postings.py
        [dictionary: uvarint len + vellum FST]                  <- dictOffset of f   fst.py
        [docvalue section of f, if any]                         docvalues.py
    [docvalue index: F × (uvarint start, uvarint end)]          <- docValueOffset
    [field records: uvarint dictOffset, uvarint len(name), name]
    [fields index: F × u64 BE]                                  <- fieldsIndexOffset (no count: runs to the footer)
    footer, 44 bytes BE: u64 numDocs, u64 storedIndexOffset, u64 fieldsIndexOffset,
                         u64 docValueOffset, u32 chunkFactor, u32 version = 11,
                         u32 CRC-32 of every byte before it

Field 0 is ``_id``; the others are sorted by byte order. An empty segment holds only the field
records, fields index and footer (dictOffsets 0; docValueOffset 0, or 2^64-1 from a merge).
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from operator import attrgetter
from typing import NamedTuple

import numpy as np

from indexbridge.bytes import ByteReader, crc32, list_offsets, put_uvarint, ragged_arange, take_ranges, uvarints, uvarints_at
from indexbridge.errors import IndexFormatError
from indexbridge.zap import docvalues, stored
from indexbridge.zap.analysis import ID_FIELD_NAME, Document, Token, gc_paused
from indexbridge.zap.docvalues import NOT_UNINVERTED, DocValueSection, split_terms
from indexbridge.zap.fst import Fst, build_fst
from indexbridge.zap.postings import (
    ENCODING_MASK,
    ONE_HIT_FLAG,
    PostingsColumns,
    PostingsList,
    encode_location_groups,
    is_one_hit,
    norm_bits,
    num_chunks,
    read_columns,
    write_postings,
)
from indexbridge.zap.stored import StoredValue

VERSION = 11
DEFAULT_CHUNK_FACTOR = 1024
FOOTER_SIZE = 44
_FOOTER = struct.Struct(">QQQQIII")


def field_order(names: set[str]) -> list[str]:
    """Field ids: ``_id`` first, then the other names in byte order."""
    return [ID_FIELD_NAME] + sorted((n for n in names if n != ID_FIELD_NAME), key=lambda n: n.encode())


def write_tail(out: bytearray, field_names: list[str], dict_offsets: list[int], num_docs: int,
               stored_index_offset: int, doc_value_offset: int, chunk_factor: int) -> bytes:
    """Append field records, fields index and footer (with its CRC); return the whole file."""
    record_offsets = []
    for name, dict_offset in zip(field_names, dict_offsets):
        record_offsets.append(len(out))
        encoded = name.encode()
        put_uvarint(out, dict_offset)
        put_uvarint(out, len(encoded))
        out += encoded
    fields_index_offset = len(out)
    for offset in record_offsets:
        out += offset.to_bytes(8, "big")
    out += _FOOTER.pack(num_docs, stored_index_offset, fields_index_offset, doc_value_offset, chunk_factor, VERSION, 0)[:-4]
    out += crc32(out).to_bytes(4, "big")
    return bytes(out)


def build_segment(documents: Sequence[Document], chunk_factor: int = DEFAULT_CHUNK_FACTOR) -> bytes:
    """The bytes zap's ``New`` writes for ``documents`` (docNum = position) at ``chunk_factor``."""
    if chunk_factor <= 0:
        raise ValueError(f"chunk factor must be positive, got {chunk_factor}")
    with gc_paused():
        return _build(documents, chunk_factor)


def _build(documents: Sequence[Document], chunk_factor: int) -> bytes:
    names, uninverted = {ID_FIELD_NAME}, set()
    for doc in documents:
        names.update(f.name for f in doc.composite_fields)
        names.update(f.name for f in doc.fields)
        uninverted.update(f.name for f in doc.fields if f.doc_values)
    field_names = field_order(names)
    ids = {name: i for i, name in enumerate(field_names)}
    num_fields = len(field_names)
    # a field's instances with tokens, in document order (composites first in a document), and
    # the (document, field) pair of each: the pair's docNum and norm (its instances' lengths summed)
    field_tokens: list[list[Sequence[Token]]] = [[] for _ in field_names]
    field_pairs: list[list[int]] = [[] for _ in field_names]
    pair_docs: list[int] = []
    pair_bits: list[int] = []
    # a field with docvalues (any document's instance asks for them) -> (docNum, the document's
    # terms of the field, ascending, each followed by 0xff) of each document with terms in it
    doc_values: list[list[tuple[int, bytes]] | None] = [[] if name in uninverted else None for name in field_names]

    out = bytearray()
    stored_offsets = []
    for doc_num, doc in enumerate(documents):
        pairs: dict[int, int] = {}  # fid -> its pair
        lengths: list[int] = []  # by pair, from the document's first
        first_pair = len(pair_docs)
        uninverted_terms: dict[int, set[bytes]] = {}  # fid with docvalues -> the document's terms
        for instance in chain(doc.composite_fields, doc.fields):
            fid = ids[instance.name]
            pair = pairs.get(fid)
            if pair is None:
                pair = pairs[fid] = first_pair + len(lengths)
                lengths.append(0)
            lengths[pair - first_pair] += instance.length
            if instance.tokens:
                field_tokens[fid].append(instance.tokens)
                field_pairs[fid].append(pair)
                if doc_values[fid] is not None:
                    uninverted_terms.setdefault(fid, set()).update(map(_TERM, instance.tokens))
        pair_docs += [doc_num] * len(lengths)
        pair_bits += map(norm_bits, lengths)
        for fid, terms in uninverted_terms.items():
            doc_values[fid].append((doc_num, b"\xff".join(sorted(terms)) + b"\xff"))

        doc_id = None
        values = []
        for f in doc.fields:
            fid = ids[f.name]
            if f.store:
                if fid == 0:
                    if doc_id is None:
                        doc_id = f.value
                else:
                    values.append(StoredValue(fid, f.type, f.value, tuple(f.array_positions)))
        if doc_id is None:
            raise ValueError(f"document {doc_num} has no stored _id field")
        if len(values) > 1:
            values.sort(key=lambda v: v.field_id)  # stable: document order within a field
        stored_offsets.append(len(out))
        out += stored.encode_record(doc_id, values)

    num_docs = len(documents)
    stored_index_offset = len(out) if num_docs else 0
    for offset in stored_offsets:
        out += offset.to_bytes(8, "big")
    dict_offsets = [0] * num_fields
    doc_value_offset = 0
    if num_docs:
        chunks = num_chunks(num_docs, chunk_factor)
        docs_of_pairs, bits_of_pairs = np.array(pair_docs, dtype=np.int64), np.array(pair_bits, dtype=np.uint64)
        sections = []
        for fid in range(num_fields):
            terms, values = [], []
            if field_tokens[fid]:
                f = _invert(field_tokens[fid], field_pairs[fid], docs_of_pairs, bits_of_pairs, fid, ids)
                hits, freq_at, loc_at = f.hits, f.freq_offsets, f.loc_offsets
                terms = f.terms
                values = [
                    write_postings(
                        out,
                        f.docs[a:b],
                        f.freq_data[freq_at[a] : freq_at[b]],
                        f.freq_sizes[a:b],
                        f.loc_data[loc_at[a] : loc_at[b]],
                        f.loc_sizes[a:b],
                        chunk_factor,
                        chunks,
                    )
                    for a, b in zip(hits, hits[1:])
                ]
            # the FST after all of the field's postings: interleaving the two made the build 5% slower
            fst = build_fst(zip(terms, values))
            dict_offsets[fid] = len(out)
            put_uvarint(out, len(fst))
            out += fst
            if doc_values[fid] is None:
                sections.append((NOT_UNINVERTED, NOT_UNINVERTED))
            else:
                start = len(out)
                out += docvalues.encode_section(doc_values[fid], chunk_factor, chunks)
                sections.append((start, len(out)))
        doc_value_offset = len(out)
        out += docvalues.encode_index(sections)
    return write_tail(out, field_names, dict_offsets, num_docs, stored_index_offset, doc_value_offset, chunk_factor)


class _InvertedField(NamedTuple):
    """A field's postings, hit by hit in term order (ascending) and docNum order within a term:
    the hits of ``terms[i]`` are ``hits[i]:hits[i + 1]``; ``freq_data`` and ``loc_data`` hold each
    hit's freq/norm entry and location entry, whose sizes are in ``*_sizes`` and offsets (and the
    end) in ``*_offsets``."""

    terms: list[bytes]
    hits: list[int]
    docs: list[int]
    freq_data: bytes
    freq_sizes: list[int]
    freq_offsets: list[int]
    loc_data: bytes
    loc_sizes: list[int]
    loc_offsets: list[int]


_TERM = attrgetter("term")


def _invert(
    instances: list[Sequence[Token]],
    instance_pairs: list[int],
    pair_docs: np.ndarray,
    pair_bits: np.ndarray,
    fid: int,
    ids: dict[str, int],
) -> _InvertedField:
    """The postings of field ``fid`` from the tokens of its ``instances`` (document order), the
    instance ``i`` in the (document, field) pair ``instance_pairs[i]``, whose docNum and norm bits
    are in ``pair_docs`` and ``pair_bits``. A document's tokens of one term make one hit: their
    freqs summed, their locations in token order.

    A build has hundreds of thousands of tokens, and a Python step for each costs about as much
    as the rest of the build: the tokens and locations (named tuples) are flattened into their
    fields at C speed, one list each, and grouped and encoded with numpy, leaving one dict lookup
    a token (its term's rank) and one length a token and a location."""
    token_fields = list(chain.from_iterable(chain.from_iterable(instances)))  # term, freq, locations of each
    term_list = token_fields[0::3]
    num_tokens = len(term_list)
    token_pairs = np.repeat(np.array(instance_pairs, dtype=np.int64), list(map(len, instances)))
    terms = sorted(set(term_list))
    rank = {term: i for i, term in enumerate(terms)}
    token_keys = np.fromiter(map(rank.__getitem__, term_list), dtype=np.int64, count=num_tokens) * len(pair_docs) + token_pairs
    order = np.argsort(token_keys, kind="stable")  # by term, then document; tokens in order within a hit
    keys = token_keys[order]
    firsts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))  # each hit's first token
    hit_keys = keys[firsts]
    hit_terms, hit_pairs = np.divmod(hit_keys, len(pair_docs))
    hit_bounds = np.flatnonzero(np.concatenate(([True], hit_terms[1:] != hit_terms[:-1], [True])))
    freqs = np.add.reduceat(np.array(token_fields[1::3], dtype=np.uint64)[order], firsts)

    locations = token_fields[2::3]
    location_fields = list(chain.from_iterable(chain.from_iterable(locations)))  # field, pos, start, end, array positions of each
    names, pos, starts, ends, array_positions = (location_fields[k::5] for k in range(5))
    field_ids = {name: ids[name] if name else fid for name in set(names)}  # a location naming no field is in the token's
    loc_bytes, token_loc_sizes = encode_location_groups(
        np.fromiter(map(field_ids.__getitem__, names), dtype=np.int64, count=len(names)),
        pos,
        starts,
        ends,
        array_positions,
        np.fromiter(map(len, locations), dtype=np.int64, count=num_tokens),
    )
    # each token's location bytes, in hit order, then each hit's location entry: uvarint numBytes
    # and them (nothing for a hit without locations)
    token_loc_at = list_offsets(token_loc_sizes)[:-1]
    body = loc_bytes[ragged_arange(token_loc_at[order], token_loc_sizes[order])]
    body_sizes = np.add.reduceat(token_loc_sizes[order], firsts)
    has_locations = body_sizes > 0
    heads, head_sizes = uvarints(body_sizes[has_locations])
    loc_sizes = body_sizes.copy()
    loc_sizes[has_locations] += head_sizes
    loc_offsets = list_offsets(loc_sizes)
    loc_data = np.empty(int(loc_offsets[-1]), dtype=np.uint8)
    head_at = loc_offsets[:-1][has_locations]
    loc_data[ragged_arange(head_at, head_sizes)] = heads
    loc_data[ragged_arange(loc_offsets[:-1] + (loc_sizes - body_sizes), body_sizes)] = body

    # freq/norm entries: uvarint (freq << 1 | hasLocs), uvarint norm bits
    freq_data, value_sizes = uvarints(np.stack((freqs << np.uint64(1) | has_locations, pair_bits[hit_pairs]), axis=1).ravel())
    freq_sizes = value_sizes[0::2] + value_sizes[1::2]
    return _InvertedField(
        terms,
        hit_bounds.tolist(),
        pair_docs[hit_pairs].tolist(),
        freq_data.tobytes(),
        freq_sizes.tolist(),
        list_offsets(freq_sizes).tolist(),
        loc_data.tobytes(),
        loc_sizes.tolist(),
        loc_offsets.tolist(),
    )


@dataclass(frozen=True)
class FieldInfo:
    id: int
    name: str
    record_offset: int
    dict_offset: int
    docvalues: tuple[int, int] | None


@dataclass(frozen=True)
class Footer:
    num_docs: int
    stored_index_offset: int
    fields_index_offset: int
    doc_value_offset: int
    chunk_factor: int
    version: int
    crc: int


class Dictionary:
    """A field's term dictionary: its FST (None when the field has none) and postings lookup."""

    def __init__(self, segment: Segment, field: FieldInfo, fst: Fst | None, fst_len: int | None) -> None:
        self.segment, self.field, self.fst, self.fst_len = segment, field, fst, fst_len

    def __len__(self) -> int:
        return 0 if self.fst is None else len(self.fst)

    def items(self, start: bytes | None = None, end: bytes | None = None) -> Iterator[tuple[bytes, int]]:
        """(term, FST value) in byte order, ``start <= term < end``."""
        return iter(()) if self.fst is None else self.fst.items(start, end)

    def prefix(self, prefix: bytes) -> Iterator[tuple[bytes, int]]:
        return iter(()) if self.fst is None else self.fst.prefix(prefix)

    def terms(self) -> Iterator[bytes]:
        return (t for t, _ in self.items())

    def postings(self, term: bytes) -> PostingsList:
        """The term's hits (empty if the term is absent)."""
        value = None if self.fst is None else self.fst.get(term)
        return PostingsList.empty() if value is None else self.segment.postings_at(value, self.field.dict_offset)

    def postings_columns(self, terms: Sequence[bytes] | None = None, locations: bool = True) -> PostingsColumns:
        """The hits of many terms at once as flat arrays, term ``i`` of ``terms`` at index ``i``
        (no hits for an absent term); ``None``: every term of the field in byte order, as
        :meth:`terms` lists them. Same values as :meth:`postings` term by term (without the
        locations unless ``locations``)."""
        if self.fst is None:
            values = [None] * (0 if terms is None else len(terms))
        elif terms is None:
            values = [v for _, v in self.fst.items()]
        else:
            values = self.fst.get_many(terms)
        return self.segment.postings_columns_at(values, self.field.dict_offset, locations)


class Segment:
    """A zap v11 segment read in place (memory-mapped for files); the CRC is checked unless told not to."""

    def __init__(self, data: bytes | bytearray | memoryview | mmap.mmap, source: str = "<bytes>", verify_crc: bool = True) -> None:
        self._mmap = data if isinstance(data, mmap.mmap) else None
        self.data = memoryview(data).cast("B")
        self.source = source
        size = len(self.data)
        if size < FOOTER_SIZE:
            raise IndexFormatError(source, 0, f"a zap segment of at least {FOOTER_SIZE} bytes, found {size}")
        footer = Footer(*_FOOTER.unpack_from(self.data, size - FOOTER_SIZE))
        self.footer = footer
        if footer.version != VERSION:
            raise IndexFormatError(source, size - 8, f"zap version {VERSION}, found {footer.version}")
        self.crc_ok = crc32(self.data[: size - 4]) == footer.crc
        if verify_crc and not self.crc_ok:
            raise IndexFormatError(source, size - 4, f"CRC-32 {crc32(self.data[: size - 4]):#010x} of the segment, found {footer.crc:#010x}")
        if footer.chunk_factor == 0:
            raise IndexFormatError(source, size - 12, "a positive chunk factor, found 0")
        body_end = size - FOOTER_SIZE
        fio = footer.fields_index_offset
        if fio > body_end or (body_end - fio) % 8 or fio == body_end:
            raise IndexFormatError(source, size - 28, f"a fields index offset leaving a whole number of (>= 1) u64 entries before the footer at {body_end}, found {fio}")
        self.num_docs = footer.num_docs
        if self.num_docs and (footer.stored_index_offset + 8 * self.num_docs > fio):
            raise IndexFormatError(source, size - 36, f"a stored index of {self.num_docs} entries before the fields index, found offset {footer.stored_index_offset}")
        index = ByteReader(self.data, source, fio, body_end)
        record_offsets = [index.u64_be("field record offset") for _ in range((body_end - fio) // 8)]
        doc_value_ranges: list[tuple[int, int]] | None = None
        if self.num_docs and footer.doc_value_offset != NOT_UNINVERTED:
            if footer.doc_value_offset >= fio:
                raise IndexFormatError(source, size - 20, f"a docvalue index offset before the fields index, found {footer.doc_value_offset}")
            reader = ByteReader(self.data, source, footer.doc_value_offset, fio)
            doc_value_ranges = [(reader.uvarint("docvalue start"), reader.uvarint("docvalue end")) for _ in record_offsets]
        fields = []
        for fid, offset in enumerate(record_offsets):
            if offset >= fio:
                raise IndexFormatError(source, fio + 8 * fid, f"a field record before the fields index, found offset {offset}")
            reader = ByteReader(self.data, source, offset, fio)
            dict_offset = reader.uvarint("dictionary offset")
            name_bytes = reader.take(reader.uvarint("field name length"), "field name")
            try:
                name = bytes(name_bytes).decode()
            except UnicodeDecodeError:
                raise IndexFormatError(source, offset, "a UTF-8 field name") from None
            if dict_offset >= fio:
                raise IndexFormatError(source, offset, f"a dictionary offset before the fields index, found {dict_offset}")
            dv = None
            if doc_value_ranges is not None and doc_value_ranges[fid][0] != NOT_UNINVERTED:
                dv = doc_value_ranges[fid]
            fields.append(FieldInfo(fid, name, offset, dict_offset, dv))
        self.fields = fields
        self._ids = {f.name: f.id for f in fields}
        self._dictionaries: dict[int, Dictionary] = {}

    @classmethod
    def open(cls, path: str | os.PathLike, verify_crc: bool = True) -> Segment:
        """Map the file at ``path`` (nothing is read whole, except to verify the CRC)."""
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        return cls(data, str(path), verify_crc)

    def close(self) -> None:
        self._dictionaries.clear()
        self.data.release()
        if self._mmap is not None:
            try:
                self._mmap.close()
            except BufferError:  # views handed out (postings, FSTs) keep the mapping alive
                pass

    def __enter__(self) -> Segment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def chunk_factor(self) -> int:
        return self.footer.chunk_factor

    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> FieldInfo | None:
        fid = self._ids.get(name)
        return None if fid is None else self.fields[fid]

    def dictionary(self, field: str | int) -> Dictionary:
        """The term dictionary of a field (by name or id); KeyError if the segment lacks the field."""
        fid = field if isinstance(field, int) else self._ids[field]
        cached = self._dictionaries.get(fid)
        if cached is None:
            info = self.fields[fid]
            fst = fst_len = None
            if info.dict_offset:
                reader = ByteReader(self.data, self.source, info.dict_offset, len(self.data) - FOOTER_SIZE)
                fst_len = reader.uvarint("FST length")
                start = reader.pos
                fst = Fst(reader.take(fst_len, "vellum FST"), self.source, start)
            cached = self._dictionaries[fid] = Dictionary(self, info, fst, fst_len)
        return cached

    def postings_at(self, value: int, dict_offset: int = 0) -> PostingsList:
        """The postings list an FST value names: 1-hit, or the record at that offset.

        ``dict_offset`` (the dictionary the value came from) is the offset errors name."""
        if is_one_hit(value):
            if value & 0x7FFFFFFF >= self.num_docs:
                raise IndexFormatError(self.source, dict_offset, f"a 1-hit FST value with a docNum below {self.num_docs}, found {value}")
            return PostingsList.one_hit(value)
        if value >> 62 or not 0 < value < len(self.data) - FOOTER_SIZE:
            raise IndexFormatError(self.source, dict_offset, f"an FST value that is 1-hit or a postings offset in the file, found {value}")
        return PostingsList.read(self.data, self.source, value, len(self.data) - FOOTER_SIZE, self.chunk_factor, self.num_docs)

    def postings_columns_at(self, values: Sequence[int | None], dict_offset: int = 0, locations: bool = True) -> PostingsColumns:
        """The columns of the postings lists that FST values name (None: no hits), in their order,
        decoded in bulk (without the locations unless ``locations``); a value that
        :meth:`postings_at` rejects raises its error."""
        found = [v for v in values if v is not None]
        vals = np.array(found, dtype=np.uint64)
        one = vals & np.uint64(ENCODING_MASK) == np.uint64(ONE_HIT_FLAG)
        file_end = len(self.data) - FOOTER_SIZE
        bad = np.where(one, vals & np.uint64(0x7FFFFFFF) >= self.num_docs, (vals >> np.uint64(62) != 0) | (vals == 0) | (vals >= file_end))
        if bad.any():
            self.postings_at(found[int(np.argmax(bad))], dict_offset)  # raises its error
        offsets = vals[~one].astype(np.int64)
        ascending = bool(np.all(offsets[1:] > offsets[:-1]))
        records, inverse = (offsets, None) if ascending else np.unique(offsets, return_inverse=True)
        general = read_columns(self.data, records, file_end, self.chunk_factor, self.num_docs,
                               lambda offset: PostingsList.read(self.data, self.source, offset, file_end, self.chunk_factor, self.num_docs),
                               locations)
        if len(found) == len(values) and ascending and not one.any():
            return general
        # term i's place in [general records, 1-hit values, one term without hits]
        place = np.empty(len(found), dtype=np.int64)
        place[~one] = np.arange(len(records)) if inverse is None else inverse.reshape(-1)
        place[one] = len(records) + np.arange(int(one.sum()))
        order = np.full(len(values), len(records) + int(one.sum()), dtype=np.int64)
        order[[i for i, v in enumerate(values) if v is not None]] = place
        empty = replace(PostingsColumns.one_hits(np.zeros(0, dtype=np.uint64)), hit_offsets=np.zeros(2, dtype=np.int64))
        return PostingsColumns.concat([general, PostingsColumns.one_hits(vals[one]), empty]).take(order)

    def postings(self, field: str, term: bytes) -> PostingsList:
        """Hits of ``term`` in ``field`` (empty for an unknown field or term)."""
        if field not in self._ids:
            return PostingsList.empty()
        return self.dictionary(field).postings(term)

    def record_reader(self, doc: int) -> ByteReader:
        """A reader at the stored record of ``doc``, bounded by the stored index."""
        if not 0 <= doc < self.num_docs:
            raise IndexError(f"document {doc} out of range [0, {self.num_docs})")
        at = self.footer.stored_index_offset + 8 * doc
        offset = int.from_bytes(self.data[at : at + 8], "big")
        if offset >= self.footer.stored_index_offset:
            raise IndexFormatError(self.source, at, f"a stored record offset before the stored index, found {offset}")
        return ByteReader(self.data, self.source, offset, self.footer.stored_index_offset)

    def stored_record(self, doc: int) -> tuple[bytes, list[StoredValue]]:
        """(``_id`` bytes, other stored values with field ids) of document ``doc``."""
        return stored.decode_record(self.record_reader(doc))

    def document(self, doc: int) -> list[tuple[str, str, bytes, tuple[int, ...]]]:
        """Stored values of ``doc`` as (field name, type, value, array positions), ``_id`` first."""
        doc_id, values = self.stored_record(doc)
        out = [(ID_FIELD_NAME, "t", doc_id, ())]
        for v in values:
            if v.field_id >= len(self.fields):
                raise IndexFormatError(self.source, self.record_reader(doc).pos, f"a stored field id below {len(self.fields)}, found {v.field_id}")
            out.append((self.fields[v.field_id].name, v.type, v.value, v.array_positions))
        return out

    def doc_id(self, doc: int) -> bytes:
        """The external id of ``doc`` (no decompression needed)."""
        reader = self.record_reader(doc)
        meta_start, data_start, end = stored.record_extent(reader)
        id_len = ByteReader(self.data, self.source, meta_start, data_start).uvarint("stored _id length")
        if id_len > end - data_start:
            raise IndexFormatError(self.source, meta_start, f"an _id of at most {end - data_start} bytes, found {id_len}")
        return bytes(self.data[data_start : data_start + id_len])

    def doc_ids(self, docs: Sequence[int] | np.ndarray) -> list[bytes]:
        """The external ids of ``docs`` (any order, repeats allowed), as :meth:`doc_id` gives
        each, read all at once (numpy) from the stored index and the records' heads. A doc out of
        range or a record that does not parse sends them all to :meth:`doc_id`, which raises."""
        docs = np.asarray(docs, dtype=np.int64)
        if not len(docs) or docs.min() < 0 or docs.max() >= self.num_docs:  # doc by doc: one out of range raises
            return [self.doc_id(d) for d in docs.tolist()]
        sio = self.footer.stored_index_offset
        buf = np.frombuffer(self.data, dtype=np.uint8)
        offsets = np.frombuffer(self.data, dtype=">u8", count=self.num_docs, offset=sio)[docs]
        # a record: uvarint metaLen, uvarint dataLen, meta (uvarint len(_id) first), _id, ...; an
        # offset at or past the stored index is read at it: a uvarint past the end, not ok
        meta_len, at, ok_meta = uvarints_at(buf, np.minimum(offsets, sio).astype(np.int64), sio)
        data_len, meta_start, ok_data = uvarints_at(buf, at, sio)
        data_start = meta_start + np.minimum(meta_len, sio).astype(np.int64)  # capped: no wrap, still past sio
        end = data_start + np.minimum(data_len, sio).astype(np.int64)
        id_len, id_len_end, ok_id = uvarints_at(buf, meta_start, sio)
        id_end = data_start + np.minimum(id_len, sio).astype(np.int64)
        ok = ok_meta & ok_data & ok_id & (end <= sio) & (id_len_end <= data_start) & (id_end <= end)
        if not ok.all():  # doc by doc: the first bad one raises
            return [self.doc_id(d) for d in docs.tolist()]
        return take_ranges(buf, data_start, id_end)

    def docvalue_section(self, field: str | int) -> DocValueSection | None:
        fid = field if isinstance(field, int) else self._ids[field]
        info = self.fields[fid]
        if info.docvalues is None:
            return None
        return DocValueSection(self.data, self.source, *info.docvalues, self.chunk_factor)

    def docvalues(self, field: str | int) -> Iterator[tuple[int, list[bytes]]]:
        """(docNum, terms) for the docs with values in the field's docvalue section."""
        section = self.docvalue_section(field)
        if section is not None:
            for doc, value in section:
                yield doc, split_terms(value)
