"""Portable RoaringBitmap (32-bit) serialization (spec/paimon.md §1.1, RoaringFormatSpec).

All fields are little-endian::

    no run container                          at least one run container
    ----------------                          --------------------------
    u32  cookie = 12346                       u32  cookie = 12347 | (n-1) << 16
    u32  n (container count)                  u8[ceil(n/8)]  run flags, bit i (LSB first) = container i is a run
    n x (u16 key, u16 cardinality-1)          n x (u16 key, u16 cardinality-1)
    n x u32 offset (from the cookie)          n x u32 offset, only when n >= 4
    containers, by ascending key:
      array   non-run, cardinality <= 4096    cardinality x u16 sorted low halves
      bitmap  non-run, cardinality >  4096    1024 x u64 words (8192 bytes)
      run                                     u16 nruns, nruns x (u16 start, u16 length-1)

Paimon writers call ``run_optimize()`` first, as Paimon does (``runOptimize()``), which makes the bytes
a pure function of the set. Readers parse the headers here to learn the exact serialized length
(the 64-bit layout concatenates bitmaps without length framing) and to reject malformed headers
before pyroaring sees them; pyroaring (CRoaring's ``portable_deserialize_safe`` plus its internal
validation) then checks the container contents.

Zap's bitmaps are Go roaring v0.4.23's (spec/zap.md §13): built by ``Add`` in ascending order and
never run-optimised, except that a bitmap container that becomes full turns into the run
``[0, 65535]``. :func:`serialize_go` writes exactly that.
"""

from __future__ import annotations

import array
import operator
import struct
import sys
from collections.abc import Sequence
from functools import lru_cache
from itertools import accumulate
from typing import TypeVar

import numpy as np
from pyroaring import AbstractBitMap, BitMap

from indexbridge.bytes import ByteReader

SERIAL_COOKIE_NO_RUNCONTAINER = 12346
SERIAL_COOKIE = 12347
NO_OFFSET_THRESHOLD = 4
MAX_CONTAINERS = 1 << 16
ARRAY_MAX_CARDINALITY = 4096
# the header of a no-run bitmap of one array container: cookie, 1 container, its key,
# cardinality - 1, its offset (16)
ONE_ARRAY_HEADER = struct.Struct("<IIHHI")
_ONE_VALUE = struct.Struct("<IIHHIH")  # a bitmap of one value: ONE_ARRAY_HEADER and the value's low 16 bits
BITMAP_CONTAINER_BYTES = 8192

_U16_LE = struct.Struct("<H")
_U32_LE = struct.Struct("<I")
_U32X2_LE = struct.Struct("<II")
B = TypeVar("B", bound=AbstractBitMap)


def serialize32(bm: BitMap) -> bytes:
    """Paimon's canonical bytes of ``bm``: ``run_optimize()`` (in place), then ``serialize()``."""
    bm.run_optimize()
    return bm.serialize()


def uint32_array(values: np.ndarray) -> array.array:
    """The low 32 bits of ``values`` as ``array('I')``, pyroaring's fast bulk path (several
    times faster than passing the ndarray to ``BitMap`` or ``update``)."""
    out = array.array("I")
    out.frombytes(memoryview(np.ascontiguousarray(values, dtype=np.uint32)).cast("B"))
    return out


# CRoaring adds an array of values one at a time (``roaring_bitmap_add_many``: about 7 ns a value
# on the 2-core bench machine) and a run of consecutive values with one ``add_range``. A run costs
# about a microsecond of Python here, so runs are added whole when there are fewer than one per
# 256 values; they are looked for when every 64th value, sampled, shows them.
_RUN_SAMPLE_STRIDE = 64
_VALUES_PER_RUN = 256


