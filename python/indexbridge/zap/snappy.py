"""Snappy *block* format as zap writes it: golang/snappy v0.0.1's encoder (spec/zap.md §12).

::

    uvarint  uncompressed length
    element* each starts with a tag byte; tag & 3 is the kind:
      00 literal   len-1 = tag>>2 (< 60), or in the next 1..4 LE bytes (tag>>2 = 60..63); bytes follow
      01 copy1     len = 4 + (tag>>2 & 7), offset = (tag>>5) << 8 | next byte
      10 copy2     len = 1 + (tag>>2),     offset = u16 LE
      11 copy4     len = 1 + (tag>>2),     offset = u32 LE   (decoded, never written by Go)

Both ways go through cramjam (the Rust ``snap`` crate). The bytes of a compressed block depend
on the encoder's hash table and skip heuristics, and zap's bytes are those of Go's
``encodeBlock``; snap's block encoder is a port of Go's (same table sizes, hash, skipping and
copy emission), and tests/test_zap_snappy.py holds it to Go's ``snappy.Encode`` on generated
inputs and to every block of the zap vectors. Other encoders (the C++ one in particular) choose
different copies. Decoding errors become :class:`~indexbridge.errors.IndexFormatError`.
"""

from __future__ import annotations

import cramjam

from indexbridge.bytes import ByteReader
from indexbridge.errors import IndexFormatError

# A 3-byte copy2 element yields at most 64 bytes: no valid block expands more than this.
MAX_EXPANSION = 64 // 3 + 1


def encode(src: bytes | bytearray | memoryview) -> bytes:
    """Go's ``snappy.Encode(nil, src)``: the same bytes, block by block of at most 64 KiB."""
    return bytes(cramjam.snappy.compress_raw(src))


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
