"""The plan of a batch read: which data files of a snapshot are read, how, and with which
deletion vectors, as Paimon 1.4.2's ``DataTableBatchScan`` + ``SnapshotReaderImpl`` and its
split readers decide (``AbstractFileStoreScan``, ``AppendOnlyFileStoreScan``,
``KeyValueFileStoreScan``, ``MergeTreeSplitGenerator``, ``FileIndexEvaluator``).

Pipeline, for a snapshot and an optional predicate (bound to the table's types)::

    manifest entries (base list, then delta list), ADD/DELETE merged
      -> partition filter    the conjuncts projected onto the partition keys, on the exact values
      -> bucket selection    fixed-bucket tables: Equal/IN on every bucket-key field -> buckets
      -> level filter        primary-key tables with deletion vectors or first-row: level > 0
      -> stats filter        append: the non-partition filter on the value stats, then the
                             embedded file index; primary key: the key filter on the key stats
                             (and with deletion vectors / first-row the value filter, per file),
                             then per bucket the value filter: file by file when the bucket's
                             files do not overlap, else the whole bucket or nothing
      -> splits              per (partition, bucket): raw (files read one by one) or merged
      -> deletion vectors    (partition, bucket, data file) -> range of a deletion file
      -> `.index` files      raw splits only: a file whose index rules the filter out is skipped

Every file the predicate removes is kept in ``Plan.pruned`` with the step that removed it.
Statistics of files written under an older schema are mapped to the table's columns by field
id: an added column is all null there, a column whose type changed is not used (except an
integer that only widened).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from indexbridge.errors import IndexFormatError
from indexbridge.paimon.binary_row import deserialize_binary_row
from indexbridge.paimon.bucket import key_hash
from indexbridge.paimon.fileindex.container import FileIndexContainer
from indexbridge.paimon.fileindex.predicate import And, Leaf, Or, Predicate
from indexbridge.paimon.fileindex.values import DataType
from indexbridge.paimon.table import stats
from indexbridge.paimon.table.manifest import (
    DataFileMeta,
    IndexManifestEntry,
    ManifestEntry,
    merge_entries,
    read_index_manifest,
    read_manifest,
    read_manifest_list,
)
from indexbridge.paimon.table.options import TableOptions
from indexbridge.paimon.table.paths import FileStorePathFactory
from indexbridge.paimon.table.schema import SchemaManager, TableSchema, binary_row_type
from indexbridge.paimon.table.snapshot import Snapshot

DELETION_VECTORS = "DELETION_VECTORS"
HASH = "HASH"
_INTEGER_WIDTHS = {"TINYINT": 1, "SMALLINT": 2, "INTEGER": 3, "BIGINT": 4}
_MAX_BUCKET_COMBINATIONS = 1000


@dataclass(frozen=True)
class DeletionFile:
    """Where a data file's deletion vector is: a range of a deletion file (``DeletionFile``)."""

    index_file: str
    path: Path
    offset: int
    length: int
    cardinality: int | None


@dataclass
class DataFileEntry:
    """One live data file of the snapshot, as the plan sees it."""

    partition: dict[str, object]
    partition_row: bytes
    bucket: int
    total_buckets: int
    file: DataFileMeta
    path: Path
    manifest: str  # the manifest that added it, for messages
    deletion_file: DeletionFile | None = None
    raw: bool = True  # read on its own (raw split) rather than merged with its bucket
    pruned: str | None = None  # the step that removed it: partition, bucket, stats, file-index, index-file

    @property
    def file_index_path(self) -> Path | None:
        """The ``.index`` file of this data file's file index (None when embedded or absent).
        Paimon allows one (``FileIndexEvaluator``)."""
        if self.file.embedded_index is not None:
            return None
        names = self.file.index_files
        if len(names) > 1:
            raise IndexFormatError(str(self.path), 0, f"at most one index file per data file, found {' and '.join(names)}")
        return self.path.parent / names[0] if names else None

    def file_index(self) -> FileIndexContainer | None:
        if self.file.embedded_index is not None:
            return FileIndexContainer(self.file.embedded_index, f"{self.path} (embedded file index)")
        path = self.file_index_path
        if path is None:
            return None
        try:
            return FileIndexContainer(path.read_bytes(), str(path))
        except FileNotFoundError:
            raise IndexFormatError(str(path), 0, f"the file index of {self.file.file_name} to exist") from None


