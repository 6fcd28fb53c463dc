"""bleve v1.0.14's index mapping: its JSON, and documents mapped by it into zap's writer input.

The mapping JSON is bleve's own (``mapping.IndexMappingImpl`` as ``json.Marshal`` writes it and
``json.Unmarshal`` reads it; bleve stores it in the index as the internal value ``_mapping``)::

    {"types": {name: document mapping},              omitted when empty
     "default_mapping": document mapping,
     "type_field": "_type", "default_type": "_default",
     "default_analyzer": "standard", "default_datetime_parser": "dateTimeOptional",
     "default_field": "_all",
     "store_dynamic": true, "index_dynamic": true, "docvalues_dynamic": true,
     "analysis": {}}                                  custom analysis components (none supported)

    document mapping  {"enabled", "dynamic", "properties": {name: document mapping},
                       "fields": [field mapping], "default_analyzer", "struct_tag_key"}
    field mapping     {"name", "type" (text | number | datetime | boolean), "analyzer", "store",
                       "index", "include_term_vectors", "include_in_all", "date_format", "docvalues"}

Parsing follows bleve's ``UnmarshalJSON`` methods: omitted keys of an index or document mapping
take bleve's defaults (``enabled``/``dynamic`` true), omitted keys of a field mapping are false or
empty (``{"type": "text"}`` is neither indexed nor stored, as in bleve), unknown keys are ignored
(bleve's ``MappingJSONStrict`` is false). :meth:`IndexMapping.to_json` writes what Go's
``json.Marshal`` writes for the same mapping, byte for byte.

Mapping a document (:meth:`IndexMapping.map_document`) is bleve's ``MapDocument`` over a JSON value
(``dict``/``list``/``str``/numbers/``bool``/``None``, plus ``datetime`` as Go's ``time.Time``):

* the document mapping is ``types[doc[type_field]]`` or ``default_mapping``; a disabled one maps
  nothing;
* each value is looked up by its dotted path: a ``properties`` chain matching the whole path
  applies that mapping's ``fields`` (a field applies only to values of its kind: strings to
  ``text`` and ``datetime`` (parsed), numbers to ``number``, booleans to ``boolean``, times to
  ``datetime``; ``name`` renames the last path element); otherwise, if the closest enclosing
  mapping is ``dynamic``, strings that bleve's ``dateTimeOptional`` parser accepts become
  ``datetime`` fields and other strings ``text``, numbers (all float64) ``number``, booleans
  ``boolean``, each with ``store_dynamic``/``index_dynamic``/``docvalues_dynamic``, term vectors
  for text, included in ``_all``;
* arrays give one field instance per element with its array position; objects nest paths;
* ``_all`` (unless ``properties._all`` is disabled) composes every indexed field whose name no
  field mapping with ``include_in_all: false`` produced;
* a text field's analyzer is its ``analyzer``, else the nearest ``default_analyzer`` along its
  path, else the index's.

Go walks a JSON object's keys in random order, so bleve's own segments order a document's fields
randomly; here they are in the object's order (the answers are the same).

Not supported, each a clear :class:`IndexFormatError` naming it: custom ``analysis`` components,
analyzers other than ``standard``/``simple``/``keyword``, datetime parsers other than
``dateTimeOptional``, ``geopoint`` fields. :func:`parse_datetime` is Go's ``time.Parse`` over the
``dateTimeOptional`` layouts (RFC 3339 with or without fraction and zone, ``T`` or a space,
date only); it returns nanoseconds since the epoch, as bleve indexes them.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
from collections.abc import Mapping
from decimal import Decimal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from indexbridge.errors import IndexFormatError
from indexbridge.zap.analysis import Document
from indexbridge.zap.analyzers import ANALYZERS, FieldValue, compose_document

DATETIME_PARSER = "dateTimeOptional"
FIELD_TYPES = ("text", "number", "datetime", "boolean")
_BLEVE_FIELD_TYPES = FIELD_TYPES + ("geopoint",)
_MIN_INT64, _MAX_INT64 = -(1 << 63), (1 << 63) - 1


# -- Go's encoding/json, as far as mappings and documents need it ------------------------------

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def go_string(value: str) -> str:
    """A string as Go's ``json.Unmarshal`` leaves it: unpaired surrogate escapes become U+FFFD."""
    if value.isascii():
        return value
    return _LONE_SURROGATE.sub("\ufffd", value) if _LONE_SURROGATE.search(value) else value


