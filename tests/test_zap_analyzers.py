"""bleve's analyzers and document mapping (indexbridge.zap.analyzers).

tests/data/zap_analyzer_cases.json holds tokens bleve v1.0.14 itself produced; the Scala
AnalysisSpec reads the same table. To add a case, add ``{"analyzer", "text"}`` to it and rerun
``target/zapgo/zapgo analyze tests/data/zap_analyzer_cases.json`` (it fills ``tokens``).
integration/test_zap_go.py compares whole segments built from raw documents with Go's.
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import random
from pathlib import Path

import pytest

from indexbridge.zap import build_segment
from indexbridge.zap.analysis import gc_paused
from indexbridge.zap.analyzers import FieldMapping, analyze, analyze_document, float64_to_int64, prefix_coded_int64

CASES = json.loads((Path(__file__).parent / "data" / "zap_analyzer_cases.json").read_text("utf-8"))
VECTORS = Path(__file__).resolve().parents[1] / ".." / "shared" / "vectors" / "zap"


def as_bytes(x: str | dict) -> bytes:
    return bytes.fromhex(x["hex"]) if isinstance(x, dict) else x.encode()


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['analyzer']}:{c['text'][:24]!r}")
def test_tokens_match_bleve(case: dict) -> None:
    got = [(t.term, t.start, t.end, t.position) for t in analyze(case["text"], case["analyzer"])]
    assert got == [(as_bytes(t[0]), t[1], t[2], t[3]) for t in case["tokens"]]


def test_mapped_document_builds_one_doc() -> None:
    doc = analyze_document("doc1", {"body": "The quick brown fox jumps over the lazy dog"},
                           [FieldMapping("body", doc_values=False)], all_field=False)
    assert build_segment([doc]) == (VECTORS / "one_doc.zap").read_bytes()


def test_field_types_and_all() -> None:
    when = dt.datetime(2020, 1, 2, 3, 4, 5, 6000, tzinfo=dt.timezone.utc)
    mappings = [FieldMapping("t"), FieldMapping("n", "number"), FieldMapping("b", "boolean", include_in_all=False),
                FieldMapping("d", "datetime"), FieldMapping("s", "text", "keyword", index=False)]
    doc = analyze_document("x", [("t", "Hello hello"), ("n", [1, -2.5]), ("b", False), ("d", when), ("s", "raw")], mappings)
    t, n0, n1, b, d, s, id_ = doc.fields
    assert (t.length, [(k.term, k.freq) for k in t.tokens]) == (2, [(b"hello", 2)])
    assert [loc.field for loc in t.tokens[0].locations] == ["t", "t"]  # stamped by the _all composition
    assert n1.array_positions == (1,) and n1.value == prefix_coded_int64(float64_to_int64(-2.5), 0)
    assert float64_to_int64(-2.5) < float64_to_int64(1.0) and len(n0.tokens) == 16 and n0.tokens[0].locations == ()
    assert b.value == b"F" and b.tokens[0].locations == ()
    assert d.value == prefix_coded_int64(1577934245006000000, 0)
    assert s.tokens is None and s.length == 0
    assert id_.name == "_id"
    (all_field,) = doc.composite_fields
    assert all_field.length == 2 + 16 + 16 + 16  # b excluded, s not indexed
    assert {loc.field for tok in all_field.tokens for loc in tok.locations} == {"t"}


def test_refused_inputs() -> None:
    with pytest.raises(ValueError, match="analyzer"):
        analyze("x", "whitespace")
    with pytest.raises(ValueError, match="cannot hold"):
        analyze_document("x", {"n": "1"}, [FieldMapping("n", "number")])
    with pytest.raises(ValueError, match="no mapping"):
        analyze_document("x", {"m": "1"}, [FieldMapping("n")])
    with pytest.raises(ValueError, match="time zone"):
        analyze_document("x", {"d": dt.datetime(2020, 1, 1)}, [FieldMapping("d", "datetime")])


def test_prefix_coded_terms_are_bleves_group_by_group() -> None:
    """prefix_coded_int64 spreads the 7-bit groups into bytes in four mask steps; bleve's
    NewPrefixCodedInt64 writes them one at a time, most significant first, after the shift byte
    (0x20 + shift). Every shift, random and edge values (integration/test_zap_go.py compares
    whole segments of numbers and dates with Go's)."""
    rng = random.Random(7)
    values = [rng.getrandbits(64) - (1 << 63) for _ in range(300)] + [0, 1, -1, (1 << 63) - 1, -(1 << 63), 1 << 35]
    values += [rng.getrandbits(rng.randint(1, 63)) for _ in range(300)]
    for value in values:
        for shift in range(64):
            sortable = ((value & (2**64 - 1)) ^ (1 << 63)) >> shift
            n = (63 - shift) // 7 + 1
            expected = bytes([0x20 + shift] + [sortable >> (7 * (n - 1 - k)) & 0x7F for k in range(n)])
            assert prefix_coded_int64(value, shift) == expected, (value, shift)


def test_numeric_tokens_are_every_shifts_prefix_coded_term() -> None:
    """A number's 16 terms (those past shift 24 cut from the one 28 before) are
    prefix_coded_int64's at each shift, edge and random values."""
    from indexbridge.zap.analyzers import _numeric_tokens

    rng = random.Random(20261129)
    values = [0, 1, -1, (1 << 63) - 1, -(1 << 63), 1 << 28] + [rng.getrandbits(64) - (1 << 63) for _ in range(500)]
    for value in values:
        expected = [prefix_coded_int64(value, shift) for shift in range(0, 64, 4)]
        assert [(t, 0, len(t), 1) for t in expected] == _numeric_tokens(value), value


def _dfa_word_spans(classes: str) -> list[tuple[int, int]]:
    """The word spans of the word DFA scanning a whole class string, position by position."""
    from indexbridge.zap import analyzers

    spans, i = [], 0
    while i < len(classes):
        end = analyzers._word_end(classes, i)
        if end > i:
            spans.append((i, end))
        i = max(end, i + 1)
    return spans


def test_plain_word_regex_equals_the_word_dfa() -> None:
    """The fast path for texts without Hebrew, Katakana, the three scripts or Extend/Format."""
    from indexbridge.zap import analyzers

    rng = random.Random(4)
    for _ in range(3000):
        classes = "".join(rng.choice("anulbqmdo") for _ in range(rng.randint(1, 14)))
        assert [m.span() for m in analyzers._PLAIN_WORD.finditer(classes)] == _dfa_word_spans(classes), classes


def test_word_spans_by_runs_equal_the_word_dfa_over_the_whole_text() -> None:
    """Runs between "other" characters scanned apart, each by the fast path or the DFA, give the
    spans of the DFA scanning the whole class string: every class, runs of every length."""
    from indexbridge.zap import analyzers

    rng = random.Random(20261129)
    for _ in range(3000):
        alphabet = rng.choice(("anulbqmdo", "anulbqmdohkABEGHIef", "aoH", "anoefk"))
        classes = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert analyzers._class_word_spans(classes) == _dfa_word_spans(classes), classes


def test_gc_paused_restores_the_collector_and_promotes_what_it_made() -> None:
    """The collector is off inside, back as it was after; what was made inside is in the oldest
    generation (no young collection walks it at the next allocation), unless the process froze
    objects of its own, which stay frozen."""
    def tracked(obj: object, generation: int | None = None) -> bool:
        return any(o is obj for o in gc.get_objects(generation))

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        made = [[i] for i in range(1000)]
    assert gc.isenabled() and tracked(made, 2) and tracked(made[-1], 2)
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
    frozen = [[1]]
    gc.freeze()
    try:
        with gc_paused():
            pass
        assert gc.isenabled() and not tracked(frozen) and not tracked(frozen[0])
    finally:
        gc.unfreeze()
    assert tracked(frozen, 2)
