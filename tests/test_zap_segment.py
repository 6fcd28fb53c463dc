"""Zap segments against a brute-force in-memory index over generated corpora.

Build: a segment written from random analysed documents (random chunk factor) must read back
exactly what a plain dict-of-lists index of the same documents holds (terms, postings with
freqs/norms/locations, prefix and range queries, stored fields, doc ids, docvalues).
Merge: merging random segments with random drops must read like a segment built from the
surviving documents, with the documented doc-number mapping.
The default run takes the day's share of each test's seeds (``depth.py``).
"""

from __future__ import annotations

import random
from bisect import bisect_left
from pathlib import Path

import depth
import pytest
from zap_generated import NAMES, VOCABULARY, brute_force, check_columns, corpus, hits_or_error

from indexbridge.zap.merge import DROPPED, merge_segments
from indexbridge.errors import IndexFormatError
from indexbridge.zap.postings import PostingsList, is_one_hit
from indexbridge.zap.segment import Segment, build_segment, field_order


def read_back(segment: Segment, rng: random.Random) -> dict:
    """The same picture through the reader (and its prefix/range/lookup paths)."""
    postings = {}
    for info in segment.fields:
        dictionary = segment.dictionary(info.id)
        items = list(dictionary.items())
        terms = [t for t, _ in items]
        for probe in rng.sample(VOCABULARY, 4):
            assert [t for t, _ in dictionary.prefix(probe)] == [t for t in terms if t.startswith(probe)]
            assert list(dictionary.items(probe, b"t")) == items[bisect_left(terms, probe) : max(bisect_left(terms, probe), bisect_left(terms, b"t"))]
        postings[info.name] = {
            term: [(p.doc, p.freq, p.norm_bits, p.locations) for p in dictionary.postings(term)] for term in terms
        }
        assert list(dictionary.postings(b"\x00absent")) == []
    stored = [segment.document(d) for d in range(segment.num_docs)]
    for d in range(segment.num_docs):
        assert segment.doc_id(d) == stored[d][0][2]
    asked = [rng.randrange(segment.num_docs) for _ in range(rng.randint(0, 2 * segment.num_docs))] if segment.num_docs else []
    assert segment.doc_ids(asked) == [stored[d][0][2] for d in asked]  # any order, repeats
    doc_values = {}
    for info in segment.fields:
        values = [(doc, terms) for doc, terms in segment.docvalues(info.id)]
        if values:
            doc_values[info.name] = values
    return {"fields": segment.field_names, "postings": postings, "stored": stored, "docvalues": doc_values}


