"""Every PySpark function of indexbridge that takes ``engine`` refuses an unknown one with the
same ValueError, before it touches its arguments or Spark (no session is made here)."""

from __future__ import annotations

import inspect

import pytest

from indexbridge.spark import bleve, lakehouse, zap

FUNCTIONS = [
    (module.__name__, name, fn)
    for module in (bleve, lakehouse, zap)
    for name, fn in vars(module).items()
    if inspect.isfunction(fn) and fn.__module__ == module.__name__ and not name.startswith("_") and "engine" in inspect.signature(fn).parameters
]


def test_the_modules_have_engine_functions() -> None:
    assert {m for m, _, _ in FUNCTIONS} == {bleve.__name__, lakehouse.__name__, zap.__name__}
    assert len(FUNCTIONS) >= 12


@pytest.mark.parametrize("module, name, fn", FUNCTIONS, ids=[f"{m.rsplit('.', 1)[1]}.{n}" for m, n, _ in FUNCTIONS])
def test_an_unknown_engine_is_refused_first(module, name, fn) -> None:
    required = [p for p in inspect.signature(fn).parameters.values() if p.default is inspect.Parameter.empty]
    positional = [object() for p in required if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keywords = {p.name: object() for p in required if p.kind == p.KEYWORD_ONLY}
    with pytest.raises(ValueError, match=r"^engine must be 'jvm' or 'python', got 'gpu'$"):
        fn(*positional, **keywords, engine="gpu")
