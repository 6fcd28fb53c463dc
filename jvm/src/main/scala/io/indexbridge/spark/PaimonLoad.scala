package io.indexbridge.spark

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}
import java.time.{LocalDateTime, ZoneOffset}
import java.util.UUID

import scala.collection.mutable
import scala.util.control.NonFatal

import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.{BinaryRow, HashIndex, KeyType}
import io.indexbridge.paimon.fileindex.FileIndexContainer
import io.indexbridge.paimon.table.{DataField => PaimonField, DataType => PaimonType, _}
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.functions.{col, lit, max_by, min, monotonically_increasing_id, struct}
import org.apache.spark.sql.indexbridge.{PaimonParquet, PaimonWriteExpressions, SparkFileIndexTypes}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._

/** Bulk-loading a dynamic-bucket primary-key table (`bucket = -1`) from a DataFrame, as Paimon
  * 1.4.2's writer would with one `HashBucketAssigner` fed the rows in order, its commit, and (for
  * buckets that had no data) the full compaction Paimon's writer leaves behind.
  *
  * {{{
  * table      created when the directory has no schema: columns from the DataFrame (Spark types as
  *            Paimon's Spark connector maps them), the given primary key (NOT NULL), partition
  *            keys and options (bucket = -1); an existing table must be a dynamic-bucket
  *            primary-key table (partition keys within the primary key) with the deduplicate
  *            merge engine and Parquet files
  * rows       the DataFrame's columns by name, cast to the table's types; a missing nullable
  *            column is null; per (partition, primary key) the last row of the input wins (rows
  *            reach the write tasks sorted by key and newest first, older ones are skipped)
  * buckets    a key hash (BinaryRow.hashCode of the trimmed primary key) in the partition's HASH
  *            index keeps its bucket; new hashes, in order of first appearance, fill the existing
  *            buckets under dynamic-bucket.target-row-num, then new ones ([[DynamicBucketAssigner]])
  * files      per (partition, bucket), in tasks: the rows sorted by key, written as Paimon's
  *            primary-key Parquet files (_KEY_*, _SEQUENCE_NUMBER, _VALUE_KIND +I, the columns)
  *            rolling at target-file-size (128 mb), sequence numbers from the bucket's last + 1;
  *            a bucket without files gets one sorted run at the last level (num-levels - 1, as a
  *            full compaction leaves it, visible to deletion-vector readers at once), a bucket
  *            with files gets level-0 files (as Paimon's writer; merged on read); statistics from
  *            the footers ([[StatsWriter]]), file indexes as the table's options ask
  * HASH       one index file per bucket written: its old hashes then the new ones in order of
  *            first appearance, in fastutil IntOpenHashSet order (Paimon's DynamicBucketIndexMaintainer)
  * commit     one APPEND: the data files and the HASH index files; a concurrent change of a HASH
  *            index of a loaded partition is a conflict
  * }}}
  */
object PaimonLoad {

  /** Loads `data` into the table at `path` (creating it with `primaryKeys`, `partitionKeys`,
    * `options` when it does not exist). */
  def load(spark: SparkSession, path: String, data: DataFrame, primaryKeys: Seq[String] = Nil, partitionKeys: Seq[String] = Nil,
      options: Seq[(String, String)] = Nil, hooks: CommitHooks = CommitHooks.None): WriteSummary = {
    val root = Paths.get(path)
    val schema = openOrCreate(root, data.schema, primaryKeys, partitionKeys, options)
    val schemaFile = root.resolve("schema").resolve(s"schema-${schema.id}").toString
    check(schema, schemaFile)
    val table = FileStoreTable.open(path)
    val coreOptions = CoreOptions(schema.options)
    val base = table.snapshot

    // the input, as the table's columns
    val target = StructType(schema.fields.map(f => StructField(f.name, Paimon.sparkType(f.dataType).toOption.get, f.dataType.nullable)))
    val present = data.schema.fieldNames.toSet
    val extra = data.schema.fieldNames.filterNot(schema.fieldNames.contains)
    if (extra.nonEmpty) throw new IllegalArgumentException(s"columns ${extra.mkString(", ")} are not in the table (${schema.fieldNames.mkString(", ")})")
    schema.fields.filter(f => !present.contains(f.name) && !f.dataType.nullable).foreach { f =>
      throw new IllegalArgumentException(s"column '${f.name}' (NOT NULL) is missing from the data")
    }
    val aligned = data.select(target.fields.toIndexedSeq.map { f =>
      if (present.contains(f.name)) col(quote(f.name)).cast(f.dataType).as(f.name) else lit(null).cast(f.dataType).as(f.name)
    }: _*)
    val keys = schema.trimmedPrimaryKeys
    val keyTypes = keys.map(k => schema.keyTypeOf(k).get)
    val partTypes = schema.partitionKeys.map(k => schema.keyTypeOf(k).get)
    val rows = aligned
      .withColumn("_ib_ord", monotonically_increasing_id())
      .withColumn("_ib_part", PaimonWriteExpressions.binaryRow(schema.partitionKeys.map(k => col(quote(k))), partTypes))
      .withColumn("_ib_hash", PaimonWriteExpressions.keyHash(keys.map(k => col(quote(k))), keyTypes))
    // when each key hash first appears (its order for the assigner); the last row of a key wins
    // later, in the write tasks (rows sorted by key, then newest first)
    val hashes = rows.select(col("_ib_part"), col("_ib_hash"), col("_ib_ord"))
    val firsts = hashes.repartition(cachedShufflePartitions(spark, hashes), col("_ib_part"), col("_ib_hash"))
      .groupBy(col("_ib_part"), col("_ib_hash")).agg(min(col("_ib_ord")).as("_ib_first")).persist()
    try loadRows(spark, table, schema, coreOptions, base, rows, firsts, keys, hooks)
    finally firsts.unpersist()
  }

