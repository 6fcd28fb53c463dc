"""indexbridge's Spark API for Python.

Column functions wrap the JVM `ib_` SQL functions one to one (they run natively on the
executors; the session must be `configure`d). DataFrame functions combine them with the Arrow
kernels of `indexbridge.spark.arrow` for the work that has to run in Python.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.column import Column as ColumnType
from pyspark.sql.types import StructType

from indexbridge.conformance.paimon import typed_value
from indexbridge.paimon.fileindex.container import indexed_type
from indexbridge.paimon.fileindex.predicate import Predicate, predicate_from_json
from indexbridge.spark import arrow
from indexbridge.spark.bleve import read_bleve_index, search_bleve_index, write_bleve_index  # noqa: F401 (re-exported)
from indexbridge.spark.paimon import (  # noqa: F401 (Paimon tables, re-exported)
    delete_paimon_rows,
    load_paimon_table,
    paimon_plan,
    read_paimon,
    rewrite_paimon_file_indexes,
)

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


# -- Paimon file indexes ---------------------------------------------------------------------


def _options_map(options: Mapping[str, str]) -> Column:
    """A ``map<string, string>`` literal keeping the mapping's order (Paimon's container layout
    depends on the order its options were given in)."""
    return F.create_map(*[F.lit(str(x)) for kv in options.items() for x in kv])


def bloom_filter_agg(value: ColumnOrName, options: Mapping[str, str] | None = None) -> Column:
    """Aggregate: Paimon's bloom-filter index payload of a data file's values (options ``items``,
    ``fpp``; row order does not matter)."""
    args = [_col(value)] + ([_options_map(options)] if options else [])
    return F.call_function("ib_bloom_filter_agg", *args)


def bitmap_index_agg(position: ColumnOrName, value: ColumnOrName, options: Mapping[str, str] | None = None) -> Column:
    """Aggregate: Paimon's bitmap index payload of a data file's (position, value) rows (options
    ``version``, ``index-block-size``); positions must be 0 .. n-1."""
    args = [_col(position), _col(value)] + ([_options_map(options)] if options else [])
    return F.call_function("ib_bitmap_index_agg", *args)


def bsi_agg(position: ColumnOrName, value: ColumnOrName) -> Column:
    """Aggregate: Paimon's bit-slice index payload of a data file's (position, value) rows."""
    return F.call_function("ib_bsi_agg", _col(position), _col(value))


def range_bitmap_agg(position: ColumnOrName, value: ColumnOrName, options: Mapping[str, str] | None = None) -> Column:
    """Aggregate: Paimon's range-bitmap index payload of a data file's (position, value) rows
    (option ``chunk-size``); positions must be 0 .. n-1."""
    args = [_col(position), _col(value)] + ([_options_map(options)] if options else [])
    return F.call_function("ib_range_bitmap_agg", *args)


def file_index_agg(position: ColumnOrName, columns: ColumnOrName, options: Mapping[str, str]) -> Column:
    """Aggregate: Paimon's file index container of a data file's (position, struct of columns)
    rows from the table's ``file-index.*`` options, as ``DataFileIndexWriter`` writes it."""
    return F.call_function("ib_file_index_agg", _col(position), _col(columns), _options_map(options))


def row_set_contains(rows: ColumnOrName, position: ColumnOrName) -> Column:
    """Whether a candidate row set (``prune_files``' ``rows``; null = every row) holds the position."""
    return F.call_function("ib_row_set_contains", _col(rows), _col(position))


def _file_indexes_jvm(spark: SparkSession):
    return spark._jvm.io.indexbridge.spark.FileIndexes


