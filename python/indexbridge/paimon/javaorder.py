"""Java ``HashMap`` iteration order, for writers that serialize a HashMap (spec App. B).

Paimon writes some structures in the iteration order of a ``java.util.HashMap`` (deletion
files, bitmap index entries, file index containers). Byte-exact writers must reproduce that
order, so this module re-expresses JDK 17's HashMap (the same since JDK 8) for insertion-only
workloads, keys only. It is hand-written because the order is an implementation detail that no
library exposes::

    table    capacity buckets, allocated with 16 on first use, doubling; threshold = 0.75 * capacity
    hash     h ^ (h >>> 16), h = the key's 32-bit hashCode; bucket = hash & (capacity - 1)
    order    buckets 0 .. capacity-1, each bin along its ``next`` links
    resize   a plain chain splits into "stays" and "moves by +old capacity", keeping its order

    put              a new key is appended to its chain; a chain of now > 8 keys: treeifyBin;
                     then size += 1 and resize if size > threshold
    computeIfAbsent  first resize if size > threshold (or allocate), even for a present key;
                     a new key goes to the head of its chain; a chain that held >= 7 keys:
                     treeifyBin
    treeifyBin       capacity < 64: resize instead; else the chain becomes a tree bin

A tree bin (App. B.4) is a red-black tree ordered by (hash as a signed int, then the keys'
``compareTo`` for equal hashes) whose nodes keep the ``next`` chain that iteration follows::

    treeify      insert the chain's nodes in chain order (balanceInsertion), then move the
                 root to the front of the chain (moveRootToFront)
    putTreeVal   the new node is linked into the chain right after its tree parent; the tree
                 is rebalanced and its (possibly new) root moved to the front
    resize       split into lo/hi lists in chain order; a list of <= 6 keys becomes a plain
                 chain again, a longer one is re-treeified unless the other list is empty

``compare(a, b)`` is Java's ``compareTo`` when the key class is "comparable for itself" (String,
Integer, Long, Float, Double, Paimon's BinaryString; see the ``*_compare`` functions), ``None``
otherwise. Java breaks the remaining ties in a tree (equal hashes and no, or a zero,
``compareTo``) with ``System.identityHashCode``, which cannot be reproduced, so the model raises
``ValueError`` there instead of guessing.

Fast path (:func:`compute_if_absent_order_of_new_keys`): while no chain reaches ``treeifyBin``,
``computeIfAbsent`` of new keys resizes exactly when ``size > threshold`` at the start of a
call, so the key inserted as the i-th (0-based) sees capacity ``max(16, the least power of two
with i <= 0.75 * capacity)``. A key goes to the head of its chain and a resize split keeps the
relative order, and the keys of one final bucket shared a bucket at every smaller capacity, so
the final order is by bucket ``hash & (capacity - 1)``, then newest first, computed with numpy.
No chain reaches ``treeifyBin`` (>= 7 keys before an insertion) iff at no capacity c does a
bucket hold 8 of the keys inserted while the capacity was <= c: the 8th key of such a bucket
was inserted at capacity c, or its bucket at c / 2 held 8 keys already.

Keys are told apart with Python equality (a dict), so pass keys whose ``==`` matches Java's
``equals`` (e.g. not ``0.0`` and ``-0.0`` as floats, which Java's Double keeps apart).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from functools import lru_cache
from typing import Generic, TypeVar

import numpy as np

K = TypeVar("K", bound=Hashable)

_INITIAL_CAPACITY = 16
_TREEIFY_THRESHOLD = 8
_UNTREEIFY_THRESHOLD = 6
_MIN_TREEIFY_CAPACITY = 64
_MASK32 = 0xFFFFFFFF


def to_java_int(value: int) -> int:
    """``(int) value``: the low 32 bits as a signed Java ``int``."""
    value &= _MASK32
    return value - (1 << 32) if value & 0x80000000 else value


_POWERS_OF_31 = np.ones(1, np.uint64)  # 31^k mod 2^64 (k = 0, 1, ...), grown on demand


def _powers_of_31(n: int) -> np.ndarray:
    global _POWERS_OF_31
    if len(_POWERS_OF_31) < n:
        powers = np.empty(max(n, 2 * len(_POWERS_OF_31)), np.uint64)
        powers[0] = 1
        with np.errstate(over="ignore"):
            for k in range(1, len(powers)):
                powers[k] = powers[k - 1] * np.uint64(31)
        _POWERS_OF_31 = powers
    return _POWERS_OF_31[:n]


def java_string_hashes(strings: Sequence[str]) -> np.ndarray:
    """``java.lang.String.hashCode()`` of each string, as int64 holding the Java ``int``: ``sum(c[i]
    * 31^(n-1-i))`` over UTF-16 code units, mod 2^32. All strings at once: their code units in one
    array, each weighted by its power of 31 (numpy's uint64 products wrap mod 2^64, which 2^32
    divides), summed per string: for a hundred data file paths, a sixth of the time of a numpy
    dot product per string."""
    n = len(strings)
    joined = "".join(strings)
    if joined.isascii():  # one UTF-16 unit per byte; encoding to UTF-16 with surrogatepass is slow
        units = np.frombuffer(joined.encode("ascii"), np.uint8)
        lengths = np.fromiter(map(len, strings), np.int64, n)
    else:
        encoded = [s.encode("utf-16-be", "surrogatepass") for s in strings]
        units = np.frombuffer(b"".join(encoded), ">u2")
        lengths = np.fromiter(map(len, encoded), np.int64, n) // 2
    sums = np.zeros(n, np.uint64)
    if len(units):
        ends = np.cumsum(lengths)
        exponents = np.repeat(ends - 1, lengths) - np.arange(len(units))  # unit j of a string ending at e: 31^(e-1-j)
        with np.errstate(over="ignore"):
            products = units.astype(np.uint64) * _powers_of_31(int(lengths.max()))[exponents]
        nonempty = lengths > 0  # reduceat would give an empty string its next string's first product
        sums[nonempty] = np.add.reduceat(products, (ends - lengths)[nonempty])
    return sums.astype(np.uint32).view(np.int32).astype(np.int64)  # the low 32 bits, signed


@lru_cache(maxsize=1 << 14)  # writers hash the same column names and option keys for every data file
def java_string_hash(s: str) -> int:
    """``java.lang.String.hashCode()`` of one string (:func:`java_string_hashes`)."""
    return int(java_string_hashes([s])[0])


# ---------------------------------------------------------------------------------------------
# compareTo of the key classes Paimon puts in HashMaps. HashMap only uses the sign.


def java_string_compare(a: str, b: str) -> int:
    """Sign of ``String.compareTo``: UTF-16 code units, then length.

    Python compares code points, which differs when a supplementary character (a surrogate
    pair, units D800..DFFF) meets one in U+E000..U+FFFF; big-endian UTF-16 bytes order exactly
    as the code units.
    """
    if a == b:
        return 0
    return -1 if a.encode("utf-16-be", "surrogatepass") < b.encode("utf-16-be", "surrogatepass") else 1


def java_number_compare(a: int | float, b: int | float) -> int:
    """Sign of ``Byte/Short/Integer/Long.compare``, or of ``Float.compare``/``Double.compare``
    for floats: numeric order, except ``-0.0 < 0.0`` and NaN equal to itself and above +inf."""
    if a < b:
        return -1
    if a > b:
        return 1
    if isinstance(a, float) or isinstance(b, float):
        a_nan, b_nan = a != a, b != b  # noqa: PLR0124 (NaN test)
        if a_nan or b_nan:
            return a_nan - b_nan
        # numerically equal: only 0.0 and -0.0 still differ, by their sign bit
        return (math.copysign(1.0, a) > 0) - (math.copysign(1.0, b) > 0)
    return 0


def binary_string_compare(a: str | bytes, b: str | bytes) -> int:
    """Sign of Paimon's ``BinaryString.compareTo``: the UTF-8 bytes unsigned, then length.

    Takes both keys as UTF-8 ``bytes`` or both as ``str``: UTF-8 preserves code point order, so
    comparing the strings themselves gives the same answer without encoding them.
    """
    return (a > b) - (a < b)


# ---------------------------------------------------------------------------------------------
# The model


class _TreeNode:
    """``HashMap.TreeNode`` without the value: red-black links plus the iteration chain."""

    __slots__ = ("key", "hash", "parent", "left", "right", "prev", "next", "red")

    def __init__(self, key: Hashable, hash_: int):
        self.key = key
        self.hash = hash_
        self.parent: _TreeNode | None = None
        self.left: _TreeNode | None = None
        self.right: _TreeNode | None = None
        self.prev: _TreeNode | None = None
        self.next: _TreeNode | None = None
        self.red = False


class JavaHashMapOrder(Generic[K]):
    """A default-constructed ``java.util.HashMap`` reduced to what decides its iteration order.

    Each table entry (bin) is None, a list of keys in chain order (a plain chain), or the first
    ``_TreeNode`` of a tree bin, which is always the tree's root.
    """

    def __init__(self, hash_code: Callable[[K], int], compare: Callable[[K, K], int] | None = None):
        self._hash_code = hash_code
        self._compare = compare
        self._table: list = []
        self._threshold = -1  # so that the first computeIfAbsent allocates the table
        self._spread: dict[K, int] = {}  # key -> spread hash as a signed int, one per entry
        self.treeified = 0  # bins made trees (also re-treeified on resize), for tests
        self.untreeified = 0  # tree bins turned back into chains on resize

    # -- the calls ------------------------------------------------------------------------------

    def put(self, key: K) -> None:
        """``map.put(key, value)`` (also ``putIfAbsent``)."""
        if not self._table:
            self._resize()
        if key in self._spread:
            return
        h = self._add(key)
        table = self._table
        i = h & (len(table) - 1)
        bin_ = table[i]
        if bin_ is None:
            table[i] = [key]
        elif bin_.__class__ is list:
            bin_.append(key)
            if len(bin_) > _TREEIFY_THRESHOLD:
                self._treeify_bin(i)
        else:
            self._put_tree_val(bin_, key, h)
        if len(self._spread) > self._threshold:
            self._resize()

    def compute_if_absent(self, key: K) -> None:
        """``map.computeIfAbsent(key, f)`` with an ``f`` that never returns None."""
        if len(self._spread) > self._threshold:
            self._resize()
        if key not in self._spread:
            self._insert_first(key)

    def put_each(self, keys: Iterable[K]) -> None:
        """``put`` of each key in turn (unlike ``putAll``, which presizes an empty map)."""
        for key in keys:
            self.put(key)

    def compute_if_absent_each(self, calls: Iterable[K]) -> None:
        """``compute_if_absent`` of each key in turn; the hot loop of the bitmap writer."""
        spread = self._spread
        insert_first = self._insert_first
        threshold = self._threshold
        for key in calls:
            if len(spread) > threshold:
                self._resize()
                threshold = self._threshold
            if key not in spread:
                insert_first(key)
                threshold = self._threshold  # treeifyBin may have resized

    def keys(self) -> list[K]:
        """The keys in the order the HashMap iterates them."""
        out: list[K] = []
        for bin_ in self._table:
            if bin_ is None:
                continue
            if bin_.__class__ is list:
                out.extend(bin_)
            else:
                node = bin_
                while node is not None:
                    out.append(node.key)
                    node = node.next
        return out

    # -- chains ---------------------------------------------------------------------------------

    def _add(self, key: K) -> int:
        """Records a new key; returns its spread hash ``h ^ (h >>> 16)`` as a signed int."""
        h = self._hash_code(key) & _MASK32
        h ^= h >> 16
        if h & 0x80000000:
            h -= 1 << 32
        self._spread[key] = h
        return h

    def _insert_first(self, key: K) -> None:
        h = self._add(key)
        table = self._table
        i = h & (len(table) - 1)
        bin_ = table[i]
        if bin_ is None:
            table[i] = [key]
        elif bin_.__class__ is list:
            bin_.insert(0, key)
            if len(bin_) > _TREEIFY_THRESHOLD - 1:
                self._treeify_bin(i)
        else:
            self._put_tree_val(bin_, key, h)

    def _resize(self) -> None:
        old = self._table
        old_cap = len(old)
        if not old_cap:
            self._table = [None] * _INITIAL_CAPACITY
            self._threshold = _INITIAL_CAPACITY * 3 // 4
            return
        mask = 2 * old_cap - 1
        table: list = [None] * (2 * old_cap)
        spread = self._spread
        for j, bin_ in enumerate(old):
            if bin_ is None:
                continue
            if bin_.__class__ is not list:
                self._split(table, bin_, j, old_cap)
            elif len(bin_) == 1:
                table[spread[bin_[0]] & mask] = bin_
            else:
                lo = [k for k in bin_ if not spread[k] & old_cap]
                if len(lo) == len(bin_):
                    table[j] = bin_
                elif not lo:
                    table[j + old_cap] = bin_
                else:
                    table[j] = lo
                    table[j + old_cap] = [k for k in bin_ if spread[k] & old_cap]
        self._table = table
        self._threshold *= 2

    # -- tree bins ------------------------------------------------------------------------------

    def _treeify_bin(self, i: int) -> None:
        """Below capacity 64 a long chain only makes the table grow; above, it becomes a tree."""
        if len(self._table) < _MIN_TREEIFY_CAPACITY:
            self._resize()
            return
        spread = self._spread
        head = tail = None
        for key in self._table[i]:
            node = _TreeNode(key, spread[key])
            if tail is None:
                head = node
            else:
                node.prev = tail
                tail.next = node
            tail = node
        self._table[i] = head
        self._treeify(self._table, head)

    def _direction(self, key: K, h: int, p: _TreeNode) -> int:
        """The side of tree node ``p`` that ``key`` goes to (``<= 0``: left)."""
        if p.hash > h:
            return -1
        if p.hash < h:
            return 1
        if self._compare is not None:
            d = self._compare(key, p.key)
            if d:
                return d
        raise ValueError(
            f"java.util.HashMap orders the keys {key!r} and {p.key!r} (equal hash, "
            + ("no compare" if self._compare is None else "compare 0")
            + ") in a tree bin by System.identityHashCode, which cannot be reproduced; "
            "pass the keys' compareTo as compare"
        )

    def _treeify(self, table: list, head: _TreeNode) -> None:
        """Builds a red-black tree over the chain starting at ``head`` (already in ``table``)."""
        self.treeified += 1
        root = None
        x = head
        while x is not None:
            following = x.next
            x.left = x.right = None
            if root is None:
                x.parent = None
                x.red = False
                root = x
            else:
                p = root
                while True:
                    d = self._direction(x.key, x.hash, p)
                    child = p.left if d <= 0 else p.right
                    if child is None:
                        x.parent = p
                        if d <= 0:
                            p.left = x
                        else:
                            p.right = x
                        root = _balance_insertion(root, x)
                        break
                    p = child
            x = following
        _move_root_to_front(table, root)

    def _put_tree_val(self, first: _TreeNode, key: K, h: int) -> None:
        """Inserts a key known to be new into a tree bin (``putTreeVal``; its search for an
        existing key cannot succeed, so only the descent and the linking matter)."""
        root = first
        while root.parent is not None:
            root = root.parent
        p = root
        while True:
            d = self._direction(key, h, p)
            xp = p
            p = p.left if d <= 0 else p.right
            if p is None:
                x = _TreeNode(key, h)
                xpn = xp.next
                x.next = xpn
                if d <= 0:
                    xp.left = x
                else:
                    xp.right = x
                xp.next = x
                x.parent = x.prev = xp
                if xpn is not None:
                    xpn.prev = x
                _move_root_to_front(self._table, _balance_insertion(root, x))
                return

    def _split(self, table: list, first: _TreeNode, index: int, bit: int) -> None:
        """Relinks a tree bin into lo/hi lists on resize; short lists become chains again."""
        lo: list[_TreeNode] = []
        hi: list[_TreeNode] = []
        e = first
        while e is not None:
            (hi if e.hash & bit else lo).append(e)
            e = e.next
        for part, other, at in ((lo, hi, index), (hi, lo, index + bit)):
            if not part:
                continue
            if len(part) <= _UNTREEIFY_THRESHOLD:
                self.untreeified += 1
                table[at] = [node.key for node in part]
                continue
            prev = None
            for node in part:
                node.prev = prev
                if prev is not None:
                    prev.next = node
                prev = node
            prev.next = None
            table[at] = part[0]
            if other:  # else the whole tree moved unchanged
                self._treeify(table, part[0])


def _move_root_to_front(table: list, root: _TreeNode) -> None:
    """Makes ``root`` the first node of its bin's chain (the bin's table entry)."""
    index = root.hash & (len(table) - 1)
    first = table[index]
    if root is first:
        return
    table[index] = root
    rp, rn = root.prev, root.next
    if rn is not None:
        rn.prev = rp
    if rp is not None:
        rp.next = rn
    if first is not None:
        first.prev = root
    root.next = first
    root.prev = None


def _rotate_left(root: _TreeNode, p: _TreeNode) -> _TreeNode:
    r = p.right
    if r is None:
        return root
    rl = p.right = r.left
    if rl is not None:
        rl.parent = p
    pp = r.parent = p.parent
    if pp is None:
        root = r
        r.red = False
    elif pp.left is p:
        pp.left = r
    else:
        pp.right = r
    r.left = p
    p.parent = r
    return root


def _rotate_right(root: _TreeNode, p: _TreeNode) -> _TreeNode:
    left = p.left
    if left is None:
        return root
    lr = p.left = left.right
    if lr is not None:
        lr.parent = p
    pp = left.parent = p.parent
    if pp is None:
        root = left
        left.red = False
    elif pp.right is p:
        pp.right = left
    else:
        pp.left = left
    left.right = p
    p.parent = left
    return root


def _balance_insertion(root: _TreeNode, x: _TreeNode) -> _TreeNode:
    """CLR red-black insertion fix-up as in ``HashMap.TreeNode.balanceInsertion``; returns the root."""
    x.red = True
    while True:
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        xpp = xp.parent
        if not xp.red or xpp is None:
            return root
        xppl = xpp.left
        if xp is xppl:
            xppr = xpp.right
            if xppr is not None and xppr.red:
                xppr.red = xp.red = False
                xpp.red = True
                x = xpp
                continue
            if x is xp.right:
                x = xp
                root = _rotate_left(root, x)
                xp = x.parent
                xpp = None if xp is None else xp.parent
            if xp is not None:
                xp.red = False
                if xpp is not None:
                    xpp.red = True
                    root = _rotate_right(root, xpp)
        else:
            if xppl is not None and xppl.red:
                xppl.red = xp.red = False
                xpp.red = True
                x = xpp
                continue
            if x is xp.left:
                x = xp
                root = _rotate_right(root, x)
                xp = x.parent
                xpp = None if xp is None else xp.parent
            if xp is not None:
                xp.red = False
                if xpp is not None:
                    xpp.red = True
                    root = _rotate_left(root, xpp)


# From this many keys on, strings are hashed all at once (the data files of a bucket or of a
# Puffin file); fewer (a table's options, a column's index types) one by one, cached
_BATCH_STRING_HASHES = 32


def _hash_codes(keys: list[K], hash_code: Callable[[K], int]) -> np.ndarray:
    """``hash_code`` of each key as int64; many strings' :func:`java_string_hash` at once."""
    if hash_code is java_string_hash and len(keys) >= _BATCH_STRING_HASHES:
        return java_string_hashes(keys)
    return np.fromiter(map(hash_code, keys), np.int64, len(keys))