  /** The partitions of a shuffle of `df` whose result is cached: as many as AQE would coalesce it
    * to (the plan's estimated size over spark.sql.adaptive.advisoryPartitionSizeInBytes, at most
    * spark.sql.shuffle.partitions). AQE does not coalesce a cached plan's shuffle
    * (spark.sql.optimizer.canChangeCachedPlanOutputPartitioning is off): by default a 60-row load
    * ran 200-task stages. */
  private def cachedShufflePartitions(spark: SparkSession, df: DataFrame): Int = {
    val conf = spark.sessionState.conf
    val estimate = df.queryExecution.optimizedPlan.stats.sizeInBytes / conf.getConf(SQLConf.ADVISORY_PARTITION_SIZE_IN_BYTES) + 1
    estimate.min(BigInt(conf.numShufflePartitions)).toInt
  }

  private def loadRows(spark: SparkSession, table: FileStoreTable, schema: TableSchema, coreOptions: CoreOptions,
      base: Option[Snapshot], rows: DataFrame, firsts: DataFrame, keys: Seq[String], hooks: CommitHooks): WriteSummary = {
    import spark.implicits._
    val path = table.path.toString
    val partTypes = schema.partitionKeys.map(k => schema.keyTypeOf(k).get)
    val live = base.fold(Seq.empty[ManifestEntry])(TableCommit.liveEntries(table.path, _))
    val hashEntries = TableCommit.indexEntries(table.path, base).filter(_.indexType == HashIndex.IndexType)
    val partitions = firsts.select(col("_ib_part")).distinct().as[Array[Byte]].collect().map(ByteBuffer.wrap).toSet
    if (partitions.isEmpty) return WriteSummary(path, None, None, Seq("rows" -> 0L))

    // the hashes the partitions' HASH indexes hold, read in tasks
    val known = hashEntries.filter(e => partitions.contains(ByteBuffer.wrap(e.partition)))
    val knownFiles = known.map(e => (e.partition, e.bucket, table.paths.indexFile(table.partition(e.partition, "index manifest"), e.bucket, e).toString))
    val existing = spark.sparkContext.parallelize(knownFiles, math.max(1, math.min(knownFiles.size, spark.sparkContext.defaultParallelism * 2)))
      .flatMap { case (part, bucket, file) =>
        val bytes = try Files.readAllBytes(Paths.get(file)) catch { case _: java.nio.file.NoSuchFileException =>
          throw new IndexFormatException(file, 0, "the HASH index file to exist (the index manifest lists it)") }
        HashIndex.decode(bytes, file).iterator.map(h => (part, h, bucket))
      }.toDF("_ib_part", "_ib_hash", "_ib_bucket")

    // new hashes, ranked per partition in order of first appearance, assigned as HashBucketAssigner does
    val target = schema.options.get("dynamic-bucket.target-row-num").fold(2000000L)(_.trim.toLong)
    val maxBuckets = schema.options.get("dynamic-bucket.max-buckets").fold(-1)(_.trim.toInt)
    val assigners = partitions.map { p =>
      hex(p.array()) -> DynamicBucketAssigner(known.filter(e => ByteBuffer.wrap(e.partition) == p).map(e => e.bucket -> e.rowCount), target, maxBuckets)
    }.toMap
    val fresh = (if (known.isEmpty) firsts else firsts.join(existing.select(col("_ib_part"), col("_ib_hash")), Seq("_ib_part", "_ib_hash"), "left_anti"))
      .orderBy(col("_ib_part"), col("_ib_first"))
    val ranked = fresh.rdd.map(r => (r.getAs[Array[Byte]](0), r.getInt(1), r.getLong(2))).zipWithIndex()
      .persist(org.apache.spark.storage.StorageLevel.MEMORY_AND_DISK)
    // where each partition's ranks start (the smallest global index; per task, then on the driver:
    // no shuffle of primitive pairs, which Spark would hand to Kryo)
    val starts = ranked.mapPartitions { it =>
      val first = mutable.HashMap.empty[String, (Long, Long)]
      it.foreach { case ((p, _, _), i) =>
        val k = hex(p)
        val (start, n) = first.getOrElse(k, (i, 0L))
        first(k) = (math.min(start, i), n + 1)
      }
      first.iterator
    }.collect().groupBy(_._1).map { case (k, vs) => k -> (vs.map(_._2._1).min, vs.map(_._2._2).sum) }
    val offsets = starts.map { case (k, (start, _)) => k -> start }
    val assigned = ranked.map { case ((p, h, first), i) =>
      val key = hex(p)
      (p, h, assigners(key).bucket(i - offsets(key), h), first)
    }.toDF("_ib_part", "_ib_hash", "_ib_bucket", "_ib_hash_first")
      .persist() // used by the bucket list and the join
    val buckets = assigned.unionByName(existing.withColumn("_ib_hash_first", lit(-1L)))

    // per (partition, bucket): files and HASH index written in tasks
    val numLevels = schema.options.get("num-levels").fold(schema.options.get("num-sorted-run.compaction-trigger").fold(5)(_.trim.toInt) + 1)(_.trim.toInt)
    val bucketFiles = live.groupBy(e => (ByteBuffer.wrap(e.partition), e.bucket))
    val bucketInfo: Map[(String, Int), (Boolean, Long)] = bucketFiles.map { case ((p, b), es) => (hex(p.array()), b) -> (true, es.map(_.file.maxSequenceNumber).max) }
    val oldHash = known.map(e => (hex(e.partition), e.bucket) -> knownFiles.find(f => f._1.sameElements(e.partition) && f._2 == e.bucket).get._3).toMap
    val commitId = UUID.randomUUID().toString
    val sparkTypes = schema.fields.map(f => Paimon.sparkType(f.dataType).toOption.get)
    val writeContext = WriteContext(path, schema, FileIndexRewrite.orderedOptions(table.path, schema.id), sparkTypes, numLevels - 1,
      coreOptions.bucket, targetFileSize(schema), bucketInfo, oldHash, commitId)
    val sortKeys = keys.map(k => col("_ib_row." + quote(k)))
    // the (partition, bucket) pairs written: those the new hashes fill (from their counts) and the known ones
    val pairs = (partitions.toSeq.flatMap { p =>
      val k = hex(p.array())
      assigners(k).bucketsFor(starts.get(k).fold(0L)(_._2)).map(b => (p.array(), b))
    } ++ known.map(e => (e.partition, e.bucket))).distinctBy { case (p, b) => (hex(p), b) }
    // the small side (a hash's bucket) hashed, the rows streamed past it
    val toWrite = rows.join(buckets.hint("shuffle_hash"), Seq("_ib_part", "_ib_hash"))
      .select(col("_ib_part"), col("_ib_bucket"), col("_ib_hash_first"), col("_ib_hash"), col("_ib_ord"),
        struct(schema.fieldNames.map(n => col(quote(n))): _*).as("_ib_row"))
    val sorted = toWrite.repartition(math.max(1, math.min(pairs.size, spark.sparkContext.defaultParallelism * 4)), col("_ib_part"), col("_ib_bucket"))
      .sortWithinPartitions((col("_ib_part") +: col("_ib_bucket") +: sortKeys :+ col("_ib_ord").desc): _*)
    try {
      val results = try sorted.queryExecution.toRdd.mapPartitions(rows => writeBuckets(writeContext, rows)).collect().toSeq
        finally { assigned.unpersist(); ranked.unpersist() }
      val changes = CommitChanges(CommitKind.Append,
        results.flatMap(r => r.files.map { case (meta, _, _) => ManifestEntry(Manifest.Add, r.partition, r.bucket, coreOptions.bucket, meta) }),
        results.flatMap(_.hash),
        results.flatMap(r => r.files.flatMap(f => Paths.get(f._3) +: f._2.map(Paths.get(_))) ++ r.hashFile.map(Paths.get(_))),
        partitions)
      val committed = new TableCommit(table.path, hooks = hooks).commit(base, changes)
      // deletion-vector readers skip level 0: the buckets that had data are compacted as Paimon's
      // writer compacts them (ForceUpLevel0Compaction), here fully, in a second (COMPACT) commit
      val touched = results.filter(r => bucketInfo.contains((hex(r.partition), r.bucket))).map(r => (r.partition, r.bucket))
      val compacted = if (!coreOptions.deletionVectorsEnabled || touched.isEmpty) None
        else Some(compactBuckets(spark, table.path, schema, touched, writeContext.copy(compaction = true), hooks))
      WriteSummary(path, Some(compacted.getOrElse(committed).snapshotId), Some(if (compacted.isDefined) CommitKind.Compact else CommitKind.Append), Seq(
        "rows" -> results.map(_.rows).sum,
        "compacted_buckets" -> compacted.fold(0L)(_ => touched.size.toLong),
        "data_files" -> results.map(_.files.size.toLong).sum,
        "buckets" -> results.size.toLong,
        "new_buckets" -> results.count(r => !bucketInfo.contains((hex(r.partition), r.bucket))).toLong,
        "partitions" -> partitions.size.toLong,
        "attempts" -> committed.attempts.toLong))
    } catch {
      case NonFatal(e) =>
        removeOutput(writeContext, pairs, table.paths, partTypes)
        throw e
    }
  }

