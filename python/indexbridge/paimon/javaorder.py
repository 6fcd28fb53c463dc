"""Java ``HashMap`` iteration order, for writers that serialize a HashMap (spec App. B.1).

Paimon writes some structures in the iteration order of a ``java.util.HashMap`` (deletion
files, bitmap index entries, file index containers). Byte-exact writers must reproduce that
order, so this module models the JDK 8+ implementation for insertion-only workloads:

* The table is allocated lazily with 16 buckets; ``threshold = 0.75 * capacity``.
* ``bucket(h) = (h ^ (h >>> 16)) & (capacity - 1)`` for the key's 32-bit ``hashCode`` ``h``.
* Iteration visits buckets ``0 .. capacity-1`` and each bucket's chain in chain order.
* A resize doubles the capacity and splits every chain, keeping the relative order.
* ``put`` appends a new key to its chain, resizes when the chain would need treeifying
  (chain length reaches 9) at capacity < 64, then resizes when ``size > threshold``.
* ``computeIfAbsent`` first resizes when ``size > threshold`` (or allocates), even for a
  present key, then inserts a new key at the head of its chain; a chain that already held 7
  nodes triggers a resize at capacity < 64.

Because splits keep the relative order, a chain is always in insertion order (``put``) or
reverse insertion order (``computeIfAbsent``), and the final order is a sort by
``(bucket at the final capacity, ±insertion index)``. A bin that Java would convert to a
red-black tree (capacity >= 64) reorders its nodes (App. B.4); that is not modelled and raises
``NotImplementedError``.

Keys are compared with Python equality, so pass keys whose ``==`` matches Java's ``equals``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

_INITIAL_CAPACITY = 16
_TREEIFY_THRESHOLD = 8
_MIN_TREEIFY_CAPACITY = 64
_MASK32 = 0xFFFFFFFF


def to_java_int(value: int) -> int:
    """``(int) value``: the low 32 bits as a signed Java ``int``."""
    value &= _MASK32
    return value - (1 << 32) if value & 0x80000000 else value


def java_string_hash(s: str) -> int:
    """``java.lang.String.hashCode()``: ``sum(c[i] * 31^(n-1-i))`` over UTF-16 code units."""
    units = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & _MASK32
    return to_java_int(h)


class _HashMapModel:
    """Capacity, per-bucket chain lengths and insertion order of an insertion-only HashMap."""

    def __init__(self, hash_code: Callable[[K], int]):
        self._hash_code = hash_code
        self._capacity = 0
        self._threshold = 0
        self._spread: dict[K, int] = {}  # key -> spread hash, in insertion order
        self._chain_lengths: Counter[int] = Counter()

    def _resize(self) -> None:
        self._capacity = self._capacity * 2 if self._capacity else _INITIAL_CAPACITY
        self._threshold = self._capacity * 3 // 4
        mask = self._capacity - 1
        self._chain_lengths = Counter(h & mask for h in self._spread.values())

    def _treeify_bin(self, key: K) -> None:
        if self._capacity < _MIN_TREEIFY_CAPACITY:
            self._resize()
            return
        raise NotImplementedError(
            f"java.util.HashMap would convert the bin of key {key!r} (capacity {self._capacity}) "
            "to a red-black tree; tree-bin iteration order is not emulated (spec App. B.4)"
        )

    def _insert(self, key: K) -> int:
        """Insert a new key; returns the length of its chain before the insertion."""
        h = self._hash_code(key) & _MASK32
        h ^= h >> 16
        self._spread[key] = h
        bucket = h & (self._capacity - 1)
        before = self._chain_lengths[bucket]
        self._chain_lengths[bucket] = before + 1
        return before

    def put(self, key: K) -> None:
        if not self._capacity:
            self._resize()
        if key in self._spread:
            return
        if self._insert(key) >= _TREEIFY_THRESHOLD:
            self._treeify_bin(key)
        if len(self._spread) > self._threshold:
            self._resize()

    def compute_if_absent(self, key: K) -> None:
        if not self._capacity or len(self._spread) > self._threshold:
            self._resize()
        if key in self._spread:
            return
        if self._insert(key) >= _TREEIFY_THRESHOLD - 1:
            self._treeify_bin(key)

    def iteration_order(self, newest_first: bool) -> list[K]:
        mask = self._capacity - 1
        sign = -1 if newest_first else 1
        entries = [(h & mask, sign * i, key) for i, (key, h) in enumerate(self._spread.items())]
        entries.sort(key=lambda e: (e[0], e[1]))
        return [key for _, _, key in entries]


def hashmap_put_order(keys: Iterable[K], hash_code: Callable[[K], int]) -> list[K]:
    """Iteration order of ``new HashMap<>()`` after ``put(k, v)`` for each key in sequence."""
    model = _HashMapModel(hash_code)
    for key in keys:
        model.put(key)
    return model.iteration_order(newest_first=False)


def hashmap_compute_if_absent_order(calls: Iterable[K], hash_code: Callable[[K], int]) -> list[K]:
    """Iteration order of ``new HashMap<>()`` after ``computeIfAbsent(k, ...)`` for each call.

    Every call counts, including repeated keys: a call may perform the resize that the
    previous insertion made due.
    """
    model = _HashMapModel(hash_code)
    for key in calls:
        model.compute_if_absent(key)
    return model.iteration_order(newest_first=True)
