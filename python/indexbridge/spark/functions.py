"""indexbridge's Spark API for Python.

Column functions wrap the JVM `ib_` SQL functions one to one (they run natively on the
executors; the session must be `configure`d). DataFrame functions combine them with the Arrow
kernels of `indexbridge.spark.arrow` for the work that has to run in Python.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.column import Column as ColumnType

from indexbridge.spark import arrow

ColumnOrName = Column | str

DEFAULT_DELETION_FILE_TARGET_SIZE = 2 * 1024 * 1024  # deletion-vector.index-file.target-size


def _col(c: ColumnOrName) -> Column:
    return c if isinstance(c, ColumnType) else F.col(c)


# -- column functions (JVM) ------------------------------------------------------------------


def dv_agg(position: ColumnOrName, bitmap64: bool = False) -> Column:
    """Aggregate: the serialized Paimon deletion vector of each group's positions."""
    return F.call_function("ib_dv_agg", _col(position), F.lit(bitmap64))


def dv_cardinality(dv: ColumnOrName) -> Column:
    """The number of deleted positions of a serialized deletion vector."""
    return F.call_function("ib_dv_cardinality", _col(dv))


def dv_contains(dv: ColumnOrName, position: ColumnOrName) -> Column:
    """Whether `position` is deleted in the serialized deletion vector."""
    return F.call_function("ib_dv_contains", _col(dv), _col(position))


def dv_positions(dv: ColumnOrName) -> Column:
    """Generator: one row `pos` per deleted position, ascending."""
    return F.call_function("ib_dv_positions", _col(dv))


def key_hash(*columns: ColumnOrName) -> Column:
    """Paimon's dynamic-bucket key hash (`BinaryRow.hashCode()`) of the columns."""
    return F.call_function("ib_key_hash", *[_col(c) for c in columns])


# -- DataFrame functions ---------------------------------------------------------------------


def build_deletion_vectors(
    deletes: DataFrame,
    *,
    file_col: str = "file",
    pos_col: str = "pos",
    group_cols: Sequence[str] = (),
    bitmap64: bool = False,
) -> DataFrame:
    """(group…, file, dv): one deletion vector per data file from (file, pos) rows (JVM aggregate)."""
    return deletes.groupBy(*group_cols, file_col).agg(dv_agg(pos_col, bitmap64).alias("dv"))


def write_deletion_files(
    dvs: DataFrame,
    directory: str,
    *,
    file_col: str = "file",
    dv_col: str = "dv",
    group_cols: Sequence[str] = (),
    target_size: int | None = DEFAULT_DELETION_FILE_TARGET_SIZE,
) -> DataFrame:
    """Write the deletion files of each group (Paimon writes one per partition and bucket) to
    `directory`, as Paimon's DV maintainer does, and return the index-manifest rows:
    (group…, index_file, file_size, row_count, data_file, offset, length, cardinality)."""
    schema = arrow.DELETION_FILE_ROWS
    for name in reversed(group_cols):
        schema = schema.insert(0, _arrow_field(dvs, name))
    kernel = arrow.write_deletion_files_kernel(directory, list(group_cols), file_col, dv_col, target_size)
    grouped = dvs.groupBy(*group_cols) if group_cols else dvs.groupBy(F.lit(0))
    return grouped.applyInArrow(kernel, _spark_schema(schema))


def read_deletion_files(ranges: DataFrame, directory: str) -> DataFrame:
    """(data_file, pos) rows of the deleted positions recorded by index-manifest rows (as
    returned by `write_deletion_files`)."""
    return ranges.select("index_file", "data_file", "offset", "length", "cardinality").mapInArrow(
        arrow.read_deletion_files_kernel(directory), "data_file string, pos bigint"
    )


def apply_deletion_vectors(
    data: DataFrame, dvs: DataFrame, *, file_col: str = "file", pos_col: str = "pos", dv_col: str = "dv"
) -> DataFrame:
    """The rows of `data` whose (file, pos) no deletion vector deletes. Each data file's rows are
    cogrouped with its DV and filtered by an Arrow kernel."""
    kernel = arrow.apply_deletion_vectors_kernel(pos_col, dv_col)
    return (
        data.groupBy(file_col)
        .cogroup(dvs.select(file_col, dv_col).groupBy(file_col))
        .applyInArrow(kernel, data.schema)
    )


def build_hash_index(
    rows: DataFrame, key_cols: Sequence[str], directory: str, *, group_cols: Sequence[str] = ("bucket",)
) -> DataFrame:
    """Write one dynamic-bucket HASH index file per group (partition/bucket) from the key
    hashes of `rows`, and return (group…, index_file, file_size, row_count)."""
    hashed = rows.select(*group_cols, key_hash(*key_cols).alias("_hash"))
    schema = arrow.HASH_INDEX_ROWS
    for name in reversed(group_cols):
        schema = schema.insert(0, _arrow_field(rows, name))
    kernel = arrow.hash_index_kernel(directory, list(group_cols), "_hash")
    return hashed.groupBy(*group_cols).applyInArrow(kernel, _spark_schema(schema))


def _arrow_field(df: DataFrame, name: str):
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_type

    return pa.field(name, to_arrow_type(df.schema[name].dataType))


def _spark_schema(schema) -> str:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema)


# -- zap segments (indexbridge.spark.zap) -----------------------------------------------------

from indexbridge.spark.zap import (  # noqa: E402  (re-exported: one namespace for users)
    build_zap_segments,
    merge_zap_segments,
    segment_paths,
    zap_doc_mapping,
    zap_documents,
    zap_ids,
    zap_postings,
    zap_prefix_search,
    zap_terms,
    zap_term_search,
)
