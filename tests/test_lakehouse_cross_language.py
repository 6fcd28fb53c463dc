"""Python and Scala write the same Puffin files and Delta DV files for the same generated DVs,
read each other's, move a Paimon table's DVs to the same bytes and rows, and `inspect` prints the
same JSON for Puffin and Delta DV files with either engine (seeded cases).

The Scala side runs through `io.indexbridge.cli.FileCodecs` over py4j with files (as in
tests/test_cross_language.py). Both sides are checked against Iceberg's and Delta's own classes
elsewhere (jvm/src/test/scala/io/indexbridge/lakehouse, tests/test_lakehouse_*.py); here they
are checked against each other."""

from __future__ import annotations

import json
import random
import re
import uuid
from pathlib import Path

import numpy as np
import pytest
from py4j.protocol import Py4JJavaError
from lakehouse_generated import positions

from indexbridge.cli.inspect import _describe_jvm, describe
from indexbridge.delta import dv as ddv
from indexbridge.delta.bridge import paimon_to_delta
from indexbridge.delta.dv import DeletionVectorDescriptor
from indexbridge.iceberg import puffin
from indexbridge.iceberg.bridge import paimon_to_puffin
from indexbridge.jvm import jvm
from indexbridge.paimon.dv import DeletionVector
from indexbridge.spark.lakehouse import spark_file_path

CREATED_BY = "Apache Iceberg 1.11.0 (commit cross-language)"
# File counts per seed, with 13 and 25: there Iceberg's HashMap resizes once more after the last
# file when that file has two or more positions (BaseDVFileWriter calls computeIfAbsent per
# position; PuffinSpec checks the Scala writer's order against Iceberg's bytes).
FILE_COUNTS = (1, 2, 5, 12, 13, 14, 20, 25)


@pytest.fixture(scope="module")
def codecs():
    return jvm().io.indexbridge.cli.FileCodecs


def _dvs(seed: int, tmp: Path) -> tuple[list[tuple[str, DeletionVector]], str]:
    """Generated DVs of data files, and the JSON list the Scala side takes (positions files)."""
    rng = np.random.default_rng(seed)
    dvs, entries = [], []
    for i in range(FILE_COUNTS[seed % len(FILE_COUNTS)]):
        name = f"file:/warehouse/db/t/data/{rng.integers(0, 100):02d}/part-{i:05d}-{rng.integers(0, 2**62):016x}.parquet"
        p = positions(seed * 1000 + i)
        dvs.append((name, DeletionVector.from_positions(p, bitmap64=True)))
        (tmp / f"p{i}").write_bytes(p.astype("<i8").tobytes())
        entries.append({"data_file": name, "positions": str(tmp / f"p{i}")})
    return dvs, json.dumps(entries)


def _positions(path: str) -> np.ndarray:
    return np.frombuffer(Path(path).read_bytes(), dtype="<i8")


@pytest.mark.parametrize("seed", range(8))
def test_puffin_bytes_equal_and_each_reads_the_other(codecs, tmp_path: Path, seed: int):
    dvs, entries = _dvs(seed, tmp_path)
    python = puffin.write_deletion_vector_puffin(tmp_path / "python.puffin", puffin.dv_frames(dvs), created_by=CREATED_BY)
    scala = json.loads(codecs.encodePuffinDeletionVectors(entries, CREATED_BY, str(tmp_path / "scala.puffin")))
    assert (tmp_path / "scala.puffin").read_bytes() == (tmp_path / "python.puffin").read_bytes()
    assert [{**d.to_json(), "file_path": None} for d in python] == [{**d, "file_path": None} for d in scala]
    expected = {name: dv.positions() for name, dv in dvs}
    # Scala reads Python's file, Python reads Scala's
    (tmp_path / "back").mkdir()
    read = json.loads(codecs.decodePuffinDeletionVectors(str(tmp_path / "python.puffin"), str(tmp_path / "back")))
    assert sorted(r["referenced_data_file"] for r in read) == sorted(expected)
    for r in read:
        assert np.array_equal(_positions(r["positions"]), expected[r["referenced_data_file"]].view("int64"))
    for blob, dv in puffin.read_deletion_vectors(tmp_path / "scala.puffin"):
        assert np.array_equal(dv.positions(), expected[blob.properties["referenced-data-file"]])


