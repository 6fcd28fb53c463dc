"""Delta Lake deletion vectors (indexbridge.delta): Z85 as Delta uses it, descriptors (u, p, i, r;
offsets at the size field, sizeInBytes without size and CRC, unique ids), DV files written and
read on seeded DVs, the log's file actions at a version (JSON commits, classic and multi-part
Parquet checkpoints, V2 checkpoints with sidecars), and damaged inputs failing with
IndexFormatError naming file and offset. Delta's own reader is the reference of
integration/test_spark_lakehouse.py and the Scala specs (jvm/src/test/scala/io/indexbridge/delta)."""

from __future__ import annotations

import json
import struct
import uuid

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from indexbridge.delta import dv as ddv
from indexbridge.delta import log as delta_log
from indexbridge.delta import z85
from indexbridge.delta.dv import DeletionVectorDescriptor
from indexbridge.errors import IndexFormatError
from indexbridge.iceberg.puffin import dv_frames
from indexbridge.paimon.dv import DeletionVector, encode_deletion_files
from lakehouse_generated import positions


def test_z85_as_delta_and_zeromq_define_it():
    assert z85.encode(bytes.fromhex("864FD26FB559F75B")) == "HelloWorld"  # RFC 32's test vector
    assert z85.decode("HelloWorld") == bytes.fromhex("864FD26FB559F75B")
    value = uuid.UUID("5f4e7a2c-9b1d-4c3e-8f6a-0d2b1c3e4f5a")
    encoded = z85.encode_uuid(value)
    assert len(encoded) == 20 and z85.decode_uuid(encoded) == value
    assert z85.decode(z85.encode(value.bytes)) == value.bytes
    # Delta pads unaligned data with zero bytes and cuts to the recorded size
    assert z85.encode(b"\x01\x02\x03") == z85.encode(b"\x01\x02\x03\x00")
    assert z85.decode(z85.encode(b"\x01\x02\x03"), 3) == b"\x01\x02\x03"
    rng = np.random.default_rng(3)
    for n in range(0, 40):
        data = rng.integers(0, 256, n, np.uint8).tobytes()
        assert z85.decode(z85.encode(data), n) == data
    with pytest.raises(IndexFormatError, match="Z85 character") as error:
        z85.decode("Hello Worl", source="d")
    assert error.value.offset == 5
    with pytest.raises(IndexFormatError, match="multiple of 5"):
        z85.decode("Hell")
    with pytest.raises(IndexFormatError, match="2\\^32-1"):
        z85.decode("#####")
    with pytest.raises(IndexFormatError, match="Z85 data of 9 bytes"):
        z85.decode("HelloWorld", 9)
    with pytest.raises(IndexFormatError, match="20 characters"):
        z85.decode_uuid("HelloWorld")


