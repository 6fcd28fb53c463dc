"""Go uvarints: minimal encodings, the 10-byte maximum, and rejection of overlong or truncated input."""

from __future__ import annotations

import pytest

from indexbridge.bytes import ByteReader, small_uvarint, uvarint_bytes
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
