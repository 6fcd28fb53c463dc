"""Snappy: round trips, Go's encoder bytes (golang/snappy v0.0.1 through integration/zapgo) on
generated inputs and on every snappy block of the zap vectors, bad blocks."""

from __future__ import annotations

import random
import struct
import subprocess
from pathlib import Path

import pytest

from indexbridge.bytes import ByteReader
from indexbridge.errors import IndexFormatError
from indexbridge.zap import snappy, stored
from indexbridge.zap.corpus import zapgo
from indexbridge.zap.segment import Segment


def _inputs(rng: random.Random) -> list[bytes]:
    out = [b"", b"a", b"x" * 16, b"x" * 17, b"abcd" * 5000, bytes(range(256)) * 600]
    for _ in range(40):
        n = rng.choice([20, 100, 1000, 70000, 140000])
        kind = rng.randrange(3)
        if kind == 0:
            out.append(rng.randbytes(n))
        elif kind == 1:
            out.append(bytes(rng.choice(b"ab ") for _ in range(n)))
        else:
            words = [rng.randbytes(rng.randrange(1, 12)) for _ in range(20)]
            out.append(b"".join(rng.choice(words) for _ in range(n // 6)))
    return out


def test_round_trip() -> None:
    for data in _inputs(random.Random(3)):
        assert snappy.decode(snappy.encode(data)) == data


def _go_encode(inputs: list[bytes], tmp_path: Path) -> list[bytes]:
    """Go's ``snappy.Encode`` of each input (``zapgo snappy``: records of u32 LE length + bytes)."""
    records, encoded = tmp_path / "in", tmp_path / "out"
    records.write_bytes(b"".join(struct.pack("<I", len(data)) + data for data in inputs))
    subprocess.run([str(zapgo()), "snappy", str(records), str(encoded)], check=True, capture_output=True)
    out, data, pos = [], encoded.read_bytes(), 0
    while pos < len(data):
        (n,) = struct.unpack_from("<I", data, pos)
        out.append(data[pos + 4 : pos + 4 + n])
        pos += 4 + n
    return out


def test_go_encoder_bytes_on_generated_inputs(tmp_path: Path) -> None:
    """Sizes around the literal-only limit (17) and the 64 KiB block, random, few-letter,
    word-like and self-repeating data (long and far copies)."""
    rng = random.Random(11)
    inputs = _inputs(rng) + [b"x" * n for n in (15, 16, 17, 18, 70)]
    for n in (65535, 65536, 65537, 2 * 65536 + 16, 2 * 65536 + 17):
        inputs += [rng.randbytes(n), bytes(rng.choice(b"ab ") for _ in range(n))]
    for _ in range(300):
        part = rng.randbytes(rng.randrange(1, 5000))
        inputs.append((part + rng.randbytes(rng.randrange(50))) * rng.randrange(1, 4))
    go = _go_encode(inputs, tmp_path)
    assert len(go) == len(inputs)
    for data, block in zip(inputs, go):
        assert snappy.encode(data) == block, len(data)
        assert snappy.encode(memoryview(bytearray(data))) == block


def test_emit_copy_lengths_and_offsets() -> None:
    """Long runs (copy lengths >= 68, 65..67) and offsets beyond 2048 take the copy2 forms."""
    for n in (68, 65, 66, 67, 130, 5000):
        data = b"q" + b"z" * n + b"0123456789abcdefgh"
        assert snappy.decode(snappy.encode(data)) == data
    far = random.Random(1).randbytes(3000)
    assert snappy.decode(snappy.encode(far + far)) == far + far


def _stored_blocks(segment: Segment) -> list[tuple[bytes, bytes]]:
    """(uncompressed, on-disk block) of every stored record."""
    blocks = []
    for doc in range(segment.num_docs):
        reader = segment.record_reader(doc)
        meta_start, data_start, end = stored.record_extent(reader)
        id_len = ByteReader(segment.data, segment.source, meta_start, data_start).uvarint()
        block = bytes(segment.data[data_start + id_len : end])
        blocks.append((snappy.decode(block), block))
    return blocks


def _docvalue_blocks(segment: Segment) -> list[tuple[bytes, bytes]]:
    """(uncompressed, on-disk block) of every non-empty docvalue chunk record."""
    blocks = []
    for info in segment.fields:
        section = segment.docvalue_section(info.id)
        if section is None:
            continue
        for c, end in enumerate(section.chunk_ends):
            begin = section.start + (section.chunk_ends[c - 1] if c else 0)
            if begin == section.start + end:
                continue
            reader = ByteReader(segment.data, segment.source, begin, section.start + end)
            for _ in range(2 * reader.uvarint()):  # k × (docNum, end)
                reader.uvarint()
            block = bytes(segment.data[reader.pos : section.start + end])
            blocks.append((snappy.decode(block), block))
    return blocks


def test_go_encoder_bytes_on_vector_blocks(vectors_dir: Path, zap_segment_name: str) -> None:
    with Segment.open(vectors_dir / "zap" / f"{zap_segment_name}.zap") as segment:
        step = max(1, segment.num_docs // 3000)  # the 65541-doc vector: a sample of its records
        blocks = _stored_blocks(segment)[::step] + _docvalue_blocks(segment)
        assert blocks or segment.num_docs == 0
        for data, block in blocks:
            assert snappy.encode(data) == block


@pytest.mark.parametrize(
    "block",
    [b"", b"\x05", b"\x05\x10abc", b"\xff\xff\xff\xff\x0f\x00", b"\x04\x01\x00\x00", b"\x0a\x0dab" + b"\x00" * 8],
)
def test_bad_blocks_raise_the_library_error(block: bytes) -> None:
    with pytest.raises(IndexFormatError):
        snappy.decode(block)