def bitmap_of(values: np.ndarray, distinct_ascending: bool = False) -> BitMap:
    """A bitmap of the (uint32-range) integers in ``values``, run-optimised as ``BitMap(values)``
    is. Ascending values in few runs of consecutive integers are added a run at a time, each
    container then of the type adding its values one by one gives (:func:`_unsafe_run_keys`).
    ``distinct_ascending`` says the caller knows the values strictly ascend: a single run is
    then seen from the ends alone."""
    runs = _runs(values, distinct_ascending)
    if runs is None:
        return BitMap(uint32_array(values))
    bm = BitMap()
    for first, last in runs:
        bm.add_range(first, last + 1)
    unsafe = _unsafe_run_keys(runs)
    if unsafe:
        for key in unsafe:
            bm.remove_range(key << 16, key + 1 << 16)  # (CRoaring drops the emptied container)
        bm.update(uint32_array(values[np.isin(values >> 16, unsafe)]))
    bm.run_optimize()
    bm.shrink_to_fit()
    return bm


def _runs(values: np.ndarray, distinct_ascending: bool) -> list[tuple[int, int]] | None:
    """``(first, last)`` of each run of consecutive integers in ``values`` when they ascend
    (repeats allowed) in fewer than one run per ``_VALUES_PER_RUN`` values; else None. Unless
    ``distinct_ascending`` values span exactly their count (one run), the whole array is read
    only when a sample shows runs: at least half the strides between every
    ``_RUN_SAMPLE_STRIDE``-th value must be unbroken."""
    n = values.size
    if n < _VALUES_PER_RUN:
        return None
    if distinct_ascending and int(values[-1]) - int(values[0]) == n - 1:
        return [(int(values[0]), int(values[-1]))]
    sample = values[::_RUN_SAMPLE_STRIDE]
    if 2 * np.count_nonzero(sample[1:] - sample[:-1] == _RUN_SAMPLE_STRIDE) < sample.size - 1:
        return None
    v = values.astype(np.int64, copy=False)
    # a step of 0 (a repeat) or 1 stays in the run; any other, descending ones too, ends it
    ends = np.flatnonzero((v[1:] - v[:-1]).view(np.uint64) > 1)
    if (ends.size + 1) * _VALUES_PER_RUN > n:
        return None
    first, last = v[ends + 1].tolist(), v[ends].tolist()
    if not all(a > b + 1 for a, b in zip(first, last)):  # a run that starts at or before the end of the one before
        return None
    return list(zip([int(v[0]), *first], [*last, int(v[-1])]))


def _unsafe_run_keys(runs: list[tuple[int, int]]) -> list[int]:
    """The container keys (high 16 bits) where the ascending, disjoint ``runs`` must be added
    value by value for ``run_optimize()`` to give the container that adding them so gives.
    ``run_optimize`` keeps a run container when its runs are no larger than the array or bitmap
    container of the same values, but turns an array or bitmap container into runs only when
    they are strictly smaller (CRoaring's ``convert_run_optimize``, as the ``runOptimize`` of
    Java's RoaringBitmap that Paimon calls): ranges may fill a container only when its runs (2
    bytes, and 4 a run) are strictly smaller than both (2 bytes a value; 8192 bytes). A container
    inside one run (65536 values, one run) always is; only those where a run starts or ends are
    counted."""
    containers: dict[int, list[int]] = {}  # key: [cardinality, runs]
    for first, last in runs:
        key_first, key_last = first >> 16, last >> 16
        if key_first == key_last:
            pieces = ((key_first, last - first + 1),)
        else:
            pieces = ((key_first, (key_first + 1 << 16) - first), (key_last, last - (key_last << 16) + 1))
        for key, count in pieces:
            held = containers.get(key)
            if held is None:
                containers[key] = [count, 1]
            else:
                held[0] += count
                held[1] += 1
    return [key for key, (cardinality, nruns) in containers.items()
            if 2 + 4 * nruns >= min(2 * cardinality, BITMAP_CONTAINER_BYTES)]


_POPCOUNT8 = np.array([bin(i).count("1") for i in range(256)], np.int64)


