"""Arrow kernels over zap segments (``mapInArrow``), the Python path of `indexbridge.spark.zap`.

Each kernel reads a stream of batches whose first column names segment files, memory-maps each
segment with :class:`indexbridge.zap.Segment` and returns the rows the JVM path
(``io.indexbridge.spark.ZapSegments``) returns for it, in the same order, under the same schema.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from indexbridge.paimon.dv import DeletionVector
from indexbridge.spark.faults import fail_first_attempt
from indexbridge.storage import write_atomically
from indexbridge.zap import Document, Segment, build_segment, merge_segments
from indexbridge.zap.analyzers import FieldMapping, analyze_document
from indexbridge.zap.postings import PostingsList

Kernel = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]

DOCUMENTS = pa.schema([
    ("segment", pa.string()), ("doc", pa.int32()), ("_id", pa.string()), ("field", pa.string()),
    ("type", pa.string()), ("value", pa.binary()), ("array_positions", pa.list_(pa.int64())),
])
HITS = pa.schema([("segment", pa.string()), ("doc", pa.int32()), ("_id", pa.string())])
TERMS = pa.schema([("segment", pa.string()), ("field", pa.string()), ("term", pa.binary()), ("doc_freq", pa.int64())])
POSTINGS = pa.schema([
    ("segment", pa.string()), ("doc", pa.int32()), ("field", pa.string()), ("term", pa.binary()),
    ("freq", pa.int32()), ("positions", pa.list_(pa.int64())),
])
SEGMENT_FILES = pa.schema([("path", pa.string()), ("docs", pa.int64()), ("size", pa.int64()), ("fields", pa.list_(pa.string()))])
MERGED = SEGMENT_FILES.append(pa.field("sources", pa.list_(pa.string()))).append(pa.field("new_docs", pa.list_(pa.list_(pa.int64()))))

Row = tuple
SegmentRows = Callable[[str, Segment], Iterable[Row]]


def _batch(schema: pa.Schema, rows: Iterable[Row]) -> pa.RecordBatch:
    columns = list(zip(*rows)) or [()] * len(schema)
    return pa.RecordBatch.from_pydict({name: list(c) for name, c in zip(schema.names, columns)}, schema=schema)


def _per_segment(schema: pa.Schema, rows: SegmentRows) -> Kernel:
    """A kernel calling ``rows(path, segment)`` for every path of the first column, one batch per segment."""

    def kernel(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for path in batch.column(0).to_pylist():
                with Segment.open(path) as segment:
                    batch_rows = list(rows(path, segment))
                yield _batch(schema, batch_rows)

    return kernel


def _hits(path: str, segment: Segment, docs: Iterable[int]) -> Iterator[Row]:
    docs = np.asarray(docs, dtype=np.int64)
    return ((path, d, doc_id.decode()) for d, doc_id in zip(docs.tolist(), segment.doc_ids(docs)))


def _documents(path: str, segment: Segment) -> Iterator[Row]:
    for doc in range(segment.num_docs):
        values = segment.document(doc)
        doc_id = values[0][2].decode()
        for name, kind, value, array_positions in values:
            yield path, doc, doc_id, name, kind, bytes(value), list(array_positions)


def _dictionaries(segment: Segment) -> Iterator[tuple[str, bytes, PostingsList]]:
    """(field name, term, postings) of every field's dictionary, fields by id, terms in byte order."""
    for field in segment.fields:
        for term, value in segment.dictionary(field.id).items():
            yield field.name, term, segment.postings_at(value, field.dict_offset)


def _terms(path: str, segment: Segment) -> Iterator[Row]:
    return ((path, field, term, len(postings)) for field, term, postings in _dictionaries(segment))


def _postings(path: str, segment: Segment) -> Iterator[Row]:
    for field, term, postings in _dictionaries(segment):
        for hit in postings:
            positions = None if hit.locations is None else [loc.pos for loc in hit.locations]
            yield path, hit.doc, field, term, hit.freq, positions


def documents_kernel() -> Kernel:
    """Stored values: (segment, doc, _id, field, type, value, array_positions), ``_id`` first per doc."""
    return _per_segment(DOCUMENTS, _documents)


def ids_kernel() -> Kernel:
    """(segment, doc, _id) of every document."""
    return _per_segment(HITS, lambda path, segment: _hits(path, segment, range(segment.num_docs)))


