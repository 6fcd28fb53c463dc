"""bleve v1.0.14's analyzers and document mapping: raw values to the writer's input (:mod:`.analysis`).

Analyzers (``analysis/analyzer/*``), each a tokenizer plus token filters::

    keyword    single token: the whole value                   (tokenizer/single)
    simple     runs of unicode.IsLetter, lower-cased           (tokenizer/letter + to_lower)
    standard   UAX#29 words, lower-cased, English stop words   (tokenizer/unicode + to_lower + stop_en)

A token is ``(term bytes, byte start, byte end, position)``; positions count the tokenizer's
tokens from 1, so a removed stop word leaves a gap.

Hand-written because each must reproduce the Go code's exact boundaries, not Unicode's current
rules. The tables beside this module are extracted from the Go sources (no library carries them):

* ``word_break_u8.txt``: Unicode **8.0.0** word-break properties and the Hangul/Han/Hiragana
  scripts, as github.com/blevesearch/segment v0.9.0 compiled them into its ragel scanner
  (``scripts/gen_word_break_table.py``). The scanner takes, at each position, the longest match
  of its rules (ties to the earlier rule); a segment is a word unless only the "none" rules
  (spaces, punctuation, newlines, lone Extend/Format, regional indicators) match there.
  :func:`_word_end` is that scanner's word rules as a DFA over word-break classes (Extend and
  Format characters attach to the preceding character), with the module's own deviations from
  UAX#29: Hebrew ``HL " HL`` ends a word's mid-letter chain, runs of Hangul-script characters
  form one word, and every Han or Hiragana character is a word by itself.
* ``to_lower.txt`` / ``letters.txt``: Go's ``unicode.ToLower`` / ``unicode.IsLetter``
  (integration/zapgo ``tables``; Go 1.26, Unicode 15.0). The lower-case filter maps rune by rune
  and keeps Go's in-place quirks (:func:`_lower_in_place`): a final ``Σ`` becomes ``ς``, and a
  rune whose lower case is narrower in UTF-8 (``İ K Ω Å ẞ``) leaves the term's later bytes
  unshifted, so the term is cut short and may not be valid UTF-8 (``İstanbul`` -> ``i\xb0stanbu``).
* ``stop_en.txt``: bleve's English stop words.

Inputs where this differs from Go: none known. tests/data/zap_analyzer_cases.json (tokens bleve
produced for tricky inputs) and integration/test_zap_go.py (whole segments from a generated
corpus) hold it to bleve. Invalid UTF-8 cannot occur (values are ``str``). The lower-case and
letter tables follow the Go that generated them (1.26, Unicode 15.0); a bleve built with a Go of
another Unicode version differs on the characters whose case or category changed between them.

Document mapping (``mapping/field.go``, ``document/field_*.go``, scorch's ``analyze``):
:func:`analyze_document` turns ``{field: value}`` into a :class:`Document` as bleve's scorch
hands it to zap: regular fields in document order (a list value gives one instance per element,
with its array position), ``_id`` last, and the ``_all`` composite field built from every indexed
field mapped ``include_in_all``. Composing ``_all`` stamps the source field's name on that
field's own locations (bleve shares the location objects), which this reproduces.
"""

from __future__ import annotations

import bisect
import datetime as dt
import math
import re
import struct
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from operator import itemgetter
from typing import NamedTuple

from indexbridge.zap.analysis import CompositeField, Document, Field, Token, TokenLocation, id_field

ANALYZERS = ("keyword", "simple", "standard")
FIELD_TYPES = ("text", "number", "boolean", "datetime")
ALL_FIELD_NAME = "_all"
SHIFT_START_INT64 = 0x20  # numeric.ShiftStartInt64
PRECISION_STEP = 4  # document.DefaultPrecisionStep / DefaultDateTimePrecisionStep


@dataclass(frozen=True)
class AnalyzedToken:
    term: bytes
    start: int
    end: int
    position: int


def _table_lines(name: str) -> list[list[str]]:
    text = resources.files("indexbridge.zap").joinpath(name).read_text("utf-8")
    return [line.split() for line in text.splitlines() if line and not line.startswith("#")]


# ---------------------------------------------------------------- word-break classes (segment)

