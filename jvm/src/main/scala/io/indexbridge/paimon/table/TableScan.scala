package io.indexbridge.paimon.table

import java.nio.file.{Files, NoSuchFileException, Path, Paths}

import scala.collection.mutable

import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.{BinaryRow, DeletionVector, DeletionVectorRange, KeyType, DeletionFile => DeletionFileCodec}
import io.indexbridge.paimon.fileindex.{Condition, FileIndexContainer, FileIndexPredicate, Predicate}
import io.indexbridge.paimon.table.Predicates.{ColumnStats, UnknownStats}

/** Where one data file's deletion vector sits (Paimon's `DeletionFile`). */
final case class DeletionFile(path: Path, offset: Int, length: Int, cardinality: Long) {

  /** The vector of `dataFile` (of `rowCount` rows), decoded from the index file's bytes: CRC,
    * cardinality and every position below the row count checked. */
  def load(dataFile: String, rowCount: Long, indexFileBytes: Array[Byte]): DeletionVector = {
    val dv = DeletionFileCodec.read(indexFileBytes, Seq(DeletionVectorRange(dataFile, offset, length, cardinality)), path.toString).head._2
    val last = if (dv.cardinality > 0) dv.positions.last else -1L
    if (last >= rowCount) throw new IndexFormatException(path.toString, offset, s"positions below the $rowCount rows of $dataFile, found $last")
    dv
  }

  /** [[load]] reading the index file. */
  def load(dataFile: String, rowCount: Long): DeletionVector = load(dataFile, rowCount, DeletionFile.readIndexFile(path.toString))
}

object DeletionFile {

  /** The bytes of a deletion-vector index file; a missing file is an [[IndexFormatException]]. */
  def readIndexFile(path: String): Array[Byte] =
    try Files.readAllBytes(Paths.get(path))
    catch { case _: NoSuchFileException => throw new IndexFormatException(path, 0, "the deletion file to exist (the index manifest references it)") }
}

/** A data file of a plan: its metadata, path, deletion vector and `.index` file. */
final case class DataFileEntry(meta: DataFileMeta, path: Path, deletionFile: Option[DeletionFile], indexFile: Option[Path]) {
  def name: String = meta.fileName
}

/** A split of the plan (`DataSplit`): files of one bucket read together, raw (each file on its
  * own, deletion vector applied) or merged by key. `partition` holds the decoded values. */
final case class DataSplit(
    partition: IndexedSeq[Any],
    bucket: Int,
    totalBuckets: Int,
    bucketPath: Path,
    rawConvertible: Boolean,
    files: Seq[DataFileEntry]) {

  /** Whether Paimon's reader reads the split raw: a raw-convertible split of an append table, or of
    * a primary-key table whose files all record their retract rows
    * (`PrimaryKeyTableRawFileSplitReadProvider`). */
  def rawRead(primaryKeyTable: Boolean): Boolean =
    rawConvertible && (!primaryKeyTable || files.forall(_.meta.deleteRowCount.isDefined))
}

/** An index file live in the snapshot (`HASH`, `DELETION_VECTORS`, …). */
final case class IndexFileEntry(partition: IndexedSeq[Any], bucket: Int, indexType: String, fileName: String, path: Path,
    fileSize: Long, rowCount: Long, dvRanges: Option[Seq[DeletionVectorRange]])

/** A table's read plan: the live data files of a snapshot that a predicate may need, in Paimon's
  * splits, and the snapshot's index files. */
final case class Plan(table: FileStoreTable, predicate: Option[Predicate], splits: Seq[DataSplit], indexFiles: Seq[IndexFileEntry]) {
  def files: Seq[DataFileEntry] = splits.flatMap(_.files)
}

