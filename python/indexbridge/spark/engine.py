"""Where a PySpark function of indexbridge does its work: ``"jvm"``, the Scala module in the
executors' JVMs, or ``"python"``, the Python codecs in Arrow kernels (``mapInArrow``). Both write
the same bytes and return the same rows."""

from __future__ import annotations

from typing import Literal

Engine = Literal["jvm", "python"]


def check_engine(engine: str) -> None:
    """Raises ValueError for anything but ``"jvm"`` and ``"python"``, before any work starts."""
    if engine not in ("jvm", "python"):
        raise ValueError(f"engine must be 'jvm' or 'python', got {engine!r}")