# One character per (word-break property, script) pair the scanner distinguishes.
_WB_SYMBOL = {
    "ALetter": "a", "Hebrew_Letter": "h", "Numeric": "n", "Katakana": "k", "ExtendNumLet": "u",
    "MidLetter": "l", "MidNum": "m", "MidNumLet": "b", "Single_Quote": "q", "Double_Quote": "d",
    "Extend": "e", "Format": "f",
}
_SCRIPT_SYMBOL = {("ALetter", "Hangul"): "A", ("ALetter", "Han"): "B", ("Extend", "Hangul"): "E",
                  ("-", "Hangul"): "G", ("-", "Han"): "H", ("-", "Hiragana"): "I"}
_OTHER = "o"  # any other character, including CR, LF, newlines and regional indicators
_EXTEND = frozenset("efE")  # Extend | Format: attach to the preceding character
_UNIT = {"A": "a", "B": "a"}  # script-carrying letters are ALetter to the word rules
_HANGUL = frozenset("AEG")
_HAN_OR_HIRAGANA = frozenset("BHI")


@cache
def _class_table() -> dict[int, str]:
    """str.translate table: every code point with a class, and every ASCII one (so symbols never collide)."""
    table = {cp: _OTHER for cp in range(128)}
    for first, last, wb, script in _table_lines("word_break_u8.txt"):
        symbol = _SCRIPT_SYMBOL.get((wb, script)) or _WB_SYMBOL.get(wb, _OTHER)
        if symbol != _OTHER or int(first, 16) < 128:
            for cp in range(int(first, 16), int(last, 16) + 1):
                table[cp] = symbol
    return table


# The word rules of segment_words.rl as a DFA over word-break classes. States:
# A letter (mid-letter may follow), H Hebrew letter (may also take ' or " HL), P the HL closing
# HL " HL (no mid may follow), N number, U ExtendNumLet, K Katakana, S HL followed by ';
# pending (not accepting): L letter + mid-letter, M number + mid-number, D HL + ".
_LETTER_NEXT = {"a": "A", "h": "H", "n": "N", "u": "U"}
_WORD_DFA: dict[str, dict[str, str]] = {
    "start": {**_LETTER_NEXT, "k": "K"},
    "A": {**_LETTER_NEXT, "l": "L", "b": "L", "q": "L"},
    "H": {**_LETTER_NEXT, "l": "L", "b": "L", "q": "S", "d": "D"},
    "P": _LETTER_NEXT,
    "S": _LETTER_NEXT,
    "N": {**_LETTER_NEXT, "m": "M", "b": "M", "q": "M"},
    "U": {**_LETTER_NEXT, "k": "K"},
    "K": {"k": "K", "u": "U"},
    "L": {"a": "A", "h": "A"},
    "M": {"n": "N"},
    "D": {"h": "P"},
}
_ACCEPTING = frozenset("AHPSNUK")


def _skip_extend(classes: str, i: int) -> int:
    n = len(classes)
    while i < n and classes[i] in _EXTEND:
        i += 1
    return i


def _word_end(classes: str, i: int) -> int:
    """End of the longest word rule match at ``i`` (``i`` when only the none rules match there)."""
    best = i
    c = classes[i]
    if c in _HANGUL:  # WordHangul: (Hangul (Extend|Format)*)+
        j = i
        while j < len(classes) and classes[j] in _HANGUL:
            j = _skip_extend(classes, j + 1)
        best = j
    elif c in _HAN_OR_HIRAGANA:  # WordHan, WordHiragana: one character
        best = _skip_extend(classes, i + 1)
    state, j, n = "start", i, len(classes)
    while j < n:
        state = _WORD_DFA[state].get(_UNIT.get(classes[j], classes[j]))
        if state is None:
            break
        j = _skip_extend(classes, j + 1)
        if state in _ACCEPTING and j > best:
            best = j
    return best


# Without Hebrew, Katakana, the three scripts and Extend/Format, the DFA's words are this regex's
# greedy matches (letters or digits joined by their mid punctuation, ExtendNumLet anywhere): a
# fast path, held to the DFA on random class strings by tests/test_zap_analyzers.py.
_PLAIN_WORD = re.compile(r"(?:a+(?:[lbq]a+)*|n+(?:[mbq]n+)*|u)+")
_NEEDS_DFA = re.compile(r"[hkABEGHIef]")