_GO_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t",
               "<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f<>&\u2028\u2029]')


def go_json_string(value: str) -> str:
    """``json.Marshal`` of a Go string (HTML-safe escapes, ``\\u00XX`` for other controls)."""
    value = go_string(value)

    def escape(m: re.Match) -> str:
        ch = m.group()
        return _GO_ESCAPES.get(ch) or f"\\u{ord(ch):04x}"

    return '"' + _NEEDS_ESCAPE.sub(escape, value) + '"'


def go_json_float(value: float) -> str:
    """``json.Marshal`` of a float64: ``strconv.AppendFloat`` with the shortest digits, 'f' form
    unless the magnitude is below 1e-6 or from 1e21 on ('e' form, ``e-07`` cleaned to ``e-7``)."""
    if not math.isfinite(value):
        raise ValueError(f"json: unsupported value: {value!r}")
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0")
    exponent += len(digits) - len(text)  # value = int(text) * 10**exponent
    minus = "-" if sign else ""
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        exp = exponent + len(text) - 1
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        exp_text = f"{abs(exp):02d}" if exp > 0 or exp <= -10 else f"{abs(exp)}" if exp < 0 else "00"
        return f"{minus}{mantissa}e{'-' if exp < 0 else '+'}{exp_text}"
    if exponent >= 0:
        return minus + text + "0" * exponent
    point = len(text) + exponent
    if point > 0:
        return minus + text[:point] + "." + text[point:]
    return minus + "0." + "0" * -point + text


def _mapping_error(source: str, expected: str) -> IndexFormatError:
    return IndexFormatError(source, 0, expected)


# -- Go's time.Parse over dateTimeOptional's layouts -------------------------------------------

_DAYS_IN = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _days_in(month: int, year: int) -> int:
    if month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0):
        return 29
    return _DAYS_IN[month - 1]


def _days_from_civil(y: int, m: int, d: int) -> int:
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _isdigit(b: bytes, i: int) -> bool:
    return i < len(b) and 48 <= b[i] <= 57


def _getnum(b: bytes, fixed: bool) -> tuple[int, bytes] | None:
    if not _isdigit(b, 0):
        return None
    if not _isdigit(b, 1):
        return None if fixed else (b[0] - 48, b[1:])
    return (b[0] - 48) * 10 + b[1] - 48, b[2:]


