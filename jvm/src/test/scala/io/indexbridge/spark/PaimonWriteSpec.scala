package io.indexbridge.spark

import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._
import scala.util.chaining._

import io.indexbridge.paimon.table.{CommitHooks, FileStoreTable, Manifest, ManifestEntry}
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
}