  /** Rewrites every live file of `buckets` (all levels, deletion vectors applied, each key's
    * record with the highest sequence number kept, retractions dropped) into one sorted run at the
    * last level, and commits it as COMPACT: the old files and the buckets' deletion files removed. */
  private def compactBuckets(spark: SparkSession, tablePath: Path, schema: TableSchema, buckets: Seq[(Array[Byte], Int)],
      ctx: WriteContext, hooks: CommitHooks): CommitResult = {
    val table = FileStoreTable.open(tablePath.toString)
    val snapshot = table.snapshot.get
    val wanted = buckets.map { case (p, b) => (hex(p), b) }.toSet
    val entries = TableCommit.liveEntries(table.path, snapshot).filter(e => wanted((hex(e.partition), e.bucket)))
    val dvEntries = TableCommit.indexEntries(table.path, Some(snapshot))
      .filter(e => e.indexType == io.indexbridge.paimon.DeletionFile.IndexType && wanted((hex(e.partition), e.bucket)))
    val dvs = dvEntries.flatMap { e =>
      val file = table.paths.indexFile(table.partition(e.partition, "index manifest"), e.bucket, e).toString
      e.dvRanges.getOrElse(Nil).map(r => r.dataFile -> (file, r))
    }.toMap
    val keys = schema.trimmedPrimaryKeys
    val partTypes = schema.partitionKeys.map(k => schema.keyTypeOf(k).get)
    val system = Seq(StructField(PaimonParquet.SequenceNumber, LongType), StructField(PaimonParquet.ValueKind, ByteType))
    val frames = entries.groupBy(_.file.schemaId).toSeq.sortBy(_._1).map { case (id, es) =>
      val fileSchema = table.schemas.schema(id)
      val byId = fileSchema.fields.map(f => f.id -> f).toMap
      val physical = schema.fields.flatMap(f => byId.get(f.id))
      val read = spark.read.schema(StructType(physical.map(f => StructField(f.name, Paimon.sparkType(f.dataType).toOption.get)) ++ system))
        .parquet(es.map(e => table.paths.dataFile(table.partition(e.partition, "manifest"), e.bucket, e.file).toString): _*)
      val refs = es.flatMap(e => dvs.get(e.file.fileName).map { case (file, r) =>
        e.file.fileName -> org.apache.spark.sql.indexbridge.DeletionVectorRef(file, r.offset, r.length, r.cardinality, e.file.rowCount) }).toMap
      val live = if (refs.isEmpty) read else read.where(org.apache.spark.sql.indexbridge.PaimonRowLive.column(col("_metadata.file_name"), col("_metadata.row_index"), refs))
      val bucketOf = org.apache.spark.sql.functions.typedLit(es.map(e => e.file.fileName -> e.bucket).toMap)
      live.select(schema.fields.map { f =>
        val t = Paimon.sparkType(f.dataType).toOption.get
        byId.get(f.id) match {
          case Some(ff) if ff.dataType == f.dataType => col(quote(ff.name)).as(f.name)
          case Some(ff)                              => col(quote(ff.name)).cast(t).as(f.name)
          case None                                  => lit(null).cast(t).as(f.name)
        }
      } ++ Seq(col(PaimonParquet.SequenceNumber).as("_ib_seq"), col(PaimonParquet.ValueKind).as("_ib_kind"),
        org.apache.spark.sql.functions.element_at(bucketOf, col("_metadata.file_name")).as("_ib_bucket")): _*)
    }
    val all = frames.reduce(_ unionByName _)
    val candidates = if (CoreOptions(schema.options).ignoreDelete) all.where(!col("_ib_kind").isin(1, 3)) else all
    val merged = candidates
      .withColumn("_ib_part", PaimonWriteExpressions.binaryRow(schema.partitionKeys.map(k => col(quote(k))), partTypes))
      .groupBy((col("_ib_part") +: col("_ib_bucket") +: keys.map(k => col(quote(k)))): _*)
      .agg(max_by(struct((schema.fieldNames.map(n => col(quote(n))) :+ col("_ib_kind")): _*), col("_ib_seq")).as("_ib_win"),
        org.apache.spark.sql.functions.max(col("_ib_seq")).as("_ib_seq"))
      .where(col("_ib_win._ib_kind").isin(0, 2)) // +I, +U (DropDeleteReader)
      .select(col("_ib_part"), col("_ib_bucket"), col("_ib_seq"), lit(0).as("_ib_hash"), lit(0L).as("_ib_ord"),
        struct(schema.fieldNames.map(n => col("_ib_win." + quote(n)).as(n)): _*).as("_ib_row"))
    val sorted = merged.repartition(math.max(1, math.min(buckets.size, spark.sparkContext.defaultParallelism * 4)), col("_ib_part"), col("_ib_bucket"))
      .sortWithinPartitions((col("_ib_part") +: col("_ib_bucket") +: keys.map(k => col("_ib_row." + quote(k)))): _*)
    val compactCtx = ctx.copy(buckets = Map.empty)
    val results = try sorted.queryExecution.toRdd.mapPartitions(rows => writeBuckets(compactCtx, rows)).collect().toSeq
      catch { case NonFatal(e) => removeOutput(compactCtx, buckets, table.paths, partTypes); throw e }
    val totalBuckets = CoreOptions(schema.options).bucket
    val changes = CommitChanges(CommitKind.Compact,
      entries.map(_.copy(kind = Manifest.Delete)) ++
        results.flatMap(r => r.files.map { case (meta, _, _) => ManifestEntry(Manifest.Add, r.partition, r.bucket, totalBuckets, meta) }),
      dvEntries.map(_.copy(kind = Manifest.Delete)),
      results.flatMap(_.files.flatMap(f => Paths.get(f._3) +: f._2.map(Paths.get(_)))))
    new TableCommit(table.path, hooks = hooks).commit(Some(snapshot), changes)
  }

