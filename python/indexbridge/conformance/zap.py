"""Python-engine checks for the zap vectors (vectors/zap/README.md).

``check_case(vectors_dir, entry, out_dir)`` takes one ``cases`` item of the zap manifest. It
decodes the reference ``.zap`` and compares everything the case's ``segment`` description
reports; for a build case it writes a segment from ``input`` and compares bytes, for a merge
case it merges the inputs with their drops and compares bytes and the doc-number mapping.
Returns the failures (empty = passed); with ``out_dir`` each encoded file is written to
``out_dir / <the case's .zap path>``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from indexbridge.roaring import container_layout
from indexbridge.storage import write_atomically
from indexbridge.zap.analysis import CompositeField, Document, Field, Token, TokenLocation
from indexbridge.zap.merge import merge_segments
from indexbridge.zap.postings import is_one_hit
from indexbridge.zap.segment import Segment, build_segment


def json_bytes(x: str | dict) -> bytes:
    """A vector byte string: UTF-8 text, or ``{"hex": ...}`` for other bytes."""
    return bytes.fromhex(x["hex"]) if isinstance(x, dict) else x.encode("utf-8")


def bytes_json(b: bytes) -> str | dict:
    """The vector representation of ``b``."""
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": b.hex()}


def load_case_json(path: Path) -> dict:
    """A case description, ``.json`` or ``.json.gz``."""
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if path.name.endswith(".gz") else raw)


def case_json_path(vectors_dir: Path, name: str) -> Path:
    plain = vectors_dir / f"{name}.json"
    return plain if plain.exists() else vectors_dir / f"{name}.json.gz"


def _tokens(items: list | None) -> tuple[Token, ...] | None:
    if items is None:
        return None
    return tuple(
        Token(json_bytes(term), freq, tuple(TokenLocation(f, p, s, e, tuple(ap)) for f, p, s, e, ap in locs))
        for term, freq, locs in items
    )


def documents_from_json(items: list[dict]) -> list[Document]:
    """The ``input`` of a build case as writer documents."""
    docs = []
    for d in items:
        fields = tuple(
            Field(
                f["name"], json_bytes(f["value"]), f["type"], tuple(f["array_positions"]),
                f["options"]["index"], f["options"]["store"], f["options"]["term_vectors"],
                f["options"]["doc_values"], f["length"], _tokens(f["tokens"]),
            )
            for f in d["fields"]
        )
        composites = tuple(CompositeField(c["name"], c["length"], _tokens(c["tokens"]) or ()) for c in d["composite_fields"])
        docs.append(Document(fields, composites))
    return docs


# bleve's options for `_all`; writers ignore a composite field's options (spec/zap.md §15)
_COMPOSITE_OPTIONS = {"index": True, "store": False, "term_vectors": True, "doc_values": False}


def _tokens_json(tokens: tuple[Token, ...] | None) -> list | None:
    if tokens is None:
        return None
    return [
        [bytes_json(t.term), t.freq, [[l.field, l.pos, l.start, l.end, list(l.array_positions)] for l in t.locations]]
        for t in tokens
    ]


def documents_to_json(docs: list[Document]) -> list[dict]:
    """Writer documents as a build case's ``input`` (the inverse of :func:`documents_from_json`)."""
    return [
        {
            "id": bytes_json(d.fields[-1].value),
            "fields": [
                {
                    "name": f.name, "type": f.type, "value": bytes_json(f.value), "array_positions": list(f.array_positions),
                    "options": {"index": f.index, "store": f.store, "term_vectors": f.term_vectors, "doc_values": f.doc_values},
                    "length": f.length, "tokens": _tokens_json(f.tokens),
                }
                for f in d.fields
            ],
            "composite_fields": [
                {"name": c.name, "options": _COMPOSITE_OPTIONS, "length": c.length, "tokens": _tokens_json(c.tokens)}
                for c in d.composite_fields
            ],
        }
        for d in docs
    ]


