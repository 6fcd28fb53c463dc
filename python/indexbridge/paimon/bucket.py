"""Paimon dynamic-bucket hash index (index type ``HASH``, spec/paimon.md §3) and key hashing.

Hash index file::

    i32 BE hash  x row_count      no header, no footer, no checksum; a trailing partial int is EOF

Each int is ``BinaryRow.hashCode()`` of a record's trimmed primary key (the primary-key fields
minus the partition fields). Paimon writes them in the iteration order of its ``IntHashSet``, a
fastutil ``IntOpenHashSet``; readers treat the file as a set.

The key row is a ``BinaryRow`` (:mod:`indexbridge.paimon.binary_row`) of the key fields.

``BinaryRow.hashCode()`` is Paimon's Murmur3 variant over the row's 32-bit little-endian words
(App. A.3); ``BinaryString.hashCode()`` is the same over bytes with a sign-extended byte tail.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Sequence
from typing import TypeVar

import numpy as np

from indexbridge.paimon.binary_row import FieldType, binary_row, null_bits_size, parse_key_type
from indexbridge.paimon.javaorder import to_java_int

# ---------------------------------------------------------------------------------------------
# Paimon's Murmur3-x86-32 variant (MurmurHashUtils, seed 42), spec App. A.3.
# Written once for Python ints and uint32 numpy arrays alike: every step masks to 32 bits,
# which is a no-op on uint32 arrays, so key_hash_array hashes all rows with the same code.

_U32 = TypeVar("_U32", int, np.ndarray)
_MASK32 = 0xFFFFFFFF
_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_SEED = 42


def _rotl32(x: _U32, r: int) -> _U32:
    return ((x << r) | (x >> (32 - r))) & _MASK32


def _mix_k1(k: _U32) -> _U32:
    return (_rotl32((k * _C1) & _MASK32, 15) * _C2) & _MASK32


def _mix_h1(h: _U32, k: _U32) -> _U32:
    return (_rotl32(h ^ k, 13) * 5 + 0xE6546B64) & _MASK32


def _fmix(h: _U32, length: int) -> _U32:
    h ^= length
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK32
    return h ^ (h >> 16)


def _hash_words(words: Iterable[_U32], h: _U32) -> _U32:
    for w in words:
        h = _mix_h1(h, _mix_k1(w))
    return h


def murmur_hash_words(data: bytes) -> int:
    """``MurmurHashUtils.hashBytesByWords`` (``BinaryRow.hashCode``); length a multiple of 4."""
    if len(data) % 4:
        raise ValueError(f"hashing by words needs a multiple of 4 bytes, got {len(data)}")
    words = struct.unpack(f"<{len(data) // 4}I", data)
    return to_java_int(_fmix(_hash_words(words, _SEED), len(data)))


def murmur_hash_bytes(data: bytes) -> int:
    """``MurmurHashUtils.hashBytes`` (``BinarySection``/``BinaryString.hashCode``).

    Whole words first, then each remaining byte mixed on its own, sign-extended to an int.
    """
    aligned = len(data) - len(data) % 4
    words = struct.unpack(f"<{aligned // 4}I", data[:aligned])
    tail = [b if b < 0x80 else (b - 0x100) & _MASK32 for b in data[aligned:]]
    return to_java_int(_fmix(_hash_words([*words, *tail], _SEED), len(data)))


def key_hash(values: Sequence[object], types: Sequence[str | FieldType]) -> int:
    """``BinaryRow.hashCode()`` of the key row: what the hash index stores (signed i32)."""
    return murmur_hash_words(binary_row(values, types))


_ARRAY_DTYPES = {"BOOLEAN": "<u1", "TINYINT": "<i1", "SMALLINT": "<i2", "INT": "<i4", "BIGINT": "<i8",
                 "FLOAT": "<f4", "DOUBLE": "<f8", "DATE": "<i4", "TIME": "<i4",
                 "TIMESTAMP": "<i8", "DECIMAL": "<i8"}  # fmt: skip


def key_hash_array(columns: Sequence[np.ndarray], types: Sequence[str | FieldType]) -> np.ndarray:
    """``key_hash`` for every row of non-null fixed-width key columns, vectorised (int32).

    Columns hold the slot values: bool/ints, floats, epoch millis for TIMESTAMP(p <= 3), the
    unscaled long for DECIMAL(p <= 18). Such rows have no variable part and an all-zero null
    header, so every row is the same number of words.
    """
    if len(columns) != len(types):
        raise ValueError(f"{len(columns)} columns for {len(types)} key types")
    key_types = [t if isinstance(t, FieldType) else parse_key_type(t) for t in types]
    rows = len(columns[0]) if columns else 0
    null_bits = null_bits_size(len(key_types))
    row = np.zeros((rows, null_bits + 8 * len(key_types)), np.uint8)
    for i, (column, t, sql) in enumerate(zip(columns, key_types, types)):
        if np.ma.isMaskedArray(column) or np.ndim(column) != 1 or len(column) != rows:
            raise ValueError(f"column {i}: need a 1-D array of {rows} non-null values")
        if not t.compact:
            raise ValueError(f"column {i}: {sql} is not fixed-width; use key_hash")
        column = np.asarray(column)
        dtype = np.dtype(_ARRAY_DTYPES[t.root])
        if t.root in ("FLOAT", "DOUBLE"):
            if column.dtype.kind != "f":
                raise ValueError(f"column {i}: {sql} needs a float array, got {column.dtype}")
        elif column.dtype.kind not in "biu":
            raise ValueError(f"column {i}: {sql} needs an integer array, got {column.dtype}")
        elif rows:
            low, high = (0, 1) if t.root == "BOOLEAN" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
            if t.root == "DECIMAL":
                high = 10**t.precision - 1
                low = -high
            if column.min() < low or column.max() > high:
                raise ValueError(f"column {i}: values outside the {sql} range {low}..{high}")
        slot = null_bits + 8 * i
        row[:, slot : slot + dtype.itemsize] = column.astype(dtype).view(np.uint8).reshape(rows, dtype.itemsize)
    words = row.view("<u4").astype(np.uint32)
    hashes = _fmix(_hash_words(words.T, np.full(rows, _SEED, np.uint32)), row.shape[1])
    return hashes.view(np.int32)


# ---------------------------------------------------------------------------------------------
# Hash index file and fastutil IntOpenHashSet order


def _fastutil_mix(x: int) -> int:
    """``it.unimi.dsi.fastutil.HashCommon.mix(int)``."""
    h = (x * 0x9E3779B9) & _MASK32
    return h ^ (h >> 16)


def _fastutil_array_size(expected: int) -> int:
    """``HashCommon.arraySize(expected, 0.75f)``: ``expected / f`` is float arithmetic in Java."""
    needed = math.ceil(float(np.float32(expected) / np.float32(0.75)))
    return max(2, 1 << (needed - 1).bit_length())


def _fastutil_max_fill(n: int) -> int:
    """``HashCommon.maxFill(n, 0.75f)``."""
    return min(math.ceil(float(np.float32(n) * np.float32(0.75))), n - 1)


def int_hash_set_order(hashes: Iterable[int]) -> list[int]:
    """Iteration order (``toIntArray``) of ``new IntOpenHashSet()`` after ``add`` of each hash.

    Hand-written emulation of fastutil 8.5.12, because the order is what Paimon's ``IntHashSet``
    writes: open addressing with linear probing from ``mix(k) & mask``; 0 is the "free" marker,
    so key 0 lives in a separate slot and is returned first; after an add that finds
    ``size >= maxFill`` the table grows to ``arraySize(size + 1)`` and re-inserts the keys
    scanning slots from the top down; iteration then scans slots from the top down.
    """
    n = _fastutil_array_size(16)
    mask, max_fill = n - 1, _fastutil_max_fill(n)
    table = [0] * n
    contains_zero = False
    size = 0
    for value in hashes:
        k = to_java_int(value)
        if k != value:
            raise ValueError(f"hash {value} is not a 32-bit signed int")
        if k == 0:
            if contains_zero:
                continue
            contains_zero = True
        else:
            pos = _fastutil_mix(k) & mask
            while table[pos] != 0 and table[pos] != k:
                pos = (pos + 1) & mask
            if table[pos] == k:
                continue
            table[pos] = k
        size += 1
        if size - 1 >= max_fill:
            n = _fastutil_array_size(size + 1)
            mask, max_fill = n - 1, _fastutil_max_fill(n)
            new_table = [0] * n
            for k_old in reversed(table):
                if k_old:
                    pos = _fastutil_mix(k_old) & mask
                    while new_table[pos] != 0:
                        pos = (pos + 1) & mask
                    new_table[pos] = k_old
            table = new_table
    return ([0] if contains_zero else []) + [k for k in reversed(table) if k]


def encode_hash_index(hashes: Iterable[int] | np.ndarray, *, order: str = "paimon") -> bytes:
    """A hash index file: ``order="paimon"`` in ``IntHashSet`` order, ``"given"`` as given."""
    values = hashes if isinstance(hashes, np.ndarray) else np.asarray(list(hashes))
    if order == "paimon":
        values = np.asarray(int_hash_set_order(values.tolist()), dtype=np.int64)
    elif order != "given":
        raise ValueError(f"order must be 'paimon' or 'given', got {order!r}")
    if values.size and (values.dtype.kind not in "iu" or values.min() < -(1 << 31) or values.max() >= 1 << 31):
        raise ValueError("hashes must be 32-bit signed ints")
    return values.astype(">i4").tobytes()


def decode_hash_index(data: bytes | bytearray | memoryview, *, source: str = "<bytes>") -> np.ndarray:
    """The hashes of a hash index file (int32); a trailing partial int counts as EOF (§3).

    No input is malformed, so nothing is raised; ``source`` keeps the decoder signatures uniform.
    """
    view = memoryview(data).cast("B")
    return np.frombuffer(view[: len(view) // 4 * 4], ">i4").astype(np.int32)
