package io.indexbridge.bench

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}

import com.fasterxml.jackson.databind.ObjectMapper
import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.fileindex.{ContainerEntry, FileIndexContainer, Op, RangeBitmapIndex}
import org.apache.paimon.data.BinaryString
import org.apache.paimon.fileindex.FileIndexer
import org.apache.paimon.fs.ByteArraySeekableStream
import org.apache.paimon.options.Options
import org.apache.paimon.predicate.FieldRef
import org.apache.paimon.types.{DataType, DataTypes}

/** The Scala half of `indexbridge bench fileindex`: building and querying bloom-filter, bitmap,
  * BSI and range-bitmap indexes (range-bitmap also with `<=` queries) with ours against Paimon 1.4.2's own writers and readers (`FileIndexer`), on
  * the columns the Python half wrote, best of `rounds` each after as many warm-up runs. It also writes Paimon's payload of
  * every (column, index) next to the column, so that the Python half compares its bytes too.
  *
  * Paimon is compiled against as a provided dependency and must be on the classpath at run time
  * (the bench adds the paimon-bundle jar scripts/bootstrap.sh fetches).
  *
  * Column files in `dir` (the Python half's layout): `NAME.valid` one byte per row (0 = null);
  * `NAME.longs` int64 LE per row, or `NAME.offsets` int32 LE (rows + 1) with `NAME.utf8`.
  * `NAME.literals` int64 LE row numbers whose values the equality queries ask for. */
object FileIndexBench {
  private final case class Column(name: String, sqlType: String, ours: Array[Any], paimon: Array[AnyRef], literals: Array[Any], paimonLiterals: Array[AnyRef])

  /** The best of `rounds` timed runs, after as many untimed runs that warm the JIT up (with one,
    * whichever side runs first in a fresh JVM loses: measured up to 4x). */
  private def best(rounds: Int)(body: => Unit): Double = {
    (1 to rounds).foreach(_ => body)
    (1 to rounds).map { _ => val t0 = System.nanoTime(); body; (System.nanoTime() - t0) / 1e9 }.min
  }

  private def littleEndian(path: Path): ByteBuffer = ByteBuffer.wrap(Files.readAllBytes(path)).order(ByteOrder.LITTLE_ENDIAN)

  private def readColumn(dir: Path, name: String, sqlType: String): Column = {
    val valid = Files.readAllBytes(dir.resolve(s"$name.valid"))
    val rows = valid.length
    val (ours, paimon): (Array[Any], Array[AnyRef]) =
      if (Files.exists(dir.resolve(s"$name.utf8"))) {
        val offsets = littleEndian(dir.resolve(s"$name.offsets"))
        val utf8 = Files.readAllBytes(dir.resolve(s"$name.utf8"))
        val strings = Array.tabulate[String](rows) { i =>
          if (valid(i) == 0) null else new String(utf8, offsets.getInt(4 * i), offsets.getInt(4 * i + 4) - offsets.getInt(4 * i), StandardCharsets.UTF_8)
        }
        (strings.map(s => s: Any), strings.map(s => if (s == null) null else BinaryString.fromString(s)))
      } else {
        val longs = littleEndian(dir.resolve(s"$name.longs"))
        val values: Array[Any] = Array.tabulate(rows) { i =>
          val v = longs.getLong(8 * i)
          if (valid(i) == 0) null else if (sqlType == "INT") Int.box(v.toInt) else Long.box(v)
        }
        (values, values.map(_.asInstanceOf[AnyRef]))
      }
    val literalRows = littleEndian(dir.resolve(s"$name.literals"))
    val picked = Array.tabulate(literalRows.remaining / 8)(i => literalRows.getLong(8 * i).toInt)
    Column(name, sqlType, ours, paimon, picked.map(ours(_)), picked.map(paimon(_)))
  }

  private def paimonType(sql: String): DataType = sql match {
    case "INT"    => DataTypes.INT()
    case "BIGINT" => DataTypes.BIGINT()
    case _        => DataTypes.STRING()
  }

  /** `columns`: JSON `[{"name", "type", "indexes": [index type...], "options": {index type: {k: v}}}]`.
    * Returns JSON rows `{column, index_type, rows, build_ours_s, build_paimon_s, query_ours_s,
    * query_paimon_s, queries, bytes_equal}`. */
  def run(dirName: String, columnsJson: String, rounds: Int): String = {
    val dir = Paths.get(dirName)
    val mapper = new ObjectMapper()
    val out = mapper.createArrayNode()
    mapper.readTree(columnsJson).forEach { spec =>
      val column = readColumn(dir, spec.path("name").asText, spec.path("type").asText)
      val t = KeyType.parse(column.sqlType)
      val dataType = paimonType(column.sqlType)
      val ref = new FieldRef(0, column.name, dataType)
      spec.path("indexes").forEach { indexNode =>
        val indexType = indexNode.asText
        val options = scala.collection.mutable.Map.empty[String, String]
        spec.path("options").path(indexType).properties.forEach(e => options(e.getKey) = e.getValue.asText)
        val paimonOptions = new Options()
        options.foreach { case (k, v) => paimonOptions.set(k, v) }
        var theirBytes: Array[Byte] = null
        val buildPaimon = best(rounds) {
          val w = FileIndexer.create(indexType, dataType, paimonOptions).createWriter()
          column.paimon.foreach(v => w.writeRecord(v))
          theirBytes = w.serializedBytes()
        }
        var ourBytes: Array[Byte] = null
        val buildOurs = best(rounds) {
          val w = FileIndexContainer.writer(indexType, t, options.toMap)
          column.ours.foreach(w.write)
          ourBytes = w.serialize()
        }
        Files.write(dir.resolve(s"${column.name}.$indexType.paimon"), theirBytes)
        // open the payload, then ask every literal (Paimon: `visit`, ours: `op`)
        def paimonQueries(visit: (org.apache.paimon.fileindex.FileIndexReader, AnyRef) => org.apache.paimon.fileindex.FileIndexResult) = best(rounds) {
          val r = FileIndexer.create(indexType, dataType, paimonOptions).createReader(new ByteArraySeekableStream(theirBytes), 0, theirBytes.length)
          column.paimonLiterals.foreach(l => visit(r, l).remain())
        }
        def ourQueries(op: Op) = best(rounds) {
          val r = FileIndexContainer.reader(ContainerEntry(column.name, indexType, 0, ourBytes.length), t, ourBytes, "bench")
          column.literals.foreach(l => r.evaluate(op, Seq(l)).remain)
        }
        val queryPaimon = paimonQueries(_.visitEqual(ref, _))
        val queryOurs = ourQueries(Op.Equal)
        val row = out.addObject().put("column", column.name).put("index_type", indexType).put("rows", column.ours.length)
          .put("build_ours_s", buildOurs).put("build_paimon_s", buildPaimon)
          .put("query_ours_s", queryOurs).put("query_paimon_s", queryPaimon).put("queries", column.literals.length)
          .put("bytes_equal", java.util.Arrays.equals(ourBytes, theirBytes))
        if (indexType == RangeBitmapIndex.Identifier) {
          row.put("range_ours_s", ourQueries(Op.LessOrEqual)).put("range_paimon_s", paimonQueries(_.visitLessOrEqual(ref, _)))
        }
      }
    }
    mapper.writeValueAsString(out)
  }
}
