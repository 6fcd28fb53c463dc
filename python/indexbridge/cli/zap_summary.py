"""`indexbridge inspect` for zap v11 segments: footer, fields, section sizes, and on request the
terms of every field with their document frequencies (``--terms``, ``--prefix P``) and one
document's stored fields (``--doc N``). The JVM engine (``io.indexbridge.cli.ZapInspect``) prints
the same JSON::

    {file, format: "zap", file_size, version, num_docs, chunk_factor, crc,
     footer: {stored_index_offset, fields_index_offset, doc_value_offset},
     sections: {stored, stored_index, postings, dictionaries, docvalues, docvalue_index, fields, footer},
     fields: [{id, name, terms, docvalues, dictionary_bytes, docvalue_bytes,
               term_list?: [{term | term_hex, docs}]}],
     doc?: {doc, stored: [{field, type, value | value_hex, array_positions}]}}

Section sizes (spec/zap.md §2) add up to the file size: the stored records and their index, the
dictionaries (length prefix + FST) and docvalue sections of every field, the docvalue index, the
field records with the fields index, the footer; ``postings`` is what the per-field areas hold
besides dictionaries and docvalues (freq/norm and location blocks, postings records, bitmaps).
"""

from __future__ import annotations

from indexbridge.bytes import uvarint_bytes
from indexbridge.zap.segment import FOOTER_SIZE, Segment

_NO_DOCVALUES = (1 << 64) - 1  # the docvalue index entry of a field without a section


def _text(raw: bytes, key: str) -> dict:
    """Bytes as ``{key: text}`` when they are UTF-8, else ``{key + "_hex": hex}``."""
    try:
        return {key: raw.decode("utf-8")}
    except UnicodeDecodeError:
        return {f"{key}_hex": raw.hex()}


def zap_summary(path: str, terms: bool = False, prefix: str | None = None, doc: int | None = None) -> dict:
    with Segment.open(path) as segment:
        f = segment.footer
        size = len(segment.data)
        n = f.num_docs
        fields, dictionary_bytes, docvalue_bytes, docvalue_index = [], 0, 0, 0
        for info in segment.fields:
            dictionary = segment.dictionary(info.id)
            dict_size = 0 if dictionary.fst is None else len(uvarint_bytes(dictionary.fst_len)) + dictionary.fst_len
            dv_size = 0 if info.docvalues is None else info.docvalues[1] - info.docvalues[0]
            dictionary_bytes += dict_size
            docvalue_bytes += dv_size
            start, end = info.docvalues or (_NO_DOCVALUES, _NO_DOCVALUES)
            docvalue_index += len(uvarint_bytes(start)) + len(uvarint_bytes(end))
            field = {"id": info.id, "name": info.name, "terms": len(dictionary), "docvalues": info.docvalues is not None,
                     "dictionary_bytes": dict_size, "docvalue_bytes": dv_size}  # fmt: skip
            if terms or prefix is not None:
                items = dictionary.prefix(prefix.encode("utf-8")) if prefix is not None else dictionary.items()
                field["term_list"] = [
                    {**_text(term, "term"), "docs": len(segment.postings_at(value, info.dict_offset).docs)} for term, value in items
                ]
            fields.append(field)
        stored, stored_index = (f.stored_index_offset, 8 * n) if n else (0, 0)
        docvalue_index = docvalue_index if n else 0
        field_records = size - FOOTER_SIZE - (f.doc_value_offset + docvalue_index if n else 0)
        sections = {
            "stored": stored,
            "stored_index": stored_index,
            "postings": size - FOOTER_SIZE - field_records - docvalue_index - docvalue_bytes - dictionary_bytes - stored_index - stored,
            "dictionaries": dictionary_bytes,
            "docvalues": docvalue_bytes,
            "docvalue_index": docvalue_index,
            "fields": field_records,
            "footer": FOOTER_SIZE,
        }
        out = {
            "file": path, "format": "zap", "file_size": size, "version": f.version, "num_docs": n,
            "chunk_factor": f.chunk_factor, "crc": f.crc,
            "footer": {"stored_index_offset": f.stored_index_offset, "fields_index_offset": f.fields_index_offset,
                       "doc_value_offset": f.doc_value_offset},
            "sections": sections, "fields": fields,
        }  # fmt: skip
        if doc is not None:
            if not 0 <= doc < n:
                raise ValueError(f"--doc {doc}: a document number below {n}")
            out["doc"] = {
                "doc": doc,
                "stored": [{"field": name, "type": kind, **_text(value, "value"), "array_positions": list(positions)}
                           for name, kind, value, positions in segment.document(doc)],
            }  # fmt: skip
        return out