/** A Paimon table opened at a snapshot (the latest, or one given by id), read without Paimon's
  * code: Paimon 1.4.2's batch scan (`DataTableBatchScan`, `SnapshotReaderImpl`,
  * `AbstractFileStoreScan`, `AppendOnlyFileStoreScan`, `KeyValueFileStoreScan`) rule for rule.
  *
  * {{{
  * schema      the latest schema-N; for time travel the snapshot's schema
  * manifests   the base then the delta manifest list of the snapshot; manifests whose partition
  *             stats rule the partition filter out are not read
  * entries     kept when the partition filter holds for their partition, the bucket selector
  *             (fixed buckets) for their bucket, their level is > 0 where batch scans skip level 0
  *             (PK tables with deletion vectors or first-row), and the stats filter passes; then
  *             merged (ADD minus DELETE, FileEntry.mergeEntries)
  * stats       append: the non-partition filter on the value stats, then the embedded file
  *             index; PK: the key conjuncts on the key stats, and where level 0 is skipped also
  *             the value filter (value stats, + embedded file index with deletion vectors); then per bucket: when no
  *             files overlap (one level > 0) each file by the value filter, otherwise the whole
  *             bucket kept when any file passes
  * evolution   a file's stats are decoded with its own schema and mapped to the table's columns
  *             by field id; a column the file lacks has no min/max and only nulls; a conjunct on a
  *             column whose type changed is not tested (except exact integer narrowing)
  * splits      per partition, per bucket, in first-seen order ([[SplitGenerator]]); deletion
  *             vectors from the index manifest when deletion-vectors.enabled
  * filters     a condition's conjuncts: projected on the partition columns = partition filter;
  *             those naming a non-partition column = non-partition (value) filter; projected on
  *             the trimmed primary-key columns = key filter (`PredicateProjectionConverter`, as
  *             Paimon 1.4 picks it: `(a AND k > 1) OR k < 0` gives `k > 1 OR k < 0`)
  * }}}
  */
final class FileStoreTable private (val path: Path, val schema: TableSchema, val snapshot: Option[Snapshot], val schemas: SchemaManager) {
  val options: CoreOptions = CoreOptions(schema.options)
  val primaryKeyTable: Boolean = schema.primaryKeys.nonEmpty
  val paths: FileStorePaths = new FileStorePaths(path, schema, options)

  private val partitionTypes: Seq[KeyType] = schema.partitionKeys.map(schema.keyTypeOf(_).get)
  private def source(name: String): String = path.resolve("manifest").resolve(name).toString

  /** The type of each atomic column of the table, by name. */
  val columnTypes: String => Option[KeyType] = schema.keyTypeOf

  /** A Spark SQL condition as Paimon's predicate over this table ([[Condition]], then the shape
    * `PredicateBuilder` gives it). */
  def predicate(condition: String): Predicate =
    Predicates.paimonShape(Condition.bind(Condition.parse(condition), columnTypes), columnTypes)

  /** Decodes a serialized partition row. */
  def partition(bytes: Array[Byte], source: String): IndexedSeq[Any] = BinaryRow.deserialize(bytes, partitionTypes, source)

  /** The plan of a read with an optional predicate ([[predicate]] or a tree of the same shape). */
  def plan(filter: Option[Predicate]): Plan = snapshot.fold(Plan(this, filter, Nil, Nil)) { s =>
    val scan = new Scan(s, filter.filterNot(_ == Predicates.AlwaysTrue))
    val splits = scan.splits(scan.entries())
    Plan(this, filter, splits, indexFiles(s))
  }

  /** The index manifest's entries of the snapshot, with their paths. */
  def indexFiles(s: Snapshot): Seq[IndexFileEntry] = s.indexManifest.fold(Seq.empty[IndexFileEntry]) { name =>
    Manifest.readIndexManifest(path.resolve("manifest").resolve(name)).map { e =>
      val part = partition(e.partition, source(name))
      IndexFileEntry(part, e.bucket, e.indexType, e.fileName, paths.indexFile(part, e.bucket, e), e.fileSize, e.rowCount, e.dvRanges)
    }
  }

  // ------------------------------------------------------------------------------------------

