package io.indexbridge.paimon.table

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import io.indexbridge.reference.{Canonical, PaimonAnswers, PaimonTables, PaimonWriteReference}
import org.apache.paimon.data.{GenericRow, InternalRow}
import org.apache.paimon.fs.{Path => PaimonPath}
import org.apache.paimon.fs.local.LocalFileIO
import org.apache.paimon.index.FileIndexProcessor
import org.apache.paimon.io.{CompactIncrement, DataIncrement}
import org.apache.paimon.table.{FileStoreTable => PaimonTable, FileStoreTableFactory}
import org.apache.paimon.table.sink.{CommitMessage, CommitMessageImpl}

/** Real Paimon tables for the write tests, and Paimon's own operations on them (Paimon 1.4.2's
  * Java API): writing rows, compacting, reading, rewriting file indexes with its
  * `FileIndexProcessor`. Every table is made fresh from a seeded recipe
  * ([[PaimonTables.recipe]]), so tests can change it. */
object PaimonWriteFixtures {
  lazy val warehouse: Path = Files.createTempDirectory("indexbridge-paimon-write")
  private val names = new java.util.concurrent.atomic.AtomicInteger()

  /** A table of `kind` made by Paimon from `seed` (options adjusted by `options`). */
  def table(kind: String, seed: Long, options: Map[String, String] => Map[String, String] = identity,
      rows: Int = 200, commits: Int = 4): String = {
    val base = PaimonTables.recipe(kind, seed, rows, commits)
    val recipe = base.copy(options = options(base.options))
    PaimonTables.create(warehouse.toString, "db", s"${kind.replace('-', '_')}_${seed}_${names.incrementAndGet()}", recipe)
  }

  /** A Parquet table whose latest snapshot has a deletion file, made by Paimon (pk-dv, the first
    * of seeds 1-10 that gives one), for the tests that damage one: the day's reference tables
    * need not hold one. */
  lazy val withDeletionFile: String =
    Iterator.from(1).take(10).map(seed => table("pk-dv", seed, _ + ("file.format" -> "parquet")))
      .find(FileStoreTable.open(_).plan(None).files.exists(_.deletionFile.isDefined))
      .getOrElse(throw new IllegalStateException("no pk-dv table of seeds 1-10 has a deletion file"))

  /** A copy of a table directory. */
  def copy(path: String): String = {
    val source = Paths.get(path)
    val target = warehouse.resolve("db.db").resolve(s"${source.getFileName}_copy_${names.incrementAndGet()}")
    Files.walk(source).iterator.asScala.foreach(p => Files.copy(p, target.resolve(source.relativize(p).toString)))
    target.toString
  }

  def paimon(path: String, dynamic: Map[String, String] = Map.empty): PaimonTable = {
    val t = FileStoreTableFactory.create(LocalFileIO.create(), new PaimonPath(path))
    if (dynamic.isEmpty) t else t.copy(dynamic.asJava)
  }

  def latest(path: String): Long = Option(paimon(path).snapshotManager().latestSnapshotId()).map(_.longValue).getOrElse(0L)

  /** Paimon's answer for a read (rows, files read, file-index verdicts). */
  def answer(path: String, where: Option[String] = None): JsonNode =
    ReferenceTables.mapper.readTree(ReferenceTables.mapper.writeValueAsString(PaimonAnswers.answer(path, None, where)))

  /** The rows Paimon reads, as sorted canonical JSON. */
  def rows(path: String, where: Option[String] = None): Seq[String] =
    answer(path, where).get("rows").elements().asScala.map(ReferenceTables.mapper.writeValueAsString).toSeq.sorted

  /** Rows Paimon reads, as Paimon's InternalRows. */
  def internalRows(path: String): Seq[InternalRow] = PaimonWriteReference.internalRows(path)

  /** Seeded conditions over the values of the table. */
  def conditions(path: String, seed: Long, n: Int): Seq[String] =
    PaimonAnswers.conditions(paimon(path), internalRows(path), seed, n)

  /** Paimon's batch writer ([[PaimonWriteReference.write]]). */
  def paimonWrite(path: String, rows: Seq[GenericRow], compact: Boolean = false): Unit = PaimonWriteReference.write(path, rows, compact)

  /** New rows for the table ([[PaimonWriteReference.newRows]]). */
  def newRows(path: String, seed: Long, n: Int, keysFrom: Seq[InternalRow] = Nil): Seq[GenericRow] =
    PaimonWriteReference.newRows(path, seed, n, keysFrom)

  /** Paimon's own compaction ([[PaimonWriteReference.compact]]). */
  def paimonCompact(path: String): Unit = PaimonWriteReference.compact(path)

  /** Paimon's rewrite_file_index: FileIndexProcessor over every live data file, one commit. */
  def paimonRewriteFileIndex(path: String, dynamic: Map[String, String] = Map.empty): Unit = {
    val t = paimon(path, dynamic)
    val processor = new FileIndexProcessor(t)
    val messages: Seq[CommitMessage] = t.store().newScan().plan().files().asScala.toSeq.map { e =>
      val after = processor.process(e.partition(), e.bucket(), e)
      new CommitMessageImpl(e.partition(), e.bucket(), e.totalBuckets(), DataIncrement.emptyIncrement(),
        new CompactIncrement(java.util.List.of(e.file()), java.util.List.of(after), java.util.List.of()))
    }
    val commit = t.newBatchWriteBuilder().newCommit()
    try commit.commit(messages.asJava) finally commit.close()
  }

  /** Every file under a table directory, relative. */
  def files(path: String): Set[String] = {
    val root = Paths.get(path)
    Files.walk(root).iterator.asScala.filter(Files.isRegularFile(_)).map(p => root.relativize(p).toString).toSet
  }

  def canonicalRow(t: PaimonTable, row: InternalRow): String = ReferenceTables.mapper.writeValueAsString(Canonical.row(t.rowType(), row))
}
