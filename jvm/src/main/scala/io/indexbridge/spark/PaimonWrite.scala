package io.indexbridge.spark

import java.nio.file.{Files, Path, Paths}
import java.util.UUID

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper
import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.fileindex.FileIndexContainer
import io.indexbridge.paimon.table._
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.indexbridge.{PaimonDataFiles, SparkFileIndexTypes}
import org.apache.spark.sql.types.{StructField, StructType}

/** What a write job did: the snapshot it committed (None when there was nothing to commit), its
  * kind, and counts (files, rows, ...). */
final case class WriteSummary(table: String, snapshotId: Option[Long], commitKind: Option[String], counts: Seq[(String, Long)]) {
  def count(name: String): Long = counts.find(_._1 == name).fold(0L)(_._2)

  def toJson: String = {
    val node = WriteSummary.mapper.createObjectNode().put("table", table)
    snapshotId.fold(node.putNull("snapshot"))(node.put("snapshot", _))
    commitKind.fold(node.putNull("commit_kind"))(node.put("commit_kind", _))
    counts.foreach { case (k, v) => node.put(k, v) }
    WriteSummary.mapper.writeValueAsString(node)
  }
}

object WriteSummary {
  private val mapper = new ObjectMapper()
}

/** Writing to Paimon tables from Spark without Paimon's code: each job does its per-file work in
  * Spark tasks and commits one snapshot on the driver with [[TableCommit]] (Paimon's commit
  * protocol: manifests, manifest lists, index manifest, snapshot created if absent, conflicts
  * with concurrent writers detected).
  *
  * {{{
  * rewriteFileIndexes   file indexes of the snapshot's data files rebuilt from the table's
  *                      file-index.* options (+ overrides), embedded or in .index files, one
  *                      COMPACT commit (Paimon's rewrite_file_index)        [[FileIndexRewrite]]
  * }}}
  *
  * Tasks write their files under names fixed by the plan (a retried or speculative task writes
  * the same bytes to the same name, through a temporary file renamed into place); when the job or
  * its commit fails, the files no snapshot references are removed again.
  */
object PaimonWrite {

  // ------------------------------------------------------------------------------------------
  // Job 1: rewrite file indexes

  /** Rebuilds the file indexes of the latest snapshot's data files (see [[FileIndexRewrite]]):
    * `options` override the table's file-index options for this rewrite, `partitions` (a
    * condition on partition columns) limits it, `onlyMissing` skips files that already have every
    * index the options ask for. */
  def rewriteFileIndexes(spark: SparkSession, path: String, options: Seq[(String, String)] = Nil,
      partitions: Option[String] = None, onlyMissing: Boolean = false, hooks: CommitHooks = CommitHooks.None): WriteSummary = {
    val table = FileStoreTable.open(path)
    val keep = partitionFilter(table, partitions)
    val tasks = FileIndexRewrite.plan(table, options, keep, onlyMissing)
    if (tasks.isEmpty) return WriteSummary(path, None, None, Seq("data_files" -> 0L))
    tasks.find(!_.dataPath.endsWith(".parquet")).foreach { t =>
      throw new IndexFormatException(t.dataPath, 0, "a Parquet data file (file indexes are rebuilt from Parquet files only)")
    }
    // one Parquet reader per physical column set (files of one schema share it)
    val layouts = tasks.map(_.columns).distinct
    val readers = layouts.map { cols =>
      val schema = StructType(cols.map { case (n, t) =>
        StructField(n, Paimon.sparkType(t).fold(why => throw new IndexFormatException(path, 0, s"an indexable column '$n': $why"), identity))
      })
      PaimonDataFiles.parquetRows(spark, schema) -> schema
    }
    val work = tasks.map(t => t -> layouts.indexOf(t.columns))
    val written = tasks.map(t => Paths.get(t.newIndexPath))
    try {
      val results = spark.sparkContext.parallelize(work, math.max(1, math.min(work.size, spark.sparkContext.defaultParallelism * 4)))
        .map { case (task, layout) =>
          val (read, schema) = readers(layout)
          val rebuilt = rewriteOne(task, read, schema)
          PaimonDataFiles.maybeFail("rewrite-file-index")
          rebuilt
        }.collect().toSeq
      val changes = FileIndexRewrite.changes(results.map(r => r._1 -> r._2), results.flatMap(_._3).map(Paths.get(_)))
      val committed = new TableCommit(table.path, hooks = hooks).commit(table.snapshot, changes)
      WriteSummary(path, Some(committed.snapshotId), Some(CommitKind.Compact), Seq(
        "data_files" -> results.size.toLong,
        "embedded" -> results.count(_._2.embeddedIndex.isDefined).toLong,
        "index_files" -> results.count(_._3.isDefined).toLong,
        "without_index" -> results.count(r => r._2.embeddedIndex.isEmpty && r._3.isEmpty).toLong,
        "attempts" -> committed.attempts.toLong))
    } catch {
      case NonFatal(e) =>
        TableCommit.removeUnreferenced(table.path, written)
        throw e
    }
  }

