"""bleve zap v11 segments as Spark DataFrames, from Python.

Every function takes the segments as a DataFrame with a string column ``path`` (for instance what
:func:`merge_zap_segments` returns), a directory (its ``*.zap`` files) or a list of paths, and runs
one of two engines that return the same rows:

* ``engine="jvm"`` (default): ``io.indexbridge.spark.ZapSegments``, the Scala reader on the executors;
* ``engine="python"``: the Arrow kernels of :mod:`indexbridge.spark.zap_arrow` in ``mapInArrow``.

Only paths cross py4j and reach the executors; each task memory-maps its own segments.

::

    docs = zap_documents("/idx")                   # segment, doc, _id, field, type, value, array_positions
    terms = zap_terms("/idx")                      # segment, field, term, doc_freq
    hits = zap_postings("/idx")                    # segment, doc, field, term, freq, positions
    zap_term_search("/idx", "body", "spark")       # segment, doc, _id
    zap_prefix_search("/idx", "body", "spa")
    merged = merge_zap_segments("/idx", "/idx-merged", group_size=10, deletes=deleted)  # (segment, doc|_id) rows
    zap_doc_mapping(merged)                        # segment, doc, merged, new_doc (-1 = deleted)
    build_zap_segments(df, "/idx", id_col="id", fields=[FieldMapping("body"), FieldMapping("tag", analyzer="keyword")])
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from indexbridge.spark import zap_arrow
from indexbridge.spark.engine import Engine, check_engine
from indexbridge.spark.zap_arrow import Kernel
from indexbridge.zap.analyzers import FieldMapping
from indexbridge.zap.segment import DEFAULT_CHUNK_FACTOR

Segments = DataFrame | str | Sequence[str]


def _zap_jvm(spark: SparkSession) -> Any:
    return spark._jvm.io.indexbridge.spark.ZapSegments


def segment_paths(segments: Segments, segments_per_task: int = 1) -> DataFrame:
    """The segments as a DataFrame of ``path``. A directory stands for its ``*.zap`` files (sorted);
    a list keeps its order, ``segments_per_task`` consecutive paths per partition."""
    if isinstance(segments, DataFrame):
        return segments.select("path")
    spark = SparkSession.active()  # this thread's session, else the default one (jobs from a thread pool)
    paths: list[str] = []
    for p in [segments] if isinstance(segments, str) else segments:
        paths.extend(sorted(str(f) for f in Path(p).glob("*.zap")) if Path(p).is_dir() else [str(p)])
    jdf = _zap_jvm(spark).segmentPaths(spark._jsparkSession, spark._jvm.PythonUtils.toSeq(paths), segments_per_task)
    return DataFrame(jdf, spark)


JvmCall = Callable[[Any], Callable[[Any], Any]]  # ZapSegments (py4j) -> its function over a Java DataFrame


def _run(segments: Segments, engine: Engine, segments_per_task: int, jvm_call: JvmCall, kernel: Kernel,
         schema: pa.Schema) -> DataFrame:
    check_engine(engine)
    paths = segment_paths(segments, segments_per_task)
    if engine == "jvm":
        return DataFrame(jvm_call(_zap_jvm(paths.sparkSession))(paths._jdf), paths.sparkSession)
    return paths.mapInArrow(kernel, from_arrow_schema(schema))


def _bytes(value: str | bytes) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def zap_documents(segments: Segments, *, engine: Engine = "jvm", segments_per_task: int = 1) -> DataFrame:
    """Stored values, one row each, ``_id`` first per doc: (segment, doc, _id, field, type, value, array_positions)."""
    return _run(segments, engine, segments_per_task, lambda z: z.documents, zap_arrow.documents_kernel(), zap_arrow.DOCUMENTS)


def zap_ids(segments: Segments, *, engine: Engine = "jvm", segments_per_task: int = 1) -> DataFrame:
    """(segment, doc, _id) of every document."""
    return _run(segments, engine, segments_per_task, lambda z: z.ids, zap_arrow.ids_kernel(), zap_arrow.HITS)


def zap_terms(segments: Segments, *, engine: Engine = "jvm", segments_per_task: int = 1) -> DataFrame:
    """The term dictionaries: (segment, field, term, doc_freq); ``term`` is binary."""
    return _run(segments, engine, segments_per_task, lambda z: z.terms, zap_arrow.terms_kernel(), zap_arrow.TERMS)


def zap_postings(segments: Segments, *, engine: Engine = "jvm", segments_per_task: int = 1) -> DataFrame:
    """Every hit: (segment, doc, field, term, freq, positions); positions null without term vectors."""
    return _run(segments, engine, segments_per_task, lambda z: z.postings, zap_arrow.postings_kernel(), zap_arrow.POSTINGS)


def _search(segments: Segments, field: str, query: str | bytes, prefix: bool, engine: Engine, segments_per_task: int) -> DataFrame:
    check_engine(engine)
    q = _bytes(query)
    if prefix:
        return _run(segments, engine, segments_per_task, lambda z: lambda jdf: z.prefixSearch(jdf, field, q),
                    zap_arrow.prefix_search_kernel(field, q), zap_arrow.HITS)
    return _run(segments, engine, segments_per_task, lambda z: lambda jdf: z.termSearch(jdf, field, q),
                zap_arrow.term_search_kernel(field, q), zap_arrow.HITS)


def zap_term_search(
    segments: Segments, field: str, term: str | bytes, *, engine: Engine = "jvm", segments_per_task: int = 1
) -> DataFrame:
    """(segment, doc, _id) of the docs whose ``field`` holds ``term`` exactly."""
    return _search(segments, field, term, False, engine, segments_per_task)


def zap_prefix_search(
    segments: Segments, field: str, prefix: str | bytes, *, engine: Engine = "jvm", segments_per_task: int = 1
) -> DataFrame:
    """(segment, doc, _id) of the docs whose ``field`` holds a term starting with ``prefix``, each once."""
    return _search(segments, field, prefix, True, engine, segments_per_task)


def merge_zap_segments(
    segments: Segments,
    directory: str,
    *,
    group_size: int = 10,
    deletes: DataFrame | None = None,
    engine: Engine = "jvm",
    chunk_factor: int = DEFAULT_CHUNK_FACTOR,
) -> DataFrame:
    """Merge the segments (sorted by path), ``group_size`` consecutive ones per task, as zap's
    ``Merge`` does, without the docs ``deletes`` names — rows (segment, doc) or (segment, _id),
    ``segment`` being the path. Each merged segment is written atomically to ``directory``
    (named by a digest of its inputs). Returns (path, docs, size, fields, sources, new_docs):
    ``new_docs[i][d]`` is the new number of doc ``d`` of ``sources[i]`` (-1 = deleted)."""
    check_engine(engine)
    paths = segment_paths(segments)
    spark = paths.sparkSession
    z = _zap_jvm(spark)
    tasks = DataFrame(z.mergeTasks(paths._jdf, None if deletes is None else deletes._jdf, group_size), spark)
    if engine == "jvm":
        return DataFrame(z.mergeGroups(tasks._jdf, str(directory), chunk_factor), spark)
    return tasks.mapInArrow(zap_arrow.merge_kernel(str(directory), chunk_factor), from_arrow_schema(zap_arrow.MERGED))


def zap_doc_mapping(merged: DataFrame) -> DataFrame:
    """(segment, doc, merged, new_doc) from :func:`merge_zap_segments` rows: where each input doc went (-1 = deleted)."""
    per_source = merged.select(
        F.col("path").alias("merged"), F.posexplode(F.arrays_zip("sources", "new_docs")).alias("_i", "_s")
    )
    return per_source.select(
        F.col("_s.sources").alias("segment"), F.posexplode("_s.new_docs").alias("doc", "new_doc"), "merged"
    ).select("segment", "doc", "merged", "new_doc")


def build_zap_segments(
    docs: DataFrame,
    directory: str,
    *,
    fields: Sequence[FieldMapping | str],
    id_col: str = "id",
    rows_per_segment: int = 10_000,
    all_field: bool = True,
    engine: Engine = "jvm",
    chunk_factor: int = DEFAULT_CHUNK_FACTOR,
) -> DataFrame:
    """Index ``docs`` into zap segments under ``directory``, as bleve would from the same documents.

    ``fields`` maps columns to bleve fields (:class:`~indexbridge.zap.analyzers.FieldMapping`:
    type text/number/boolean/datetime, analyzer keyword/simple/standard, index, store,
    term_vectors, doc_values, include_in_all; a bare name is a standard-analysed text field); the
    ``id_col`` value (as a string) is the document's ``_id``. Each task writes one segment per
    ``rows_per_segment`` rows of its partition, in row order, named
    ``segment-<partition>-<n>.zap``; both engines write identical files. Returns
    (path, docs, size, fields), one row per segment."""
    check_engine(engine)
    mappings = [FieldMapping(f) if isinstance(f, str) else f for f in fields]
    if rows_per_segment <= 0:
        raise ValueError(f"rows_per_segment must be positive, got {rows_per_segment}")
    spark = docs.sparkSession
    if engine == "jvm":
        payload = json.dumps([dataclasses.asdict(m) for m in mappings])
        jdf = spark._jvm.io.indexbridge.spark.ZapBuild.build(
            docs._jdf, str(directory), id_col, payload, rows_per_segment, all_field, chunk_factor)
        return DataFrame(jdf, spark)
    rows = docs.select(F.col(id_col).cast("string").alias(id_col), *[m.name for m in mappings])
    kernel = zap_arrow.build_kernel(str(directory), id_col, mappings, rows_per_segment, all_field, chunk_factor)
    return rows.mapInArrow(kernel, from_arrow_schema(zap_arrow.SEGMENT_FILES))
