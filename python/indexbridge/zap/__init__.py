"""bleve zap v11 segments, bit-exact with github.com/blevesearch/zap/v11 v11.0.14 (spec/zap.md).

One module per structure: ``fst`` (vellum), ``snappy`` (Go's encoder), ``stored``, ``postings``,
``docvalues``, ``segment`` (writer and reader), ``merge``; ``analysis`` is the writer's input,
``analyzers`` makes it from raw values as bleve's analyzers and mapping do, ``corpus`` generates
raw documents for the comparison with Go and the benchmark.

::

    from indexbridge.zap import Document, Field, Token, TokenLocation, id_field, build_segment, Segment, merge_segments

    doc = Document((
        Field("body", b"hello world", length=2, tokens=(
            Token(b"hello", 1, (TokenLocation("", 1, 0, 5),)),
            Token(b"world", 1, (TokenLocation("", 2, 6, 11),)),
        )),
        id_field(b"doc1"),
    ))
    data = build_segment([doc])                      # the bytes Go's zap writes (chunk factor 1024)
    with Segment.open("seg.zap") as seg:             # memory-mapped, CRC checked
        for hit in seg.postings("body", b"hello"):  # Posting(doc, freq, norm_bits, locations)
            print(seg.doc_id(hit.doc), seg.document(hit.doc))
        seg.dictionary("body").prefix(b"wo")         # (term, FST value), also .items(start, end)
        cols = seg.dictionary("body").postings_columns([b"hello", b"world"])  # many terms at once, numpy arrays
        cols.docs[cols.hit_offsets[0] : cols.hit_offsets[1]]                # "hello"'s docNums; .to_arrow()
    merged, new_doc_nums = merge_segments([seg_a, seg_b], [{3}, set()])
"""

from indexbridge.zap.analysis import CompositeField, Document, Field, Token, TokenLocation, id_field
from indexbridge.zap.merge import merge_segments
from indexbridge.zap.segment import Segment, build_segment

__all__ = [
    "CompositeField",
    "Document",
    "Field",
    "Token",
    "TokenLocation",
    "id_field",
    "build_segment",
    "Segment",
    "merge_segments",
]