  /** One data file re-indexed in a task: its old entry, new meta, and the index file written. */
  private def rewriteOne(task: FileIndexRewrite.Task, read: String => Iterator[org.apache.spark.sql.catalyst.InternalRow],
      schema: StructType): (ManifestEntry, DataFileMeta, Option[String]) = {
    val builder = new FileIndexRewrite.Builder(task.options, task.fields, task.columns.map(_._1))
    val types = schema.fields.map(_.dataType)
    var rows = 0L
    read(task.dataPath).foreach { r =>
      builder.write(types.indices.map(i => if (r.isNullAt(i)) null else SparkFileIndexTypes.value(types(i), r.get(i, types(i)))))
      rows += 1
    }
    if (rows != task.entry.file.rowCount)
      throw new IndexFormatException(task.dataPath, 0, s"${task.entry.file.rowCount} rows (the manifest's _ROW_COUNT), read $rows")
    val old = task.existingIndex.map { p =>
      val bytes = try Files.readAllBytes(Paths.get(p)) catch { case _: java.nio.file.NoSuchFileException =>
        throw new IndexFormatException(p, 0, "the file index to exist (the manifest lists it)") }
      FileIndexContainer.read(bytes, p)
    }
    val (meta, indexBytes) = FileIndexRewrite.place(task, FileIndexRewrite.container(builder.maintainers, old, task.keptNames))
    indexBytes.foreach(b => PaimonDataFiles.writeAtomically(Paths.get(task.newIndexPath), b))
    (task.entry, meta, indexBytes.map(_ => task.newIndexPath))
  }

  // ------------------------------------------------------------------------------------------
  // Shared

  /** A condition on partition columns as a test of a partition's values. */
  private def partitionFilter(table: FileStoreTable, partitions: Option[String]): IndexedSeq[Any] => Boolean =
    partitions.filter(_.trim.nonEmpty).fold((_: IndexedSeq[Any]) => true) { text =>
      val p = table.predicate(text)
      val keys = table.schema.partitionKeys
      Predicates.columns(p).filterNot(keys.contains).headOption.foreach { c =>
        throw new IllegalArgumentException(s"the partition filter names '$c', which is not a partition column (${keys.mkString(", ")})")
      }
      (values: IndexedSeq[Any]) => Predicates.holds(p, c => (table.columnTypes(c).get, values(keys.indexOf(c))))
    }

  // ------------------------------------------------------------------------------------------
  // py4j entry points (options as two lists, null for what is not given; results as JSON)

  def rewriteFileIndexesForPython(spark: SparkSession, path: String, optionKeys: java.util.List[String],
      optionValues: java.util.List[String], partitions: String, onlyMissing: Boolean): String =
    rewriteFileIndexes(spark, path, pairs(optionKeys, optionValues), Option(partitions), onlyMissing).toJson

  private def pairs(keys: java.util.List[String], values: java.util.List[String]): Seq[(String, String)] =
    if (keys == null) Nil else keys.asScala.toSeq.zip(values.asScala.toSeq)

  private[spark] def newCommitUser(): String = UUID.randomUUID().toString
}
