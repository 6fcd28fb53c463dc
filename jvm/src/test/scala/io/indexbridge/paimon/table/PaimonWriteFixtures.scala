package io.indexbridge.paimon.table

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import io.indexbridge.reference.{Canonical, PaimonAnswers, PaimonTables}
import org.apache.paimon.append.AppendCompactCoordinator
import org.apache.paimon.data.{GenericRow, InternalRow}
import org.apache.paimon.disk.IOManager
import org.apache.paimon.fs.{Path => PaimonPath}
import org.apache.paimon.fs.local.LocalFileIO
import org.apache.paimon.index.{FileIndexProcessor, HashBucketAssigner}
import org.apache.paimon.io.{CompactIncrement, DataIncrement}
import org.apache.paimon.operation.BaseAppendFileStoreWrite
import org.apache.paimon.table.{FileStoreTable => PaimonTable, FileStoreTableFactory}
import org.apache.paimon.table.sink.{CommitMessage, CommitMessageImpl}
import org.apache.paimon.types.RowKind

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
  def internalRows(path: String): Seq[InternalRow] = {
    val t = paimon(path)
    val builder = t.newReadBuilder()
    val serializer = new org.apache.paimon.data.serializer.InternalRowSerializer(t.rowType())
    val out = Seq.newBuilder[InternalRow]
    val reader = builder.newRead().createReader(builder.newScan().plan().splits())
    try reader.forEachRemaining((r: InternalRow) => out += serializer.copy(r)) finally reader.close()
    out.result()
  }

  /** Seeded conditions over the values of the table. */
  def conditions(path: String, seed: Long, n: Int): Seq[String] =
    PaimonAnswers.conditions(paimon(path), internalRows(path), seed, n)

  private lazy val io = IOManager.create(Files.createTempDirectory("paimon-io").toString)

  /** Writes `rows` with Paimon's batch writer (dynamic-bucket tables through its HashBucketAssigner)
    * and commits; with `compact`, also fully compacts every bucket written. */
  def paimonWrite(path: String, rows: Seq[GenericRow], compact: Boolean = false): Unit = {
    val t = paimon(path)
    val builder = t.newBatchWriteBuilder()
    val write = builder.newWrite().withIOManager(io)
    val commit = builder.newCommit()
    try {
      if (t.coreOptions().bucket() == -1 && !t.primaryKeys().isEmpty) {
        val assigner = new HashBucketAssigner(t.snapshotManager(), "indexbridge-tests", t.store().newIndexFileHandler(), 1, 1, 0,
          t.coreOptions().dynamicBucketTargetRowNum(),
          Option(t.coreOptions().dynamicBucketMaxBuckets()).map(_.intValue).getOrElse(-1))
        val extractor = t.createRowKeyExtractor()
        rows.foreach { row =>
          extractor.setRecord(row)
          write.write(row, assigner.assign(extractor.partition(), extractor.trimmedPrimaryKey().hashCode()))
        }
      } else rows.foreach(write.write(_))
      if (compact) t.newSnapshotReader().bucketEntries().asScala.foreach(e => write.compact(e.partition(), e.bucket(), true))
      commit.commit(write.prepareCommit())
    } finally {
      write.close()
      commit.close()
    }
  }

  /** New rows for the table: fresh values of every column; `keys` (when given) the primary keys
    * of existing rows to update. */
  def newRows(path: String, seed: Long, n: Int, keysFrom: Seq[InternalRow] = Nil): Seq[GenericRow] = {
    val t = paimon(path)
    val r = PaimonTables.random(seed, "new-rows")
    val fields = t.rowType().getFields.asScala.toIndexedSeq
    val keyIdx = t.primaryKeys().asScala.map(k => fields.indexWhere(_.name == k))
    val partIdx = t.partitionKeys().asScala.map(k => fields.indexWhere(_.name == k))
    (0 until n).map { i =>
      val values = fields.map(f => PaimonTables.sample(r, f.`type`))
      val row = GenericRow.of(values: _*)
      if (keysFrom.nonEmpty) {
        val from = keysFrom(i % keysFrom.size)
        (keyIdx ++ partIdx).distinct.foreach(j => row.setField(j, InternalRow.createFieldGetter(fields(j).`type`, j).getFieldOrNull(from)))
      } else if (t.primaryKeys().isEmpty) partIdx.foreach { j =>
        // partitions of the table's own rows, so partition directories stay few
        val existing = internalRows(path)
        if (existing.nonEmpty) row.setField(j, InternalRow.createFieldGetter(fields(j).`type`, j).getFieldOrNull(existing(i % existing.size)))
      }
      row.setRowKind(RowKind.INSERT)
      row
    }
  }

  /** Paimon's own compaction: every bucket of a primary-key or fixed-bucket table fully; an
    * unaware-bucket append table through AppendCompactCoordinator. */
  def paimonCompact(path: String): Unit = {
    val t = paimon(path)
    if (t.primaryKeys().isEmpty && t.coreOptions().bucket() == -1) {
      val tasks = new AppendCompactCoordinator(t, false).run().asScala
      if (tasks.nonEmpty) {
        val write = t.store().newWrite("indexbridge-compact").asInstanceOf[BaseAppendFileStoreWrite]
        val messages = tasks.map(_.doCompact(t, write))
        val commit = t.newBatchWriteBuilder().newCommit()
        try commit.commit(messages.asJava) finally commit.close()
        write.close()
      }
    } else paimonWrite(path, Nil, compact = true)
  }

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