def hashmap_put_order(
    keys: Iterable[K], hash_code: Callable[[K], int], compare: Callable[[K, K], int] | None = None
) -> list[K]:
    """Iteration order of ``new HashMap<>()`` after ``put(k, v)`` for each key in sequence."""
    keys = list(keys)
    distinct = list(dict.fromkeys(keys))
    model = JavaHashMapOrder(dict(zip(distinct, _hash_codes(distinct, hash_code).tolist())).__getitem__, compare)
    model.put_each(keys)
    return model.keys()


def hashmap_compute_if_absent_order(
    calls: Iterable[K], hash_code: Callable[[K], int], compare: Callable[[K, K], int] | None = None
) -> list[K]:
    """Iteration order of ``new HashMap<>()`` after ``computeIfAbsent(k, ...)`` for each call.

    Every call counts, including repeated keys: a call may perform the resize that the
    previous insertion made due. Only first occurrences insert, and a repeat matters only by
    performing that resize, which any call before the next insertion does; so the calls reduce
    to the distinct keys plus whether any call follows the last insertion.
    """
    calls = list(calls)
    keys = list(dict.fromkeys(calls))
    if not keys:
        return []
    another_call = calls.count(calls[-1]) > 1  # the last call repeats a key: it follows the last insertion
    hash_codes = _hash_codes(keys, hash_code)
    key_compare = None if compare is None else lambda a, b: compare(keys[a], keys[b])
    return [keys[i] for i in compute_if_absent_order_of_new_keys(hash_codes, another_call, key_compare).tolist()]