def test_descriptors_json_unique_ids_and_paths(tmp_path):
    value = uuid.UUID(int=0x0123456789ABCDEF0123456789ABCDEF)
    u = DeletionVectorDescriptor.uuid_relative(value, 34, 5, 1, random_prefix="ab")
    assert u.to_json() == {"storageType": "u", "pathOrInlineDv": "ab" + z85.encode_uuid(value), "offset": 1, "sizeInBytes": 34, "cardinality": 5}
    assert u.unique_id == "uab" + z85.encode_uuid(value) + "@1"
    assert u.absolute_path(tmp_path) == tmp_path / "ab" / f"deletion_vector_{value}.bin"
    assert DeletionVectorDescriptor.from_json(u.to_json()) == u
    assert DeletionVectorDescriptor.uuid_relative(value, 34, 5, 1).absolute_path(tmp_path) == tmp_path / f"deletion_vector_{value}.bin"
    p = DeletionVectorDescriptor.absolute(tmp_path / "a b" / "index-1", 30, 2, 9)
    assert p.path_or_inline_dv.startswith("file:///") and "a%20b" in p.path_or_inline_dv
    assert p.absolute_path("/elsewhere") == tmp_path / "a b" / "index-1"
    assert DeletionVectorDescriptor("r", "sub/dv.bin", 3, 1, 1).absolute_path(tmp_path) == tmp_path / "sub" / "dv.bin"
    data = DeletionVector.from_positions([0, 7], bitmap64=True).serialize()[4:-4]
    i = DeletionVectorDescriptor.inline(data, 2)
    assert i.to_json() == {"storageType": "i", "pathOrInlineDv": z85.encode(data), "sizeInBytes": len(data), "cardinality": 2}
    assert i.unique_id == "i" + z85.encode(data) and i.inline_data() == data
    assert ddv.read_deletion_vector(i, tmp_path) == DeletionVector.from_positions([0, 7], bitmap64=True)
    for bad, match in [({"storageType": "x", "pathOrInlineDv": "", "sizeInBytes": 0, "cardinality": 0}, "storageType"),
                       ({"storageType": "u", "pathOrInlineDv": "abc", "offset": 1, "sizeInBytes": 1, "cardinality": 0}, "20 characters"),
                       ({"storageType": "u", "pathOrInlineDv": "~" * 20, "offset": 1, "sizeInBytes": 1, "cardinality": 0}, "Z85"),
                       ({"storageType": "p", "pathOrInlineDv": "file:/x", "sizeInBytes": 1, "cardinality": 0}, "offset"),
                       ({"storageType": "i", "pathOrInlineDv": "", "offset": 1, "sizeInBytes": 0, "cardinality": 0}, "offset"),
                       ({"storageType": "p", "pathOrInlineDv": "file:/x", "offset": 1, "sizeInBytes": -1, "cardinality": 0}, "sizeInBytes")]:  # fmt: skip
        with pytest.raises(IndexFormatError, match=match):
            DeletionVectorDescriptor.from_json(bad, "log.json")


@pytest.mark.parametrize("seed", range(30))
def test_generated_dv_files_round_trip(seed, tmp_path):
    dvs = {f"part-{seed}-{i}.parquet": DeletionVector.from_positions(positions(seed * 17 + i, wide=seed % 2 == 0), bitmap64=seed % 2 == 0) for i in range(1 + seed % 4)}
    prefix = "" if seed % 3 else "xy"
    written = ddv.write_dv_file(tmp_path, dv_frames(dvs), random_prefix=prefix)
    [file] = list((tmp_path / prefix).glob("deletion_vector_*.bin")) if prefix else list(tmp_path.glob("deletion_vector_*.bin"))
    data = file.read_bytes()
    assert data[0] == 1
    files: dict[str, bytes] = {}
    for name, descriptor in written:
        wide = DeletionVector.from_positions(dvs[name].positions().view(np.int64), bitmap64=True)
        frame = wide.serialize()
        assert descriptor.size_in_bytes == len(frame) - 8 and descriptor.cardinality == wide.cardinality
        assert data[descriptor.offset:descriptor.offset + len(frame)] == frame
        assert descriptor.absolute_path(tmp_path) == file
        assert ddv.read_deletion_vector(descriptor, tmp_path, files=files) == wide
        # the same DV inline
        inline = DeletionVectorDescriptor.inline(frame[4:-4], wide.cardinality)
        assert ddv.read_deletion_vector(inline, tmp_path) == wide
    assert [offset for offset, _ in ddv.scan_dv_file(file)] == [d.offset for _, d in written]


def test_a_paimon_64_bit_deletion_file_is_a_delta_dv_file(tmp_path):
    dvs = {"a": DeletionVector.from_positions(range(10, 5000, 7), bitmap64=True), "b": DeletionVector.from_positions([2**33], bitmap64=True)}
    [(content, ranges)] = encode_deletion_files(dvs)
    path = tmp_path / f"deletion_vector_{uuid.UUID(int=1)}.bin"
    path.write_bytes(content)
    for r in ranges:
        descriptor = DeletionVectorDescriptor.uuid_relative(uuid.UUID(int=1), r.length - 8, r.cardinality, r.offset)
        assert ddv.read_deletion_vector(descriptor, tmp_path) == dvs[r.data_file]


