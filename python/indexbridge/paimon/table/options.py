"""The table options a read depends on (Paimon's ``CoreOptions``, from the schema's ``options``),
and the tables indexbridge does not read: a clear error naming the option, never a guess."""

from __future__ import annotations

from collections.abc import Mapping

from indexbridge.errors import IndexFormatError
from indexbridge.paimon.fileindex.bitmap import parse_memory_size

_TRUE = "true"


class TableOptions:
    def __init__(self, options: Mapping[str, str]):
        self.raw = dict(options)

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.raw.get(key, default)

    def flag(self, key: str, default: bool = False) -> bool:
        value = self.raw.get(key)
        return default if value is None else value.strip().lower() == _TRUE

    @property
    def bucket(self) -> int:
        return int(self.raw.get("bucket", "-1"))

    @property
    def deletion_vectors_enabled(self) -> bool:
        return self.flag("deletion-vectors.enabled")

    @property
    def merge_engine(self) -> str:
        return self.raw.get("merge-engine", "deduplicate").strip().lower()

    @property
    def batch_scan_skip_level0(self) -> bool:
        """``CoreOptions.batchScanSkipLevel0`` with ``batch-scan-mode = none``: level-0 files of
        such primary-key tables are not read in batch (``DataTableBatchScan``)."""
        if self.raw.get("batch-scan-mode", "none").strip().lower() != "none":
            return False
        return self.deletion_vectors_enabled or self.merge_engine == "first-row"

    @property
    def value_filter_enabled(self) -> bool:
        """Primary-key tables test the whole filter on value stats only when level 0 is skipped."""
        return self.batch_scan_skip_level0

    @property
    def file_index_read_enabled(self) -> bool:
        return self.flag("file-index.read.enabled", True)

    @property
    def bucket_function(self) -> str:
        return self.raw.get("bucket-function.type", "default").strip().lower()

    @property
    def split_target_size(self) -> int:
        return parse_memory_size(self.raw.get("source.split.target-size", "128mb"))

    @property
    def split_open_file_cost(self) -> int:
        return parse_memory_size(self.raw.get("source.split.open-file-cost", "4mb"))

    @property
    def sequence_fields(self) -> list[str]:
        value = self.raw.get("sequence.field", "")
        return [f.strip() for f in value.split(",") if f.strip()]

    @property
    def sequence_descending(self) -> bool:
        return self.raw.get("sequence.field.sort-order", "ascending").strip().lower() == "descending"

    @property
    def ignore_delete(self) -> bool:
        return any(
            self.flag(k)
            for k in ("ignore-delete", "deduplicate.ignore-delete", "first-row.ignore-delete", "partial-update.ignore-delete")
        )

    @property
    def partition_default_name(self) -> str:
        return self.raw.get("partition.default-name", "__DEFAULT_PARTITION__")

    def check_readable(self, schema) -> None:
        """Refuses, naming the option, what indexbridge cannot read exactly as Paimon does."""
        source = f"schema-{schema.id}"

        def refuse(what: str) -> None:
            raise IndexFormatError(source, 0, f"a table indexbridge can read; {what} is not supported")

        if schema.primary_keys and self.merge_engine not in ("deduplicate", "first-row"):
            refuse(f"merge-engine={self.merge_engine}")
        for key in ("row-tracking.enabled", "data-evolution.enabled"):
            if self.flag(key):
                refuse(f"{key}=true")
        if self.bucket_function not in ("default", "mod"):
            refuse(f"bucket-function.type={self.bucket_function}")
        if not self.flag("partition.legacy-name", True):
            refuse("partition.legacy-name=false")
