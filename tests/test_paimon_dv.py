"""Deletion vectors, deletion files and the Java HashMap order they are written in."""

from __future__ import annotations

import json
import random
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from pyroaring import BitMap

from indexbridge.bytes import ByteReader
from indexbridge.errors import IndexFormatError
from indexbridge.paimon import dv as dv_module
from indexbridge.paimon.dv import (
    MAX_POSITION_32,
    MAX_POSITION_64,
    DeletionFileMeta,
    DeletionVector,
    DeletionVectorRange,
    deletion_file_order,
    encode_deletion_files,
    read_deletion_vectors,
    scan_deletion_file,
    write_deletion_files,
)
from indexbridge import roaring
from indexbridge.roaring import read_roaring32, read_roaring32_at, read_roaring32_values_at, serialize32, serialize_go

MAGIC32 = bytes.fromhex("5e43f2d0")
MAGIC64 = bytes.fromhex("d1d33964")
EMPTY_ROARING = bytes.fromhex("3a30000000000000")


def random_positions(rng: random.Random, bitmap64: bool) -> set[int]:
    """Shapes that pick every roaring container kind, chunk edges and (64-bit) several keys."""
    keys = rng.sample([0, 1, 2, 7, 40], rng.randint(1, 3)) if bitmap64 else [0]
    chunks = 1 << 16 if bitmap64 else 1 << 15
    limit = MAX_POSITION_64 if bitmap64 else MAX_POSITION_32
    positions: set[int] = set()
    for key in keys:
        for _ in range(rng.randint(0, 4)):
            chunk = (key << 32) + (rng.randrange(chunks) << 16)
            shape = rng.choice(["run", "dense", "sparse", "edges"])
            if shape == "run":
                start = chunk + rng.randrange(1 << 16)
                positions.update(range(start, start + rng.randint(1, 70_000)))
            elif shape == "dense":
                positions.update(chunk + rng.randrange(1 << 16) for _ in range(5_000))
            elif shape == "sparse":
                positions.update(chunk + rng.randrange(1 << 16) for _ in range(rng.randint(1, 300)))
            else:
                positions.update({chunk - 1, chunk, chunk + 0xFFFF, (key << 32) | 0xFFFFFFFF, MAX_POSITION_32})
    return {p for p in positions if 0 <= p <= limit and (bitmap64 or p <= MAX_POSITION_32)}


# ---------------------------------------------------------------------------------------------
# Property tests against a plain set


