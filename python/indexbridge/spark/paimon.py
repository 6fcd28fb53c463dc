"""Paimon tables in PySpark: thin py4j wrappers over ``io.indexbridge.spark.Paimon`` (Scala), which
plans on the driver and reads in Spark tasks (deletion vectors, file-index pruning and
merge-on-read all in the JVM; no bitmap bytes cross py4j).

::

    rows = read_paimon(spark, "/warehouse/db.db/orders", where="region = 3 AND amount > 100")
    files = paimon_plan(spark, "/warehouse/db.db/orders", where="region = 3")

The session needs the indexbridge jar (``indexbridge.spark.configure``); Paimon's own jars are
not needed. Planning errors (a damaged or unsupported table) raise
:class:`~indexbridge.errors.IndexFormatError`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, SparkSession

from indexbridge.errors import IndexFormatError

_ERROR_CLASS = "io.indexbridge.IndexFormatException"


def _paimon(spark: SparkSession):
    return spark._jvm.io.indexbridge.spark.Paimon


def _where(where: str | Column | None):
    if where is None or isinstance(where, str):
        return where
    if isinstance(where, Column):
        return where._jc
    raise TypeError(f"where must be a SQL condition (str) or a Column, got {type(where).__name__}")


def _call(spark: SparkSession, call) -> DataFrame:
    from py4j.protocol import Py4JJavaError

    try:
        return DataFrame(call(_paimon(spark)), spark)
    except Py4JJavaError as e:
        error = e.java_exception
        if error.getClass().getName() == _ERROR_CLASS:
            raise IndexFormatError(str(error.source()), int(error.offset()), str(error.expected())) from None
        raise


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