  /** What the write tasks need (serializable). */
  private final case class WriteContext(tablePath: String, schema: TableSchema, options: Seq[(String, String)], sparkTypes: Seq[DataType],
      maxLevel: Int, totalBuckets: Int, targetFileSize: Long, buckets: Map[(String, Int), (Boolean, Long)],
      oldHash: Map[(String, Int), String], commitId: String, compaction: Boolean = false) {
    def uuid(kind: String, partition: Array[Byte], bucket: Int): String =
      UUID.nameUUIDFromBytes(s"$commitId/$kind/${java.util.HexFormat.of().formatHex(partition)}/$bucket".getBytes(StandardCharsets.UTF_8)).toString
  }

  /** One bucket's output: its data files (meta, extra files written, data file path), its HASH
    * index entry and file, and the rows written. */
  private final case class BucketResult(partition: Array[Byte], bucket: Int, files: Seq[(DataFileMeta, Seq[String], String)],
      hash: Option[IndexManifestEntry], hashFile: Option[String], rows: Long)

  private def targetFileSize(schema: TableSchema): Long =
    schema.options.get("target-file-size").fold(128L << 20)(io.indexbridge.paimon.fileindex.BitmapIndex.memorySize)

  /** Writes the buckets of one task's sorted rows (`_ib_part`, `_ib_bucket`, `_ib_hash_first`,
    * `_ib_hash`, `_ib_row`). */
  private def writeBuckets(ctx: WriteContext, rows: Iterator[InternalRow]): Iterator[BucketResult] = {
    val schema = ctx.schema
    val n = schema.fields.size
    val paths = new FileStorePaths(Paths.get(ctx.tablePath), schema, CoreOptions(schema.options))
    val partTypes = schema.partitionKeys.map(k => schema.keyTypeOf(k).get)
    val out = mutable.ArrayBuffer.empty[BucketResult]
    var current: BucketWriter = null
    while (rows.hasNext) {
      val r = rows.next()
      val part = r.getBinary(0)
      val bucket = r.getInt(1)
      if (current == null || current.bucket != bucket || !java.util.Arrays.equals(current.partition, part)) {
        if (current != null) out += current.finish()
        current = new BucketWriter(ctx, part.clone(), bucket, paths, partTypes)
      }
      current.write(r.getStruct(5, n), r.getInt(3), r.getLong(2))
    }
    if (current != null) out += current.finish()
    TaskFaults.failFirstAttempt(if (ctx.compaction) "load-compaction" else "load")
    out.iterator
  }