def test_damaged_dv_files_name_file_and_offset(tmp_path):
    dvs = {"a": DeletionVector.from_positions(range(0, 9000, 3), bitmap64=True), "b": DeletionVector.from_positions([5, 6], bitmap64=True)}
    [(_, a), (_, b)] = ddv.write_dv_file(tmp_path, dv_frames(dvs), file_uuid=uuid.UUID(int=2))
    path = tmp_path / f"deletion_vector_{uuid.UUID(int=2)}.bin"
    data = path.read_bytes()

    def fails(descriptor, content: bytes, offset: int, match: str) -> None:
        path.write_bytes(content)
        with pytest.raises(IndexFormatError, match=match) as error:
            ddv.read_deletion_vector(descriptor, tmp_path)
        assert error.value.source == str(path) and error.value.offset == offset, error.value

    def flip(at: int) -> bytes:
        out = bytearray(data)
        out[at] ^= 0x10
        return bytes(out)

    fails(DeletionVectorDescriptor(a.storage_type, a.path_or_inline_dv, a.size_in_bytes, a.cardinality, a.offset + 1), data, a.offset + 1, "size field")
    fails(DeletionVectorDescriptor(b.storage_type, b.path_or_inline_dv, b.size_in_bytes, 3, b.offset), data, b.offset, "cardinality")
    fails(b, flip(b.offset + 4 + b.size_in_bytes), b.offset + 4 + b.size_in_bytes, "CRC")
    fails(b, flip(b.offset + 4), b.offset + 4, "magic")
    fails(b, data[:-1], b.offset, "inside the file")
    fails(b, b"\x02" + data[1:], 0, "version")
    fails(DeletionVectorDescriptor(b.storage_type, b.path_or_inline_dv, b.size_in_bytes + 100, b.cardinality, b.offset), data, b.offset, "inside the file")
    # a 32-bit Paimon frame is not a Delta DV
    [(content32, ranges32)] = encode_deletion_files({"c": DeletionVector.from_positions([1, 2, 3])})
    fails(DeletionVectorDescriptor("u", a.path_or_inline_dv, ranges32[0].length, 3, 1), content32, 5, "magic")
    with pytest.raises(IndexFormatError, match="32-bit"):
        ddv.scan_dv_file(content32, source="x.bin")
    # inline: bad Z85, a cardinality that does not match
    good = DeletionVectorDescriptor.inline(dvs["b"].serialize()[4:-4], 2)
    with pytest.raises(IndexFormatError, match="Z85 character"):
        ddv.read_deletion_vector(DeletionVectorDescriptor("i", "~" + good.path_or_inline_dv[1:], good.size_in_bytes, 2), tmp_path, source="00000000000000000003.json")
    with pytest.raises(IndexFormatError, match="cardinality") as error:
        ddv.read_deletion_vector(DeletionVectorDescriptor("i", good.path_or_inline_dv, good.size_in_bytes, 9), tmp_path, source="v3.json")
    assert error.value.source == "v3.json"


def _add(path: str, dv: DeletionVectorDescriptor | None = None, records: int = 10) -> dict:
    add = {"path": path, "partitionValues": {}, "size": 100, "modificationTime": 1, "dataChange": True,
           "stats": json.dumps({"numRecords": records})}  # fmt: skip
    if dv is not None:
        add["deletionVector"] = dv.to_json()
    return {"add": add}


def _remove(path: str, dv: DeletionVectorDescriptor | None = None) -> dict:
    remove = {"path": path, "deletionTimestamp": 1, "dataChange": True}
    if dv is not None:
        remove["deletionVector"] = dv.to_json()
    return {"remove": remove}


def _checkpoint_table(adds: list[dict]) -> pa.Table:
    dv_type = pa.struct([("storageType", pa.string()), ("pathOrInlineDv", pa.string()), ("offset", pa.int32()),
                         ("sizeInBytes", pa.int32()), ("cardinality", pa.int64()), ("maxRowIndex", pa.int64())])  # fmt: skip
    add_type = pa.struct([("path", pa.string()), ("partitionValues", pa.map_(pa.string(), pa.string())), ("size", pa.int64()),
                          ("stats", pa.string()), ("deletionVector", dv_type)])  # fmt: skip
    rows = [{"path": a["add"]["path"], "partitionValues": [], "size": 100, "stats": a["add"]["stats"],
             "deletionVector": a["add"].get("deletionVector")} for a in adds]  # fmt: skip
    return pa.table({"add": pa.array(rows + [None], add_type), "remove": pa.array([None] * (len(rows) + 1), pa.struct([("path", pa.string())]))})


