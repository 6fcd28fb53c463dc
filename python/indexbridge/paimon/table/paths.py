"""Where a table's files are (``FileStorePathFactory``, ``DataFilePathFactory``,
``IndexPathFactory``, ``PartitionPathUtils``)::

    <table>/snapshot/snapshot-<id>, LATEST, EARLIEST
    <table>/schema/schema-<id>
    <table>/manifest/manifest-list-…, manifest-…, index-manifest-…
    <table>/index/index-<uuid>-<n>                       (index-file-in-data-file-dir: the bucket dir)
    <table>/[<data-file.path-directory>/]<k1>=<v1>/<k2>=<v2>/bucket-<n>/data-<uuid>-<n>.<format>

A data or index file with ``_EXTERNAL_PATH`` is there instead (a ``file:`` URI). Partition values
are written as Paimon's legacy names do: ``toString()`` of the internal value (a DATE as days
since the epoch, a TIMESTAMP as ``LocalDateTime.toString()``), ``partition.default-name`` for null
and whitespace-only strings, and these characters escaped as ``%XX``: 0x00-0x1F, 0x7F and
``" # % ' * / : = ? \\ { } [ ] ^``.
"""

from __future__ import annotations

import datetime
from decimal import Decimal
from pathlib import Path
from urllib.parse import unquote, urlparse

from indexbridge.errors import IndexFormatError
from indexbridge.paimon.binary_row import Timestamp
from indexbridge.paimon.table.manifest import DataFileMeta
from indexbridge.paimon.table.options import TableOptions
from indexbridge.paimon.table.schema import TableSchema

_ESCAPED = frozenset([*range(0x20), 0x7F, *map(ord, "\"#%'*/:=?\\{}[]^")])
_EPOCH = datetime.datetime(1970, 1, 1)


def escape_path_name(text: str) -> str:
    return "".join(f"%{ord(c):02X}" if ord(c) in _ESCAPED else c for c in text)


def _local_date_time(ts: Timestamp) -> str:
    """``LocalDateTime.toString()``: seconds only when non-zero, fractions in groups of 3 digits."""
    t = _EPOCH + datetime.timedelta(milliseconds=ts.millisecond)
    nanos = t.microsecond * 1000 + ts.nano_of_millisecond
    text = t.strftime("%Y-%m-%dT%H:%M")
    if t.second or nanos:
        text += f":{t.second:02d}"
    if nanos:
        digits = f"{nanos:09d}"
        text += "." + (digits[:3] if nanos % 1_000_000 == 0 else digits[:6] if nanos % 1000 == 0 else digits)
    return text


def partition_value_name(value: object, default_name: str) -> str:
    if value is None or (isinstance(value, str) and not value.strip()):
        return default_name
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, Timestamp):
        return _local_date_time(value)
    if isinstance(value, (bytes, float)):
        raise ValueError(f"partition values of type {type(value).__name__} have no stable directory name")
    return str(value)


def local_path(uri: str) -> Path:
    """A ``file:`` URI (or a plain path) as a local path."""
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file"):
        return Path(unquote(parsed.path) if parsed.scheme else uri)
    raise IndexFormatError(uri, 0, f"a local file (indexbridge reads local tables), got a {parsed.scheme}: URI")


class FileStorePathFactory:
    def __init__(self, table: Path, schema: TableSchema, options: TableOptions):
        self.table = table
        self.schema = schema
        self.options = options
        directory = options.get("data-file.path-directory")
        self.data_root = table / directory if directory else table

    def manifest(self, name: str) -> Path:
        return self.table / "manifest" / name

    def partition_path(self, partition: dict[str, object]) -> str:
        default = self.options.partition_default_name
        return "".join(
            f"{escape_path_name(k)}={escape_path_name(partition_value_name(v, default))}/" for k, v in partition.items()
        )

    def bucket_dir(self, partition_path: str, bucket: int) -> Path:
        return self.data_root / partition_path / ("bucket-postpone" if bucket == -2 else f"bucket-{bucket}")

    def data_file(self, partition_path: str, bucket: int, file: DataFileMeta) -> Path:
        if file.external_path:
            return local_path(file.external_path)
        return self.bucket_dir(partition_path, bucket) / file.file_name

    def index_file(self, name: str, external_path: str | None, partition_path: str, bucket: int) -> Path:
        if external_path:
            return local_path(external_path)
        if self.options.flag("index-file-in-data-file-dir"):
            return self.bucket_dir(partition_path, bucket) / name
        return self.table / "index" / name
