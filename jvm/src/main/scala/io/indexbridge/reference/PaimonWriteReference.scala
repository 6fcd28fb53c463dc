package io.indexbridge.reference

import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.paimon.append.AppendCompactCoordinator
import org.apache.paimon.data.{GenericRow, InternalRow}
import org.apache.paimon.disk.IOManager
import org.apache.paimon.fs.{Path => PaimonPath}
import org.apache.paimon.fs.local.LocalFileIO
import org.apache.paimon.index.HashBucketAssigner
import org.apache.paimon.operation.BaseAppendFileStoreWrite
import org.apache.paimon.table.{FileStoreTable, FileStoreTableFactory}
import org.apache.paimon.types.RowKind

/** Paimon's own writes around indexbridge's write jobs (Paimon 1.4.2's Java API): tables made from
  * a recipe with adjusted options (e.g. an append table with deletion vectors), rows written by
  * Paimon's batch writer (dynamic-bucket tables through its HashBucketAssigner), its compaction,
  * and its answers after them. The Scala write tests and the Python integration tests use it.
  *
  * `main`:
  * {{{
  * create KIND SEED WAREHOUSE NAME OUT.json [KEY=VALUE | KEY=- | PREFIX*=- ...]   a table; options set or removed
  * answer TABLE OUT.json [CONDITION]                                    PaimonAnswers.answer
  * write TABLE SEED ROWS OUT.json                                       Paimon writes ROWS new rows,
  *                                                                      compacts, answers
  * bench-table WAREHOUSE ROWS OUT.json                                  the benchmark's table (once)
  * bench-rewrite TABLE OUT.json [KEY=VALUE ...]                         FileIndexProcessor's time
  * }}}
  */
object PaimonWriteReference {
  private val mapper = new ObjectMapper()

  def paimon(path: String, dynamic: Map[String, String] = Map.empty): FileStoreTable = {
    val t = FileStoreTableFactory.create(LocalFileIO.create(), new PaimonPath(path))
    if (dynamic.isEmpty) t else t.copy(dynamic.asJava)
  }

  /** A table of `kind` from `seed`, its recipe's options changed by `options`. */
  def create(warehouse: String, name: String, kind: String, seed: Long, options: Map[String, String] => Map[String, String],
      rows: Int = 200, commits: Int = 4): String = {
    val base = PaimonTables.recipe(kind, seed, rows, commits)
    PaimonTables.create(warehouse, "db", name, base.copy(options = options(base.options)))
  }

  private lazy val io = IOManager.create(Files.createTempDirectory("paimon-io").toString)

