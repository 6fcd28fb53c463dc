"""Mutations of every zap vector: each must decode or raise IndexFormatError — never another
exception, a hang, or an allocation out of proportion to the file.

Mutations: bytes flipped at sampled offsets (every structure of the small files, a sample of the
big ones), each footer field set to extreme values, the file truncated and inflated. The CRC is
not verified here (it would catch every flip); a separate test checks that it does. The default
run decodes a quarter of each file's mutants, a different quarter each day (``depth.py``).
"""

from __future__ import annotations

import random
import signal
import struct
import tracemalloc
from itertools import islice
from pathlib import Path

import depth
import pytest

from indexbridge.errors import IndexFormatError
from indexbridge.zap.postings import PostingsList
from indexbridge.zap.segment import FOOTER_SIZE, Segment

TERMS_PER_FIELD = 100
HITS_PER_TERM = 300
DOCS = 200
SECONDS_PER_FILE = 120  # a hang guard, not a speed check (the machine may be busy)
MAX_OFFSETS = 1500  # files up to this size get every offset changed
BODY_SAMPLE_SMALL = 600  # offsets sampled before the last 400 bytes of files up to 20000 bytes
BODY_SAMPLE_LARGE = 40  # ... and of the bigger ones (up to 12 MB), whose reads are slow
TRACE_EVERY = 8
MUTANT_SHARE = 0.25  # of a file's mutants in the default run, the day's draw (every one with INDEXBRIDGE_DEEP=1)
COLUMNS_EVERY = 3  # the columnar read of every third mutant (with every eighth's memory traced, 1 in 24 both)


def _exercise(data: bytes, columns: bool) -> None:
    """Open and read everything (bounded: the first terms per field and the first docs), with
    ``columns`` the same postings lists at once too (columnar read, batch lookup)."""
    segment = Segment(data, "<mutant>", verify_crc=False)
    for info in segment.fields:
        dictionary = segment.dictionary(info.id)
        terms = []
        for n, (term, value) in enumerate(dictionary.items()):
            if n == TERMS_PER_FIELD:
                break
            postings = segment.postings_at(value)
            for hit in islice(postings, HITS_PER_TERM):
                _ = (hit.doc, hit.freq, hit.norm_bits, hit.locations)
            dictionary.postings(term)
            terms.append(term)
        if columns:
            dictionary.postings_columns(terms)
        for _ in islice(segment.docvalues(info.id), DOCS):
            pass
    docs = list(range(min(segment.num_docs, DOCS)))
    _doc_ids_as_one_by_one(segment, docs)
    for doc in docs:
        segment.document(doc)


def _doc_ids_as_one_by_one(segment: Segment, docs: list[int]) -> None:
    """``doc_ids`` reads what ``doc_id`` reads doc by doc: the same ids, or the same error."""
    try:
        expected = [segment.doc_id(doc) for doc in docs]
    except IndexFormatError as error:
        with pytest.raises(IndexFormatError) as caught:
            segment.doc_ids(docs)
        assert str(caught.value) == str(error)
        raise
    assert segment.doc_ids(docs) == expected


def _footer_mutants(data: bytes) -> list[bytes]:
    """Each footer field set to 0, 1, its neighbours and extremes."""
    out = []
    base = len(data) - FOOTER_SIZE
    for at, size in [(0, 8), (8, 8), (16, 8), (24, 8), (32, 4), (36, 4)]:
        old = int.from_bytes(data[base + at : base + at + size], "big")
        for value in {0, 1, old - 1, old + 1, old + 8, (1 << (8 * size)) - 1, 1 << (8 * size - 1)}:
            value %= 1 << (8 * size)
            out.append(data[: base + at] + value.to_bytes(size, "big") + data[base + at + size :])
    return out