@pytest.mark.parametrize("seed", range(6))
def test_delta_dv_files_equal_and_each_reads_the_other(codecs, tmp_path: Path, seed: int):
    dvs, entries = _dvs(100 + seed, tmp_path)
    prefix = ["", "a", "Zq"][seed % 3]
    file_uuid = uuid.UUID(int=int(np.random.default_rng(seed).integers(0, 2**62)) << 64 | 12345)
    python = ddv.write_dv_file(tmp_path / "python", [(n, dv.serialize(), dv.cardinality) for n, dv in dvs],
                               random_prefix=prefix, file_uuid=file_uuid)  # fmt: skip
    scala = json.loads(codecs.encodeDeltaDvFile(entries, str(tmp_path / "scala"), prefix, str(file_uuid)))
    name = ddv.file_name(file_uuid)
    assert (tmp_path / "scala" / prefix / name).read_bytes() == (tmp_path / "python" / prefix / name).read_bytes()
    assert [{"data_file": n, "deletionVector": d.to_json()} for n, d in python] == scala
    for (n, d), (_, dv) in zip(python, dvs):
        # Scala reads the descriptor in Python's table, Python in Scala's
        out = tmp_path / "back"
        assert codecs.decodeDeltaDeletionVector(json.dumps(d.to_json()), str(tmp_path / "python"), str(out)) == dv.cardinality
        assert np.array_equal(_positions(str(out)), dv.positions().view("int64"))
        assert ddv.read_deletion_vector(d, tmp_path / "scala") == dv


def test_inspect_prints_the_same_json_with_either_engine(tmp_path: Path):
    dvs, _ = _dvs(7, tmp_path)
    puffin.write_deletion_vector_puffin(tmp_path / "dvs.puffin", puffin.dv_frames(dvs))
    content, _ = puffin.encode_puffin(
        [puffin.Blob("apache-datasketches-theta-v1", (1,), bytes(range(200)) * 5, 3, 4, "zstd", {"ndv": "12"}),
         puffin.Blob("unknown", (2, 3), b"x" * 1000, 5, 6, "lz4"),
         puffin.Blob(puffin.DV_BLOB_TYPE, (puffin.ROW_POSITION_FIELD_ID,), dvs[0][1].serialize(), -1, -1, None,
                     {"referenced-data-file": dvs[0][0], "cardinality": str(dvs[0][1].cardinality)})],
        {"created-by": "test", "k": "ü"}, compress_footer=True)  # fmt: skip
    (tmp_path / "mixed.puffin").write_bytes(content)
    ddv.write_dv_file(tmp_path, [(n, dv.serialize(), dv.cardinality) for n, dv in dvs], file_uuid=uuid.UUID(int=99))
    for path in (tmp_path / "dvs.puffin", tmp_path / "mixed.puffin", tmp_path / ddv.file_name(uuid.UUID(int=99))):
        python = describe(str(path), None)
        assert python["format"] in ("puffin", "delta-dv")
        assert _describe_jvm(str(path), None) == python


@pytest.mark.parametrize("width", ["64", "32"])
def test_paimon_bridges_write_the_same_files_and_rows(codecs, paimon_dv_tables, tmp_path: Path, width: str):
    table = paimon_dv_tables[width]
    python = [{"data_file": name, **f.to_json()} for name, f in paimon_to_puffin(table, tmp_path / "py-ice")]
    scala = json.loads(codecs.paimonToIceberg(table, str(tmp_path / "scala-ice")))
    assert python, "the Paimon table has deletion vectors"

    def relative(rows, root):
        return sorted(({**r, "file_path": str(Path(r["file_path"]).relative_to(root.absolute()))} for r in rows), key=json.dumps)

    assert relative(scala, tmp_path / "scala-ice") == relative(python, tmp_path / "py-ice")
    for f in (tmp_path / "py-ice").iterdir():
        assert (tmp_path / "scala-ice" / f.name).read_bytes() == f.read_bytes()
    for storage in ("u", "p") if width == "64" else ("u",):
        python = [{"data_file": n, "deletionVector": d.to_json()} for n, d in paimon_to_delta(table, tmp_path / f"py-{storage}", storage=storage)]
        scala = json.loads(codecs.paimonToDelta(table, str(tmp_path / f"scala-{storage}"), storage))
        assert sorted(scala, key=json.dumps) == sorted(python, key=json.dumps)
        for f in (tmp_path / f"py-{storage}").iterdir():
            assert (tmp_path / f"scala-{storage}" / f.name).read_bytes() == f.read_bytes()
        for row in python:
            assert ddv.read_deletion_vector(DeletionVectorDescriptor.from_json(row["deletionVector"]), tmp_path / f"scala-{storage}")


