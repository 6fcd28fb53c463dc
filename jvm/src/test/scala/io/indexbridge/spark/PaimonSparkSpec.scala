package io.indexbridge.spark

import java.time.{Instant, LocalDate, LocalDateTime, LocalTime, ZoneOffset}
import java.time.format.DateTimeFormatter
import java.util.Base64

import scala.jdk.CollectionConverters._
import scala.util.chaining._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}
import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.table.{DataType => PaimonType, FileStoreTable, PaimonWriteFixtures, ReferenceTables}
import io.indexbridge.paimon.table.ReferenceTables.{mapper, Read, Table}
import io.indexbridge.reference.PaimonTables
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.functions.expr
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/** The Spark read of real Paimon tables against Paimon 1.4.2's own reader: for the generated
  * tables of [[ReferenceTables]] and every read Paimon answered (latest and older snapshots,
  * generated conditions), `Paimon.read` returns Paimon's rows (as multisets, rendered to the
  * canonical JSON here), and `Paimon.plan` reports Paimon's file-index verdicts and which files
  * its reader opened. What Spark cannot hold (TIMESTAMP(7..9)) or read (ORC files) is refused
  * with the library error, and the rest of such a table is still compared. */
class PaimonSparkSpec extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark = SparkSession.builder().master("local[2]").appName("PaimonSparkSpec")
    .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
    .config("spark.sql.session.timeZone", "UTC").config("spark.sql.datetime.java8API.enabled", "true")
    .config("spark.sql.extensions", classOf[IndexBridgeExtensions].getName) // whichever spec's session is reused has the functions
    .getOrCreate().tap(_.sparkContext.setLogLevel("ERROR"))

  override def afterAll(): Unit = spark.stop()

  private val nodes = JsonNodeFactory.instance
  private val micros = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSS")

  /** A Spark value of a column of Paimon type `t` in the canonical JSON of
    * [[io.indexbridge.reference.Canonical]] (TIME arrives as milliseconds of the day). */
  private def canonical(t: PaimonType, v: Any): JsonNode = (t, v) match {
    case (_, null) => nodes.nullNode()
    case (PaimonType.Atomic(k, _), _) =>
      (k, v) match {
        case (KeyType.TimeType(_), ms: Int)    => nodes.textNode(LocalTime.ofNanoOfDay(ms * 1000000L).format(DateTimeFormatter.ofPattern("HH:mm:ss.SSS")))
        case (_, b: Boolean)                   => nodes.booleanNode(b)
        case (_, n: Byte)                      => nodes.numberNode(n.toInt)
        case (_, n: Short)                     => nodes.numberNode(n.toInt)
        case (_, n: Int)                       => nodes.numberNode(n)
        case (_, n: Long)                      => nodes.numberNode(n)
        case (_, f: Float) if f.isNaN || f.isInfinite   => nodes.textNode(if (f.isNaN) "NaN" else if (f > 0) "Infinity" else "-Infinity")
        case (_, f: Float)                     => nodes.numberNode(f)
        case (_, d: Double) if d.isNaN || d.isInfinite  => nodes.textNode(if (d.isNaN) "NaN" else if (d > 0) "Infinity" else "-Infinity")
        case (_, d: Double)                    => nodes.numberNode(d)
        case (_, d: java.math.BigDecimal)      => nodes.textNode(d.toPlainString)
        case (_, s: String)                    => nodes.textNode(s)
        case (_, b: Array[Byte])               => nodes.textNode(Base64.getEncoder.encodeToString(b))
        case (_, d: LocalDate)                 => nodes.textNode(d.toString)
        case (_, ts: LocalDateTime)            => nodes.textNode(ts.format(micros))
        case (_, i: Instant)                   => nodes.textNode(LocalDateTime.ofInstant(i, ZoneOffset.UTC).format(micros) + "Z")
        case other                             => fail(s"no canonical form for $other")
      }
    case (PaimonType.Array(e, _), s: scala.collection.Seq[_]) => nodes.arrayNode().tap(a => s.foreach(x => a.add(canonical(e, x))))
    case (PaimonType.Map(PaimonType.Atomic(_: KeyType.VarCharType | _: KeyType.CharType, _), value, _), m: scala.collection.Map[_, _]) =>
      nodes.objectNode().tap(o => m.foreach { case (key, x) => o.set[JsonNode](key.toString, canonical(value, x)) })
    case (PaimonType.Row(fields, _), r: Row) =>
      nodes.objectNode().tap(o => fields.zipWithIndex.foreach { case (f, i) => o.set[JsonNode](f.name, canonical(f.dataType, r.get(i))) })
    case other => fail(s"no canonical form for $other")
  }

  /** A JSON value with object keys sorted, as text: multisets of rows compare as sorted lists. */
  private def normalized(node: JsonNode): String = {
    def sort(n: JsonNode): JsonNode = n match {
      case o: ObjectNode =>
        nodes.objectNode().tap(out => o.fieldNames.asScala.toSeq.sorted.foreach(k => out.set[JsonNode](k, sort(o.get(k)))))
      case a if a.isArray => nodes.arrayNode().tap(out => a.elements.asScala.foreach(e => out.add(sort(e))))
      case other => other
    }
    mapper.writeValueAsString(sort(mapper.readTree(mapper.writeValueAsString(node))))
  }

  private def rows(t: Table, snapshot: Option[Long], where: Option[String], columns: Seq[String]): Seq[String] =
    canonicalRows(t, snapshot, columns, Paimon.read(spark, t.path, snapshot, where, Some(columns)))

  private def canonicalRows(t: Table, snapshot: Option[Long], columns: Seq[String], df: org.apache.spark.sql.DataFrame): Seq[String] = {
    val schema = FileStoreTable.open(t.path, snapshot).schema
    df.collect().toSeq.map { r =>
      normalized(nodes.objectNode().tap(o => columns.zipWithIndex.foreach { case (c, i) => o.set[JsonNode](c, canonical(schema.field(c).dataType, r.get(i))) }))
    }.sorted
  }

  private def expected(read: Read, columns: Seq[String]): Seq[String] =
    read.answer.get("rows").elements.asScala.toSeq.map { r =>
      normalized(nodes.objectNode().tap(o => columns.foreach(c => o.set[JsonNode](c, r.get(c)))))
    }.sorted

  /** Columns Spark holds exactly, and whether the table's files are Parquet. */
  private def sparkColumns(path: String, snapshot: Option[Long]): (Seq[String], Seq[String]) =
    FileStoreTable.open(path, snapshot).schema.fields.partition(f => Paimon.sparkType(f.dataType).isRight)
      .pipe { case (ok, refused) => (ok.map(_.name), refused.map(_.name)) }

  /** The unfiltered reads (latest, older snapshot) and the first generated conditions of each table. */
  private val readsPerTable = 6

  private def parquet(t: Table): Boolean = !FileStoreTable.open(t.path).schema.options.get("file.format").contains("orc")

  for (kind <- PaimonTables.Kinds) {
    test(s"$kind: Paimon.read returns Paimon's rows; Paimon.plan its verdicts and the files it opened") {
      var compared, refused = 0
      for (t <- ReferenceTables.tables.filter(_.kind == kind); read <- t.reads.take(readsPerTable)) {
        withClue(s"${t.name} (seed ${t.seed}) snapshot ${read.answer.get("snapshot")} where ${read.where.getOrElse("-")}: ") {
          val (ok, unrepresentable) = sparkColumns(t.path, read.snapshot)
          val all = FileStoreTable.open(t.path, read.snapshot).schema.fieldNames
          val touchesRefused = read.where.exists(w => unrepresentable.exists(c => w.contains(s"`$c`")))
          if (!parquet(t)) {
            val e = intercept[IndexFormatException](Paimon.read(spark, t.path, read.snapshot, read.where, Some(ok)))
            assert(e.expected.contains("Parquet"))
            refused += 1
          } else if (touchesRefused) {
            val e = intercept[IndexFormatException](Paimon.read(spark, t.path, read.snapshot, read.where, Some(ok)))
            assert(unrepresentable.exists(c => e.expected.contains(s"'$c'")))
            refused += 1
          } else {
            if (unrepresentable.nonEmpty) {
              val e = intercept[IndexFormatException](Paimon.read(spark, t.path, read.snapshot, read.where, None))
              assert(e.expected.contains(s"'${unrepresentable.head}'") || unrepresentable.exists(c => e.expected.contains(s"'$c'")))
            }
            assert(rows(t, read.snapshot, read.where, ok) == expected(read, ok))
            assert(ok.size + unrepresentable.size == all.size)
            compared += 1
          }
          if (read.where.isDefined && !touchesRefused) {
            val plan = Paimon.plan(spark, t.path, read.snapshot, read.where).collect()
            val inPlan = read.answer.get("plan").elements.asScala.flatMap(_.get("files").elements.asScala.map(_.get("file").asText)).toSet
            val verdicts = read.answer.get("index_results").fields.asScala.map(e => e.getKey -> e.getValue.asText).toMap
            val opened = read.answer.get("files_read").elements.asScala.map(_.asText).toSet
            for (r <- plan) {
              val file = r.getAs[String]("file")
              if (inPlan.contains(file) && r.getAs[Row]("file_index") != null) assert(r.getAs[String]("index_result") == verdicts(file), file)
              assert(r.getAs[Boolean]("read") == opened.contains(file), file)
            }
            assert(plan.count(_.getAs[Boolean]("read")) == opened.size)
          }
        }
      }
      info(s"$compared reads compared row for row, $refused refused (ORC files or TIMESTAMP(7..9) in the condition)")
      assert(compared > 0)
    }
  }

  test("Paimon.plan: one row per data file with its deletion vector and file index, as the table layer sees them") {
    for (t <- ReferenceTables.tables) withClue(t.name) {
      val table = FileStoreTable.open(t.path)
      val files = table.plan(None).files
      val rows = Paimon.plan(spark, t.path).collect()
      assert(rows.map(_.getAs[String]("file")).toSeq == files.map(_.name))
      for ((r, f) <- rows.zip(files)) {
        assert(r.getAs[Int]("level") == f.meta.level && r.getAs[Long]("row_count") == f.meta.rowCount && r.getAs[Long]("schema_id") == f.meta.schemaId)
        val dv = Option(r.getAs[Row]("deletion_vector"))
        assert(dv.map(d => (d.getAs[String]("index_file"), d.getAs[Int]("offset"), d.getAs[Int]("length"))) ==
          f.deletionFile.map(d => (d.path.getFileName.toString, d.offset, d.length)))
        val index = Option(r.getAs[Row]("file_index"))
        assert(index.map(_.getAs[Boolean]("embedded")) == (if (f.meta.embeddedIndex.isDefined) Some(true) else f.indexFile.map(_ => false)))
        index.foreach(i => assert(i.getAs[scala.collection.Map[String, Seq[String]]]("indexes").nonEmpty))
      }
    }
  }

  test("a Column condition reads what the same condition as text reads") {
    // the first read of a Parquet table with a condition that matches rows and names only columns Spark holds
    val (t, read) = ReferenceTables.tables.iterator.filter(parquet).flatMap(t => t.reads.find(r => r.where.isDefined &&
      r.answer.get("rows").size > 0 && !sparkColumns(t.path, None)._2.exists(c => r.where.get.contains(s"`$c`"))).map(t -> _))
      .nextOption().getOrElse(fail("no reference table has a condition to read"))
    val table = FileStoreTable.open(t.path)
    val ok = sparkColumns(t.path, None)._1
    val byColumn = canonicalRows(t, None, ok, Paimon.read(spark, t.path, None, expr(read.where.get), Some(ok)))
    assert(byColumn == expected(read, ok))
    val byColumnPlan = Paimon.plan(spark, t.path, None, expr(read.where.get)).collect().map(r => r.getAs[Boolean]("read")).toSeq
    val byTextPlan = Paimon.plan(spark, t.path, None, read.where).collect().map(r => r.getAs[Boolean]("read")).toSeq
    assert(byTextPlan.zip(byColumnPlan).forall { case (text, column) => !text || column }) // Spark's analysis never prunes more
    assert(table.schema.fieldNames.nonEmpty)
  }

  test("a deletion vector range past the end of its deletion file fails the read naming the file") {
    val path = PaimonWriteFixtures.withDeletionFile
    val dir = ReferenceTables.copy(path)
    val dv = FileStoreTable.open(dir.toString).plan(None).files.flatMap(_.deletionFile).head
    val bytes = java.nio.file.Files.readAllBytes(dv.path)
    java.nio.file.Files.write(dv.path, bytes.take(dv.offset + dv.length / 2))
    val ok = sparkColumns(path, None)._1
    val e = intercept[Exception](Paimon.read(spark, dir.toString, None, None, Some(ok)).collect())
    val cause = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).collectFirst { case f: IndexFormatException => f }
    assert(cause.exists(_.source == dv.path.toString), e.toString)
  }
}
