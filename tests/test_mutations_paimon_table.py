"""Malformed dv32 / dv64 / hash files: decode or raise IndexFormatError, nothing else.

Every vector binary is mutated field by field (each byte flipped, each integer field set to
extreme values, truncated at every field boundary and at sampled lengths). Each decoder must
either succeed or raise ``IndexFormatError``: no other exception, no hang (the ``cpu_deadline``
fixture fails the test), and no allocation beyond what the input justifies (``tracemalloc`` peak, which sees
Python and numpy allocations; pyroaring only ever receives header-validated slices). The default
run takes a quarter of the flips and of the extreme values, a different quarter each day, and
every truncation (``depth.py``).
"""

from __future__ import annotations

import json
import random
import struct
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import depth
import pytest

from indexbridge.errors import IndexFormatError
from indexbridge.paimon.bucket import decode_hash_index
from indexbridge.paimon.dv import DeletionVector, DeletionVectorRange, read_deletion_vectors, scan_deletion_file

SMALL_FILE = 1024  # every byte of a file up to this size is flipped
PAYLOAD_SAMPLES = 128  # sampled other bytes of bigger files
ALL_FIELDS = 64  # files with more header fields get the first and last ones plus a sample
FIELD_SAMPLES = 48
TRUNCATION_SAMPLES = 48
MUTANT_SHARE = 0.25  # of the flips and of the extreme values in the default run, the day's draw (all: INDEXBRIDGE_DEEP=1)


@dataclass(frozen=True)
class Field:
    start: int
    width: int
    fmt: str  # struct format of the field, for the extreme-value mutations


