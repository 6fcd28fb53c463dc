"""The bridge from Paimon and the command line: `indexbridge iceberg dv-from-paimon`, `indexbridge
delta dv-from-paimon [--storage u|p]`, `indexbridge delta dvs` and `inspect` of Puffin and Delta
DV files, on primary-key tables with 64-bit and 32-bit deletion vectors that Paimon 1.4.2's Java
API wrote (io.indexbridge.reference.PaimonWriteReference). Frames are copied, not re-encoded: the
bytes are Paimon's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from indexbridge.cli import main
from indexbridge.delta import dv as ddv
from indexbridge.delta.dv import DeletionVectorDescriptor
from indexbridge.iceberg import puffin
from indexbridge.iceberg.bridge import paimon_deletion_files
from indexbridge.paimon.dv import DeletionVector


def _paimon_dvs(table: str) -> dict[str, tuple[DeletionVector, bytes, str]]:
    """data file name -> (DV, Paimon's frame bytes, data file path), read by our Paimon layer."""
    out = {}
    for f in paimon_deletion_files(table):
        data = f.path.read_bytes()
        for r in f.dvs:
            dv = DeletionVector.deserialize(data, source=str(f.path), offset=r.offset, expected_length=r.length)
            frame = data[r.offset:r.offset + (r.length if dv.bitmap64 else r.length + 8)]
            out[r.data_file] = (dv, frame, str(r.data_path))
    return out


def _wide(dv: DeletionVector) -> DeletionVector:
    return DeletionVector.from_positions(dv.positions().view("int64"), bitmap64=True)


@pytest.mark.parametrize("width", ["64", "32"])
def test_iceberg_dv_from_paimon(paimon_dv_tables, width, tmp_path, capsys):
    from pyiceberg.table.deletion_vector import deletion_vectors_from_puffin_file
    from pyiceberg.table.puffin import PuffinFile

    paimon = _paimon_dvs(paimon_dv_tables[width])
    assert paimon, "the table has deletion vectors"
    out = tmp_path / "iceberg"
    assert main(["iceberg", "dv-from-paimon", paimon_dv_tables[width], str(out)]) == 0
    rows = [json.loads(line) for line in (out / "delete-files.jsonl").read_text().splitlines()]
    assert {r["data_file"] for r in rows} == paimon.keys()
    for r in rows:
        assert list(r) == ["data_file", "file_path", "file_size_in_bytes", "content_offset", "content_size_in_bytes", "referenced_data_file", "record_count"]
        dv, frame, data_path = paimon[r["data_file"]]
        assert Path(r["file_path"]).is_absolute() and Path(r["file_path"]).parent == out
        assert r["referenced_data_file"] == data_path and Path(data_path).is_file()
        data = Path(r["file_path"]).read_bytes()
        assert r["file_size_in_bytes"] == len(data) and r["record_count"] == dv.cardinality
        blob = data[r["content_offset"]:r["content_offset"] + r["content_size_in_bytes"]]
        assert blob == (frame if width == "64" else _wide(dv).serialize())  # 64-bit: Paimon's bytes, copied
        assert puffin.read_deletion_vector(data, r["content_offset"], r["content_size_in_bytes"], cardinality=r["record_count"]) == _wide(dv)
        [theirs] = [v for v in deletion_vectors_from_puffin_file(PuffinFile(data)) if v.referenced_data_file == data_path]
        assert sorted(key << 32 | p for key, bm in enumerate(theirs._bitmaps) for p in bm) == dv.positions().tolist()
    # a rerun writes the same bytes
    again = tmp_path / "again"
    assert main(["iceberg", "dv-from-paimon", paimon_dv_tables[width], str(again)]) == 0
    assert {p.name: p.read_bytes() for p in again.glob("*.puffin")} == {p.name: p.read_bytes() for p in out.glob("*.puffin")}
    # inspect recognises the Puffin files
    capsys.readouterr()
    assert main(["inspect", "--json", *map(str, sorted(out.glob("*.puffin")))]) == 0
    summaries = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert sum(len(s["blobs"]) for s in summaries) == len(rows)
    for s in summaries:
        assert s["format"] == "puffin"
        for b in s["blobs"]:
            [row] = [r for r in rows if r["referenced_data_file"] == b["referenced_data_file"]]
            assert (b["offset"], b["length"], b["cardinality"]) == (row["content_offset"], row["content_size_in_bytes"], row["record_count"])
            assert b["positions"]["cardinality"] == row["record_count"]
            assert [p for a, z in b["positions"]["ranges"] for p in range(a, z)] == paimon[row["data_file"]][0].positions().tolist()


@pytest.mark.parametrize("width", ["64", "32"])
def test_delta_dv_from_paimon_and_delta_dvs(paimon_dv_tables, width, tmp_path, capsys):
    paimon = _paimon_dvs(paimon_dv_tables[width])
    out = tmp_path / "delta"
    assert main(["delta", "dv-from-paimon", paimon_dv_tables[width], str(out)]) == 0
    rows = [json.loads(line) for line in (out / "descriptors.jsonl").read_text().splitlines()]
    assert {r["data_file"] for r in rows} == paimon.keys()
    paimon_files = {f.index_file: f.path.read_bytes() for f in paimon_deletion_files(paimon_dv_tables[width])}
    for r in rows:
        assert list(r) == ["data_file", "deletionVector"] and list(r["deletionVector"]) == ["storageType", "pathOrInlineDv", "offset", "sizeInBytes", "cardinality"]
        descriptor = DeletionVectorDescriptor.from_json(r["deletionVector"])
        dv, frame, _ = paimon[r["data_file"]]
        path = descriptor.absolute_path(out)
        assert path.parent == out and path.name.startswith("deletion_vector_")
        assert ddv.read_deletion_vector(descriptor, out) == _wide(dv)
        if width == "64":  # whole Paimon files copied; descriptors at Paimon's offsets
            assert path.read_bytes() in paimon_files.values()
            assert path.read_bytes()[descriptor.offset:descriptor.offset + descriptor.size_in_bytes + 8] == frame
    # a Delta log of those descriptors, read back by `delta dvs`
    (out / "_delta_log").mkdir()
    actions = [{"protocol": {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["deletionVectors"], "writerFeatures": ["deletionVectors"]}}]
    actions += [{"add": {"path": r["data_file"], "partitionValues": {}, "size": 1, "modificationTime": 0, "dataChange": True,
                         "deletionVector": r["deletionVector"]}} for r in rows]  # fmt: skip
    (out / "_delta_log" / f"{0:020d}.json").write_text("".join(json.dumps(a) + "\n" for a in actions))
    capsys.readouterr()
    assert main(["delta", "dvs", str(out), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["version"] == 0 and len(listed["files"]) == len(rows)
    for f in listed["files"]:
        assert [p for a, z in f["positions"]["ranges"] for p in range(a, z)] == paimon[f["data_file"]][0].positions().tolist()
        assert f["deletionVector"] == next(r["deletionVector"] for r in rows if r["data_file"] == f["data_file"])
    assert main(["delta", "dvs", str(out)]) == 0
    assert "data files with deletion vectors" in capsys.readouterr().out
    # inspect recognises the Delta DV files
    assert main(["inspect", "--json", *map(str, sorted(out.glob("deletion_vector_*.bin")))]) == 0
    summaries = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {s["format"] for s in summaries} == {"delta-dv"}
    assert sum(v["cardinality"] for s in summaries for v in s["vectors"]) >= sum(r["deletionVector"]["cardinality"] for r in rows)


def test_delta_p_descriptors_point_at_paimons_files(paimon_dv_tables, tmp_path, capsys):
    out = tmp_path / "p"
    assert main(["delta", "dv-from-paimon", paimon_dv_tables["64"], str(out), "--storage", "p"]) == 0
    assert [p.name for p in out.iterdir()] == ["descriptors.jsonl"]
    paimon = _paimon_dvs(paimon_dv_tables["64"])
    for line in (out / "descriptors.jsonl").read_text().splitlines():
        r = json.loads(line)
        descriptor = DeletionVectorDescriptor.from_json(r["deletionVector"])
        assert descriptor.storage_type == "p" and descriptor.path_or_inline_dv.startswith("file:///")
        assert "/index/index-" in descriptor.path_or_inline_dv
        assert ddv.read_deletion_vector(descriptor, "/nowhere") == paimon[r["data_file"]][0]
    # 32-bit DVs cannot be read by Delta in place: a clear error, nothing left behind
    capsys.readouterr()
    assert main(["delta", "dv-from-paimon", paimon_dv_tables["32"], str(tmp_path / "p32"), "--storage", "p"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("indexbridge: error: ") and "32-bit" in err and "--storage u" in err and "Traceback" not in err
    assert not (tmp_path / "p32").exists()


def test_cli_errors(paimon_dv_tables, tmp_path, capsys):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("x")
    assert main(["iceberg", "dv-from-paimon", paimon_dv_tables["64"], str(busy)]) == 2
    assert "empty directory" in capsys.readouterr().err
    assert main(["delta", "dvs", str(tmp_path)]) == 2
    assert "_delta_log" in capsys.readouterr().err
    # a damaged Paimon deletion file: the frame's CRC, named with file and offset; OUT_DIR left as it was
    import shutil

    table = tmp_path / "copy"
    shutil.copytree(paimon_dv_tables["64"], table)
    [first] = paimon_deletion_files(table)[:1]
    data = bytearray(first.path.read_bytes())
    r = first.dvs[0]
    data[r.offset + r.length - 1] ^= 1
    first.path.write_bytes(bytes(data))
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["iceberg", "dv-from-paimon", str(table), str(empty)]) == 2
    err = capsys.readouterr().err
    assert f"{first.path}: offset {r.offset + r.length - 4}: " in err and "CRC" in err
    assert list(empty.iterdir()) == []
    # a damaged Puffin file through inspect: one line, exit 2
    bad = tmp_path / "bad.puffin"
    bad.write_bytes(b"PFA1" + bytes(20))
    assert main(["inspect", str(bad)]) == 2
    assert capsys.readouterr().err.startswith(f"indexbridge: error: {bad}: offset ")
