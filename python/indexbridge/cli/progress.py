"""Progress of long CLI work (``verify``, ``conformance``, ``bench``, ``bleve build``): a tqdm bar
on stderr while stderr is a terminal, nothing at all when it is piped or redirected (tqdm's
``disable=None``), so scripted output and logs stay clean."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")


def progress(items: Iterable[T], what: str, total: int | None = None, unit: str = "it") -> Iterator[T]:
    """``items``, counted on a terminal's stderr as ``what`` (the bar is cleared when done)."""
    return iter(tqdm(items, desc=what, total=total, unit=unit, file=sys.stderr, disable=None, leave=False, dynamic_ncols=True))
