"""`indexbridge.jvm.python_errors`, around the PySpark wrappers' calls into the JVM: Java
exceptions (stand-ins answering py4j's calls) become the errors the Python engines raise; and
the heap a long-running reference JVM asks for."""

from __future__ import annotations

import pytest
from py4j.protocol import Py4JJavaError

from indexbridge.errors import IndexFormatError
from indexbridge.jvm import long_running_heap_options, python_errors


class _Class:
    def __init__(self, name: str) -> None:
        self.name = name

    def getName(self) -> str:  # noqa: N802 (Java's name)
        return self.name


class _Throwable:
    """What py4j hands over for a Java exception: getClass, getCause, getMessage (and an
    IndexFormatException's source, offset, expected)."""

    _target_id = "o1"  # py4j's id of the Java object

    def __init__(self, name: str, message: str = "", cause: _Throwable | None = None, **fields) -> None:
        self.name, self.message, self.cause, self.fields = name, message, cause, fields

    def getClass(self) -> _Class:  # noqa: N802
        return _Class(self.name)

    def getCause(self) -> _Throwable | None:  # noqa: N802
        return self.cause

    def getMessage(self) -> str:  # noqa: N802
        return self.message

    def __getattr__(self, field: str):
        if field in ("source", "offset", "expected"):
            return lambda: self.fields[field]
        raise AttributeError(field)


def _raise(throwable: _Throwable, classes=None) -> None:
    with python_errors(classes):
        raise Py4JJavaError("An error occurred", throwable)


def test_an_index_format_exception_anywhere_in_the_cause_chain_is_an_index_format_error() -> None:
    cause = _Throwable("io.indexbridge.IndexFormatException", source="/t/index-1", offset=40, expected="a CRC")
    job = _Throwable("org.apache.spark.SparkException", "Job aborted", _Throwable("java.lang.RuntimeException", "task", cause))
    with pytest.raises(IndexFormatError) as raised:
        _raise(job)
    assert (raised.value.source, raised.value.offset, raised.value.expected) == ("/t/index-1", 40, "a CRC")
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_an_illegal_argument_is_a_value_error_and_named_classes_their_type() -> None:
    with pytest.raises(ValueError, match="^no version 7$"):
        _raise(_Throwable("java.lang.IllegalArgumentException", "no version 7"))

    class Conflict(Exception):
        pass

    with pytest.raises(Conflict, match="^rewrote a file$"):
        _raise(_Throwable("io.indexbridge.paimon.table.CommitConflictException", "rewrote a file"), {"io.indexbridge.paimon.table.CommitConflictException": Conflict})


def test_other_errors_pass_as_they_are() -> None:
    with pytest.raises(Py4JJavaError):
        _raise(_Throwable("java.lang.IllegalStateException", "boom"))
    with pytest.raises(KeyError):
        with python_errors():
            raise KeyError("not from the JVM")


@pytest.mark.parametrize(("ram_gib", "options"), [(2, ["-Xmx4g"]), (8, ["-Xmx4g"]), (15, ["-Xmx4g"]), (16, []), (24, []), (512, [])])
def test_a_long_running_reference_gets_at_least_a_4_gib_heap(ram_gib: int, options: list[str]) -> None:
    """The JVM's default heap is a quarter of the RAM: below 16 GiB the reference asks for 4."""
    assert long_running_heap_options(ram_gib << 30) == options
