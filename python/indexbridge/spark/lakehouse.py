"""Deletion vectors of Iceberg v3 (Puffin) and Delta Lake in PySpark, with two engines that
write the same files and return the same rows:

* ``engine="jvm"`` (default): ``io.indexbridge.spark.Lakehouse``, the Scala implementation, on
  the executors;
* ``engine="python"``: Arrow kernels over the Python codecs (:mod:`indexbridge.iceberg.puffin`,
  :mod:`indexbridge.delta.dv`) and bridges.

::

    deletes = spark.read.parquet(...).select("file", "pos")      # (data file, deleted position)
    ice = write_iceberg_dvs(deletes, "/warehouse/db/t/data")      # Iceberg DeleteFile rows
    dl = write_delta_dvs(deletes, "/tables/t", prefix_length=2)   # (data_file, deletionVector)
    gone = read_delta_dvs(spark, "/tables/t", as_dv=True)         # for apply_deletion_vectors

Writes: the positions are aggregated into 64-bit DVs in the JVM (``ib_dv_agg``, the session
must be ``configure``d), then each task writes one file of the DVs it holds, to a temporary name
renamed into place. A file is named after its bytes (:func:`content_uuid`), so a retried task
writes the same name and bytes, two jobs never overwrite each other's files, and both engines
name a file alike. Reads and the Paimon bridge run one task per file. The DataFrames are lazy:
the files are written when the returned DataFrame is computed (cache or collect it once).

Bad input fails with :class:`~indexbridge.errors.IndexFormatError` naming the file and offset:
raised directly when found on the driver (a Delta log, a Paimon table); when found by a task (a
damaged blob, a descriptor past its file) the job fails with Spark's exception around it (the
Python engine's ``PythonException``; the JVM engine's names ``IndexFormatException``).
"""

from __future__ import annotations

import hashlib
import os
import re
import string
import unicodedata
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from indexbridge.delta import bridge as delta_bridge
from indexbridge.delta import log as delta_log
from indexbridge.delta.dv import DeletionVectorDescriptor, encode_dv_file, read_frame_of, write_encoded_dv_file
from indexbridge.iceberg import bridge as iceberg_bridge
from indexbridge.iceberg.puffin import delete_files, encode_deletion_vector_puffin, read_deletion_vectors
from indexbridge.jvm import python_errors
from indexbridge.spark.engine import Engine, check_engine
from indexbridge.storage import write_atomically

POSITIONS = pa.schema([("file", pa.string()), ("pos", pa.int64())])
DVS = pa.schema([("file", pa.string()), ("dv", pa.binary())])
ICEBERG_DELETE_FILES = pa.schema(
    [
        ("file_path", pa.string()),
        ("file_size_in_bytes", pa.int64()),
        ("content_offset", pa.int64()),
        ("content_size_in_bytes", pa.int64()),
        ("referenced_data_file", pa.string()),
        ("record_count", pa.int64()),
    ]
)
DELTA_DESCRIPTOR = pa.struct(
    [
        ("storageType", pa.string()),
        ("pathOrInlineDv", pa.string()),
        ("offset", pa.int32()),
        ("sizeInBytes", pa.int32()),
        ("cardinality", pa.int64()),
    ]
)
DELTA_DVS = pa.schema([("data_file", pa.string()), ("deletionVector", DELTA_DESCRIPTOR)])
PAIMON_TO_ICEBERG = pa.schema([("data_file", pa.string()), *ICEBERG_DELETE_FILES])

# Delta's random prefixes are alphanumeric (``Random.alphanumeric``); ours are derived from the
# file's content hash so that a retried task picks the same directory.
_PREFIX_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def content_uuid(content: bytes) -> uuid.UUID:
    """The UUID a file is named after: Java's ``UUID.nameUUIDFromBytes`` of its bytes (MD5,
    version 3), as the Scala engine names it. A task's frames are encoded in name order, so
    whatever order its rows came in, a retried task writes the same name and bytes."""
    return uuid.UUID(bytes=hashlib.md5(content).digest(), version=3)


def _table(batches: Iterator[pa.RecordBatch]) -> pa.Table | None:
    batches = [b for b in batches if b.num_rows]
    return pa.Table.from_batches(batches) if batches else None