@dataclass
class DataSplit:
    partition: dict[str, object]
    partition_row: bytes
    bucket: int
    files: list[DataFileEntry]
    raw_convertible: bool


@dataclass(frozen=True)
class IndexFileEntry:
    """An index file live in the snapshot (``IndexManifestEntry``)."""

    partition: dict[str, object]
    partition_row: bytes
    bucket: int
    index_type: str
    file_name: str
    path: Path
    file_size: int
    row_count: int
    meta: IndexManifestEntry


@dataclass
class Plan:
    snapshot: Snapshot | None
    schema: TableSchema
    splits: list[DataSplit] = field(default_factory=list)
    pruned: list[DataFileEntry] = field(default_factory=list)
    index_files: list[IndexFileEntry] = field(default_factory=list)

    @property
    def data_files(self) -> list[DataFileEntry]:
        """The files read, split by split."""
        return [f for s in self.splits for f in s.files if f.pruned is None]


# ---------------------------------------------------------------------------------------------
# Exact evaluation on a row of internal values (partition filter), as ``Predicate.test(row)``


def matches(p: Predicate, row: Mapping[str, object]) -> bool:
    if isinstance(p, And):
        return all(matches(c, row) for c in p.children)
    if isinstance(p, Or):
        return any(matches(c, row) for c in p.children)
    v = row[p.column]
    if p.op == "is_null":
        return v is None
    if p.op == "is_not_null":
        return v is not None
    if v is None:
        return False
    key, lits = stats.java_order(v), [stats.java_order(x) for x in p.literals]
    match p.op:
        case "equal":
            return key == lits[0]
        case "not_equal":
            return key != lits[0]
        case "less_than":
            return key < lits[0]
        case "less_or_equal":
            return key <= lits[0]
        case "greater_than":
            return key > lits[0]
        case "greater_or_equal":
            return key >= lits[0]
        case "in":
            return key in lits
        case "not_in":
            return key not in lits
        case "between":
            return lits[0] <= key <= lits[1]
    raise AssertionError(p.op)


# ---------------------------------------------------------------------------------------------
# The scan


