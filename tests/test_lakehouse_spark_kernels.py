"""The Arrow kernels of indexbridge.spark.lakehouse without Spark: a task's DVs become one Puffin
file / one Delta DV file named after its content (the same name and bytes whatever order the
rows arrive in, as a retried task must), read back by the codecs; damaged input fails with
IndexFormatError naming the file and offset. (The formats' own readers check these files in
integration/test_spark_lakehouse.py.)"""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from indexbridge.delta.dv import DeletionVectorDescriptor, read_deletion_vector
from indexbridge.errors import IndexFormatError
from indexbridge.iceberg import puffin
from indexbridge.paimon.dv import DeletionVector
from indexbridge.spark import lakehouse


def _dvs(seed: int, files: int = 5) -> dict[str, list[int]]:
    rng = random.Random(seed)
    out = {}
    for i in range(files):
        high = (1 << 33) if i % 3 == 2 else 0
        start = rng.randrange(10_000)
        out[f"/warehouse/t/data/{seed}-{i}.parquet"] = sorted(
            {high + p for p in rng.sample(range(50_000), rng.randrange(1, 3000))} | set(range(start, start + rng.randrange(0, 5000)))
        )
    return out


def _batches(dvs: dict[str, list[int]], order: list[str]) -> list[pa.RecordBatch]:
    frames = {f: DeletionVector.from_positions(p, bitmap64=True).serialize() for f, p in dvs.items()}
    half = len(order) // 2
    return [
        pa.RecordBatch.from_pydict({"file": part, "dv": [frames[f] for f in part], "cardinality": [len(dvs[f]) for f in part]})
        for part in (order[:half], order[half:])
    ]


@pytest.mark.parametrize("seed", range(4))
def test_puffin_kernel(seed, tmp_path):
    dvs = _dvs(seed)
    names = list(dvs)
    rows = [r for b in lakehouse.write_puffin_kernel(str(tmp_path / "a"))(iter(_batches(dvs, names))) for r in b.to_pylist()]
    random.Random(seed).shuffle(names)
    again = [r for b in lakehouse.write_puffin_kernel(str(tmp_path / "b"))(iter(_batches(dvs, names))) for r in b.to_pylist()]
    [a], [b] = list((tmp_path / "a").iterdir()), list((tmp_path / "b").iterdir())
    assert a.name == b.name and a.name.endswith("-deletes.puffin") and a.read_bytes() == b.read_bytes()
    assert len({r["file_path"] for r in rows}) == 1 and {r["referenced_data_file"] for r in rows} == set(dvs)
    data = a.read_bytes()
    expected, _ = puffin.encode_deletion_vector_puffin([(f, DeletionVector.from_positions(p, bitmap64=True).serialize(), len(p)) for f, p in sorted(dvs.items())])
    assert data == expected
    for r in rows:
        assert r["file_size_in_bytes"] == len(data) and r["record_count"] == len(dvs[r["referenced_data_file"]])
        dv = puffin.read_deletion_vector(data, r["content_offset"], r["content_size_in_bytes"], cardinality=r["record_count"])
        assert dv.positions().tolist() == dvs[r["referenced_data_file"]]
    assert sorted(map(tuple, (r.values() for r in again))) == sorted(tuple(r.values()) for r in [{**r, "file_path": str(b)} for r in rows])
    read = [r for batch in lakehouse.read_puffin_kernel([str(a)], False)(iter([pa.record_batch({"id": [0]})])) for r in batch.to_pylist()]
    assert sorted((r["file"], r["pos"]) for r in read) == sorted((f, p) for f, ps in dvs.items() for p in ps)


@pytest.mark.parametrize("prefix_length", [0, 2, 5])
def test_delta_kernel(prefix_length, tmp_path):
    dvs = _dvs(10 + prefix_length)
    names = list(dvs)
    rows = [r for b in lakehouse.write_delta_kernel(str(tmp_path), prefix_length)(iter(_batches(dvs, names))) for r in b.to_pylist()]
    assert {r["data_file"] for r in rows} == set(dvs)
    for r in rows:
        d = DeletionVectorDescriptor.from_json(r["deletionVector"])
        prefix, _ = d.random_prefix_and_uuid()
        assert len(prefix) == prefix_length and all(c.isascii() and c.isalnum() for c in prefix)
        assert read_deletion_vector(d, tmp_path).positions().tolist() == dvs[r["data_file"]]
    random.Random(1).shuffle(names)
    again = [r for b in lakehouse.write_delta_kernel(str(tmp_path), prefix_length)(iter(_batches(dvs, names))) for r in b.to_pylist()]
    assert sorted(again, key=str) == sorted(rows, key=str)
    assert len([p for p in tmp_path.rglob("deletion_vector_*.bin")]) == 1


def test_damaged_puffin_names_file_and_offset(tmp_path):
    dvs = _dvs(3, files=2)
    rows = [r for b in lakehouse.write_puffin_kernel(str(tmp_path))(iter(_batches(dvs, list(dvs)))) for r in b.to_pylist()]
    path = rows[0]["file_path"]
    data = bytearray(open(path, "rb").read())
    data[rows[0]["content_offset"] + 5] ^= 0x01  # inside the magic
    open(path, "wb").write(bytes(data))
    with pytest.raises(IndexFormatError) as failure:
        list(lakehouse.read_puffin_kernel([path], True)(iter([pa.record_batch({"id": [0]})])))
    assert failure.value.source == path and failure.value.offset == rows[0]["content_offset"] + 4
