"""Java HashMap iteration order (spec App. B): the model against the golden vectors and
against the real ``java.util.HashMap`` through py4j, tree bins included."""

from __future__ import annotations

import json
import math
import random
import struct
from collections.abc import Callable
from pathlib import Path

import pytest

from indexbridge.paimon.bucket import murmur_hash_bytes
import numpy as np

from indexbridge.paimon import javaorder
from indexbridge.paimon.javaorder import (
    JavaHashMapOrder,
    binary_string_compare,
    compute_if_absent_order_of_new_keys,
    hashmap_compute_if_absent_order,
    hashmap_put_order,
    java_number_compare,
    java_string_compare,
    java_string_hash,
    java_string_hashes,
    to_java_int,
)


def identity(k: int) -> int:
    return k


def java_long_hash(v: int) -> int:
    """``Long.hashCode``: ``(int)(v ^ (v >>> 32))``."""
    return to_java_int(v ^ ((v & (2**64 - 1)) >> 32))


def sign(x: int) -> int:
    return (x > 0) - (x < 0)


# ---------------------------------------------------------------------------------------------
# Small cases worked by hand


def test_java_string_hash(vectors_dir: Path):
    items = json.loads((vectors_dir / "paimon/hashes/hash_functions.json").read_text())["java_string_hash_code"]
    assert items and all(java_string_hash(i["string"]) == i["hash_code"] for i in items)
    assert java_string_hash("") == 0 and java_string_hash("a") == 97
    assert java_string_hash("\U0001f600") == 31 * 0xD83D + 0xDE00  # UTF-16 surrogate pair
    assert java_string_hash("polygenelubricants") == -(2**31)
    assert java_string_hash("Aa") == java_string_hash("BB") == java_string_hash("C#")
    # at once, with empty strings among them (ASCII and not: two ways to the code units)
    strings, codes = [i["string"] for i in items], [i["hash_code"] for i in items]
    assert java_string_hashes(["", *strings, "a", ""]).tolist() == [0, *codes, 97, 0]
    assert java_string_hashes(["", "Aa", "polygenelubricants", ""]).tolist() == [0, 2112, -(2**31), 0]
    assert java_string_hashes([]).tolist() == []


def test_put_appends_and_compute_if_absent_prepends_within_a_bucket():
    assert hashmap_put_order([17, 1, 33, 2], identity) == [17, 1, 33, 2]
    assert hashmap_compute_if_absent_order([17, 1, 33, 2], identity) == [33, 1, 17, 2]
    assert hashmap_put_order([5, 5, 3], identity) == [3, 5]
    # bucket(h) = (h ^ h >>> 16) & 15: 0x10000 spreads to bucket 1
    assert hashmap_put_order([0x10000, 0], identity) == [0, 0x10000]


def test_resize_after_threshold_and_compute_if_absent_lags_one_call():
    keys = [16, 0] + list(range(1, 12))  # 13 keys: the 13th put exceeds threshold 12
    assert hashmap_put_order(keys, identity) == list(range(0, 12)) + [16]  # capacity 32
    cia = hashmap_compute_if_absent_order(keys, identity)
    assert cia == [0, 16] + list(range(1, 12))  # still capacity 16: 0 and 16 share bucket 0
    assert hashmap_compute_if_absent_order(keys + [3], identity) == list(range(0, 12)) + [16]


def test_long_chains_resize_then_treeify():
    zero = lambda k: 0  # noqa: E731
    assert hashmap_put_order(range(10), zero) == list(range(10))  # resized to 32, then 64
    assert hashmap_compute_if_absent_order(range(9), zero) == list(range(8, -1, -1))
    # The 11th put (10th computeIfAbsent) makes a tree: equal hashes, so compareTo decides.
    model = JavaHashMapOrder(zero, java_number_compare)
    model.put_each(range(11))
    assert model.treeified == 1 and sorted(model.keys()) == list(range(11))
    # treeify inserts 0..10 in order; after the rotations the root is 3, moved to the front
    assert model.keys() == [3, 0, 1, 2, 4, 5, 6, 7, 8, 9, 10]


