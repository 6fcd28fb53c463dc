"""Deletion vectors against the real formats in the same Spark 4.0.1: Iceberg 1.11.0
(``iceberg-spark-runtime-4.0_2.13``, a hadoop catalog ``ib_iceberg``) and Delta 4.4.0
(``delta-spark_4.0_2.13`` + ``delta-storage``), both in a ``newSession()`` of the shared session
(conftest.py gives it the jars and extensions; the catalogs are set here only).

References: Iceberg's scan (``_file``/``_pos`` of the live rows, the ``files`` and
``delete_files`` metadata tables), Iceberg's Java API (``RowDelta`` commits of our Puffin DVs,
then read back through Spark), Delta's reader (``_metadata.file_path``/``row_index`` of the live
rows), Delta's ``DeletionVectorStore`` (reads our DV files at our descriptors), Delta's
``DeletionVectorDescriptor.inlineInLog``; every deleted position is "all rows of the data file
(Spark's Parquet reader, ``_metadata.row_index``) minus what the format's reader returns". Tables
are generated from seeds; rows are deleted by DELETE, UPDATE and MERGE statements.
"""

from __future__ import annotations

import glob
import json
import os
import random
import re
from collections import defaultdict
from pathlib import Path
from urllib.parse import unquote

import pytest
from pyspark.errors import PythonException
from pyspark.sql import functions as F

from indexbridge.delta import log as delta_log
from indexbridge.delta.bridge import paimon_to_delta
from indexbridge.delta.dv import DeletionVectorDescriptor, read_deletion_vector
from indexbridge.errors import IndexFormatError
from indexbridge.iceberg import puffin
from indexbridge.iceberg.bridge import paimon_to_puffin
from indexbridge.jvm import java_errors, run_reference
from indexbridge.paimon.dv import DeletionVector
from indexbridge.spark import functions as ibf
from indexbridge.spark.lakehouse import spark_file_path
from indexbridge.storage import write_atomically