  /** The files of one (partition, bucket), rolling at the target size, and its HASH index. */
  private final class BucketWriter(ctx: WriteContext, val partition: Array[Byte], val bucket: Int, paths: FileStorePaths, partTypes: Seq[KeyType]) {
    private val schema = ctx.schema
    private val key = (hex(partition), bucket)
    private val (hadFiles, maxSeq) = ctx.buckets.getOrElse(key, (false, -1L))
    private val level = if (hadFiles && !ctx.compaction) 0 else ctx.maxLevel
    private var sequence = maxSeq + 1
    private val values = BinaryRow.deserialize(partition, partTypes, "partition")
    private val dir = paths.bucketPath(values, bucket)
    private val uuid = ctx.uuid(if (ctx.compaction) "compact" else "data", partition, bucket)
    private val keyIndexes = schema.trimmedPrimaryKeys.map(schema.fieldNames.indexOf)
    private val keyTypes = schema.trimmedPrimaryKeys.map(k => schema.keyTypeOf(k).get)
    private val fields = PaimonParquet.keyValueFields(schema)
    private val (indexFields, indexColumns) = FileIndexRewrite.writeInputs(ctx.options, schema)
    private val indexPositions = indexColumns.map(c => schema.fieldNames.indexOf(c._1))
    private val threshold = ctx.options.reverse.collectFirst { case ("file-index.in-manifest-threshold", v) =>
      io.indexbridge.paimon.fileindex.BitmapIndex.memorySize(v) }.getOrElse(FileIndexContainer.DefaultInManifestThreshold)
    private val newHashes = mutable.LinkedHashMap.empty[Int, Long]
    private val files = mutable.ArrayBuffer.empty[(DataFileMeta, Seq[String], String)]
    private var rows = 0L