def terms_kernel() -> Kernel:
    """The dictionaries: (segment, field, term, doc_freq), fields by id, terms in byte order."""
    return _per_segment(TERMS, _terms)


def postings_kernel() -> Kernel:
    """Every hit: (segment, doc, field, term, freq, positions); positions null without locations."""
    return _per_segment(POSTINGS, _postings)


def term_search_kernel(field: str, term: bytes) -> Kernel:
    """(segment, doc, _id) of the docs whose ``field`` holds ``term``."""
    return _per_segment(HITS, lambda path, segment: _hits(path, segment, segment.postings(field, term).docs))


def prefix_search_kernel(field: str, prefix: bytes) -> Kernel:
    """(segment, doc, _id) of the docs whose ``field`` holds a term starting with ``prefix``, ascending."""

    def rows(path: str, segment: Segment) -> Iterator[Row]:
        info = segment.field(field)
        lists = [] if info is None else [
            segment.postings_at(value, info.dict_offset).docs for _, value in segment.dictionary(info.id).prefix(prefix)
        ]
        return _hits(path, segment, np.unique(np.concatenate(lists)) if lists else [])

    return _per_segment(HITS, rows)


def _write(path: Path, data: bytes) -> tuple[str, int, int, list[str]]:
    """Write a segment atomically; its (path, docs, size, fields) row."""
    write_atomically(path, data)
    segment = Segment(data, str(path))
    return str(path), segment.num_docs, len(data), segment.field_names


def segment_name(partition: int, n: int) -> str:
    """The n-th segment a build task writes for its partition (the same on a retry)."""
    return f"segment-{partition:05d}-{n:05d}.zap"


def build_kernel(directory: str, id_col: str, mappings: Sequence[FieldMapping], rows_per_segment: int,
                 all_field: bool, chunk_factor: int) -> Kernel:
    """Rows (id, field columns...) → one segment per ``rows_per_segment`` rows of the partition, in
    row order, each document analysed by ``analyze_document`` (null values are absent fields);
    rows (path, docs, size, fields)."""

    def kernel(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        partition = TaskContext.get().partitionId()
        pending: list[Document] = []
        written = 0

        def flush() -> pa.RecordBatch:
            nonlocal written
            row = _write(Path(directory) / segment_name(partition, written), build_segment(pending, chunk_factor))
            written += 1
            pending.clear()
            fail_first_attempt("zap-build")
            return _batch(SEGMENT_FILES, [row])

        for batch in batches:
            for row in batch.to_pylist():
                doc_id = row[id_col]
                if doc_id is None:
                    raise ValueError(f"a document without an id (column {id_col!r} is null)")
                values = [(m.name, row[m.name]) for m in mappings if row[m.name] is not None]
                pending.append(analyze_document(str(doc_id), values, mappings, all_field))
                if len(pending) == rows_per_segment:
                    yield flush()
        if pending:
            yield flush()

    return kernel


def merged_name(sources: Sequence[str]) -> str:
    """The merged segment's file name: a digest of its inputs' paths (a retried task writes the same file)."""
    return f"merged-{hashlib.sha256(chr(10).join(sources).encode()).hexdigest()[:16]}.zap"


def merge_kernel(directory: str, chunk_factor: int) -> Kernel:
    """Merge tasks (group, members[(position, path, dv)]) → one merged segment per group written
    atomically to ``directory``; rows (path, docs, size, fields, sources, new_docs)."""

    def kernel(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            rows = []
            for members in batch.column("members").to_pylist():
                members = sorted(members, key=lambda m: m["position"])
                sources = [m["path"] for m in members]
                segments = [Segment.open(p) for p in sources]
                try:
                    drops = [
                        set() if m["dv"] is None
                        else set(DeletionVector.deserialize(m["dv"], source=f"<deletes of {m['path']}>").positions().tolist())
                        for m in members
                    ]
                    data, mapping = merge_segments(segments, drops, chunk_factor)
                    if mapping is None:  # nothing survived
                        mapping = [[-1] * s.num_docs for s in segments]
                finally:
                    for s in segments:
                        s.close()
                rows.append((*_write(Path(directory) / merged_name(sources), data), sources, mapping))
                fail_first_attempt("zap-merge")
            yield _batch(MERGED, rows)

    return kernel
