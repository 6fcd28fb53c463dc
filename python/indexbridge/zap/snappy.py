"""Snappy *block* format as zap writes it: golang/snappy v0.0.1's encoder (spec/zap.md §12).

::

    uvarint  uncompressed length
    element* each starts with a tag byte; tag & 3 is the kind:
      00 literal   len-1 = tag>>2 (< 60), or in the next 1..4 LE bytes (tag>>2 = 60..63); bytes follow
      01 copy1     len = 4 + (tag>>2 & 7), offset = (tag>>5) << 8 | next byte
      10 copy2     len = 1 + (tag>>2),     offset = u16 LE
      11 copy4     len = 1 + (tag>>2),     offset = u32 LE   (decoded, never written by Go)

Decoding goes through cramjam (the Rust ``snap`` crate); its errors become
:class:`~indexbridge.errors.IndexFormatError`. Encoding is hand-written: the bytes of a
compressed block depend on the encoder's hash table and skip heuristics, and zap's bytes are
those of Go's ``encodeBlock``. Other encoders (the C++ one in particular) choose different copies.
"""

from __future__ import annotations

import struct

import cramjam

from indexbridge.bytes import ByteReader, put_uvarint
from indexbridge.errors import IndexFormatError

MAX_BLOCK_SIZE = 65536
INPUT_MARGIN = 15
MIN_NON_LITERAL_BLOCK_SIZE = 1 + 1 + INPUT_MARGIN
MAX_TABLE_SIZE = 1 << 14
# A 3-byte copy2 element yields at most 64 bytes: no valid block expands more than this.
MAX_EXPANSION = 64 // 3 + 1

_U32_LE = struct.Struct("<I")
_U64_LE = struct.Struct("<Q")


def _emit_literal(out: bytearray, lit: bytes | memoryview) -> None:
    m = len(lit) - 1
    if m < 60:
        out.append(m << 2)
    elif m < 256:
        out += bytes((0xF0, m))
    else:
        out += bytes((0xF4, m & 0xFF, m >> 8))
    out += lit


def _emit_copy(out: bytearray, offset: int, length: int) -> None:
    lo, hi = offset & 0xFF, offset >> 8
    while length >= 68:
        out += bytes((0xFE, lo, hi))
        length -= 64
    if length > 64:
        out += bytes((0xEE, lo, hi))
        length -= 60
    if length >= 12 or offset >= 2048:
        out += bytes(((length - 1) << 2 | 2, lo, hi))
    else:
        out += bytes((hi << 5 | (length - 4) << 2 | 1, lo))


def _encode_block(out: bytearray, src: bytes) -> None:
    """Go's ``encodeBlock`` for one block of 17..65536 bytes, step for step."""
    n = len(src)
    table_size, shift = 256, 24
    while table_size < MAX_TABLE_SIZE and table_size < n:
        table_size *= 2
        shift -= 1
    table = [0] * table_size  # hashes are < 2^(32 - shift) = table_size: Go's larger table is never touched beyond
    load32 = _U32_LE.unpack_from
    load64 = _U64_LE.unpack_from
    s_limit = n - INPUT_MARGIN
    next_emit = 0
    s = 1
    next_hash = ((load32(src, s)[0] * 0x1E35A7BD) & 0xFFFFFFFF) >> shift
    while True:
        skip = 32
        next_s = s
        while True:
            s = next_s
            step = skip >> 5
            next_s = s + step
            skip += step
            if next_s > s_limit:
                if next_emit < n:
                    _emit_literal(out, src[next_emit:])
                return
            candidate = table[next_hash]
            table[next_hash] = s
            next_hash = ((load32(src, next_s)[0] * 0x1E35A7BD) & 0xFFFFFFFF) >> shift
            if src[s : s + 4] == src[candidate : candidate + 4]:
                break
        _emit_literal(out, src[next_emit:s])
        while True:
            base = s
            s += 4
            i = candidate + 4
            while s < n and src[i] == src[s]:
                i += 1
                s += 1
            _emit_copy(out, base - candidate, s - base)
            next_emit = s
            if s >= s_limit:
                if next_emit < n:
                    _emit_literal(out, src[next_emit:])
                return
            x = load64(src, s - 1)[0]
            table[((x & 0xFFFFFFFF) * 0x1E35A7BD & 0xFFFFFFFF) >> shift] = s - 1
            curr = (x >> 8) & 0xFFFFFFFF
            curr_hash = (curr * 0x1E35A7BD & 0xFFFFFFFF) >> shift
            candidate = table[curr_hash]
            table[curr_hash] = s
            if curr != load32(src, candidate)[0]:
                next_hash = (((x >> 16) & 0xFFFFFFFF) * 0x1E35A7BD & 0xFFFFFFFF) >> shift
                s += 1
                break


def encode(src: bytes | bytearray | memoryview) -> bytes:
    """Go's ``snappy.Encode(nil, src)``: the same bytes, block by block of at most 64 KiB."""
    if not src:
        return b"\x00"
    src = bytes(src)
    out = bytearray()
    put_uvarint(out, len(src))
    for start in range(0, len(src), MAX_BLOCK_SIZE):
        block = src[start : start + MAX_BLOCK_SIZE]
        if len(block) < MIN_NON_LITERAL_BLOCK_SIZE:
            _emit_literal(out, block)
        else:
            _encode_block(out, block)
    return bytes(out)


def decode(block: bytes | bytearray | memoryview, source: str = "<bytes>", offset: int = 0) -> bytes:
    """The uncompressed bytes of one snappy block that sits at ``offset`` of ``source``.

    The declared length is checked against what the block's size can possibly expand to before
    anything is allocated.
    """
    reader = ByteReader(block, source)
    length = reader.uvarint("snappy uncompressed length")
    if length > MAX_EXPANSION * len(block):
        raise IndexFormatError(
            source, offset, f"a snappy block of {len(block)} bytes declaring at most "
            f"{MAX_EXPANSION * len(block)} uncompressed bytes, found {length}"
        )
    try:
        data = bytes(cramjam.snappy.decompress_raw(bytes(block)))
    except Exception as e:  # cramjam raises its own DecompressionError
        raise IndexFormatError(source, offset, f"a valid snappy block ({e})") from None
    if len(data) != length:
        raise IndexFormatError(source, offset, f"a snappy block of {length} bytes, decoded {len(data)}")
    return data