    private var writer: PaimonParquet.KeyValueFileWriter = _
    private var file: Path = _
    private var fileRows, minSeq, maxSeqOfFile = 0L
    private var minKey: Array[Byte] = _
    private var lastRow: InternalRow = _
    private var index: FileIndexRewrite.Builder = _

    private def sameKey(a: InternalRow, b: InternalRow): Boolean = keyIndexes.forall { i =>
      val t = ctx.sparkTypes(i)
      (a.get(i, t), b.get(i, t)) match {
        case (x: Array[Byte], y: Array[Byte]) => java.util.Arrays.equals(x, y)
        case (x, y)                           => x == y
      }
    }

    private def keyOf(row: InternalRow): Array[Byte] =
      ManifestFiles.serialize(keyIndexes.zip(keyTypes).map { case (i, t) =>
        PaimonWriteExpressions.internal(ctx.sparkTypes(i), t, if (row.isNullAt(i)) null else row.get(i, ctx.sparkTypes(i)))
      }, keyTypes)

    /** A row of the bucket, in key order; `first` is when its hash first appeared in the input (-1:
      * a known hash), or in a compaction the row's own sequence number. */
    def write(row: InternalRow, hash: Int, first: Long): Unit = {
      keyIndexes.foreach(i => if (row.isNullAt(i)) throw new IllegalArgumentException(s"a row with a null primary key column '${schema.fieldNames(i)}'"))
      if (lastRow != null && sameKey(lastRow, row)) return // an older row of the key just written
      if (!ctx.compaction && first >= 0 && !newHashes.contains(hash)) newHashes(hash) = first
      val seq = if (ctx.compaction) first else sequence
      if (writer == null) open(row, seq)
      minSeq = math.min(minSeq, seq)
      maxSeqOfFile = math.max(maxSeqOfFile, seq)
      writer.write(PaimonParquet.KeyValueRecord(row, seq, 0))
      if (index != null) index.write(indexPositions.map(i => if (row.isNullAt(i)) null else SparkFileIndexTypes.value(ctx.sparkTypes(i), row.get(i, ctx.sparkTypes(i)))).toIndexedSeq)
      lastRow = row.copy()
      sequence += 1
      fileRows += 1
      rows += 1
      if (fileRows % 1000 == 0 && writer.dataSize >= ctx.targetFileSize) close()
    }

    private def open(row: InternalRow, seq: Long): Unit = {
      file = dir.resolve(s"data-$uuid-${files.size}.parquet")
      writer = new PaimonParquet.KeyValueFileWriter(file, schema, ctx.sparkTypes)
      fileRows = 0
      minSeq = seq
      maxSeqOfFile = seq
      minKey = keyOf(row)
      index = if (indexFields.isEmpty) null else new FileIndexRewrite.Builder(ctx.options.filter(_._1.startsWith("file-index.")), indexFields, indexColumns.map(_._1))
    }

    private def close(): Unit = {
      val (footer, size) = writer.close()
      writer = null
      val stats = PaimonParquet.statistics(footer, fields)
      val modes = StatsWriter.modes(fields.map(_.name), schema.options, level)
      val converted = stats.zip(modes).map { case (s, m) => StatsWriter.convert(s, m) }
      val nKeys = keyTypes.size
      val keyStats = StatsWriter.allMode(converted.take(nKeys), keyTypes)
      val valueFields = schema.fields
      val dense = !schema.options.get("metadata.stats-dense-store").exists(_.trim.equalsIgnoreCase("false"))
      val (valueStats, cols) = StatsWriter.denseMode(valueFields.map(_.name), converted.drop(nKeys + 2),
        valueFields.map(f => schema.keyTypeOf(f.name)), dense)
      val (embedded, extras) = Option(index).map(i => FileIndexContainer.write(i.maintainers)) match {
        case Some(bytes) if bytes.length > threshold =>
          val indexFile = file.resolveSibling(file.getFileName.toString + ".index")
          io.indexbridge.Storage.writeAtomically(indexFile, bytes)
          (None, Seq(indexFile.toString))
        case Some(bytes) => (Some(bytes), Nil)
        case None        => (None, Nil)
      }
      val now = LocalDateTime.now().toInstant(ZoneOffset.UTC).toEpochMilli // Paimon's local wall clock as millis
      val meta = DataFileMeta(file.getFileName.toString, size, fileRows, minKey, keyOf(lastRow), keyStats, valueStats, minSeq, maxSeqOfFile,
        schema.id, level, extras.map(p => Paths.get(p).getFileName.toString), Some(0L), embedded, Some(0), cols, None, None, None, Some(now))
      files += ((meta, extras, file.toString))
    }

