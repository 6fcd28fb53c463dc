package io.indexbridge.spark

import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._
import scala.util.chaining._

import io.indexbridge.Depth
import io.indexbridge.paimon.table.{CommitHooks, FileStoreTable, Manifest, ManifestEntry, ReferenceTables, TableCommit}
import io.indexbridge.paimon.table.PaimonWriteFixtures._
import io.indexbridge.reference.PaimonTables
import org.apache.paimon.schema.{SchemaChange, SchemaManager}
import org.apache.paimon.fs.{Path => PaimonPath}
import org.apache.paimon.fs.local.LocalFileIO
import scala.collection.mutable

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.types._
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/** The write jobs against Paimon 1.4.2 on tables its own Java API made: what Paimon's procedures
  * would write, what its reader then reads and prunes, and that Paimon goes on writing, compacting
  * and reading after our commits; task failures (retried by Spark), failures between writing and
  * committing, and concurrent Paimon commits leave the table consistent. */
class PaimonWriteSpec extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark = SparkSession.builder().master("local[2,3]").appName("PaimonWriteSpec")
    .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
    .config("spark.sql.session.timeZone", "UTC")
    .config("spark.sql.extensions", classOf[IndexBridgeExtensions].getName) // a spec reusing this session finds the ib_ functions
    .getOrCreate().tap(_.sparkContext.setLogLevel("ERROR"))

  override def afterAll(): Unit = spark.stop()

  private def setOptions(path: String, options: Seq[(String, String)]): Unit =
    new SchemaManager(LocalFileIO.create(), new PaimonPath(path)).commitChanges(options.map { case (k, v) => SchemaChange.setOption(k, v) }.asJava)

  private def liveEntries(path: String): Seq[ManifestEntry] = {
    val table = FileStoreTable.open(path)
    val s = table.snapshot.get
    val dir = Paths.get(path, "manifest")
    Manifest.mergeEntries(Seq(s.baseManifestList, s.deltaManifestList).flatMap(n => Manifest.readManifestList(dir.resolve(n)))
      .flatMap(m => Manifest.readManifest(dir.resolve(m.fileName))), "live")
  }

  /** Per data file: its embedded index, and its .index files with their bytes. */
  private def indexes(path: String): Map[String, (Option[Seq[Byte]], Seq[(String, Seq[Byte])])] = {
    val table = FileStoreTable.open(path)
    liveEntries(path).map { e =>
      val part = table.partition(e.partition, "live")
      e.file.fileName -> (e.file.embeddedIndex.map(_.toSeq), e.file.extraFiles.filter(_.endsWith(".index")).map { n =>
        n -> Files.readAllBytes(table.paths.extraFile(part, e.bucket, e.file, n)).toSeq
      })
    }.toMap
  }

  private def fileIndexOptions(o: Map[String, String]) = o.filter(_._1.startsWith("file-index."))

  /** A Parquet table of `kind` written without file indexes, and the file-index options its recipe had. */
  private def unindexed(kind: String, seed: Long): Option[(String, Seq[(String, String)])] = {
    val recipe = PaimonTables.recipe(kind, seed, 200, 4)
    if (recipe.options.get("file.format").contains("orc")) None
    else {
      val wanted = fileIndexOptions(recipe.options).toSeq.sorted
      val indexed = if (wanted.exists(_._1.endsWith(".columns"))) wanted else Seq("file-index.bloom-filter.columns" -> "id")
      Some(table(kind, seed, _.filterNot(_._1.startsWith("file-index."))) -> indexed)
    }
  }

  private def compareReads(ours: String, theirs: String, seed: Long): Int = {
    val conditions = io.indexbridge.paimon.table.PaimonWriteFixtures.conditions(theirs, seed, 8)
    for (where <- None +: conditions.map(Some(_))) withClue(s"where $where: ") {
      val (a, b) = (answer(ours, where), answer(theirs, where))
      assert(a.get("row_count") == b.get("row_count"))
      assert(a.get("rows") == b.get("rows"))
      assert(a.get("files_read") == b.get("files_read"))
      assert(a.get("index_results") == b.get("index_results"))
    }
    conditions.size
  }

  test("rewrite file indexes: the containers Paimon's rewrite_file_index writes; Paimon prunes with them as with its own") {
    var compared = 0
    for ((kind, seed) <- Depth.pick(Seq("append" -> 41L, "append" -> 42L, "append" -> 43L, "pk" -> 44L, "dynamic" -> 45L, "pk-dv" -> 46L), 2, "rewrite");
         (base, options) <- unindexed(kind, seed)) withClue(s"$kind seed $seed $options: ") {
      val (theirs, ours) = (copy(base), copy(base))
      Seq(theirs, ours).foreach(setOptions(_, options))
      paimonRewriteFileIndex(theirs)
      val summary = PaimonWrite.rewriteFileIndexes(spark, ours)
      assert(summary.commitKind.contains("COMPACT") && summary.snapshotId.contains(latest(ours)))
      assert(indexes(ours) == indexes(theirs))
      assert(paimon(ours).snapshotManager().latestSnapshot().commitKind() == paimon(theirs).snapshotManager().latestSnapshot().commitKind())
      compared += compareReads(ours, theirs, seed)
      // Paimon goes on writing, compacting and reading
      val before = rows(ours).size
      paimonWrite(ours, newRows(ours, seed, 5))
      paimonCompact(ours)
      assert(rows(ours).size >= before)
    }
    info(s"$compared conditions read and pruned alike")
  }

  test("rewrite file indexes again: -1.index files merged over the old ones, as Paimon does; option overrides") {
    for ((kind, seed) <- Seq("append" -> 51L, "pk" -> 52L); (base, options) <- unindexed(kind, seed)) withClue(s"$kind seed $seed: ") {
      val (theirs, ours) = (copy(base), copy(base))
      val toFiles = options :+ ("file-index.in-manifest-threshold" -> "1")
      Seq(theirs, ours).foreach(setOptions(_, toFiles))
      paimonRewriteFileIndex(theirs)
      PaimonWrite.rewriteFileIndexes(spark, ours)
      assert(indexes(ours) == indexes(theirs))
      // a second rewrite with one more index (a dynamic option in Paimon, an override here)
      val blooms = options.find(_._1 == "file-index.bloom-filter.columns").fold(Seq.empty[String])(_._2.split(",").toSeq)
      val extra = Seq("file-index.bloom-filter.columns" -> (blooms :+ "id").distinct.mkString(","), "file-index.bloom-filter.id.fpp" -> "0.2")
      paimonRewriteFileIndex(theirs, extra.toMap)
      PaimonWrite.rewriteFileIndexes(spark, ours, extra)
      val (a, b) = (indexes(ours), indexes(theirs))
      assert(a == b)
      assert(a.values.forall(_._2.forall(_._1.endsWith("-1.index"))))
      compareReads(ours, theirs, seed)
    }
  }

  test("rewrite file indexes: a task failing once is retried with the same files; a failure before the commit leaves nothing") {
    val (base, options) = unindexed("append", 61).get
    setOptions(base, options :+ ("file-index.in-manifest-threshold" -> "1"))
    val (retried, failed) = (copy(base), copy(base))
    spark.sparkContext.setLocalProperty("indexbridge.test.failTask", "rewrite-file-index")
    try PaimonWrite.rewriteFileIndexes(spark, retried)
    finally spark.sparkContext.setLocalProperty("indexbridge.test.failTask", null)
    val expected = liveEntries(retried).flatMap(e => e.file.extraFiles).toSet
    val indexFiles = files(retried).filter(_.endsWith(".index")).map(f => Paths.get(f).getFileName.toString)
    assert(indexFiles == expected) // no extra or temporary files
    assert(!files(retried).exists(_.contains(".tmp")))
    // a failure between writing the index files and committing: nothing of the job stays
    val before = (files(failed), rows(failed), latest(failed))
    val hooks = new CommitHooks {
      override def beforePublish(snapshotId: Long, attempt: Int): Unit = throw new IllegalStateException("injected")
    }
    intercept[IllegalStateException](PaimonWrite.rewriteFileIndexes(spark, failed, hooks = hooks))
    assert((files(failed), rows(failed), latest(failed)) == before)
  }

  // ------------------------------------------------------------------------------------------
  // delete

  /** An append table with deletion vectors (unaware or fixed buckets, 32- or 64-bit vectors). */
  private def appendDv(seed: Long, extra: Map[String, String] = Map.empty): String =
    table("append", seed, _ ++ Map("deletion-vectors.enabled" -> "true", "deletion-vectors.bitmap64" -> (seed % 2 == 0).toString) ++ extra)

  /** The day's `n` of `seeds` whose append recipe our writer takes (not ORC): drawn after the
    * filter, so that a day never draws only seeds that are then skipped. */
  private def appendDvSeeds(seeds: Seq[Long], n: Int, key: String): Seq[Long] =
    Depth.pick(seeds.filterNot(s => PaimonTables.recipe("append", s, 200, 4).options.get("file.format").contains("orc")), n, key)

  /** Conditions the Spark reader can evaluate on the table (no TIMESTAMP(7..9) column). */
  private def deletable(path: String, seed: Long, n: Int): Seq[String] = {
    val refused = FileStoreTable.open(path).schema.fields.filter(f => Paimon.sparkType(f.dataType).isLeft).map(_.name)
    io.indexbridge.paimon.table.PaimonWriteFixtures.conditions(path, seed, n * 2).filterNot(w => refused.exists(c => w.contains(s"`$c`"))).take(n)
  }

  private def multisetMinus(a: Seq[String], b: Seq[String]): Seq[String] = a.diff(b).sorted

  private def checkDeletionVectors(path: String): Unit = {
    val table = FileStoreTable.open(path)
    val entries = TableCommit.indexEntries(table.path, table.snapshot).filter(_.indexType == "DELETION_VECTORS")
    if (table.options.bucket == -1) assert(entries.forall(_.bucket == 0))
    else assert(entries.groupBy(e => (e.partition.toSeq, e.bucket)).values.forall(_.size == 1))
    val dataFiles = entries.flatMap(_.dvRanges.get.map(_.dataFile))
    assert(dataFiles.distinct.size == dataFiles.size) // at most one vector per data file
    FileStoreTable.open(path).plan(None).files.foreach(f => f.deletionFile.foreach(d => d.load(f.name, f.meta.rowCount)))
  }

  test("delete by condition: Paimon no longer reads the rows; vectors merge over repeated deletes; Paimon compacts and reads after") {
    var deletes, deleted = 0
    for (seed <- appendDvSeeds(Seq(71L, 72L, 73L, 74L, 75L), 2, "delete"); path = appendDv(seed)) withClue(s"append-dv seed $seed: ") {
      for ((where, i) <- deletable(path, seed, 3).zipWithIndex) withClue(s"delete where $where: ") {
        val before = rows(path)
        val gone = rows(path, Some(where))
        val summary = PaimonWrite.delete(spark, path, where)
        assert(summary.count("deleted_rows") == gone.size)
        deleted += gone.size
        if (gone.nonEmpty) {
          assert(summary.commitKind.contains("OVERWRITE"))
          assert(paimon(path).snapshotManager().latestSnapshot().commitKind().toString == "OVERWRITE")
        }
        assert(rows(path) == multisetMinus(before, gone))
        checkDeletionVectors(path)
        deletes += 1
        if (i == 1) { // Paimon writes in between
          paimonWrite(path, newRows(path, seed + i, 4))
        }
      }
      val expected = rows(path)
      paimonCompact(path)
      assert(rows(path) == expected)
      paimonWrite(path, newRows(path, seed, 3))
      assert(rows(path).size == expected.size + 3)
    }
    info(s"$deletes deletes of $deleted rows compared with Paimon's reader")
  }

  test("delete: deletion files roll at the target size; a task failing once is retried; a failure before the commit leaves nothing") {
    val path = appendDv(76, Map("deletion-vector.index-file.target-size" -> "40 b"))
    val where = "id % 3 = 0"
    val before = rows(path)
    val gone = rows(path).filter(r => ReferenceTables.mapper.readTree(r).get("id").asLong % 3 == 0)
    spark.sparkContext.setLocalProperty("indexbridge.test.failTask", "delete")
    try PaimonWrite.delete(spark, path, where) finally spark.sparkContext.setLocalProperty("indexbridge.test.failTask", null)
    assert(rows(path) == multisetMinus(before, gone))
    checkDeletionVectors(path)
    val table = FileStoreTable.open(path)
    val dvFiles = TableCommit.indexEntries(table.path, table.snapshot).filter(_.indexType == "DELETION_VECTORS")
    assert(dvFiles.size > 1 && dvFiles.forall(_.dvRanges.get.nonEmpty))
    assert(files(path).filter(_.startsWith("index/")).map(_.stripPrefix("index/")) == dvFiles.map(_.fileName).toSet)
    // a second delete touching those files rewrites them
    val gone2 = rows(path).filter(r => ReferenceTables.mapper.readTree(r).get("id").asLong % 3 == 1)
    PaimonWrite.delete(spark, path, "id % 3 = 1")
    assert(rows(path) == multisetMinus(multisetMinus(before, gone), gone2))
    checkDeletionVectors(path)
    val failing = copy(path)
    val state = (files(failing), rows(failing))
    val hooks = new CommitHooks {
      override def beforePublish(snapshotId: Long, attempt: Int): Unit = throw new IllegalStateException("injected")
    }
    intercept[IllegalStateException](PaimonWrite.delete(spark, failing, Left("id % 3 = 2"), hooks))
    assert((files(failing), rows(failing)) == state)
  }

  test("delete with a concurrent Paimon commit: rebased over new files, refused when Paimon compacted the files it deletes from") {
    val path = appendDv(77)
    val added = newRows(path, 77, 5)
    val before = rows(path)
    val gone = rows(path, Some("id >= 0"))
    var writes = 0
    val writer = new CommitHooks {
      override def beforePublish(snapshotId: Long, attempt: Int): Unit = if (attempt == 1) { paimonWrite(path, added); writes += 1 }
    }
    val summary = PaimonWrite.delete(spark, path, Left("id >= 0"), writer)
    assert(writes == 1 && summary.count("attempts") == 2)
    val expected = multisetMinus(before, gone) ++ added.map(canonicalRow(paimon(path), _))
    assert(rows(path) == expected.sorted)
    // a compaction between planning and committing removes the files the vectors are for
    val compacted = appendDv(78)
    paimonWrite(compacted, newRows(compacted, 78, 3)) // small files for the compaction to merge
    val compactor = new CommitHooks {
      override def beforePublish(snapshotId: Long, attempt: Int): Unit = if (attempt == 1) paimonCompact(compacted)
    }
    val state = rows(compacted)
    val e = intercept[io.indexbridge.paimon.table.CommitConflictException](PaimonWrite.delete(spark, compacted, Left("id >= 0"), compactor))
    assert(e.getMessage.contains("rewritten or removed"), e.getMessage)
    assert(rows(compacted) == state)
    assert(!files(compacted).exists(f => f.startsWith("index/") && !TableCommit.referencedNames(Paths.get(compacted)).contains(f.stripPrefix("index/"))))
  }

  test("delete: the deletion files Paimon's AppendDeleteFileMaintainer writes for the same deletions, byte for byte") {
    var compared = 0
    for (seed <- appendDvSeeds(Seq(81L, 82L, 83L), 2, "maintainer"); base = appendDv(seed, Map("bucket" -> "-1", "deletion-vector.index-file.target-size" -> "200 b"))) {
      // a first delete gives some files vectors; the second one touches them
      PaimonWrite.delete(spark, base, "id % 4 = 0")
      val (ours, theirs) = (copy(base), copy(base))
      val before = FileStoreTable.open(theirs).plan(None).files.map(f => f.name -> f.deletionFile.map(_.load(f.name, f.meta.rowCount).positions.toSet).getOrElse(Set.empty[Long])).toMap
      PaimonWrite.delete(spark, ours, "id % 4 = 1 OR id % 5 = 0")
      val after = FileStoreTable.open(ours).plan(None).files.map(f => f.name -> f.deletionFile.map(_.load(f.name, f.meta.rowCount).positions.toSet).getOrElse(Set.empty[Long])).toMap
      // Paimon's maintainer fed the same new deletions
      val t = paimon(theirs)
      val handler = t.store().newIndexFileHandler()
      val snapshot = t.snapshotManager().latestSnapshot()
      val live = TableCommit.liveEntries(Paths.get(theirs), FileStoreTable.open(theirs).snapshot.get)
      val bitmap64 = t.coreOptions().deletionVectorBitmap64()
      val written = live.groupBy(_.partition.toSeq).toSeq.flatMap { case (partition, entries) =>
        val m = org.apache.paimon.deletionvectors.append.BaseAppendDeleteFileMaintainer.forUnawareAppend(handler, snapshot,
          org.apache.paimon.utils.SerializationUtils.deserializeBinaryRow(partition.toArray))
        val changed = entries.map(_.file.fileName).filter(f => after(f) != before(f)).sorted
        changed.foreach { f =>
          val dv = if (bitmap64) new org.apache.paimon.deletionvectors.Bitmap64DeletionVector() else new org.apache.paimon.deletionvectors.BitmapDeletionVector()
          (after(f) -- before(f)).toSeq.sorted.foreach(p => dv.delete(p))
          m.notifyNewDeletionVector(f, dv)
        }
        if (changed.isEmpty) Nil else m.persist().asScala.filter(_.kind().toString == "ADD").map(_.indexFile().fileName())
      }
      def bytes(path: String, names: Iterable[String]) = names.map(n => Files.readAllBytes(Paths.get(path, "index", n)).toSeq).toSeq.sortBy(_.hashCode)
      val ourNew = files(ours).filter(_.startsWith("index/")).map(_.stripPrefix("index/")) -- files(base).filter(_.startsWith("index/")).map(_.stripPrefix("index/"))
      assert(bytes(ours, ourNew) == bytes(theirs, written))
      compared += written.size
    }
    info(s"$compared deletion files compared")
    assert(compared > 0)
  }

  // ------------------------------------------------------------------------------------------
  // load

  private val loadSchema = StructType(Seq(
    StructField("dt", StringType), StructField("id", LongType), StructField("k2", IntegerType), StructField("name", StringType),
    StructField("amount", DecimalType(10, 2)), StructField("big", DecimalType(24, 4)), StructField("price", DoubleType),
    StructField("ts", TimestampType), StructField("tsn", TimestampNTZType), StructField("d", DateType),
    StructField("tags", ArrayType(IntegerType)), StructField("attrs", MapType(StringType, IntegerType)), StructField("flag", BooleanType),
    StructField("b", BinaryType), StructField("small", ShortType), StructField("tiny", ByteType),
    StructField("r", StructType(Seq(StructField("a", IntegerType), StructField("s", StringType))))))

  /** `n` input rows with keys from a small space (duplicates on purpose), values with nulls. */
  private def loadRows(seed: Long, n: Int, keys: Int = 250, days: Seq[String] = Seq("2024-05-01", "2024-05-02")): Seq[Row] = {
    val r = PaimonTables.random(seed, "load")
    def maybe[T](v: => T): Any = if (r.nextInt(8) == 0) null else v
    val words = Seq("alpha", "beta", "gamma", "delta", "ε-psilon", "", "a much longer string value past sixteen chars")
    (0 until n).map { _ =>
      Row(days(r.nextInt(days.size)), r.nextInt(keys).toLong * 7919L, r.nextInt(3), maybe(words(r.nextInt(words.size)) + r.nextInt(40)),
        maybe(new java.math.BigDecimal(java.math.BigInteger.valueOf(r.nextInt(2000000) - 1000000L), 2)),
        maybe(new java.math.BigDecimal(java.math.BigInteger.valueOf(r.nextLong() >> 8), 4)), maybe((r.nextInt(40000) - 20000) / 8.0),
        maybe(java.sql.Timestamp.from(java.time.Instant.ofEpochSecond(1714521600L + r.nextInt(86400 * 30), r.nextInt(1000000) * 1000L))),
        maybe(java.time.LocalDateTime.of(2024, 1 + r.nextInt(12), 1 + r.nextInt(28), r.nextInt(24), r.nextInt(60), r.nextInt(60), r.nextInt(1000000) * 1000)),
        maybe(java.sql.Date.valueOf(java.time.LocalDate.of(2024, 1 + r.nextInt(12), 1 + r.nextInt(28)))),
        maybe(Seq.fill(r.nextInt(4))(if (r.nextInt(5) == 0) null else r.nextInt(100))),
        maybe(Seq("x", "y", "z").filter(_ => r.nextBoolean()).map(k => k -> (if (r.nextInt(5) == 0) null else r.nextInt(100))).toMap),
        maybe(r.nextBoolean()), maybe(Array.fill(r.nextInt(12))(r.nextInt(256).toByte)), maybe((r.nextInt(2000) - 1000).toShort),
        maybe((r.nextInt(256) - 128).toByte), maybe(Row(maybe(r.nextInt(1000)), maybe(words(r.nextInt(words.size))))))
    }
  }

  private def frame(rows: Seq[Row]) = spark.createDataFrame(spark.sparkContext.parallelize(rows, 3), loadSchema)

  /** A Spark row as Paimon's GenericRow of `rowType`. */
  private def toPaimon(row: Row, rowType: org.apache.paimon.types.RowType): org.apache.paimon.data.GenericRow = {
    import org.apache.paimon.data.{BinaryString, Decimal, GenericArray, GenericMap, GenericRow, Timestamp}
    import org.apache.paimon.types.{ArrayType => PArray, DecimalType => PDecimal, MapType => PMap, RowType => PRow}
    def convert(v: Any, t: org.apache.paimon.types.DataType): AnyRef = (v, t) match {
      case (null, _)                                   => null
      case (s: String, _)                              => BinaryString.fromString(s)
      case (d: java.math.BigDecimal, dt: PDecimal)     => Decimal.fromBigDecimal(d, dt.getPrecision, dt.getScale)
      case (ts: java.sql.Timestamp, _)                 =>
        val i = ts.toInstant
        Timestamp.fromEpochMillis(i.toEpochMilli, i.getNano % 1000000)
      case (ldt: java.time.LocalDateTime, _)           => Timestamp.fromLocalDateTime(ldt)
      case (d: java.sql.Date, _)                       => Int.box(d.toLocalDate.toEpochDay.toInt)
      case (a: scala.collection.Seq[_], at: PArray)    => new GenericArray(a.map(convert(_, at.getElementType)).toArray[AnyRef])
      case (m: scala.collection.Map[_, _], mt: PMap)   =>
        new GenericMap(m.map { case (k, x) => convert(k, mt.getKeyType) -> convert(x, mt.getValueType) }.toMap.asJava)
      case (r: Row, rt: PRow)                          => toPaimon(r, rt)
      case (other, _)                                  => other.asInstanceOf[AnyRef]
    }
    GenericRow.of(rowType.getFields.asScala.zipWithIndex.map { case (f, i) => convert(row.get(i), f.`type`) }.toSeq: _*)
  }

  /** Per (partition + key as JSON): the bucket Paimon reads it from. */
  private def keyBuckets(path: String): Map[String, Int] = {
    val t = paimon(path)
    val builder = t.newReadBuilder()
    val keys = (t.primaryKeys().asScala).map(k => t.rowType().getFieldIndex(k))
    builder.newScan().plan().splits().asScala.flatMap { split =>
      val bucket = split.asInstanceOf[org.apache.paimon.table.source.DataSplit].bucket()
      val out = mutable.ArrayBuffer.empty[(String, Int)]
      val reader = builder.newRead().createReader(split)
      try reader.forEachRemaining { (row: org.apache.paimon.data.InternalRow) =>
        val json = ReferenceTables.mapper.readTree(canonicalRow(t, row))
        out += keys.map(i => json.get(t.rowType().getFields.get(i).name).toString).mkString("|") -> bucket
      } finally reader.close()
      out
    }.toMap
  }

  /** Per (partition bytes, bucket): the HASH index file's bytes. */
  private def hashFiles(path: String): Map[(Seq[Byte], Int), Seq[Byte]] = {
    val table = FileStoreTable.open(path)
    TableCommit.indexEntries(table.path, table.snapshot).filter(_.indexType == "HASH").map { e =>
      (e.partition.toSeq, e.bucket) -> Files.readAllBytes(table.paths.indexFile(table.partition(e.partition, "x"), e.bucket, e)).toSeq
    }.toMap
  }

  /** A table directory with only `path`'s schema: the same table, empty, for Paimon to write. */
  private def twin(path: String): String = {
    val target = Paths.get(path).resolveSibling(Paths.get(path).getFileName.toString + "_twin")
    Files.createDirectories(target.resolve("schema"))
    Files.copy(Paths.get(path, "schema", "schema-0"), target.resolve("schema").resolve("schema-0"))
    target.toString
  }

  private def compareWithPaimon(ours: String, theirs: String): Unit = {
    assert(rows(ours) == rows(theirs))
    assert(keyBuckets(ours) == keyBuckets(theirs))
    assert(hashFiles(ours) == hashFiles(theirs))
  }

  test("load: a new table, the buckets, HASH indexes and rows Paimon's writer and HashBucketAssigner give the same input") {
    for ((seed, options) <- Depth.pick(Seq(91L -> Map("dynamic-bucket.target-row-num" -> "40", "file-index.bloom-filter.columns" -> "name"),
        92L -> Map("dynamic-bucket.target-row-num" -> "25", "deletion-vectors.enabled" -> "true", "file-index.bitmap.columns" -> "k2",
          "file-index.in-manifest-threshold" -> "20"),
        93L -> Map("dynamic-bucket.target-row-num" -> "2000")), 2, "load")) withClue(s"seed $seed $options: ") {
      val path = warehouse.resolve("db.db").resolve(s"load_$seed").toString
      val input = loadRows(seed, 700)
      val summary = PaimonWrite.load(spark, path, frame(input), Seq("dt", "id", "k2"), Seq("dt"), options.toSeq)
      assert(summary.commitKind.contains("APPEND") && summary.snapshotId.contains(1L))
      val theirs = twin(path)
      paimonWrite(theirs, input.map(toPaimon(_, paimon(theirs).rowType())))
      compareWithPaimon(path, theirs)
      val expected = input.groupBy(r => (r.get(0), r.get(1), r.get(2))).size
      assert(rows(path).size == expected && summary.count("rows") == expected)
      // every level of our files is the last one, every bucket one sorted run
      val entries = liveEntries(path)
      assert(entries.forall(_.file.level == 5) && entries.forall(_.totalBuckets == -1))
      // a second load into the same table: existing keys keep their buckets, new ones fill up
      val more = loadRows(seed + 1000, 300, keys = 400)
      val second = PaimonWrite.load(spark, path, frame(more))
      paimonWrite(theirs, more.map(toPaimon(_, paimon(theirs).rowType())))
      compareWithPaimon(path, theirs)
      if (options.contains("deletion-vectors.enabled")) { // the buckets written into compacted in a second commit
        assert(second.commitKind.contains("COMPACT") && second.count("compacted_buckets") > 0)
        assert(liveEntries(path).forall(_.file.level == 5))
      }
      // Paimon writes updates and new keys after us: updates land in the buckets our index says
      val before = keyBuckets(path)
      val updates = loadRows(seed + 2000, 200, keys = 500)
      paimonWrite(path, updates.map(toPaimon(_, paimon(path).rowType())), compact = true)
      val after = keyBuckets(path)
      for ((k, b) <- before if after.contains(k)) assert(after(k) == b, k)
      val all = (input ++ more ++ updates).groupBy(r => (r.get(0), r.get(1), r.get(2))).size
      assert(rows(path).size == all) // updates, not duplicates
    }
  }

  /** Rows for a load into a Paimon-made table: some of its rows with one value changed (updates),
    * and copies under new keys; collected, so a twin gets them in the same order. */
  private def updatesAndInserts(path: String): Seq[Row] = {
    val existing = Paimon.read(spark, path).collect().toSeq
    val schema = FileStoreTable.open(path).schema
    val idIndex = schema.fieldNames.indexOf("id")
    def shifted(r: Row, by: Int): Row = Row.fromSeq(r.toSeq.updated(idIndex, r.get(idIndex) match {
      case s: String => s + s"-new$by"
      case l: Long   => l + 100000000L * by
      case i: Int    => i + 100000 * by
      case other     => other
    }))
    val valueIndex = schema.fields.indexWhere(f => !schema.primaryKeys.contains(f.name) && f.dataType.nullable)
    val updates = existing.take(40).map(r => if (valueIndex < 0) r else Row.fromSeq(r.toSeq.updated(valueIndex, null)))
    updates ++ existing.take(60).map(shifted(_, 1)) ++ existing.take(10).map(shifted(_, 1)) ++ existing.slice(60, 90).map(shifted(_, 2))
  }

  test("load into tables Paimon made: the rows, buckets and HASH indexes of Paimon's writer; what load refuses") {
    var loaded, refused = 0
    for (seed <- Seq(101L, 102L, 103L, 104L)) withClue(s"dynamic seed $seed: ") {
      val base = table("dynamic", seed)
      val schema = FileStoreTable.open(base).schema
      val input = scala.util.Try(updatesAndInserts(base))
      val cannot = schema.options.get("merge-engine").nonEmpty || schema.options.contains("sequence.field") ||
        schema.options.get("file.format").contains("orc") || schema.fields.exists(f => Paimon.sparkType(f.dataType).isLeft)
      if (cannot || input.isFailure) {
        val e = intercept[Exception](PaimonWrite.load(spark, copy(base), Paimon.read(spark, base, columns = Some(schema.fieldNames.filter(n =>
          Paimon.sparkType(schema.field(n).dataType).isRight)))))
        assert(e.isInstanceOf[io.indexbridge.IndexFormatException] || e.isInstanceOf[IllegalArgumentException], e.toString)
        refused += 1
      } else {
        val (ours, theirs) = (copy(base), copy(base))
        val df = spark.createDataFrame(spark.sparkContext.parallelize(input.get, 2), Paimon.read(spark, base).schema)
        PaimonWrite.load(spark, ours, df)
        paimonWrite(theirs, input.get.map(toPaimon(_, paimon(theirs).rowType())))
        compareWithPaimon(ours, theirs)
        paimonCompact(ours)
        assert(rows(ours) == rows(theirs))
        loaded += 1
      }
    }
    info(s"$loaded loads compared with Paimon's writer, $refused tables refused (first-row, sequence.field, ORC, TIMESTAMP(9))")
    assert(loaded > 0)
    val e = intercept[IllegalArgumentException](PaimonWrite.load(spark, warehouse.resolve("db.db").resolve("not_a_table").toString, frame(loadRows(1, 5))))
    assert(e.getMessage.contains("--primary-key"))
  }

  test("load: a task failing once is retried; a failure before the commit or a concurrent Paimon write leaves nothing of ours") {
    val path = warehouse.resolve("db.db").resolve("load_failures").toString
    PaimonWrite.load(spark, path, frame(loadRows(111, 300)), Seq("dt", "id", "k2"), Seq("dt"), Seq("dynamic-bucket.target-row-num" -> "30"))
    spark.sparkContext.setLocalProperty("indexbridge.test.failTask", "load")
    try PaimonWrite.load(spark, path, frame(loadRows(112, 200, keys = 400)))
    finally spark.sparkContext.setLocalProperty("indexbridge.test.failTask", null)
    val snapshots = new io.indexbridge.paimon.table.SnapshotManager(Paths.get(path))
    val referenced = snapshots.snapshotIds.flatMap { id =>
      val s = snapshots.snapshot(id)
      TableCommit.liveEntries(Paths.get(path), s).flatMap(e => e.file.fileName +: e.file.extraFiles) ++
        TableCommit.indexEntries(Paths.get(path), Some(s)).map(_.fileName)
    }.toSet
    val onDisk = files(path).filter(f => f.contains("bucket-") || f.startsWith("index/")).map(f => Paths.get(f).getFileName.toString)
    assert(onDisk == referenced) // no extra or temporary files: everything a snapshot references
    val state = (files(path), rows(path))
    val failing = new CommitHooks {
      override def beforePublish(snapshotId: Long, attempt: Int): Unit = throw new IllegalStateException("injected")
    }
    intercept[IllegalStateException](PaimonWrite.load(spark, path, frame(loadRows(113, 200, keys = 600)), hooks = failing))
    assert((files(path), rows(path)) == state)
    // Paimon assigns new keys of the same partitions while we publish: our assignment may clash
    val input = loadRows(114, 100, keys = 900)
    val concurrent = loadRows(115, 50, keys = 900)
    val writer = new CommitHooks {
      override def beforePublish(snapshotId: Long, attempt: Int): Unit =
        if (attempt == 1) paimonWrite(path, concurrent.map(toPaimon(_, paimon(path).rowType())))
    }
    val before = files(path)
    val e = intercept[io.indexbridge.paimon.table.CommitConflictException](PaimonWrite.load(spark, path, frame(input), hooks = writer))
    assert(e.getMessage.contains("HASH"), e.getMessage)
    val expected = (loadRows(111, 300) ++ loadRows(112, 200, keys = 400) ++ concurrent).groupBy(r => (r.get(0), r.get(1), r.get(2))).size
    assert(rows(path).size == expected)
    assert(files(path).filterNot(before.contains).forall(f => TableCommit.referencedNames(Paths.get(path)).contains(Paths.get(f).getFileName.toString) ||
      f.startsWith("snapshot/") || f.startsWith("manifest/")))
  }
}
