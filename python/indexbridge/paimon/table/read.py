"""Reading a plan to Arrow, as Paimon 1.4.2's split readers do (``RawFileSplitRead``,
``MergeFileSplitRead``, ``FormatReaderMapping``), then filtering exactly.

Per data file (Parquet or ORC, read with pyarrow)::

    columns        each table column is the file column with the same field id, found by its
                   name in the file's schema (renamed columns keep their id); a column added
                   after the file was written is null; a changed type is cast; partition
                   columns come from the partition, not from the file
    deletion       the file's deletion vector drops its rows by position (a numpy mask)

Per split: a raw split concatenates its files; a merge split (primary-key tables) sorts all rows
of its files by (trimmed primary key, ``sequence.field`` (nulls lose), ``_SEQUENCE_NUMBER``) and
keeps per key the last row (``deduplicate``; ``ignore-delete`` drops retractions first) or, for
``first-row``, the first row of the key's smallest level; rows whose ``_VALUE_KIND`` is a
retraction (-U = 1, -D = 3) are dropped (``DropDeleteReader``).

Then the condition is applied exactly (SQL's three-valued logic: a row is kept when the condition
is TRUE) and the columns are projected.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as orc
import pyarrow.parquet as pq

from indexbridge.errors import IndexFormatError
from indexbridge.paimon.binary_row import Timestamp
from indexbridge.paimon.dv import DeletionVector
from indexbridge.paimon.fileindex.condition import Inexact, column_value
from indexbridge.paimon.fileindex.container import indexed_type
from indexbridge.paimon.fileindex.predicate import And, Leaf, Or, Predicate
from indexbridge.paimon.fileindex.values import DataType
from indexbridge.paimon.table.scan import DataFileEntry, DataSplit, Plan, TableScan

SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
VALUE_KIND = "_VALUE_KIND"
_LEVEL = "__level"
_RETRACTIONS = pa.array([1, 3], pa.int8())
_UNITS = {3: "ms", 6: "us", 9: "ns"}


def arrow_type(t: DataType) -> pa.DataType:
    """The Arrow type of a Paimon type, as Paimon's Parquet files hold it."""
    match t.root:
        case "BOOLEAN":
            return pa.bool_()
        case "TINYINT":
            return pa.int8()
        case "SMALLINT":
            return pa.int16()
        case "INTEGER":
            return pa.int32()
        case "BIGINT":
            return pa.int64()
        case "FLOAT":
            return pa.float32()
        case "DOUBLE":
            return pa.float64()
        case "DECIMAL":
            return pa.decimal128(t.precision, t.scale)
        case "CHAR" | "VARCHAR":
            return pa.string()
        case "BINARY" | "VARBINARY":
            return pa.binary()
        case "DATE":
            return pa.date32()
        case "TIME_WITHOUT_TIME_ZONE":
            return pa.time32("ms")
        case "TIMESTAMP_WITHOUT_TIME_ZONE" | "TIMESTAMP_WITH_LOCAL_TIME_ZONE":
            unit = "ms" if t.precision <= 3 else "us" if t.precision <= 6 else "ns"
            return pa.timestamp(unit, tz="UTC" if t.root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE" else None)
        case "ARRAY":
            return pa.list_(arrow_type(t.element))
        case "MULTISET":
            return pa.map_(arrow_type(t.element), pa.int32())
        case "MAP":
            return pa.map_(arrow_type(t.key), arrow_type(t.value))
        case "ROW":
            return pa.struct([pa.field(name, arrow_type(ft), ft.nullable) for _, name, ft in t.fields])
    raise ValueError(f"no Arrow type for {t.root}")


def arrow_scalar(t: DataType, value: object) -> pa.Scalar:
    """An internal value (``condition.column_value``) as an Arrow scalar of the column's type."""
    at = arrow_type(t)
    if isinstance(value, Timestamp):
        nanos = value.millisecond * 1_000_000 + value.nano_of_millisecond
        return pa.scalar(nanos // {"ms": 1_000_000, "us": 1000, "ns": 1}[at.unit], at)
    return pa.scalar(value, at)


@lru_cache(maxsize=64)
def _file_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise IndexFormatError(str(path), 0, "the deletion file to exist (the index manifest references it)") from None


def deletion_vector(entry: DataFileEntry) -> DeletionVector | None:
    d = entry.deletion_file
    if d is None:
        return None
    data = _file_bytes(d.path)
    if d.offset + 4 > len(data):
        raise IndexFormatError(str(d.path), d.offset, f"the deletion vector of {entry.file.file_name} within the file's {len(data)} bytes")
    if data[:1] != b"\x01":
        raise IndexFormatError(str(d.path), 0, f"deletion file version 1, found {data[0] if data else 'an empty file'}")
    dv = DeletionVector.deserialize(data, source=str(d.path), offset=d.offset, expected_length=d.length)
    if d.cardinality is not None and dv.cardinality != d.cardinality:
        raise IndexFormatError(str(d.path), d.offset, f"{d.cardinality} deleted positions as the index manifest records, found {dv.cardinality}")
    return dv


def live_mask(entry: DataFileEntry, rows: int) -> np.ndarray | None:
    """False at the positions the file's deletion vector deletes (None: nothing deleted)."""
    dv = deletion_vector(entry)
    if dv is None or dv.cardinality == 0:
        return None
    positions = dv.positions()
    if positions[-1] >= rows:
        raise IndexFormatError(
            str(entry.deletion_file.path), entry.deletion_file.offset,
            f"positions below the {rows} rows of {entry.file.file_name}, found {positions[-1]}",
        )  # fmt: skip
    mask = np.ones(rows, bool)
    mask[positions] = False
    return mask


class TableRead:
    """Reads plans of ``scan``'s table into Arrow, projecting ``columns`` (all by default)."""

    def __init__(self, scan: TableScan, columns: Sequence[str] | None = None):
        self.scan = scan
        self.schema = scan.schema
        names = self.schema.field_names
        self.columns = list(columns) if columns is not None else names
        for c in self.columns:
            if c not in names:
                raise ValueError(f"no column {c!r} in the table (columns: {', '.join(names)})")
        self.arrow_schema = pa.schema([pa.field(f.name, arrow_type(f.type)) for f in self.schema.fields])
        options = scan.options
        self.sequence_fields = options.sequence_fields
        for f in self.sequence_fields:
            if f not in names:
                raise IndexFormatError(f"schema-{self.schema.id}", 0, f"sequence.field {f!r} among the columns")

    # -- one file

    def read_file(self, entry: DataFileEntry, columns: Sequence[str], system: bool) -> pa.Table:
        """The file's rows as table columns (+ ``_SEQUENCE_NUMBER``, ``_VALUE_KIND`` and its
        level when ``system``), deleted rows dropped."""
        file_fields = self.scan._file_fields(entry.file.schema_id)
        physical: dict[str, str] = {}
        for name in columns:
            f = self.schema.field(name)
            if name not in entry.partition and f.id in file_fields:
                physical[name] = file_fields[f.id][0]
        wanted = list(dict.fromkeys(physical.values())) + ([SEQUENCE_NUMBER, VALUE_KIND] if system else [])
        data = self._read_format(entry.path, wanted)
        if data.num_rows != entry.file.row_count:
            raise IndexFormatError(str(entry.path), 0, f"{entry.file.row_count} rows as the manifest records, found {data.num_rows}")
        rows = data.num_rows
        arrays, fields = [], []
        for name in columns:
            f = self.schema.field(name)
            target = arrow_type(f.type)
            if name in entry.partition:
                value = entry.partition[name]
                array = pa.nulls(rows, target) if value is None else pa.repeat(arrow_scalar(f.type, value), rows)
            elif name in physical:
                array = data.column(physical[name])
                if array.type != target:
                    array = array.cast(target)
                if f.type.root == "CHAR" and entry.path.suffix.lower() == ".orc":
                    array = pc.utf8_rtrim(array, " ")  # ORC pads CHAR(n); Paimon's ORC reader trims it
            else:
                array = pa.nulls(rows, target)
            arrays.append(array)
            fields.append(pa.field(name, target))
        if system:
            arrays += [data.column(SEQUENCE_NUMBER), data.column(VALUE_KIND).cast(pa.int8()), pa.array(np.full(rows, entry.file.level, np.int32))]
            fields += [pa.field(SEQUENCE_NUMBER, pa.int64()), pa.field(VALUE_KIND, pa.int8()), pa.field(_LEVEL, pa.int32())]
        table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
        mask = live_mask(entry, rows)
        return table if mask is None else table.filter(pa.array(mask))

    @staticmethod
    def _read_format(path: Path, columns: list[str]) -> pa.Table:
        suffix = path.suffix.lower()
        try:
            if suffix == ".parquet":
                file = pq.ParquetFile(path)
                present = set(file.schema_arrow.names)
                return file.read(columns=[c for c in columns if c in present])
            if suffix == ".orc":
                file = orc.ORCFile(path)
                present = set(file.schema.names)
                return file.read(columns=[c for c in columns if c in present])
        except FileNotFoundError:
            raise IndexFormatError(str(path), 0, "the data file to exist (the manifest references it)") from None
        except (pa.ArrowInvalid, OSError) as e:
            raise IndexFormatError(str(path), 0, f"a readable {suffix[1:]} data file: {e}") from None
        raise IndexFormatError(str(path), 0, "a Parquet or ORC data file (other formats are not supported)")

    # -- splits

    def read_split(self, split: DataSplit, columns: Sequence[str]) -> pa.Table | None:
        files = [e for e in split.files if e.pruned is None]
        if not files:
            return None
        if split.raw_convertible:
            return pa.concat_tables([self.read_file(e, columns, system=False) for e in files])
        keys = self.schema.trimmed_primary_keys
        needed = list(dict.fromkeys([*columns, *keys, *self.sequence_fields]))
        merged = self._merge(pa.concat_tables([self.read_file(e, needed, system=True) for e in files]), keys)
        return merged.select(list(columns))

    def _merge(self, table: pa.Table, keys: list[str]) -> pa.Table:
        options = self.scan.options
        first_row = options.merge_engine == "first-row"
        if options.ignore_delete:
            table = table.filter(pc.invert(pc.is_in(table.column(VALUE_KIND), _RETRACTIONS)))
        order = "descending" if options.sequence_descending else "ascending"
        sort = [(k, "ascending") for k in keys]
        if first_row:
            sort.append((_LEVEL, "ascending"))
        sort += [(f, order) for f in self.sequence_fields] + [(SEQUENCE_NUMBER, "ascending")]
        # nulls first: a null sequence field loses whichever the order (keys are never null)
        table = table.take(pc.sort_indices(table, sort_keys=[(k, o, "at_start") for k, o in sort]))
        n = table.num_rows
        if n == 0:
            return table
        changes = np.zeros(n - 1, bool)
        for k in keys:
            column = table.column(k)
            changes |= np.asarray(pc.not_equal(column.slice(1), column.slice(0, n - 1)).to_numpy(zero_copy_only=False), bool)
        keep = np.concatenate([[True], changes]) if first_row else np.concatenate([changes, [True]])
        table = table.filter(pa.array(keep))
        return table.filter(pc.invert(pc.is_in(table.column(VALUE_KIND), _RETRACTIONS)))

    # -- the whole plan

    def to_arrow(self, plan: Plan, condition: Predicate | None = None) -> pa.Table:
        """The rows of ``plan``, kept where the (unbound, parsed) ``condition`` is TRUE."""
        condition_columns = _base_columns(condition)
        for c in condition_columns:
            if c not in self.schema.field_names:
                raise ValueError(f"the condition names {c!r}, which is no column of the table")
        columns = list(dict.fromkeys([*self.columns, *condition_columns]))
        schema = pa.schema([self.arrow_schema.field(c) for c in columns])
        parts = [t for t in (self.read_split(s, columns) for s in plan.splits) if t is not None]
        table = pa.concat_tables(parts) if parts else schema.empty_table()
        if condition is not None:
            table = table.filter(self._mask(condition, table))
        return table.select(self.columns)

    def _mask(self, p: Predicate, table: pa.Table) -> pa.ChunkedArray | pa.Array:
        if isinstance(p, And):
            masks = [self._mask(c, table) for c in p.children]
            out = pa.array(np.ones(table.num_rows, bool))
            for m in masks:
                out = pc.and_(out, m)
            return out
        if isinstance(p, Or):
            out = pa.array(np.zeros(table.num_rows, bool))
            for c in p.children:
                out = pc.or_(out, self._mask(c, table))
            return out
        return pc.fill_null(self._leaf(p, table), False)

    def _leaf(self, p: Leaf, table: pa.Table):
        fields = {f.name: f.type for f in self.schema.fields}
        t = indexed_type(p.column, fields)
        base = p.column.split("[", 1)[0]
        column = table.column(base)
        if p.column != base:  # m[key]: the map's value for the key
            column = pc.map_lookup(column, pa.scalar(p.column[len(base) + 1 : -1]), "first")
        if p.op == "is_null":
            return pc.is_null(column)
        if p.op == "is_not_null":
            return pc.is_valid(column)
        literals = [v for v in p.literals if not (p.op == "in" and v is None)]
        if any(v is None for v in literals) or (p.op == "in" and not literals):
            return pa.array(np.zeros(table.num_rows, bool))  # a comparison with NULL is never TRUE
        values = [self._literal(t, v) for v in literals]
        match p.op:
            case "equal":
                return pc.equal(column, values[0])
            case "not_equal":
                return pc.not_equal(column, values[0])
            case "less_than":
                return pc.less(column, values[0])
            case "less_or_equal":
                return pc.less_equal(column, values[0])
            case "greater_than":
                return pc.greater(column, values[0])
            case "greater_or_equal":
                return pc.greater_equal(column, values[0])
            case "between":
                return pc.and_(pc.greater_equal(column, values[0]), pc.less_equal(column, values[1]))
            case "in" | "not_in":
                hit = pa.array(np.zeros(table.num_rows, bool))
                for v in values:
                    hit = pc.or_(hit, pc.fill_null(pc.equal(column, v), False))
                return pc.and_(pc.is_valid(column), hit if p.op == "in" else pc.invert(hit))
        raise AssertionError(p.op)

    @staticmethod
    def _literal(t: DataType, value: object) -> pa.Scalar:
        """The literal as a value of the column's type when it is one exactly; otherwise as
        itself, compared by Arrow's numeric promotion (``int_col < 1.5``)."""
        try:
            return arrow_scalar(t, column_value(t, value))
        except Inexact:  # no value of the type equals it
            return pa.scalar(value)


def _base_columns(p: Predicate | None) -> list[str]:
    if p is None:
        return []
    if isinstance(p, Leaf):
        return [p.column.split("[", 1)[0]]
    return list(dict.fromkeys(c for child in p.children for c in _base_columns(child)))