def _mutants(data: bytes, rng: random.Random) -> list[bytes]:
    size = len(data)
    if size <= MAX_OFFSETS:
        offsets = range(size)
    else:  # a sample of the body, and more of the tail (docvalue index, field records, fields index, footer)
        body = rng.sample(range(size - 400), BODY_SAMPLE_SMALL if size <= 20000 else BODY_SAMPLE_LARGE)
        offsets = sorted(set(body) | set(rng.sample(range(size - 400, size), 100)))
    out = []
    for at in offsets:  # one change per offset, cycling: all bits, the low bit, the varint continuation bit
        value = (data[at] ^ 0xFF, data[at] ^ 0x01, data[at] ^ 0x80)[at % 3]
        out.append(data[:at] + bytes((value,)) + data[at + 1 :])
    out += _footer_mutants(data)
    for cut in {0, 1, size // 2, size - FOOTER_SIZE, size - 1}:
        out.append(data[:cut])
    for at in {0, size // 3, size - FOOTER_SIZE - 1}:
        out.append(data[:at] + b"\xff" * 9 + data[at:])
    return out


def _timeout(signum, frame):
    raise TimeoutError("a mutant took too long to decode")


def test_mutants_decode_or_raise(vectors_dir: Path, zap_segment_name: str) -> None:
    data = (vectors_dir / "zap" / f"{zap_segment_name}.zap").read_bytes()
    mutants = depth.sample(_mutants(data, random.Random(zap_segment_name)), MUTANT_SHARE, zap_segment_name)
    budget = 50 * len(data) + (8 << 20)
    previous = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(SECONDS_PER_FILE)
    try:
        for n, mutant in enumerate(mutants):
            trace = n % TRACE_EVERY == 0  # tracemalloc slows decoding down seven times: a sample
            if trace:
                tracemalloc.start()
            try:
                _exercise(mutant, n % COLUMNS_EVERY == 0)
            except IndexFormatError:
                pass
            finally:
                if trace:
                    _, peak = tracemalloc.get_traced_memory()
                    tracemalloc.stop()
                    assert peak < budget, f"decoding allocated {peak} bytes for a {len(data)}-byte file"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_crc_is_verified_by_default(vectors_dir: Path) -> None:
    data = bytearray((vectors_dir / "zap" / "one_doc.zap").read_bytes())
    data[100] ^= 1
    with pytest.raises(IndexFormatError, match="CRC"):
        Segment(bytes(data))
    assert not Segment(bytes(data), verify_crc=False).crc_ok


def test_wrong_version_is_rejected(vectors_dir: Path) -> None:
    data = bytearray((vectors_dir / "zap" / "one_doc.zap").read_bytes())
    struct.pack_into(">I", data, len(data) - 8, 12)
    with pytest.raises(IndexFormatError, match="version 11"):
        Segment(bytes(data), verify_crc=False)


def _read_outcome(read, data: bytes | bytearray, value: int, segment: Segment) -> tuple:
    """What a postings read gives: its docs and record, or the error it raises."""
    try:
        found = read(memoryview(data), "<mutant>", value, len(data) - FOOTER_SIZE, segment.chunk_factor, segment.num_docs)
    except IndexFormatError as e:
        return ("error", str(e))
    return ("read", found.docs.tolist(), found.record_info)


def test_postings_records_read_as_checked(vectors_dir: Path, zap_segment_name: str) -> None:
    """PostingsList.read's short path for small records agrees with the field-by-field read
    (_read_checked) on up to 60 records of the vector and on 20 mutants of each record's head
    and bitmap: the same docs and offsets, or the same error."""
    data = (vectors_dir / "zap" / f"{zap_segment_name}.zap").read_bytes()
    segment = Segment(data, verify_crc=False)
    values = [v for info in segment.fields for _, v in segment.dictionary(info.id).items() if v >> 62 == 0]
    rng = random.Random(zap_segment_name)
    mutant = bytearray(data)  # one byte changed at a time, then restored (the biggest vector is 12 MB)
    for value in rng.sample(values, min(len(values), 60)):
        assert _read_outcome(PostingsList.read, data, value, segment) == _read_outcome(PostingsList._read_checked, data, value, segment)
        for _ in range(20):
            at = value + rng.randrange(min(40, len(data) - FOOTER_SIZE - value))
            mutant[at] = rng.choice((data[at] ^ 1 << rng.randrange(8), rng.randrange(256)))
            fast, checked = _read_outcome(PostingsList.read, mutant, value, segment), _read_outcome(PostingsList._read_checked, mutant, value, segment)
            mutant[at] = data[at]
            assert fast == checked, (value, at)
