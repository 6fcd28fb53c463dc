"""Z85 (ZeroMQ RFC 32) as Delta Lake uses it for deletion-vector descriptors.

Every 4 bytes (a big-endian u32) become 5 characters, most significant digit first, base 85
over the alphabet ``0-9 a-z A-Z .-:+=^!/*?&<>()[]{}@%$#``. Delta pads unaligned input with zero
bytes up to a multiple of 4 before encoding and cuts decoded output to the recorded size
(``Codec.Base85Codec.encodeBytes`` / ``decodeBytes``); a UUID (16 bytes, most significant half
first) is always 20 characters.

A module of its own rather than a dependency: the one well-kept Z85 implementation on PyPI is
pyzmq's (``zmq.utils.z85``), which would bring ZeroMQ's native library along for thirty lines;
and Delta's padding and its decoding to a recorded size are Delta's, not Z85's. Unlike Delta,
decoding rejects a group whose value exceeds 2^32 - 1 (Delta silently wraps it).
"""

from __future__ import annotations

import functools
import struct
import uuid

from indexbridge.errors import IndexFormatError

ALPHABET = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
ENCODED_UUID_LENGTH = 20
_DECODE = {c: i for i, c in enumerate(ALPHABET)}
_POWERS = (85**4, 85**3, 85**2, 85, 1)


def encode(data: bytes | bytearray | memoryview) -> str:
    """Z85 of ``data``, zero-padded to a multiple of 4 bytes first (as Delta does)."""
    data = bytes(data)
    if len(data) % 4:
        data += bytes(4 - len(data) % 4)
    out = bytearray()
    for (value,) in struct.iter_unpack(">I", data):
        for power in _POWERS:
            out.append(ALPHABET[value // power % 85])
    return out.decode("ascii")


def decode(text: str, size: int | None = None, *, source: str = "<z85>", offset: int = 0) -> bytes:
    """The bytes of a Z85 string; with ``size``, the first ``size`` bytes (Delta's padding
    dropped; the decoded length must cover ``size``). Errors name the character's index
    (plus ``offset``)."""
    if len(text) % 5:
        raise IndexFormatError(source, offset + len(text), f"a Z85 string of a multiple of 5 characters, found {len(text)}")
    out = bytearray()
    for start in range(0, len(text), 5):
        value = 0
        for i in range(start, start + 5):
            digit = _DECODE.get(ord(text[i]) if ord(text[i]) < 128 else -1)
            if digit is None:
                raise IndexFormatError(source, offset + i, f"a Z85 character, found {text[i]!r}")
            value = value * 85 + digit
        if value > 0xFFFFFFFF:
            raise IndexFormatError(source, offset + start, f"a Z85 group of at most 2^32-1, found {text[start:start + 5]!r} = {value}")
        out += struct.pack(">I", value)
    if size is not None:
        if not 0 <= size <= len(out) or len(out) - size >= 4:
            raise IndexFormatError(source, offset, f"Z85 data of {size} bytes (padded to {(size + 3) // 4 * 4}), found {len(out)} bytes")
        del out[size:]
    return bytes(out)


@functools.lru_cache(maxsize=4096)  # every DV of a file names the same UUID
def encode_uuid(value: uuid.UUID) -> str:
    """The 20 characters of a UUID (its 16 bytes, most significant half first)."""
    return encode(value.bytes)


def decode_uuid(text: str, *, source: str = "<z85>", offset: int = 0) -> uuid.UUID:
    if len(text) != ENCODED_UUID_LENGTH:
        raise IndexFormatError(source, offset, f"a Z85 UUID of {ENCODED_UUID_LENGTH} characters, found {len(text)}")
    return uuid.UUID(bytes=decode(text, source=source, offset=offset))