@pytest.mark.parametrize("bitmap64", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_matches_a_plain_set(seed: int, bitmap64: bool):
    rng = random.Random(seed * 2 + bitmap64)
    expected = random_positions(rng, bitmap64)
    ordered = sorted(expected)
    dv = DeletionVector.from_positions(np.array(ordered, dtype=np.uint64), bitmap64=bitmap64)

    assert dv.positions().tolist() == ordered
    assert dv.positions().dtype == np.uint64
    assert dv.cardinality == len(expected)
    probes = ordered[:: max(1, len(ordered) // 200)] + [rng.randrange(dv.max_position + 1) for _ in range(200)]
    for p in probes:
        assert dv.is_deleted(p) == (p in expected) == (p in dv)

    frame = dv.serialize()
    back = DeletionVector.deserialize(frame)
    assert back == dv and back.bitmap64 == bitmap64
    assert back.serialize() == frame
    assert back.index_meta_length() == (len(frame) if bitmap64 else len(frame) - 8)
    assert zlib.crc32(frame[4:-4]) == struct.unpack(">I", frame[-4:])[0]


@pytest.mark.parametrize("bitmap64", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_every_way_of_building_gives_the_same_bytes(seed: int, bitmap64: bool):
    rng = random.Random(1000 + seed * 2 + bitmap64)
    expected = sorted(random_positions(rng, bitmap64))
    reference = DeletionVector.from_positions(np.array(expected, dtype=np.int64), bitmap64).serialize()

    shuffled = expected[:]
    rng.shuffle(shuffled)
    assert DeletionVector.from_positions(shuffled, bitmap64).serialize() == reference  # Python list
    assert DeletionVector.from_positions(iter(shuffled), bitmap64).serialize() == reference
    assert DeletionVector.from_positions(np.array(shuffled, dtype=np.uint64), bitmap64).serialize() == reference

    one_by_one = DeletionVector.empty(bitmap64)
    for p in shuffled[:3000]:
        one_by_one.delete(p)
    one_by_one.delete_all(np.array(shuffled[3000:], dtype=np.int64))
    assert one_by_one.serialize() == reference  # run-optimised whatever the insertion path


@pytest.mark.parametrize("bitmap64", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_merge_is_union(seed: int, bitmap64: bool):
    rng = random.Random(2000 + seed * 2 + bitmap64)
    a, b = random_positions(rng, bitmap64), random_positions(rng, bitmap64)
    dv = DeletionVector.from_positions(sorted(a), bitmap64)
    other = DeletionVector.from_positions(sorted(b), bitmap64)
    dv.merge(other)
    assert dv.positions().tolist() == sorted(a | b)
    assert other.positions().tolist() == sorted(b)  # the argument is not modified
    assert dv == DeletionVector.from_positions(sorted(a | b), bitmap64)


def test_positions_beyond_2_32():
    positions = [0, 2**32 - 1, 2**32, 2**32 + 5, 3 * 2**32 + 17, 2**40 + 1]
    dv = DeletionVector.from_positions(positions, bitmap64=True)
    assert dv.positions().tolist() == positions
    assert all(p in dv for p in positions)
    assert 2**32 + 1 not in dv
    frame = dv.serialize()
    count = struct.unpack_from("<q", frame, 8)[0]
    assert count == (2**40 + 1 >> 32) + 1  # dense key array 0..256
    assert DeletionVector.deserialize(frame).positions().tolist() == positions


# ---------------------------------------------------------------------------------------------
# Layouts


def test_empty_frames():
    empty32 = DeletionVector.empty().serialize()
    assert empty32[:8] == struct.pack(">i", 12) + MAGIC32 and empty32[8:16] == EMPTY_ROARING
    empty64 = DeletionVector.empty(bitmap64=True).serialize()
    assert empty64[:16] == struct.pack(">i", 12) + MAGIC64 + struct.pack("<q", 0)
    assert DeletionVector.empty(True).index_meta_length() == 20
    assert DeletionVector.empty(False).index_meta_length() == 12


def test_64bit_writer_is_dense_and_reader_accepts_sparse_keys():
    dv = DeletionVector.from_positions([3 << 32 | 9], bitmap64=True)
    frame = dv.serialize()
    data = frame[4:-4]
    assert data[:4] == MAGIC64 and struct.unpack_from("<q", data, 4)[0] == 4
    keys_and_empties = b"".join(struct.pack("<i", k) + EMPTY_ROARING for k in range(3))
    assert data[12 : 12 + len(keys_and_empties)] == keys_and_empties

    bm = BitMap([9])
    sparse_data = MAGIC64 + struct.pack("<q", 1) + struct.pack("<i", 3) + bm.serialize()
    sparse = struct.pack(">i", len(sparse_data)) + sparse_data + struct.pack(">I", zlib.crc32(sparse_data))
    back = DeletionVector.deserialize(sparse)
    assert back == dv and back.serialize() == frame


def test_sparse_key_near_the_maximum_does_not_allocate_per_key():
    bm = BitMap([0x80000000])
    data = MAGIC64 + struct.pack("<q", 1) + struct.pack("<i", 2**31 - 2) + bm.serialize()
    frame = struct.pack(">i", len(data)) + data + struct.pack(">I", zlib.crc32(data))
    dv = DeletionVector.deserialize(frame)
    assert dv.positions().tolist() == [MAX_POSITION_64]
    assert dv.is_deleted(MAX_POSITION_64)
    with pytest.raises(ValueError, match="2GB"):
        dv.serialize()  # Paimon would write 2^31-1 bitmaps; rejected before building anything


def test_32bit_positions_match_roaring_bitmap_bytes():
    positions = [0, 5, 6, 7, 70_000, MAX_POSITION_32]
    bm = BitMap(positions)
    bm.run_optimize()
    frame = DeletionVector.from_positions(positions).serialize()
    assert frame[4:8] == MAGIC32 and frame[8:-4] == bm.serialize()
    assert struct.unpack(">i", frame[:4])[0] == len(frame) - 8


def run_values(rng: random.Random) -> np.ndarray:
    """Ascending positions made of runs: lengths from 1 to 200,000, gaps from 1 value to a few
    containers, runs that end a few values into a container or start a few before one (the
    containers whose runs are no smaller than their values), and repeats."""
    runs, at = [], rng.randrange(1 << 20)
    for _ in range(rng.randint(1, 40)):
        length = rng.choice([1, 2, 3, 4, 5, rng.randint(6, 300), rng.randint(300, 70_000), rng.randint(70_000, 200_000)])
        runs.append(np.arange(at, at + length, dtype=np.int64))
        at += length + rng.choice([1, 2, 3, rng.randint(4, 200_000)])
        if rng.random() < 0.3:  # the next run starts a few values before or after a container's start
            at = max(at, ((at >> 16) + 1 << 16) + rng.randint(-4, 4))
    values = np.concatenate(runs)
    if rng.random() < 0.3:
        values = np.sort(np.concatenate([values, rng.choices(values.tolist(), k=50)]))
    return values[values <= MAX_POSITION_32]


@pytest.mark.parametrize("seed", range(40))
def test_bitmaps_built_from_runs_are_those_built_value_by_value(seed: int):
    """``bitmap_of`` adds runs whole (``add_range``) where it finds few; after ``run_optimize``
    its bitmap must be the one pyroaring builds from the values one by one, to the byte. Also
    given shuffled (no runs then), and through a DV (which drops repeats)."""
    rng = random.Random(seed)
    values = run_values(rng)
    expected = BitMap(roaring.uint32_array(values))
    distinct = bool((values[1:] > values[:-1]).all())
    for given, distinct_ascending in ((values, distinct), (values, False), (np.random.default_rng(seed).permutation(values), False)):
        built = roaring.bitmap_of(given, distinct_ascending)
        assert built == expected and serialize32(built) == serialize32(expected)
    assert DeletionVector.from_positions(values).serialize()[8:-4] == serialize32(expected)


def test_runs_are_added_whole_only_where_the_bytes_stay_the_same():
    """The paths of ``bitmap_of``: one run (seen from the ends), few runs, a container holding a
    run of 3 (its runs as large as its array: filled value by value), too many runs, no runs."""
    one = np.arange(70_000, 90_000)
    few = np.concatenate([np.arange(0, 10_000), np.arange(65_533, 65_536 + 3), np.arange(200_000, 230_000)])
    many = np.arange(0, 100_000, 2)
    assert roaring._runs(one, True) == [(70_000, 89_999)]
    assert roaring._runs(few, False) == [(0, 9_999), (65_533, 65_538), (200_000, 229_999)]
    assert roaring._unsafe_run_keys(roaring._runs(few, False)) == [1]  # 65,536..65,538: 3 values, one run
    assert roaring._runs(many, True) is None and roaring._runs(few[::-1].copy(), False) is None
    for values in (one, few, many):
        assert serialize32(roaring.bitmap_of(values)) == serialize32(BitMap(roaring.uint32_array(values)))
    # 300 positions over 0..299 with 150 missing and 5 twice: their ends span their count, no run
    holed = np.sort(np.concatenate([np.arange(0, 150), np.arange(151, 300), [5]]))
    dv = DeletionVector.from_positions(holed)
    assert 150 not in dv and dv.positions().tolist() == sorted(set(holed.tolist()))


@pytest.mark.parametrize("seed", range(4))
def test_go_bytes_of_array_containers_are_the_portable_format(seed: int):
    """serialize_go (zap's postings bitmaps) of bitmaps whose containers are all arrays: the
    portable format pyroaring writes without runs, whatever the keys. One value, a zap term of
    one hit, takes a path of its own; values given as a list and as a uint32 array."""
    rng = random.Random(seed)
    edges = [0, 1, 0xFFFF, 0x10000, 0x1FFFF, MAX_POSITION_32 - 1, MAX_POSITION_32, 2**32 - 1]
    cases = [[v] for v in edges] + [[rng.randrange(2**32)] for _ in range(300)]
    cases += [sorted(rng.sample(range(rng.choice([1 << 16, 1 << 20, 2**32])), rng.randint(2, 40))) for _ in range(200)]
    for values in cases:
        expected = BitMap(values).serialize()
        assert serialize_go(values) == expected == serialize_go(np.array(values, dtype=np.uint32)), values


# ---------------------------------------------------------------------------------------------
# The roaring reader under the DV


@pytest.mark.parametrize(
    "values", [[], [1], list(range(5000)), list(range(0, 10**6, 3)), [*range(100), 70_000, 2**32 - 1]]
)
def test_roaring_reader_consumes_exactly_one_bitmap(values: list[int]):
    bm = BitMap(values)
    payload = serialize32(bm)
    reader = ByteReader(payload + b"trailing")
    assert read_roaring32(reader) == bm and reader.pos == len(payload)


def _no_run_roaring(containers: list[tuple[int, list[int]]], offsets: list[int] | None = None) -> bytes:
    header = struct.pack("<II", 12346, len(containers))
    header += b"".join(struct.pack("<HH", key, len(values) - 1) for key, values in containers)
    body_start = len(header) + 4 * len(containers)
    sizes = [2 * len(values) for _, values in containers]
    offsets = offsets or [body_start + sum(sizes[:i]) for i in range(len(containers))]
    body = b"".join(struct.pack(f"<{len(values)}H", *values) for _, values in containers)
    return header + struct.pack(f"<{len(offsets)}I", *offsets) + body


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (struct.pack("<II", 12345, 0), "offset 0: roaring cookie 12346 or 12347"),
        (struct.pack("<II", 12346, 65537), "offset 4: at most 65536 roaring containers, found 65537"),
        (_no_run_roaring([(2, [1]), (1, [1])]), "offset 12: strictly ascending roaring container keys"),
        (_no_run_roaring([(1, [1]), (2, [1])], [24, 99]), "offset 20: offset 26 for roaring container 1, found 99"),
        (_no_run_roaring([(1, [5, 3])]), "offset 0: a valid roaring bitmap"),
        (_no_run_roaring([(1, [1, 2, 3])])[:-1], "offset 16: 6 bytes of roaring containers, found 5"),
        (struct.pack("<IBHH", 12347, 1, 0, 0), "offset 9: the run count of roaring container 0, found end of data"),
        (struct.pack("<IBHHHHH", 12347, 1, 0, 0, 2, 0, 0), "offset 9: 10 bytes of roaring containers, found 6"),
    ],
)
def test_roaring_reader_rejects_malformed_headers(payload: bytes, message: str):
    with pytest.raises(IndexFormatError, match=message):
        read_roaring32(ByteReader(payload))


def _random_roaring(rng: random.Random) -> bytes:
    """A portable bitmap of 0 to 9 containers of every kind: Paimon's run-optimised bytes (run
    cookie, with offsets from 4 containers on) or Go's (no-run cookie, or a full run)."""
    bm = BitMap()
    for key in rng.sample(range(12), rng.randint(0, 9)):
        chunk = key << 16
        shape = rng.choice(["run", "runs", "dense", "sparse", "full"])
        if shape == "run":
            start = rng.randrange(1 << 16)
            bm.add_range(chunk + start, chunk + min(1 << 16, start + rng.randint(1, 9000)))
        elif shape == "runs":
            for start in rng.sample(range(0, 1 << 16, 64), rng.randint(1, 40)):
                bm.add_range(chunk + start, chunk + start + rng.randint(1, 63))
        elif shape == "full":
            bm.add_range(chunk, chunk + (1 << 16))
        else:
            bm.update(chunk + rng.randrange(1 << 16) for _ in range(rng.choice([1, 2, 300, 4096, 6000])))
    return serialize32(bm) if rng.random() < 0.6 else serialize_go(np.frombuffer(bm.to_array(), np.uint32))


def _outcome(read) -> object:
    try:
        return read()
    except IndexFormatError as e:
        return str(e)


@pytest.mark.parametrize("seed", range(8))
def test_damaged_roaring_reads_as_the_checked_path_reads_it(seed: int):
    """The short path of read_roaring32_at (roaring._read_sound) accepts only what the
    field-by-field path (roaring._read_roaring32_checked) accepts, with the same values and end;
    so read_roaring32_at and read_roaring32_values_at give the checked path's result or error,
    whatever header or body byte was damaged and wherever the data was cut."""
    rng = random.Random(seed)
    accepted = 0
    for case in range(150):
        data = bytearray(_random_roaring(rng))
        sound = case % 5 == 0
        if not sound:
            for _ in range(rng.randint(1, 3)):  # mostly the header: cookie, run flags, keys, cardinalities, offsets
                at = rng.randrange(min(len(data), 80)) if rng.random() < 0.8 else rng.randrange(len(data))
                data[at] = rng.choice([rng.randrange(256), (data[at] + 1) % 256, (data[at] - 1) % 256])
        view = memoryview(bytes(data) + b"tail")
        end = len(data) if sound or rng.random() < 0.7 else rng.randrange(len(data) + 5)
        checked = _outcome(lambda: roaring._read_roaring32_checked(ByteReader(view, "r", 0, end), BitMap))
        fast = roaring._read_sound(view, 0, end, BitMap)
        if sound:
            assert fast is not None and isinstance(checked, tuple), seed
        if fast is not None:
            accepted += 1
            assert fast == checked
        assert _outcome(lambda: read_roaring32_at(view, 0, end, "r")) == checked
        values = read_roaring32_values_at(view, 0, end)
        if values is not None:
            assert values[0].dtype == np.uint32 and (BitMap(values[0]), values[1]) == checked
    assert accepted > 30  # the short path is exercised, not only the checked one


# ---------------------------------------------------------------------------------------------
# Argument checking


@pytest.mark.parametrize(
    ("bitmap64", "bad"),
    [(False, -1), (False, MAX_POSITION_32 + 1), (True, -1), (True, MAX_POSITION_64 + 1), (True, 2**63), (False, 2**64)],
)
def test_positions_out_of_range_are_rejected(bitmap64: bool, bad: int):
    dv = DeletionVector.empty(bitmap64)
    with pytest.raises(ValueError, match="outside the .* deletion vector range"):
        dv.delete(bad)
    with pytest.raises(ValueError, match="outside"):
        dv.is_deleted(bad)
    with pytest.raises(ValueError, match="outside"):
        DeletionVector.from_positions([1, bad, 2], bitmap64)
    if -(2**63) <= bad < 2**64:
        dtype = np.int64 if bad < 2**63 else np.uint64
        with pytest.raises(ValueError, match="outside"):
            DeletionVector.from_positions(np.array([1, bad], dtype=dtype), bitmap64)
    assert dv.cardinality == 0


def test_maximum_positions_are_accepted():
    assert MAX_POSITION_32 in DeletionVector.from_positions([MAX_POSITION_32])
    assert MAX_POSITION_64 == 0x7FFFFFFE_80000000
    assert MAX_POSITION_64 in DeletionVector.from_positions(np.array([MAX_POSITION_64], dtype=np.uint64), True)


def test_non_integer_positions_are_rejected():
    with pytest.raises(ValueError, match="integer array"):
        DeletionVector.from_positions(np.array([1.0, 2.0]))
    with pytest.raises(TypeError):
        DeletionVector.from_positions([1, 2.5])


def test_merge_needs_the_same_width():
    with pytest.raises(ValueError, match="same width"):
        DeletionVector.empty(False).merge(DeletionVector.empty(True))


def test_equality_and_repr():
    a = DeletionVector.from_positions([1, 2, 3])
    assert a == DeletionVector.from_positions([3, 2, 1])
    assert a != DeletionVector.from_positions([1, 2])
    assert a != DeletionVector.from_positions([1, 2, 3], bitmap64=True)
    assert DeletionVector.empty(True) == DeletionVector.deserialize(DeletionVector.from_positions([], True).serialize())
    assert repr(a) == "DeletionVector(bitmap64=False, cardinality=3)"


# ---------------------------------------------------------------------------------------------
# Reading: errors name the offset and what was expected


def test_crc_is_verified_by_default():
    frame = bytearray(DeletionVector.from_positions([1, 2, 3]).serialize())
    frame[-1] ^= 0xFF
    with pytest.raises(IndexFormatError, match=r"<bytes>: offset 30: DV CRC-32 0x[0-9a-f]{8} of the DV data"):
        DeletionVector.deserialize(bytes(frame))
    assert DeletionVector.deserialize(bytes(frame), verify_crc=False).cardinality == 3


def test_expected_length_is_the_manifest_length():
    frame32 = DeletionVector.from_positions([1]).serialize()
    frame64 = DeletionVector.from_positions([1], True).serialize()
    DeletionVector.deserialize(frame32, expected_length=len(frame32) - 8)
    DeletionVector.deserialize(frame64, expected_length=len(frame64))
    expected = "offset 0: a DV of length 30 as recorded in the index manifest, found 22"
    with pytest.raises(IndexFormatError, match=expected):
        DeletionVector.deserialize(frame32, expected_length=len(frame32))


def test_magic_and_trailing_data_are_checked():
    frame = DeletionVector.from_positions([1]).serialize()
    with pytest.raises(IndexFormatError, match="x.dv: offset 4: DV magic 5e43f2d0 .* or d1d33964 .*, found 00000000"):
        DeletionVector.deserialize(frame[:4] + bytes(4) + frame[8:], source="x.dv", verify_crc=False)
    data = frame[4:-4] + b"\0\0\0\0"
    padded = struct.pack(">i", len(data)) + data + struct.pack(">I", zlib.crc32(data))
    with pytest.raises(IndexFormatError, match="offset 26: the DV data to end after the bitmap, found 4 more bytes"):
        DeletionVector.deserialize(padded)


@pytest.mark.parametrize("seed", range(6))
def test_damaged_frames_read_as_the_checked_path_reads_them(seed):
    """The short path for sound 32-bit frames (dv._read_sound_frame32) accepts only what the
    field-by-field path (dv._read_frame) accepts, with the same positions, and raises only its
    error; any other frame, whatever byte was damaged (the CRC rewritten to match), raises the
    checked path's IndexFormatError."""
    rng = random.Random(seed)
    for _ in range(40):
        frame = bytearray(DeletionVector.from_positions(sorted(random_positions(rng, False))).serialize())
        for _ in range(rng.randint(0, 2)):
            frame[rng.randrange(4, len(frame) - 4)] = rng.randrange(256)
        if rng.random() < 0.8:
            struct.pack_into(">I", frame, len(frame) - 4, zlib.crc32(frame[4:-4]))
        expected_length = rng.choice([None, len(frame) - 8, len(frame) - 8, len(frame) - 7])
        try:
            checked = dv_module._read_frame(ByteReader(bytes(frame)), expected_length, True)
        except IndexFormatError as e:
            checked = str(e)
        try:
            fast = dv_module._read_sound_frame32(bytes(frame), "<bytes>", 0, expected_length, True)
        except IndexFormatError as e:  # the bitmap's error, raised as the checked path raises it
            fast = str(e)
        assert fast is None or fast == checked
        if isinstance(checked, str):
            with pytest.raises(IndexFormatError) as e:
                DeletionVector.deserialize(bytes(frame), expected_length=expected_length)
            assert str(e.value) == checked
        else:
            assert DeletionVector.deserialize(bytes(frame), expected_length=expected_length) == checked


def test_truncated_frame():
    frame = DeletionVector.from_positions(range(100)).serialize()
    with pytest.raises(IndexFormatError, match=r"offset 4: \d+ bytes of DV data \(magic \+ bitmap\), found 10"):
        DeletionVector.deserialize(frame[:14])


# ---------------------------------------------------------------------------------------------
# Deletion files


def _dvs(bitmap64: bool, n: int, seed: int = 7) -> dict[str, DeletionVector]:
    rng = random.Random(seed)
    return {
        f"data-{rng.getrandbits(64):016x}-{i}.parquet": DeletionVector.from_positions(
            sorted(random_positions(rng, bitmap64)), bitmap64
        )
        for i in range(n)
    }


def test_empty_inputs():
    assert encode_deletion_files({}) == [(b"\x01", [])]
    assert encode_deletion_files({}, target_size=100) == []


@pytest.mark.parametrize("bitmap64", [False, True])
def test_single_file_layout_and_reading_back(bitmap64: bool):
    dvs = _dvs(bitmap64, 6)
    [(content, ranges)] = encode_deletion_files(dvs)
    assert [r.data_file for r in ranges] == deletion_file_order(dvs)
    frames = [dvs[r.data_file].serialize() for r in ranges]
    assert content == b"\x01" + b"".join(frames)
    offsets = np.cumsum([1] + [len(f) for f in frames])[:-1].tolist()
    assert [r.offset for r in ranges] == offsets
    assert [r.length for r in ranges] == [len(f) if bitmap64 else len(f) - 8 for f in frames]
    assert [r.cardinality for r in ranges] == [dvs[r.data_file].cardinality for r in ranges]
    assert read_deletion_vectors(content, ranges) == dvs
    assert [(o, dv) for o, dv in scan_deletion_file(content)] == [(r.offset, dvs[r.data_file]) for r in ranges]


def test_given_order_and_duplicate_names():
    dvs = _dvs(False, 5)
    names = list(reversed(dvs))
    [(_, ranges)] = encode_deletion_files([(n, dvs[n]) for n in names], order="given")
    assert [r.data_file for r in ranges] == names
    with pytest.raises(ValueError, match="only one deletion vector"):
        encode_deletion_files([("a", DeletionVector()), ("a", DeletionVector())])
    with pytest.raises(ValueError, match="order"):
        encode_deletion_files(dvs, order="sorted")


def test_rolling_closes_a_file_after_the_frame_that_exceeds_the_target():
    dvs = _dvs(True, 12)
    [(whole, ranges)] = encode_deletion_files(dvs)
    ends = [r.offset + r.length for r in ranges]  # 64-bit: length is the whole frame
    target = ends[3]  # exactly reached after frame 4: not exceeded, so no roll there
    files = encode_deletion_files(dvs, target_size=target)
    first_names = [r.data_file for r in files[0][1]]
    assert first_names == [r.data_file for r in ranges[:5]]  # the 5th frame crosses the target
    assert [r.data_file for _, rs in files for r in rs] == [r.data_file for r in ranges]
    for content, file_ranges in files:
        assert content[0] == 1 and file_ranges[0].offset == 1
        assert read_deletion_vectors(content, file_ranges) == {r.data_file: dvs[r.data_file] for r in file_ranges}
    assert len(encode_deletion_files(dvs, target_size=0)) == 12
    assert len(encode_deletion_files(dvs, target_size=len(whole))) == 1


def test_write_deletion_files(tmp_path: Path):
    dvs = _dvs(False, 8)
    metas = write_deletion_files(tmp_path, dvs, target_size=2000)
    encoded = encode_deletion_files(dvs, target_size=2000)
    assert len(metas) == len(encoded) > 1
    prefix = metas[0].file_name.rsplit("-", 1)[0]
    for n, (meta, (content, ranges)) in enumerate(zip(metas, encoded)):
        assert meta == DeletionFileMeta(f"{prefix}-{n}", len(content), len(ranges), tuple(ranges))
        assert (tmp_path / meta.file_name).read_bytes() == content
        read_back = read_deletion_vectors(tmp_path / meta.file_name, meta.ranges)
        assert read_back == {r.data_file: dvs[r.data_file] for r in ranges}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(m.file_name for m in metas)


def test_write_deletion_files_leaves_nothing_on_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    calls = []

    def failing_write(path, data):
        calls.append(path)
        if len(calls) == 2:
            raise OSError("disk full")
        real_write(path, data)

    real_write = dv_module.write_atomically
    monkeypatch.setattr(dv_module, "write_atomically", failing_write)
    with pytest.raises(OSError, match="disk full"):
        write_deletion_files(tmp_path, _dvs(False, 8), target_size=2000, file_name=lambda n: f"f{n}")
    assert len(calls) == 2 and list(tmp_path.iterdir()) == []


def test_reader_checks_version_and_manifest(vectors_dir: Path):
    path = vectors_dir / "paimon/dv32/dvfile32_three_files.bin"
    case = json.loads(path.with_suffix(".json").read_text())
    ranges = [DeletionVectorRange(**r) for r in case["index_files"][0]["dv_ranges"]]
    assert len(read_deletion_vectors(path, ranges)) == 3
    data = path.read_bytes()
    with pytest.raises(IndexFormatError, match="offset 0: deletion file version 1, found 2"):
        read_deletion_vectors(b"\x02" + data[1:], ranges)
    with pytest.raises(IndexFormatError, match="deletion file version byte 1, found end of file"):
        scan_deletion_file(b"")
    wrong = DeletionVectorRange(ranges[0].data_file, ranges[0].offset, ranges[0].length, ranges[0].cardinality + 1)
    with pytest.raises(IndexFormatError, match=f"{path}: offset 1: a DV of 5001 positions as recorded"):
        read_deletion_vectors(path, [wrong])
    beyond = DeletionVectorRange("x", len(data) + 10, 22, None)
    with pytest.raises(IndexFormatError, match=f"offset {len(data) + 10}"):
        read_deletion_vectors(data, [beyond])


# ---------------------------------------------------------------------------------------------
# Deletion file order: Java HashMap order (spec App. B; the model is tested in test_javaorder.py)


def test_deletion_file_order_matches_vectors(vectors_dir: Path):
    for path in sorted((vectors_dir / "paimon").glob("dv*/dvfile*.json")):
        case = json.loads(path.read_text())
        if case["input_map"].startswith("java.util.HashMap"):
            assert deletion_file_order(case["data_files"]) == case["input_iteration_order"], path.name


def test_positions_as_arrow_int64():
    dv = DeletionVector.from_positions([7, 3, (1 << 40) + 1], bitmap64=True)
    arrow = dv.to_arrow()
    assert str(arrow.type) == "int64"
    assert arrow.to_pylist() == [3, 7, (1 << 40) + 1]
