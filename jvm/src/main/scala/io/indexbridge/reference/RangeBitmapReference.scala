package io.indexbridge.reference

import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode
import io.indexbridge.conformance.FileIndexConformance
import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.KeyType._
import io.indexbridge.paimon.fileindex.RangeBitmapIndex
import org.apache.paimon.data.{BinaryString, Decimal, Timestamp}
import org.apache.paimon.fileindex.{FileIndexResult, FileIndexer}
import org.apache.paimon.fileindex.bitmap.BitmapIndexResult
import org.apache.paimon.fs.ByteArraySeekableStream
import org.apache.paimon.options.Options
import org.apache.paimon.predicate.{FieldRef, SortValue, TopN}
import org.apache.paimon.types.DataTypeJsonParser
import org.apache.paimon.utils.RoaringBitmap32

/** Paimon 1.4.2's own `RangeBitmapFileIndex` writing and answering cases given as the range-bitmap
  * vectors' JSON (`type` with its `sql`, `options`, `values`, `queries` without answers), so that
  * tests outside the JVM compare with Paimon (Paimon's jar must be on the classpath).
  *
  * For `DIR/<case>.json` it writes `DIR/<case>.paimon.bin` (Paimon's payload) and
  * `DIR/<case>.scala.bin` (RangeBitmapIndex's), and returns JSON `{case: {"error"?: Paimon's
  * exception, "answers": [{result_kind, remain, rows?: {cardinality, ranges}}, ...]}}`. Only
  * paths and answers cross py4j. */
object RangeBitmapReference {
  private val mapper = new ObjectMapper

  def run(dirName: String): String = {
    val dir = Paths.get(dirName)
    val out = mapper.createObjectNode()
    Files.list(dir).iterator().asScala.filter(_.toString.endsWith(".json")).toList.sortBy(_.toString).foreach { path =>
      val json = mapper.readTree(path.toFile)
      val name = path.getFileName.toString.stripSuffix(".json")
      val t = FileIndexConformance.typeOf(json.path("type"))
      val paimonType = DataTypeJsonParser.parseAtomicTypeSQLString(json.path("type").path("sql").asText)
      val options = new Options()
      json.path("options").properties.forEach(e => options.set(e.getKey, e.getValue.asText))
      val values = json.path("values").asScala.toList.map(FileIndexConformance.valueOf(_, t))
      val result = out.putObject(name)
      try {
        val writer = FileIndexer.create(RangeBitmapIndex.Identifier, paimonType, options).createWriter()
        values.foreach(v => writer.writeRecord(paimon(v, t)))
        val bytes = writer.serializedBytes()
        Files.write(dir.resolve(s"$name.paimon.bin"), bytes)
        val reader = FileIndexer.create(RangeBitmapIndex.Identifier, paimonType, new Options()).createReader(new ByteArraySeekableStream(bytes), 0, bytes.length)
        val ref = new FieldRef(0, "c", paimonType)
        val answers = result.putArray("answers")
        for (q <- json.path("queries").asScala) {
          val lits = q.path("literals").asScala.toList.map(l => paimon(FileIndexConformance.valueOf(l, t), t))
          val answer = q.path("op").asText match {
            case "equal"            => reader.visitEqual(ref, lits.head)
            case "not_equal"        => reader.visitNotEqual(ref, lits.head)
            case "in"               => reader.visitIn(ref, lits.asJava)
            case "not_in"           => reader.visitNotIn(ref, lits.asJava)
            case "less_than"        => reader.visitLessThan(ref, lits.head)
            case "less_or_equal"    => reader.visitLessOrEqual(ref, lits.head)
            case "greater_than"     => reader.visitGreaterThan(ref, lits.head)
            case "greater_or_equal" => reader.visitGreaterOrEqual(ref, lits.head)
            case "between"          => reader.visitBetween(ref, lits(0), lits(1))
            case "is_null"          => reader.visitIsNull(ref)
            case "is_not_null"      => reader.visitIsNotNull(ref)
            case "top_n" =>
              val spec = q.path("top_n")
              val orders = spec.path("orders").asScala.toList.map { o =>
                new SortValue(ref, SortValue.SortDirection.valueOf(o.path("direction").asText), SortValue.NullOrdering.valueOf(o.path("null_ordering").asText))
              }
              val input = q.path("input")
              val found =
                if (input.path("result_kind").asText == "bitmap") {
                  val rows = input.path("rows").path("ranges").asScala.toList.flatMap(r => r.get(0).asInt until r.get(1).asInt)
                  new BitmapIndexResult(() => RoaringBitmap32.bitmapOf(rows: _*))
                } else FileIndexResult.REMAIN
              reader.visitTopN(new TopN(orders.asJava, spec.path("limit").asInt), found)
            case other => throw new IllegalArgumentException(s"unknown op $other")
          }
          put(answers.addObject(), answer)
        }
      } catch { case e: Exception => result.put("error", s"${e.getClass.getSimpleName}: ${e.getMessage}") }
      try Files.write(dir.resolve(s"$name.scala.bin"), RangeBitmapIndex.write(t, values, json.path("options").properties.asScala.map(e => e.getKey -> e.getValue.asText).toMap))
      catch { case e: Exception => result.put("scala_error", s"${e.getClass.getSimpleName}: ${e.getMessage}") }
    }
    mapper.writeValueAsString(out)
  }

  private def put(node: ObjectNode, r: FileIndexResult): Unit = r match {
    case b: BitmapIndexResult =>
      val rows = b.get()
      node.put("result_kind", "bitmap").put("remain", !rows.isEmpty)
      val set = node.putObject("rows").put("cardinality", rows.getCardinality)
      val ranges = set.putArray("ranges")
      var start, end = -1
      rows.iterator().asScala.foreach { i =>
        val row = i.intValue
        if (row != end) { if (start >= 0) ranges.addArray().add(start).add(end); start = row }
        end = row + 1
      }
      if (start >= 0) ranges.addArray().add(start).add(end)
    case x if x eq FileIndexResult.REMAIN => node.put("result_kind", "remain").put("remain", true)
    case _                                => node.put("result_kind", "skip").put("remain", false)
  }

  /** A value as IndexValue takes it, as Paimon's internal object. */
  private def paimon(v: Any, t: KeyType): AnyRef = (v, t) match {
    case (null, _)                                    => null
    case (s: String, _)                               => BinaryString.fromString(s)
    case (d: java.math.BigDecimal, DecimalType(p, s)) => Decimal.fromBigDecimal(d, p, s)
    case ((millis: Long, nanos: Int), _)              => Timestamp.fromEpochMillis(millis, nanos)
    case (other, _)                                   => other.asInstanceOf[AnyRef]
  }
}
