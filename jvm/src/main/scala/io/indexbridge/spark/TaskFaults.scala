package io.indexbridge.spark

import org.apache.spark.TaskContext

/** The test hook of the Spark write paths (Python's twin: `indexbridge.spark.faults`).
  *
  * Nothing in production sets it: when a test sets the local property `indexbridge.test.failTask`
  * to a job's name (`sparkContext.setLocalProperty`), the first attempt of each of that job's
  * tasks fails right after writing (part of) its output, so that Spark retries it
  * (`spark.task.maxFailures` > 1) and the test can compare what the retried job leaves with a
  * clean run's files. Job names: `file-index`, `zap-build`, `zap-merge`, `bleve-write`,
  * `rewrite-file-index`, `delete`, `load`, `load-compaction` (and, in Python, `deletion-files`,
  * `hash-index`).
  */
object TaskFaults {
  val Property = "indexbridge.test.failTask"

  def failFirstAttempt(job: String): Unit = {
    val context = TaskContext.get()
    if (context != null && context.attemptNumber() == 0 && context.getLocalProperty(Property) == job)
      throw new IllegalStateException(s"injected failure of the first attempt of a $job task (test hook $Property)")
  }
}
