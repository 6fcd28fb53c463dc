"""The `indexbridge` command: inspect | conformance | paimon | bleve | iceberg | delta | demo | bench."""

from __future__ import annotations

import argparse
import sys


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="indexbridge", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    p = commands.add_parser("conformance", help="run a golden-vector directory (manifest.json) against the codecs")
    p.add_argument("dir")
    p.add_argument("--engine", choices=["python", "jvm", "all"], default="all")
    p.add_argument("--only", default="", help="comma-separated manifest formats, e.g. dv32,dv64,hash")
    p.add_argument("--out", default=None, help="write every encoded file to OUT/<engine>/<case path>")

    p = commands.add_parser("inspect", help="summarise index files")
    p.add_argument("files", nargs="+")
    p.add_argument("--format", choices=["dv", "dv-file", "hash", "file-index", "bloom", "bitmap", "bsi", "range-bitmap", "zap", "puffin", "delta-dv"], default=None)
    p.add_argument("--json", action="store_true")
    p.add_argument("--engine", choices=["python", "jvm"], default="python")
    p.add_argument("--type", action="append", default=[], metavar="[COLUMN=]TYPE",
                   help="file indexes: a column's Paimon type (COLUMN=TYPE, repeatable); a raw payload's type (TYPE)")
    p.add_argument("--query", default=None, metavar="CONDITION",
                   help="file indexes: evaluate a Spark SQL condition (e.g. \"id = 5 AND name IN ('a', 'b')\")")
    p.add_argument("--terms", action="store_true", help="zap: every term of every field with its document frequency")
    p.add_argument("--prefix", default=None, help="zap: the terms starting with PREFIX (with their document frequencies)")
    p.add_argument("--doc", type=int, default=None, metavar="N", help="zap: the stored fields of document N")

    p = commands.add_parser("paimon", help="a Paimon table: inspect its snapshot, read its rows, verify its indexes; "
                            "rewrite its file indexes, delete rows, bulk-load a dynamic-bucket table (local Spark)")
    p.add_argument("action", choices=["inspect", "read", "verify", "rewrite-file-index", "delete", "load"])
    p.add_argument("table", metavar="TABLE_DIR")
    p.add_argument("--snapshot", type=int, default=None, metavar="ID", help="a snapshot id (default: the latest)")
    p.add_argument("--where", default=None, metavar="CONDITION", help="inspect, read, delete: a Spark SQL condition; rewrite-file-index: a condition on partition columns")
    p.add_argument("--json", action="store_true", help="inspect, rewrite-file-index, delete, load: one JSON object")
    p.add_argument("--columns", default=None, metavar="A,B", help="read: the columns to print")
    p.add_argument("--out", default=None, metavar="FILE", help="read: write to FILE (Parquet if it ends in .parquet)")
    p.add_argument("--rebuild", action="store_true", help="verify: also rebuild file indexes, deletion files and hash indexes and compare bytes")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="rewrite-file-index: a file-index option for this rewrite; load: a table option when creating it (repeatable)")
    p.add_argument("--from", dest="source", default=None, metavar="DATA", help="load: the rows, a .parquet file/directory or .jsonl/.json")
    p.add_argument("--primary-key", default=None, metavar="A,B", help="load: the primary key of a table it creates")
    p.add_argument("--partition-by", default=None, metavar="DT", help="load: the partition keys of a table it creates")
    p.add_argument("--only-missing", action="store_true", help="rewrite-file-index: only files lacking an index the options ask for")

    p = commands.add_parser("bleve", help="a bleve index directory: build one from JSON lines, inspect, read or search it")
    p.add_argument("action", choices=["build", "inspect", "read", "search"])
    p.add_argument("index", metavar="INDEX_DIR", help="the index directory (build: OUT_DIR, created)")
    p.add_argument("--docs", default=None, metavar="DOCS.jsonl", help="build: the documents, one JSON object per line")
    p.add_argument("--mapping", default=None, metavar="MAPPING.json", help="build: bleve's index mapping JSON (default: bleve's)")
    p.add_argument("--id-field", default="id", help="build: the field holding each document's id (default: id)")
    p.add_argument("--rows-per-segment", type=int, default=100_000, metavar="N", help="build: documents per segment (100000)")
    p.add_argument("--json", action="store_true", help="inspect, search: one JSON object")
    p.add_argument("--out", default=None, metavar="FILE", help="read: write the JSON lines to FILE")
    p.add_argument("--query", default=None, metavar="QUERY_JSON", help="search: bleve's query JSON, or @FILE")
    p.add_argument("--size", type=int, default=None, metavar="N", help="search: at most N hits (default: all)")

    p = commands.add_parser("iceberg", help="Iceberg v3 deletion vectors: a Paimon snapshot's DVs as Puffin files (frames copied)")
    p.add_argument("action", choices=["dv-from-paimon"])
    p.add_argument("table", metavar="TABLE_DIR", help="the Paimon table")
    p.add_argument("out_dir", metavar="OUT_DIR", help="where the .puffin files and delete-files.jsonl go (empty or absent)")
    p.add_argument("--snapshot", type=int, default=None, metavar="ID", help="a snapshot id (default: the latest)")

    p = commands.add_parser("delta", help="Delta Lake deletion vectors: a Paimon snapshot's DVs as Delta DV files and "
                            "descriptors; a Delta table's DVs read back")
    p.add_argument("action", choices=["dv-from-paimon", "dvs"])
    p.add_argument("table", metavar="TABLE_DIR", help="dv-from-paimon: the Paimon table; dvs: the Delta table")
    p.add_argument("out_dir", metavar="OUT_DIR", nargs="?", default=None,
                   help="dv-from-paimon: the Delta table root for the DV files and descriptors.jsonl (empty or absent)")
    p.add_argument("--snapshot", type=int, default=None, metavar="ID", help="dv-from-paimon: a Paimon snapshot id (default: the latest)")
    p.add_argument("--storage", choices=["u", "p"], default="u",
                   help="dv-from-paimon: u = copies named deletion_vector_<uuid>.bin (default), p = descriptors of Paimon's own files")
    p.add_argument("--version", type=int, default=None, metavar="N", help="dvs: a table version (default: the latest)")
    p.add_argument("--json", action="store_true", help="dvs: one JSON object")

    p = commands.add_parser("demo", help="the main job: a real Paimon table read, pruned and verified, and its index files built, on an embedded local Spark")
    p.add_argument("--rows", type=int, default=200_000, help="orders in the demo's Paimon table")
    p.add_argument("--buckets", type=int, default=4, help="buckets of the demo's Paimon table")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--workdir", default=None, help="where the demo table is written (default: a temporary directory)")

    p = commands.add_parser("bench", help="benchmarks printing ratios against baselines run in the same process")
    p.add_argument("suite", choices=["dv", "zap", "fileindex", "table", "table-write", "bleve"])
    p.add_argument("--positions", type=int, default=20_000_000, help="dv: deleted positions")
    p.add_argument("--files", type=int, default=1000, help="dv: data files")
    p.add_argument("--full", action="store_true", help="dv: issue 18's scale (10,000 files, 200,000,000 positions)")
    p.add_argument("--lakehouse-only", action="store_true", help="dv: only the Iceberg / Delta conversion lines")
    p.add_argument("--docs", type=int, default=None, help="zap: documents in the generated corpus (2000); bleve: documents indexed (200000)")
    p.add_argument("--rows", type=int, default=None, help="fileindex: rows per data file (1,000,000); table, table-write: orders (10,000,000)")
    p.add_argument("--warehouse", default=None, help="table, table-write: where the table is written once and reused (default: the temp dir)")
    p.add_argument("--peers", action="store_true", help="table: also time pypaimon 2.1 and pypaimon-rust 0.4 (installed into .venv-peers)")
    p.add_argument("--queries", type=int, default=200, help="fileindex: equality queries per index")
    p.add_argument("--rounds", type=int, default=None, help="timing rounds, the best is reported (zap: 5, fileindex: 3)")
    p.add_argument("--scale", nargs="?", const="", default=None, metavar="DOCS,...",
                   help="zap: instead, the Python build's time and peak RSS at these corpus sizes (10k, 100k, 1M); "
                        "bleve: instead, write_bleve_index's time and heap at these index sizes (200k, 1M)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "conformance":
        from indexbridge.cli.conformance import run

        return run(args.dir, args.engine, [f for f in args.only.split(",") if f], args.out)
    if args.command == "inspect":
        from indexbridge.cli.inspect import InspectOptions, run

        types = dict(t.split("=", 1) if "=" in t else ("", t) for t in args.type)
        return run(args.files, args.format, args.json, args.engine, InspectOptions(types, args.query, args.terms, args.prefix, args.doc))
    if args.command == "paimon":
        from indexbridge.cli.paimon import run as run_paimon

        return run_paimon(args)
    if args.command == "bleve":
        from indexbridge.cli.bleve import run as run_bleve

        return run_bleve(args)
    if args.command in ("iceberg", "delta"):
        from indexbridge.cli.lakehouse import run_delta, run_iceberg

        return run_iceberg(args) if args.command == "iceberg" else run_delta(args)
    if args.command == "demo":
        from indexbridge.cli.demo import run

        return run(args)
    if args.command == "bench":
        if args.rounds is None:
            args.rounds = 3 if args.suite in ("fileindex", "table") else 5
        if args.rows is None:
            args.rows = 10_000_000 if args.suite in ("table", "table-write") else 1_000_000
        if args.docs is None:
            args.docs = 200_000 if args.suite == "bleve" else 2000
        if args.scale == "":
            args.scale = "200000,1000000" if args.suite == "bleve" else "10000,100000,1000000"
        from indexbridge.cli.bench import print_python_form

        print_python_form()
        if args.suite == "bleve":
            from indexbridge.cli.bench_bleve import run as run_bleve_bench

            return run_bleve_bench(args)
        if args.suite == "table-write":
            from indexbridge.cli.bench_table_write import run as run_table_write

            return run_table_write(args)
        if args.suite == "table":
            from indexbridge.cli.bench_table import run as run_table

            return run_table(args)
        if args.suite == "fileindex":
            from indexbridge.cli.bench_fileindex import run as run_fileindex

            return run_fileindex(args)
        from indexbridge.cli.bench import run

        return run(args)
    raise AssertionError(args.command)


if __name__ == "__main__":
    sys.exit(main())
