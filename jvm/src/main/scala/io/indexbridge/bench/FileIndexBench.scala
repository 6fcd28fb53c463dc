package io.indexbridge.bench

import java.nio.{ByteBuffer, ByteOrder}
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
  * the columns the Python half wrote (strings as UTF-8 bytes on both sides), best of `rounds` each ([[best]]). It also writes Paimon's payload of
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

  /** The best of `rounds` timed runs of each side, after untimed runs of both that warm the JIT
    * up: `rounds` of them, and more (up to 200) for up to a second (200 queries of a
    * bloom filter take microseconds: five runs leave both sides interpreted, timing the JIT rather
    * than the code; with one run, whichever side runs first in a fresh JVM loses: measured up to 4x).
    * The sides alternate, so a change in machine load hits both, and every timed run starts after
    * a full GC, so neither side pays for the other's garbage. A body shorter than [[MinSampleNanos]]
    * (the last warm-up run tells) is timed in samples that repeat it to span that long, and its
    * time is a sample's over its repeats: one run of a fraction of a millisecond, just after a
    * full GC, swung rows' ratios from met to 2x between runs. Returns (Paimon, ours) seconds. */
  private def best(rounds: Int)(paimon: => Unit)(ours: => Unit): (Double, Double) = {
    val warm = System.nanoTime() + 1000000000L
    var (runs, last) = (0, 0L)
    while (runs < rounds || (runs < 200 && System.nanoTime() < warm)) {
      val t0 = System.nanoTime(); paimon; ours; last = System.nanoTime() - t0; runs += 1
    }
    val repeats = math.max(1L, 2 * MinSampleNanos / math.max(last, 1L)).toInt // `last` is both sides' run
    def timed(body: => Unit): Double = {
      System.gc()
      val t0 = System.nanoTime()
      var i = 0
      while (i < repeats) { body; i += 1 }
      (System.nanoTime() - t0) / 1e9 / repeats
    }
    val times = (1 to rounds).map(_ => (timed(paimon), timed(ours)))
    (times.map(_._1).min, times.map(_._2).min)
  }

  /** The least span of one timed sample of [[best]]. */
  private val MinSampleNanos = 20000000L

  private def littleEndian(path: Path): ByteBuffer = ByteBuffer.wrap(Files.readAllBytes(path)).order(ByteOrder.LITTLE_ENDIAN)

  private def readColumn(dir: Path, name: String, sqlType: String): Column = {
    val valid = Files.readAllBytes(dir.resolve(s"$name.valid"))
    val rows = valid.length
    val (ours, paimon): (Array[Any], Array[AnyRef]) =
      if (Files.exists(dir.resolve(s"$name.utf8"))) {
        val offsets = littleEndian(dir.resolve(s"$name.offsets"))
        val utf8 = Files.readAllBytes(dir.resolve(s"$name.utf8"))
        // both sides get the UTF-8 bytes, encoded before the timing: Paimon's BinaryString holds
        // them, ours takes them as the UTF-8 `Array[Byte]` of a string (with `String`s ours would
        // also time the encoding Paimon's values had already been through)
        val strings = Array.tabulate[Array[Byte]](rows) { i =>
          if (valid(i) == 0) null else java.util.Arrays.copyOfRange(utf8, offsets.getInt(4 * i), offsets.getInt(4 * i + 4))
        }
        (strings.map(s => s: Any), strings.map(s => if (s == null) null else BinaryString.fromBytes(s)))
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

  /** One (column, index type) of the bench: each side's build and queries, the same work on both. */
  private final class Row(val column: Column, val indexType: String, options: Map[String, String]) {
    private val t = KeyType.parse(column.sqlType)
    private val dataType = paimonType(column.sqlType)
    private val ref = new FieldRef(0, column.name, dataType)
    private val paimonOptions = new Options()
    options.foreach { case (k, v) => paimonOptions.set(k, v) }

    def buildPaimon(): Array[Byte] = {
      val w = FileIndexer.create(indexType, dataType, paimonOptions).createWriter()
      column.paimon.foreach(v => w.writeRecord(v))
      w.serializedBytes()
    }

    def buildOurs(): Array[Byte] = {
      val w = FileIndexContainer.writer(indexType, t, options)
      column.ours.foreach(w.write)
      w.serialize()
    }

    /** Opens Paimon's payload, then asks every literal `range` (`<=`) or equality. */
    def queryPaimon(payload: Array[Byte], range: Boolean): Unit = {
      val r = FileIndexer.create(indexType, dataType, paimonOptions).createReader(new ByteArraySeekableStream(payload), 0, payload.length)
      column.paimonLiterals.foreach(l => (if (range) r.visitLessOrEqual(ref, l) else r.visitEqual(ref, l)).remain())
    }

    def queryOurs(payload: Array[Byte], range: Boolean): Unit = {
      val r = FileIndexContainer.reader(ContainerEntry(column.name, indexType, 0, payload.length), t, payload, "bench")
      val op = if (range) Op.LessOrEqual else Op.Equal
      column.literals.foreach(l => r.evaluate(op, Seq(l)).remain)
    }
  }

  private def rowsOf(dir: Path, spec: com.fasterxml.jackson.databind.JsonNode): Iterator[Row] = {
    val column = readColumn(dir, spec.path("name").asText, spec.path("type").asText)
    val indexes = scala.collection.mutable.ArrayBuffer.empty[String]
    spec.path("indexes").forEach(n => indexes += n.asText)
    indexes.iterator.map { indexType =>
      val options = scala.collection.mutable.Map.empty[String, String]
      spec.path("options").path(indexType).properties.forEach(e => options(e.getKey) = e.getValue.asText)
      new Row(column, indexType, options.toMap)
    }
  }

  /** `columns`: JSON `[{"name", "type", "indexes": [index type...], "options": {index type: {k: v}}}]`.
    * Returns JSON rows `{column, index_type, rows, build_ours_s, build_paimon_s, query_ours_s,
    * query_paimon_s, queries, bytes_equal}`, range-bitmap rows also `range_ours_s, range_paimon_s`. */
  def run(dirName: String, columnsJson: String, rounds: Int): String = {
    val dir = Paths.get(dirName)
    val mapper = new ObjectMapper()
    val out = mapper.createArrayNode()
    mapper.readTree(columnsJson).forEach { spec =>
      rowsOf(dir, spec).foreach { row =>
        var theirBytes: Array[Byte] = null
        var ourBytes: Array[Byte] = null
        val (buildPaimon, buildOurs) = best(rounds) { theirBytes = row.buildPaimon() } { ourBytes = row.buildOurs() }
        Files.write(dir.resolve(s"${row.column.name}.${row.indexType}.paimon"), theirBytes)
        val (queryPaimon, queryOurs) = best(rounds)(row.queryPaimon(theirBytes, range = false))(row.queryOurs(ourBytes, range = false))
        val json = out.addObject().put("column", row.column.name).put("index_type", row.indexType).put("rows", row.column.ours.length)
          .put("build_ours_s", buildOurs).put("build_paimon_s", buildPaimon)
          .put("query_ours_s", queryOurs).put("query_paimon_s", queryPaimon).put("queries", row.column.literals.length)
          .put("bytes_equal", java.util.Arrays.equals(ourBytes, theirBytes))
        if (row.indexType == RangeBitmapIndex.Identifier) {
          val (rangePaimon, rangeOurs) = best(rounds)(row.queryPaimon(theirBytes, range = true))(row.queryOurs(ourBytes, range = true))
          json.put("range_ours_s", rangeOurs).put("range_paimon_s", rangePaimon)
        }
      }
    }
    mapper.writeValueAsString(out)
  }

  /** The scale line: our writers and Paimon's over `small` and then `large` rows of a BIGINT
    * column of unique values (2% nulls), made on the fly so that only the index is held. Per
    * index type, size and side (ours, Paimon's, alternating): the best of `rounds` build times
    * with the garbage-collection time of that build, the heap the writer holds once every row is
    * in (after a full GC, above the heap before it) and the bytes the build allocates (this
    * thread, serialize included). Returns JSON rows `{index_type, rows, build_s, gc_s,
    * held_bytes, allocated_bytes}` for ours and the same keys prefixed `paimon_` for Paimon's;
    * `out_of_memory` / `paimon_out_of_memory` (the heap's size) instead for a side that ran out. */
  def scale(small: Int, large: Int, rounds: Int, indexTypes: Seq[String] = ScaleIndexTypes): String = {
    val memory = java.lang.management.ManagementFactory.getMemoryMXBean
    val threads = java.lang.management.ManagementFactory.getThreadMXBean.asInstanceOf[com.sun.management.ThreadMXBean]
    val collectors = java.lang.management.ManagementFactory.getGarbageCollectorMXBeans
    def heapUsed(): Long = { System.gc(); memory.getHeapMemoryUsage.getUsed }
    def gcMillis(): Long = { var t = 0L; collectors.forEach(c => t += math.max(0L, c.getCollectionTime)); t }
    val mapper = new ObjectMapper()
    val out = mapper.createArrayNode()
    for (indexType <- indexTypes; rows <- Seq(small, large).distinct) {
      val options = if (indexType == "bloom-filter") Map("items" -> rows.toString) else Map.empty[String, String]
      val paimonOptions = new Options()
      options.foreach { case (k, v) => paimonOptions.set(k, v) }
      // one side's writer: write(value or null), then serialize
      final class Side(val prefix: String, open: () => (AnyRef => Unit, () => Array[Byte])) {
        var held, allocated = 0L
        var outOfMemory = false
        val times = scala.collection.mutable.ArrayBuffer.empty[(Double, Double)]
        def build(measure: Boolean): Unit = {
          val before = if (measure) heapUsed() else 0L
          val allocatedBefore = threads.getCurrentThreadAllocatedBytes
          val (write, serialize) = open()
          var i = 0
          while (i < rows) {
            // an odd multiplier permutes the longs: every value distinct
            write(if (i % 50 == 7) null else Long.box(i * 0x9e3779b97f4a7c15L))
            i += 1
          }
          if (measure) held = heapUsed() - before
          serialize()
          allocated = threads.getCurrentThreadAllocatedBytes - allocatedBefore
        }
        def timed(): Unit = {
          System.gc()
          val (t0, gc0) = (System.nanoTime(), gcMillis())
          build(measure = false)
          times += (((System.nanoTime() - t0) / 1e9, (gcMillis() - gc0) / 1e3))
        }
      }
      val ours = new Side("", () => {
        val w = FileIndexContainer.writer(indexType, KeyType.BigIntType, options)
        (v => w.write(v), () => w.serialize())
      })
      val paimon = new Side("paimon_", () => {
        val w = FileIndexer.create(indexType, DataTypes.BIGINT(), paimonOptions).createWriter()
        (v => w.writeRecord(v), () => w.serializedBytes())
      })
      val row = out.addObject().put("index_type", indexType).put("rows", rows)
      // a side that runs out of heap (Paimon's bitmap writers at 10M unique values hold ~2 GiB) is
      // left out of the rounds that follow; the other side goes on
      def attempt(side: Side)(body: => Unit): Unit =
        if (!side.outOfMemory) try body catch { case _: OutOfMemoryError => side.outOfMemory = true }
      Seq(ours, paimon).foreach(side => attempt(side)(side.build(measure = true)))
      (1 to rounds).foreach { _ => Seq(ours, paimon).foreach(side => attempt(side)(side.timed())) }
      for (side <- Seq(ours, paimon)) {
        if (side.outOfMemory) row.put(side.prefix + "out_of_memory", memory.getHeapMemoryUsage.getMax)
        else {
          val (time, gc) = side.times.minBy(_._1)
          row.put(side.prefix + "build_s", time).put(side.prefix + "gc_s", gc)
            .put(side.prefix + "held_bytes", side.held).put(side.prefix + "allocated_bytes", side.allocated)
        }
      }
    }
    mapper.writeValueAsString(out)
  }

  private val ScaleIndexTypes = Seq("bloom-filter", "bitmap", "bsi", RangeBitmapIndex.Identifier)

  /** `FileIndexBench scale SMALL LARGE ROUNDS [INDEX_TYPE...]` prints [[scale]]'s JSON (the bench
    * runs it in a JVM of its own, with a heap of its own; one index type and SMALL = LARGE for a
    * profiler). Otherwise a profiling loop over one row of the bench
    * (for JFR or async-profiler; prints ms per run):
    * `FileIndexBench DIR COLUMNS_JSON COLUMN INDEX_TYPE ours|paimon build|query|range SECONDS`,
    * with DIR and COLUMNS_JSON as [[run]] takes them. */
  def main(args: Array[String]): Unit =
    if (args.headOption.contains("scale"))
      println(scale(args(1).toInt, args(2).toInt, args(3).toInt, if (args.length > 4) args.drop(4).toSeq else ScaleIndexTypes))
    else profile(args)

  private def profile(args: Array[String]): Unit = {
    val Array(dirName, columnsJson, columnName, indexType, side, what, seconds) = args
    val dir = Paths.get(dirName)
    val spec = new ObjectMapper().readTree(columnsJson).elements()
    var row: Row = null
    while (row == null && spec.hasNext) {
      val s = spec.next()
      if (s.path("name").asText == columnName) row = rowsOf(dir, s).find(_.indexType == indexType).orNull
    }
    require(row != null, s"no $columnName/$indexType in $columnsJson")
    val ours = side == "ours"
    val payload = if (ours) row.buildOurs() else row.buildPaimon()
    val body: () => Unit = what match {
      case "build" => () => if (ours) row.buildOurs() else row.buildPaimon()
      case _       => () => if (ours) row.queryOurs(payload, what == "range") else row.queryPaimon(payload, what == "range")
    }
    val until = System.nanoTime() + (seconds.toDouble * 1e9).toLong
    var runs = 0
    var fastest = Double.MaxValue
    while (System.nanoTime() < until) {
      val t0 = System.nanoTime(); body(); fastest = math.min(fastest, (System.nanoTime() - t0) / 1e6); runs += 1
    }
    println(f"$columnName $indexType $side $what: $runs runs, fastest $fastest%.2f ms")
  }
}
