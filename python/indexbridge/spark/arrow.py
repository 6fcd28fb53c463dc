"""Arrow kernels run by Spark's Python workers (`mapInArrow`, `applyInArrow`).

Each kernel is a plain function over pyarrow data, so it can be tested without Spark. Bulk
work is numpy and pyroaring, never a Python loop per row.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from indexbridge.paimon.bucket import encode_hash_index
from indexbridge.paimon.dv import (
    DeletionVector,
    DeletionVectorRange,
    read_deletion_vectors,
    write_deletion_files,
)
from indexbridge.paimon.fileindex.container import (
    FileIndexContainer,
    build_file_index,
    embedded_in_manifest,
    in_manifest_threshold,
)
from indexbridge.paimon.fileindex.predicate import BitmapResult, Predicate
from indexbridge.paimon.fileindex.values import DataType
from indexbridge.spark.faults import fail_first_attempt
from indexbridge.storage import write_atomically

DELETION_FILE_ROWS = pa.schema(
    [
        ("index_file", pa.string()),
        ("file_size", pa.int64()),
        ("row_count", pa.int32()),
        ("data_file", pa.string()),
        ("offset", pa.int32()),
        ("length", pa.int32()),
        ("cardinality", pa.int64()),
    ]
)

HASH_INDEX_ROWS = pa.schema([("index_file", pa.string()), ("file_size", pa.int64()), ("row_count", pa.int32())])

DELETED_POSITIONS = pa.schema([("data_file", pa.string()), ("pos", pa.int64())])


def index_file_name(group: Sequence[object], n: int) -> str:
    """Paimon's `index-<uuid>-<n>` name, with the uuid derived from the group key so that a
    retried task writes the same file under the same name."""
    key = json.dumps([str(v) for v in group])
    return f"index-{uuid.uuid5(uuid.NAMESPACE_URL, 'indexbridge:' + key)}-{n}"


def _group_key(table: pa.Table, group_cols: Sequence[str]) -> list[object]:
    return [table.column(c)[0].as_py() for c in group_cols]


def _with_group(rows: pa.Table, table: pa.Table, group_cols: Sequence[str], key: list[object]) -> pa.Table:
    for name, value in zip(reversed(group_cols), reversed(key)):
        rows = rows.add_column(0, pa.field(name, table.schema.field(name).type), pa.array([value] * rows.num_rows, table.schema.field(name).type))
    return rows


def write_deletion_files_kernel(
    directory: str, group_cols: Sequence[str], file_col: str, dv_col: str, target_size: int | None
):
    """applyInArrow kernel: one group's (data file, serialized DV) rows → its deletion file(s),
    written as Paimon's maintainer writes them (frames in Java HashMap order, rolling at the
    target size); returns the index-manifest rows (one per DV range)."""

    def kernel(table: pa.Table) -> pa.Table:
        if table.num_rows == 0:
            return DELETION_FILE_ROWS.empty_table()
        key = _group_key(table, group_cols)
        # by data file: the rows arrive in shuffle order, which a retried task need not see again,
        # and the frames' order (Java HashMap order on equal hashes) and rolling follow it
        table = table.sort_by(file_col)
        names = table.column(file_col).to_pylist()
        frames = table.column(dv_col).to_pylist()
        dvs = [
            (name, DeletionVector.deserialize(frame, source=f"<DV of {name}>"))
            for name, frame in zip(names, frames)
        ]
        metas = write_deletion_files(
            directory, dvs, target_size=target_size, order="hashmap", file_name=lambda n: index_file_name(key, n)
        )
        fail_first_attempt("deletion-files")
        columns: dict[str, list] = {f.name: [] for f in DELETION_FILE_ROWS}
        for meta in metas:
            for r in meta.ranges:
                for name, value in (
                    ("index_file", meta.file_name),
                    ("file_size", meta.file_size),
                    ("row_count", meta.row_count),
                    ("data_file", r.data_file),
                    ("offset", r.offset),
                    ("length", r.length),
                    ("cardinality", r.cardinality),
                ):
                    columns[name].append(value)
        return _with_group(pa.table(columns, schema=DELETION_FILE_ROWS), table, group_cols, key)

    return kernel


def read_deletion_files_kernel(directory: str):
    """mapInArrow kernel: index-manifest rows → (data_file, pos) rows, reading each deletion file
    once per batch and exploding positions with numpy."""
    root = Path(directory)

    def kernel(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            table = pa.Table.from_batches([batch])
            for index_file in pc.unique(table.column("index_file")).to_pylist():
                rows = table.filter(pc.equal(table.column("index_file"), index_file))
                ranges = [
                    DeletionVectorRange(d, o, n, c)
                    for d, o, n, c in zip(
                        rows.column("data_file").to_pylist(),
                        rows.column("offset").to_pylist(),
                        rows.column("length").to_pylist(),
                        rows.column("cardinality").to_pylist(),
                    )
                ]
                for data_file, dv in read_deletion_vectors(root / index_file, ranges).items():
                    positions = dv.to_arrow()
                    names = pa.DictionaryArray.from_arrays(pa.array(np.zeros(len(positions), np.int32)), pa.array([data_file]))
                    yield pa.RecordBatch.from_arrays([names.cast(pa.string()), positions], schema=DELETED_POSITIONS)

    return kernel


def apply_deletion_vectors_kernel(pos_col: str, dv_col: str):
    """Cogrouped applyInArrow kernel: one data file's rows and its DV row (if any) → the rows
    whose position the DV does not delete (a numpy sorted-search, no per-row Python)."""

    def kernel(data: pa.Table, dvs: pa.Table) -> pa.Table:
        if dvs.num_rows == 0 or data.num_rows == 0:
            return data
        deleted = DeletionVector.deserialize(dvs.column(dv_col)[0].as_py(), source="<DV column>").positions()
        positions = data.column(pos_col).to_numpy().astype(np.uint64, copy=False)
        idx = np.searchsorted(deleted, positions)
        hit = idx < len(deleted)
        hit[hit] = deleted[idx[hit]] == positions[hit]
        return data.filter(pa.array(~hit))

    return kernel


def hash_index_kernel(directory: str, group_cols: Sequence[str], hash_col: str):
    """applyInArrow kernel: one bucket's key hashes → its HASH index file, in the order Paimon's
    `IntHashSet` iterates after adding them (hashes are added in ascending order, so that a
    retried task writes the same bytes whatever order Spark delivered the rows in)."""

    def kernel(table: pa.Table) -> pa.Table:
        if table.num_rows == 0:
            return HASH_INDEX_ROWS.empty_table()
        key = _group_key(table, group_cols)
        hashes = np.sort(table.column(hash_col).to_numpy())
        data = encode_hash_index(hashes.tolist(), order="paimon")
        name = index_file_name(key, 0)
        write_atomically(Path(directory) / name, data)
        fail_first_attempt("hash-index")
        rows = pa.table({"index_file": [name], "file_size": [len(data)], "row_count": [len(data) // 4]}, schema=HASH_INDEX_ROWS)
        return _with_group(rows, table, group_cols, key)

    return kernel


# -- Paimon file indexes -----------------------------------------------------------------------

FILE_INDEX_ROWS = pa.schema(
    [
        pa.field("file", pa.string(), nullable=False),
        ("embedded", pa.binary()),
        ("index_file", pa.string()),
        pa.field("size", pa.int64(), nullable=False),
        pa.field(
            "indexes",
            pa.list_(pa.struct([
                pa.field("column", pa.string(), nullable=False),
                pa.field("index_type", pa.string(), nullable=False),
                pa.field("length", pa.int32(), nullable=False),
            ])),
            nullable=False,
        ),
    ]
)  # fmt: skip

PRUNED_FILES = pa.schema(
    [
        pa.field("file", pa.string(), nullable=False),
        pa.field("skipped", pa.bool_(), nullable=False),
        ("rows", pa.binary()),
        ("candidates", pa.int64()),
    ]
)


def file_index_row(
    file: str,
    rows: pa.Table,
    pos_col: str,
    options: Sequence[tuple[str, str]],
    fields: Mapping[str, DataType],
    directory: str | None,
) -> dict:
    """One data file's container from its rows (any order; positions must be 0 .. n-1), embedded
    when at most ``file-index.in-manifest-threshold`` bytes, else written atomically to
    ``<directory>/<file>.index``: the index row (``FILE_INDEX_ROWS``)."""
    rows = rows.sort_by(pos_col)
    positions = rows.column(pos_col).to_numpy()
    if not np.array_equal(positions, np.arange(len(positions))):
        raise ValueError(f"{file}: positions must be 0 .. n-1, each once (every row of the data file)")
    table_options = dict(options)
    columns = {
        name: rows.column(name).to_pylist() if fields[name].root == "MAP" else rows.column(name)
        for name in indexed_columns(options)
    }
    data = build_file_index(table_options, fields, columns, options_order=[k for k, _ in options])
    threshold = in_manifest_threshold(table_options)
    index_file = None
    if not embedded_in_manifest(len(data), threshold):
        if directory is None:
            raise ValueError(
                f"the file index of {file} is {len(data)} bytes, over file-index.in-manifest-threshold = "
                f"{threshold}: pass a directory to write it to"
            )
        index_file = str(Path(directory) / f"{file}.index")
        write_atomically(index_file, data)
    entries = [
        {"column": e.column, "index_type": e.index_type, "length": e.length}
        for e in FileIndexContainer(data, source=file).entries
    ]
    return {
        "file": file,
        "embedded": data if index_file is None else None,
        "index_file": index_file,
        "size": len(data),
        "indexes": entries,
    }


def indexed_columns(options: Sequence[tuple[str, str]]) -> list[str]:
    """The data columns the ``file-index.<type>.columns`` options name (``m`` for ``m[key]``)."""
    names: dict[str, None] = {}
    for key, value in options:
        if key.startswith("file-index.") and key.endswith(".columns"):
            for name in value.split(","):
                name = name.strip()
                if name:
                    nested = name.find("[")
                    names[name[:nested] if nested > 0 and name.endswith("]") else name] = None
    return list(names)


def build_file_indexes_kernel(
    file_col: str, pos_col: str, options: Sequence[tuple[str, str]], fields: Mapping[str, DataType], directory: str | None
):
    """applyInArrow kernel: one data file's rows → its index row (see ``file_index_row``)."""

    def kernel(table: pa.Table) -> pa.Table:
        if table.num_rows == 0:
            return FILE_INDEX_ROWS.empty_table()
        row = file_index_row(table.column(file_col)[0].as_py(), table, pos_col, options, fields, directory)
        fail_first_attempt("file-index")
        return pa.Table.from_pylist([row], schema=FILE_INDEX_ROWS)

    return kernel