# One seed by default (a run costs about a minute of CPU per seed); INDEXBRIDGE_LAKEHOUSE_SEEDS=1-8 widens.
_first, _, _last = os.environ.get("INDEXBRIDGE_LAKEHOUSE_SEEDS", "1").partition("-")
SEEDS = tuple(20261127 + s for s in range(int(_first), int(_last or _first) + 1))
ENGINES = ("jvm", "python")
ICEBERG_MOR = ", ".join(f"'write.{op}.mode'='merge-on-read'" for op in ("delete", "update", "merge"))


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("lakehouse")
    session = spark.newSession()
    session.conf.set("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    session.conf.set("spark.sql.catalog.ib_iceberg", "org.apache.iceberg.spark.SparkCatalog")
    session.conf.set("spark.sql.catalog.ib_iceberg.type", "hadoop")
    session.conf.set("spark.sql.catalog.ib_iceberg.warehouse", str(root / "iceberg"))
    session.conf.set("spark.sql.catalog.ib_iceberg.cache-enabled", "false")
    session.conf.set("spark.databricks.delta.snapshotPartitions", "2")
    return session, root


def _by_file(rows, file="file", pos="pos") -> dict[str, set[int]]:
    out = defaultdict(set)
    for r in rows:
        out[r[file]].add(r[pos])
    return dict(out)


def _positions(dv: DeletionVector) -> set[int]:
    return set(dv.positions().tolist())


def _statements(rng: random.Random, table: str, n: int, view: str) -> list[str]:
    """DELETE, UPDATE and MERGE statements with seeded predicates (each touching several files,
    later ones adding to earlier DVs)."""
    k1, k2, k3 = rng.randrange(5, 13), rng.randrange(7, 17), rng.randrange(3, 7)
    a = rng.randrange(n // 2)
    return [
        f"DELETE FROM {table} WHERE id % {k1} = {rng.randrange(k1)}",
        f"DELETE FROM {table} WHERE id BETWEEN {a} AND {a + rng.randrange(50, 400)}",
        f"UPDATE {table} SET v = 'u' WHERE id % {k2} = {rng.randrange(k2)}",
        f"MERGE INTO {table} t USING {view} s ON t.id = s.id WHEN MATCHED AND t.id % {k3} = 0 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET v = 'm'",
    ]


def _merge_source(session, rng: random.Random, n: int, view: str) -> None:
    session.createDataFrame([(i,) for i in rng.sample(range(n), n // 10)], "id bigint").createOrReplaceTempView(view)


def _all_rows(session, files: list[str]):
    """Every row of the data files (URIs, as ``_metadata.file_path`` shows them), deleted or not,
    with its position (Spark's Parquet reader, which takes paths, not URIs)."""
    return session.read.parquet(*map(unquote, files)).select(F.col("_metadata.file_path").alias("uri"), F.col("_metadata.row_index").alias("pos"), "id")


# -- Iceberg -------------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=SEEDS)
def iceberg_table(request, lake):
    """A v3 table whose rows Spark SQL deleted, with what Iceberg's own scan says."""
    session, _ = lake
    seed = request.param
    rng = random.Random(seed)
    name = f"ib_iceberg.db.dml_{seed}"
    n = rng.randrange(3000, 6000)
    session.sql(f"CREATE TABLE {name} (id bigint, v string) USING iceberg TBLPROPERTIES ('format-version'='3', {ICEBERG_MOR})")
    session.range(0, n, 1, 3).selectExpr("id", "cast(id as string) AS v").writeTo(name).append()
    _merge_source(session, rng, n, f"src_{seed}")
    for statement in _statements(rng, name, n, f"src_{seed}"):
        session.sql(statement)
    data_files = {r.file_path: r.record_count for r in session.sql(f"SELECT file_path, record_count FROM {name}.files WHERE content = 0").collect()}
    dvs = session.sql(f"SELECT file_path, file_format, content_offset, content_size_in_bytes, referenced_data_file, record_count FROM {name}.delete_files").collect()
    live = _by_file(session.sql(f"SELECT _file, _pos FROM {name}").collect(), "_file", "_pos")
    deleted = {f: set(range(count)) - live.get(f, set()) for f, count in data_files.items()}
    return {"name": name, "data_files": data_files, "dvs": dvs, "deleted": {f: d for f, d in deleted.items() if d}, "live_ids": sorted(r.id for r in session.table(name).select("id").collect())}


def test_iceberg_dvs_read_as_iceberg_deletes(lake, iceberg_table):
    """Our Puffin reader returns exactly the positions Iceberg's scan drops; the blobs are the
    bytes our codec writes for those positions; whole Puffin files re-encode to Iceberg's bytes."""
    session, _ = lake
    dvs, deleted = iceberg_table["dvs"], iceberg_table["deleted"]
    assert {d.file_format for d in dvs} == {"PUFFIN"}
    written = glob.glob(str(Path(dvs[0].file_path).parent / "*-deletes.puffin"))
    assert len(written) >= 3, "Iceberg wrote DVs in several statements (a later one replacing DVs of earlier ones)"
    assert {d.referenced_data_file for d in dvs} == set(deleted)
    files: dict[str, list] = defaultdict(list)
    for d in dvs:
        data = Path(d.file_path).read_bytes()
        dv = puffin.read_deletion_vector(data, d.content_offset, d.content_size_in_bytes, source=d.file_path, cardinality=d.record_count)
        assert _positions(dv) == deleted[d.referenced_data_file]
        blob = data[d.content_offset:d.content_offset + d.content_size_in_bytes]
        assert DeletionVector.from_positions(sorted(deleted[d.referenced_data_file]), bitmap64=True).serialize() == blob
        files[d.file_path].append(d.referenced_data_file)
    for path in files:
        data = Path(path).read_bytes()
        meta = puffin.read_file_metadata(data, path)
        blobs = puffin.read_deletion_vectors(data, source=path)
        frames = [(b.properties["referenced-data-file"], data[b.offset:b.offset + b.length], dv.cardinality) for b, dv in blobs]
        ours, _ = puffin.encode_deletion_vector_puffin(frames, created_by=meta.properties["created-by"], order="given")
        assert ours == data, f"our Puffin file of Iceberg's blobs differs from {path}"
        # Iceberg's blob order is its HashMap's, filled by computeIfAbsent (which puts a new key at
        # the head of its bin) in the order the task met the files: some order gives the footer's
        assert puffin.blob_order(list(reversed(frames))) == [name for name, _, _ in frames]
    # the Spark read, as positions and as DVs applied to every row of the data files
    # A Puffin file may still hold a DV that a later statement replaced by a larger one (the
    # union): the positions of a file are those of its newest DV, the live DV the largest.
    positions = _by_file(ibf.read_iceberg_dvs(session, sorted(files)).collect())
    assert {f: positions[f] for f in deleted} == deleted
    live = session.createDataFrame([(d.referenced_data_file, d.record_count) for d in dvs], "file string, record_count long")
    live_dvs = ibf.read_iceberg_dvs(session, sorted(files), as_dv=True).join(live, "file").where(ibf.dv_cardinality("dv") == F.col("record_count"))
    all_rows = _all_rows(session, sorted(iceberg_table["data_files"])).withColumn("file", F.regexp_replace("uri", "^file:", ""))
    kept = ibf.apply_deletion_vectors(all_rows, live_dvs.select("file", "dv"))
    assert sorted(r.id for r in kept.collect()) == iceberg_table["live_ids"]


def test_iceberg_writes_equal_iceberg_bytes(lake, iceberg_table, tmp_path):
    """``write_iceberg_dvs`` of the positions Iceberg deleted: each blob is Iceberg's blob byte for
    byte, the rows are Iceberg's DeleteFile fields, and a rerun writes the same files."""
    session, _ = lake
    deleted = iceberg_table["deleted"]
    theirs = {d.referenced_data_file: Path(d.file_path).read_bytes()[d.content_offset:d.content_offset + d.content_size_in_bytes] for d in iceberg_table["dvs"]}
    df = session.createDataFrame([(f, p) for f, ps in deleted.items() for p in ps], "file string, pos long")
    rows = ibf.write_iceberg_dvs(df, tmp_path / "out").collect()
    assert {r.referenced_data_file for r in rows} == set(deleted)
    for r in rows:
        data = Path(r.file_path).read_bytes()
        assert r.file_size_in_bytes == len(data) and r.record_count == len(deleted[r.referenced_data_file])
        assert data[r.content_offset:r.content_offset + r.content_size_in_bytes] == theirs[r.referenced_data_file]
    before = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}
    again = ibf.write_iceberg_dvs(df, tmp_path / "out").collect()
    assert sorted(again) == sorted(rows)
    assert {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()} == before


@pytest.mark.parametrize("seed", SEEDS)
def test_iceberg_reads_our_dvs(lake, seed):
    """Our Puffin DVs committed through Iceberg's Java API (RowDelta, PUFFIN position deletes at
    our offsets): Iceberg's scan drops exactly our positions, and ``apply_deletion_vectors`` with
    ``read_iceberg_dvs`` keeps the rows Iceberg keeps."""
    session, _ = lake
    rng = random.Random(seed)
    name = f"ib_iceberg.db.ours_{seed}"
    n = rng.randrange(4000, 8000)
    session.sql(f"CREATE TABLE {name} (id bigint, v string) USING iceberg TBLPROPERTIES ('format-version'='3')")
    session.range(0, n, 1, 4).selectExpr("id", "cast(id as string) AS v").writeTo(name).append()
    jvm = session._jvm
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(session._jsparkSession, name)
    before = table.currentSnapshot().snapshotId()
    data_files = {r.file_path: r.record_count for r in session.sql(f"SELECT file_path, record_count FROM {name}.files").collect()}
    deletes = []
    for i, (f, count) in enumerate(sorted(data_files.items())[:-1]):  # the last file keeps every row
        start = rng.randrange(count // 2)
        positions = set(range(start, start + rng.randrange(1, count // 3))) if i % 2 else set(rng.sample(range(count), count // rng.randrange(3, 9)))
        deletes += [(f, p) for p in positions]
    rows = ibf.write_iceberg_dvs(session.createDataFrame(deletes, "file string, pos long"), Path(table.location()) / "data").collect()
    row_delta = table.newRowDelta()
    for r in rows:
        row_delta.addDeletes(
            jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(table.spec()).ofPositionDeletes()
            .withFormat(jvm.org.apache.iceberg.FileFormat.PUFFIN).withPath(r.file_path).withFileSizeInBytes(r.file_size_in_bytes)
            .withRecordCount(r.record_count).withContentOffset(r.content_offset).withContentSizeInBytes(r.content_size_in_bytes)
            .withReferencedDataFile(r.referenced_data_file).build()
        )  # fmt: skip
    row_delta.commit()
    live = _by_file(session.sql(f"SELECT _file, _pos FROM {name}").collect(), "_file", "_pos")
    ours = _by_file([{"file": f, "pos": p} for f, p in deletes])
    assert {f: set(range(c)) - live.get(f, set()) for f, c in data_files.items()} == {f: ours.get(f, set()) for f in data_files}
    everything = session.sql(f"SELECT _file AS file, _pos AS pos, id FROM {name} VERSION AS OF {before}")
    kept = ibf.apply_deletion_vectors(everything, ibf.read_iceberg_dvs(session, sorted({r.file_path for r in rows}), as_dv=True))
    assert sorted(r.id for r in kept.collect()) == sorted(r.id for r in session.table(name).select("id").collect())


def _task_failure(engine: str):
    """What a job whose task found damaged input raises, and the error's name in its message:
    the Python engine's PythonException around IndexFormatError, the JVM engine's Java error
    around IndexFormatException (both name the file, offset and expectation alike)."""
    if engine == "python":
        return pytest.raises(PythonException), "IndexFormatError"
    return pytest.raises(java_errors()), "io.indexbridge.IndexFormatException"


@pytest.mark.parametrize("engine", ENGINES)
def test_iceberg_damaged_blob_fails_the_job(lake, iceberg_table, tmp_path, engine):
    session, _ = lake
    d = iceberg_table["dvs"][0]
    damaged = tmp_path / "damaged.puffin"
    data = bytearray(Path(d.file_path).read_bytes())
    crc_at = d.content_offset + d.content_size_in_bytes - 1
    data[crc_at] ^= 0xFF
    damaged.write_bytes(bytes(data))
    raises, error = _task_failure(engine)
    with raises as failure:
        ibf.read_iceberg_dvs(session, [damaged], engine=engine).collect()
    message = str(failure.value)
    found = re.search(rf"{error}: {re.escape(str(damaged))}: offset (\d+): ", message)
    assert found and d.content_offset <= int(found.group(1)) <= crc_at and "CRC" in message, message


# -- Delta ---------------------------------------------------------------------------------------


def _delta_truth(session, table: str, version: int | None = None) -> tuple[dict[str, set[int]], list[int]]:
    """Per data file (as Spark names it) the positions Delta's reader drops, and the live ids."""
    reader = session.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    live = reader.load(table).select(F.col("_metadata.file_path").alias("file"), F.col("_metadata.row_index").alias("pos"), "id").collect()
    live_by_file = _by_file(live)
    snap = delta_log.snapshot(table, version)
    files = [spark_file_path(snap.table, a.path) for a in snap.files]
    assert set(live_by_file) <= set(files)
    total = _by_file(_all_rows(session, files).collect(), "uri", "pos")
    return {f: total[f] - live_by_file.get(f, set()) for f in files if total[f] - live_by_file.get(f, set())}, sorted(r.id for r in live)


def _delta_store_read(session, table: str, descriptor: dict) -> set[int]:
    """Delta's DeletionVectorStore reading the DV a descriptor names (size, CRC checked)."""
    jvm = session._jvm
    offset = descriptor.get("offset")
    joffset = jvm.scala.Some(jvm.java.lang.Integer.valueOf(offset)) if offset is not None else jvm.scala.Option.empty()
    jdescriptor = jvm.org.apache.spark.sql.delta.actions.DeletionVectorDescriptor.apply(
        descriptor["storageType"], descriptor["pathOrInlineDv"], joffset, descriptor["sizeInBytes"], descriptor["cardinality"], jvm.scala.Option.empty()
    )  # fmt: skip
    store = jvm.org.apache.spark.sql.delta.storage.dv.HadoopFileSystemDVStore(session._jsc.hadoopConfiguration())
    bitmap = store.read(jdescriptor, jvm.org.apache.hadoop.fs.Path(table))
    assert bitmap.cardinality() == descriptor["cardinality"]
    return set(bitmap.toArray())


def _create_delta(session, path: Path, rng: random.Random, n: int, partitions: int) -> None:
    session.sql(f"CREATE TABLE delta.`{path}` (id bigint, v string) USING delta TBLPROPERTIES "
                "('delta.enableDeletionVectors'='true', 'delta.randomizeFilePrefixes'='true')")  # fmt: skip
    session.range(0, n, 1, partitions).selectExpr("id", "cast(id as string) AS v").write.format("delta").mode("append").save(str(path))


@pytest.fixture(scope="module", params=SEEDS)
def delta_table(request, lake):
    session, root = lake
    seed = request.param
    rng = random.Random(seed)
    path = root / f"delta dml é!{seed}"  # characters Spark's file paths escape, and some they keep
    n = rng.randrange(3000, 6000)
    _create_delta(session, path, rng, n, 3)
    _merge_source(session, rng, n, f"dsrc_{seed}")
    versions = []
    for statement in _statements(rng, f"delta.`{path}`", n, f"dsrc_{seed}"):
        session.sql(statement)
        versions.append(delta_log.snapshot(path).version)
    return {"path": str(path), "versions": versions, "seed": seed}


def _check_delta(session, table: str, version: int | None = None) -> dict[str, set[int]]:
    deleted, live_ids = _delta_truth(session, table, version)
    rows = ibf.read_delta_dvs(session, table, version).collect()
    assert _by_file(rows) == deleted
    assert sorted(ibf.read_delta_dvs(session, table, version, engine="python").collect()) == sorted(rows)
    everything = _all_rows(session, sorted({spark_file_path(table, a.path) for a in delta_log.snapshot(table, version).files})).withColumnRenamed("uri", "file")
    kept = ibf.apply_deletion_vectors(everything, ibf.read_delta_dvs(session, table, version, as_dv=True))
    assert sorted(r.id for r in kept.collect()) == live_ids
    return deleted


def test_delta_dvs_read_as_delta_deletes(lake, delta_table):
    """DELETE / UPDATE / MERGE on a table with random file prefixes: per data file, our DVs are
    the positions Delta's reader drops, at the latest version and an earlier one, and Delta's
    DV store reads the same positions at every descriptor."""
    session, _ = lake
    table = delta_table["path"]
    deleted = _check_delta(session, table)
    assert len(deleted) >= 2
    _check_delta(session, table, delta_table["versions"][1])
    snap = delta_log.snapshot(table)
    prefixes = set()
    for add in snap.files_with_deletion_vectors():
        d = add.deletion_vector
        assert d.storage_type == "u"
        prefixes.add(d.random_prefix_and_uuid()[0])
        assert _delta_store_read(session, table, d.to_json()) == deleted[spark_file_path(table, add.path)]
    assert all(len(p) == 2 for p in prefixes), "delta.randomizeFilePrefixes puts DVs under prefixes"


def test_delta_shallow_clone_p_descriptors(lake, delta_table):
    session, root = lake
    clone = root / f"delta_clone_{delta_table['seed']}"
    session.sql(f"CREATE TABLE delta.`{clone}` SHALLOW CLONE delta.`{delta_table['path']}`")
    snap = delta_log.snapshot(clone)
    assert snap.checkpoint == 0 and {a.deletion_vector.storage_type for a in snap.files_with_deletion_vectors()} == {"p"}
    _check_delta(session, str(clone))


def _raw_adds(table: Path) -> dict[str, dict]:
    """The latest ``add`` action of each path as the JSON commits hold it (no checkpoints here)."""
    adds = {}
    for commit in sorted(glob.glob(str(table / "_delta_log" / "*.json"))):
        for line in Path(commit).read_text().splitlines():
            action = json.loads(line)
            if "add" in action:
                adds[action["add"]["path"]] = action["add"]
    return adds


def _commit(table: Path, replaced: dict[str, dict]) -> int:
    """Extends the log by one commit: per data file, remove + add carrying the new descriptor."""
    version = delta_log.snapshot(table).version + 1
    adds = _raw_adds(table)
    actions = []
    for path, descriptor in replaced.items():
        old = adds[path]
        remove = {"path": path, "deletionTimestamp": 1, "dataChange": True, "extendedFileMetadata": True,
                  "partitionValues": old["partitionValues"], "size": old["size"]}  # fmt: skip
        if "deletionVector" in old:
            remove["deletionVector"] = old["deletionVector"]
        actions += [{"remove": remove}, {"add": {**old, "deletionVector": descriptor}}]
    write_atomically(table / "_delta_log" / f"{version:020d}.json", delta_log.commit_actions(actions).encode())
    return version


@pytest.mark.parametrize("seed", SEEDS)
def test_delta_reads_our_dvs_and_inline_dvs(lake, seed):
    """``write_delta_dvs`` under random prefixes, committed as remove + add: Delta's DV store reads
    every file at our descriptors and Delta's reader drops exactly our positions; an inline DV made
    by Delta's ``inlineInLog`` is read by us as Delta reads it."""
    session, root = lake
    rng = random.Random(seed)
    table = root / f"delta_ours_{seed}"
    _create_delta(session, table, rng, rng.randrange(4000, 8000), 4)
    snap = delta_log.snapshot(table)
    counts = {a.path: a.num_records for a in snap.files}
    paths = sorted(counts)
    deletes = []
    for i, path in enumerate(paths[:2]):
        count = counts[path]
        positions = set(rng.sample(range(count), count // rng.randrange(2, 9))) if i % 2 else set(range(rng.randrange(count // 2), count - 1))
        deletes += [(path, p) for p in positions]
    prefix_length = rng.randrange(1, 4)
    rows = ibf.write_delta_dvs(session.createDataFrame(deletes, "file string, pos long"), str(table), prefix_length=prefix_length).collect()
    ours = _by_file([{"file": f, "pos": p} for f, p in deletes])
    descriptors = {r.data_file: r.deletionVector.asDict() for r in rows}
    assert set(descriptors) == set(ours)
    for path, d in descriptors.items():
        assert d["storageType"] == "u" and len(d["pathOrInlineDv"]) == 20 + prefix_length
        assert _delta_store_read(session, str(table), d) == ours[path]
    _commit(table, descriptors)
    # an inline DV, built by Delta
    jvm = session._jvm
    inline_path, count = paths[2], counts[paths[2]]
    inline = sorted(rng.sample(range(count), rng.randrange(1, 40)))
    bitmap = jvm.org.apache.spark.sql.delta.deletionvectors.RoaringBitmapArray()
    for p in inline:
        bitmap.add(p)
    portable = jvm.org.apache.spark.sql.delta.deletionvectors.RoaringBitmapArrayFormat.Portable()
    jd = jvm.org.apache.spark.sql.delta.actions.DeletionVectorDescriptor.inlineInLog(bitmap.serializeAsByteArray(portable), len(inline))
    inline_descriptor = {"storageType": jd.storageType(), "pathOrInlineDv": jd.pathOrInlineDv(), "sizeInBytes": jd.sizeInBytes(), "cardinality": jd.cardinality()}
    _commit(table, {inline_path: inline_descriptor})
    deleted = _check_delta(session, str(table))
    assert deleted == {spark_file_path(table, p): s for p, s in {**ours, inline_path: set(inline)}.items()}
    assert DeletionVectorDescriptor.from_json(inline_descriptor).storage_type == "i"


@pytest.mark.parametrize("engine", ENGINES)
def test_delta_descriptor_past_its_file_fails_the_job(lake, tmp_path, engine):
    session, root = lake
    rng = random.Random(7)
    table = tmp_path / "delta_bad"
    _create_delta(session, table, rng, 500, 1)
    path = delta_log.snapshot(table).files[0].path
    rows = ibf.write_delta_dvs(session.createDataFrame([(path, p) for p in range(0, 100, 3)], "file string, pos long"), str(table)).collect()
    d = rows[0].deletionVector.asDict()
    file_size = (DeletionVectorDescriptor.from_json(d).absolute_path(table)).stat().st_size
    d["offset"] = file_size + 10
    _commit(table, {path: d})
    raises, error = _task_failure(engine)
    with raises as failure:
        ibf.read_delta_dvs(session, str(table), engine=engine).collect()
    message = str(failure.value)
    dv_file = DeletionVectorDescriptor.from_json(d).absolute_path(table)
    assert f"{error}: {dv_file}: offset {file_size + 10}: " in message, message


@pytest.mark.parametrize("engine", ENGINES)
def test_bad_delta_log_raises_index_format_error_on_the_driver(lake, tmp_path, engine):
    """Both engines plan on the driver: a missing log and a missing commit raise IndexFormatError
    (the JVM engine's IndexFormatException converted) naming the file, a version past the log
    ValueError, before any job runs."""
    session, _ = lake
    with pytest.raises(IndexFormatError) as missing:
        ibf.read_delta_dvs(session, tmp_path, engine=engine)
    assert (missing.value.source, missing.value.offset) == (str(tmp_path / "_delta_log"), 0)
    log = tmp_path / "_delta_log"
    log.mkdir()
    for v in (0, 2):
        (log / f"{v:020d}.json").write_text('{"commitInfo": {}}\n')
    with pytest.raises(IndexFormatError) as gap:
        ibf.read_delta_dvs(session, tmp_path, engine=engine)
    assert gap.value.source == str(log / f"{1:020d}.json") and "commit 1" in gap.value.expected
    with pytest.raises(ValueError, match="version 3 of .*: the log holds versions up to 2"):
        ibf.read_delta_dvs(session, tmp_path, 3, engine=engine)


# -- Paimon → Iceberg / Delta in Spark tasks -----------------------------------------------------


@pytest.fixture(scope="module")
def paimon_dv64_table(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("paimon-dv")
    out = tmp / "t64.json"
    run_reference("create", "pk-dv", "1", str(tmp / "wh"), "t64", str(out), "deletion-vectors.bitmap64=true", main="PaimonWriteReference")
    return json.loads(out.read_text())["path"]


def test_paimon_dvs_to_iceberg_and_delta_in_spark(lake, paimon_dv64_table, tmp_path):
    """The Spark bridge returns the CLI's rows and writes the CLI's bytes; Delta's DV store reads
    every ``u`` and ``p`` descriptor."""
    session, _ = lake
    cli = {name: f.to_json() for name, f in paimon_to_puffin(paimon_dv64_table, tmp_path / "cli-ice")}
    rows = [r.asDict() for r in ibf.paimon_dvs_to_iceberg(session, paimon_dv64_table, tmp_path / "ice").collect()]
    assert cli and {r["data_file"] for r in rows} == cli.keys()
    spark_rows = {r.pop("data_file"): r for r in rows}
    for name, f in cli.items():
        ours = spark_rows[name]
        assert Path(ours["file_path"]).name == Path(f["file_path"]).name
        assert Path(ours["file_path"]).read_bytes() == Path(f["file_path"]).read_bytes()
        assert {k: v for k, v in ours.items() if k != "file_path"} == {k: v for k, v in f.items() if k != "file_path"}
    for storage in ("u", "p"):
        out = tmp_path / f"delta-{storage}"
        cli_rows = {name: d.to_json() for name, d in paimon_to_delta(paimon_dv64_table, tmp_path / f"cli-delta-{storage}", storage=storage)}
        got = {r.data_file: {k: v for k, v in r.deletionVector.asDict().items() if v is not None} for r in ibf.paimon_dvs_to_delta(session, paimon_dv64_table, out, storage=storage).collect()}
        assert got == cli_rows
        for d in got.values():
            assert _delta_store_read(session, str(out), d) == _positions(read_deletion_vector(DeletionVectorDescriptor.from_json(d), out))


def _relative(rows, root: Path, column: str) -> list[dict]:
    return sorted(({**r.asDict(recursive=True), column: str(Path(r[column]).relative_to(root))} for r in rows), key=repr)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_engines_write_the_same_files_and_return_the_same_rows(lake, iceberg_table, delta_table, paimon_dv64_table, tmp_path):
    """``engine="jvm"`` (Scala's ``Lakehouse``) and ``engine="python"`` (Arrow kernels) write the
    same files under the same names (content UUIDs, Delta's prefixes) and return the same rows;
    the JVM engine is the one the reference checks above run."""
    session, _ = lake
    deletes = session.createDataFrame(sorted((f, p) for f, ps in iceberg_table["deleted"].items() for p in ps), "file string, pos long")
    written = {}
    for engine in ENGINES:
        out = tmp_path / f"ice-{engine}"
        written[engine] = _relative(ibf.write_iceberg_dvs(deletes.repartition(2), out, engine=engine).collect(), out, "file_path")
        assert written[engine] and _files(out) == _files(tmp_path / "ice-jvm"), engine
        reads = [sorted(ibf.read_iceberg_dvs(session, sorted(map(str, out.iterdir())), as_dv=as_dv, engine=engine).collect()) for as_dv in (False, True)]
        assert engine == "jvm" or reads == jvm_reads
        jvm_reads = reads
    assert written["python"] == written["jvm"]
    snap = delta_log.snapshot(delta_table["path"])
    adds = [a.path for a in snap.files]
    positions = session.createDataFrame([(a, p) for i, a in enumerate(adds) for p in range(i, 400, 3 + i)], "file string, pos long")
    for engine in ENGINES:
        out = tmp_path / f"delta-{engine}"
        written[engine] = sorted(ibf.write_delta_dvs(positions.repartition(3), out, prefix_length=2, engine=engine).collect())
        assert written[engine] and _files(out) == _files(tmp_path / "delta-jvm"), engine
    assert written["python"] == written["jvm"]
    for engine in ENGINES:
        out = tmp_path / f"paimon-ice-{engine}"
        written[engine] = _relative(ibf.paimon_dvs_to_iceberg(session, paimon_dv64_table, out, engine=engine).collect(), out, "file_path")
        assert written[engine] and _files(out) == _files(tmp_path / "paimon-ice-jvm"), engine
        for storage in ("u", "p"):
            out = tmp_path / f"paimon-delta-{storage}-{engine}"
            written[engine, storage] = sorted(ibf.paimon_dvs_to_delta(session, paimon_dv64_table, out, storage=storage, engine=engine).collect())
            assert written[engine, storage] and _files(out) == _files(tmp_path / f"paimon-delta-{storage}-jvm"), (engine, storage)
    assert written["python"] == written["jvm"]
    assert written["python", "u"] == written["jvm", "u"] and written["python", "p"] == written["jvm", "p"]