def test_equal_hashes_in_a_tree_without_compare_are_refused():
    zero = lambda k: 0  # noqa: E731
    with pytest.raises(ValueError, match="identityHashCode.*pass the keys' compareTo"):
        hashmap_put_order(range(11), zero)
    with pytest.raises(ValueError, match="no compare"):
        hashmap_compute_if_absent_order(range(10), zero)
    with pytest.raises(ValueError, match="compare 0"):
        hashmap_put_order(range(11), zero, lambda a, b: 0)
    # distinct hashes need no compareTo, even in a tree bin
    keys = [k << 22 for k in range(1, 40)]  # spread k << 22 ^ k << 6: all in bucket 0 at capacity 64
    model = JavaHashMapOrder(identity)
    model.put_each(keys)
    assert model.treeified and sorted(model.keys()) == keys


# ---------------------------------------------------------------------------------------------
# The vectorised computeIfAbsent order against the exact model


class _CountingFastPath:
    """Wraps javaorder's fast path to count the calls it answered (not None)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.answered = self.refused = 0
        inner = javaorder._order_without_tree_bins

        def counted(spread: np.ndarray, another_call: bool) -> np.ndarray | None:
            order = inner(spread, another_call)
            self.answered += order is not None
            self.refused += order is None
            return order

        monkeypatch.setattr(javaorder, "_order_without_tree_bins", counted)


def _adversarial_int_keys(rng: random.Random) -> list[int]:
    """Distinct ints: random, small, multiples of 2^shift (one bucket at every capacity), or
    near multiples of a bucket count (chains of up to 7 that survive resizes)."""
    kind, n = rng.randrange(4), rng.randrange(1, 2500)
    if kind == 0:
        pool = [rng.randrange(-(2**31), 2**31) for _ in range(n)]
    elif kind == 1:
        pool = [rng.randrange(n * 2) for _ in range(n)]
    elif kind == 2:
        shift = rng.randrange(4, 25)
        pool = [to_java_int(rng.randrange(-300, 301) << shift) for _ in range(n)]
    else:
        step = rng.choice([16, 64, 256, 4096, 1 << 16])
        pool = [to_java_int(rng.randrange(-(2**31), 2**31) // step * step + rng.randrange(4)) for _ in range(n)]
    return list(dict.fromkeys(pool))


def test_vectorised_compute_if_absent_order_equals_the_model(monkeypatch: pytest.MonkeyPatch):
    fast = _CountingFastPath(monkeypatch)
    for seed in range(250):
        rng = random.Random(seed)
        keys = _adversarial_int_keys(rng)
        another_call = rng.random() < 0.5
        model = JavaHashMapOrder(identity, java_number_compare)
        model.compute_if_absent_each(keys + keys[:another_call])
        compare = lambda a, b: java_number_compare(keys[a], keys[b])  # noqa: E731
        order = compute_if_absent_order_of_new_keys(np.array(keys, np.int64), another_call, compare)
        assert [keys[i] for i in order.tolist()] == model.keys(), seed
        if model.treeified:
            assert fast.refused, seed  # a tree bin is never left to the fast path
    assert fast.answered > 150 and fast.refused > 30, (fast.answered, fast.refused)


def test_vectorised_order_resizes_like_java_at_the_thresholds():
    """n keys around each threshold 0.75 * capacity, with and without a trailing call: the
    final capacity shows in the order of keys that share a bucket only at smaller capacities."""
    for n in [1, 12, 13, 24, 25, 48, 49, 96, 97, 768, 769]:
        keys = [(k * 0x9E3779B1) & 0x7FFFFFFF for k in range(n)]  # distinct, spread over buckets
        for another_call in (False, True):
            model = JavaHashMapOrder(identity)
            model.compute_if_absent_each(keys + keys[:another_call])
            order = javaorder._order_without_tree_bins(np.array(keys, np.uint32) ^ (np.array(keys, np.uint32) >> 16), another_call)
            assert order is not None and [keys[i] for i in order.tolist()] == model.keys(), (n, another_call)


# ---------------------------------------------------------------------------------------------
# Comparators


def test_java_number_compare_follows_float_compare():
    order = [-math.inf, -1.5, -0.0, 0.0, 5e-324, 1.0, math.inf, math.nan]  # Double.compare order
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            assert java_number_compare(a, b) == sign(i - j), (a, b)
    rng = random.Random(3)
    for _ in range(1000):
        a, b = rng.randrange(-(2**63), 2**63), rng.choice([rng.randrange(-(2**63), 2**63), 0, 1])
        assert java_number_compare(a, b) == sign(a - b)


def test_binary_string_compare_is_unsigned_utf8_then_length():
    rng = random.Random(5)
    alphabet = "aAz\x00\x7f\xe9\u07ff\u0800\uffff\U00010000\U0010ffff"
    for _ in range(2000):
        a = "".join(rng.choice(alphabet) for _ in range(rng.randrange(4)))
        b = "".join(rng.choice(alphabet) for _ in range(rng.randrange(4)))
        ua, ub = a.encode(), b.encode()
        k = next((i for i in range(min(len(ua), len(ub))) if ua[i] != ub[i]), None)
        expected = sign(len(ua) - len(ub)) if k is None else sign(ua[k] - ub[k])
        assert binary_string_compare(ua, ub) == expected
        assert binary_string_compare(a, b) == expected


# ---------------------------------------------------------------------------------------------
# Golden vectors: the bitmap index's computeIfAbsent replay (App. B.2)


def _float_bits(width: int) -> tuple[Callable, Callable, Callable]:
    """Key (canonical bits, as Float/Double.equals), hashCode and compareTo for FLOAT/DOUBLE."""
    fmt, nan = (">I", 0x7FC00000) if width == 32 else (">Q", 0x7FF8000000000000)
    ffmt = ">f" if width == 32 else ">d"

    def key(v: str) -> int:
        bits = int(v, 16)
        value = struct.unpack(ffmt, struct.pack(fmt, bits))[0]
        return nan if value != value else bits

    def value(bits: int) -> float:
        return struct.unpack(ffmt, struct.pack(fmt, bits))[0]

    hash_code = to_java_int if width == 32 else java_long_hash
    return key, hash_code, lambda a, b: java_number_compare(value(a), value(b))


def _bitmap_key_model(case: dict) -> tuple[Callable, Callable, Callable]:
    """How the bitmap writer keys its HashMap for the case's type (spec §6.2)."""
    sql, precision = case["type"]["sql"], case["type"].get("precision")
    if sql == "BIGINT":
        return int, java_long_hash, java_number_compare
    if sql == "BOOLEAN":
        return bool, lambda v: 1231 if v else 1237, java_number_compare
    if sql.startswith(("STRING", "CHAR", "VARCHAR")):
        return str, lambda v: murmur_hash_bytes(v.encode()), binary_string_compare
    if sql == "FLOAT":
        return _float_bits(32)
    if sql == "DOUBLE":
        return _float_bits(64)
    if sql.startswith("TIMESTAMP"):

        def timestamp(v):  # the mapped long: millis, or micros above precision 3
            if isinstance(v, str):  # as written in hashmap_iteration_order
                return int(v)
            return v["millis"] if precision <= 3 else v["millis"] * 1000 + v["nanos"] // 1000

        return timestamp, java_long_hash, java_number_compare
    return int, identity, java_number_compare  # TINYINT, SMALLINT, INT, DATE, TIME


