"""The writer's input: bleve's analysed documents (``index.AnalysisResult``, spec/zap.md §15.1).

A :class:`Document` holds its regular fields in document order (bleve appends ``_id`` as the
last one) and its composite fields (``_all``). Indexed fields carry their token frequencies;
a location's ``field`` is ``""`` for the owning field, otherwise a field name (composite
sources, or names bleve stamped when merging repeated instances).

:class:`TokenLocation` and :class:`Token` are named tuples rather than frozen dataclasses: an
analysed document holds one per token, and building them is most of the analysis time.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import NamedTuple

ID_FIELD_NAME = "_id"


class TokenLocation(NamedTuple):
    field: str
    pos: int
    start: int
    end: int
    array_positions: tuple[int, ...] = ()


class Token(NamedTuple):
    term: bytes
    freq: int
    locations: tuple[TokenLocation, ...] = ()


@dataclass(frozen=True)
class Field:
    """A regular field instance. ``type`` is the stored type byte (``t n d b g``)."""

    name: str
    value: bytes
    type: str = "t"
    array_positions: tuple[int, ...] = ()
    index: bool = True
    store: bool = True
    term_vectors: bool = True
    doc_values: bool = False
    length: int = 0
    tokens: tuple[Token, ...] | None = None


@dataclass(frozen=True)
class CompositeField:
    name: str
    length: int
    tokens: tuple[Token, ...] = ()


@dataclass(frozen=True)
class Document:
    """One analysed document; ``fields`` must include the ``_id`` field (see :func:`id_field`)."""

    fields: tuple[Field, ...]
    composite_fields: tuple[CompositeField, ...] = field(default=())


def id_field(doc_id: bytes) -> Field:
    """The ``_id`` field scorch appends to every document: one unanalysed token, stored, no term vectors."""
    return Field(
        ID_FIELD_NAME, doc_id, "t", (), True, True, False, False, 1,
        (Token(doc_id, 1, ()),),
    )


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause CPython's cyclic garbage collector for a bulk build, restoring its state after.

    Analysed documents and a segment build are millions of small acyclic objects (tuples, lists,
    bytes); with the collector on, its passes over them took half of the analysis time and a
    tenth of the build. Nothing built here forms a reference cycle: reference counting frees it.
    The collector is process-wide: other threads run without it while a build is under way.

    What the pause made and keeps (analysed documents) would all still be in the youngest
    generation, and the first allocation after it would start a collection that walks every one
    of them (a fifth of `bench zap`'s analysis time). So, unless the process keeps frozen objects
    of its own (``gc.freeze``, say before forking workers), the pause ends by moving every tracked
    object to the oldest generation (``gc.freeze`` then ``gc.unfreeze``): they are walked at the
    next full collection instead, and any cyclic garbage among them is freed then.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
