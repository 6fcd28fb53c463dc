"""The JVM half on the driver: where the jar is, and a py4j view of a JVM that has it.

Only paths, offsets, small scalars and short JSON strings cross py4j (DESIGN rule 2); bulk
data stays in the JVM or moves as Arrow batches.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from indexbridge.errors import IndexFormatError

JAR = Path(__file__).resolve().parent / "jars" / "indexbridge.jar"
# Paimon's own classes: the reference of the tests, the demo's table writer, the benchmarks'
# baseline; scripts/bootstrap.sh fetches the jar with Maven.
PAIMON_BUNDLE = Path.home() / ".m2/repository/org/apache/paimon/paimon-bundle/1.4.2/paimon-bundle-1.4.2.jar"


def jar_path() -> Path:
    """The packaged Scala jar; a clear error if the package was installed without it."""
    if not JAR.is_file():
        raise RuntimeError(
            f"the indexbridge jar is missing at {JAR}; build it with scripts/bootstrap.sh "
            "(sbt package) or install a package that carries it"
        )
    return JAR


@functools.cache
def _gateway(extra_jars: tuple[str, ...] = ()):
    from pyspark import SparkConf
    from pyspark.java_gateway import launch_gateway

    conf = SparkConf().set("spark.driver.extraClassPath", ":".join((str(jar_path()), *extra_jars)))
    # The JVM's own chatter (log4j defaults, warnings) would mix with the CLI's output.
    return launch_gateway(conf=conf, popen_kwargs={"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL})


def _drop_stopped_sparks_error_handler() -> None:
    """Puts py4j's own Java-error handling back while no SparkContext runs. A SparkSession
    installs PySpark's handler into py4j for the whole process, and it stays after ``stop()``;
    it then needs the stopped context's JVM, so every Java error of our private gateway would
    become an AssertionError. The next SparkSession installs PySpark's handler again."""
    import py4j.java_gateway
    import py4j.protocol
    from pyspark import SparkContext

    if SparkContext._jvm is None:
        py4j.java_gateway.get_return_value = py4j.protocol.get_return_value


def jvm():
    """The py4j JVM view: the active SparkContext's if there is one, else a private gateway
    started once per process (no SparkContext, just the JVM with Spark's jars and ours)."""
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    if sc is not None:
        return sc._jvm
    _drop_stopped_sparks_error_handler()
    return _gateway().jvm


def jvm_with(*extra_jars: Path):
    """A private JVM with ours and ``extra_jars`` on its classpath (e.g. a benchmark's baseline),
    started once per process and set of jars."""
    _drop_stopped_sparks_error_handler()
    return _gateway(tuple(str(j) for j in extra_jars)).jvm


def paimon_bundle() -> Path:
    if not PAIMON_BUNDLE.is_file():
        raise RuntimeError(f"Paimon's jar is missing at {PAIMON_BUNDLE}; scripts/bootstrap.sh fetches it with Maven")
    return PAIMON_BUNDLE


# A reference JVM of its own gets at least the 4 GiB heap that bench table-write's reference
# ran with; the JVM's default, a quarter of the RAM, is smaller below 16 GiB of RAM.
LONG_RUNNING_MIN_HEAP_GIB = 4


def physical_memory() -> int:
    """The machine's RAM in bytes."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def long_running_heap_options(ram_bytes: int) -> list[str]:
    """The ``java`` heap option of a long-running reference on a machine of ``ram_bytes``:
    none where the default heap (a quarter of the RAM) is large enough."""
    return [] if ram_bytes // 4 >= LONG_RUNNING_MIN_HEAP_GIB << 30 else [f"-Xmx{LONG_RUNNING_MIN_HEAP_GIB}g"]


def run_reference(*args: str, main: str = "PaimonAnswers", long_running: bool = False) -> None:
    """Runs ``io.indexbridge.reference.<main>`` (default ``PaimonAnswers``: real Paimon tables
    made and read by Paimon's own Java API) with our jar, Paimon's and Spark's; raises on failure.
    A run of seconds (tests, the demo) is a call into this process's private JVM with Paimon's
    jar (:func:`jvm_with`, ``InProcess``), started once: a ``java`` process apiece spent 4-6
    CPU-s starting and loading Paimon's classes, and an integration test file ran thirteen.
    ``long_running`` (the benchmarks' million-row tables) gets a JVM of its own, with the
    optimising compiler and a heap of at least 4 GiB."""
    if not long_running:
        failure = jvm_with(paimon_bundle()).io.indexbridge.reference.InProcess.run(main, list(args))
        if failure is not None:
            raise RuntimeError(f"{main} {' '.join(args)} failed:\n{failure[-4000:]}")
        return
    import pyspark

    classpath = os.pathsep.join([str(jar_path()), str(paimon_bundle()), str(Path(pyspark.__file__).parent / "jars" / "*")])
    heap = long_running_heap_options(physical_memory())
    done = subprocess.run(["java", *heap, "-cp", classpath, f"io.indexbridge.reference.{main}", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{main} {' '.join(args)} failed:\n{done.stderr[-4000:]}")


def java_errors() -> tuple[type[Exception], ...]:
    """What a call into the JVM raises for a Java exception: py4j's Py4JJavaError, or, once a
    SparkContext of this process has installed PySpark's handler, PySpark's rendering of it (a
    CapturedException, e.g. IllegalArgumentException)."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors.exceptions.captured import CapturedException

    return Py4JJavaError, CapturedException


def java_error_message(error: Exception) -> str:
    """The message of the Java exception behind one of :func:`java_errors` (no Java stack trace)."""
    java_exception = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    if java_exception is None:
        return str(error)
    message = java_exception.getMessage()
    return str(message) if message is not None else str(java_exception.toString())


def index_format_error(throwable) -> IndexFormatError | None:
    """The ``io.indexbridge.IndexFormatException`` in a Java exception's cause chain (py4j), as
    IndexFormatError: thrown on the driver, or in a task (then Spark wraps it: SparkException
    "Job aborted ..." caused by it)."""
    while throwable is not None:
        if throwable.getClass().getName() == "io.indexbridge.IndexFormatException":
            return IndexFormatError(str(throwable.source()), int(throwable.offset()), str(throwable.expected()))
        throwable = throwable.getCause()
    return None


def _python_error(error: Exception, classes: Mapping[str, Callable[[str], Exception]]) -> Exception | None:
    """The Python exception for one of :func:`java_errors` (see :func:`python_errors`), or None."""
    throwable = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    format_error = index_format_error(throwable)
    if format_error is not None or throwable is None:
        return format_error
    make = {"java.lang.IllegalArgumentException": ValueError, **classes}.get(throwable.getClass().getName())
    return None if make is None else make(str(throwable.getMessage()))


@contextmanager
def python_errors(classes: Mapping[str, Callable[[str], Exception]] | None = None) -> Iterator[None]:
    """Around a call into the JVM from a PySpark wrapper: one of :func:`java_errors` is raised as
    the Python engines raise it (an IndexFormatException in its cause chain as IndexFormatError,
    an IllegalArgumentException as ValueError, a class of ``classes``, name -> exception type, as
    that type); any other error as it is."""
    try:
        yield
    except java_errors() as e:
        error = _python_error(e, classes or {})
        if error is None:
            raise
        raise error from None
