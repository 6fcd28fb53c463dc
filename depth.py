"""How far the generated and mutation tests go: a day's share by default, every case when deep.

The default run (the README's test command, CI) gives each seeded generator and each mutation
test a share of its cases, drawn anew each day from the day's seed, so that the cases change from
run to run while the run stays within CI's time. ``INDEXBRIDGE_DEEP=1`` runs every case.
``INDEXBRIDGE_TEST_SEED`` replays another day's draw (pytest prints the seed at the end of a run).
"""

from __future__ import annotations

import datetime
import os
import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

DEEP = os.environ.get("INDEXBRIDGE_DEEP", "") not in ("", "0")
SEED = int(os.environ.get("INDEXBRIDGE_TEST_SEED") or datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d"))


def header() -> str:
    """The line pytest prints at the end of a run."""
    if DEEP:
        return "indexbridge test depth: deep (every case; INDEXBRIDGE_DEEP=1)"
    return f"indexbridge test depth: the day's share of the generated cases (INDEXBRIDGE_TEST_SEED={SEED}; INDEXBRIDGE_DEEP=1 runs them all)"


def seeds(count: int, share: int) -> list[int]:
    """``range(count)`` when deep, else ``share`` of those seeds, the day's draw."""
    if DEEP or share >= count:
        return list(range(count))
    return sorted(random.Random(f"{SEED}/seeds/{count}/{share}").sample(range(count), share))


def sample(items: Sequence[T], share: float, key: str) -> list[T]:
    """All ``items`` when deep, else about ``share`` of them (at least one), kept in order: the
    day's draw for ``key`` (the test's case, so that cases draw independently)."""
    if DEEP or share >= 1 or not items:
        return list(items)
    rng = random.Random(f"{SEED}/{key}")
    picked = sorted(rng.sample(range(len(items)), max(1, round(share * len(items)))))
    return [items[i] for i in picked]
