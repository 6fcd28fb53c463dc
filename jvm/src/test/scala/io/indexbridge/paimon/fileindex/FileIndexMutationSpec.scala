package io.indexbridge.paimon.fileindex

import java.nio.ByteBuffer

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import io.indexbridge.conformance.FileIndexConformance
import io.indexbridge.paimon.{KeyType, MutationSpec, PaimonVectors}
import io.indexbridge.paimon.MutationSpec.{guarded, mutations, roaringFields, Field}
import org.scalatest.funsuite.AnyFunSuite

/** Every field of every bloom / bitmap / bsi / fileindex vector (of a long header: the first 16,
  * the last and a seeded sample, as [[io.indexbridge.paimon.MutationSpec.mutations]] selects them),
  * flipped, filled, inflated and truncated: reading it and asking every question either works or throws IndexFormatException —
  * nothing else, and parsing plus the row-set answers never allocate more than the input
  * justifies. (Complements — not_equal, is_not_null, is_null of a BSI — are asked outside the
  * allocation budget: a few bytes may honestly claim 2^31 rows, and the answer is that big.) */
class FileIndexMutationSpec extends AnyFunSuite {
  private val complements: Set[Op] = Set(Op.NotEqual, Op.NotIn, Op.IsNotNull, Op.IsNull)

  /** Every question of the vector's queries (literals of the column type). */
  private def ask(what: String, input: Array[Byte], reader: FileIndexReader, questions: Seq[(Op, Seq[Any])]): Unit =
    for ((op, literals) <- questions) guarded(s"$what: $op", input, budget = !complements(op))(reader.evaluate(op, literals))

  private def questions(json: JsonNode, t: KeyType, column: Option[String] = None): Seq[(Op, Seq[Any])] =
    json.path("queries").asScala.toList
      .filter(q => column.forall(_ == q.path("column").asText))
      .map(q => Op.parse(q.path("op").asText) -> q.path("literals").asScala.toList.map(FileIndexConformance.valueOf(_, t)))
      .distinct.take(12)

  private def i32(b: Array[Byte], p: Int) = ByteBuffer.wrap(b).getInt(p)

  /** Fields of a payload of `indexType` at `start` (for a valid payload). */
  private def payloadFields(indexType: String, t: KeyType, b: Array[Byte], start: Int, end: Int): Seq[Field] = {
    val f = ArrayBuffer.empty[Field]
    def field(p: Int, n: Int, name: String, numeric: Boolean = true) = { f += Field(p, n, name, numeric); p + n }
    def key(p: Int, name: String): Int =
      if (IndexValue.isBytes(t)) { val n = i32(b, p); field(field(p, 4, s"$name length"), n, name, numeric = false) }
      else field(p, IndexValue.keyWidth(t), name)
    def roarings(from: Int, until: Int): Unit = { var p = from; while (p < until) p = roaringFields(b, p, f) }
    indexType match {
      case BloomFilterIndex.Identifier =>
        field(start, 4, "numHashes")
        for (p <- Seq(start + 4, (start + end) / 2, end - 1).distinct if p >= start + 4 && p < end) field(p, 1, s"bits byte $p", numeric = false)
      case BitmapIndex.Identifier =>
        val version = b(start)
        var p = field(start, 1, "version")
        p = field(p, 4, "rowCount")
        val keys = i32(b, p)
        p = field(p, 4, "nonNullBitmapNumber")
        val hasNull = b(p) != 0
        p = field(p, 1, "hasNull")
        if (hasNull) { p = field(p, 4, "nullOffset"); if (version == 2) p = field(p, 4, "nullBitmapLength") }
        if (version == 1) for (i <- 0 until keys) p = field(key(p, s"key $i"), 4, s"offset $i")
        else {
          val blocks = i32(b, p)
          p = field(p, 4, "blockCount")
          for (i <- 0 until blocks) p = field(key(p, s"first key of block $i"), 4, s"blockOffset $i")
          val blocksSize = i32(b, p)
          p = field(p, 4, "bitmapBodyOffset")
          val bodyStart = p + blocksSize
          while (p < bodyStart) {
            val n = i32(b, p)
            p = field(p, 4, "entryCount")
            for (i <- 0 until n) p = field(field(key(p, s"key $i"), 4, s"offset $i"), 4, s"length $i")
          }
        }
        roarings(p, end)
      case BitSliceIndex.Identifier =>
        var p = field(field(start, 1, "version"), 4, "rowCount")
        for (side <- Seq("positive", "negative")) {
          val has = b(p) != 0
          p = field(p, 1, s"has $side")
          if (has) {
            p = field(field(field(p, 1, s"$side version"), 8, s"$side min"), 8, s"$side max")
            p = roaringFields(b, p, f)
            val slices = i32(b, p)
            p = field(p, 4, s"$side sliceCount")
            for (_ <- 0 until slices) p = roaringFields(b, p, f)
          }
        }
    }
    f.toList
  }