def _frames(table: pa.Table) -> tuple[list[str], list[bytes], list[int]]:
    return table.column("file").to_pylist(), table.column("dv").to_pylist(), table.column("cardinality").to_pylist()


# -- kernels (plain functions over pyarrow data) -----------------------------------------------


def write_puffin_kernel(out_dir: str):
    """mapInArrow kernel: a task's (file, dv = 64-bit frame, cardinality) rows → one Puffin file
    ``<out_dir>/<content uuid>-deletes.puffin`` as Iceberg writes it; its DeleteFile rows."""

    def kernel(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = _table(batches)
        if table is None:
            return
        # blobs in Iceberg's HashMap order, which within a bucket follows insertion: insert sorted
        content, blobs = encode_deletion_vector_puffin(sorted(zip(*_frames(table))))
        path = Path(out_dir).absolute() / f"{content_uuid(content)}-deletes.puffin"
        write_atomically(path, content)
        yield pa.RecordBatch.from_pylist([f.to_json() for f in delete_files(str(path), len(content), blobs)], schema=ICEBERG_DELETE_FILES)

    return kernel


def random_prefix(value: uuid.UUID, length: int) -> str:
    """``length`` alphanumeric characters derived from ``value``, its base-62 digits lowest
    first (Delta's random prefix; the Scala engine derives the same)."""
    n = value.int
    out = []
    for _ in range(length):
        n, digit = divmod(n, len(_PREFIX_ALPHABET))
        out.append(_PREFIX_ALPHABET[digit])
    return "".join(out)


def write_delta_kernel(table_dir: str, prefix_length: int):
    """mapInArrow kernel: a task's (file, dv, cardinality) rows → one Delta DV file
    ``<table>/<prefix>/deletion_vector_<content uuid>.bin``; (data_file, deletionVector) rows."""

    def kernel(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = _table(batches)
        if table is None:
            return
        in_order = sorted(zip(*_frames(table)))  # the same bytes whatever order the rows came in
        content, offsets = encode_dv_file(frame for _, frame, _ in in_order)
        file_uuid = content_uuid(content)
        written = write_encoded_dv_file(table_dir, in_order, content, offsets, random_prefix=random_prefix(file_uuid, prefix_length), file_uuid=file_uuid)
        yield pa.RecordBatch.from_pylist([{"data_file": name, "deletionVector": d.to_json()} for name, d in written], schema=DELTA_DVS)

    return kernel


def _positions_or_dvs(as_dv: bool, names: list[str], frames: list[bytes], dvs: list) -> pa.RecordBatch:
    if as_dv:
        return pa.RecordBatch.from_arrays([pa.array(names, pa.string()), pa.array(frames, pa.binary())], schema=DVS)
    counts = [dv.cardinality for dv in dvs]
    files = pa.DictionaryArray.from_arrays(pa.array(np.repeat(np.arange(len(names), dtype=np.int32), counts)), pa.array(names, pa.string()))
    positions = np.concatenate([dv.positions().view(np.int64) for dv in dvs]) if dvs else np.empty(0, np.int64)
    return pa.RecordBatch.from_arrays([files.cast(pa.string()), pa.array(positions, pa.int64())], schema=POSITIONS)


def read_puffin_kernel(paths: Sequence[str], as_dv: bool):
    """mapInArrow kernel over task ids: the DV blobs of ``paths[id]`` (every check of
    :func:`~indexbridge.iceberg.puffin.read_deletion_vectors`) as (file, pos) or (file, dv)."""

    def kernel(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for i in batch.column(0).to_pylist():
                data = Path(paths[i]).read_bytes()
                blobs = read_deletion_vectors(data, source=paths[i])
                names = [b.properties["referenced-data-file"] for b, _ in blobs]
                frames = [data[b.offset:b.offset + b.length] for b, _ in blobs]
                yield _positions_or_dvs(as_dv, names, frames, [dv for _, dv in blobs])

    return kernel


def read_delta_kernel(table_dir: str, groups: Sequence[Sequence[tuple[str, DeletionVectorDescriptor]]], source: str, as_dv: bool):
    """mapInArrow kernel over task ids: the DVs of ``groups[id]`` (data files whose DVs share a
    DV file, or inline ones), read and checked as Delta reads them."""

    def kernel(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for i in batch.column(0).to_pylist():
                files: dict[str, bytes] = {}
                names, frames, dvs = [], [], []
                for name, descriptor in groups[i]:
                    frame, dv = read_frame_of(descriptor, table_dir, files=files, source=f"{source}: {name}")
                    names.append(name)
                    frames.append(bytes(frame))
                    dvs.append(dv)
                yield _positions_or_dvs(as_dv, names, frames, dvs)

    return kernel


def _per_task(spark: SparkSession, n: int, kernel: Callable, schema: pa.Schema) -> DataFrame:
    """One task per item 0..n-1 (the kernel gets the ids)."""
    if n == 0:
        return spark.createDataFrame([], from_arrow_schema(schema))
    return spark.range(0, n, 1, n).mapInArrow(kernel, from_arrow_schema(schema))


# -- DataFrame functions -----------------------------------------------------------------------


def _jvm_call(spark: SparkSession, call: Callable[[Any], Any]) -> DataFrame:
    """``engine="jvm"``: a function of ``io.indexbridge.spark.Lakehouse`` (Scala). What the
    driver's planning throws is raised as the Python engine raises it: an IndexFormatException (a
    damaged Delta log, a Paimon table) as IndexFormatError, an IllegalArgumentException (a version
    the log does not hold) as ValueError."""
    with python_errors():
        return DataFrame(call(spark._jvm.io.indexbridge.spark.Lakehouse), spark)


def _aggregated(dvs: DataFrame, file_col: str, pos_col: str) -> DataFrame:
    from indexbridge.spark.functions import build_deletion_vectors, dv_cardinality

    built = build_deletion_vectors(dvs, file_col=file_col, pos_col=pos_col, bitmap64=True)
    return built.select(F.col(file_col).alias("file"), "dv", dv_cardinality("dv").alias("cardinality"))


def write_iceberg_dvs(
    dvs: DataFrame, out_dir: str | os.PathLike[str], *, file_col: str = "file", pos_col: str = "pos", engine: Engine = "jvm"
) -> DataFrame:
    """Iceberg v3 deletion vectors of (file, pos) rows (``file``: the data file's location as
    Iceberg's metadata records it): one Puffin file per task under ``out_dir``, blobs and
    footer as Iceberg 1.11 writes them. Returns per data file the fields of its Iceberg
    ``DeleteFile`` (format PUFFIN): file_path, file_size_in_bytes, content_offset,
    content_size_in_bytes, referenced_data_file, record_count."""
    check_engine(engine)
    if engine == "jvm":
        return _jvm_call(dvs.sparkSession, lambda lh: lh.writeIcebergDvs(dvs._jdf, os.fspath(out_dir), file_col, pos_col))
    kernel = write_puffin_kernel(os.fspath(out_dir))
    return _aggregated(dvs, file_col, pos_col).mapInArrow(kernel, from_arrow_schema(ICEBERG_DELETE_FILES))


def write_delta_dvs(
    dvs: DataFrame,
    table_dir: str | os.PathLike[str],
    *,
    file_col: str = "file",
    pos_col: str = "pos",
    prefix_length: int = 0,
    engine: Engine = "jvm",
) -> DataFrame:
    """Delta deletion vectors of (file, pos) rows: one DV file per task under the table root
    (in a random-prefix directory of ``prefix_length`` characters, as ``delta.randomizeFilePrefixes``
    tables have them). Returns (data_file, deletionVector struct<storageType, pathOrInlineDv,
    offset, sizeInBytes, cardinality>): the ``u`` descriptor for the data file's ``add`` action."""
    check_engine(engine)
    if prefix_length < 0:
        raise ValueError(f"prefix_length must be >= 0, got {prefix_length}")
    if engine == "jvm":
        return _jvm_call(dvs.sparkSession, lambda lh: lh.writeDeltaDvs(dvs._jdf, os.fspath(table_dir), file_col, pos_col, prefix_length))
    kernel = write_delta_kernel(os.path.abspath(table_dir), prefix_length)
    return _aggregated(dvs, file_col, pos_col).mapInArrow(kernel, from_arrow_schema(DELTA_DVS))


def paimon_dvs_to_iceberg(
    spark: SparkSession,
    table_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    snapshot: int | None = None,
    *,
    engine: Engine = "jvm",
) -> DataFrame:
    """``indexbridge iceberg dv-from-paimon`` in Spark tasks, one per Paimon deletion file: its
    frames copied into ``out_dir/<deletion file>.puffin``; the rows of ``delete-files.jsonl``."""
    check_engine(engine)
    if engine == "jvm":
        return _jvm_call(spark, lambda lh: lh.paimonToIcebergForPython(spark._jsparkSession, os.fspath(table_dir), os.fspath(out_dir), snapshot))
    out = Path(out_dir).absolute()
    files = [f for f in iceberg_bridge.paimon_deletion_files(table_dir, snapshot) if f.dvs]

    def kernel(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for i in batch.column(0).to_pylist():
                written = iceberg_bridge.deletion_file_to_puffin(files[i], out)
                yield pa.RecordBatch.from_pylist([{"data_file": name, **f.to_json()} for name, f in written], schema=PAIMON_TO_ICEBERG)

    return _per_task(spark, len(files), kernel, PAIMON_TO_ICEBERG)


def paimon_dvs_to_delta(
    spark: SparkSession,
    table_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    snapshot: int | None = None,
    storage: str = "u",
    *,
    engine: Engine = "jvm",
) -> DataFrame:
    """``indexbridge delta dv-from-paimon`` in Spark tasks, one per Paimon deletion file
    (``out_dir`` is the Delta table root); the rows of ``descriptors.jsonl``."""
    check_engine(engine)
    if storage not in ("u", "p"):
        raise ValueError(f"storage must be 'u' or 'p', got {storage!r}")
    if engine == "jvm":
        return _jvm_call(
            spark, lambda lh: lh.paimonToDeltaForPython(spark._jsparkSession, os.fspath(table_dir), os.fspath(out_dir), snapshot, storage)
        )
    out = Path(out_dir).absolute()
    files = [f for f in iceberg_bridge.paimon_deletion_files(table_dir, snapshot) if f.dvs]

    def kernel(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for i in batch.column(0).to_pylist():
                written = delta_bridge.deletion_file_to_delta(files[i], out, storage)
                yield pa.RecordBatch.from_pylist([{"data_file": name, "deletionVector": d.to_json()} for name, d in written], schema=DELTA_DVS)

    return _per_task(spark, len(files), kernel, DELTA_DVS)


def read_iceberg_dvs(
    spark: SparkSession, puffin_paths: Sequence[str | os.PathLike[str]], *, as_dv: bool = False, engine: Engine = "jvm"
) -> DataFrame:
    """The ``deletion-vector-v1`` blobs of Puffin files, one task per file, every magic, offset,
    CRC and cardinality checked: (file, pos) rows (``file`` = the blob's referenced data file),
    or with ``as_dv`` (file, dv) rows for ``apply_deletion_vectors``."""
    check_engine(engine)
    paths = [os.path.abspath(p) for p in puffin_paths]
    if engine == "jvm":
        return _jvm_call(spark, lambda lh: lh.readIcebergDvs(spark._jsparkSession, spark._jvm.PythonUtils.toSeq(paths), as_dv))
    return _per_task(spark, len(paths), read_puffin_kernel(paths, as_dv), DVS if as_dv else POSITIONS)


# java.net.URI's multi-argument constructors, which Hadoop's Path and so Spark's file paths go
# through, leave these ASCII characters of a path as they are and percent-encode every other one
# as UTF-8; characters beyond ASCII stay unless they are spaces or controls. Hand-written because
# the join key must be Spark's string to the byte (urllib's quote escapes "!", "é", ...).
_URI_PATH_CHARS = frozenset(string.ascii_letters + string.digits + "_-!.~'()*,;:$&+=/@")


def _uri_char(ch: str) -> bool:
    """Whether java.net.URI keeps ``ch`` of a path as it is."""
    return ch in _URI_PATH_CHARS or (ch > "\x7f" and unicodedata.category(ch) not in ("Zs", "Zl", "Zp", "Cc"))


def _uri_path(path: str) -> str:
    return "".join(ch if _uri_char(ch) else "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")) for ch in path)


def _kept(path: str) -> bool:
    """Whether Hadoop's Path resolves the relative URI path ``path`` as :func:`spark_file_path`
    does without it: its characters those above, escapes of UTF-8 or other non-ASCII characters,
    and its decoded segments neither empty nor dot segments (no query, fragment or "//")."""
    try:
        decoded = unquote(path, errors="strict")
    except UnicodeDecodeError:
        return False
    return all(map(_uri_char, _URI_ESCAPE.sub("", path))) and all(segment not in ("", ".", "..") for segment in decoded.split("/"))


_URI_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_URI_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")


def spark_file_path(table: str | os.PathLike[str], add_path: str) -> str:
    """A Delta ``add.path`` as Spark's ``_metadata.file_path`` shows the data file of a Delta
    read: an absolute URI as it is; a relative one (a URI, so percent-encoded) decoded, put under
    the absolute table root and encoded again as Hadoop's ``Path.toUri`` encodes it. A path
    outside the form Delta writes (a character java.net.URI refuses, a query or a fragment, an
    empty or dot segment, an authority) is resolved by Hadoop's Path itself, in the driver's JVM,
    as Delta resolves it; one it refuses raises ValueError naming it."""
    scheme, colon, rest = add_path.partition(":")
    if colon and "/" not in scheme:  # an absolute URI
        if _URI_SCHEME.fullmatch(scheme) and rest.startswith("/") and _kept(rest[1:]):
            return add_path
    elif _kept(add_path):
        return "file:" + _uri_path(os.path.abspath(table) + "/" + unquote(add_path))
    return _hadoop_file_path(table, add_path)


def _hadoop_file_path(table: str | os.PathLike[str], add_path: str) -> str:
    """:func:`spark_file_path` by Hadoop's Path: ``Lakehouse.sparkFilePath``'s steps (Delta's
    ``absolutePath``, then ``Path.toUri``), for the paths whose escapes, dot segments, queries and
    fragments only Hadoop resolves as Hadoop does."""
    from py4j.protocol import Py4JError

    from indexbridge.jvm import jvm

    j = jvm()
    hadoop_path = j.org.apache.hadoop.fs.Path
    try:
        child = hadoop_path(j.java.net.URI(add_path))
        if not child.isAbsolute():
            child = hadoop_path(hadoop_path("file", None, os.path.abspath(table)), child)
        return child.toUri().toString()
    except Py4JError as error:
        cause = getattr(error, "java_exception", None)
        raise ValueError(f"add.path {add_path!r} of the Delta table {table}: not a path Delta resolves ({cause or error})") from None


def read_delta_dvs(
    spark: SparkSession, table_dir: str | os.PathLike[str], version: int | None = None, *, as_dv: bool = False, engine: Engine = "jvm"
) -> DataFrame:
    """The deletion vectors of a Delta table's version (latest by default; checkpoints
    honoured), one task per DV file (inline DVs in one more): (file, pos) rows, or with
    ``as_dv`` (file, dv) rows for ``apply_deletion_vectors``; ``file`` is the data file as
    Spark's ``_metadata.file_path`` shows it. Each DV is checked as Delta checks it (size, CRC,
    cardinality) and more (version byte, magic, the descriptor inside its file)."""
    check_engine(engine)
    if engine == "jvm":
        return _jvm_call(spark, lambda lh: lh.readDeltaDvsForPython(spark._jsparkSession, os.fspath(table_dir), version, as_dv))
    snap = delta_log.snapshot(table_dir, version)
    table = os.fspath(snap.table.absolute())
    groups: dict[str, list[tuple[str, DeletionVectorDescriptor]]] = {}
    for add in snap.files_with_deletion_vectors():
        d = add.deletion_vector
        key = "" if d.storage_type == "i" else os.fspath(d.absolute_path(table))
        groups.setdefault(key, []).append((spark_file_path(table, add.path), d))
    tasks = list(groups.values())
    kernel = read_delta_kernel(table, tasks, f"{table}/_delta_log (version {snap.version})", as_dv)
    return _per_task(spark, len(tasks), kernel, DVS if as_dv else POSITIONS)
