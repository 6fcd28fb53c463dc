"""`indexbridge bleve build | inspect | read | search`: bleve v1.0.14 index directories (scorch).

::

    indexbridge bleve build   OUT_DIR --docs DOCS.jsonl [--mapping MAPPING.json] [--id-field id] [--rows-per-segment N]
    indexbridge bleve inspect INDEX_DIR [--json]
    indexbridge bleve read    INDEX_DIR [--out FILE]
    indexbridge bleve search  INDEX_DIR --query QUERY_JSON [--size N] [--json]

``build`` writes a new index (never over an existing one) from JSON lines, one object per line,
each indexed whole under bleve's mapping JSON (default: bleve's dynamic mapping) with ``_id`` =
its ``--id-field`` value (a string or an integer; unique), in segments of ``--rows-per-segment``
documents (100000); ``root.bolt`` and ``index_meta.json`` come last, so bleve never opens a
half-built directory. It prints one line: ``OUT_DIR: N documents in K segments``.

``inspect --json`` prints one object::

    {"path", "epoch", "segments": [{"id", "file", "docs", "deleted", "size"}], "live_docs",
     "fields": [names], "internal": [keys], "mapping": the index's mapping JSON}

``read`` prints the live documents as JSON lines, ``{"_id": id, field: value or [values]}`` with the
stored fields as bleve's search results give them (numbers as Go prints them, datetimes in RFC
3339 UTC), in index order; ``--out FILE`` writes them to FILE instead.

``search`` runs bleve's query JSON (``--query`` is the JSON text, or ``@FILE``) and prints every hit
(or the first ``--size``) in bleve's order, ``score`` and ``_id`` per line after ``total: N``; with
``--json`` one object ``{"total": n, "hits": [{"id": .., "score": ..}]}``.

Errors: one line ``indexbridge: error: FILE: offset N: expected`` (or ``PATH: what``), exit status 2.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from indexbridge.bleve.index import BleveIndex, document_id, write_index
from indexbridge.bleve.mapping import go_json_float, go_json_string, load_mapping
from indexbridge.bleve.query import search
from indexbridge.cli.progress import progress
from indexbridge.errors import IndexFormatError
from indexbridge.storage import write_atomically


def json_value(value: Any) -> str:
    """A stored value as Go's encoding/json writes it (NaN and infinities, which Go cannot, as null)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_json_float(value) if math.isfinite(value) else "null"
    if isinstance(value, str):
        return go_json_string(value)
    if isinstance(value, list):
        return "[" + ",".join(json_value(v) for v in value) + "]"
    return json.dumps(value)


def document_line(doc: dict) -> str:
    return "{" + ",".join(f"{go_json_string(k)}:{json_value(v)}" for k, v in doc.items()) + "}\n"


def read_documents(path: Path, id_field: str) -> Iterator[tuple[str, Any]]:
    """(id, document) of each non-blank line of a JSON lines file; errors name the line's offset."""
    offset = 0
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            start, offset = offset, offset + len(line)
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
            except (ValueError, UnicodeDecodeError) as e:
                raise IndexFormatError(str(path), start + (getattr(e, "pos", 0) or 0), f"line {number}: a JSON object ({getattr(e, 'msg', e)})") from None
            try:
                yield document_id(doc, id_field, f"line {number}"), doc
            except ValueError as e:
                raise IndexFormatError(str(path), start, str(e)) from None


def _query_text(value: str | None) -> str:
    if value is None:
        raise ValueError("search needs --query QUERY_JSON")
    if value.startswith("@"):
        return Path(value[1:]).read_text("utf-8")
    return value


def _inspect_text(summary: dict) -> str:
    lines = [f"{summary['path']}: snapshot {summary['epoch']}, {summary['live_docs']} live documents in {len(summary['segments'])} segments"]
    for s in summary["segments"]:
        lines.append(f"  {s['file']}: segment {s['id']}, {s['docs']} documents, {s['deleted']} deleted, {s['size']} bytes")
    lines.append(f"  fields: {', '.join(summary['fields'])}")
    mapping = summary["mapping"]
    if isinstance(mapping, dict):
        lines.append(f"  mapping: default_analyzer {mapping.get('default_analyzer')}, default_field {mapping.get('default_field')}, "
                     f"dynamic {mapping.get('default_mapping', {}).get('dynamic')}")
    return "\n".join(lines)


def run(args) -> int:
    try:
        if args.action == "build":
            if args.docs is None:
                raise ValueError("build needs --docs DOCS.jsonl")
            mapping = load_mapping(args.mapping)
            count = 0

            def docs() -> Iterator[tuple[str, Any]]:
                nonlocal count
                for item in progress(read_documents(Path(args.docs), args.id_field), "documents", unit="doc"):
                    count += 1
                    yield item

            try:
                names = write_index(args.index, docs(), mapping, args.rows_per_segment)
            except ValueError as e:
                if "occurs twice" in str(e):
                    raise IndexFormatError(args.docs, 0, str(e)) from None
                raise
            print(f"{args.index}: {count} documents in {len(names)} segments")
        elif args.action == "inspect":
            with BleveIndex(args.index) as index:
                summary = index.inspect()
            print(json.dumps(summary, ensure_ascii=False) if args.json else _inspect_text(summary))
        elif args.action == "read":
            with BleveIndex(args.index) as index:
                if args.out:
                    write_atomically(args.out, "".join(document_line(d) for d in index.documents()).encode())
                else:
                    for doc in index.documents():
                        sys.stdout.write(document_line(doc))
        else:
            text = _query_text(args.query)
            with BleveIndex(args.index) as index:
                result = search(index, text, args.size)
            if args.json:
                hits = ",".join(f'{{"id":{go_json_string(i)},"score":{json_value(s)}}}' for i, s in result.hits)
                print(f'{{"total":{result.total},"hits":[{hits}]}}')
            else:
                lines = [f"total: {result.total}"] + [f"{json_value(s)}\t{i}" for i, s in result.hits]
                sys.stdout.write("\n".join(lines) + "\n")
    except IndexFormatError as error:
        print(f"indexbridge: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader of stdout went away (`| head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except FileExistsError as error:  # names the directory itself
        print(f"indexbridge: error: {error}", file=sys.stderr)
        return 2
    except (ValueError, OSError) as error:  # an existing index, an unreadable file, a bad argument
        print(f"indexbridge: error: {args.index}: {error}", file=sys.stderr)
        return 2
    return 0
