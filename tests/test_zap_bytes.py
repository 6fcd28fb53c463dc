"""Go uvarints: minimal encodings, the 10-byte maximum, and rejection of overlong or truncated
input, one at a time (ByteReader) and many at once (uvarints_at, uvarints); byte ranges gathered
at once."""

from __future__ import annotations

import random

import numpy as np
import pytest

from indexbridge.bytes import ByteReader, small_uvarint, take_ranges, uvarint_bytes, uvarints, uvarints_at
from indexbridge.errors import IndexFormatError


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 16383, 16384, 2**32 - 1, 2**63, 2**64 - 1])
def test_uvarint_round_trip(value: int) -> None:
    encoded = uvarint_bytes(value)
    assert small_uvarint(value) == encoded
    assert len(encoded) == max(1, (value.bit_length() + 6) // 7)
    reader = ByteReader(encoded)
    assert reader.uvarint() == value and reader.remaining == 0


def test_uvarint_known_bytes() -> None:
    assert uvarint_bytes(0x3F800000) == bytes.fromhex("808080fc03")  # norm 1.0 (spec §1)
    assert uvarint_bytes(2**64 - 1) == bytes.fromhex("ffffffffffffffffff01")


@pytest.mark.parametrize("data", [b"", b"\x80", b"\xff" * 9 + b"\x02", b"\xff" * 10 + b"\x01"])
def test_bad_uvarints_raise(data: bytes) -> None:
    with pytest.raises(IndexFormatError):
        ByteReader(data).uvarint()


def _uvarint_soup(rng: random.Random) -> bytes:
    """Bytes where uvarints of every length start and break off: encodings of random sizes,
    runs of continuation bytes, tenth bytes over 1, cut anywhere."""
    parts = []
    for _ in range(rng.randint(1, 12)):
        kind = rng.randrange(4)
        if kind == 0:
            parts.append(uvarint_bytes(rng.getrandbits(rng.choice((3, 7, 8, 14, 15, 28, 35, 63, 64)))))
        elif kind == 1:
            parts.append(b"\x80" * rng.randint(1, 12))
        elif kind == 2:
            parts.append(b"\xff" * 9 + bytes((rng.choice((0, 1, 2, 0x7F, 0x81)),)))
        else:
            parts.append(bytes(rng.randrange(256) for _ in range(rng.randint(1, 6))))
    return b"".join(parts)


def test_uvarints_at_read_as_the_reader_does() -> None:
    """At every start offset, within a random end: the value and end the reader gives, or not ok
    where the reader raises (past the end, over 64 bits, too long)."""
    rng = random.Random(20261128)
    for _ in range(400):
        data = _uvarint_soup(rng)
        end = rng.randint(1, len(data))
        pos = np.array(range(len(data) + 2), dtype=np.int64)
        values, after, ok = uvarints_at(np.frombuffer(data, dtype=np.uint8), pos, end)
        for p in range(len(data) + 2):
            reader = ByteReader(data, "<soup>", min(p, end), end)
            try:
                expected = (reader.uvarint(), reader.pos) if p < end else None
            except IndexFormatError:
                expected = None
            got = (int(values[p]), int(after[p])) if ok[p] else None
            assert got == expected, (data.hex(), end, p)


def test_uvarints_at_once_are_each_ones_bytes() -> None:
    """Values of every length, 0 and 2^64 - 1 among them, encoded at once: the concatenation of
    each one's encoding and their sizes; none at all, nothing."""
    rng = random.Random(20261129)
    for _ in range(200):
        values = [rng.choice((0, 1, 2**64 - 1, rng.getrandbits(rng.randint(1, 64)))) for _ in range(rng.randint(0, 40))]
        data, sizes = uvarints(np.array(values, dtype=np.uint64))
        assert data.dtype == np.uint8 and data.tobytes() == b"".join(map(uvarint_bytes, values))
        assert sizes.tolist() == [len(uvarint_bytes(v)) for v in values]


def test_take_ranges_are_the_slices() -> None:
    rng = random.Random(7)
    for _ in range(200):
        data = bytes(rng.randrange(256) for _ in range(rng.randint(1, 300)))
        starts = np.array([rng.randrange(len(data)) for _ in range(rng.randint(0, 30))], dtype=np.int64)
        stops = np.array([rng.randint(s, len(data)) for s in starts.tolist()], dtype=np.int64)
        got = take_ranges(np.frombuffer(data, dtype=np.uint8), starts, stops)
        assert got == [data[a:b] for a, b in zip(starts.tolist(), stops.tolist())]
        assert all(type(g) is bytes for g in got)