    def finish(): BucketResult = {
      if (writer != null) close()
      // Paimon's DynamicBucketIndexMaintainer writes a bucket's index only when it gained hashes
      if (ctx.compaction || (newHashes.isEmpty && ctx.oldHash.contains(key))) return BucketResult(partition, bucket, files.toList, None, None, rows)
      val old = ctx.oldHash.get(key).map(p => HashIndex.decode(Files.readAllBytes(Paths.get(p)), p)).getOrElse(Array.emptyIntArray)
      val added = newHashes.toSeq.sortBy(_._2).map(_._1).toArray
      val ordered = if (ctx.oldHash.contains(key)) HashIndex.paimonOrder(old ++ added, old.length) else HashIndex.paimonOrder(added)
      val bytes = HashIndex.encode(ordered)
      val name = s"index-${ctx.uuid("hash", partition, bucket)}-0"
      val indexDir = if (CoreOptions(schema.options).indexFileInDataFileDir) dir else Paths.get(ctx.tablePath).resolve("index")
      val hashPath = indexDir.resolve(name)
      io.indexbridge.Storage.writeAtomically(hashPath, bytes)
      BucketResult(partition, bucket, files.toList,
        Some(IndexManifestEntry(Manifest.Add, partition, bucket, HashIndex.IndexType, name, bytes.length.toLong, ordered.length.toLong, None, None)),
        Some(hashPath.toString), rows)
    }
  }

  /** Removes what the tasks of a failed load wrote for the (partition, bucket) pairs it loads:
    * files named after them (data files, their .index files, HASH index files), unless the
    * latest snapshot references them. */
  private def removeOutput(ctx: WriteContext, pairs: Seq[(Array[Byte], Int)], paths: FileStorePaths, partTypes: Seq[KeyType]): Unit = {
    val found = pairs.flatMap { case (part, bucket) =>
      val dir = paths.bucketPath(BinaryRow.deserialize(part, partTypes, "partition"), bucket)
      val prefix = s"data-${ctx.uuid(if (ctx.compaction) "compact" else "data", part, bucket)}-"
      val data = if (!Files.isDirectory(dir)) Nil else {
        val stream = Files.list(dir)
        try { val it = stream.iterator(); val out = mutable.ArrayBuffer.empty[Path]; while (it.hasNext) { val p = it.next(); if (p.getFileName.toString.startsWith(prefix)) out += p }; out.toList }
        finally stream.close()
      }
      val hashName = s"index-${ctx.uuid("hash", part, bucket)}-0"
      data ++ Seq(dir.resolve(hashName), Paths.get(ctx.tablePath).resolve("index").resolve(hashName))
    }
    TableCommit.removeUnreferenced(Paths.get(ctx.tablePath), found)
  }

  // ------------------------------------------------------------------------------------------
  // Creating and checking the table

  private def hex(bytes: Array[Byte]): String = java.util.HexFormat.of().formatHex(bytes)

  private def quote(name: String): String = "`" + name.replace("`", "``") + "`"

  /** A Spark type as Paimon's Spark connector maps it (`SparkTypeUtils.toPaimonType`). */
  def paimonType(t: DataType, nullable: Boolean): PaimonType = t match {
    case BooleanType       => PaimonType.Atomic(KeyType.BooleanType, nullable)
    case ByteType          => PaimonType.Atomic(KeyType.TinyIntType, nullable)
    case ShortType         => PaimonType.Atomic(KeyType.SmallIntType, nullable)
    case IntegerType       => PaimonType.Atomic(KeyType.IntType, nullable)
    case LongType          => PaimonType.Atomic(KeyType.BigIntType, nullable)
    case FloatType         => PaimonType.Atomic(KeyType.FloatType, nullable)
    case DoubleType        => PaimonType.Atomic(KeyType.DoubleType, nullable)
    case d: DecimalType    => PaimonType.Atomic(KeyType.DecimalType(d.precision, d.scale), nullable)
    case _: StringType | _: CharType | _: VarcharType => PaimonType.Atomic(KeyType.VarCharType(Int.MaxValue), nullable)
    case BinaryType        => PaimonType.Atomic(KeyType.VarBinaryType(Int.MaxValue), nullable)
    case DateType          => PaimonType.Atomic(KeyType.DateType, nullable)
    case TimestampType     => PaimonType.Atomic(KeyType.LocalZonedTimestampType(6), nullable)
    case TimestampNTZType  => PaimonType.Atomic(KeyType.TimestampType(6), nullable)
    case ArrayType(e, n)   => PaimonType.Array(paimonType(e, n), nullable)
    case MapType(k, v, n)  => PaimonType.Map(paimonType(k, nullable = false), paimonType(v, n), nullable)
    case StructType(fs)    => PaimonType.Row(fs.toSeq.map(f => PaimonField(0, f.name, paimonType(f.dataType, f.nullable))), nullable)
    case other             => throw new IllegalArgumentException(s"no Paimon type for Spark type ${other.simpleString}")
  }