  /** One scan: the filters derived from the predicate, the caches of a plan. */
  private final class Scan(s: Snapshot, filter: Option[Predicate]) {
    private val partitionKeys = schema.partitionKeys.toSet
    private val conjuncts = filter.toSeq.flatMap(Predicates.splitAnd)
    private val partitionFilter: Option[Predicate] =
      if (partitionKeys.isEmpty) None
      else conjuncts.flatMap(Predicates.project(_, partitionKeys)) match {
        case Seq() => None
        case ps    => Some(Predicates.and(ps, columnTypes))
      }
    private val dataFilter: Option[Predicate] =
      conjuncts.filterNot(c => partitionKeys.nonEmpty && Predicates.columns(c).subsetOf(partitionKeys)) match {
        case Seq() => None
        case ps    => Some(Predicates.and(ps, columnTypes))
      }
    private val keyFilter: Option[Predicate] = if (!primaryKeyTable) None else {
      val keys = schema.trimmedPrimaryKeys.toSet
      dataFilter.toSeq.flatMap(Predicates.splitAnd).flatMap(Predicates.project(_, keys)) match {
        case Seq() => None
        case ps    => Some(Predicates.and(ps, columnTypes))
      }
    }
    private val skipLevel0 = primaryKeyTable && options.batchScanSkipLevel0
    /** The scan consults embedded file indexes of PK tables only with deletion vectors (`KeyValueFileStore.newScan`). */
    private val scanFileIndex = options.fileIndexReadEnabled && (!primaryKeyTable || options.deletionVectorsEnabled)
    private val bucketSelector = filter.flatMap(BucketSelector(_, schema, options))

    /** Partition values, cached by their bytes. */
    private val partitions = mutable.HashMap.empty[java.nio.ByteBuffer, IndexedSeq[Any]]
    def partitionOf(e: ManifestEntry, source: String): IndexedSeq[Any] =
      partitions.getOrElseUpdate(java.nio.ByteBuffer.wrap(e.partition), partition(e.partition, source))

    /** The live entries of the snapshot the filters keep (post-filtered for PK tables). */
    def entries(): Seq[ManifestEntry] = {
      val manifests = Seq(s.baseManifestList, s.deltaManifestList).flatMap(n => Manifest.readManifestList(path.resolve("manifest").resolve(n)))
      val read = manifests.filter(keepManifest).flatMap { m =>
        val src = source(m.fileName)
        Manifest.readManifest(path.resolve("manifest").resolve(m.fileName)).filter(keepEntry(_, src))
      }
      val live = Manifest.mergeEntries(read, source(s.deltaManifestList))
      if (primaryKeyTable && dataFilter.isDefined) postFilter(live) else live
    }

    private def keepManifest(m: ManifestFileMeta): Boolean = partitionFilter.forall { p =>
      val src = source(m.fileName) + " (partition stats in the manifest list)"
      val min = BinaryRow.serializedView(m.partitionStats.minValues, src)
      val max = BinaryRow.serializedView(m.partitionStats.maxValues, src)
      val index = schema.partitionKeys.zipWithIndex.toMap
      Predicates.mayMatch(p, m.numAddedFiles + m.numDeletedFiles, column => {
        val i = index(column)
        val t = partitionTypes(i)
        (t, statsAt(min, max, m.partitionStats.nullCounts, i, t))
      })
    }

    private def keepEntry(e: ManifestEntry, src: String): Boolean = {
      lazy val part = partitionOf(e, src)
      partitionFilter.forall(p => Predicates.holds(p, c => (columnTypes(c).get, part(schema.partitionKeys.indexOf(c))))) &&
      bucketSelector.forall(_.test(part, e.bucket, e.totalBuckets)) &&
      (!skipLevel0 || e.file.level > 0) &&
      filterByStats(e, src)
    }

    private def filterByStats(e: ManifestEntry, src: String): Boolean =
      if (!primaryKeyTable) dataFilter.forall(f => valueFilterPasses(e, f, src))
      else {
        (!skipLevel0 || dataFilter.forall(f => valueFilterPasses(e, f, src))) &&
        keyFilter.forall { f =>
          val fileSchema = schemas.schema(e.file.schemaId)
          unsafeFiltered(f, fileSchema).forall { kept =>
            val keyFields = fileSchema.trimmedPrimaryKeys.map(fileSchema.field)
            Predicates.mayMatch(kept, e.file.rowCount, stats(e.file, e.file.keyStats, keyFields, None, fileSchema, src + " (key stats)"))
          }
        }
      }

