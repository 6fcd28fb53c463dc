"""`indexbridge paimon inspect | read | verify TABLE_DIR`: a Paimon table at a snapshot.

``inspect --json`` prints one object (a contract scripts rely on)::

    {"table": DIR, "snapshot": 6, "schema_id": 0, "primary_keys": [...], "partition_keys": [...],
     "data_files": [{"partition": {column: value}, "bucket": 0, "file": "data-….parquet",
                     "level": 5, "row_count": 1000,
                     "deletion_vector": null | {"index_file", "offset", "length", "cardinality"},
                     "file_index": null | {"embedded": bool, "index_file": name | null,
                                           "indexes": {column: [index types]}},
                     "index_result": "remain" | "skip",           (with --where)
                     "read": true | false, "pruned_by": null | "partition" | "bucket" | "stats"
                             | "file-index" | "index-file"}],       (with --where)
     "index_files": [{"partition", "bucket", "index_type": "HASH" | "DELETION_VECTORS", "file", "row_count"}]}

``data_files`` are the files a batch read of the snapshot considers (for primary-key tables
with deletion vectors or first-row, level-0 files are not among them, as in Paimon); with
``--where`` each says what Paimon's ``FileIndexPredicate`` decides and whether the read opens it.
Values are in the JSON form of ``indexbridge paimon read`` (:mod:`indexbridge.paimon.table.canonical`).

``read`` prints the live rows as JSON lines, or writes Parquet when ``--out`` ends in
``.parquet`` (JSON lines otherwise); ``verify`` checks what the snapshot references
(:mod:`indexbridge.paimon.table.verify`). Errors: one line ``indexbridge: error: FILE: offset
N: expected``, exit status 2.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from indexbridge.cli.progress import progress
from indexbridge.errors import IndexFormatError
from indexbridge.paimon.fileindex.condition import parse
from indexbridge.paimon.table.canonical import rows_json, value_json
from indexbridge.paimon.table.scan import DataFileEntry, Plan
from indexbridge.paimon.table.table import FileStoreTable
from indexbridge.storage import write_atomically


def _partition(table: FileStoreTable, values: dict) -> dict:
    return {k: value_json(table.schema.field(k).type, v) for k, v in values.items()}


def _file_index(entry: DataFileEntry) -> dict | None:
    container = entry.file_index()
    if container is None:
        return None
    indexes: dict[str, list[str]] = {}
    for e in container.entries:
        indexes.setdefault(e.column, []).append(e.index_type)
    index_file = entry.file_index_path
    return {"embedded": entry.file.embedded_index is not None, "index_file": None if index_file is None else index_file.name, "indexes": indexes}


def describe(table: FileStoreTable, where: str | None) -> dict:
    all_files = table.plan()
    plan: Plan | None = None
    verdicts: dict[str, str | None] = {}
    predicate = None
    if where is not None:
        predicate = table.predicate(where)
        plan = table.scan.plan(predicate)
        verdicts = {e.file.file_name: e.pruned for e in plan.pruned}
        verdicts.update({e.file.file_name: e.pruned for s in plan.splits for e in s.files})
    data_files = []
    for split in all_files.splits:
        for e in split.files:
            d = e.deletion_file
            item = {
                "partition": _partition(table, e.partition),
                "bucket": e.bucket,
                "file": e.file.file_name,
                "level": e.file.level,
                "row_count": e.file.row_count,
                "deletion_vector": None if d is None else {"index_file": d.index_file, "offset": d.offset, "length": d.length, "cardinality": d.cardinality},
                "file_index": _file_index(e),
            }
            if predicate is not None:
                pruned = verdicts.get(e.file.file_name)
                item["index_result"] = table.scan.index_result(predicate, e)
                item["read"] = pruned is None
                item["pruned_by"] = pruned
            data_files.append(item)
    return {
        "table": str(table.path),
        "snapshot": None if table.snapshot is None else table.snapshot.id,
        "schema_id": table.schema.id,
        "primary_keys": list(table.schema.primary_keys),
        "partition_keys": list(table.schema.partition_keys),
        **({"where": where} if where is not None else {}),
        "data_files": data_files,
        "index_files": [
            {"partition": _partition(table, i.partition), "bucket": i.bucket, "index_type": i.index_type, "file": i.file_name, "row_count": i.row_count}
            for i in all_files.index_files
        ],
    }


def _text(summary: dict) -> str:
    files = summary["data_files"]
    rows = sum(f["row_count"] for f in files)
    deleted = sum(f["deletion_vector"]["cardinality"] or 0 for f in files if f["deletion_vector"])
    lines = [
        f"{summary['table']}: snapshot {summary['snapshot']}, schema {summary['schema_id']}",
        f"  primary keys: {', '.join(summary['primary_keys']) or '-'}; partition keys: {', '.join(summary['partition_keys']) or '-'}",
        f"  data files: {len(files)}, {rows} rows, {deleted} deleted by {sum(1 for f in files if f['deletion_vector'])} deletion vectors",
        f"  file indexes: {sum(1 for f in files if f['file_index'] and f['file_index']['embedded'])} embedded, "
        f"{sum(1 for f in files if f['file_index'] and not f['file_index']['embedded'])} in .index files",
    ]
    kinds = Counter(i["index_type"] for i in summary["index_files"])
    lines.append("  index files: " + (", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none"))
    if "where" in summary:
        read = [f for f in files if f["read"]]
        reasons = Counter(f["pruned_by"] for f in files if not f["read"])
        lines.append(f"  where {summary['where']}: {len(read)} of {len(files)} files read"
                     + "".join(f", {n} pruned by {r}" for r, n in sorted(reasons.items())))  # fmt: skip
    for f in files:
        parts = [f"bucket {f['bucket']}", f"level {f['level']}", f"{f['row_count']} rows"]
        if f["deletion_vector"]:
            parts.append(f"{f['deletion_vector']['cardinality']} deleted")
        if f["file_index"]:
            parts.append("index " + " ".join(f"{c}:{'/'.join(t)}" for c, t in f["file_index"]["indexes"].items()))
        if "read" in f:
            parts.append("read" if f["read"] else f"skipped ({f['pruned_by']})")
        partition = ",".join(f"{k}={v}" for k, v in f["partition"].items())
        lines.append(f"    {partition + ' ' if partition else ''}{f['file']}: " + ", ".join(parts))
    return "\n".join(lines)


def _open(path: str, snapshot: int | None) -> FileStoreTable:
    if not Path(path).is_dir():
        raise IndexFormatError(path, 0, "a Paimon table directory")
    return FileStoreTable.open(path, snapshot)


def run(args) -> int:
    if args.action in ("rewrite-file-index", "delete", "load"):
        return run_write(args)
    try:
        if args.where is not None:
            parse(args.where, "--where")
        table = _open(args.table, args.snapshot)
        if args.action == "inspect":
            summary = describe(table, args.where)
            print(json.dumps(summary) if args.json else _text(summary))
        elif args.action == "read":
            columns = [c.strip() for c in args.columns.split(",")] if args.columns else None
            rows = table.to_arrow(args.where, columns)
            if args.out and args.out.endswith(".parquet"):
                sink = pa.BufferOutputStream()
                pq.write_table(rows, sink)
                write_atomically(args.out, sink.getvalue().to_pybytes())
            else:
                text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows_json(rows, table.schema))
                if args.out:
                    write_atomically(args.out, text.encode("utf-8"))
                else:
                    sys.stdout.write(text)
        else:
            from indexbridge.paimon.table.verify import verify

            print(verify(table, rebuild=args.rebuild, progress=progress).summary())
    except IndexFormatError as error:
        print(f"indexbridge: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader of stdout went away (`| head`): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
        return 0
    except (ValueError, OSError) as error:  # an unknown column, an unwritable --out
        print(f"indexbridge: error: {args.table}: {error}", file=sys.stderr)
        return 2
    return 0


# ------------------------------------------------------------------------------------------------
# rewrite-file-index | delete | load: write jobs on a local Spark session


def _pairs(options: list[str]) -> list[tuple[str, str]]:
    out = []
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--option {option!r}: expected KEY=VALUE")
        out.append((key.strip(), value.strip()))
    return out


def _names(text: str | None) -> list[str] | None:
    return None if text is None else [n.strip() for n in text.split(",") if n.strip()]


def _session():
    """A local Spark session whose JVM keeps its chatter (log4j, JDK warnings) to itself: the
    command prints its summary or one error line, as the other paimon commands do."""
    import subprocess

    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    from indexbridge.spark import configure

    builder = (
        configure(SparkSession.builder.master(os.environ.get("INDEXBRIDGE_SPARK_MASTER", "local[*]")).appName("indexbridge-paimon"))
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
    )  # fmt: skip
    conf = SparkConf().setAll(list(builder._options.items()))
    gateway = launch_gateway(conf=conf, popen_kwargs={"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL})
    sc = SparkContext(conf=conf, gateway=gateway)
    sc.setLogLevel("ERROR")
    return SparkSession(sc)


def _summary_text(action: str, s: dict) -> str:
    if s.get("snapshot") is None:
        return f"{s['table']}: nothing to commit ({', '.join(f'{k} {v}' for k, v in s.items() if k not in ('table', 'snapshot', 'commit_kind'))})"
    details = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in s.items() if k not in ("table", "snapshot", "commit_kind", "attempts"))
    return f"{s['table']}: snapshot {s['snapshot']} ({s['commit_kind']}, {action}): {details}"


def run_write(args) -> int:
    """``rewrite-file-index``, ``delete``, ``load``: one job, its summary printed (JSON with
    ``--json``); errors as one line on stderr, exit status 2."""
    from indexbridge.spark.paimon import PaimonCommitConflict, delete_paimon_rows, load_paimon_table, rewrite_paimon_file_indexes

    try:
        if args.action == "delete" and not args.where:
            raise ValueError("delete needs --where CONDITION (the rows to delete)")
        if args.action == "load" and not args.source:
            raise ValueError("load needs --from DATA.parquet|DATA.jsonl")
        if args.action != "load" and not Path(args.table, "schema").is_dir():
            raise IndexFormatError(args.table, 0, "a Paimon table directory (with schema/)")
        options = _pairs(args.option)
        spark = _session()
        try:
            if args.action == "rewrite-file-index":
                summary = rewrite_paimon_file_indexes(spark, args.table, options, partitions=args.where, only_missing=args.only_missing)
            elif args.action == "delete":
                summary = delete_paimon_rows(spark, args.table, args.where)
            else:
                source = args.source
                if not Path(source).exists():
                    raise ValueError(f"--from {source}: no such file or directory")
                if source.endswith((".jsonl", ".json", ".ndjson")):
                    df = spark.read.json(source)
                else:
                    df = spark.read.parquet(source)
                summary = load_paimon_table(spark, args.table, df, _names(args.primary_key), _names(args.partition_by), options)
        finally:
            spark.stop()
        print(json.dumps(summary) if args.json else _summary_text(args.action, summary))
    except IndexFormatError as error:
        print(f"indexbridge: error: {error}", file=sys.stderr)
        return 2
    except (ValueError, OSError, PaimonCommitConflict) as error:
        message = str(error)
        print(f"indexbridge: error: {message if message.startswith(args.table) else f'{args.table}: {message}'}", file=sys.stderr)
        return 2
    return 0