def prune_files_kernel(predicate: Predicate, fields: Mapping[str, DataType]):
    """mapInArrow kernel: index rows (file, embedded, index_file) → (file, skipped, rows,
    candidates) by the Python ``FileIndexPredicate``; ``rows`` is the candidate row set as
    portable roaring bytes, null when every row remains."""

    def kernel(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            out: dict[str, list] = {f.name: [] for f in PRUNED_FILES}
            for file, embedded, index_file in zip(*(batch.column(c).to_pylist() for c in ("file", "embedded", "index_file"))):
                if embedded is not None:
                    container = FileIndexContainer(embedded, source=f"<embedded file index of {file}>")
                else:
                    container = FileIndexContainer(Path(index_file).read_bytes(), source=index_file)
                result = container.predicate(fields).evaluate(predicate)
                rows = result.rows if isinstance(result, BitmapResult) and result.remain else None
                if rows is not None:
                    rows.run_optimize()
                out["file"].append(file)
                out["skipped"].append(not result.remain)
                out["rows"].append(None if rows is None else rows.serialize())
                out["candidates"].append(None if rows is None else len(rows))
            yield pa.RecordBatch.from_pydict(out, schema=PRUNED_FILES)

    return kernel


def paimon_type(spark_type) -> DataType | None:
    """The Paimon type Paimon's Spark connector gives a Spark column (``SparkTypeUtils``), or
    None when the file indexes cannot index it: TIMESTAMP is TIMESTAMP_LTZ(6), TIMESTAMP_NTZ is
    TIMESTAMP(6), STRING is VARCHAR, BINARY is VARBINARY, MAP<STRING, T> is a map of T."""
    from pyspark.sql import types as T

    simple = {
        T.BooleanType: "BOOLEAN", T.ByteType: "TINYINT", T.ShortType: "SMALLINT", T.IntegerType: "INTEGER",
        T.LongType: "BIGINT", T.FloatType: "FLOAT", T.DoubleType: "DOUBLE", T.DateType: "DATE",
        T.StringType: "VARCHAR", T.BinaryType: "VARBINARY",
    }  # fmt: skip
    for spark_class, root in simple.items():
        if isinstance(spark_type, spark_class):
            return DataType(root)
    if isinstance(spark_type, T.TimestampType):
        return DataType("TIMESTAMP_WITH_LOCAL_TIME_ZONE", 6)
    if isinstance(spark_type, T.TimestampNTZType):
        return DataType("TIMESTAMP_WITHOUT_TIME_ZONE", 6)
    if isinstance(spark_type, T.DecimalType):
        return DataType("DECIMAL", spark_type.precision, spark_type.scale)
    if isinstance(spark_type, T.MapType) and isinstance(spark_type.keyType, T.StringType):
        value = paimon_type(spark_type.valueType)
        if value is not None and value.root != "MAP":
            return DataType("MAP", key=DataType("VARCHAR"), value=value)
    return None


def paimon_fields(schema) -> dict[str, DataType]:
    """The indexable fields of a Spark ``StructType`` with their Paimon types."""
    fields = {f.name: paimon_type(f.dataType) for f in schema.fields}
    return {name: t for name, t in fields.items() if t is not None}