def _parse_layout(value: bytes, separator: bytes | None, zone: bool) -> int | None:
    """One ``time.Parse`` layout: ``2006-01-02`` then, with a separator (``T`` or `` ``),
    ``15:04:05`` (fraction allowed), then with ``zone`` ``Z07:00``. Unix nanoseconds, or None."""
    if len(value) < 4 or not _isdigit(value, 0) or not all(48 <= c <= 57 for c in value[:4]):
        return None
    year, v = int(value[:4]), value[4:]
    if not v.startswith(b"-"):
        return None
    got = _getnum(v[1:], True)
    if got is None:
        return None
    month, v = got
    if not 1 <= month <= 12 or not v.startswith(b"-"):
        return None
    got = _getnum(v[1:], True)
    if got is None:
        return None
    day, v = got
    hour = minute = second = nsec = offset = 0
    if separator is not None:
        if separator == b" ":  # a space in the layout matches any run of spaces
            if v and v[:1] != b" ":
                return None
            v = v.lstrip(b" ")
        elif not v.startswith(separator):
            return None
        else:
            v = v[1:]
        got = _getnum(v, False)
        if got is None:
            return None
        hour, v = got
        if hour >= 24 or not v.startswith(b":"):
            return None
        got = _getnum(v[1:], True)
        if got is None:
            return None
        minute, v = got
        if minute >= 60 or not v.startswith(b":"):
            return None
        got = _getnum(v[1:], True)
        if got is None:
            return None
        second, v = got
        if second >= 60:
            return None
        if len(v) >= 2 and v[:1] in (b".", b",") and _isdigit(v, 1):
            n = 2
            while n < len(v) and _isdigit(v, n):
                n += 1
            digits = v[1:min(n, 10)]
            nsec = int(digits) * 10 ** (9 - len(digits))
            v = v[n:]
        if zone:
            if v[:1] == b"Z":
                v = v[1:]
            else:
                if len(v) < 6 or v[3:4] != b":" or not (_isdigit(v, 1) and _isdigit(v, 2) and _isdigit(v, 4) and _isdigit(v, 5)):
                    return None
                hr, mm = int(v[1:3]), int(v[4:6])
                if hr > 24 or mm > 60 or v[:1] not in (b"+", b"-"):
                    return None
                offset = (hr * 60 + mm) * 60 * (1 if v[:1] == b"+" else -1)
                v = v[6:]
    if v or not 1 <= day <= _days_in(month, year):
        return None
    seconds = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset
    nanos = seconds * 1_000_000_000 + nsec
    return nanos


_LAYOUTS = ((b"T", True), (b"T", False), (b" ", False), (None, False))  # RFC3339(Nano), no zone, space, date


def parse_datetime(text: str) -> int | None:
    """bleve's ``dateTimeOptional`` parser (Go's ``time.Parse`` per layout, first success), as
    Unix nanoseconds; None if no layout parses it. Values outside int64 nanoseconds are returned
    as they are (bleve then drops the field: :func:`representable`)."""
    value = text.encode("utf-8", "surrogatepass")
    for separator, zone in _LAYOUTS:
        nanos = _parse_layout(value, separator, zone)
        if nanos is not None:
            return nanos
    return None


def representable(nanos: int) -> bool:
    """document.canRepresent: within int64 nanoseconds since the epoch."""
    return _MIN_INT64 <= nanos <= _MAX_INT64


def datetime_nanos(value: dt.datetime | dt.date) -> int:
    """A Python datetime (naive = UTC) or date (midnight UTC) as Go's ``UnixNano``."""
    if not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    if value.tzinfo is not None:
        value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    seconds = _days_from_civil(value.year, value.month, value.day) * 86400 + value.hour * 3600 + value.minute * 60 + value.second
    return seconds * 1_000_000_000 + value.microsecond * 1000


# -- the mapping objects ------------------------------------------------------------------------


def _expect(source: str, what: str, value: Any, kind: type | tuple, name: str) -> Any:
    if isinstance(value, bool) and kind is not bool:
        raise _mapping_error(source, f"{what}: {name} must be a JSON {_kind_name(kind)}, found {json.dumps(value)}")
    if not isinstance(value, kind):
        raise _mapping_error(source, f"{what}: {name} must be a JSON {_kind_name(kind)}, found {_json_kind(value)}")
    return value


def _kind_name(kind: type | tuple) -> str:
    return {bool: "boolean", str: "string", dict: "object", list: "array"}.get(kind, "value")


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "null"


