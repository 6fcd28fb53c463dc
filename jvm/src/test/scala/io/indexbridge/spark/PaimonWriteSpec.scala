package io.indexbridge.spark

import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._
import scala.util.chaining._

import io.indexbridge.paimon.table.{CommitHooks, FileStoreTable, Manifest, ManifestEntry, ReferenceTables, TableCommit}
import io.indexbridge.paimon.table.PaimonWriteFixtures._
import io.indexbridge.reference.PaimonTables
import org.apache.paimon.schema.{SchemaChange, SchemaManager}
import org.apache.paimon.fs.{Path => PaimonPath}
import org.apache.paimon.fs.local.LocalFileIO
import org.apache.spark.sql.SparkSession
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/** The write jobs against Paimon 1.4.2 on tables its own Java API made: what Paimon's procedures
  * would write, what its reader then reads and prunes, and that Paimon goes on writing, compacting
  * and reading after our commits; task failures (retried by Spark), failures between writing and
  * committing, and concurrent Paimon commits leave the table consistent. */
class PaimonWriteSpec extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark = SparkSession.builder().master("local[2,3]").appName("PaimonWriteSpec")
    .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
    .config("spark.sql.session.timeZone", "UTC").getOrCreate().tap(_.sparkContext.setLogLevel("ERROR"))

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
    for ((kind, seed) <- Seq("append" -> 41L, "append" -> 42L, "append" -> 43L, "pk" -> 44L, "dynamic" -> 45L, "pk-dv" -> 46L);
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
  private def appendDv(seed: Long, extra: Map[String, String] = Map.empty): Option[String] = {
    val recipe = PaimonTables.recipe("append", seed, 200, 4)
    if (recipe.options.get("file.format").contains("orc")) None
    else Some(table("append", seed, _ ++ Map("deletion-vectors.enabled" -> "true",
      "deletion-vectors.bitmap64" -> (seed % 2 == 0).toString) ++ extra))
  }

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
    for (seed <- Seq(71L, 72L, 73L, 74L, 75L); path <- appendDv(seed)) withClue(s"append-dv seed $seed: ") {
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
    val path = appendDv(76, Map("deletion-vector.index-file.target-size" -> "40 b")).get
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
    val path = appendDv(77).get
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
    val compacted = appendDv(78).get
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
    for (seed <- Seq(81L, 82L, 83L); base <- appendDv(seed, Map("bucket" -> "-1", "deletion-vector.index-file.target-size" -> "200 b"))) {
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
}
