package io.indexbridge.spark

import java.nio.file.{Files, Path, Paths}
import java.util.UUID

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper
import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.fileindex.FileIndexContainer
import io.indexbridge.paimon.table._
import org.apache.spark.sql.{Column, DataFrame, SparkSession}
import org.apache.spark.sql.functions.{col, lit}
import org.apache.spark.sql.indexbridge.{DeletionVectorRef, FileIndexConditions, PaimonDataFiles, PaimonRowLive, PaimonWriteExpressions, SparkFileIndexTypes}
import org.apache.spark.sql.types.{StructField, StructType, TimestampNTZType}

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
  * load                 a DataFrame into a dynamic-bucket primary-key table (created if absent):
  *                      buckets as HashBucketAssigner, sorted files and HASH indexes written per
  *                      bucket in tasks, one APPEND commit                       [[PaimonLoad]]
  * delete               rows of an append table with deletion vectors where a condition holds:
  *                      candidate files planned with the condition (partition, stats, embedded
  *                      indexes), their live rows read in tasks by Spark's Parquet reader with
  *                      _metadata.row_index, the condition applied exactly, positions aggregated
  *                      into a vector per data file, merged with the old ones and written into
  *                      deletion files per group in tasks, one OVERWRITE commit [[DeletionVectorWrite]]
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
          TaskFaults.failFirstAttempt("rewrite-file-index")
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
  // Job 2: delete rows by condition (append tables with deletion vectors)

  /** Deletes the rows where `where` (Spark SQL) holds from an append table with
    * `deletion-vectors.enabled` (see [[DeletionVectorWrite]]): one OVERWRITE commit. */
  def delete(spark: SparkSession, path: String, where: String): WriteSummary = delete(spark, path, Left(where))

  def delete(spark: SparkSession, path: String, where: Column): WriteSummary = delete(spark, path, Right(where))

  def delete(spark: SparkSession, path: String, where: Either[String, Column], hooks: CommitHooks = CommitHooks.None): WriteSummary = {
    val table = FileStoreTable.open(path)
    val schemaFile = table.schemas.directory.resolve(s"schema-${table.schema.id}").toString
    if (table.primaryKeyTable)
      throw new IndexFormatException(schemaFile, 0, "an append table (deleting from a primary-key table writes retract rows, which this job does not)")
    if (!table.options.deletionVectorsEnabled)
      throw new IndexFormatException(schemaFile, 0, "deletion-vectors.enabled = true (deleting by deletion vectors needs it)")
    val snapshot = table.snapshot.getOrElse(return WriteSummary(path, None, None, Seq("deleted_rows" -> 0L)))
    val fullSchema = sparkSchema(table.schema)
    val analysed = where.fold(FileIndexConditions.analyze(spark, fullSchema, _), FileIndexConditions.analyze(spark, fullSchema, _))
    val referenced = table.schema.fields.filter(f => analysed.references.exists(_.name == f.name))
    for (f <- referenced; why <- Paimon.sparkType(f.dataType).left.toOption)
      throw new IndexFormatException(schemaFile, 0, s"a condition on columns Spark can hold exactly: '${f.name}' is $why")
    val predicate = Predicates.paimonShape(where match {
      case Left(text) => try table.predicate(text) catch { case _: IndexFormatException => FileIndexConditions.translate(analysed) }
      case Right(_)   => FileIndexConditions.translate(analysed)
    }, table.columnTypes)
    val candidates = table.plan(Some(predicate)).files
    candidates.find(!_.name.endsWith(".parquet")).foreach { f =>
      throw new IndexFormatException(f.path.toString, 0, "a Parquet data file (deletes read Parquet files only)")
    }
    if (candidates.isEmpty) return WriteSummary(path, None, None, Seq("data_files" -> 0L, "deleted_rows" -> 0L))
    val columns = if (referenced.nonEmpty) referenced else table.schema.fields.take(1)
    val rows = candidates.groupBy(_.meta.schemaId).toSeq.sortBy(_._1).map { case (id, files) => scan(spark, table, files, id, columns) }
      .reduce(_ unionByName _)
    val matching = where.fold(rows.where(_), rows.where(_)).select(col("_ib_file"), col("_ib_pos"))
    val bitmap64 = table.schema.options.get("deletion-vectors.bitmap64").exists(_.trim.equalsIgnoreCase("true"))
    // the DV aggregate alone (no count beside it), so that its chunks hash the files themselves
    // (BoundedDvAggregation's DvChunk); the deleted rows are the DVs' cardinalities
    val vectors = matching.groupBy(col("_ib_file")).agg(PaimonWriteExpressions.dvAgg(col("_ib_pos"), bitmap64).as("dv"))

    // the deletion-file groups: a partition (unaware bucket) or a (partition, bucket)
    val unaware = table.options.bucket == -1
    val live = TableCommit.liveEntries(table.path, snapshot).map(e => e.file.fileName -> e).toMap
    val existing = TableCommit.indexEntries(table.path, Some(snapshot)).filter(_.indexType == io.indexbridge.paimon.DeletionFile.IndexType)
    val commitId = UUID.randomUUID().toString
    val groupKeys = candidates.map(f => live(f.name)).map(e => (java.nio.ByteBuffer.wrap(e.partition), if (unaware) 0 else e.bucket)).distinct
    val targetSize = table.schema.options.get("deletion-vector.index-file.target-size").fold(2L << 20)(io.indexbridge.paimon.fileindex.BitmapIndex.memorySize)
    val groups = groupKeys.zipWithIndex.map { case ((partition, bucket), i) =>
      val values = table.partition(partition.array(), "index manifest")
      val inGroup = existing.filter(e => java.nio.ByteBuffer.wrap(e.partition) == partition && e.bucket == bucket)
      val dir = if (table.options.indexFileInDataFileDir) table.paths.bucketPath(values, bucket) else table.path.resolve("index")
      DeletionVectorWrite.Group(partition.array(), bucket, unaware, inGroup.map(e => e -> table.paths.indexFile(values, bucket, e).toString),
        dir.toString, UUID.nameUUIDFromBytes(s"$commitId/$i".getBytes(java.nio.charset.StandardCharsets.UTF_8)).toString, targetSize, bitmap64)
    }
    val groupOf = candidates.map(f => live(f.name)).map(e => e.file.fileName -> groupKeys.indexOf((java.nio.ByteBuffer.wrap(e.partition), if (unaware) 0 else e.bucket))).toMap
    val groupDirs = groups.map(g => (Paths.get(g.directory), s"index-${g.uuid}-"))
    try {
      val results = vectors.rdd.map(r => groupOf(r.getString(0)) -> (r.getString(0) -> r.getAs[Array[Byte]](1)))
        .groupByKey(math.max(1, math.min(groups.size, spark.sparkContext.defaultParallelism * 2)))
        .map { case (g, items) =>
          val sorted = items.toSeq.sortBy(_._1).map { case (f, dv) =>
            f -> io.indexbridge.paimon.DeletionVector.deserialize(dv, s"<new deletion vector of $f>", verifyCrc = false)
          }
          // a scan yields each (file, position) once; counted before write merges the old DVs in
          val deleted = sorted.map(_._2.cardinality).sum
          val (entries, written) = DeletionVectorWrite.write(groups(g), sorted)
          TaskFaults.failFirstAttempt("delete")
          (entries, written, sorted.size.toLong, deleted)
        }.collect().toSeq
      if (results.isEmpty) return WriteSummary(path, None, None, Seq("data_files" -> 0L, "deleted_rows" -> 0L))
      val entries = results.flatMap(_._1)
      val changes = CommitChanges(CommitKind.Overwrite, Nil, entries, results.flatMap(_._2).map(Paths.get(_)))
      val committed = new TableCommit(table.path, hooks = hooks).commit(Some(snapshot), changes)
      WriteSummary(path, Some(committed.snapshotId), Some(CommitKind.Overwrite), Seq(
        "data_files" -> results.map(_._3).sum,
        "deleted_rows" -> results.map(_._4).sum,
        "deletion_files_added" -> entries.count(_.kind == Manifest.Add).toLong,
        "deletion_files_removed" -> entries.count(_.kind == Manifest.Delete).toLong,
        "attempts" -> committed.attempts.toLong))
    } catch {
      case NonFatal(e) =>
        removeByPrefix(table.path, groupDirs)
        throw e
    }
  }

  /** The Spark schema of a table's columns (those Spark cannot hold as TIMESTAMP_NTZ placeholders). */
  private def sparkSchema(schema: TableSchema): StructType =
    StructType(schema.fields.map(f => StructField(f.name, Paimon.sparkType(f.dataType).getOrElse(TimestampNTZType), f.dataType.nullable)))

  /** The live rows of data files of one schema as the table's `columns`, with `_ib_file` (the data
    * file's name) and `_ib_pos` (the row's position in it). */
  private def scan(spark: SparkSession, table: FileStoreTable, files: Seq[DataFileEntry], schemaId: Long,
      columns: Seq[io.indexbridge.paimon.table.DataField]): DataFrame = {
    val fileSchema = table.schemas.schema(schemaId)
    val byId = fileSchema.fields.map(f => f.id -> f).toMap
    val physical = columns.flatMap(f => byId.get(f.id)).distinct
    val physicalOrAny = if (physical.nonEmpty) physical else fileSchema.fields.take(1)
    val readSchema = StructType(physicalOrAny.map(f => StructField(f.name, Paimon.sparkType(f.dataType).getOrElse(TimestampNTZType))))
    val data = spark.read.schema(readSchema).parquet(files.map(_.path.toString): _*)
    val dvs = files.flatMap(f => f.deletionFile.map(d => f.name -> DeletionVectorRef(d.path.toString, d.offset, d.length, d.cardinality, f.meta.rowCount))).toMap
    val live = if (dvs.isEmpty) data else data.where(PaimonRowLive.column(col("_metadata.file_name"), col("_metadata.row_index"), dvs))
    val projected = columns.map { f =>
      val target = Paimon.sparkType(f.dataType).getOrElse(TimestampNTZType)
      byId.get(f.id) match {
        case Some(ff) if ff.dataType == f.dataType => col(quote(ff.name)).as(f.name)
        case Some(ff)                              => col(quote(ff.name)).cast(target).as(f.name)
        case None                                  => lit(null).cast(target).as(f.name)
      }
    }
    live.select(projected :+ col("_metadata.file_name").as("_ib_file") :+ col("_metadata.row_index").as("_ib_pos"): _*)
  }

  private def quote(name: String): String = "`" + name.replace("`", "``") + "`"

  /** Removes, in each (directory, prefix), the files whose names start with the prefix and that the
    * latest snapshot does not reference (a failed job's output, whatever tasks got to write). */
  private def removeByPrefix(tablePath: Path, dirs: Seq[(Path, String)]): Unit = {
    val found = dirs.flatMap { case (dir, prefix) =>
      if (!Files.isDirectory(dir)) Nil
      else {
        val stream = Files.list(dir)
        try stream.iterator.asScala.filter(_.getFileName.toString.startsWith(prefix)).toList finally stream.close()
      }
    }
    TableCommit.removeUnreferenced(tablePath, found)
  }

  // ------------------------------------------------------------------------------------------
  // Job 3: bulk-load a dynamic-bucket primary-key table

  /** Loads `data` into the dynamic-bucket primary-key table at `path`, creating it from the
    * DataFrame's columns with `primaryKeys`, `partitionKeys` and `options` when the directory holds
    * no table yet ([[PaimonLoad]]): one APPEND commit. */
  def load(spark: SparkSession, path: String, data: DataFrame, primaryKeys: Seq[String] = Nil, partitionKeys: Seq[String] = Nil,
      options: Seq[(String, String)] = Nil, hooks: CommitHooks = CommitHooks.None): WriteSummary =
    PaimonLoad.load(spark, path, data, primaryKeys, partitionKeys, options, hooks)

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

  def deleteForPython(spark: SparkSession, path: String, where: AnyRef): String = (where match {
    case s: String => delete(spark, path, s)
    case c: Column => delete(spark, path, c)
    case other     => throw new IllegalArgumentException(s"where must be a String or a Column, got ${if (other == null) "null" else other.getClass.getName}")
  }).toJson

  def loadForPython(spark: SparkSession, path: String, data: DataFrame, primaryKeys: java.util.List[String],
      partitionKeys: java.util.List[String], optionKeys: java.util.List[String], optionValues: java.util.List[String]): String =
    load(spark, path, data, Option(primaryKeys).fold(Seq.empty[String])(_.asScala.toSeq),
      Option(partitionKeys).fold(Seq.empty[String])(_.asScala.toSeq), pairs(optionKeys, optionValues)).toJson

  def rewriteFileIndexesForPython(spark: SparkSession, path: String, optionKeys: java.util.List[String],
      optionValues: java.util.List[String], partitions: String, onlyMissing: Boolean): String =
    rewriteFileIndexes(spark, path, pairs(optionKeys, optionValues), Option(partitions), onlyMissing).toJson

  private def pairs(keys: java.util.List[String], values: java.util.List[String]): Seq[(String, String)] =
    if (keys == null) Nil else keys.asScala.toSeq.zip(values.asScala.toSeq)

  private[spark] def newCommitUser(): String = UUID.randomUUID().toString
}