def _word_spans(text: str) -> list[tuple[int, int]]:
    """Code point spans of the segments blevesearch/segment types as words."""
    return _class_word_spans(text.translate(_class_table()))


def _class_word_spans(classes: str) -> list[tuple[int, int]]:
    """The word spans of a text by its characters' classes. No word rule takes an "other"
    character (``o``), so no word goes across one: the runs between them are scanned apart, by
    the DFA only those with a class the fast path lacks (most texts with a Han character or a
    combining mark have one or two such runs)."""
    spans = []
    done = 0
    while (needs := _NEEDS_DFA.search(classes, done)) is not None:
        other = classes.rfind(_OTHER, done, needs.start())
        start = done if other < 0 else other + 1
        n = classes.find(_OTHER, needs.end())
        if n < 0:
            n = len(classes)
        spans += [m.span() for m in _PLAIN_WORD.finditer(classes, done, start)]
        i, done = start, n
        while i < n:
            end = _word_end(classes, i)
            if end > i:
                spans.append((i, end))
                i = end
            else:
                i += 1
    spans += [m.span() for m in _PLAIN_WORD.finditer(classes, done)]
    return spans


# ---------------------------------------------------------------- letters, lower case, stop words

@cache
def _letter_ranges() -> tuple[list[int], list[int]]:
    firsts, lasts = [], []
    for first, last in _table_lines("letters.txt"):
        firsts.append(int(first, 16))
        lasts.append(int(last, 16))
    return firsts, lasts


def _is_letter(cp: int) -> bool:
    firsts, lasts = _letter_ranges()
    k = bisect.bisect_right(firsts, cp) - 1
    return k >= 0 and cp <= lasts[k]


@cache
def _to_lower() -> tuple[dict[int, int], frozenset[str], re.Pattern[str]]:
    """Go's unicode.ToLower as a translate table, the runes whose lower case has another UTF-8
    width, and a pattern finding those or Σ (text without them lower-cases as a whole)."""
    table = {int(r, 16): int(lower, 16) for r, lower in _table_lines("to_lower.txt")}
    resized = frozenset(chr(r) for r, lower in table.items() if len(chr(lower).encode()) != len(chr(r).encode()))
    special = re.compile("[" + re.escape("".join(sorted(resized)) + "Σ") + "]")
    return table, resized, special


def _lower(term: str) -> bytes:
    """bleve's to_lower filter (toLowerDeferredCopy), rune by rune with Go's unicode.ToLower."""
    table, resized, _ = _to_lower()
    if not any(c in resized for c in term):
        lowered = term.translate(table)
        if term.endswith("Σ"):  # Go: a last rune lowering to σ becomes ς
            lowered = lowered[:-1] + "ς"
        return lowered.encode()
    return _lower_in_place(term, table)


def _lower_in_place(term: str, table: dict[int, int]) -> bytes:
    """Go's toLowerDeferredCopy step by step, for terms with a rune whose lower case is narrower or wider.

    It lower-cases in place, reading at ``i`` and writing at ``j``; unchanged runes are skipped
    without being copied, so once a rune shrank (İ -> i) the bytes after it are not moved and
    the result is cut short. A rune whose lower case is wider hands the rest to bytes.ToLower.
    """
    buf = bytearray(term.encode())
    i = j = 0
    for ch in term:
        width = len(ch.encode())
        lower = table.get(ord(ch), ord(ch))
        if lower == ord(ch):
            i += width
            j += width
            continue
        if lower == ord("σ") and i + 2 == len(buf):
            lower = ord("ς")
        encoded = chr(lower).encode()
        if len(encoded) > width:
            return bytes(buf[:j]) + bytes(buf[i:]).decode().translate(table).encode()
        buf[j:j + len(encoded)] = encoded
        i += width
        j += len(encoded)
    return bytes(buf[:j])


@cache
def _stop_words() -> frozenset[bytes]:
    return frozenset(line[0].encode() for line in _table_lines("stop_en.txt"))


# ---------------------------------------------------------------- analyzers