    /** `filterByValueFilter` / append `filterByStats`: the value stats, then the embedded index. */
    private val valueVerdicts = mutable.HashMap.empty[Manifest.Identifier, Boolean]
    private def valueFilterPasses(e: ManifestEntry, f: Predicate, src: String): Boolean =
      valueVerdicts.getOrElseUpdate(e.identifier, {
        val fileSchema = schemas.schema(e.file.schemaId)
        val statsPass = unsafeFiltered(f, fileSchema).forall { kept =>
          Predicates.mayMatch(kept, e.file.rowCount,
            stats(e.file, e.file.valueStats, fileSchema.fields, e.file.valueStatsCols, fileSchema, src + " (value stats)"))
        }
        statsPass && (!scanFileIndex || e.file.embeddedIndex.forall { bytes =>
          FileIndexEvaluator.devolved(f, FileStoreTable.this, fileSchema).forall { p =>
            new FileIndexPredicate(FileIndexContainer.read(bytes, s"$src: embedded file index of ${e.file.fileName}"),
              FileIndexEvaluator.fields(fileSchema)).evaluate(p).remain
          }
        })
      })

    /** `SimpleStatsEvolutions.filterUnsafeFilter(…, keepNewFieldFilter = true)`. */
    private def unsafeFiltered(f: Predicate, fileSchema: TableSchema): Option[Predicate] =
      if (fileSchema.id == schema.id) Some(f)
      else Predicates.splitAnd(f).filter(c => Predicates.devolve(c, schema, fileSchema, keepNewField = true).isDefined) match {
        case Seq() => None
        case ps    => Some(Predicates.and(ps, columnTypes))
      }

    /** A file's stats (`SimpleStatsEvolution`): `statsFields` are the fields of the stats rows
      * (before `_VALUE_STATS_COLS` picks a subset), looked up by the table column's field id. */
    private def stats(file: DataFileMeta, simple: SimpleStats, statsFields: Seq[DataField], denseCols: Option[Seq[String]],
        fileSchema: TableSchema, src: String): String => (KeyType, ColumnStats) = {
      val rowFields = denseCols.fold(statsFields)(cols => cols.map { c =>
        fileSchema.fields.find(_.name == c)
          .getOrElse(throw new IndexFormatException(src, 0, s"_VALUE_STATS_COLS naming columns of schema ${fileSchema.id}, found '$c'"))
      })
      lazy val (min, max) = {
        val rows = (BinaryRow.serializedView(simple.minValues, src), BinaryRow.serializedView(simple.maxValues, src))
        val arities = Seq(rows._1.arity, rows._2.arity) ++ simple.nullCounts.map(_.size)
        if (arities.exists(_ != rowFields.size))
          throw new IndexFormatException(src, 0, s"stats of ${rowFields.size} columns of ${file.fileName}, found min/max/null counts of ${arities.mkString("/")}")
        rows
      }
      column => {
        val tableField = schema.field(column)
        val t = columnTypes(column).get
        statsFields.find(_.id == tableField.id) match {
          case None => (t, ColumnStats(null, null, Some(file.rowCount))) // added after the file was written
          case Some(dataField) =>
            val i = rowFields.indexWhere(_.id == dataField.id)
            (t, dataField.dataType match {
              case DataType.Atomic(fileType, _) if i >= 0 => statsAt(min, max, simple.nullCounts, i, fileType)
              case _                                      => UnknownStats
            })
        }
      }
    }

    private def statsAt(min: BinaryRow.View, max: BinaryRow.View, nullCounts: Option[IndexedSeq[Option[Long]]], i: Int, t: KeyType): ColumnStats = {
      def value(row: BinaryRow.View): Any = if (i >= row.arity || row.isNull(i)) null else row.value(i, t)
      ColumnStats(value(min), value(max), nullCounts.flatMap(_.lift(i)).flatten)
    }

    /** `KeyValueFileStoreScan.postFilterManifestEntries` with the value filter. */
    private def postFilter(entries: Seq[ManifestEntry]): Seq[ManifestEntry] = {
      val f = dataFilter.get
      val buckets = mutable.LinkedHashMap.empty[(java.nio.ByteBuffer, Int), mutable.ArrayBuffer[ManifestEntry]]
      entries.foreach(e => buckets.getOrElseUpdate((java.nio.ByteBuffer.wrap(e.partition), e.bucket), mutable.ArrayBuffer.empty) += e)
      buckets.values.toSeq.flatMap { group =>
        val src = source(s.deltaManifestList)
        val levels = group.map(_.file.level)
        val noOverlapping = group.size <= 1 || (!levels.contains(0) && levels.distinct.size == 1)
        if (noOverlapping) group.filter(valueFilterPasses(_, f, src))
        else if (group.exists(valueFilterPasses(_, f, src))) group
        else Nil
      }
    }

