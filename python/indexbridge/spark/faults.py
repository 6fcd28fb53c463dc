"""The test hook of the Spark write paths (the Scala twin: ``io.indexbridge.spark.TaskFaults``).

Nothing in production sets it: when a test sets the local property ``indexbridge.test.failTask``
to a job's name (``sparkContext.setLocalProperty``), the first attempt of each of that job's tasks
fails right after writing (part of) its output, so that Spark retries it (``spark.task.maxFailures``
> 1) and the test can compare what the retried job leaves with a clean run's files. Job names:
``deletion-files``, ``hash-index``, ``file-index``, ``zap-build``, ``zap-merge``, ``bleve-write``.
"""

from __future__ import annotations

PROPERTY = "indexbridge.test.failTask"


def fail_first_attempt(job: str) -> None:
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is not None and context.attemptNumber() == 0 and context.getLocalProperty(PROPERTY) == job:
        raise RuntimeError(f"injected failure of the first attempt of a {job} task (test hook {PROPERTY})")