def bitmap_from_mask(mask: np.ndarray) -> BitMap:
    """A bitmap of the indexes where the boolean ``mask`` is True.

    Built container by container: the mask is packed into bits (a bitmap container's payload is
    exactly those 8192 bytes per 65536 values), chunks of at most 4096 members become array
    containers, and the portable serialization is handed to pyroaring. Much faster than adding
    row ids when the mask is long and dense (BSI slices, existence bitmaps).
    """
    chunks = -(-len(mask) // 65536)
    packed = np.zeros(chunks * 8192, np.uint8)
    bits = np.packbits(mask, bitorder="little")
    packed[: len(bits)] = bits
    words = packed.reshape(chunks, 8192)
    cards = _POPCOUNT8[words].sum(axis=1) if chunks else np.zeros(0, np.int64)
    keys = np.flatnonzero(cards).tolist()
    payloads = []
    for key in keys:
        if cards[key] > ARRAY_MAX_CARDINALITY:
            payloads.append(words[key].tobytes())
        else:
            payloads.append(np.flatnonzero(mask[key << 16 : (key + 1) << 16]).astype("<u2").tobytes())
    n = len(keys)
    descriptive = struct.pack(f"<{2 * n}H", *(v for key in keys for v in (key, int(cards[key]) - 1)))
    offsets = list(accumulate((len(p) for p in payloads), initial=8 + 8 * n))[:n]
    header = struct.pack("<II", SERIAL_COOKIE_NO_RUNCONTAINER, n) + descriptive + struct.pack(f"<{n}I", *offsets)
    return BitMap.deserialize(header + b"".join(payloads))


def serialize_go(values: Sequence[int] | np.ndarray) -> bytes:
    """Go roaring v0.4.23's ``ToBytes()`` of a bitmap built by ``Add`` over sorted unique ``values``.

    Hand-written because no library reproduces Go's full-container rule: a container is an
    array up to 4096 values, the single run ``[0, 65535]`` when full, a bitmap otherwise.
    """
    n = len(values)
    if n == 1:  # a zap term of one hit, as most are
        value = values[0]
        return _ONE_VALUE.pack(SERIAL_COOKIE_NO_RUNCONTAINER, 1, value >> 16, 0, 16, value & 0xFFFF)
    if 0 < n <= ARRAY_MAX_CARDINALITY and values[0] >> 16 == values[-1] >> 16:  # one array container
        key = values[0] >> 16
        lows = array.array("H", values if key == 0 else [v & 0xFFFF for v in values])
        if sys.byteorder == "big":
            lows.byteswap()
        return ONE_ARRAY_HEADER.pack(SERIAL_COOKIE_NO_RUNCONTAINER, 1, key, n - 1, 16) + lows.tobytes()
    values = np.asarray(values, dtype=np.uint32)
    keys, starts, counts = np.unique(values >> 16, return_index=True, return_counts=True)
    n = len(keys)
    bodies = []
    for start, count in zip(starts.tolist(), counts.tolist()):
        low = (values[start : start + count] & 0xFFFF).astype("<u2")
        if count == MAX_CONTAINERS:
            bodies.append(b"\x01\x00\x00\x00\xff\xff")
        elif count > ARRAY_MAX_CARDINALITY:
            bits = np.zeros(MAX_CONTAINERS, dtype=np.uint8)
            bits[low] = 1
            bodies.append(np.packbits(bits, bitorder="little").tobytes())
        else:
            bodies.append(low.tobytes())
    header = bytearray()
    runs = counts == MAX_CONTAINERS
    if runs.any():
        header += struct.pack("<I", SERIAL_COOKIE | (n - 1) << 16)
        header += np.packbits(runs, bitorder="little").tobytes()
    else:
        header += struct.pack("<II", SERIAL_COOKIE_NO_RUNCONTAINER, n)
    pairs = np.empty(2 * n, dtype="<u2")
    pairs[0::2] = keys
    pairs[1::2] = counts - 1
    header += pairs.tobytes()
    if not runs.any() or n >= NO_OFFSET_THRESHOLD:
        sizes = [len(b) for b in bodies]
        offsets = list(accumulate(sizes, initial=len(header) + 4 * n))[:n]
        header += struct.pack(f"<{n}I", *offsets)
    return bytes(header) + b"".join(bodies)


def _set_bits(bitset: memoryview) -> list[int]:
    """Indexes of the set bits, LSB first within each byte (skipping zero bytes cheaply)."""
    return [8 * i + bit for i, byte in enumerate(bitset) if byte for bit in range(8) if byte >> bit & 1]


def container_layout(data: bytes | memoryview) -> tuple[int, list[tuple[int, str, int]]]:
    """(cookie without the count, [(key, "array" | "bitmap" | "run", cardinality), ...]) of a
    valid portable bitmap: how it was serialized, which the set alone does not tell."""
    reader = ByteReader(data)
    cookie, n, runs, keys, cardinalities = _read_header(reader)
    run_set = set(runs)
    kinds = ["run" if i in run_set else "bitmap" if c > ARRAY_MAX_CARDINALITY else "array" for i, c in enumerate(cardinalities)]
    return cookie & 0xFFFF, list(zip(keys, kinds, cardinalities))


def _read_header(reader: ByteReader) -> tuple[int, int, list[int], tuple[int, ...], list[int]]:
    """(cookie, container count, run container indexes, keys, cardinalities); checks the keys."""
    start = reader.pos
    cookie = reader.u32_le("roaring cookie")
    if cookie & 0xFFFF == SERIAL_COOKIE:
        n = (cookie >> 16) + 1
        flags = reader.take((n + 7) // 8, "roaring run-flag bitset")
        runs = [i for i in _set_bits(flags) if i < n]
    elif cookie == SERIAL_COOKIE_NO_RUNCONTAINER:
        n = reader.u32_le("roaring container count")
        if n > MAX_CONTAINERS:
            raise reader.error(f"at most {MAX_CONTAINERS} roaring containers, found {n}", start + 4)
        runs = []
    else:
        raise reader.error(
            f"roaring cookie {SERIAL_COOKIE_NO_RUNCONTAINER} or {SERIAL_COOKIE} | (n-1) << 16, "
            f"found {cookie:#010x}",
            start,
        )

    header_pos = reader.pos
    header = struct.unpack(f"<{2 * n}H", reader.take(4 * n, "roaring descriptive header"))
    keys, cardinalities_minus_1 = header[0::2], header[1::2]
    if not all(map(operator.lt, keys, keys[1:])):
        i = next(i for i in range(1, n) if keys[i] <= keys[i - 1])
        raise reader.error(
            f"strictly ascending roaring container keys, container {i} has key {keys[i]} after {keys[i - 1]}",
            header_pos + 4 * i,
        )
    return cookie, n, runs, keys, [c + 1 for c in cardinalities_minus_1]


def read_roaring32(reader: ByteReader, cls: type[B] = BitMap) -> B:
    """Read one portable roaring bitmap at ``reader.pos`` and consume exactly its bytes, as a
    ``cls`` (``BitMap``, or ``FrozenBitMap`` for a value to share)."""
    bitmap, reader.pos = read_roaring32_at(reader.data, reader.pos, reader.end, reader.source, cls)
    return bitmap


def read_roaring32_at(data: memoryview, start: int, end: int, source: str, cls: type[B] = BitMap) -> tuple[B, int]:
    """The portable roaring bitmap at ``data[start:]`` (within ``end``) and the offset after it.

    A sound header takes the short path of :func:`_read_sound`; anything else, and any bitmap
    pyroaring refuses, is re-read field by field by :func:`_read_roaring32_checked`, which raises
    the :class:`IndexFormatError` naming the offset and what was expected.
    """
    found = _read_sound(data, start, end, cls)
    return found if found is not None else _read_roaring32_checked(ByteReader(data, source, start, end), cls)


def read_roaring32_values_at(data: memoryview, start: int, end: int) -> tuple[np.ndarray, int] | None:
    """The values (uint32, ascending) and end offset of the non-empty bitmap at ``data[start:]``
    (within ``end``) when :func:`read_roaring32_at` takes its short path, else None: the
    caller then reads the same bytes with :func:`read_roaring32`, which names any fault."""
    found = _read_sound(data, start, end, BitMap)
    if found is None or not found[0]:
        return None
    return np.frombuffer(found[0].to_array(), np.uint32), found[1]


_ONE_CONTAINER_HEADER = struct.Struct("<HI")  # the cardinality-1 and offset of a no-run bitmap's one container
# (key, cardinality - 1) of each of the 1 to 3 containers of a bitmap with runs and no offsets
_DESCRIPTIVE_HEADERS = (None, *(struct.Struct(f"<{2 * n}H") for n in range(1, NO_OFFSET_THRESHOLD)))


@lru_cache(maxsize=64)
def _header_struct(n: int) -> struct.Struct:
    """The descriptive header and the offsets of ``n`` containers."""
    return struct.Struct(f"<{2 * n}H{n}I")


def _no_run_length(fields: tuple, n: int) -> int:
    """The length of a bitmap of ``n`` containers and no runs whose descriptive header and offsets
    are ``fields``, or -1 when an offset is not the running sum of the container sizes before it.
    (A loop: a third of the time of a list of sizes and their sums, at 2 containers; compiled,
    roaring.pxd makes its integers C integers: 16 containers in 0.1 µs, not 2.4.)"""
    bitmap_bytes, array_max = BITMAP_CONTAINER_BYTES, ARRAY_MAX_CARDINALITY
    at = 8 + 8 * n
    for i in range(n):
        if fields[2 * n + i] != at:
            return -1
        card_minus_1 = fields[2 * i + 1]
        at += bitmap_bytes if card_minus_1 >= array_max else 2 * card_minus_1 + 2
    return at


def _read_sound(data: memoryview, start: int, end: int, cls: type[B]) -> tuple[B, int] | None:
    """(bitmap, offset after it) when the header is sound, else ``None``: the short path of
    :func:`read_roaring32_at`, in as few Python steps as possible (deserializing many small
    bitmaps is dominated by per-bitmap overhead), checking what pyroaring does not.

    Container sizes follow from the cardinalities and, for run containers, from their run
    counts; the offsets must be those sizes' running sums, and the bitmap must end by ``end``.
    Without offsets (fewer than 4 containers, some runs), the containers are walked in turn for
    the length (a run container's size is in its run count).
    pyroaring (CRoaring's ``portable_deserialize_safe`` and its validation) checks keys and
    container contents; its ``ValueError`` sends the bitmap to the checked path too.
    """
    try:
        cookie, n = _U32X2_LE.unpack_from(data, start)
        if cookie == SERIAL_COOKIE_NO_RUNCONTAINER and n == 1:  # a small postings list or DV: one unpack
            card_minus_1, offset = _ONE_CONTAINER_HEADER.unpack_from(data, start + 10)
            stop = start + 16 + (BITMAP_CONTAINER_BYTES if card_minus_1 >= ARRAY_MAX_CARDINALITY else 2 * card_minus_1 + 2)
            return (cls.deserialize(data[start:stop]), stop) if offset == 16 and stop <= end else None
        if cookie == SERIAL_COOKIE_NO_RUNCONTAINER:  # sizes from the cardinalities, offsets their running sums
            if n > MAX_CONTAINERS:
                return None
            length = _no_run_length(_header_struct(n).unpack_from(data, start + 8), n)
            stop = start + length
            return (cls.deserialize(data[start:stop]), stop) if length >= 0 and stop <= end else None
        if cookie & 0xFFFF != SERIAL_COOKIE:
            return None
        n = (cookie >> 16) + 1
        if n < NO_OFFSET_THRESHOLD:  # no offsets to check: the containers' sizes, in turn, give the length
            runs = data[start + 4]  # (one byte of run flags)
            fields = _DESCRIPTIVE_HEADERS[n].unpack_from(data, start + 5)
            at = start + 5 + 4 * n
            for i in range(n):
                if runs >> i & 1:
                    at += 2 + 4 * _U16_LE.unpack_from(data, at)[0]
                else:
                    at += BITMAP_CONTAINER_BYTES if fields[2 * i + 1] >= ARRAY_MAX_CARDINALITY else 2 * fields[2 * i + 1] + 2
            return (cls.deserialize(data[start:at]), at) if at <= end else None
        header_at = start + 4 + (n + 7) // 8  # 4 containers or more, some runs: run flags, header, offsets
        fields = _header_struct(n).unpack_from(data, header_at)
        body_at = header_at + 8 * n
        runs = int.from_bytes(data[start + 4 : header_at], "little") & ((1 << n) - 1)
        sizes = [BITMAP_CONTAINER_BYTES if c >= ARRAY_MAX_CARDINALITY else 2 * c + 2 for c in fields[1 : 2 * n : 2]]
        at = body_at
        walked = 0
        while runs:  # a run container's size is in its run count: walk to each, in order
            i = (runs & -runs).bit_length() - 1
            runs &= runs - 1
            at += sum(sizes[walked:i])
            walked = i
            sizes[i] = 2 + 4 * _U16_LE.unpack_from(data, at)[0]
        if tuple(accumulate(sizes[:-1], initial=body_at - start)) != fields[2 * n :]:
            return None
        stop = body_at + sum(sizes)
        return (cls.deserialize(data[start:stop]), stop) if stop <= end else None
    except (ValueError, IndexError, struct.error):  # pyroaring raises both for damaged bitmaps
        return None


def _read_roaring32_checked(reader: ByteReader, cls: type[B]) -> tuple[B, int]:
    """:func:`read_roaring32_at`, field by field: every malformed header raises at its offset."""
    start = reader.pos
    cookie, n, runs, keys, cardinalities = _read_header(reader)
    offsets_pos = reader.pos
    has_offsets = cookie == SERIAL_COOKIE_NO_RUNCONTAINER or n >= NO_OFFSET_THRESHOLD
    offsets = struct.unpack(f"<{n}I", reader.take(4 * n, "roaring offset header")) if has_offsets else ()

    sizes = [BITMAP_CONTAINER_BYTES if c > ARRAY_MAX_CARDINALITY else 2 * c for c in cardinalities]
    # A run container's size depends on its run count, stored at its start: walk to each run
    # container in order, past the (by then known) sizes of the containers before it.
    at, walked = reader.pos, 0
    for i in runs:
        at += sum(sizes[walked:i])
        walked = i
        if at + 2 > reader.end:
            raise reader.error(f"the run count of roaring container {i}, found end of data", min(at, reader.end))
        (nruns,) = _U16_LE.unpack_from(reader.data, at)
        sizes[i] = 2 + 4 * nruns

    if has_offsets:
        expected = list(accumulate(sizes, initial=reader.pos - start))[:n]
        if expected != list(offsets):
            i = next(i for i in range(n) if offsets[i] != expected[i])
            raise reader.error(
                f"offset {expected[i]} for roaring container {i}, found {offsets[i]}", offsets_pos + 4 * i
            )
    reader.take(sum(sizes), "roaring containers")
    try:
        return cls.deserialize(reader.data[start : reader.pos]), reader.pos
    except (ValueError, IndexError) as e:
        raise reader.error(f"a valid roaring bitmap ({e})", start) from None
