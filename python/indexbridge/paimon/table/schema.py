"""Paimon table schemas: ``schema/schema-<id>`` JSON (``TableSchema``, ``SchemaManager``,
``DataTypeJsonParser``).

::

    {"version": 3, "id": 0,
     "fields": [{"id": 0, "name": "dt", "type": "STRING NOT NULL"},
                {"id": 4, "name": "tags", "type": {"type": "ARRAY", "element": "INT"}},
                {"id": 5, "name": "m", "type": {"type": "MAP NOT NULL", "key": "STRING NOT NULL", "value": "BIGINT"}},
                {"id": 6, "name": "r", "type": {"type": "ROW", "fields": [{"id": 7, "name": "a", "type": "INT"}]}}],
     "highestFieldId": 7, "partitionKeys": ["dt"], "primaryKeys": ["dt", "id"],
     "options": {"bucket": "2", "deletion-vectors.enabled": "true"}, "comment": null, "timeMillis": …}

Atomic types are SQL strings as ``DataType.asSQLString`` prints them (``INT``, ``DECIMAL(10, 2)``,
``VARCHAR(12)``, ``STRING``, ``BYTES``, ``TIMESTAMP(6)``, ``TIMESTAMP(3) WITH LOCAL TIME ZONE``,
optionally followed by ``NOT NULL``); ``ARRAY``/``MULTISET``/``MAP``/``ROW`` are objects. Field
ids identify a column across schema versions: data files written under an older schema are read
by field id (a renamed column keeps its id, an added one has none in old files).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from indexbridge.errors import IndexFormatError
from indexbridge.paimon.binary_row import FieldType
from indexbridge.paimon.fileindex.values import DataType

_ATOMIC = re.compile(
    r"^\s*(?P<name>[A-Z_]+(?: PRECISION)?)\s*(?:\(\s*(?P<args>[0-9,\s]*)\))?"
    r"\s*(?P<zone>WITH LOCAL TIME ZONE|WITHOUT TIME ZONE)?\s*(?P<notnull>NOT NULL)?\s*$"
)
_MAX_LENGTH = 2147483647
_SIMPLE = {"BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DATE"}
_NAMES = {"INT": "INTEGER", "DOUBLE PRECISION": "DOUBLE", "NUMERIC": "DECIMAL", "DEC": "DECIMAL",
          "STRING": "VARCHAR", "BYTES": "VARBINARY", "TIMESTAMP_LTZ": "TIMESTAMP_WITH_LOCAL_TIME_ZONE"}  # fmt: skip


def _atomic(sql: str) -> DataType:
    m = _ATOMIC.match(sql.upper())
    if not m:
        raise ValueError(f"unsupported type {sql!r}")
    raw = m["name"]
    name = _NAMES.get(raw, raw)
    args = [int(a) for a in m["args"].split(",")] if m["args"] and m["args"].strip() else []
    nullable = m["notnull"] is None
    if name in _SIMPLE and not args and not m["zone"]:
        return DataType(name, nullable=nullable)
    if name == "DECIMAL" and len(args) <= 2:
        return DataType("DECIMAL", args[0] if args else 10, args[1] if len(args) == 2 else 0, nullable=nullable)
    if name in ("CHAR", "VARCHAR", "BINARY", "VARBINARY") and len(args) <= 1 and not m["zone"]:
        default = _MAX_LENGTH if raw in ("STRING", "BYTES") else 1
        return DataType(name, args[0] if args else default, nullable=nullable)
    if name == "TIME" and len(args) <= 1:
        return DataType("TIME_WITHOUT_TIME_ZONE", args[0] if args else 0, nullable=nullable)
    if name == "TIMESTAMP" and len(args) <= 1:
        root = "TIMESTAMP_WITH_LOCAL_TIME_ZONE" if m["zone"] == "WITH LOCAL TIME ZONE" else "TIMESTAMP_WITHOUT_TIME_ZONE"
        return DataType(root, args[0] if args else 6, nullable=nullable)
    if name == "TIMESTAMP_WITH_LOCAL_TIME_ZONE" and len(args) <= 1:
        return DataType(name, args[0] if args else 6, nullable=nullable)
    raise ValueError(f"unsupported type {sql!r}")


def parse_data_type(node: object) -> DataType:
    """A type from its schema JSON (a SQL string, or an object for nested types)."""
    if isinstance(node, str):
        return _atomic(node)
    if not isinstance(node, dict) or not isinstance(node.get("type"), str):
        raise ValueError(f"unsupported type {node!r}")
    kind = node["type"]
    nullable = "NOT NULL" not in kind
    if kind.startswith("ARRAY") or kind.startswith("MULTISET"):
        return DataType(kind.split()[0], element=parse_data_type(node["element"]), nullable=nullable)
    if kind.startswith("MAP"):
        return DataType("MAP", key=parse_data_type(node["key"]), value=parse_data_type(node["value"]), nullable=nullable)
    if kind.startswith("ROW"):
        return DataType("ROW", fields=tuple(_field(f) for f in node["fields"]), nullable=nullable)
    raise ValueError(f"unsupported type {kind!r}")


def _field(node: dict) -> tuple[int, str, DataType]:
    return int(node["id"]), str(node["name"]), parse_data_type(node["type"])


_SLOT_ROOTS = {"INTEGER": "INT", "CHAR": "STRING", "VARCHAR": "STRING", "VARBINARY": "BINARY",
               "TIME_WITHOUT_TIME_ZONE": "TIME", "TIMESTAMP_WITHOUT_TIME_ZONE": "TIMESTAMP",
               "TIMESTAMP_WITH_LOCAL_TIME_ZONE": "TIMESTAMP"}  # fmt: skip


def binary_row_type(t: DataType) -> FieldType:
    """How a value of type ``t`` sits in a ``BinaryRow`` slot; nested values are not read (they
    only appear, null, in statistics rows)."""
    if t.root in ("ARRAY", "MULTISET", "MAP", "ROW"):
        return FieldType("SKIPPED")
    root = _SLOT_ROOTS.get(t.root, t.root)
    return FieldType(root, t.precision if root in ("TIMESTAMP", "TIME", "DECIMAL") else 0, t.scale)


@dataclass(frozen=True)
class DataField:
    id: int
    name: str
    type: DataType


@dataclass(frozen=True)
class TableSchema:
    id: int
    fields: tuple[DataField, ...]
    highest_field_id: int
    partition_keys: tuple[str, ...]
    primary_keys: tuple[str, ...]
    options: dict[str, str]
    version: int

    @classmethod
    def from_json(cls, data: bytes, source: str) -> TableSchema:
        try:
            doc = json.loads(data)
            fields = tuple(DataField(*_field(f)) for f in doc["fields"])
            options = doc.get("options") or {}
            if not isinstance(options, dict):
                raise ValueError("options must be an object")
            schema = cls(
                id=int(doc["id"]),
                fields=fields,
                highest_field_id=int(doc.get("highestFieldId", max((f.id for f in fields), default=-1))),
                partition_keys=tuple(doc.get("partitionKeys") or ()),
                primary_keys=tuple(doc.get("primaryKeys") or ()),
                options={str(k): str(v) for k, v in options.items()},
                version=int(doc.get("version", 1)),
            )
        except (ValueError, TypeError, KeyError) as e:
            raise IndexFormatError(source, 0, f"a table schema JSON document: {e}") from None
        names = schema.field_names
        for key in (*schema.partition_keys, *schema.primary_keys):
            if key not in names:
                raise IndexFormatError(source, 0, f"key column {key!r} among the fields {names}")
        return schema

    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> DataField:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    @property
    def partition_fields(self) -> list[DataField]:
        return [self.field(k) for k in self.partition_keys]

    @property
    def trimmed_primary_keys(self) -> list[str]:
        """The primary key minus the partition keys: the key of the data files and hash indexes."""
        return [k for k in self.primary_keys if k not in self.partition_keys]

    @property
    def bucket_keys(self) -> list[str]:
        """``bucket-key`` when set, else the trimmed primary key (``TableSchema.bucketKeys``)."""
        option = self.options.get("bucket-key")
        if option:
            return [k.strip() for k in option.split(",")]
        return self.trimmed_primary_keys


class SchemaManager:
    """The schemas of the table at ``table_path``."""

    def __init__(self, table_path: str | os.PathLike[str]):
        self.directory = Path(table_path) / "schema"
        self._cache: dict[int, TableSchema] = {}

    def schema(self, schema_id: int) -> TableSchema:
        cached = self._cache.get(schema_id)
        if cached is not None:
            return cached
        path = self.directory / f"schema-{schema_id}"
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise IndexFormatError(str(path), 0, f"schema {schema_id} to exist") from None
        schema = TableSchema.from_json(data, str(path))
        if schema.id != schema_id:
            raise IndexFormatError(str(path), 0, f"schema id {schema_id}, the file says {schema.id}")
        self._cache[schema_id] = schema
        return schema

    def latest(self) -> TableSchema | None:
        try:
            ids = [int(n[len("schema-") :]) for n in os.listdir(self.directory) if re.fullmatch(r"schema-\d+", n)]
        except FileNotFoundError:
            return None
        return self.schema(max(ids)) if ids else None