@dataclass
class FieldMapping:
    """mapping.FieldMapping; JSON-omitted options are false, as in bleve."""

    name: str = ""
    type: str = ""
    analyzer: str = ""
    store: bool = False
    index: bool = False
    include_term_vectors: bool = False
    include_in_all: bool = False
    date_format: str = ""
    docvalues: bool = False

    _STRINGS = ("name", "type", "analyzer", "date_format")
    _BOOLS = ("store", "index", "include_term_vectors", "include_in_all", "docvalues")

    @classmethod
    def from_json(cls, value: Any, source: str, where: str) -> FieldMapping:
        if value is None:
            raise _mapping_error(source, f"{where}: a field mapping object, found null")
        _expect(source, where, value, dict, "a field mapping")
        fm = cls()
        for key, item in value.items():
            if item is None:
                continue  # Go leaves the field as it was
            if key in cls._STRINGS:
                setattr(fm, key, go_string(_expect(source, where, item, str, key)))
            elif key in cls._BOOLS:
                setattr(fm, key, _expect(source, where, item, bool, key))
        return fm

    def to_json(self) -> str:
        parts = [f'"{key}":{go_json_string(getattr(self, key))}' for key in ("name", "type", "analyzer") if getattr(self, key)]
        parts += [f'"{key}":true' for key in ("store", "index", "include_term_vectors", "include_in_all") if getattr(self, key)]
        if self.date_format:
            parts.append(f'"date_format":{go_json_string(self.date_format)}')
        if self.docvalues:
            parts.append('"docvalues":true')
        return "{" + ",".join(parts) + "}"


@dataclass
class DocumentMapping:
    """mapping.DocumentMapping; JSON-omitted ``enabled`` and ``dynamic`` are true, as in bleve."""

    enabled: bool = True
    dynamic: bool = True
    properties: dict[str, DocumentMapping] | None = None
    fields: list[FieldMapping] | None = None
    default_analyzer: str = ""
    struct_tag_key: str = ""
    _lookups: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def from_json(cls, value: Any, source: str, where: str) -> DocumentMapping:
        if value is None:
            raise _mapping_error(source, f"{where}: a document mapping object, found null")
        _expect(source, where, value, dict, "a document mapping")
        dm = cls()
        for key, item in value.items():
            if key in ("enabled", "dynamic"):
                if item is not None:
                    setattr(dm, key, _expect(source, where, item, bool, key))
            elif key in ("default_analyzer", "struct_tag_key"):
                if item is not None:
                    setattr(dm, key, go_string(_expect(source, where, item, str, key)))
            elif key == "properties":
                if item is None:
                    dm.properties = None
                else:
                    _expect(source, where, item, dict, key)
                    dm.properties = {go_string(name): cls.from_json(sub, source, f"{where}.properties.{name}")
                                     for name, sub in item.items()}
            elif key == "fields":
                if item is None:
                    dm.fields = None
                else:
                    _expect(source, where, item, list, key)
                    dm.fields = [FieldMapping.from_json(f, source, f"{where}.fields[{i}]") for i, f in enumerate(item)]
        return dm

    def to_json(self) -> str:
        parts = [f'"enabled":{"true" if self.enabled else "false"}', f'"dynamic":{"true" if self.dynamic else "false"}']
        if self.properties:
            props = ",".join(f"{go_json_string(name)}:{self.properties[name].to_json()}"
                             for name in sorted(self.properties, key=lambda n: n.encode()))
            parts.append(f'"properties":{{{props}}}')
        if self.fields:
            parts.append('"fields":[' + ",".join(f.to_json() for f in self.fields) + "]")
        if self.default_analyzer:
            parts.append(f'"default_analyzer":{go_json_string(self.default_analyzer)}')
        if self.struct_tag_key:
            parts.append(f'"struct_tag_key":{go_json_string(self.struct_tag_key)}')
        return "{" + ",".join(parts) + "}"

    # -- bleve's path lookups (mapping/document.go) --

    def lookup(self, path: str) -> tuple[DocumentMapping | None, bool]:
        """(``documentMappingForPath``, ``closestDocMapping(path).Dynamic``), memoised: a
        mapping is not changed once documents are mapped with it."""
        found = self._lookups.get(path)
        if found is None:
            found = self._lookups[path] = (self.document_mapping_for_path(path), self.closest_doc_mapping(path).dynamic)
        return found

    def document_mapping_for_path(self, path: str) -> DocumentMapping | None:
        current = self
        for element in path.split("."):
            nxt = (current.properties or {}).get(element)
            if nxt is None:
                return None
            current = nxt
        return current

    def closest_doc_mapping(self, path: str) -> DocumentMapping:
        current = self
        for element in path.split("."):
            nxt = (current.properties or {}).get(element)
            if nxt is None:
                break
            current = nxt
        return current

    def default_analyzer_name(self, path: list[str]) -> str:
        current, name = self, self.default_analyzer
        for element in path:
            current = (current.properties or {}).get(element)
            if current is None:
                break
            if current.default_analyzer:
                name = current.default_analyzer
        return name

    def field_described_by_path(self, path: str) -> FieldMapping | None:
        elements = path.split(".")
        props = self.properties or {}
        if len(elements) > 1 and elements[0] in props:
            return props[elements[0]].field_described_by_path(".".join(elements[1:]))
        sub = props.get(path)
        if sub is not None:
            for fm in sub.fields or ():
                if fm.name in ("", path):
                    return fm
        for name in sorted(props):  # Go: map order
            if name != path:
                for fm in props[name].fields or ():
                    if fm.name == path:
                        return fm
        return None

    def walk(self):
        """Every document mapping at or under this one, with its path (for validation)."""
        stack = [("", self)]
        while stack:
            path, dm = stack.pop()
            yield path, dm
            for name, sub in (dm.properties or {}).items():
                stack.append((f"{path}.{name}" if path else name, sub))