    def splits(entries: Seq[ManifestEntry]): Seq[DataSplit] = {
      val src = source(s.deltaManifestList)
      val grouped = mutable.LinkedHashMap.empty[java.nio.ByteBuffer, mutable.LinkedHashMap[Int, mutable.ArrayBuffer[ManifestEntry]]]
      entries.foreach { e =>
        grouped.getOrElseUpdate(java.nio.ByteBuffer.wrap(e.partition), mutable.LinkedHashMap.empty)
          .getOrElseUpdate(e.bucket, mutable.ArrayBuffer.empty) += e
      }
      val dvs: Map[(IndexedSeq[Any], Int), Map[String, DeletionFile]] =
        if (!options.deletionVectorsEnabled) Map.empty
        else indexFiles(s).filter(_.indexType == DeletionFileCodec.IndexType).groupBy(f => (f.partition, f.bucket)).map {
          case (key, files) => key -> files.flatMap(f => f.dvRanges.getOrElse(Nil).map(r => r.dataFile -> DeletionFile(f.path, r.offset, r.length, r.cardinality))).toMap
        }
      val keyOrder = if (primaryKeyTable) Some(Predicates.keyOrdering(schema.trimmedPrimaryKeys.map(columnTypes(_).get), src + " (file key)")) else None
      grouped.toSeq.flatMap { case (_, buckets) =>
        buckets.toSeq.flatMap { case (bucket, bucketEntries) =>
          val part = partitionOf(bucketEntries.head, src)
          val files = bucketEntries.map(_.file).toSeq
          val groups = keyOrder.fold(SplitGenerator.append(files, options))(SplitGenerator.mergeTree(files, options, _))
          val bucketPath = paths.bucketPath(part, bucket)
          val bucketDvs = dvs.getOrElse((part, bucket), Map.empty)
          groups.map { g =>
            DataSplit(part, bucket, bucketEntries.head.totalBuckets, bucketPath, g.rawConvertible, g.files.map { f =>
              DataFileEntry(f, paths.dataFile(part, bucket, f), bucketDvs.get(f.fileName), f.indexFile.map(paths.extraFile(part, bucket, f, _)))
            })
          }
        }
      }
    }
  }
}

object FileStoreTable {

  /** Opens the table at `path` at its latest snapshot or at `snapshotId`. A table without a
    * snapshot opens with an empty plan; a missing or damaged snapshot or schema, or a table using
    * options this reader does not implement, is an [[IndexFormatException]]. */
  def open(path: String, snapshotId: Option[Long] = None): FileStoreTable = {
    val root = Paths.get(path)
    if (!Files.isDirectory(root.resolve("schema")))
      throw new IndexFormatException(root.resolve("schema").toString, 0, "a Paimon table directory (with schema/)")
    val snapshots = new SnapshotManager(root)
    val schemas = new SchemaManager(root)
    val snapshot = snapshotId.map(snapshots.snapshot).orElse(snapshots.latestSnapshot)
    val schema = snapshotId.flatMap(_ => snapshot.map(s => schemas.schema(s.schemaId))).orElse(schemas.latest)
      .getOrElse(throw new IndexFormatException(schemas.directory.toString, 0, "a schema-N file"))
    val unsupported = CoreOptions(schema.options).unsupported(schema.primaryKeys.nonEmpty) ++
      (schema.partitionKeys ++ schema.primaryKeys).distinct.filter(schema.keyTypeOf(_).isEmpty).map(k => s"key column '$k' of a nested type")
    if (unsupported.nonEmpty)
      throw new IndexFormatException(schemas.directory.resolve(s"schema-${schema.id}").toString, 0,
        s"a table this reader supports; unsupported: ${unsupported.mkString("; ")}")
    new FileStoreTable(root, schema, snapshot, schemas)
  }
}