  private def openOrCreate(root: Path, input: StructType, primaryKeys: Seq[String], partitionKeys: Seq[String],
      options: Seq[(String, String)]): TableSchema = {
    val schemas = new SchemaManager(root)
    schemas.latest match {
      case Some(s) =>
        if (primaryKeys.nonEmpty && primaryKeys != s.primaryKeys)
          throw new IllegalArgumentException(s"$root: the table's primary key is ${s.primaryKeys.mkString(", ")}, not ${primaryKeys.mkString(", ")}")
        if (partitionKeys.nonEmpty && partitionKeys != s.partitionKeys)
          throw new IllegalArgumentException(s"$root: the table is partitioned by ${s.partitionKeys.mkString(", ")}, not ${partitionKeys.mkString(", ")}")
        options.find { case (k, v) => !s.options.get(k).contains(v) }.foreach { case (k, v) =>
          throw new IllegalArgumentException(s"$root: option $k = $v differs from the table's (${s.options.getOrElse(k, "unset")}); load does not change options")
        }
        s
      case None =>
        if (primaryKeys.isEmpty)
          throw new IllegalArgumentException(s"$root is not a Paimon table yet: creating it needs the primary key " +
            "(--primary-key a,b), and optionally partition keys (--partition-by dt) and options (--option k=v)")
        val names = input.fieldNames.toSeq
        (primaryKeys ++ partitionKeys).filterNot(names.contains).foreach { k =>
          throw new IllegalArgumentException(s"key column '$k' is not a column of the data (${names.mkString(", ")})")
        }
        val bucket = options.find(_._1 == "bucket").map(_._2.trim)
        if (bucket.exists(_ != "-1")) throw new IllegalArgumentException(s"bucket = ${bucket.get}: load creates dynamic-bucket tables (bucket = -1)")
        val withBucket = if (bucket.isEmpty) options :+ ("bucket" -> "-1") else options
        val schema = SchemaWriter.newSchema(input.fields.toSeq.map(f => f.name -> paimonType(f.dataType, f.nullable)), partitionKeys, primaryKeys, withBucket)
        SchemaWriter.create(root, schema)
        schemas.latest.get // ours, or the one a concurrent creator wrote first
    }
  }

  /** Refuses what this load does not write as Paimon would. */
  private def check(schema: TableSchema, source: String): Unit = {
    def refuse(why: String): Nothing = throw new IndexFormatException(source, 0, why)
    val options = CoreOptions(schema.options)
    if (schema.primaryKeys.isEmpty) refuse("a primary-key table (load writes dynamic-bucket primary-key tables)")
    if (options.bucket != -1) refuse(s"a dynamic-bucket table (bucket = -1), found bucket = ${options.bucket}")
    schema.partitionKeys.filterNot(schema.primaryKeys.contains).headOption.foreach { k =>
      refuse(s"partition keys within the primary key (partition key '$k' is not in it: cross-partition updates are not supported)")
    }
    if (options.mergeEngine != "deduplicate") refuse(s"the deduplicate merge engine (merge-engine = ${options.mergeEngine}: last-row-wins is deduplicate's)")
    if (options.sequenceFields.nonEmpty) refuse("no sequence.field (the last row of the input wins; ordering by a sequence field is not supported)")
    schema.options.get("changelog-producer").filterNot(_.trim.equalsIgnoreCase("none")).foreach(p => refuse(s"changelog-producer = none (found $p)"))
    if (schema.options.get("data-file.thin-mode").exists(_.trim.equalsIgnoreCase("true"))) refuse("data-file.thin-mode = false")
    if (!schema.options.getOrElse("file.format", "parquet").equalsIgnoreCase("parquet")) refuse("file.format = parquet")
    if (schema.options.contains("data-file.external-paths")) refuse("no data-file.external-paths")
    for (f <- schema.fields; why <- Paimon.sparkType(f.dataType).left.toOption) refuse(s"columns Spark can hold exactly: '${f.name}' is $why")
    for (k <- schema.primaryKeys if schema.keyTypeOf(k).isEmpty) refuse(s"an atomic type for primary-key column '$k'")
  }
}
