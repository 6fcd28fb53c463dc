"""The columnar postings read (``Dictionary.postings_columns``) against the per-hit API.

Generated segments (seeded corpora of zap_generated: array positions, term vectors on/off,
composite fields, empty and non-UTF-8 terms; random chunk factors) and every golden vector of
/work/shared/vectors/zap (segments written by Go's zap v11.0.14, whose per-hit reading
test_zap_conformance checks against the vectors' descriptions) must give, column for column, what
the per-hit API gives term by term: for every term in byte order, and for a shuffled selection with
repeats and absent terms. Damaged postings of a bigger segment (hundreds of terms per field, so
that the bulk decoder's rounds run) must give the checked decoders' hits or raise their error; more
damage cases are in test_zap_segment.py and test_zap_mutation.py.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from zap_generated import check_columns, corpus

from indexbridge.zap.postings import PostingsColumns
from indexbridge.zap.segment import Segment, build_segment


def assert_columns_equal(got: PostingsColumns, expected: PostingsColumns) -> None:
    for name in PostingsColumns.names():
        a, b = getattr(got, name), getattr(expected, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name


def check_segment(segment: Segment, rng: random.Random) -> int:
    """Compare every field's columns with the per-hit API; the number of hits compared."""
    compared = 0
    for info in segment.fields:
        dictionary = segment.dictionary(info.id)
        terms = list(dictionary.terms())
        per_hit = [list(dictionary.postings(t)) for t in terms]
        columns = dictionary.postings_columns()
        assert_columns_equal(columns, PostingsColumns.from_postings(per_hit))
        assert_columns_equal(dictionary.postings_columns(terms), columns)
        assert [columns.postings(i) for i in range(len(terms))] == per_hit
        picked = rng.choices(terms, k=min(len(terms), 40)) + [b"\x00absent", b"\xff" * 3]
        rng.shuffle(picked)
        assert_columns_equal(dictionary.postings_columns(picked), PostingsColumns.from_postings(dictionary.postings(t) for t in picked))
        # without locations: the same hits (hasLocs kept), no location
        assert_columns_equal(dictionary.postings_columns(picked, locations=False),
                             PostingsColumns.from_postings((dictionary.postings(t) for t in picked), locations=False))
        assert_columns_equal(dictionary.postings_columns(locations=False), PostingsColumns.hits(
            columns.hit_offsets, columns.docs, columns.freqs, columns.norm_bits, columns.has_locations))
        compared += len(columns.docs)
    return compared


@pytest.mark.parametrize("seed", range(30))
def test_columns_equal_the_per_hit_api_on_generated_segments(seed: int) -> None:
    rng = random.Random(seed)
    docs = corpus(rng, 0, rng.randrange(0, 80))
    segment = Segment(build_segment(docs, rng.choice([1, 2, 3, 7, 1024])))
    check_segment(segment, rng)


def test_columns_equal_the_per_hit_api_on_the_golden_vectors(vectors_dir: Path) -> None:
    paths = sorted((vectors_dir / "zap").glob("*.zap"))
    assert paths
    hits = 0
    for path in paths:
        with Segment.open(path) as segment:
            hits += check_segment(segment, random.Random(path.name))
    assert hits > 0


def test_columns_views() -> None:
    """norms are the float32 of the norm bits; take() selects terms in any order; to_arrow() holds
    the per-hit API's values."""
    rng = random.Random(5)
    segment = Segment(build_segment(corpus(rng, 0, 30), 3))
    dictionary = segment.dictionary("body")
    columns = dictionary.postings_columns()
    expected = [hit.norm for i in range(len(columns)) for hit in columns.postings(i)]
    assert columns.norms.tolist() == pytest.approx(expected) and columns.norms.dtype == np.float32
    order = np.array(rng.choices(range(len(columns)), k=10))
    assert [columns.take(order).postings(i) for i in range(10)] == [columns.postings(i) for i in order.tolist()]
    arrow = columns.to_arrow().to_pylist()
    assert arrow == [
        [{"doc": p.doc, "freq": p.freq, "norm_bits": p.norm_bits,
          "locations": None if p.locations is None else [
              {"field_id": loc.field_id, "pos": loc.pos, "start": loc.start, "end": loc.end, "array_positions": list(loc.array_positions)}
              for loc in p.locations]}
         for p in columns.postings(i)]
        for i in range(len(columns))
    ]
    assert any(p.locations for i in range(len(columns)) for p in columns.postings(i))


@pytest.mark.parametrize("seed", range(4))
def test_columns_in_batches(seed: int, monkeypatch) -> None:
    """Records far apart are read in batches (bounded work arrays): batches of a few dozen bytes
    give the same columns."""
    from indexbridge.zap import postings

    rng = random.Random(seed)
    segment = Segment(build_segment(corpus(rng, 0, rng.randrange(20, 60)), rng.choice([1, 3, 1024])))
    monkeypatch.setattr(postings, "_BATCH_BYTES", rng.choice([1, 40, 200]))
    check_segment(segment, rng)


@pytest.mark.parametrize("seed", range(3))
def test_columns_on_damaged_postings_give_the_checked_hits_or_raise(seed: int) -> None:
    from indexbridge.zap.corpus import generate
    from indexbridge.zap.postings import is_one_hit

    rng = random.Random(seed)
    data = build_segment(generate(30, seed=seed, body_words=20).documents(), rng.choice([2, 7, 1024]))
    segment = Segment(data)
    fields = [(info.dict_offset, [v for _, v in segment.dictionary(info.id).items() if not is_one_hit(v)])
              for info in segment.fields if info.dict_offset]
    start = segment.footer.stored_index_offset + 8 * segment.num_docs
    end = min(offset for offset, _ in fields)
    for _ in range(25):
        damaged = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(start, end)
            damaged[at] = rng.choice([rng.randrange(256), damaged[at] ^ 0x80, (damaged[at] + 1) % 256])
        damaged_segment = Segment(bytes(damaged), verify_crc=False)
        for dict_offset, values in fields:
            check_columns(damaged_segment, values, dict_offset)