  private def containerFields(b: Array[Byte], types: String => Option[KeyType]): Seq[Field] = {
    val f = ArrayBuffer(Field(0, 8, "magic", numeric = false), Field(8, 4, "version", numeric = true), Field(12, 4, "head_length", numeric = true),
      Field(16, 4, "column_count", numeric = true))
    val c = FileIndexContainer.read(b, "vector")
    var p = 20
    def utf(name: String) = { val n = ByteBuffer.wrap(b).getShort(p) & 0xffff; f += Field(p, 2, s"$name length", numeric = true); f += Field(p + 2, n, name, numeric = false); p += 2 + n }
    for (column <- c.columns) {
      utf(s"name of $column")
      val n = i32(b, p)
      f += Field(p, 4, s"index_count of $column", numeric = true)
      p += 4
      for (_ <- 0 until n) {
        utf("index type")
        f += Field(p, 4, "start", numeric = true)
        f += Field(p + 4, 4, "length", numeric = true)
        p += 8
      }
    }
    f += Field(p, 4, "redundant_length", numeric = true)
    for (e <- c.entries if !e.isEmpty; t <- types(e.column))
      f ++= payloadFields(e.indexType, t, b, e.start, e.start + e.length).map(x => x.copy(name = s"${e.column}/${e.indexType}: ${x.name}"))
    f.toList
  }

  private var decodes = 0L

  for (entry <- PaimonVectors.cases("bloom", "bitmap", "bsi", "fileindex"); (binName, original) <- PaimonVectors.binaries(entry)) {
    val json = PaimonVectors.json(entry)
    val format = entry.path("format").asText
    test(s"mutations of $binName") {
      val (fields, decode) = format match {
        case "fileindex" =>
          val fieldsOf = json.path("columns").asScala.toList.map { c =>
            val t = c.path("type")
            if (t.path("root").asText == "MAP") DataField(c.path("name").asText, FileIndexConformance.typeOf(t.path("value")), isMap = true)
            else DataField(c.path("name").asText, FileIndexConformance.typeOf(t))
          }
          val types = FileIndexPredicate.fieldTypes(fieldsOf)
          val columns = json.path("queries").asScala.map(_.path("column").asText).toList.distinct
          val decode = (what: String, bytes: Array[Byte]) =>
            guarded(s"$what: read", bytes, budget = true)(FileIndexContainer.read(bytes, "m")).foreach { c =>
              val predicate = new FileIndexPredicate(c, types)
              for (column <- columns; t <- types(column)) {
                val readers = guarded(s"$what: readers of $column", bytes, budget = true)(predicate.readersOf(column)).getOrElse(Nil)
                readers.foreach(r => ask(s"$what: $column", bytes, r, questions(json, t, Some(column))))
              }
            }
          (containerFields(original, types), decode)
        case _ =>
          val t = FileIndexConformance.typeOf(json.path("type"))
          val indexType = json.path("index_type").asText
          val qs = questions(json, t)
          val decode = (what: String, bytes: Array[Byte]) =>
            guarded(s"$what: read", bytes, budget = true)(FileIndexContainer.reader(ContainerEntry("c", indexType, 0, bytes.length), t, bytes, "m"))
              .foreach(r => ask(what, bytes, r, qs))
          (payloadFields(indexType, t, original, 0, original.length), decode)
      }
      def run(what: String, bytes: Array[Byte]): Unit = { decodes += 1; decode(what, bytes) }

      run("original", original)
      for ((what, bytes) <- mutations(binName, original, fields)) run(what, bytes)
      info(s"${fields.length} fields")
    }
  }
}
