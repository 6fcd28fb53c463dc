"""Puffin files and Iceberg v3 deletion vectors (indexbridge.iceberg.puffin): seeded DVs written
as Iceberg writes them and read back by us and by pyiceberg 0.12 (a peer that checks neither
magic nor CRC), the footer's bytes, any valid Puffin (compressed footers, LZ4/zstd blobs,
unknown blob types), and damaged files failing with IndexFormatError naming file and offset.
Iceberg's own Java reader and writer are the references of the Scala specs
(jvm/src/test/scala/io/indexbridge/iceberg) and integration/test_spark_lakehouse.py."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from indexbridge.errors import IndexFormatError
from indexbridge.iceberg import puffin
from indexbridge.paimon.dv import DeletionVector
from lakehouse_generated import positions

SEEDS = range(40)


def _dvs(seed: int) -> dict[str, DeletionVector]:
    rng = np.random.default_rng(seed + 1000)
    # never empty: Iceberg writes no blob for a file without deletes (and pyiceberg cannot read one)
    return {f"file:/warehouse/db/t/data/{seed}-{i}.parquet": DeletionVector.from_positions(positions(seed * 31 + i) if seed % 7 else [seed + i], bitmap64=True)
            for i in range(int(rng.integers(1, 5)))}  # fmt: skip


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_dvs_round_trip_and_pyiceberg_reads_them(seed, tmp_path):
    from pyiceberg.table.deletion_vector import deletion_vectors_from_puffin_file
    from pyiceberg.table.puffin import PuffinFile

    dvs = _dvs(seed)
    files = puffin.write_deletion_vector_puffin(tmp_path / "dv.puffin", puffin.dv_frames(dvs))
    data = (tmp_path / "dv.puffin").read_bytes()
    assert [f.referenced_data_file for f in files] == puffin.blob_order(puffin.dv_frames(dvs))
    for f in files:
        assert f.file_size_in_bytes == len(data) and f.file_path == str(tmp_path / "dv.puffin")
        # the blob is Paimon's 64-bit frame, byte for byte, at the manifest's offset and size
        assert data[f.content_offset:f.content_offset + f.content_size_in_bytes] == dvs[f.referenced_data_file].serialize()
        assert f.record_count == dvs[f.referenced_data_file].cardinality
        dv = puffin.read_deletion_vector(data, f.content_offset, f.content_size_in_bytes, cardinality=f.record_count)
        assert dv == dvs[f.referenced_data_file]
    ours = {b.properties["referenced-data-file"]: dv for b, dv in puffin.read_deletion_vectors(data)}
    assert ours == dvs
    # pyiceberg's bitmaps per 32-bit key (its to_vector() fails when a key's bitmap is empty,
    # e.g. key 0 of a DV whose positions are all >= 2^32: pyarrow infers the null type)
    theirs = {v.referenced_data_file: np.array([key << 32 | p for key, bm in enumerate(v._bitmaps) for p in bm], np.uint64)
              for v in deletion_vectors_from_puffin_file(PuffinFile(data))}  # fmt: skip
    assert theirs.keys() == dvs.keys()
    for name, dv in dvs.items():
        np.testing.assert_array_equal(theirs[name], dv.positions())


def test_footer_is_icebergs_json():
    frame = DeletionVector.from_positions([3, 2**33 + 1], bitmap64=True).serialize()
    data, blobs = puffin.encode_deletion_vector_puffin([("s3://b/d/a b\"\\\x01é.parquet", frame, 2)], created_by="Apache Iceberg 1.11.0 (commit 6976e02)")
    assert data[:4] == b"PFA1" and data[4:4 + len(frame)] == frame
    payload = (
        '{"blobs":[{"type":"deletion-vector-v1","fields":[2147483645],"snapshot-id":-1,"sequence-number":-1,'
        f'"offset":4,"length":{len(frame)},"properties":{{"referenced-data-file":"s3://b/d/a b\\"\\\\\\u0001é.parquet",'
        '"cardinality":"2"}}],"properties":{"created-by":"Apache Iceberg 1.11.0 (commit 6976e02)"}}'
    ).encode()
    assert data[4 + len(frame):] == b"PFA1" + payload + struct.pack("<I", len(payload)) + bytes(4) + b"PFA1"
    # the frame of positions {3, 2^33+1}: three 64-bit keys (0, 1 empty, 2)
    assert struct.unpack_from("<q", frame, 8)[0] == 3
    assert blobs[0].offset == 4 and blobs[0].length == len(frame)


def test_32_bit_dvs_become_the_64_bit_frame_paimon_writes():
    narrow = DeletionVector.from_positions(range(1000, 3000))
    [(name, frame, cardinality)] = puffin.dv_frames({"f": narrow})
    assert frame == DeletionVector.from_positions(range(1000, 3000), bitmap64=True).serialize()
    assert cardinality == 2000 and len(frame) < 60  # one run


def test_any_puffin_compressed_footer_codecs_and_unknown_blobs():
    dv = DeletionVector.from_positions([1, 5, 9], bitmap64=True)
    blobs = [
        puffin.Blob("apache-datasketches-theta-v1", (1,), b"sketch" * 100, 7, 3, "zstd", {"ndv": "12"}),
        puffin.Blob("indexbridge-unknown", (2, 3), bytes(range(256)) * 10, 8, 4, "lz4"),
        puffin.Blob("deletion-vector-v1", (puffin.ROW_POSITION_FIELD_ID,), dv.serialize(), -1, -1, None,
                    {"referenced-data-file": "d.parquet", "cardinality": "3"}),
    ]  # fmt: skip
    for compress_footer in (False, True):
        data, written = puffin.encode_puffin(blobs, {"created-by": "test"}, compress_footer=compress_footer)
        meta, contents = puffin.read_puffin(data)
        assert meta.footer_compressed == compress_footer and meta.properties == {"created-by": "test"}
        assert [c for c in contents] == [bytes(b.data) for b in blobs]
        assert [b.compression_codec for b in meta.blobs] == ["zstd", "lz4", None]
        assert meta.blobs[0].properties == {"ndv": "12"} and meta.blobs[1].fields == (2, 3)
        assert meta.blobs[0].length < 600  # compressed
        [(blob, read)] = puffin.read_deletion_vectors(data)  # the unknown types are skipped
        assert read == dv and blob.offset == written[2].offset
    empty, _ = puffin.encode_puffin([], {})
    assert empty == b"PFA1PFA1" + b'{"blobs":[]}' + struct.pack("<I", 12) + bytes(4) + b"PFA1"
    assert puffin.read_file_metadata(empty).blobs == ()


def _sample() -> tuple[bytes, list[puffin.DeleteFile]]:
    dvs = {"a.parquet": DeletionVector.from_positions(range(0, 70000, 3), bitmap64=True),
           "b.parquet": DeletionVector.from_positions([2**32 + 5], bitmap64=True)}  # fmt: skip
    data, blobs = puffin.encode_deletion_vector_puffin(puffin.dv_frames(dvs))
    return data, blobs


def _damaged(data: bytes, at: int, value: int | None = None) -> bytes:
    out = bytearray(data)
    out[at] = (out[at] ^ 0xFF) if value is None else value
    return bytes(out)


def _footer(data: bytes) -> tuple[int, int]:
    size = struct.unpack_from("<I", data, len(data) - 12)[0]
    return len(data) - 12 - size - 4, size


def test_damaged_files_name_file_and_offset():
    data, blobs = _sample()
    first = blobs[0]
    footer_at, payload_size = _footer(data)
    crc_at = first.offset + first.length - 4

    def fails(damaged: bytes, offset: int, match: str, read=puffin.read_deletion_vectors) -> None:
        with pytest.raises(IndexFormatError, match=match) as error:
            read(damaged, source="t.puffin")
        assert error.value.source == "t.puffin" and error.value.offset == offset, error.value

    fails(_damaged(data, 0), 0, "Puffin magic")
    fails(_damaged(data, len(data) - 1), len(data) - 4, "footer magic")
    fails(_damaged(data, footer_at), footer_at, "footer magic .* before the footer payload")
    fails(_damaged(data, len(data) - 8, 2), len(data) - 8, "flags")
    fails(_damaged(data, len(data) - 5, 1), len(data) - 8, "flags")
    fails(data[:-12] + struct.pack("<I", len(data)) + data[-8:], len(data) - 12, "payload size")
    fails(_damaged(data, footer_at + 4), footer_at + 4, "JSON")
    fails(_damaged(data, crc_at), crc_at, "CRC")
    fails(_damaged(data, first.offset + 4), first.offset + 4, "magic")
    fails(data[:10], 0, "at least")
    # the footer's entries against the file and the blob
    meta = json.loads(data[footer_at + 4:footer_at + 4 + payload_size])

    def with_footer(change) -> bytes:
        m = json.loads(json.dumps(meta))
        change(m)
        payload = json.dumps(m).encode()
        return data[:footer_at] + b"PFA1" + payload + struct.pack("<I", len(payload)) + bytes(4) + b"PFA1"

    fails(with_footer(lambda m: m["blobs"][0].update(offset=footer_at)), footer_at + 4, "between the magic and the footer")
    fails(with_footer(lambda m: m["blobs"][0]["properties"].update(cardinality="7")), first.offset, "7 positions")
    fails(with_footer(lambda m: m["blobs"][0].update(length=first.length - 1)), first.offset, "as recorded")
    fails(with_footer(lambda m: m["blobs"][0].update({"compression-codec": "zstd"})), first.offset, "uncompressed")
    fails(with_footer(lambda m: m["blobs"][0].pop("snapshot-id")), footer_at + 4, "snapshot-id")
    fails(with_footer(lambda m: m["blobs"][0]["properties"].pop("referenced-data-file")), first.offset, "referenced-data-file")
    # Iceberg's manifest path (offset and size only)
    with pytest.raises(IndexFormatError, match="inside the file"):
        puffin.read_deletion_vector(data, first.offset, len(data), source="t.puffin")
    with pytest.raises(IndexFormatError, match="as recorded") as error:
        puffin.read_deletion_vector(data, first.offset + 1, first.length, source="t.puffin")
    assert error.value.offset == first.offset + 1
    # a DV with the CRC unchecked still reads
    assert puffin.read_deletion_vectors(_damaged(data, crc_at), verify_crc=False)[0][1] == puffin.read_deletion_vectors(data)[0][1]
    # a compressed footer whose LZ4 frame is damaged
    compressed, _ = puffin.encode_puffin([], {"k": "v" * 100}, compress_footer=True)
    at, _ = _footer(compressed)
    fails(_damaged(compressed, at + 10), at + 4, "lz4", read=puffin.read_file_metadata)


def test_random_damage_only_ever_raises_index_format_error(cpu_deadline):
    data, _ = _sample()
    rng = np.random.default_rng(7)
    for _ in range(3000):
        damaged = bytearray(data)
        for at in rng.integers(0, len(data), size=int(rng.integers(1, 4))):
            damaged[at] = int(rng.integers(0, 256))
        if rng.random() < 0.1:
            damaged = damaged[: int(rng.integers(0, len(damaged)))]
        try:
            puffin.read_deletion_vectors(bytes(damaged))
        except IndexFormatError:
            pass
