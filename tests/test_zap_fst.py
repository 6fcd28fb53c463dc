"""Vellum FSTs: property tests against a sorted dict, and every dictionary of the vectors rebuilt byte for byte."""

from __future__ import annotations

import random
from bisect import bisect_left
from pathlib import Path

import pytest

from indexbridge.errors import IndexFormatError
from indexbridge.zap import fst as fst_module
from indexbridge.zap.fst import Fst, FstBuilder, build_fst
from indexbridge.zap.segment import Segment

ALPHABETS = [b"ab", b"abc\x00\xff", bytes(range(256)), b"te/oasr"]


def _random_items(rng: random.Random) -> list[tuple[bytes, int]]:
    alphabet = rng.choice(ALPHABETS)
    keys = {bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 9))) for _ in range(rng.randrange(0, 300))}
    big = rng.choice([1, 1 << 8, 1 << 31, 1 << 64])
    return [(k, rng.randrange(big)) for k in sorted(keys)]


@pytest.mark.parametrize("seed", range(60))
def test_fst_agrees_with_a_sorted_dict(seed: int) -> None:
    rng = random.Random(seed)
    items = _random_items(rng)
    fst = Fst(build_fst(items))
    keys = [k for k, _ in items]
    d = dict(items)
    assert len(fst) == len(items)
    assert list(fst.items()) == items
    probes = keys[:50] + [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 5))) for _ in range(50)]
    # near misses, which end or leave a key's path inside the chains that lookups step over at once
    for k in rng.sample(keys, min(len(keys), 30)):
        j = rng.randrange(len(k) + 1)
        probes += [k[:j], k[:j] + bytes((rng.randrange(256),)) + k[j + 1 :], k + bytes((rng.randrange(256),))]
    assert fst.get_many(probes) == [d.get(p) for p in probes]
    assert Fst(build_fst(items)).get_many(sorted(probes)) == [d.get(p) for p in sorted(probes)]  # a fresh node cache
    for probe in probes:
        assert fst.get(probe) == d.get(probe)
        assert list(fst.prefix(probe)) == [(k, v) for k, v in items if k.startswith(probe)]
    for _ in range(20):
        lo, hi = sorted(rng.choice(probes) for _ in range(2))
        assert list(fst.items(lo, hi)) == items[bisect_left(keys, lo) : bisect_left(keys, hi)]
        assert list(fst.items(lo, None)) == items[bisect_left(keys, lo) :]
        assert list(fst.items(None, hi)) == items[: bisect_left(keys, hi)]


@pytest.mark.parametrize("seed", range(6))
def test_lookups_across_node_cache_clears(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader keeps at most NODE_CACHE_SIZE decoded nodes: with room for a few, lookups clear the
    cache (and the links from the root) over and over, and must still give every value."""
    monkeypatch.setattr(fst_module, "NODE_CACHE_SIZE", 1 + seed)
    rng = random.Random(seed)
    items = _random_items(rng) or [(b"a", 1)]
    fst = Fst(build_fst(items))
    order = items * 2
    rng.shuffle(order)
    assert [fst.get(k) for k, _ in order] == [v for _, v in order]
    assert len(fst._cache) <= 1 + seed


def test_empty_fst_is_35_bytes() -> None:
    data = build_fst([])
    assert len(data) == 35
    assert data[16:19] == b"\x00\x00\x00"
    assert list(Fst(data).items()) == []


def test_every_node_width() -> None:
    """Nodes with 0, 1, 63, 64, 255 and 256 transitions, with the empty key and 0xFF bytes."""
    for n in (1, 63, 64, 255, 256):
        items = [(b"", 7)] + [(bytes((b,)), b * 1000) for b in range(n)] + [(b"\xff\xff", 1)] * (n < 256)
        items = sorted(dict(items).items())
        assert list(Fst(build_fst(items)).items()) == items


def test_builder_rejects_unsorted_keys() -> None:
    builder = FstBuilder()
    builder.insert(b"b", 1)
    with pytest.raises(ValueError):
        builder.insert(b"a", 2)


def test_reader_rejects_bad_headers() -> None:
    data = bytearray(build_fst([(b"a", 1)]))
    for mutate in (lambda d: d.__setitem__(0, 2), lambda d: d.__setitem__(8, 1), lambda d: d.__setitem__(-8, 200)):
        bad = bytearray(data)
        mutate(bad)
        with pytest.raises(IndexFormatError):
            Fst(bytes(bad))
    with pytest.raises(IndexFormatError):
        Fst(bytes(data[:20]))


def test_vector_dictionaries_rebuild_bit_exact(vectors_dir: Path, zap_segment_name: str) -> None:
    """Each dictionary's items, re-inserted, give the FST bytes Go wrote (the bounded registry)."""
    with Segment.open(vectors_dir / "zap" / f"{zap_segment_name}.zap") as segment:
        for info in segment.fields:
            dictionary = segment.dictionary(info.id)
            if dictionary.fst is None:
                continue
            assert build_fst(list(dictionary.items())) == bytes(dictionary.fst.data), info.name


@pytest.mark.parametrize("seed", range(12))
def test_get_many_on_damaged_fsts_gives_what_get_gives(seed: int) -> None:
    """Bytes of an FST changed at random: the batch lookup must give each key's get() value, or
    raise IndexFormatError when get() raises for any of the keys."""
    rng = random.Random(seed)
    items = _random_items(rng) or [(b"a", 1)]
    data = build_fst(items)
    probes = [k for k, _ in items] + [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 5))) for _ in range(30)]
    for _ in range(80):
        damaged = bytearray(data)
        for _ in range(rng.randrange(1, 3)):
            at = rng.randrange(16, len(data) - 16) if len(data) > 32 else 0
            damaged[at] = rng.randrange(256)
        try:
            fst = Fst(bytes(damaged))
        except IndexFormatError:
            continue
        try:
            expected = [fst.get(p) for p in probes]
        except IndexFormatError:
            with pytest.raises(IndexFormatError):
                Fst(bytes(damaged)).get_many(probes)
            continue
        assert Fst(bytes(damaged)).get_many(probes) == expected