def test_compute_if_absent_order_matches_every_bitmap_vector(vectors_dir: Path):
    checked = 0
    for path in sorted((vectors_dir / "paimon/bitmap").glob("*.json")):
        case = json.loads(path.read_text())
        key, hash_code, compare = _bitmap_key_model(case)
        calls = [key(v) for v in case["values"] if v is not None]
        expected = [key(v) for v in case["hashmap_iteration_order"]]
        assert hashmap_compute_if_absent_order(calls, hash_code, compare) == expected, path.name
        checked += 1
    assert checked >= 30


@pytest.mark.parametrize("case", ["bitmap_v1_int_hash_collisions", "bitmap_v2_int_hash_collisions"])
def test_int_hash_collision_vectors_need_and_get_tree_bins(vectors_dir: Path, case: str):
    data = json.loads((vectors_dir / f"paimon/bitmap/{case}.json").read_text())
    model = JavaHashMapOrder(identity, java_number_compare)
    model.compute_if_absent_each(v for v in data["values"] if v is not None)
    assert model.treeified > 0
    assert model.keys() == data["hashmap_iteration_order"]


# ---------------------------------------------------------------------------------------------
# Against the real java.util.HashMap (py4j). Each case crosses py4j a handful of times: keys
# go over as one byte[] or one string, and come back as one string.


