"""Jobs on ``local-cluster`` (separate executor JVMs and Python workers), run by
``test_local_cluster.py`` in a process of its own (one SparkContext per process; the other
integration tests share a ``local[2]`` one). Run alone: ``python -m pytest integration/local_cluster_cases.py``.

* The JVM functions and the Arrow kernels run on both executors: the jar ships through
  ``spark.jars`` and the Python workers find pyarrow/pyroaring.
* Damaged inputs read through every Spark read path (deletion files, file-index containers, zap
  segments, bleve directories, Paimon tables; JVM and Python engines) fail the job with the
  library's error naming the file and offset, as the driver sees it.
* Every Spark write path, its tasks' first attempts failing after writing part of their output
  (the test hook ``indexbridge.test.failTask``, ``spark.task.maxFailures`` = 2), leaves exactly a
  clean run's files, byte for byte; so does the same job run twice at once into the same place
  (deletion files, zap builds: what a speculative copy of every task does; Spark never launches a
  speculative copy on a host that runs the task, and a local-cluster has one host, so that is the
  closest a single machine gets).
* zap merge deletes naming unknown segments, out-of-range doc numbers or unknown ids fail before
  anything is written (both engines).

The tests over both engines run each engine in a deep run (``INDEXBRIDGE_DEEP=1``); the default
run takes one engine per test, the day's draw (``depth.py``).
"""

from __future__ import annotations

import random
import re
import shutil
import threading
import uuid
from contextlib import contextmanager
from pathlib import Path

import depth
import pytest
import spark_cds
from local_spark import start_session
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from indexbridge.errors import IndexFormatError
from indexbridge.paimon.bucket import key_hash
from indexbridge.paimon.dv import DeletionVector
from indexbridge.spark import functions as ibf
from indexbridge.spark.faults import PROPERTY
from indexbridge.zap import Segment
from indexbridge.zap.analyzers import FieldMapping
from test_spark_paimon_write import _create as create_table

ENGINES_ZAP = ("jvm", "python")
ENGINES_FILE_INDEX = ("jvm", "arrow")


def engines(choices: tuple[str, ...], test: str) -> list[str]:
    """Every engine deep; one in the default run, the day's draw per test (``depth.py``)."""
    return depth.sample(choices, 0.5, f"local-cluster/{test}")
WORDS = ["spark", "span", "zap", "bleve", "index", "segment", "merge", "query", "alpha", "beta", "gamma", "delta"]


@pytest.fixture(scope="module")
def spark():
    # executors with the driver's JIT and collector (spark_cds.py): minutes of small jobs
    conf = {"spark.task.maxFailures": "2", "spark.executor.extraJavaOptions": spark_cds.JAVA_OPTIONS}
    session = start_session("local-cluster[2,1,1024]", "indexbridge-faults", **conf)
    session.sparkContext.setLogLevel("OFF")  # the failures are the point: no task error logs
    yield session
    session.stop()


def test_jvm_functions_and_arrow_kernels_run_on_every_executor(spark):
    rows = spark.range(40000).select((F.col("id") % 5).cast("string").alias("file"), (F.col("id") * 3).alias("pos"), "id")
    deletes = rows.filter(F.col("id") % 11 == 0)
    dvs = ibf.build_deletion_vectors(deletes).cache()  # Arrow kernels on the Python workers
    frames = {r["file"]: bytes(r["dv"]) for r in dvs.collect()}
    for file, frame in frames.items():
        expected = sorted(i * 3 for i in range(40000) if i % 5 == int(file) and i % 11 == 0)
        assert frame == DeletionVector.from_positions(expected).serialize(), file
    kept = ibf.apply_deletion_vectors(rows, dvs)
    assert kept.count() == 40000 - len([i for i in range(40000) if i % 11 == 0])
    hashes = rows.filter(F.col("id") % 997 == 0).select("id", ibf.key_hash("id").alias("h")).collect()  # a JVM function
    assert len(hashes) == 41 and all(r["h"] == key_hash([r["id"]], ["BIGINT"]) for r in hashes)
    dvs.unpersist()
    assert spark.sparkContext._jsc.sc().getExecutorIds().size() == 2  # after the jobs: both registered


