"""Python output equals Scala output on generated data (property tests, seeded).

The Scala codecs are driven through `io.indexbridge.cli.FileCodecs` over py4j with files: only
paths and short JSON cross the bridge."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from indexbridge.jvm import jvm
from indexbridge.paimon.bucket import encode_hash_index
from indexbridge.paimon.dv import DeletionVector, encode_deletion_files


@pytest.fixture(scope="module")
def codecs():
    return jvm().io.indexbridge.cli.FileCodecs


def _random_positions(rng: random.Random, bitmap64: bool) -> np.ndarray:
    """A mix of the shapes that choose different roaring containers: runs, dense and sparse
    chunks, single values, chunk and key boundaries, and (64-bit) high keys."""
    parts = []
    for _ in range(rng.randint(0, 6)):
        kind = rng.choice(["run", "dense", "sparse", "single"])
        key = rng.choice([0, 0, 1, 7, 0x7FFF]) if not bitmap64 else rng.choice([0, 1, 2, 5, 40])
        base = (key << 32 if bitmap64 else key << 16) + rng.randint(0, 60000)
        if kind == "run":
            parts.append(np.arange(base, base + rng.randint(1, 70000), dtype=np.uint64))
        elif kind == "dense":
            parts.append(base + np.array(rng.sample(range(65536), rng.randint(4097, 20000)), dtype=np.uint64))
        elif kind == "sparse":
            parts.append(base + np.array(rng.sample(range(1 << 20), rng.randint(1, 4096)), dtype=np.uint64))
        else:
            parts.append(np.array([base], dtype=np.uint64))
    if not parts:
        return np.zeros(0, dtype=np.uint64)
    positions = np.unique(np.concatenate(parts))
    limit = (1 << 31) - 1 if not bitmap64 else 0x7FFFFFFE80000000
    return positions[positions <= limit]


@pytest.mark.parametrize("bitmap64", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_dv_frames_equal(codecs, tmp_path: Path, seed: int, bitmap64: bool):
    positions = _random_positions(random.Random(seed * 2 + bitmap64), bitmap64)
    (tmp_path / "pos").write_bytes(positions.astype("<i8").tobytes())
    codecs.encodeDeletionVector(str(tmp_path / "pos"), bitmap64, str(tmp_path / "scala.dv"))
    python = DeletionVector.from_positions(positions, bitmap64=bitmap64).serialize()
    assert (tmp_path / "scala.dv").read_bytes() == python
    # and each reads the other's bytes
    (tmp_path / "python.dv").write_bytes(python)
    assert codecs.decodeDeletionVector(str(tmp_path / "python.dv"), str(tmp_path / "back")) == len(positions)
    assert np.array_equal(np.frombuffer((tmp_path / "back").read_bytes(), dtype="<i8").astype(np.uint64), positions)


@pytest.mark.parametrize("bitmap64", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_deletion_files_equal(codecs, tmp_path: Path, seed: int, bitmap64: bool):
    rng = random.Random(100 + seed)
    names = [f"data-{rng.getrandbits(64):016x}-{i}.parquet" for i in range(rng.randint(1, 40))]
    dvs, entries = {}, []
    for i, name in enumerate(names):
        positions = _random_positions(rng, bitmap64)
        (tmp_path / f"p{i}").write_bytes(positions.astype("<i8").tobytes())
        entries.append({"data_file": name, "positions": str(tmp_path / f"p{i}")})
        dvs[name] = DeletionVector.from_positions(positions, bitmap64=bitmap64)
    target = rng.choice([None, 500, 5000])
    out = tmp_path / "scala"
    out.mkdir()
    metas = json.loads(codecs.encodeDeletionFiles(json.dumps(entries), bitmap64, -1 if target is None else target, True, str(out)))
    python = encode_deletion_files(dvs, target_size=target, order="hashmap")
    assert len(metas) == len(python)
    for meta, (data, ranges) in zip(metas, python):
        assert (out / meta["file_name"]).read_bytes() == data
        assert meta["ranges"] == [[r.data_file, r.offset, r.length, r.cardinality] for r in ranges]


@pytest.mark.parametrize("seed", range(8))
def test_hash_index_files_equal(codecs, tmp_path: Path, seed: int):
    rng = random.Random(seed)
    n = rng.choice([0, 1, 5, 12, 13, 100, 1000, 20000])
    pool = [0, 1, -1, 2**31 - 1, -(2**31)] + [rng.getrandbits(32) - 2**31 for _ in range(n)]
    hashes = [rng.choice(pool) for _ in range(n)]
    (tmp_path / "adds").write_bytes(encode_hash_index(hashes, order="given"))
    codecs.encodeHashIndex(str(tmp_path / "adds"), str(tmp_path / "scala.hash"))
    assert (tmp_path / "scala.hash").read_bytes() == encode_hash_index(hashes, order="paimon")