@pytest.fixture(scope="module")
def j():
    from indexbridge.jvm import jvm

    return jvm()


def _java_ints(j, keys: list[int]):
    """A java.util.List<Integer> of the keys."""
    array = j.java.util.stream.IntStream.range(0, len(keys)).toArray()
    j.java.nio.ByteBuffer.wrap(struct.pack(f">{len(keys)}i", *keys)).asIntBuffer().get(array)
    return j.java.util.stream.IntStream.of(array).boxed().collect(j.java.util.stream.Collectors.toList())


_SEP = "\n"  # never inside a generated string key


def _java_strings(j, keys: list[str]):
    """A java.util.List<String> of the keys (split from one string)."""
    pattern = j.java.util.regex.Pattern.compile(_SEP, j.java.util.regex.Pattern.LITERAL)
    # the sentinel keeps trailing empty keys, which splitAsStream would drop
    stream = pattern.splitAsStream(_SEP.join([*keys, "end"])).limit(len(keys))
    return stream.collect(j.java.util.stream.Collectors.toList())


def _java_put_order(j, java_keys):
    """``HashSet.addAll`` puts each element in turn into the set's default HashMap."""
    s = j.java.util.HashSet()
    s.addAll(java_keys)
    return s


def _java_compute_if_absent_order(j, java_keys):
    """``groupingBy`` fills a default HashMap with ``computeIfAbsent`` per element, in order."""
    collectors = j.java.util.stream.Collectors
    return java_keys.stream().collect(collectors.groupingBy(j.java.util.function.Function.identity())).keySet()


def _ints_back(java_collection) -> list[int]:
    text = java_collection.toString()[1:-1]
    return [int(x) for x in text.split(", ")] if text else []


def _strings_back(j, java_collection, n: int) -> list[str]:
    text = j.java.lang.String.join(_SEP, java_collection)
    return text.split(_SEP) if n else []


def _int_case(rng: random.Random) -> list[int]:
    """Calls with repeats over keys that collide: spread over the int range, small, or multiples
    of 2^shift (whole groups share a bucket across resizes, like the vectors' ``k << 20``)."""
    kind, n, distinct = rng.randrange(3), rng.randrange(1500), rng.randrange(1, 800)
    if kind == 0:
        pool = [rng.randrange(-(2**31), 2**31) for _ in range(distinct)]
    elif kind == 1:
        pool = [rng.randrange(distinct * 4) for _ in range(distinct)]
    else:
        shift = rng.randrange(4, 25)
        pool = [to_java_int(rng.randrange(-200, 201) << shift) for _ in range(distinct)]
    return [rng.choice(pool) for _ in range(n)]


def _string_case(rng: random.Random) -> list[str]:
    """Strings of "Aa"/"BB"/"C#" blocks share String.hashCode per block count (so compareTo
    decides in tree bins), plus ordinary and arbitrary UTF-16 (surrogate pairs included)."""
    blocks = ["Aa", "BB", "C#"]
    chars = "abcXYZ019 é\u07ff\u0800\ue000\uffff\U0001f600\U00010000"

    def key() -> str:
        r = rng.random()
        if r < 0.5:
            return "".join(rng.choice(blocks) for _ in range(rng.randrange(1, 7)))
        if r < 0.9:
            return "".join(rng.choice(chars) for _ in range(rng.randrange(5)))
        return "".join(rng.choice(blocks) for _ in range(rng.randrange(1, 5))) + rng.choice(chars)

    pool = [key() for _ in range(rng.randrange(1, 900))]
    return [rng.choice(pool) for _ in range(rng.randrange(1500))]


def test_the_bulk_java_calls_are_put_and_compute_if_absent(j):
    """The harness: HashSet.addAll / groupingBy give the orders of per-key put / computeIfAbsent."""
    rng = random.Random(11)
    keys = [rng.randrange(64) << 20 for _ in range(120)]  # tree bins form
    m, c = j.java.util.HashMap(), j.java.util.HashMap()
    identity_function = j.java.util.function.Function.identity()
    for k in keys:
        m.put(k, 1)
        c.computeIfAbsent(k, identity_function)
    java_keys = _java_ints(j, keys)
    assert _ints_back(_java_put_order(j, java_keys)) == _ints_back(m.keySet())
    assert _ints_back(_java_compute_if_absent_order(j, java_keys)) == _ints_back(c.keySet())
    strings = ["", "x", "Aa", "BB", "\U0001f600", ""]
    assert _strings_back(j, _java_strings(j, strings), len(strings)) == strings