@dataclass
class IndexMapping:
    """mapping.IndexMappingImpl. :meth:`parse` reads bleve's mapping JSON, :meth:`to_json`
    writes it as bleve stores it, :meth:`map_document` maps one document."""

    default_mapping: DocumentMapping = field(default_factory=DocumentMapping)
    types: dict[str, DocumentMapping] | None = None
    type_field: str = "_type"
    default_type: str = "_default"
    default_analyzer: str = "standard"
    default_datetime_parser: str = DATETIME_PARSER
    default_field: str = "_all"
    store_dynamic: bool = True
    index_dynamic: bool = True
    docvalues_dynamic: bool = True
    analysis: dict = field(default_factory=dict)
    source: str = "<mapping>"

    # -- JSON --

    @classmethod
    def parse(cls, text: str | bytes | Mapping | None = None, source: str = "<mapping>") -> IndexMapping:
        """bleve's mapping JSON (text, bytes or an already decoded object); None, ``null`` or
        ``{}`` is bleve's default mapping. Raises :class:`IndexFormatError` for JSON that bleve would not
        accept or a feature indexbridge does not reproduce (:meth:`check_supported`)."""
        mapping = cls.decode(text, source)
        mapping.validate()
        mapping.check_supported()
        return mapping

    @classmethod
    def decode(cls, text: str | bytes | Mapping | None = None, source: str = "<mapping>") -> IndexMapping:
        """The mapping as bleve's ``json.Unmarshal`` reads it, without bleve's validation."""
        if text is None:
            obj: Any = {}
        elif isinstance(text, Mapping):
            obj = text
        else:
            try:
                obj = json.loads(text)
            except (ValueError, UnicodeDecodeError) as e:
                offset = getattr(e, "pos", 0) or 0
                raise IndexFormatError(source, offset, f"a bleve mapping in JSON: {getattr(e, 'msg', e)}") from None
        if obj is None:  # JSON null: no mapping given, bleve's default
            obj = {}
        if not isinstance(obj, Mapping):
            raise _mapping_error(source, f"a bleve index mapping: a JSON object, found {_json_kind(obj)}")
        im = cls(source=source)
        for key, item in obj.items():
            if key in ("type_field", "default_type", "default_analyzer", "default_datetime_parser", "default_field"):
                if item is not None:
                    setattr(im, key, go_string(_expect(source, "index mapping", item, str, key)))
            elif key in ("store_dynamic", "index_dynamic", "docvalues_dynamic"):
                if item is not None:
                    setattr(im, key, _expect(source, "index mapping", item, bool, key))
            elif key == "default_mapping":
                im.default_mapping = DocumentMapping.from_json(item, source, "default_mapping")
            elif key == "types":
                if item is None:
                    im.types = None
                else:
                    _expect(source, "index mapping", item, dict, key)
                    im.types = {go_string(name): DocumentMapping.from_json(sub, source, f"types.{name}") for name, sub in item.items()}
            elif key == "analysis":
                if item is None:  # bleve dereferences it and panics
                    raise _mapping_error(source, "index mapping: analysis must be a JSON object, found null")
                _expect(source, "index mapping", item, dict, key)
                im.analysis = item
        return im

    def to_json(self) -> str:
        """``json.Marshal`` of the mapping: the bytes bleve stores under ``_mapping``."""
        parts = []
        if self.types:
            types = ",".join(f"{go_json_string(n)}:{self.types[n].to_json()}" for n in sorted(self.types, key=lambda n: n.encode()))
            parts.append(f'"types":{{{types}}}')
        parts.append(f'"default_mapping":{self.default_mapping.to_json()}')
        for key in ("type_field", "default_type", "default_analyzer", "default_datetime_parser", "default_field"):
            parts.append(f'"{key}":{go_json_string(getattr(self, key))}')
        for key in ("store_dynamic", "index_dynamic", "docvalues_dynamic"):
            parts.append(f'"{key}":{"true" if getattr(self, key) else "false"}')
        if any(self.analysis.get(k) for k in _ANALYSIS_KEYS):
            raise ValueError("custom analysis components are not supported")
        parts.append('"analysis":{}')
        return "{" + ",".join(parts) + "}"

    def document_mappings(self):
        yield "default_mapping", self.default_mapping
        for name, dm in sorted((self.types or {}).items()):
            yield f"types.{name}", dm

    def validate(self) -> None:
        """bleve's ``Validate``: known analyzers, datetime parsers and field types."""
        for where, root in self.document_mappings():
            for path, dm in root.walk():
                at = f"{where}.properties.{path}" if path else where
                for i, fm in enumerate(dm.fields or ()):
                    if fm.type not in _BLEVE_FIELD_TYPES:
                        raise _mapping_error(self.source, f"{at}.fields[{i}]: unknown field type: '{fm.type}'")

    def check_supported(self) -> None:
        """Raise :class:`IndexFormatError` naming the first feature indexbridge does not reproduce."""
        def unsupported(what: str) -> IndexFormatError:
            return _mapping_error(self.source, f"a mapping indexbridge supports: {what} is not supported")

        if self.analysis and any(self.analysis.get(k) for k in _ANALYSIS_KEYS):
            kinds = [k for k in _ANALYSIS_KEYS if self.analysis.get(k)]
            raise unsupported(f"custom analysis ({', '.join('analysis.' + k for k in kinds)})")
        if self.default_analyzer not in ANALYZERS:
            raise unsupported(f"default_analyzer {self.default_analyzer!r} (analyzers: {', '.join(ANALYZERS)})")
        if self.default_datetime_parser != DATETIME_PARSER:
            raise unsupported(f"default_datetime_parser {self.default_datetime_parser!r} (only {DATETIME_PARSER})")
        for where, root in self.document_mappings():
            for path, dm in root.walk():
                at = f"{where}.properties.{path}" if path else where
                if dm.default_analyzer and dm.default_analyzer not in ANALYZERS:
                    raise unsupported(f"{at}.default_analyzer {dm.default_analyzer!r} (analyzers: {', '.join(ANALYZERS)})")
                for i, fm in enumerate(dm.fields or ()):
                    if fm.type == "geopoint":
                        raise unsupported(f"{at}.fields[{i}]: field type 'geopoint'")
                    if fm.analyzer and fm.analyzer not in ANALYZERS:
                        raise unsupported(f"{at}.fields[{i}]: analyzer {fm.analyzer!r} (analyzers: {', '.join(ANALYZERS)})")
                    if fm.date_format and fm.date_format != DATETIME_PARSER:
                        raise unsupported(f"{at}.fields[{i}]: date_format {fm.date_format!r} (only {DATETIME_PARSER})")

    # -- queries --

    def analyzer_for_path(self, path: str) -> str:
        """bleve's ``AnalyzerNameForPath``: the analyzer a match query on ``path`` uses (type
        mappings in name order where Go's map order is random)."""
        for _, dm in sorted((self.types or {}).items()):
            fm = dm.field_described_by_path(path)
            if fm is not None and fm.analyzer:
                return fm.analyzer
        pm = self.default_mapping.document_mapping_for_path(path)
        if pm is not None and pm.fields and pm.fields[0].analyzer:
            return pm.fields[0].analyzer
        decoded = path.split(".")
        for _, dm in sorted((self.types or {}).items()):
            name = dm.default_analyzer_name(decoded)
            if name:
                return name
        return self.default_analyzer

    # -- documents --

    def mapping_for(self, data: Any) -> DocumentMapping:
        """``determineType`` + ``mappingForType``: the document mapping bleve applies to ``data``."""
        doc_type = self.default_type
        current = data
        for part in self.type_field.split("."):
            current = current.get(part) if isinstance(current, Mapping) else None
            if current is None:
                break
        if isinstance(current, str):
            doc_type = current
        return (self.types or {}).get(doc_type) or self.default_mapping

    def map_document(self, doc_id: str, data: Any) -> Document:
        """The zap writer input bleve builds for ``data`` indexed as ``doc_id`` (``MapDocument``,
        then scorch's ``_id`` field and analysis)."""
        dm = self.mapping_for(data)
        walk = _Walk(self, dm)
        if dm.enabled:
            walk.walk(data, [], ())
            all_mapping = dm.document_mapping_for_path("_all")
            with_all = all_mapping is None or all_mapping.enabled
        else:
            with_all = False
        return compose_document(doc_id, walk.fields, walk.excluded if with_all else None)