def describe(segment: Segment) -> dict:
    """Everything a reader reports about ``segment``, in the shape of a vector's ``segment`` object."""
    f = segment.footer
    names = segment.field_names
    dictionaries = []
    for info in segment.fields:
        dictionary = segment.dictionary(info.id)
        terms = []
        for term, value in dictionary.items():
            entry: dict = {"term": bytes_json(term), "fst_value": str(value)}
            postings = segment.postings_at(value, info.dict_offset)
            if is_one_hit(value):
                entry["encoding"] = "1hit"
            else:
                freq_offset, loc_offset, roaring_at, roaring_len = postings.record_info
                entry["encoding"] = "general"
                entry["freq_offset"], entry["loc_offset"], entry["roaring_len"] = freq_offset, loc_offset, roaring_len
                cookie, layout = container_layout(segment.data[roaring_at : roaring_at + roaring_len])
                containers = [list(c) for c in layout]
                entry["roaring_cookie"], entry["roaring_containers"] = cookie, containers
            hits = list(postings)
            entry["docs"] = [h.doc for h in hits]
            entry["freqs"] = [h.freq for h in hits]
            entry["norm_bits"] = [h.norm_bits for h in hits]
            entry["locs"] = [
                None if h.locations is None
                else [[names[loc.field_id], loc.pos, loc.start, loc.end, list(loc.array_positions)] for loc in h.locations]
                for h in hits
            ]
            terms.append(entry)
        dictionaries.append({"field": info.name, "fst_bytes_len": dictionary.fst_len, "num_terms": len(terms), "terms": terms})
    dv_fields = [info.name for info in segment.fields if info.docvalues is not None]
    return {
        "file_size": len(segment.data),
        "crc_ok": segment.crc_ok,
        "footer": {
            "num_docs": f.num_docs, "stored_index_offset": f.stored_index_offset,
            "fields_index_offset": f.fields_index_offset, "doc_value_offset": str(f.doc_value_offset),
            "chunk_factor": f.chunk_factor, "version": f.version, "crc": f.crc,
        },
        "fields": [
            {"id": i.id, "name": i.name, "field_record_offset": i.record_offset, "dict_offset": i.dict_offset,
             "docvalues": None if i.docvalues is None else {"start": i.docvalues[0], "end": i.docvalues[1]}}
            for i in segment.fields
        ],
        "dictionaries": dictionaries,
        "doc_ids": [bytes_json(segment.doc_id(d)) for d in range(segment.num_docs)],
        "stored": [
            [[name, typ, bytes_json(value), list(aps)] for name, typ, value, aps in segment.document(d)]
            for d in range(segment.num_docs)
        ],
        "docvalue_fields": dv_fields,
        "docvalues": {
            name: [[doc, [bytes_json(t) for t in terms]] for doc, terms in segment.docvalues(name)] for name in dv_fields
        },
    }


def _first_difference(path: str, got: object, expected: object) -> str | None:
    """Where ``got`` first differs from ``expected`` (a JSON path), or None. Keys of ``got`` that
    ``expected`` lacks are no difference."""
    if got == expected:  # the usual answer, found at C speed (the walk took 6 of a big case's 17 s)
        return None
    if isinstance(expected, dict) and isinstance(got, dict) and "hex" not in expected:
        for key in expected:
            if key not in got:
                return f"{path}.{key}: missing"
            diff = _first_difference(f"{path}.{key}", got[key], expected[key])
            if diff:
                return diff
        return None
    if isinstance(expected, list) and isinstance(got, list):
        if len(got) != len(expected):
            return f"{path}: {len(got)} items, expected {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            diff = _first_difference(f"{path}[{i}]", g, e)
            if diff:
                return diff
        return None
    return None if got == expected else f"{path}: got {str(got)[:120]}, expected {str(expected)[:120]}"


def _check_bytes(what: str, got: bytes, expected: bytes, failures: list[str]) -> None:
    if got != expected:
        at = next((i for i in range(min(len(got), len(expected))) if got[i] != expected[i]), min(len(got), len(expected)))
        failures.append(f"{what}: {len(got)} bytes, expected {len(expected)}; first difference at offset {at}")


def check_case(vectors_dir: Path, entry: dict, out_dir: Path | None) -> list[str]:
    case = load_case_json(vectors_dir / entry["json"])
    zap_path = vectors_dir / entry["zap"]
    expected_bytes = zap_path.read_bytes()
    failures: list[str] = []
    expected = {k: v for k, v in case["segment"].items() if k not in ("format", "file")}
    with Segment.open(zap_path) as segment:
        diff = _first_difference("segment", describe(segment), expected)
    if diff:
        failures.append(f"decode: {diff}")
    if case["kind"] == "build":
        encoded = build_segment(documents_from_json(case["input"]), case["chunk_factor"])
    else:
        merge = case["merge"]
        inputs = [Segment.open(vectors_dir / f"{name}.zap") for name in merge["inputs"]]
        drops = [set(d or ()) for d in merge["drops"]]
        encoded, new_doc_nums = merge_segments(inputs, drops, case["chunk_factor"])
        for s in inputs:
            s.close()
        if new_doc_nums != merge["new_doc_nums"]:
            failures.append(f"merge: new_doc_nums {str(new_doc_nums)[:120]}, expected {str(merge['new_doc_nums'])[:120]}")
    _check_bytes("encode", encoded, expected_bytes, failures)
    if out_dir is not None:
        write_atomically(Path(out_dir) / entry["zap"], encoded)
    return failures


CHECKERS = {"zap": check_case}