def _roaring_fields(data: bytes, start: int) -> tuple[list[Field], int]:
    """The header fields of the portable roaring bitmap at ``start`` and its end (walked here,
    independently of the codec)."""
    fields = [Field(start, 4, "<I")]
    (cookie,) = struct.unpack_from("<I", data, start)
    pos = start + 4
    if cookie & 0xFFFF == 12347:
        n = (cookie >> 16) + 1
        fields.append(Field(pos, (n + 7) // 8, f"{(n + 7) // 8}s"))
        runs = [bool(data[pos + i // 8] >> (i % 8) & 1) for i in range(n)]
        pos += (n + 7) // 8
        has_offsets = n >= 4
    else:
        (n,) = struct.unpack_from("<I", data, pos)
        fields.append(Field(pos, 4, "<I"))
        pos += 4
        runs = [False] * n
        has_offsets = True
    cards = []
    for i in range(n):
        fields += [Field(pos, 2, "<H"), Field(pos + 2, 2, "<H")]
        cards.append(struct.unpack_from("<H", data, pos + 2)[0] + 1)
        pos += 4
    if has_offsets:
        fields += [Field(pos + 4 * i, 4, "<I") for i in range(n)]
        pos += 4 * n
    for i in range(n):
        if runs[i]:
            fields.append(Field(pos, 2, "<H"))
            pos += 2 + 4 * struct.unpack_from("<H", data, pos)[0]
        else:
            pos += 8192 if cards[i] > 4096 else 2 * cards[i]
    return fields, pos


def _frame_fields(data: bytes, start: int) -> tuple[list[Field], int]:
    """The fields of the DV frame at ``start`` and its end."""
    (size,) = struct.unpack_from(">i", data, start)
    fields = [Field(start, 4, ">i"), Field(start + 4, 4, ">i")]
    pos = start + 8
    if data[start + 4 : start + 8] == bytes.fromhex("d1d33964"):
        (count,) = struct.unpack_from("<q", data, pos)
        fields.append(Field(pos, 8, "<q"))
        pos += 8
        for _ in range(count):
            fields.append(Field(pos, 4, "<i"))
            bitmap_fields, pos = _roaring_fields(data, pos + 4)
            fields += bitmap_fields
    else:
        bitmap_fields, pos = _roaring_fields(data, pos)
        fields += bitmap_fields
    assert pos == start + 4 + size
    fields.append(Field(pos, 4, ">I"))
    return fields, pos + 4


def _extremes(fmt: str, value: bytes) -> list[bytes]:
    if fmt.endswith("s"):
        return [b"\xff" * len(value), bytes(len(value))]
    size = struct.calcsize(fmt)
    bits = 8 * size
    unsigned = fmt.lstrip("<>")[0] in "BHIQ"
    low, high = (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    (current,) = struct.unpack(fmt, value)
    candidates = {low, high, 0, 1, 2**31 - 1, 2**31, 2**16, 2**16 - 1, current - 1, current + 1, current * 2 + 8}
    return [struct.pack(fmt, v) for v in sorted(candidates) if low <= v <= high]


def _selected_fields(fields: list[Field], rng: random.Random) -> list[Field]:
    """All fields, or for long headers the first 16 (frame, count, first bitmap), the CRC and a sample."""
    if len(fields) <= ALL_FIELDS:
        return fields
    return fields[:16] + rng.sample(fields[16:-1], FIELD_SAMPLES) + fields[-1:]


def _flips_and_truncations(name: str, data: bytes, fields: list[Field], rng: random.Random) -> Iterator[bytes]:
    in_fields = {i for f in fields for i in range(f.start, f.start + f.width)}
    if len(data) <= SMALL_FILE:
        flips = range(len(data))
    else:
        flips = sorted(in_fields | set(rng.sample(range(len(data)), PAYLOAD_SAMPLES)))
    for i in depth.sample(flips, MUTANT_SHARE, f"{name}/flips"):
        for mask in (0xFF, 0x01):
            yield data[:i] + bytes([data[i] ^ mask]) + data[i + 1 :]
    cuts = {0, 1, len(data) - 1} | {f.start for f in fields} | {f.start + f.width for f in fields}
    cuts |= set(rng.sample(range(len(data) + 1), min(TRUNCATION_SAMPLES, len(data) + 1)))
    for n in sorted(c for c in cuts if 0 <= c < len(data)):
        yield data[:n]


def _extreme_values(data: bytes, fields: list[Field]) -> list[tuple[Field, bytes]]:
    """Each field with the values to set it to: 0, 1, its neighbours, 2^16, 2^31 and the limits of its type."""
    return [(f, replacement) for f in fields for replacement in _extremes(f.fmt, data[f.start : f.start + f.width])]


def _decoders(case: dict, case_dir: Path) -> list[tuple[str, list[Field], list[Callable[[bytes], object]]]]:
    """(binary name, its fields, decoders) for every binary of a case. The last decoder skips
    the CRC, so that mutated payloads reach the parsers."""
    if case["format"] == "hash":
        return [(case["bin"], [], [decode_hash_index])]
    if case.get("kind") != "deletion_file":
        data = (case_dir / case["bin"]).read_bytes()
        fields, _ = _frame_fields(data, 0)
        decoders = [DeletionVector.deserialize, lambda d: DeletionVector.deserialize(d, verify_crc=False)]
        return [(case["bin"], fields, decoders)]
    result = []
    for index_file in case["index_files"]:
        data = (case_dir / index_file["bin"]).read_bytes()
        fields, pos = [Field(0, 1, "B")], 1
        while pos < len(data):
            frame_fields, pos = _frame_fields(data, pos)
            fields += frame_fields
        ranges = [DeletionVectorRange(**r) for r in index_file["dv_ranges"]]
        decoders = [
            lambda d, r=ranges: read_deletion_vectors(d, r),
            lambda d: scan_deletion_file(d, verify_crc=False),
            lambda d, r=ranges: read_deletion_vectors(d, r, verify_crc=False),
        ]
        result.append((index_file["bin"], fields, decoders))
    return result


def _decode(decode: Callable[[bytes], object], data: bytes) -> bool:
    """Whether ``data`` decoded; any exception other than IndexFormatError fails the test."""
    try:
        decode(data)
        return True
    except IndexFormatError:
        return False


def test_mutated_inputs(vectors_dir: Path, paimon_table_case: dict, cpu_deadline: None):
    case_dir = vectors_dir / "paimon" / Path(paimon_table_case["json"]).parent
    case = json.loads((vectors_dir / "paimon" / paimon_table_case["json"]).read_text())
    rng = random.Random(paimon_table_case["case"])
    for name, all_fields, decoders in _decoders(case, case_dir):
        original = (case_dir / name).read_bytes()
        fields = _selected_fields(all_fields, rng)
        rejected = 0
        for mutated in _flips_and_truncations(name, original, fields, rng):
            rejected += sum(not _decode(decode, mutated) for decode in decoders)
        assert rejected > 0 or case["format"] == "hash", name

        # inflated lengths and counts, with the CRC check off so they reach the parsers
        _assert_bounded_allocation(name, original, fields, decoders[-1])


def _assert_bounded_allocation(name: str, original: bytes, fields: list[Field], decode: Callable[[bytes], object]) -> None:
    """Decoding ``original`` with each field set to extreme values allocates at most 64 bytes
    per input byte (+ 1 MiB)."""
    budget = (1 << 20) + 64 * len(original)
    changes = depth.sample(_extreme_values(original, fields), MUTANT_SHARE, f"{name}/extremes")
    tracemalloc.start()
    try:
        for f, replacement in changes:
            mutated = original[: f.start] + replacement + original[f.start + f.width :]
            tracemalloc.reset_peak()
            _decode(decode, mutated)
            peak = tracemalloc.get_traced_memory()[1]
            assert peak < budget, f"{name}: decoding a {len(mutated)}-byte input allocated {peak} bytes"
    finally:
        tracemalloc.stop()


def test_huge_counts_are_rejected_before_allocating():
    """Length and count fields claiming gigabytes fail at the field, from a few dozen bytes."""
    magic32, magic64 = bytes.fromhex("5e43f2d0"), bytes.fromhex("d1d33964")
    cases = {  # frame without its CRC -> offset of the error
        struct.pack(">i", 2**31 - 1) + magic32 + bytes(8): 4,  # DATA would start here
        struct.pack(">i", 12) + magic32 + struct.pack("<II", 12346, 2**31): 12,  # container count
        struct.pack(">i", 12) + magic32 + struct.pack("<I", 12347 | 0xFFFF << 16) + bytes(4): 12,  # run flags
        struct.pack(">i", 12) + magic64 + struct.pack("<q", 2**31 - 1): 8,  # bitmap count
        struct.pack(">i", 12) + magic64 + struct.pack("<q", -1): 8,
    }
    tracemalloc.start()
    try:
        for frame, offset in cases.items():
            tracemalloc.reset_peak()
            with pytest.raises(IndexFormatError) as error:
                DeletionVector.deserialize(frame + bytes(4), verify_crc=False)
            assert tracemalloc.get_traced_memory()[1] < 1 << 20
            assert error.value.offset == offset, str(error.value)
    finally:
        tracemalloc.stop()
    huge_range = DeletionVectorRange("f", 1, 2**31 - 1, None)
    with pytest.raises(IndexFormatError):
        read_deletion_vectors(b"\x01" + struct.pack(">i", 2**31 - 1) + bytes(8), [huge_range])