# Characters of generated table roots and file names: those Hadoop's Path keeps, those it escapes
# (space, %, #, ?, [, ", unicode spaces and controls) and ones beyond ASCII it keeps.
PATH_CHARS = "aZ09._-~!$&'()*+,;=@% #?[]^`{}\"|<>\\é中😀\u00a0\u2028\u0085\t"


def _name(rng: random.Random) -> str:
    return "d" + "".join(rng.choice(PATH_CHARS) for _ in range(rng.randrange(0, 8)))


@pytest.mark.parametrize("seed", range(4))
def test_spark_file_paths_are_hadoops(seed: int):
    """``read_delta_dvs``'s ``file`` in both engines: Python's ``spark_file_path`` against Scala's
    ``Lakehouse.sparkFilePath`` (Delta's ``absolutePath`` and Hadoop's ``Path.toUri``), for add
    paths encoded as Delta encodes them (``Path.toUri``) under generated table roots."""
    rng = random.Random(seed)
    hadoop = jvm().org.apache.hadoop.fs.Path
    lakehouse = jvm().io.indexbridge.spark.Lakehouse
    for _ in range(150):
        table = "/" + "/".join(_name(rng) for _ in range(rng.randrange(1, 4)))
        raw = "/".join(_name(rng) for _ in range(rng.randrange(1, 3)))
        add_path = hadoop(jvm().java.net.URI(None, None, raw, None)).toUri().toString()
        assert spark_file_path(table, add_path) == lakehouse.sparkFilePath(table, add_path), (table, raw, add_path)
    absolute = "file:/x/y%20z/part-0.parquet"
    assert spark_file_path("/t", absolute) == lakehouse.sparkFilePath("/t", absolute) == absolute


# Pieces of add paths: as Delta writes them, and as no Delta writer does (raw characters
# java.net.URI refuses, invalid escapes or escapes of bytes that are not UTF-8, escaped dots, dot
# and empty segments, queries, fragments), which appear in one piece of six; under schemes and
# authorities in one path of three
PLAIN_PIECES = ["a", "b.parquet", "é", "%20", "%41", "%C3%A9", "%25", "%2F", ":", "x=1"]
ODD_PIECES = ["%2E", "%2E%2E", "%zz", "%2", "%C3", " ", "\u00a0", "\t", "[", "|", "\"", "\\", "^", ".", "..", "", "?q", "#f", "?q=1#f", "a:b"]  # fmt: skip


def _odd_add_path(rng: random.Random) -> str:
    def piece() -> str:
        return rng.choice(ODD_PIECES if rng.random() < 1 / 6 else PLAIN_PIECES)

    path = "/".join("".join(piece() for _ in range(rng.randrange(1, 3))) for _ in range(rng.randrange(1, 4)))
    return rng.choice(["/", "file:/", "file:///", "file://host/", "s3://bucket/", "1x:"]) + path if rng.random() < 1 / 3 else path


@pytest.mark.parametrize("seed", range(3))
def test_spark_file_paths_of_odd_add_paths_are_hadoops(seed: int):
    """``spark_file_path`` of add paths outside the form Delta writes: Scala's
    ``Lakehouse.sparkFilePath`` (Hadoop's Path) gives the same path, or both refuse (Python with a
    ValueError naming the path). Python resolves what it can alone (about a third of them) and hands
    the rest to Hadoop."""
    rng = random.Random(seed)
    lakehouse = jvm().io.indexbridge.spark.Lakehouse
    for _ in range(150):
        add_path = _odd_add_path(rng)
        try:
            expected = lakehouse.sparkFilePath("/t/d é", add_path)
        except Py4JJavaError:
            with pytest.raises(ValueError, match=re.escape(repr(add_path))):
                spark_file_path("/t/d é", add_path)
            continue
        assert spark_file_path("/t/d é", add_path) == expected, add_path
