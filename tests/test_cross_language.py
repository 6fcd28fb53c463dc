"""Python output equals Scala output on generated data (property tests, seeded).

The Scala codecs are driven through `io.indexbridge.cli.FileCodecs` over py4j with files: only
paths and short JSON cross the bridge. Paimon: DV frames, deletion files, HASH files. Zap:
segments built from generated analysed documents (tests/zap_generated.py, handed to Scala as a
build case's `input` JSON) at several chunk factors, and merges of such segments with random
drops, bytes and doc-number mappings."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest
from zap_generated import NAMES, corpus

from indexbridge.conformance.zap import documents_to_json
from indexbridge.cli.inspect import InspectOptions, describe
from indexbridge.jvm import jvm, jvm_with, paimon_bundle
from indexbridge.paimon.fileindex.container import FileIndexContainer, build_index, write_file_index
from indexbridge.paimon.fileindex.predicate import EmptyIndex
from indexbridge.paimon.fileindex.values import DataType
from indexbridge.paimon.bucket import encode_hash_index
from indexbridge.paimon.dv import DeletionVector, encode_deletion_files
from indexbridge.zap.merge import merge_segments
from indexbridge.zap.segment import Segment, build_segment

ZAP_CHUNK_FACTORS = (1, 2, 5, 1024)


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


@pytest.mark.parametrize("seed", range(40))
def test_zap_segments_equal(codecs, tmp_path: Path, seed: int):
    rng = random.Random(seed)
    size = {0: 0, 1: 1}.get(seed, rng.randrange(2, 80))
    docs = corpus(rng, 0, size, NAMES if rng.random() < 0.3 else None)
    documents = tmp_path / "documents.json"
    documents.write_text(json.dumps(documents_to_json(docs)))
    for chunk_factor in ZAP_CHUNK_FACTORS:
        codecs.buildZapSegmentFromDocuments(str(documents), chunk_factor, str(tmp_path / "scala.zap"))
        assert (tmp_path / "scala.zap").read_bytes() == build_segment(docs, chunk_factor), chunk_factor


@pytest.mark.parametrize("seed", range(40))
def test_zap_merges_equal(codecs, tmp_path: Path, seed: int):
    """Random drops; for seeds 2 mod 4 one input loses all its docs, for seeds 3 mod 4 every input
    does. Some inputs are themselves merge outputs (1-hit postings)."""
    rng = random.Random(1000 + seed)
    shared = NAMES if rng.random() < 0.5 else None  # then the inputs' field lists are (likely) the same
    paths, segments, drops = [], [], []
    first = 0
    for k in range(rng.choice([1, 2, 2, 3, 3, 4])):
        docs = corpus(rng, first, rng.randrange(0, 25), shared)
        first += len(docs)
        data = build_segment(docs, rng.choice(ZAP_CHUNK_FACTORS))
        if rng.random() < 0.25:
            data, _ = merge_segments([Segment(data)], [{d for d in range(len(docs)) if rng.random() < 0.2}])
        segments.append(Segment(data))
        paths.append(tmp_path / f"in{k}.zap")
        paths[-1].write_bytes(data)
        drops.append(sorted(d for d in range(segments[-1].num_docs) if rng.random() < 0.3))
    if seed % 4 == 2:
        victim = rng.randrange(len(segments))
        drops[victim] = list(range(segments[victim].num_docs))
    elif seed % 4 == 3:
        drops = [list(range(s.num_docs)) for s in segments]
    chunk_factor = rng.choice(ZAP_CHUNK_FACTORS)
    data, mapping = merge_segments(segments, [set(d) for d in drops], chunk_factor)
    scala_mapping = json.loads(
        codecs.mergeZapSegments(json.dumps([str(p) for p in paths]), json.dumps(drops), chunk_factor, str(tmp_path / "scala.zap"))
    )
    assert (tmp_path / "scala.zap").read_bytes() == data
    # no survivors: Python says None, Scala an empty mapping per input
    assert scala_mapping == (mapping if mapping is not None else [[] for _ in segments])


_INDEX_TYPES = ("bloom-filter", "bitmap", "bsi", "range-bitmap")
_PAIMON_READERS = {
    "org.apache.paimon.fileindex.empty.EmptyFileIndexReader": "empty",
    "org.apache.paimon.fileindex.bloomfilter.BloomFilterFileIndex$Reader": "bloom-filter",
    "org.apache.paimon.fileindex.bitmap.BitmapFileIndex$Reader": "bitmap",
    "org.apache.paimon.fileindex.bsi.BitSliceIndexBitmapFileIndex$Reader": "bsi",
    "org.apache.paimon.fileindex.rangebitmap.RangeBitmapFileIndex$Reader": "range-bitmap",
}


@pytest.mark.parametrize("seed", range(3))
def test_file_index_readers_of_empty_and_non_empty_entries_are_paimons(tmp_path: Path, seed: int):
    """Every mix of absent / empty / non-empty entries of the four index types (3^4 - 1 columns,
    entries shuffled, sometimes split over two header columns of one name): the readers the
    Python container holds, both engines' `inspect` JSON, and Paimon 1.4.2's own
    FileIndexFormat.Reader.readColumnIndex (whose Set keeps one shared EmptyFileIndexReader)."""
    rng = random.Random(seed)
    int_type = DataType.from_sql("INT")
    values = [None if rng.random() < 0.2 else rng.randint(-10, 10) for _ in range(rng.randint(1, 50))]
    payloads = {t: build_index(t, int_type, values, {}) for t in _INDEX_TYPES}
    mixes = [m for m in itertools.product(range(3), repeat=4) if any(m)]  # 0 absent, 1 empty, 2 payload
    columns, expected = [], {}
    for i, mix in enumerate(mixes):
        entries = [(t, None if state == 1 else payloads[t]) for t, state in zip(_INDEX_TYPES, mix) if state]
        rng.shuffle(entries)
        split = rng.randint(1, len(entries) - 1) if len(entries) > 1 and rng.random() < 0.5 else len(entries)
        columns += [(f"c{i}", part) for part in (entries[:split], entries[split:]) if part]
        expected[f"c{i}"] = sorted({"empty" if p is None else t for t, p in entries})
    data = write_file_index(columns)
    path = tmp_path / "data.index"
    path.write_bytes(data)

    gateway = jvm_with(paimon_bundle())
    paimon = gateway.org.apache.paimon
    row_type = paimon.types.RowType.builder()
    for name in expected:
        row_type.field(name, paimon.types.DataTypes.INT())
    reader = getattr(paimon.fileindex, "FileIndexFormat$Reader")(paimon.fs.ByteArraySeekableStream(data), row_type.build())
    container = FileIndexContainer(data, str(path))
    python = describe(str(path), None, InspectOptions({c: "INT" for c in expected}))
    assert json.loads(gateway.io.indexbridge.cli.Inspect.describe(str(path), "", InspectOptions({c: "INT" for c in expected}).to_json())) == python
    listed = {c["column"]: c["readers"] for c in python["columns"]}
    for column, held in expected.items():
        theirs = sorted(_PAIMON_READERS[r.getClass().getName()] for r in reader.readColumnIndex(column))
        assert theirs == held, column
        assert sorted(listed[column]) == held, column
        readers = container.readers(column, int_type)
        assert len(readers) == len(held) and sum(isinstance(r, EmptyIndex) for r in readers) == held.count("empty"), column
