"""Paimon tables in PySpark: thin py4j wrappers over ``io.indexbridge.spark.Paimon`` (Scala), which
plans on the driver and reads in Spark tasks (deletion vectors, file-index pruning and
merge-on-read all in the JVM; no bitmap bytes cross py4j).

::

    rows = read_paimon(spark, "/warehouse/db.db/orders", where="region = 3 AND amount > 100")
    files = paimon_plan(spark, "/warehouse/db.db/orders", where="region = 3")

The session needs the indexbridge jar (``indexbridge.spark.configure``); Paimon's own jars are
not needed. Planning errors raise :class:`~indexbridge.errors.IndexFormatError` (a damaged or
unsupported table) or ValueError (an argument the JVM refuses with IllegalArgumentException).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, SparkSession

from indexbridge.jvm import python_errors


def _paimon(spark: SparkSession):
    return spark._jvm.io.indexbridge.spark.Paimon


def _where(where: str | Column | None):
    if where is None or isinstance(where, str):
        return where
    if isinstance(where, Column):
        return where._jc
    raise TypeError(f"where must be a SQL condition (str) or a Column, got {type(where).__name__}")


def _call(spark: SparkSession, call) -> DataFrame:
    with python_errors():
        return DataFrame(call(_paimon(spark)), spark)


def read_paimon(
    spark: SparkSession,
    path: str | os.PathLike[str],
    snapshot: int | None = None,
    where: str | Column | None = None,
    columns: Sequence[str] | None = None,
) -> DataFrame:
    """The live rows of the Paimon table at ``path`` (its latest snapshot, or ``snapshot``):
    rows deleted by deletion vectors dropped, primary keys merged, data files that the partition
    filter, bucket selection, statistics and file indexes rule out not read, then ``where`` (a
    Spark SQL condition or a Column) applied exactly; ``columns`` (all by default) in order."""
    jcolumns = None if columns is None else list(columns)
    return _call(spark, lambda p: p.readForPython(spark._jsparkSession, str(path), snapshot, _where(where), jcolumns))


def paimon_plan(
    spark: SparkSession,
    path: str | os.PathLike[str],
    snapshot: int | None = None,
    where: str | Column | None = None,
) -> DataFrame:
    """One row per data file of the snapshot: ``partition`` (struct), ``bucket``, ``file``,
    ``level``, ``row_count``, ``schema_id``, ``deletion_vector`` (``index_file``, ``offset``,
    ``length``, ``cardinality``, or null), ``file_index`` (``embedded``, ``index_file``,
    ``indexes``: column -> index types, or null) and, with ``where``, ``index_result``
    (``remain``/``skip``, Paimon's ``FileIndexPredicate``) and ``read`` (whether the read opens
    the file)."""
    return _call(spark, lambda p: p.planForPython(spark._jsparkSession, str(path), snapshot, _where(where)))


# ------------------------------------------------------------------------------------------------
# Writing: ``io.indexbridge.spark.PaimonWrite`` (Scala) does the work in Spark tasks and commits
# one snapshot (or, for a load into a deletion-vector table, two) as Paimon's own commit does.


class PaimonCommitConflict(RuntimeError):
    """Another writer changed what a write job rewrites or deletes from (a concurrent compaction,
    a concurrent assignment of keys to buckets): nothing was committed and the job's files were
    removed. Run the job again on the new snapshot."""


_CONFLICT_CLASS = "io.indexbridge.paimon.table.CommitConflictException"


def _write(spark: SparkSession, call) -> dict:
    import json

    with python_errors({_CONFLICT_CLASS: PaimonCommitConflict}):
        return json.loads(call(spark._jvm.io.indexbridge.spark.PaimonWrite))


def _options(options: dict[str, str] | Sequence[tuple[str, str]] | None) -> tuple[list[str] | None, list[str] | None]:
    if options is None:
        return None, None
    pairs = list(options.items()) if isinstance(options, dict) else list(options)
    return [str(k) for k, _ in pairs], [str(v) for _, v in pairs]


def rewrite_paimon_file_indexes(
    spark: SparkSession,
    path: str | os.PathLike[str],
    options: dict[str, str] | Sequence[tuple[str, str]] | None = None,
    partitions: str | None = None,
    only_missing: bool = False,
) -> dict:
    """Rebuilds the file indexes of the latest snapshot's data files as Paimon's
    ``rewrite_file_index`` procedure does, and commits them (one COMPACT snapshot).

    The indexes are the table's ``file-index.*`` options with ``options`` put over them (for this
    rewrite only); each data file's container goes into the manifest when it is at most
    ``file-index.in-manifest-threshold`` bytes, otherwise to ``<data file>.index`` (after an
    existing ``.index`` file: ``-1.index``, ``-2.index`` ..., the old indexes of still-configured
    columns kept). ``partitions`` (a condition on partition columns) limits the rewrite;
    ``only_missing`` skips files that already have every index asked for. Returns the summary:
    ``snapshot`` (None when nothing changed), ``commit_kind``, ``data_files``, ``embedded``,
    ``index_files``, ``without_index``, ``attempts``."""
    keys, values = _options(options)
    return _write(spark, lambda w: w.rewriteFileIndexesForPython(spark._jsparkSession, str(path), keys, values, partitions, only_missing))


def delete_paimon_rows(spark: SparkSession, path: str | os.PathLike[str], where: str | Column) -> dict:
    """Deletes the rows where ``where`` (Spark SQL or a Column) holds from an append table with
    ``deletion-vectors.enabled``: the positions are found in Spark tasks, merged with the old
    deletion vectors and written as new deletion files (rolling at
    ``deletion-vector.index-file.target-size``), committed as one OVERWRITE snapshot, as a DELETE
    through Paimon's connector does. Returns ``snapshot``, ``commit_kind``, ``data_files``,
    ``deleted_rows``, ``deletion_files_added``, ``deletion_files_removed``, ``attempts``."""
    return _write(spark, lambda w: w.deleteForPython(spark._jsparkSession, str(path), _where(where)))


def load_paimon_table(
    spark: SparkSession,
    path: str | os.PathLike[str],
    df: DataFrame,
    primary_key: Sequence[str] | None = None,
    partition_by: Sequence[str] | None = None,
    options: dict[str, str] | Sequence[tuple[str, str]] | None = None,
) -> dict:
    """Bulk-loads ``df`` into the dynamic-bucket primary-key table (``bucket = -1``) at ``path``;
    a directory without a table is created from ``df``'s columns with ``primary_key`` (required
    then), ``partition_by`` and ``options``. Keys go to buckets as Paimon's ``HashBucketAssigner``
    puts them (``dynamic-bucket.target-row-num``), the last row of a key wins, each bucket's rows
    are written sorted with its HASH index, and one APPEND snapshot is committed (buckets that
    had data on a deletion-vector table are then compacted in a COMPACT snapshot). Returns
    ``snapshot``, ``commit_kind``, ``rows``, ``data_files``, ``buckets``, ``new_buckets``,
    ``compacted_buckets``, ``partitions``, ``attempts``."""
    keys, values = _options(options)
    pk = None if primary_key is None else list(primary_key)
    parts = None if partition_by is None else list(partition_by)
    return _write(spark, lambda w: w.loadForPython(spark._jsparkSession, str(path), df._jdf, pk, parts, keys, values))
