"""A Paimon table opened at one snapshot: its schema, its plan and its rows (``FileStoreTable``).

::

    table = FileStoreTable.open("/warehouse/db.db/orders")             # the latest snapshot
    table = FileStoreTable.open("/warehouse/db.db/orders", snapshot=3)  # time travel
    table.schema, table.snapshot
    plan = table.plan("customer = 'c42' AND amount > 10")               # files read, files pruned
    rows = table.to_arrow("customer = 'c42'", columns=["id", "amount"])  # pyarrow.Table

Conditions are Spark SQL text in the language of
:mod:`indexbridge.paimon.fileindex.condition`, or a predicate tree already bound to the table's
types. The schema of a time-travelled snapshot is the one it was written with, as in Paimon.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa

from indexbridge.errors import IndexFormatError
from indexbridge.paimon.fileindex.condition import bind, parse
from indexbridge.paimon.fileindex.container import indexed_type
from indexbridge.paimon.fileindex.predicate import Predicate
from indexbridge.paimon.table.read import TableRead
from indexbridge.paimon.table.scan import Plan, TableScan
from indexbridge.paimon.table.schema import SchemaManager, TableSchema
from indexbridge.paimon.table.snapshot import Snapshot, SnapshotManager


class FileStoreTable:
    def __init__(self, path: Path, snapshot: Snapshot | None, schema: TableSchema, schemas: SchemaManager):
        self.path = path
        self.snapshot = snapshot
        self.schema = schema
        self.schemas = schemas
        self.scan = TableScan(path, snapshot, schema, schemas)

    @classmethod
    def open(cls, path: str | os.PathLike[str], snapshot: int | None = None) -> FileStoreTable:
        path = Path(path)
        schemas = SchemaManager(path)
        snapshots = SnapshotManager(path)
        if snapshot is None:
            latest = snapshots.latest_snapshot()
            schema = schemas.latest()
        else:
            latest = snapshots.snapshot(snapshot)
            schema = schemas.schema(latest.schema_id)
        if schema is None:
            raise IndexFormatError(str(path / "schema"), 0, "a Paimon table directory (schema/schema-<id> files)")
        return cls(path, latest, schema, schemas)

    def predicate(self, where: str | Predicate | None) -> Predicate | None:
        """A condition bound to the table's column types."""
        if where is None or not isinstance(where, str):
            return where
        fields = {f.name: f.type for f in self.schema.fields}
        return bind(parse(where), lambda column: indexed_type(column, fields))

    def plan(self, where: str | Predicate | None = None) -> Plan:
        return self.scan.plan(self.predicate(where))

    def to_arrow(self, where: str | None = None, columns: Sequence[str] | None = None) -> pa.Table:
        """The live rows (deletion vectors applied, merged by primary key), the files the
        indexes rule out not read, then filtered exactly by ``where``; ``columns`` projects."""
        read = TableRead(self.scan, columns)
        return read.to_arrow(self.plan(where), None if where is None else parse(where))