# -- helpers ---------------------------------------------------------------------------------------


def files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (hidden and temporary ones included) by relative path, with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@contextmanager
def first_attempts_fail(spark: SparkSession, job: str):
    """Runs the block with the test hook set for ``job``; checks that tasks did fail and were retried."""
    sc = spark.sparkContext
    group = f"faults-{uuid.uuid4()}"
    sc.setJobGroup(group, job)
    sc.setLocalProperty(PROPERTY, job)
    try:
        yield
    finally:
        sc.setLocalProperty(PROPERTY, None)
        sc.setLocalProperty("spark.jobGroup.id", None)
    tracker = sc.statusTracker()
    failed = sum(
        tracker.getStageInfo(s).numFailedTasks
        for j in tracker.getJobIdsForGroup(group)
        for s in tracker.getJobInfo(j).stageIds
        if tracker.getStageInfo(s) is not None
    )
    assert failed > 0, f"the hook made no {job} task fail"


def twice_at_once(run) -> None:
    """``run()`` in two threads at once (every task of the job runs twice, concurrently)."""
    errors: list[BaseException] = []

    def target():
        try:
            run()
        except BaseException as e:  # noqa: BLE001 (re-raised below)
            errors.append(e)

    threads = [threading.Thread(target=target) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def check_retries(spark, tmp_path: Path, job: str, run, concurrent: bool = False) -> dict[str, bytes]:
    """``run(directory)`` clean, with failing first attempts and (``concurrent``) twice at once: the
    same files with the same bytes each time. Returns the clean run's files."""
    clean, retried, doubled = tmp_path / "clean", tmp_path / "retried", tmp_path / "doubled"
    run(clean)
    expected = files(clean)
    assert expected and not [n for n in expected if n.endswith(".tmp")]
    with first_attempts_fail(spark, job):
        run(retried)
    assert files(retried) == expected
    if concurrent:
        twice_at_once(lambda: run(doubled))
        assert files(doubled) == expected
    return expected


def java_cause(error: BaseException, name: str):
    """The JVM throwable of class ``name`` in the cause chain of the exception the driver raised."""
    throwable = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    while throwable is not None:
        if throwable.getClass().getName() == name:
            return throwable
        throwable = throwable.getCause()
    return None


def assert_format_error(action, source: str, engine: str) -> None:
    """``action()`` fails with the library's error about ``source`` (a path, or part of one), with
    an offset, as the driver sees it: the JVM engine's exception carries IndexFormatException in
    its cause chain (what a Scala caller catches), the Python engine's carries IndexFormatError's
    message; never a NullPointerException or a crash of an executor."""
    with pytest.raises(Exception) as info:
        action()
    text = str(info.value)
    assert re.search(re.escape(source) + r"[^:\n]*: offset \d+: ", text), text[-3000:]
    assert "NullPointerException" not in text and "ExecutorLostFailure" not in text, text[-3000:]
    if isinstance(info.value, IndexFormatError):  # raised on the driver (or converted there from the JVM's)
        assert source in info.value.source
    elif engine == "jvm":
        cause = java_cause(info.value, "io.indexbridge.IndexFormatException")
        assert cause is not None and source in cause.source(), text[-3000:]
    else:  # raised by a task of the Python engine (PythonException)
        assert "IndexFormatError" in text, text[-3000:]


def truncate(path: Path, keep: float) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


# -- deletion files and hash indexes (Arrow kernels) -----------------------------------------------


def _deletes(spark, seed: int):
    rng = random.Random(seed)
    rows = [(b, f"data-{f}.parquet", p) for b in range(3) for f in range(b * 4, b * 4 + 4) for p in rng.sample(range(5000), 60)]
    return spark.createDataFrame(rows, "bucket int, file string, pos long")


def test_deletion_files_retried_or_doubled_are_a_clean_runs(spark, tmp_path):
    dvs = ibf.build_deletion_vectors(_deletes(spark, 1), group_cols=["bucket"]).cache()
    check_retries(spark, tmp_path, "deletion-files",
                  lambda d: ibf.write_deletion_files(dvs, str(d), group_cols=["bucket"], target_size=100).collect(), concurrent=True)


def test_damaged_deletion_files_fail_with_file_and_offset(spark, tmp_path):
    dvs = ibf.build_deletion_vectors(_deletes(spark, 2), group_cols=["bucket"])
    ranges = ibf.write_deletion_files(dvs, str(tmp_path), group_cols=["bucket"]).cache()
    rows = sorted(ranges.collect(), key=lambda r: (r["index_file"], r["offset"]))
    assert ibf.read_deletion_files(ranges, str(tmp_path)).count() == 12 * 60
    first = rows[0]
    path = tmp_path / first["index_file"]
    original = path.read_bytes()
    # a frame's magic number damaged
    damaged = bytearray(original)
    damaged[first["offset"] + 4] ^= 0xFF
    path.write_bytes(bytes(damaged))
    assert_format_error(lambda: ibf.read_deletion_files(ranges, str(tmp_path)).collect(), first["index_file"], "python")
    # the file cut short: its last range runs past the end
    path.write_bytes(original[: len(original) - 3])
    assert_format_error(lambda: ibf.read_deletion_files(ranges, str(tmp_path)).collect(), first["index_file"], "python")
    # a range past the end of an intact file
    path.write_bytes(original)
    this = (F.col("index_file") == first["index_file"]) & (F.col("offset") == first["offset"])
    past = ranges.withColumn("offset", F.when(this, F.lit(len(original) + 10)).otherwise(F.col("offset")))
    assert_format_error(lambda: ibf.read_deletion_files(past, str(tmp_path)).collect(), first["index_file"], "python")


def test_hash_indexes_retried_or_doubled_are_a_clean_runs(spark, tmp_path):
    keys = spark.range(3000).select((F.col("id") % 6).cast("int").alias("bucket"), (F.col("id") * 7919).alias("k"))
    check_retries(spark, tmp_path, "hash-index", lambda d: ibf.build_hash_index(keys, ["k"], str(d)).collect())


# -- file indexes ----------------------------------------------------------------------------------

FILE_INDEX_OPTIONS = {
    "file-index.bloom-filter.columns": "k",
    "file-index.bitmap.columns": "c",
    "file-index.bsi.columns": "v",
    "file-index.in-manifest-threshold": "1",
}


def _indexed_rows(spark, seed: int):
    rng = random.Random(seed)
    rows = [(f"data-{f}.parquet", p, rng.randrange(10_000), f"c{rng.randrange(5)}", rng.randrange(-50, 50))
            for f in range(6) for p in range(rng.randrange(20, 120))]
    return spark.createDataFrame(rows, "file string, pos long, k long, c string, v int")


@pytest.mark.parametrize("engine", engines(ENGINES_FILE_INDEX, "test_file_indexes_retried_or_doubled_are_a_clean_runs"))
def test_file_indexes_retried_or_doubled_are_a_clean_runs(spark, tmp_path, engine):
    data = _indexed_rows(spark, 3).cache()
    check_retries(spark, tmp_path, "file-index",
                  lambda d: ibf.build_file_indexes(data, options=FILE_INDEX_OPTIONS, directory=str(d), engine=engine).collect())


@pytest.mark.parametrize("engine", engines(ENGINES_FILE_INDEX, "test_damaged_file_indexes_fail_with_file_and_offset"))
def test_damaged_file_indexes_fail_with_file_and_offset(spark, tmp_path, engine):
    data = _indexed_rows(spark, 4)
    indexes = ibf.build_file_indexes(data, options=FILE_INDEX_OPTIONS, directory=str(tmp_path)).cache()
    indexes.count()
    target = sorted(tmp_path.glob("*.index"))[2]
    original = target.read_bytes()
    target.write_bytes(original[: int(len(original) * random.Random(len(engine)).uniform(0.3, 0.97))])
    assert_format_error(lambda: ibf.prune_files(indexes, "k = 5 AND v > 3", data.schema, engine=engine).collect(), target.name, engine)
    damaged = bytearray(original)
    damaged[0] ^= 0xFF  # the container's magic
    target.write_bytes(bytes(damaged))
    assert_format_error(lambda: ibf.prune_files(indexes, "c = 'c1'", data.schema, engine=engine).collect(), target.name, engine)


# -- zap segments ----------------------------------------------------------------------------------

MAPPINGS = [FieldMapping("body"), FieldMapping("tag", analyzer="keyword"), FieldMapping("n", type="number", include_in_all=False)]


def _docs(spark, seed: int, n: int = 120):
    rng = random.Random(seed)
    rows = [(f"doc-{i:04d}", " ".join(rng.choices(WORDS, k=rng.randint(1, 8))), f"t{rng.randrange(4)}", float(rng.randrange(100)))
            for i in range(n)]
    return spark.createDataFrame(rows, "id string, body string, tag string, n double").repartition(3, "id")


@pytest.mark.parametrize("engine", engines(ENGINES_ZAP, "test_zap_builds_and_merges_retried_or_doubled_are_a_clean_runs"))
def test_zap_builds_and_merges_retried_or_doubled_are_a_clean_runs(spark, tmp_path, engine):
    docs = _docs(spark, 5).cache()
    segments = check_retries(spark, tmp_path / "build", "zap-build", lambda d: ibf.build_zap_segments(
        docs, str(d), fields=MAPPINGS, rows_per_segment=15, engine=engine).collect(), concurrent=engine == "jvm")
    assert len(segments) > 3  # several segments per task: the first attempt failed after the first
    source = tmp_path / "build" / "clean"
    deletes = ibf.zap_ids(str(source)).where(F.col("_id").endswith("3")).select("segment", "doc")
    check_retries(spark, tmp_path / "merge", "zap-merge", lambda d: ibf.merge_zap_segments(
        str(source), str(d), group_size=2, deletes=deletes, engine=engine).collect())


@pytest.fixture(scope="module")
def zap_corpus(spark, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("zap")
    ibf.build_zap_segments(_docs(spark, 6, 60), str(root), fields=MAPPINGS, rows_per_segment=30).collect()
    return root


def _zap_reads(root: str, engine: str):
    return {
        "documents": lambda: ibf.zap_documents(root, engine=engine).collect(),
        "postings": lambda: ibf.zap_postings(root, engine=engine).collect(),
        "prefix_search": lambda: ibf.zap_prefix_search(root, "body", "sp", engine=engine).collect(),
    }


@pytest.mark.parametrize("engine", engines(ENGINES_ZAP, "test_damaged_zap_segments_fail_with_file_and_offset"))
def test_damaged_zap_segments_fail_with_file_and_offset(spark, zap_corpus, tmp_path, engine):
    root = tmp_path / "segs"
    shutil.copytree(zap_corpus, root)
    target = sorted(root.glob("*.zap"))[1]
    original = target.read_bytes()
    keep = random.Random(7 + len(engine)).uniform(0.3, 0.99)
    target.write_bytes(original[: int(len(original) * keep)])
    for read in _zap_reads(str(root), engine).values():
        assert_format_error(read, target.name, engine)
    out = tmp_path / "merged"
    assert_format_error(lambda: ibf.merge_zap_segments(str(root), str(out), group_size=2, engine=engine).collect(), target.name, engine)
    # the other groups' merges may have run: whole segments of intact inputs, nothing partial
    for left in out.iterdir() if out.exists() else ():
        assert left.suffix == ".zap" and Segment.open(str(left)).num_docs > 0, left
    # the footer's offsets pointing past the end of the file
    damaged = bytearray(original)
    damaged[-20:-12] = (len(original) * 4).to_bytes(8, "big")
    target.write_bytes(bytes(damaged))
    assert_format_error(_zap_reads(str(root), engine)["documents"], target.name, engine)


@pytest.mark.parametrize("engine", engines(ENGINES_ZAP, "test_zap_merge_rejects_unknown_deletes_before_writing"))
def test_zap_merge_rejects_unknown_deletes_before_writing(spark, zap_corpus, tmp_path, engine):
    segments = sorted(str(p) for p in zap_corpus.glob("*.zap"))
    out = tmp_path / "merged"
    cases = [
        (spark.createDataFrame([(segments[0], 1), (str(zap_corpus / "nope.zap"), 0)], "segment string, doc long"), "nope.zap"),
        (spark.createDataFrame([(segments[1], 30)], "segment string, doc long"), "doc 30 of segment"),
        (spark.createDataFrame([(segments[0], -1)], "segment string, doc long"), "doc -1 of segment"),
        (spark.createDataFrame([(segments[0], "doc-9999")], "segment string, _id string"), "doc-9999"),
        (spark.createDataFrame([(str(zap_corpus / "gone.zap"), "doc-0001")], "segment string, _id string"), "gone.zap"),
    ]
    for deletes, named in cases if engine == "jvm" else cases[1::2]:  # the checks run before the engines part
        with pytest.raises(Exception, match=re.escape(named)) as info:
            ibf.merge_zap_segments(str(zap_corpus), str(out), group_size=2, deletes=deletes, engine=engine).collect()
        assert java_cause(info.value, "java.lang.IllegalArgumentException") is not None
        assert not out.exists() or not list(out.iterdir())


# -- bleve index directories -----------------------------------------------------------------------

BLEVE_MAPPING = {"default_mapping": {"dynamic": True, "properties": {
    "body": {"fields": [{"type": "text", "analyzer": "standard", "store": True, "index": True, "include_in_all": True}]},
    "n": {"fields": [{"type": "number", "store": True, "index": True}]}}}}


def _bleve_docs(spark, seed: int):
    rng = random.Random(seed)
    rows = [(f"d{i:03d}", " ".join(rng.choices(WORDS, k=rng.randint(1, 6))), float(rng.randrange(50))) for i in range(90)]
    return spark.createDataFrame(rows, "id string, body string, n double").repartition(3, "id")


@pytest.mark.parametrize("engine", engines(ENGINES_ZAP, "test_bleve_writes_retried_are_a_clean_runs"))
def test_bleve_writes_retried_are_a_clean_runs(spark, tmp_path, engine):
    docs = _bleve_docs(spark, 8).cache()
    written = check_retries(spark, tmp_path, "bleve-write", lambda d: ibf.write_bleve_index(
        docs, str(d / "idx.bleve"), mapping=BLEVE_MAPPING, rows_per_segment=10, engine=engine).collect())
    assert len([n for n in written if n.endswith(".zap")]) > 3


@pytest.fixture(scope="module")
def bleve_index(spark, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bleve") / "idx.bleve"
    ibf.write_bleve_index(_bleve_docs(spark, 9), str(root), mapping=BLEVE_MAPPING, rows_per_segment=30).collect()
    return root


@pytest.mark.parametrize("engine", engines(ENGINES_ZAP, "test_damaged_bleve_indexes_fail_with_file_and_offset"))
def test_damaged_bleve_indexes_fail_with_file_and_offset(spark, bleve_index, tmp_path, engine):
    root = tmp_path / "idx.bleve"
    shutil.copytree(bleve_index, root)
    reads = {
        "read": lambda: ibf.read_bleve_index(spark, str(root), engine=engine).collect(),
        "search": lambda: ibf.search_bleve_index(spark, str(root), {"match": "spark", "field": "body"}, engine=engine).collect(),
    }
    segment = sorted((root / "store").glob("*.zap"))[1]
    truncate(segment, 0.6)
    for read in reads.values():
        assert_format_error(read, segment.name, engine)
    shutil.rmtree(root)
    shutil.copytree(bleve_index, root)
    bolt = root / "store" / "root.bolt"
    bolt.write_bytes(bolt.read_bytes()[:8192])  # the two meta pages, none of the pages they point to
    for read in reads.values():
        assert_format_error(read, "root.bolt", engine)


# -- Paimon tables ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dv_table(tmp_path_factory) -> Path:
    """An append table with deletion vectors, written by Paimon 1.4.2's Java API (several data files)."""
    return Path(create_table(tmp_path_factory.mktemp("paimon"), "t", "append", 31, "file-index.*=-",
                             "deletion-vectors.enabled=true", "file-index.in-manifest-threshold=1"))


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
METADATA = ("snapshot/", "manifest/", "schema/")


def _table_files(root: Path) -> tuple[list[tuple[str, bytes]], list[str]]:
    """The files the tasks wrote (data and index files; commit-specific uuids in names replaced) with
    their bytes, and the names of the commit's metadata files (uuids replaced)."""
    found = files(root)
    data = sorted((UUID.sub("<uuid>", n), b) for n, b in found.items() if not n.startswith(METADATA))
    return data, sorted(UUID.sub("<uuid>", n) for n in found if n.startswith(METADATA))


@pytest.mark.parametrize("job", ["rewrite-file-index", "delete", "load"])
def test_paimon_commits_retried_are_a_clean_runs(spark, dv_table, tmp_path, job):
    runs = {
        "rewrite-file-index": lambda p: ibf.rewrite_paimon_file_indexes(spark, str(p), {"file-index.bloom-filter.columns": "id",
                                                                                      "file-index.bitmap.columns": "id"}),
        "delete": lambda p: ibf.delete_paimon_rows(spark, str(p), "id % 3 = 0"),
        "load": lambda p: ibf.load_paimon_table(spark, str(p), spark.range(400).select(
            (F.col("id") * 7 % 401).alias("k"), (F.col("id") * 3).alias("v")), primary_key=["k"],
            options={"dynamic-bucket.target-row-num": "20"}),
    }
    results = []
    for name, failing in (("clean", False), ("retried", True)):
        target = tmp_path / name / "t"
        if job != "load":
            shutil.copytree(dv_table, target)
        if failing:
            with first_attempts_fail(spark, job):
                summary = runs[job](target)
        else:
            summary = runs[job](target)
        assert summary["snapshot"] is not None
        results.append(_table_files(target))
    (clean_data, clean_meta), (retried_data, retried_meta) = results
    assert retried_data == clean_data and retried_meta == clean_meta
    assert not [n for n, _ in clean_data if n.endswith(".tmp") or "/." in n]


@pytest.fixture(scope="module")
def paimon_damaged(spark, dv_table, tmp_path_factory) -> Path:
    """The table with rows deleted (deletion files) and file indexes written as ``.index`` files."""
    path = tmp_path_factory.mktemp("paimon-damaged") / "t"
    shutil.copytree(dv_table, path)
    ibf.delete_paimon_rows(spark, str(path), "id % 4 = 1")
    ibf.rewrite_paimon_file_indexes(spark, str(path), {"file-index.bloom-filter.columns": "id", "file-index.bitmap.columns": "id"})
    return path


def test_damaged_paimon_tables_fail_with_file_and_offset(spark, paimon_damaged, tmp_path):
    some_id = ibf.read_paimon(spark, str(paimon_damaged)).first()["id"]
    for kind in ("deletion file", "deletion file past its end", "file index"):
        path = tmp_path / kind.replace(" ", "-") / "t"
        shutil.copytree(paimon_damaged, path)
        if kind.startswith("deletion file"):
            target = sorted((path / "index").glob("index-*"))[0]
            data = target.read_bytes()
            if kind == "deletion file":
                damaged = bytearray(data)
                damaged[1 + 4] ^= 0xFF  # the first frame's magic number (after the version byte and length)
                target.write_bytes(bytes(damaged))
            else:
                target.write_bytes(data[: len(data) - 5])
            where = None
        else:
            for target in path.rglob("*.index"):  # every one: the data file holding some_id is not pruned by its statistics
                truncate(target, 0.5)
            where = f"id = {some_id}"
        source = target.name if where is None else ".parquet.index"
        assert_format_error(lambda: ibf.read_paimon(spark, str(path), where=where).collect(), source, "jvm")
        # the Scala API (io.indexbridge.spark.Paimon), its DataFrame collected in the JVM
        jvm = spark._jvm.io.indexbridge.spark.Paimon
        assert_format_error(lambda: jvm.readForPython(spark._jsparkSession, str(path), None, where, None).collect(), source, "jvm")