def compute_if_absent_order_of_new_keys(
    hash_codes: np.ndarray, another_call: bool, compare: Callable[[int, int], int] | None = None
) -> np.ndarray:
    """Iteration order of ``new HashMap<>()`` after ``computeIfAbsent`` of n distinct keys in
    turn, then one more call on a present key if ``another_call``: their positions 0..n-1 in
    that order. ``hash_codes`` are the keys' ``hashCode`` (int64 holding the 32-bit value);
    ``compare`` is ``compareTo`` of the keys at two positions, for tree bins.

    Vectorised (module docstring, fast path) unless some chain reaches ``treeifyBin``; then the
    exact model replays the calls.
    """
    h = (np.asarray(hash_codes, np.int64) & _MASK32).astype(np.uint32)
    spread = h ^ (h >> np.uint32(16))
    order = _order_without_tree_bins(spread, another_call)
    if order is not None:
        return order
    model = JavaHashMapOrder(h.tolist().__getitem__, compare)
    model.compute_if_absent_each([*range(len(h)), *([0] if another_call else [])])
    return np.array(model.keys(), np.int64)


def _order_without_tree_bins(spread: np.ndarray, another_call: bool) -> np.ndarray | None:
    """The fast path: positions in iteration order, or None if some chain reaches treeifyBin."""
    n = len(spread)
    capacity = _INITIAL_CAPACITY
    while True:
        # keys inserted while the capacity is <= capacity: those at positions i <= 0.75 * capacity
        inserted = min(n, capacity * 3 // 4 + 1)
        if np.bincount(spread[:inserted] & np.uint32(capacity - 1), minlength=1).max() >= _TREEIFY_THRESHOLD:
            return None
        last_call_size = n if another_call else n - 1  # size at the start of the last call
        if last_call_size <= capacity * 3 // 4:
            break
        capacity *= 2
    bucket = (spread & np.uint32(capacity - 1)).astype(np.int64)
    # by bucket, then newest first; the composite keys are distinct, so any sort is exact
    return np.argsort(bucket * n + np.arange(n - 1, -1, -1), kind="stable").astype(np.int64)