@pytest.mark.parametrize("seed", depth.seeds(40, 20))
def test_build_reads_back_as_the_brute_force_index(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    docs = corpus(rng, 0, rng.randrange(0, 60))
    chunk_factor = rng.choice([1, 2, 3, 7, 1024])
    path = tmp_path / "seg.zap"
    path.write_bytes(build_segment(docs, chunk_factor))
    with Segment.open(path) as segment:
        assert segment.num_docs == len(docs) and segment.chunk_factor == chunk_factor
        assert read_back(segment, rng) == brute_force(docs)


@pytest.mark.parametrize("seed", depth.seeds(12, 4))
def test_the_bulk_decoder_reads_every_list_zap_writes(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """On the layout zap writes, iterating a postings list never needs the checked decoder, and a
    record of one doc is read with its hit: a bulk decoder that misread every list would fall back
    to the lazy or the checked decoder and still answer right, only slower, so the answers alone
    would not show it."""
    rng = random.Random(seed)
    docs = corpus(rng, 0, rng.randrange(1, 60))
    segment = Segment(build_segment(docs, rng.choice([1, 2, 3, 7, 1024])))

    def checked_decoder(self: PostingsList):
        raise AssertionError(f"the checked decoder read the list at {self.record_info}")

    monkeypatch.setattr(PostingsList, "_decode", checked_decoder)
    assert read_back(segment, rng)["postings"] == brute_force(docs)["postings"]
    for info in segment.fields:
        for _, value in segment.dictionary(info.id).items():
            pl = segment.postings_at(value)
            if not is_one_hit(value) and len(pl) == 1:
                assert pl._postings_read == list(pl), pl.record_info
            for hit in pl:  # Python ints, not numpy's
                assert {type(v) for v in (*hit[:3], *(x for loc in hit.locations or () for x in (*loc[:4], *loc.array_positions)))} == {int}


@pytest.mark.parametrize("seed", depth.seeds(30, 15))
def test_merge_reads_like_a_build_of_the_survivors(seed: int) -> None:
    rng = random.Random(1000 + seed)
    corpora, segments, drops = [], [], []
    first = 0
    shared = NAMES if rng.random() < 0.5 else None  # then the inputs' field lists are (likely) the same
    for _ in range(rng.randrange(1, 4)):
        docs = corpus(rng, first, rng.randrange(0, 25), shared)
        first += len(docs)
        corpora.append(docs)
        segments.append(Segment(build_segment(docs, rng.choice([1, 4, 1024]))))
        drops.append({d for d in range(len(docs)) if rng.random() < 0.3})
    data, mapping = merge_segments(segments, drops)
    survivors = [doc for docs, dropped in zip(corpora, drops) for i, doc in enumerate(docs) if i not in dropped]
    if not survivors:
        assert mapping is None
    else:
        expected_map, n = [], 0
        for docs, dropped in zip(corpora, drops):
            expected_map.append([DROPPED if i in dropped else (n := n + 1) - 1 for i in range(len(docs))])
        assert mapping == expected_map
    merged = Segment(data)
    # the merged segment keeps every input field, also those only in dropped docs (with no terms)
    order = field_order({n for s in segments for n in s.field_names})
    expected = brute_force(survivors, order)
    got = read_back(merged, rng)
    assert got["fields"] == order
    if survivors:  # every _id term has one freq-1 hit without locations, from one input: 1-hit
        assert all(is_one_hit(v) for _, v in merged.dictionary("_id").items())
    for name in got["fields"]:
        assert got["postings"][name] == expected["postings"].get(name, {}), name
    assert got["stored"] == expected["stored"]
    # docvalues come from the inputs that had a section (and terms) for the field, renumbered
    doc_values: dict[str, list] = {}
    for docs, nums in zip(corpora, mapping or []):
        own = brute_force(docs)
        for name, values in sorted(own["docvalues"].items()):
            doc_values.setdefault(name, []).extend((nums[d], terms) for d, terms in values if nums[d] != DROPPED)
    assert got["docvalues"] == {name: values for name, values in doc_values.items() if values}


COLUMNS_EVERY = 4  # the columnar read of a sample of the targeted damages (each costs a few ms)


@pytest.mark.parametrize("seed", depth.seeds(20, 5))
def test_bulk_postings_decode_agrees_with_the_checked_decoder_on_damaged_bytes(seed: int) -> None:
    """Iterating a postings list decodes it in bulk (and a one-doc record's hit with the record);
    on any byte damage it must give exactly the checked, field-by-field decoder's hits or its
    error. So must the columnar read of all the field's lists at once (numpy), or raise when any
    of them does."""
    rng = random.Random(seed)
    docs = corpus(rng, 0, rng.randrange(1, 60))
    data = bytearray(build_segment(docs, rng.choice([1, 2, 3, 7, 1024])))
    terms = []
    with Segment(bytes(data)) as segment:
        postings_end = min(f.dict_offset for f in segment.fields if f.dict_offset) if any(f.dict_offset for f in segment.fields) else 0
        postings_start = segment.footer.stored_index_offset + 8 * segment.num_docs
        for info in segment.fields:
            terms += [(info.id, value) for _, value in segment.dictionary(info.id).items() if not is_one_hit(value)]
    if postings_end <= postings_start:
        return
    for _ in range(60):
        damaged = bytearray(data)
        for _ in range(rng.randrange(1, 4)):  # a new byte, or a length / continuation bit nudged
            at = rng.randrange(postings_start, postings_end)
            damaged[at] = rng.choice([rng.randrange(256), (damaged[at] + 1) % 256, (damaged[at] - 1) % 256, damaged[at] ^ 0x80])
        segment = Segment(bytes(damaged), verify_crc=False)
        for fid, value in terms:
            try:
                pl = segment.postings_at(value, segment.fields[fid].dict_offset)
            except IndexFormatError:
                continue
            checked = hits_or_error(lambda: (h.posting for h in PostingsList(pl.docs, None, pl._record)._decode()))
            assert hits_or_error(lambda: iter(pl)) == checked
        for info in segment.fields:
            check_columns(segment, [value for fid, value in terms if fid == info.id], info.dict_offset)


def _ids_or_error(segment: Segment, docs: list[int], at_once: bool) -> list[bytes] | str:
    try:
        return segment.doc_ids(docs) if at_once else [segment.doc_id(d) for d in docs]
    except (IndexFormatError, IndexError) as error:  # IndexError: a doc out of range
        return f"{type(error).__name__}: {error}"


@pytest.mark.parametrize("seed", depth.seeds(12, 6))
def test_doc_ids_at_once_agree_with_doc_id_on_damaged_records(seed: int) -> None:
    """``doc_ids`` reads every record head at once (numpy); on damage to a record's head (its
    lengths, the _id length, the _id) or to a stored-index entry it must give exactly what
    ``doc_id`` gives doc by doc: the same ids or the same error."""
    rng = random.Random(seed)
    docs = corpus(rng, 0, rng.randrange(1, 30))
    data = build_segment(docs, rng.choice([1, 7, 1024]))
    segment = Segment(data)
    sio = segment.footer.stored_index_offset
    record = [int.from_bytes(data[sio + 8 * d : sio + 8 * d + 8], "big") for d in range(segment.num_docs)]
    asked = [rng.randrange(segment.num_docs) for _ in range(2 * segment.num_docs)]
    damages = []
    for d in rng.sample(range(segment.num_docs), min(4, segment.num_docs)):
        for at in range(record[d], min(record[d] + 6, sio)):  # metaLen, dataLen, len(_id), the _id's first bytes
            damages += [(at, bytes((v,))) for v in (0, 1, data[at] ^ 0x80, 0x7F, 0xFF)]
        entry = sio + 8 * d
        damages += [(entry, value.to_bytes(8, "big")) for value in (sio, sio - 1, record[d] + 1, 2**64 - 1, 0)]
    for at, new_bytes in damages:
        damaged = Segment(data[:at] + new_bytes + data[at + len(new_bytes) :], verify_crc=False)
        assert _ids_or_error(damaged, asked, True) == _ids_or_error(damaged, asked, False), (at, new_bytes)
    assert _ids_or_error(segment, [0, segment.num_docs], True) == _ids_or_error(segment, [0, segment.num_docs], False)
    assert _ids_or_error(segment, [-1], True) == _ids_or_error(segment, [-1], False)


def _size_fields(segment: Segment, value: int, dict_offset: int) -> tuple[list, list]:
    """Where a general postings list keeps its sizes: (offset, value) of every one-byte location
    byte length, with the offsets at which its body holds whole locations; (offset, value, byte
    length) of both blocks' chunk end offsets."""
    from indexbridge.bytes import ByteReader
    from indexbridge.zap.postings import _ChunkedReader, put_location

    pl = segment.postings_at(value, dict_offset)
    file_end = len(segment.data)
    freq_offset, loc_offset, _, _ = pl.record_info
    block = _ChunkedReader(segment.data, "", loc_offset, file_end, "location")
    lengths, chunk, at = [], -1, 0
    for doc, hit in zip(pl.docs.tolist(), pl.raw_hits()):
        if doc // segment.chunk_factor != chunk:
            chunk = doc // segment.chunk_factor
            at = block.chunk(chunk).pos
        if hit.loc_bytes and hit.loc_bytes[0] < 0x80:
            body, cuts = bytearray(), []
            for loc in hit.posting.locations[:-1]:
                put_location(body, *loc)
                cuts.append(len(body))
            lengths.append((at, hit.loc_bytes[0], cuts))
        at += len(hit.loc_bytes)
    ends = []
    for offset in (freq_offset, loc_offset):
        reader = ByteReader(segment.data, "", offset, file_end)
        for _ in range(reader.uvarint("count")):
            start = reader.pos
            ends.append((start, reader.uvarint("end"), reader.pos - start))
    return lengths, ends


@pytest.mark.parametrize("seed", depth.seeds(8, 2))
def test_bulk_postings_decode_agrees_with_the_checked_decoder_on_changed_sizes(seed: int) -> None:
    """Targeted damage to the sizes the bulk decoder trusts: every hit's location byte length
    (uvarint numBytes) set to nearby values (the body then ends inside a uvarint, between a
    location's values, in the next hit's bytes or past its chunk's end) or cut after whole
    locations with a continuation byte at the cut; every chunk end offset lowered (the chunk's last
    entries then run past it). Iterating must give the checked decoder's hits or its error."""
    from indexbridge.bytes import put_uvarint

    rng = random.Random(seed)
    docs = corpus(rng, 0, rng.randrange(20, 60))
    data = build_segment(docs, rng.choice([1, 2, 3, 7, 1024]))
    segment = Segment(data)
    damages = []
    for info in segment.fields:
        for _, value in segment.dictionary(info.id).items():
            if is_one_hit(value):
                continue
            lengths, ends = _size_fields(segment, value, info.dict_offset)
            for at, size, cuts in lengths:
                damages += [(value, info.dict_offset, {at: s}) for s in range(max(0, size - 4), min(0x80, size + 5)) if s != size]
                damages += [(value, info.dict_offset, {at: cut + 1, at + 1 + cut: data[at + 1 + cut] | 0x80}) for cut in cuts]
            for at, end, width in ends:
                for lower in range(max(0, end - 3), end):
                    encoded = bytearray()
                    put_uvarint(encoded, lower)
                    if len(encoded) == width:
                        damages.append((value, info.dict_offset, dict(zip(range(at, at + width), encoded))))
    assert damages
    field_values = {info.dict_offset: [v for _, v in segment.dictionary(info.id).items() if not is_one_hit(v)] for info in segment.fields}
    for n, (value, dict_offset, changes) in enumerate(damages):
        damaged = bytearray(data)
        for at, byte in changes.items():
            damaged[at] = byte
        damaged_segment = Segment(bytes(damaged), verify_crc=False)
        pl = damaged_segment.postings_at(value, dict_offset)
        checked = hits_or_error(lambda: (h.posting for h in PostingsList(pl.docs, None, pl._record)._decode()))
        assert hits_or_error(lambda: iter(pl)) == checked, (seed, changes)
        if n % COLUMNS_EVERY:
            continue
        values = field_values[dict_offset]
        at = values.index(value)
        check_columns(damaged_segment, values[max(0, at - 2) : at + 3], dict_offset)  # the damaged list among its neighbours


def test_a_long_term_is_decoded_one_chunk_at_a_time() -> None:
    """The first hit of the longest postings list of a generated corpus (chunk factor 16), under
    tracemalloc: the decoder holds one chunk's hits, a small fraction of what decoding the whole
    term holds; its hits are the checked decoder's."""
    import tracemalloc

    from indexbridge.zap.corpus import generate

    segment = Segment(build_segment(generate(600, seed=3).documents(), 16))
    longest = max(
        ((info, term) for info in segment.fields for term in segment.dictionary(info.id).terms()),
        key=lambda f: len(segment.dictionary(f[0].id).postings(f[1])),
    )
    checked = [h.posting for h in segment.dictionary(longest[0].id).postings(longest[1])._decode()]
    assert len(checked) > 20 * 16

    def peak(consume) -> int:
        hits = iter(segment.dictionary(longest[0].id).postings(longest[1]))
        tracemalloc.start()
        try:
            consumed = consume(hits)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            assert [*consumed, *hits] == checked

    first = peak(lambda hits: [next(hits)])
    whole = peak(list)
    assert first * 8 < whole, (first, whole)