def build_file_indexes(
    data: DataFrame,
    *,
    file_col: str = "file",
    pos_col: str = "pos",
    options: Mapping[str, str],
    directory: str | None = None,
    engine: str = "jvm",
) -> DataFrame:
    """One Paimon file index container per data file from its rows (``file_col``, ``pos_col`` =
    the row's position 0 .. n-1 in the file, and the indexed columns), configured by the table's
    ``file-index.*`` options. Returns (file, embedded, index_file, size, indexes): ``embedded``
    holds containers of at most ``file-index.in-manifest-threshold`` bytes (default 500), larger
    ones are written atomically to ``<directory>/<file>.index``; ``indexes`` lists (column,
    index_type, length). ``engine="jvm"`` aggregates with ``ib_file_index_agg``, ``"arrow"`` runs
    the Python codecs in an ``applyInArrow`` kernel; both give the same bytes."""
    if engine == "jvm":
        keys, values = list(options), [str(v) for v in options.values()]
        jdf = _file_indexes_jvm(data.sparkSession).build(data._jdf, file_col, pos_col, keys, values, directory)
        return DataFrame(jdf, data.sparkSession)
    if engine != "arrow":
        raise ValueError(f"engine must be 'jvm' or 'arrow', got {engine!r}")
    pairs = [(k, str(v)) for k, v in options.items()]
    fields = arrow.paimon_fields(data.schema)
    columns = arrow.indexed_columns(pairs)
    missing = [c for c in columns if c not in fields]
    if missing:
        raise ValueError(f"indexed columns {missing} are missing from the data or of a type Paimon cannot index")
    kernel = arrow.build_file_indexes_kernel(file_col, pos_col, pairs, fields, directory)
    rows = data.select(file_col, pos_col, *columns)
    return rows.groupBy(file_col).applyInArrow(kernel, _spark_schema(arrow.FILE_INDEX_ROWS))


def file_index_predicate(condition: str | Column, schema: StructType) -> Predicate:
    """The file-index predicate tree of a Spark condition over data files of ``schema``: analysed
    and translated by the JVM (``FileIndexConditions``: what an index cannot decide answers
    REMAIN), handed over as small JSON, literals converted to the columns' types."""
    spark = SparkSession.active()
    jcondition = condition._jc if isinstance(condition, ColumnType) else condition
    text = _file_indexes_jvm(spark).predicateJson(jcondition, schema.json())
    fields = arrow.paimon_fields(schema)

    def literal(column: str, value: object) -> object:
        data_type = indexed_type(column, fields)
        return typed_value({"root": data_type.root}, value) if data_type is not None else value

    return predicate_from_json(json.loads(text), literal)


def prune_files(indexes: DataFrame, condition: str | Column, schema: StructType, *, engine: str = "jvm") -> DataFrame:
    """Per data file of ``build_file_indexes``' rows: (file, skipped, rows, candidates) for a
    condition (SQL text or Column) over data files of ``schema``. ``rows`` is the candidate row
    set (portable roaring bytes) when the indexes narrow the file to some rows, null when every
    row may match; it stays on the executors (see ``apply_pruning``)."""
    if engine == "jvm":
        jcondition = condition._jc if isinstance(condition, ColumnType) else condition
        jdf = _file_indexes_jvm(indexes.sparkSession).prune(indexes._jdf, jcondition, schema.json())
        return DataFrame(jdf, indexes.sparkSession)
    if engine != "arrow":
        raise ValueError(f"engine must be 'jvm' or 'arrow', got {engine!r}")
    kernel = arrow.prune_files_kernel(file_index_predicate(condition, schema), arrow.paimon_fields(schema))
    return indexes.select("file", "embedded", "index_file").mapInArrow(kernel, _spark_schema(arrow.PRUNED_FILES))


def apply_pruning(data: DataFrame, pruned: DataFrame, *, file_col: str = "file", pos_col: str = "pos") -> DataFrame:
    """The rows of ``data`` whose file ``pruned`` does not skip and whose position is among its
    candidate rows (a JVM join and ``ib_row_set_contains``)."""
    jdf = _file_indexes_jvm(data.sparkSession).applyPruning(data._jdf, pruned._jdf, file_col, pos_col)
    return DataFrame(jdf, data.sparkSession)


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

# -- Iceberg v3 and Delta Lake deletion vectors (indexbridge.spark.lakehouse) ------------------

from indexbridge.spark.lakehouse import (  # noqa: E402  (re-exported: one namespace for users)
    paimon_dvs_to_delta,
    paimon_dvs_to_iceberg,
    read_delta_dvs,
    read_iceberg_dvs,
    write_delta_dvs,
    write_iceberg_dvs,
)