  /** Writes `rows` with Paimon's batch writer and commits; with `compact`, also fully compacts
    * every bucket. */
  def write(path: String, rows: Seq[GenericRow], compact: Boolean = false): Unit = {
    val t = paimon(path)
    val builder = t.newBatchWriteBuilder()
    val write = builder.newWrite().withIOManager(io)
    val commit = builder.newCommit()
    try {
      if (t.coreOptions().bucket() == -1 && !t.primaryKeys().isEmpty) {
        val assigner = new HashBucketAssigner(t.snapshotManager(), "indexbridge-tests", t.store().newIndexFileHandler(), 1, 1, 0,
          t.coreOptions().dynamicBucketTargetRowNum(), Option(t.coreOptions().dynamicBucketMaxBuckets()).map(_.intValue).getOrElse(-1))
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

  /** The rows Paimon reads, as its InternalRows. */
  def internalRows(path: String): Seq[InternalRow] = {
    val t = paimon(path)
    val builder = t.newReadBuilder()
    val serializer = new org.apache.paimon.data.serializer.InternalRowSerializer(t.rowType())
    val out = Seq.newBuilder[InternalRow]
    val reader = builder.newRead().createReader(builder.newScan().plan().splits())
    try reader.forEachRemaining((r: InternalRow) => out += serializer.copy(r)) finally reader.close()
    out.result()
  }

  /** `n` new rows of the table's type: fresh values of every column; with `keysFrom`, the
    * primary and partition keys of those rows (updates); an append table's rows take the
    * partitions of its own rows. */
  def newRows(path: String, seed: Long, n: Int, keysFrom: Seq[InternalRow] = Nil): Seq[GenericRow] = {
    val t = paimon(path)
    val r = PaimonTables.random(seed, "new-rows")
    val fields = t.rowType().getFields.asScala.toIndexedSeq
    val keyIdx = t.primaryKeys().asScala.map(k => fields.indexWhere(_.name == k))
    val partIdx = t.partitionKeys().asScala.map(k => fields.indexWhere(_.name == k))
    lazy val existing = internalRows(path)
    (0 until n).map { i =>
      val row = GenericRow.of(fields.map(f => PaimonTables.sample(r, f.`type`)): _*)
      def copyFrom(from: InternalRow, idx: Iterable[Int]): Unit =
        idx.foreach(j => row.setField(j, InternalRow.createFieldGetter(fields(j).`type`, j).getFieldOrNull(from)))
      if (keysFrom.nonEmpty) copyFrom(keysFrom(i % keysFrom.size), (keyIdx ++ partIdx).distinct)
      else if (t.primaryKeys().isEmpty && existing.nonEmpty) copyFrom(existing(i % existing.size), partIdx)
      row.setRowKind(RowKind.INSERT)
      row
    }
  }

  /** Paimon's compaction: every bucket of a primary-key or fixed-bucket table fully; an
    * unaware-bucket append table through AppendCompactCoordinator. */
  def compact(path: String): Unit = {
    val t = paimon(path)
    if (t.primaryKeys().isEmpty && t.coreOptions().bucket() == -1) {
      val tasks = new AppendCompactCoordinator(t, false).run().asScala
      if (tasks.nonEmpty) {
        val write = t.store().newWrite("indexbridge-compact").asInstanceOf[BaseAppendFileStoreWrite]
        try {
          val messages = tasks.map(_.doCompact(t, write))
          val commit = t.newBatchWriteBuilder().newCommit()
          try commit.commit(messages.asJava) finally commit.close()
        } finally write.close()
      }
    } else write(path, Nil, compact = true)
  }

  /** The benchmark's append table `db.bench_append` under `warehouse` (created once): `rows`
    * orders (id, customer, amount, status, note) with deletion vectors enabled and no file
    * indexes, written by Paimon's batch writer in files of about 8 mb. */
  def benchTable(warehouse: String, rows: Long): String = {
    val path = Paths.get(warehouse, "db.db", "bench_append")
    if (!Files.exists(path.resolve("snapshot"))) {
      val columns = Seq(
        PaimonTables.Column("id", org.apache.paimon.types.DataTypes.BIGINT()),
        PaimonTables.Column("customer", org.apache.paimon.types.DataTypes.STRING()),
        PaimonTables.Column("amount", org.apache.paimon.types.DataTypes.INT()),
        PaimonTables.Column("status", org.apache.paimon.types.DataTypes.STRING()),
        PaimonTables.Column("note", org.apache.paimon.types.DataTypes.STRING()))
      val options = Map("bucket" -> "-1", "deletion-vectors.enabled" -> "true", "target-file-size" -> "8 mb")
      val cat = org.apache.paimon.catalog.CatalogFactory.createCatalog(org.apache.paimon.catalog.CatalogContext.create(
        new org.apache.paimon.options.Options(Map("warehouse" -> warehouse).asJava)))
      try {
        cat.createDatabase("db", true)
        val builder = org.apache.paimon.schema.Schema.newBuilder()
        columns.foreach(c => builder.column(c.name, c.dataType))
        builder.options(options.asJava)
        cat.createTable(org.apache.paimon.catalog.Identifier.create("db", "bench_append"), builder.build(), true)
      } finally cat.close()
      val statuses = Array("NEW", "PAID", "SHIPPED", "RETURNED").map(org.apache.paimon.data.BinaryString.fromString)
      val words = Array("fast", "delivery", "gift", "wrap", "fragile", "express", "weekend", "office")
      def s(x: String) = org.apache.paimon.data.BinaryString.fromString(x)
      val t = paimon(path.toString)
      val builder = t.newBatchWriteBuilder()
      val w = builder.newWrite().withIOManager(io)
      val commit = builder.newCommit()
      try {
        var i = 0L
        while (i < rows) {
          w.write(GenericRow.of(Long.box(i), s(s"customer-${i * 7919 % 100000}"), Int.box((i * 31 % 1000).toInt), statuses((i % 4).toInt),
            s(s"${words((i % 8).toInt)} ${words((i * 7 % 8).toInt)} $i")))
          i += 1
        }
        commit.commit(w.prepareCommit())
      } finally { w.close(); commit.close() }
    }
    path.toString
  }

  /** Paimon's FileIndexProcessor over every data file of the table with `options` (its index
    * writer, one JVM, one thread): the seconds it took, nothing committed. */
  def benchRewrite(path: String, options: Map[String, String]): Double = {
    val t = paimon(path, options)
    val processor = new org.apache.paimon.index.FileIndexProcessor(t)
    val entries = t.store().newScan().plan().files().asScala
    val start = System.nanoTime()
    entries.foreach(e => processor.process(e.partition(), e.bucket(), e))
    (System.nanoTime() - start) / 1e9
  }

  def main(args: Array[String]): Unit = args.toList match {
    case "bench-table" :: warehouse :: rows :: out :: Nil =>
      val start = System.nanoTime()
      val path = benchTable(warehouse, rows.toLong)
      Files.write(Paths.get(out), mapper.writeValueAsBytes(mapper.createObjectNode().put("path", path).put("seconds", (System.nanoTime() - start) / 1e9)))
    case "bench-rewrite" :: path :: out :: options =>
      val seconds = benchRewrite(path, options.map(_.split("=", 2)).map(kv => kv(0) -> kv(1)).toMap)
      Files.write(Paths.get(out), mapper.writeValueAsBytes(mapper.createObjectNode().put("seconds", seconds)))
    case "create" :: kind :: seed :: warehouse :: name :: out :: options =>
      val changes = options.map(_.split("=", 2)).map(kv => kv(0) -> kv(1))
      val path = create(warehouse, name, kind, seed.toLong, o => changes.foldLeft(o) { case (acc, (k, v)) =>
        if (v == "-" && k.endsWith("*")) acc.filterNot(_._1.startsWith(k.stripSuffix("*")))
        else if (v == "-") acc - k
        else acc + (k -> v)
      })
      Files.write(Paths.get(out), mapper.writeValueAsBytes(mapper.createObjectNode().put("path", path)))
    case "answer" :: path :: out :: where =>
      Files.write(Paths.get(out), mapper.writeValueAsBytes(PaimonAnswers.answer(path, None, where.headOption)))
    case "write" :: path :: seed :: rows :: out :: Nil =>
      write(path, newRows(path, seed.toLong, rows.toInt))
      compact(path)
      Files.write(Paths.get(out), mapper.writeValueAsBytes(PaimonAnswers.answer(path, None, None)))
    case _ =>
      // thrown, not sys.exit: the mains also run inside a JVM that stays up (InProcess)
      throw new IllegalArgumentException("usage: PaimonWriteReference create KIND SEED WAREHOUSE NAME OUT.json [KEY=VALUE|KEY=- ...]" +
        " | answer TABLE OUT.json [CONDITION] | write TABLE SEED ROWS OUT.json | bench-table WAREHOUSE ROWS OUT.json" +
        " | bench-rewrite TABLE OUT.json [KEY=VALUE ...]")
  }
}