def test_integer_keys_equal_java(j, monkeypatch: pytest.MonkeyPatch):
    fast = _CountingFastPath(monkeypatch)
    treeified = untreeified = 0
    for seed in range(60):
        keys = _int_case(random.Random(seed))
        java_keys = _java_ints(j, keys)
        put = JavaHashMapOrder(identity, java_number_compare)
        put.put_each(keys)
        assert put.keys() == _ints_back(_java_put_order(j, java_keys)), seed
        cia = JavaHashMapOrder(identity, java_number_compare)
        cia.compute_if_absent_each(keys)
        java_cia = _ints_back(_java_compute_if_absent_order(j, java_keys))
        assert cia.keys() == java_cia, seed
        assert hashmap_compute_if_absent_order(keys, identity, java_number_compare) == java_cia, seed
        treeified += put.treeified + cia.treeified
        untreeified += put.untreeified + cia.untreeified
    assert treeified > 20 and untreeified > 5, (treeified, untreeified)
    assert fast.answered > 20 and fast.refused > 5, (fast.answered, fast.refused)


def test_string_keys_equal_java(j, monkeypatch: pytest.MonkeyPatch):
    fast = _CountingFastPath(monkeypatch)
    treeified = 0
    for seed in range(60):
        keys = _string_case(random.Random(seed))
        java_keys = _java_strings(j, keys)
        hash_code = dict(zip(keys, java_string_hashes(keys).tolist())).__getitem__  # each key's, at once
        put = JavaHashMapOrder(hash_code, java_string_compare)
        put.put_each(keys)
        assert put.keys() == _strings_back(j, _java_put_order(j, java_keys), len(put.keys())), seed
        assert hashmap_put_order(keys, java_string_hash, java_string_compare) == put.keys(), seed
        cia = JavaHashMapOrder(hash_code, java_string_compare)
        cia.compute_if_absent_each(keys)
        java_cia = _strings_back(j, _java_compute_if_absent_order(j, java_keys), len(cia.keys()))
        assert cia.keys() == java_cia, seed
        assert hashmap_compute_if_absent_order(keys, java_string_hash, java_string_compare) == java_cia, seed
        treeified += put.treeified + cia.treeified
    assert treeified > 20, treeified
    assert fast.answered > 0 and fast.refused > 40, (fast.answered, fast.refused)  # mostly colliding blocks


def test_mixed_put_and_compute_if_absent_equal_java(j):
    """One py4j call per map call here, so fewer and shorter cases."""
    identity_function = j.java.util.function.Function.identity()
    treeified = 0
    for seed in range(6):
        rng = random.Random(100 + seed)
        shift = rng.randrange(12, 24)
        keys = [rng.randrange(-40, 120) << shift for _ in range(400)]
        real = j.java.util.HashMap()
        ours = JavaHashMapOrder(identity, java_number_compare)
        for k in keys:
            if rng.random() < 0.5:
                ours.put(k)
                real.put(k, 1)
            else:
                ours.compute_if_absent(k)
                real.computeIfAbsent(k, identity_function)
        assert ours.keys() == _ints_back(real.keySet()), seed
        treeified += ours.treeified
    assert treeified > 0


def test_java_string_compare_equals_string_compare_to(j):
    natural = j.java.util.Comparator.naturalOrder()
    rng = random.Random(7)
    chars = "aZ\u00e9\ud7ff\ue000\uffff\U00010000\U0001f600"
    pairs = [("", ""), ("", "a"), ("\uffff", "\U00010000"), ("Aa", "BB")]
    pairs += [tuple("".join(rng.choice(chars) for _ in range(rng.randrange(4))) for _ in "ab") for _ in range(200)]
    for a, b in pairs:
        assert java_string_compare(a, b) == sign(natural.compare(a, b)), (a, b)