def _byte_offsets(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    if text.isascii():
        return spans
    out, cp, byte = [], 0, 0
    for start, end in spans:
        byte += len(text[cp:start].encode())
        width = len(text[start:end].encode())
        out.append((byte, byte + width))
        cp, byte = end, byte + width
    return out


def _letter_spans(text: str) -> list[tuple[int, int]]:
    """tokenizer/character with unicode.IsLetter; it stops at U+FFFD (Go's utf8.RuneError)."""
    spans, start = [], None
    for i, ch in enumerate(text):
        if ch == "\ufffd":
            break
        if _is_letter(ord(ch)):
            if start is None:
                start = i
        elif start is not None:
            spans.append((start, i))
            start = None
    else:
        if start is not None:
            spans.append((start, len(text)))
        return spans
    if start is not None:
        spans.append((start, i))
    return spans


def _analyze(text: str, analyzer: str) -> list[tuple[bytes, int, int, int]]:
    """(term, byte start, byte end, position) of every token; :func:`analyze` without the objects."""
    if analyzer == "keyword":
        value = text.encode()
        return [(value, 0, len(value), 1)]
    if analyzer == "simple":
        spans = _letter_spans(text)
    elif analyzer == "standard":
        spans = _word_spans(text)
    else:
        raise ValueError(f"unknown analyzer {analyzer!r}; expected one of {ANALYZERS}")
    stop = _stop_words() if analyzer == "standard" else frozenset()
    table, _, special = _to_lower()
    if special.search(text):
        terms = [_lower(text[start:end]) for start, end in spans]
    else:  # lower-casing rune by rune: the whole text at once
        lowered = text.translate(table)
        terms = [lowered[start:end].encode() for start, end in spans]
    return [
        (term, byte_start, byte_end, position)
        for position, (term, (byte_start, byte_end)) in enumerate(zip(terms, _byte_offsets(text, spans)), 1)
        if term not in stop
    ]


def analyze(text: str, analyzer: str) -> list[AnalyzedToken]:
    """Tokens of ``text`` as bleve's analyzer ``analyzer`` (``keyword``, ``simple``, ``standard``) emits them."""
    return [AnalyzedToken(*token) for token in _analyze(text, analyzer)]


# ---------------------------------------------------------------- field mapping

@dataclass(frozen=True)
class FieldMapping:
    """mapping.FieldMapping; ``term_vectors=None`` takes bleve's default for the type (text only)."""

    name: str
    type: str = "text"
    analyzer: str = "standard"
    index: bool = True
    store: bool = True
    term_vectors: bool | None = None
    doc_values: bool = True
    include_in_all: bool = True

    def __post_init__(self) -> None:
        if self.type not in FIELD_TYPES:
            raise ValueError(f"field {self.name!r}: unknown type {self.type!r}; expected one of {FIELD_TYPES}")
        if self.analyzer not in ANALYZERS:
            raise ValueError(f"field {self.name!r}: unknown analyzer {self.analyzer!r}; expected one of {ANALYZERS}")
        if self.term_vectors is None:
            object.__setattr__(self, "term_vectors", self.type == "text")


def _spread_steps() -> tuple[tuple[int, int], ...]:
    """Moving each 7-bit group k of a 64-bit value (bits 7k..7k+6, k < 10) up by k bits, into byte
    k: in four steps, by 8, 4, 2 and 1 bits, each moving the groups whose k has that bit, as
    (mask of the moved groups where they are then, mask of the rest)."""
    steps, at = [], [7 * k for k in range(10)]
    for by in (8, 4, 2, 1):
        moved = 0
        for k in range(10):
            if k & by:
                moved |= 0x7F << at[k]
                at[k] += by
        steps.append((moved, ~moved))
    return tuple(steps)


(_MOVED_8, _KEPT_8), (_MOVED_4, _KEPT_4), (_MOVED_2, _KEPT_2), (_MOVED_1, _KEPT_1) = _spread_steps()


def prefix_coded_int64(value: int, shift: int) -> bytes:
    """numeric.NewPrefixCodedInt64: shift byte, then the sign-flipped value >> shift in 7-bit
    groups, most significant first, one a byte (spread into bytes at once: a number's 16 terms
    were a tenth of the analysis time, one group at a time)."""
    groups = ((value & 0xFFFFFFFFFFFFFFFF) ^ 0x8000000000000000) >> shift
    groups = groups & _KEPT_8 | (groups & _MOVED_8) << 8
    groups = groups & _KEPT_4 | (groups & _MOVED_4) << 4
    groups = groups & _KEPT_2 | (groups & _MOVED_2) << 2
    groups = groups & _KEPT_1 | (groups & _MOVED_1) << 1
    return bytes((SHIFT_START_INT64 + shift,)) + groups.to_bytes((63 - shift) // 7 + 1, "big")


def float64_to_int64(value: float) -> int:
    """numeric.Float64ToInt64: the IEEE bits, with the magnitude bits flipped for negatives (sortable)."""
    (bits,) = struct.unpack("<q", struct.pack("<d", value))
    return bits ^ 0x7FFFFFFFFFFFFFFF if bits < 0 else bits


# A shift of 28 more drops four whole 7-bit groups: the term of shift s + 28 is the shift byte and
# the groups of shift s's term but its last four (s + 28 from shift s, 7 = 28 / PRECISION_STEP terms back)
_GROUPS_SHIFT = 28
_SHIFT_BYTES = [bytes((SHIFT_START_INT64 + shift,)) for shift in range(64)]


def _numeric_tokens(value: int) -> list[tuple[bytes, int, int, int]]:
    """NumericField/DateTimeField.Analyze: the full value, then each precision-step shift, all at position 1."""
    terms = [prefix_coded_int64(value, shift) for shift in range(0, _GROUPS_SHIFT, PRECISION_STEP)]
    back = _GROUPS_SHIFT // PRECISION_STEP
    for shift in range(_GROUPS_SHIFT, 64, PRECISION_STEP):
        terms.append(_SHIFT_BYTES[shift] + terms[-back][1:-4])
    return [(term, 0, len(term), 1) for term in terms]


def _unix_nano(value: dt.datetime) -> int:
    if value.tzinfo is None:
        raise ValueError(f"datetime {value!r} has no time zone")
    delta = value - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


# Builds a NamedTuple from its fields without the Python-level __new__ namedtuple generates (a
# tenth of the analysis time went to it: a Token per term and field, a TokenLocation per token)
_new = tuple.__new__
_TERM = itemgetter(0)  # a Token's term


class _Frequencies:
    """analysis.TokenFrequencies: term -> [freq, locations], in first-occurrence order."""

    def __init__(self) -> None:
        self.terms: dict[bytes, list] = {}

    def add(self, term: bytes, freq: int, locations: Sequence[TokenLocation]) -> None:
        entry = self.terms.get(term)
        if entry is None:
            self.terms[term] = [freq, list(locations)]
        else:
            entry[0] += freq
            entry[1].extend(locations)

    def add_tokens(self, tokens: list[tuple[bytes, int, int, int]], field: str | None,
                   array_positions: tuple[int, ...]) -> None:
        """One occurrence per analysed token; with term vectors (``field`` not None) its location."""
        terms = self.terms
        for term, start, end, position in tokens:
            entry = terms.get(term)
            if entry is None:
                entry = terms[term] = [0, []]
            entry[0] += 1
            if field is not None:
                entry[1].append(_new(TokenLocation, (field, position, start, end, array_positions)))

    def tokens(self) -> tuple[Token, ...]:
        """The tokens by term (sorted on the terms alone: comparing (term, entry) pairs took longer)."""
        tokens = [_new(Token, (term, freq, tuple(locations))) for term, (freq, locations) in self.terms.items()]
        tokens.sort(key=_TERM)
        return tuple(tokens)


class FieldValue(NamedTuple):
    """One field instance as bleve's mapping emits it (a ``document.Field`` before analysis).

    ``value`` by ``type``: ``str`` (text), ``float`` (number, any float64 including NaN and
    infinities, as bleve indexes them), ``bool`` (boolean), ``int`` nanoseconds since the Unix
    epoch (datetime, ``time.Time.UnixNano``)."""

    name: str
    type: str
    value: object
    array_positions: tuple[int, ...] = ()
    analyzer: str = "standard"
    index: bool = True
    store: bool = True
    term_vectors: bool = False
    doc_values: bool = False


def _value_tokens(field: FieldValue) -> tuple[str, bytes, list[tuple[bytes, int, int, int]]]:
    kind, value = field.type, field.value
    if kind == "text" and isinstance(value, str):
        return "t", value.encode(), _analyze(value, field.analyzer)
    if kind == "boolean" and isinstance(value, bool):
        term = b"T" if value else b"F"
        return "b", term, [(term, 0, 1, 1)]
    if kind == "number" and isinstance(value, float):
        tokens = _numeric_tokens(float64_to_int64(value))
        return "n", tokens[0][0], tokens
    if kind == "datetime" and isinstance(value, int) and not isinstance(value, bool) and -(1 << 63) <= value < 1 << 63:
        tokens = _numeric_tokens(value)
        return "d", tokens[0][0], tokens
    raise ValueError(f"field {field.name!r} of type {kind!r} cannot hold {value!r}")


def compose_document(doc_id: str, fields: Sequence[FieldValue], all_excluded: Collection[str] | None = frozenset()) -> Document:
    """The writer input scorch's ``analyze`` builds from a mapped document.

    ``fields`` in document order; ``_id`` is appended last. ``all_excluded``: the names bleve's
    mapping excluded from ``_all`` (every indexed field of any other name is composed into it),
    or None for a mapping with ``_all`` disabled.
    """
    out: list[Field] = []
    all_freqs = _Frequencies()
    all_length = 0
    for field in fields:
        type_byte, stored, tokens = _value_tokens(field)
        name = field.name
        if not field.index:
            out.append(Field(name, stored, type_byte, field.array_positions, False, field.store,
                             field.term_vectors, field.doc_values, 0, None))
            continue
        in_all = all_excluded is not None and name not in all_excluded
        # In bleve, composing _all renames the field's own locations to the field's name.
        location_field = name if in_all else ""
        freqs = _Frequencies()
        freqs.add_tokens(tokens, location_field if field.term_vectors else None, field.array_positions)
        if in_all:
            all_length += len(tokens)
            for term, (freq, locations) in freqs.terms.items():
                all_freqs.add(term, freq, locations)
        out.append(Field(name, stored, type_byte, field.array_positions, True, field.store,
                         field.term_vectors, field.doc_values, len(tokens), freqs.tokens()))
    out.append(id_field(doc_id.encode()))
    composites = (CompositeField(ALL_FIELD_NAME, all_length, all_freqs.tokens()),) if all_excluded is not None else ()
    return Document(tuple(out), composites)


def _raw_value(mapping: FieldMapping, value: object) -> object:
    """A value under an explicit :class:`FieldMapping` as :class:`FieldValue` holds it."""
    kind = mapping.type
    if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    if kind == "datetime" and isinstance(value, dt.datetime):
        return _unix_nano(value)
    if (kind == "text" and isinstance(value, str)) or (kind == "boolean" and isinstance(value, bool)):
        return value
    raise ValueError(f"field {mapping.name!r} of type {kind!r} cannot hold {value!r}")


def analyze_document(
    doc_id: str,
    values: Mapping[str, object] | Sequence[tuple[str, object]],
    mappings: Mapping[str, FieldMapping] | Sequence[FieldMapping],
    all_field: bool = True,
) -> Document:
    """The writer input bleve's scorch builds for a document mapped field by field.

    ``values`` in document order; a list or tuple value is an array (one field instance per
    element, array position = index). Every field needs a mapping (for bleve's own mapping JSON,
    dynamic mapping included, see :mod:`indexbridge.bleve.mapping`). ``all_field=False`` is a
    mapping with ``_all`` disabled.
    """
    by_name = mappings if isinstance(mappings, Mapping) else {m.name: m for m in mappings}
    items = values.items() if isinstance(values, Mapping) else values
    fields: list[FieldValue] = []
    excluded = set()
    for name, value in items:
        mapping = by_name.get(name)
        if mapping is None:
            raise ValueError(f"document {doc_id!r}: no mapping for field {name!r}")
        if not mapping.include_in_all:
            excluded.add(name)
        elements = list(enumerate(value)) if isinstance(value, (list, tuple)) else [(None, value)]
        for index, element in elements:
            fields.append(FieldValue(name, mapping.type, _raw_value(mapping, element), () if index is None else (index,),
                                     mapping.analyzer, mapping.index, mapping.store, mapping.term_vectors, mapping.doc_values))
    return compose_document(doc_id, fields, excluded if all_field else None)


__all__ = ["ANALYZERS", "FIELD_TYPES", "AnalyzedToken", "FieldMapping", "FieldValue", "analyze", "analyze_document",
           "compose_document", "float64_to_int64", "prefix_coded_int64"]
