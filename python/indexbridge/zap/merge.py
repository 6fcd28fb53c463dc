"""Merging zap segments with per-segment deleted docs into one, as zap's ``Merge`` does (spec/zap.md §16).

The output has the layout of :mod:`indexbridge.zap.segment`; what a merge decides:

* fields: ``_id``, then the byte-sorted union; ``fieldsSame`` = every input has the same list;
* new docNums: inputs in order, surviving docs in order (dropped = -1);
* stored records: copied as one block for an input without drops while ``fieldsSame``, else
  rebuilt (field ids remapped by name, snappy recomputed);
* per field, the inputs "in focus" have a non-empty FST for it. Terms in byte order; per term
  the in-focus inputs in order. Hits are copied byte for byte while ``fieldsSame``, else
  re-encoded. A term becomes 1-hit when it has one hit, no location bytes, docNum < 2^31 and
  the *last (term, input) pair* produced that doc with freq 1 (the pair's state restarts at 0
  for each input, so an input whose hits were all dropped disables it);
* docvalues: values of in-focus inputs only, copied verbatim under the new docNums.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence

from indexbridge.bytes import put_uvarint
from indexbridge.zap import docvalues, stored
from indexbridge.zap.docvalues import NOT_UNINVERTED
from indexbridge.zap.fst import FstBuilder
from indexbridge.zap.postings import (
    MAX_ONE_HIT_DOC,
    Location,
    encode_freq_norm,
    encode_locations,
    num_chunks,
    one_hit_value,
    write_postings,
)
from indexbridge.zap.segment import DEFAULT_CHUNK_FACTOR, Segment, field_order, write_tail
from indexbridge.zap.stored import StoredValue

DROPPED = -1


def _new_doc_nums(segments: Sequence[Segment], drops: Sequence[set[int]]) -> list[list[int]]:
    mapping, next_doc = [], 0
    for segment, dropped in zip(segments, drops):
        nums = []
        for doc in range(segment.num_docs):
            if doc in dropped:
                nums.append(DROPPED)
            else:
                nums.append(next_doc)
                next_doc += 1
        mapping.append(nums)
    return mapping


def _tagged(items: Iterator[tuple[bytes, int]], k: int) -> Iterator[tuple[bytes, int, int]]:
    """(term, k, value): terms of the k-th in-focus input, so that equal terms come in input order."""
    for term, value in items:
        yield term, k, value


def _write_stored(out: bytearray, segments: Sequence[Segment], drops: Sequence[set[int]], fields_same: bool,
                  ids: dict[str, int]) -> list[int]:
    offsets = []
    for segment, dropped in zip(segments, drops):
        if fields_same and not dropped:
            if segment.num_docs:
                index_at = segment.footer.stored_index_offset
                old = [int.from_bytes(segment.data[index_at + 8 * d : index_at + 8 * d + 8], "big") for d in range(segment.num_docs)]
                last = segment.record_reader(segment.num_docs - 1)
                _, _, last_end = stored.record_extent(last)
                base = len(out)
                out += segment.data[old[0] : last_end]
                offsets.extend(base + o - old[0] for o in old)
            continue
        for doc in range(segment.num_docs):
            if doc in dropped:
                continue
            doc_id, values = segment.stored_record(doc)
            remapped = [StoredValue(ids[segment.fields[v.field_id].name], v.type, v.value, v.array_positions) for v in values]
            remapped.sort(key=lambda v: v.field_id)
            offsets.append(len(out))
            out += stored.encode_record(doc_id, remapped)
    return offsets


def merge_segments(
    segments: Sequence[Segment],
    drops: Sequence[set[int] | None] | None = None,
    chunk_factor: int = DEFAULT_CHUNK_FACTOR,
) -> tuple[bytes, list[list[int]] | None]:
    """Merge ``segments`` minus their dropped docNums; return (segment bytes, new docNum per old doc or -1).

    The mapping is None when no document survives (the merged segment is then empty).
    """
    drops = [set(d or ()) for d in (drops or [None] * len(segments))]
    lists = [s.field_names for s in segments]
    fields_same = all(names == lists[0] for names in lists)
    field_names = field_order({n for names in lists for n in names})
    ids = {name: i for i, name in enumerate(field_names)}
    mapping = _new_doc_nums(segments, drops)
    num_docs = sum(1 for nums in mapping for n in nums if n != DROPPED)
    out = bytearray()
    if num_docs == 0:
        data = write_tail(out, field_names, [0] * len(field_names), 0, 0, NOT_UNINVERTED, chunk_factor)
        return data, None

    stored_offsets = _write_stored(out, segments, drops, fields_same, ids)
    stored_index_offset = len(out)
    for offset in stored_offsets:
        out += offset.to_bytes(8, "big")

    chunks = num_chunks(num_docs, chunk_factor)
    dict_offsets, sections = [], []
    for name in field_names:
        focus = []  # (input index, dictionary) with a non-empty FST for the field
        for i, segment in enumerate(segments):
            if segment.field(name) is not None:
                dictionary = segment.dictionary(name)
                if next(dictionary.items(), None) is not None:  # Go: a non-nil FST iterator
                    focus.append((i, dictionary))
        builder = FstBuilder()
        merged = heapq.merge(*[_tagged(d.items(), k) for k, (_, d) in enumerate(focus)])
        term = None
        docs: list[int] = []
        freq_entries: list[bytes] = []
        loc_entries: list[bytes] = []
        last = (0, 0, 0)

        def finish_term() -> None:
            if not docs:
                return
            doc = docs[0]
            if len(docs) == 1 and not any(loc_entries) and doc <= MAX_ONE_HIT_DOC and last[0] == doc and last[1] == 1:
                builder.insert(term, one_hit_value(doc, last[2]))
            else:
                freq_data, loc_data = b"".join(freq_entries), b"".join(loc_entries)
                value = write_postings(out, docs, freq_data, list(map(len, freq_entries)), loc_data, list(map(len, loc_entries)), chunk_factor, chunks)
                builder.insert(term, value)

        for this_term, k, value in merged:
            if this_term != term:
                finish_term()
                term, docs, freq_entries, loc_entries = this_term, [], [], []
            i, dictionary = focus[k]
            nums = mapping[i]
            source_names = segments[i].field_names
            last = (0, 0, 0)
            postings = dictionary.segment.postings_at(value, dictionary.field.dict_offset)
            for hit, freq_bytes, loc_bytes in postings.raw_hits():
                new_doc = nums[hit.doc] if hit.doc < len(nums) else DROPPED
                if new_doc == DROPPED:
                    continue
                docs.append(new_doc)
                if fields_same:
                    freq_entries.append(freq_bytes)
                    loc_entries.append(loc_bytes)
                else:
                    locations = [
                        Location(ids[source_names[loc.field_id]], loc.pos, loc.start, loc.end, loc.array_positions)
                        for loc in hit.locations or ()
                    ]
                    freq_entries.append(encode_freq_norm(hit.freq, bool(locations), hit.norm_bits))
                    loc_entries.append(encode_locations(locations))
                last = (new_doc, hit.freq, hit.norm_bits)
        finish_term()
        fst = builder.finish()
        dict_offsets.append(len(out))
        put_uvarint(out, len(fst))
        out += fst

        values: list[tuple[int, bytes]] = []
        has_section = False
        for i, dictionary in focus:
            section = segments[i].docvalue_section(name)
            if section is None:
                continue
            has_section = True
            nums = mapping[i]
            values.extend((nums[doc], value) for doc, value in section if doc < len(nums) and nums[doc] != DROPPED)
        if has_section:
            start = len(out)
            out += docvalues.encode_section(values, chunk_factor, chunks)
            sections.append((start, len(out)))
        else:
            sections.append((NOT_UNINVERTED, NOT_UNINVERTED))
    doc_value_offset = len(out)
    out += docvalues.encode_index(sections)
    data = write_tail(out, field_names, dict_offsets, num_docs, stored_index_offset, doc_value_offset, chunk_factor)
    return data, mapping