def test_log_versions_commits_and_checkpoints(tmp_path):
    log_dir = tmp_path / "_delta_log"
    log_dir.mkdir()
    dv1 = DeletionVectorDescriptor.inline(DeletionVector.from_positions([1], bitmap64=True).serialize()[4:-4], 1)
    dv2 = DeletionVectorDescriptor.inline(DeletionVector.from_positions([1, 4], bitmap64=True).serialize()[4:-4], 2)
    commits = [
        [{"protocol": {"minReaderVersion": 3}}, _add("a.parquet"), _add("b%20c.parquet")],
        [_remove("a.parquet"), _add("a.parquet", dv1)],
        [_remove("a.parquet", dv1), _add("a.parquet", dv2), _add("d.parquet")],
        [_remove("d.parquet")],
    ]
    for v, actions in enumerate(commits):
        (log_dir / f"{v:020d}.json").write_text(delta_log.commit_actions(actions))

    def state(version=None):
        snap = delta_log.snapshot(tmp_path, version)
        return snap.version, {f.path: (f.deletion_vector, f.num_records) for f in snap.files}

    assert state(0) == (0, {"a.parquet": (None, 10), "b%20c.parquet": (None, 10)})
    assert state(1)[1]["a.parquet"][0] == dv1
    assert state(2)[1] == {"a.parquet": (dv2, 10), "b%20c.parquet": (None, 10), "d.parquet": (None, 10)}
    assert state() == (3, {"a.parquet": (dv2, 10), "b%20c.parquet": (None, 10)})
    # a classic checkpoint at 2 (the commits before it may be gone), then a multi-part one at 3
    pq.write_table(_checkpoint_table([_add("a.parquet", dv2), _add("x.parquet")]), log_dir / f"{2:020d}.checkpoint.parquet")
    for v in (0, 1):
        (log_dir / f"{v:020d}.json").unlink()
    assert state(2)[1].keys() == {"a.parquet", "x.parquet"} and state(2)[1]["a.parquet"][0] == dv2
    assert state()[1].keys() == {"a.parquet", "x.parquet"}
    with pytest.raises(IndexFormatError, match="commit 0"):
        delta_log.snapshot(tmp_path, 1)
    pq.write_table(_checkpoint_table([_add("p1.parquet")]), log_dir / f"{3:020d}.checkpoint.0000000001.0000000002.parquet")
    assert state(3)[1].keys() == {"a.parquet", "x.parquet"}  # part 2 missing: the classic one at 2 + commit 3
    pq.write_table(_checkpoint_table([_add("p2.parquet", dv1)]), log_dir / f"{3:020d}.checkpoint.0000000002.0000000002.parquet")
    assert state(3)[1].keys() == {"p1.parquet", "p2.parquet"}
    # a V2 checkpoint with a sidecar
    (log_dir / "_sidecars").mkdir()
    pq.write_table(_checkpoint_table([_add("s.parquet", dv2)]), log_dir / "_sidecars" / "side-1.parquet")
    (log_dir / f"{4:020d}.checkpoint.{uuid.UUID(int=5)}.json").write_text(
        delta_log.commit_actions([{"checkpointMetadata": {"version": 4}}, {"sidecar": {"path": "side-1.parquet", "sizeInBytes": 1}}, _add("v.parquet")]))
    snap = delta_log.snapshot(tmp_path)
    assert snap.version == 4 and snap.checkpoint == 4 and {f.path for f in snap.files} == {"s.parquet", "v.parquet"}
    # damaged commits
    (log_dir / f"{5:020d}.json").write_text('{"add": {"path": "z.parquet"}}\n{not json\n')
    with pytest.raises(IndexFormatError, match="JSON") as error:
        delta_log.snapshot(tmp_path)
    assert error.value.offset == len('{"add": {"path": "z.parquet"}}\n') and error.value.source.endswith("00000000000000000005.json")
    (log_dir / f"{5:020d}.json").write_text(json.dumps({"add": {"path": "z", "deletionVector": {"storageType": "q"}}}) + "\n")
    with pytest.raises(IndexFormatError, match="storageType"):
        delta_log.snapshot(tmp_path)
    with pytest.raises(IndexFormatError, match="_delta_log"):
        delta_log.snapshot(tmp_path / "nothing")