_ANALYSIS_KEYS = ("char_filters", "tokenizers", "token_maps", "token_filters", "analyzers", "date_time_parsers")


class _Walk:
    """One ``walkContext``: the field instances and the names excluded from ``_all``."""

    __slots__ = ("im", "dm", "fields", "excluded")

    def __init__(self, im: IndexMapping, dm: DocumentMapping) -> None:
        self.im, self.dm = im, dm
        self.fields: list[FieldValue] = []
        self.excluded: set[str] = {"_id"}

    def walk(self, data: Any, path: list[str], indexes: tuple[int, ...]) -> None:
        if isinstance(data, Mapping):
            for key, value in data.items():
                if not isinstance(key, str):
                    raise ValueError(f"a document object key must be a string, found {key!r}")
                self.process(value, path + [go_string(key)], indexes)
        elif isinstance(data, (list, tuple)):
            for i, value in enumerate(data):
                self.process(value, path, indexes + (i,))
        else:
            self.process(data, path, indexes)

    def process(self, value: Any, path: list[str], indexes: tuple[int, ...]) -> None:
        if value is None:
            return
        path_string = ".".join(path)
        sub, dynamic = self.dm.lookup(path_string)
        if sub is not None and not sub.enabled:
            return
        if isinstance(value, str):
            if sub is not None:
                for fm in sub.fields or ():
                    self.string(fm, value, path_string, path, indexes)
            elif dynamic:
                nanos = parse_datetime(value)
                if nanos is None:
                    self.string(self.dynamic("text"), value, path_string, path, indexes)
                else:
                    self.time(self.dynamic("datetime"), nanos, path_string, path, indexes)
        elif isinstance(value, bool):
            if sub is not None:
                for fm in sub.fields or ():
                    if fm.type == "boolean":
                        self.add(fm, "boolean", value, path_string, path, indexes)
            elif dynamic:
                self.add(self.dynamic("boolean"), "boolean", value, path_string, path, indexes)
        elif isinstance(value, (int, float, Decimal)):
            number = _float64(value)
            if sub is not None:
                for fm in sub.fields or ():
                    if fm.type == "number":
                        self.add(fm, "number", number, path_string, path, indexes)
            elif dynamic:
                self.add(self.dynamic("number"), "number", number, path_string, path, indexes)
        elif isinstance(value, (dt.datetime, dt.date)):
            nanos = datetime_nanos(value)
            if sub is not None:
                for fm in sub.fields or ():
                    self.time(fm, nanos, path_string, path, indexes)
            elif dynamic:
                self.time(self.dynamic("datetime"), nanos, path_string, path, indexes)
        elif isinstance(value, (Mapping, list, tuple)):
            self.walk(value, path, indexes)
        else:
            raise ValueError(f"a JSON value (object, array, string, number, boolean, null) or a datetime, found {type(value).__name__}")

    def dynamic(self, kind: str) -> FieldMapping:
        im = self.im
        return FieldMapping(type=kind, store=im.store_dynamic, index=im.index_dynamic, include_term_vectors=kind == "text",
                            include_in_all=True, docvalues=im.docvalues_dynamic)

    @staticmethod
    def field_name(path_string: str, path: list[str], fm: FieldMapping) -> str:
        if not fm.name:
            return path_string
        parent = ".".join(path[:-1]) + "." if len(path) > 1 else ""
        return parent + fm.name

    def string(self, fm: FieldMapping, value: str, path_string: str, path: list[str], indexes: tuple[int, ...]) -> None:
        if fm.type == "text":
            self.add(fm, "text", value, path_string, path, indexes)
        elif fm.type == "datetime":
            nanos = parse_datetime(value)
            if nanos is not None:
                self.time(fm, nanos, path_string, path, indexes)

    def time(self, fm: FieldMapping, nanos: int, path_string: str, path: list[str], indexes: tuple[int, ...]) -> None:
        if fm.type != "datetime":
            return
        name = self.field_name(path_string, path, fm)
        if representable(nanos):
            self.fields.append(FieldValue(name, "datetime", nanos, indexes, "", fm.index, fm.store,
                                          fm.include_term_vectors, fm.docvalues))
        if not fm.include_in_all:
            self.excluded.add(name)

    def add(self, fm: FieldMapping, kind: str, value: Any, path_string: str, path: list[str], indexes: tuple[int, ...]) -> None:
        name = self.field_name(path_string, path, fm)
        analyzer = ""
        if kind == "text":
            analyzer = fm.analyzer or self.dm.default_analyzer_name(path) or self.im.default_analyzer
            if analyzer not in ANALYZERS:
                raise ValueError(f"field {name!r}: analyzer {analyzer!r} is not supported")
            value = go_string(value)
        self.fields.append(FieldValue(name, kind, value, indexes, analyzer, fm.index, fm.store, fm.include_term_vectors, fm.docvalues))
        if not fm.include_in_all:
            self.excluded.add(name)


def _float64(value: int | float | Decimal) -> float:
    if isinstance(value, float):
        return value
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"the number {value} is not finite")
        return float(value)
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"the number {value} is out of float64's range") from None


def load_mapping(path: str | os.PathLike | None) -> IndexMapping:
    """A mapping JSON file (None: bleve's default mapping); errors name the file."""
    if path is None:
        return IndexMapping.parse(None)
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise IndexFormatError(str(path), 0, f"a readable mapping file ({e.strerror})") from None
    return IndexMapping.parse(data, str(path))


__all__ = ["DATETIME_PARSER", "DocumentMapping", "FieldMapping", "IndexMapping", "datetime_nanos", "go_json_float",
           "go_json_string", "load_mapping", "parse_datetime", "representable"]