class TableScan:
    """Plans batch reads of one snapshot of the table at ``path`` (``schema``: the table's schema)."""

    def __init__(self, path: Path, snapshot: Snapshot | None, schema: TableSchema, schemas: SchemaManager):
        self.path = path
        self.snapshot = snapshot
        self.schema = schema
        self.schemas = schemas
        self.options = TableOptions(schema.options)
        self.options.check_readable(schema)
        self.paths = FileStorePathFactory(path, schema, self.options)
        self.partition_types = [binary_row_type(f.type) for f in schema.partition_fields]
        self.key_types = [binary_row_type(schema.field(k).type) for k in schema.trimmed_primary_keys]
        # the embedded file index in the scan: primary-key tables only with deletion vectors (KeyValueFileStore)
        self._scan_file_index = self.options.file_index_read_enabled and (
            not schema.primary_keys or self.options.deletion_vectors_enabled
        )
        self._partitions: dict[bytes, dict[str, object]] = {}

    def partition(self, row: bytes, source: str) -> dict[str, object]:
        values = self._partitions.get(row)
        if values is None:
            decoded = deserialize_binary_row(row, self.partition_types, source=f"{source} (_PARTITION)")
            values = self._partitions[row] = dict(zip(self.schema.partition_keys, decoded))
        return values

    # -- manifests

    @cached_property
    def live_entries(self) -> list[tuple[ManifestEntry, str]]:
        """The snapshot's live data files with the manifest that added each."""
        if self.snapshot is None:
            return []
        entries, sources = [], {}
        for manifest_list in (self.snapshot.base_manifest_list, self.snapshot.delta_manifest_list):
            for meta in read_manifest_list(self.paths.manifest(manifest_list)):
                source = str(self.paths.manifest(meta.file_name))
                for e in read_manifest(source):
                    entries.append(e)
                    sources.setdefault(e.identifier(), source)
        live = merge_entries(entries, str(self.paths.manifest(self.snapshot.base_manifest_list)))
        return [(e, sources[e.identifier()]) for e in live]

    @cached_property
    def index_entries(self) -> list[IndexFileEntry]:
        if self.snapshot is None or not self.snapshot.index_manifest:
            return []
        source = str(self.paths.manifest(self.snapshot.index_manifest))
        out = []
        for e in merge_entries(read_index_manifest(source), source):
            partition = self.partition(e.partition, source)
            path = self.paths.index_file(e.file_name, e.external_path, self.paths.partition_path(partition), e.bucket)
            out.append(IndexFileEntry(partition, e.partition, e.bucket, e.index_type, e.file_name, path, e.file_size, e.row_count, e))
        return out

    def entry(self, e: ManifestEntry, source: str) -> DataFileEntry:
        partition = self.partition(e.partition, source)
        path = self.paths.data_file(self.paths.partition_path(partition), e.bucket, e.file)
        return DataFileEntry(partition, e.partition, e.bucket, e.total_buckets, e.file, path, source)

    # -- plan

    def plan(self, predicate: Predicate | None = None) -> Plan:
        plan = Plan(self.snapshot, self.schema, index_files=list(self.index_entries))
        if self.snapshot is None:
            return plan
        predicate = None if predicate is None else stats.paimon_shape(predicate)
        conjuncts = stats.split_and(predicate)
        partition_keys = set(self.schema.partition_keys)
        partition_filter = stats.and_all(stats.project_conjuncts(conjuncts, partition_keys))
        value_filter = stats.and_all([c for c in conjuncts if stats.columns_of(c) - partition_keys])
        # projected on the trimmed keys as Paimon 1.4 picks it: (a AND k > 1) OR k < 0 gives k > 1 OR k < 0
        key_filter = stats.and_all(stats.project_conjuncts(conjuncts, set(self.schema.trimmed_primary_keys)))
        primary_key = bool(self.schema.primary_keys)
        skip_level0 = primary_key and self.options.batch_scan_skip_level0
        kept: list[DataFileEntry] = []
        buckets_of: dict[tuple[bytes, int], set[int] | None] = {}  # per (partition, total buckets)
        for e, source in self.live_entries:
            entry = self.entry(e, source)
            if skip_level0 and e.file.level == 0:
                continue
            if entry.bucket < 0:
                continue  # postpone bucket: not yet written to a real bucket
            if partition_filter is not None and not matches(partition_filter, entry.partition):
                plan.pruned.append(replace(entry, pruned="partition"))
            elif predicate is not None and not self._bucket_selected(predicate, entry, buckets_of):
                plan.pruned.append(replace(entry, pruned="bucket"))
            elif primary_key and key_filter is not None and not self._key_stats_test(key_filter, entry):
                plan.pruned.append(replace(entry, pruned="stats"))
            elif (not primary_key or self.options.value_filter_enabled) and value_filter is not None and not self._value_filter_test(value_filter, entry, plan):
                pass  # _value_filter_test recorded why
            else:
                kept.append(entry)
        buckets: dict[tuple[bytes, int], list[DataFileEntry]] = {}
        for entry in kept:
            buckets.setdefault((entry.partition_row, entry.bucket), []).append(entry)
        if primary_key and value_filter is not None:
            buckets = {k: self._post_filter(v, value_filter, plan) for k, v in buckets.items()}
        dvs = self._deletion_files() if self.options.deletion_vectors_enabled else {}
        for (partition_row, bucket), files in buckets.items():
            if not files:
                continue
            for entry in files:
                entry.deletion_file = dvs.get((partition_row, bucket, entry.file.file_name))
            for split in self._splits(files) if primary_key else self._append_splits(files):
                plan.splits.append(split)
        if predicate is not None and self.options.file_index_read_enabled:
            read_filter = stats.and_all([c for c in conjuncts if not stats.columns_of(c) & partition_keys])
            for split in plan.splits:
                for entry in split.files:
                    if entry.raw and read_filter is not None and not self._file_index_remains(read_filter, entry, embedded_only=False):
                        entry.pruned = "index-file"
        return plan

    # -- buckets (BucketSelectConverter)

    def _bucket_selected(self, predicate: Predicate, entry: DataFileEntry, buckets_of: dict) -> bool:
        if self.options.bucket <= 0 or entry.total_buckets <= 0:
            return True  # dynamic, unaware and postpone tables: no bucket pruning
        key = (entry.partition_row, entry.total_buckets)
        if key not in buckets_of:
            buckets_of[key] = self._selected_buckets(predicate, entry.partition, entry.total_buckets)
        buckets = buckets_of[key]
        return buckets is None or entry.bucket in buckets

    def _selected_buckets(self, predicate: Predicate, partition: dict, total: int) -> set[int] | None:
        bucket_keys = self.schema.bucket_keys
        if not bucket_keys:
            return None
        simplified = _substitute(predicate, partition)
        if simplified is True or simplified is False:
            return None
        values: dict[str, list[object] | None] = {}
        # each conjunct projected on the bucket keys (Paimon 1.4: (a = 1 AND c > 0) OR a = 2 selects a in (1, 2))
        for conjunct in stats.project_conjuncts(stats.split_and(simplified), set(bucket_keys)):
            branches = stats.split_or(conjunct)
            columns = {b.column for b in branches if isinstance(b, Leaf)}
            if (
                len(columns) != 1
                or not all(isinstance(b, Leaf) and b.op in ("equal", "in") for b in branches)
                or next(iter(columns)) not in bucket_keys
            ):
                continue
            column = next(iter(columns))
            literals = [v for b in branches for v in b.literals if v is not None]
            orders = {stats.java_order(v): v for v in literals}
            if column in values:
                previous = values[column]
                orders = {k: v for k, v in orders.items() if previous is not None and k in {stats.java_order(p) for p in previous}}
                if not orders:
                    return None  # empty intersection: no pruning
            values[column] = list(orders.values())
        if any(k not in values for k in bucket_keys):
            return None
        combinations = 1
        for k in bucket_keys:
            combinations *= len(values[k])
        if combinations > _MAX_BUCKET_COMBINATIONS:
            return None
        types = [binary_row_type(self.schema.field(k).type) for k in bucket_keys]
        function = self.options.bucket_function
        out = set()
        for combo in itertools.product(*(values[k] for k in bucket_keys)):
            if function == "mod":
                out.add(combo[0] % total)  # Math.floorMod
            else:
                out.add(abs(key_hash(list(combo), types)) % total)  # Math.abs(hashCode % n)
        return out

    # -- statistics

    def _file_fields(self, schema_id: int) -> dict[int, tuple[str, DataType]]:
        schema = self.schema if schema_id == self.schema.id else self.schemas.schema(schema_id)
        return {f.id: (f.name, f.type) for f in schema.fields}

    def _devolve(self, predicate: Predicate | None, schema_id: int) -> tuple[Predicate | None, dict[str, str]]:
        """The conjuncts usable on a file of schema ``schema_id`` and the table -> file column
        names (``SchemaEvolutionUtil.devolveFilters``): conjuncts on a column whose type changed
        are dropped, unless an integer only widened and every literal fits the file's type."""
        if predicate is None or schema_id == self.schema.id:
            return predicate, {}
        file_fields = self._file_fields(schema_id)
        names, unsafe = {}, set()
        for f in self.schema.fields:
            if f.id in file_fields:
                file_name, file_type = file_fields[f.id]
                names[f.name] = file_name
                if file_type != f.type and not _widened(file_type, f.type):
                    unsafe.add(f.name)
        kept = [c for c in stats.split_and(predicate) if not stats.columns_of(c) & unsafe and self._fits(c, file_fields)]
        return stats.and_all(kept), names

    def _fits(self, p: Predicate, file_fields: dict[int, tuple[str, DataType]]) -> bool:
        """Whether every literal on a widened integer column is a value of the file's type."""
        if isinstance(p, Leaf):
            f = self.schema.field(p.column)
            file_type = file_fields.get(f.id, (None, None))[1]
            if file_type is None or file_type == f.type:
                return True
            bits = 8 << (_INTEGER_WIDTHS[file_type.root] - 1)
            return all(v is None or -(1 << (bits - 1)) <= v < (1 << (bits - 1)) for v in p.literals)
        return all(self._fits(c, file_fields) for c in p.children)

    def _value_stats(self, entry: DataFileEntry) -> stats.Stats:
        f = entry.file
        file_fields = self._file_fields(f.schema_id)
        by_name = {name: (fid, t) for fid, (name, t) in file_fields.items()}
        columns = [name for name, _ in file_fields.values()] if f.value_stats_cols is None else list(f.value_stats_cols)
        source = f"{entry.manifest} (_VALUE_STATS of {f.file_name})"
        decoded: dict[str, stats.ColumnStats] = {}
        if columns:
            slot_types = [binary_row_type(by_name[c][1]) for c in columns]
            mins = deserialize_binary_row(f.value_stats.min_values, slot_types, source=source)
            maxs = deserialize_binary_row(f.value_stats.max_values, slot_types, source=source)
            counts = f.value_stats.null_counts or (None,) * len(columns)
            if len(counts) != len(columns):
                raise IndexFormatError(source, 0, f"{len(columns)} null counts, found {len(counts)}")
            decoded = {c: stats.ColumnStats(lo, hi, n) for c, lo, hi, n in zip(columns, mins, maxs, counts)}

        def lookup(column: str) -> stats.ColumnStats | None:
            t = self.schema.field(column)
            if t.id not in file_fields:
                return stats.ColumnStats(None, None, f.row_count)  # added later: null in this file
            return decoded.get(file_fields[t.id][0], stats.ColumnStats(None, None, None))

        return lookup

    def _key_stats_test(self, key_filter: Predicate, entry: DataFileEntry) -> bool:
        f = entry.file
        keys = self.schema.trimmed_primary_keys
        source = f"{entry.manifest} (_KEY_STATS of {f.file_name})"
        mins = deserialize_binary_row(f.key_stats.min_values, self.key_types, source=source)
        maxs = deserialize_binary_row(f.key_stats.max_values, self.key_types, source=source)
        counts = f.key_stats.null_counts or (None,) * len(keys)
        by_key = {k: stats.ColumnStats(lo, hi, n) for k, lo, hi, n in zip(keys, mins, maxs, counts)}
        return stats.test(key_filter, f.row_count, by_key.get)

    def _value_test(self, value_filter: Predicate, entry: DataFileEntry) -> str | None:
        """None when the file passes the value filter, else the step that rules it out."""
        devolved, _ = self._devolve(value_filter, entry.file.schema_id)
        if devolved is not None and not stats.test(devolved, entry.file.row_count, self._value_stats(entry)):
            return "stats"
        if entry.file.embedded_index is not None and self._scan_file_index:
            if not self._file_index_remains(value_filter, entry, embedded_only=True):
                return "file-index"
        return None

    def _value_filter_test(self, value_filter: Predicate, entry: DataFileEntry, plan: Plan) -> bool:
        reason = self._value_test(value_filter, entry)
        if reason is not None:
            plan.pruned.append(replace(entry, pruned=reason))
        return reason is None

    def _file_index_remains(self, predicate: Predicate, entry: DataFileEntry, *, embedded_only: bool) -> bool:
        """``FileIndexPredicate`` over the file's index (embedded, or its ``.index`` file unless
        ``embedded_only``), with the predicate devolved to the file's schema."""
        if embedded_only and entry.file.embedded_index is None:
            return True
        container = entry.file_index()
        if container is None:
            return True
        devolved, names = self._devolve(predicate, entry.file.schema_id)
        if devolved is None:
            return True
        file_types = {name: t for name, t in self._file_fields(entry.file.schema_id).values()}
        return container.predicate(file_types).evaluate(stats.rename(devolved, names)).remain

    def index_result(self, predicate: Predicate, entry: DataFileEntry) -> str:
        """``remain`` or ``skip``: what ``FileIndexPredicate`` says of the file (remain without an index)."""
        shaped = stats.paimon_shape(predicate)
        return "remain" if self._file_index_remains(shaped, entry, embedded_only=False) else "skip"

    def _post_filter(self, files: list[DataFileEntry], value_filter: Predicate, plan: Plan) -> list[DataFileEntry]:
        """``KeyValueFileStoreScan.postFilterManifestEntries`` for one bucket."""
        levels = {f.file.level for f in files}
        no_overlap = len(files) <= 1 or (0 not in levels and len(levels) == 1)
        verdicts = [self._value_test(value_filter, f) for f in files]
        if no_overlap:
            kept = []
            for f, reason in zip(files, verdicts):
                if reason is None:
                    kept.append(f)
                else:
                    plan.pruned.append(replace(f, pruned=reason))
            return kept
        if not self.options.deletion_vectors_enabled and self.options.merge_engine in ("partial-update", "aggregation"):
            return files
        if any(r is None for r in verdicts):
            return files
        plan.pruned.extend(replace(f, pruned=r) for f, r in zip(files, verdicts))
        return []

    # -- deletion vectors

    def _deletion_files(self) -> dict[tuple[bytes, int, str], DeletionFile]:
        out = {}
        for index in self.index_entries:
            if index.index_type != DELETION_VECTORS:
                continue
            for r in index.meta.dv_ranges or ():
                out[(index.partition_row, index.bucket, r.data_file)] = DeletionFile(
                    index.file_name, index.path, r.offset, r.length, r.cardinality
                )
        return out

    # -- splits

    def _append_splits(self, files: list[DataFileEntry]) -> list[DataSplit]:
        files = sorted(files, key=lambda f: f.file.min_sequence_number)
        first = files[0]
        return [DataSplit(first.partition, first.partition_row, first.bucket, group, True)
                for group in self._pack(files, lambda f: f.file.file_size)]  # fmt: skip

    def _pack(self, items: Sequence, size) -> list[list]:
        """``BinPacking.packForOrdered`` with Paimon's open-file cost."""
        target, cost = self.options.split_target_size, self.options.split_open_file_cost
        packed, current, weight = [], [], 0
        for item in items:
            w = max(size(item), cost)
            if weight + w > target and current:
                packed.append(current)
                current, weight = [], 0
            weight += w
            current.append(item)
        if current:
            packed.append(current)
        return packed

    def _key(self, row: bytes, e: DataFileEntry) -> tuple:
        values = deserialize_binary_row(row, self.key_types, source=f"{e.manifest} (_MIN_KEY/_MAX_KEY of {e.file.file_name})")
        return tuple(stats.java_order(v) for v in values)

    def _splits(self, files: list[DataFileEntry]) -> list[DataSplit]:
        """``MergeTreeSplitGenerator.splitForBatch`` for one bucket of a primary-key table."""
        first = files[0]

        def without_delete_row(e: DataFileEntry) -> bool:
            return not e.file.delete_row_count

        def split(group: list[DataFileEntry], raw: bool) -> DataSplit:
            # a raw split is read raw only when every file knows its retract rows
            raw = raw and all(e.file.delete_row_count is not None for e in group)
            for e in group:
                e.raw = raw
            return DataSplit(first.partition, first.partition_row, first.bucket, group, raw)

        raw_convertible = all(e.file.level != 0 and without_delete_row(e) for e in files)
        one_level = len({e.file.level for e in files}) == 1
        if raw_convertible and (self.options.deletion_vectors_enabled or self.options.merge_engine == "first-row" or one_level):
            return [split(group, True) for group in self._pack(files, lambda e: e.file.file_size)]
        keyed = sorted(
            ((self._key(e.file.min_key, e), self._key(e.file.max_key, e), e) for e in files),
            key=lambda t: (t[0], t[1]),
        )
        sections, section, bound = [], [], None
        for lo, hi, e in keyed:
            if section and lo > bound:
                sections.append(section)
                section, bound = [], None
            section.append(e)
            if bound is None or hi > bound:
                bound = hi
        if section:
            sections.append(section)
        groups = self._pack(sections, lambda s: sum(e.file.file_size for e in s))
        out = []
        for group in groups:
            flat = [e for s in group for e in s]
            out.append(split(flat, len(flat) == 1 and without_delete_row(flat[0])))
        return out


def _widened(file_type: DataType, table_type: DataType) -> bool:
    """An integer type that only grew (``CastExecutors.castLiteralsWithEvolution`` keeps those)."""
    return (
        file_type.root in _INTEGER_WIDTHS
        and table_type.root in _INTEGER_WIDTHS
        and _INTEGER_WIDTHS[file_type.root] <= _INTEGER_WIDTHS[table_type.root]
    )


def _substitute(p: Predicate, partition: Mapping[str, object]) -> Predicate | bool:
    """Leaves on partition keys replaced by their truth for this partition, then simplified
    (``PartitionValuePredicateVisitor`` + ``PredicateBuilder.and/or``)."""
    if isinstance(p, Leaf):
        return matches(p, partition) if p.column in partition else p
    children = [_substitute(c, partition) for c in p.children]
    if isinstance(p, And):
        if any(c is False for c in children):
            return False
        kept = [c for c in children if c is not True]
        return True if not kept else kept[0] if len(kept) == 1 else And(tuple(kept))
    if any(c is True for c in children):
        return True
    kept = [c for c in children if c is not False]
    return False if not kept else kept[0] if len(kept) == 1 else Or(tuple(kept))

