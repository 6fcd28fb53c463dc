package io.indexbridge.cli

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.fileindex._
import org.roaringbitmap.RoaringBitmap

/** `indexbridge inspect --engine jvm` for Paimon file indexes: the same JSON as Python's
  * `indexbridge.cli.fileindex` (whose docstring describes the fields, the type inference and
  * `--query`). */
object FileIndexInspect {
  private val mapper = new ObjectMapper()
  val ContainerMagic: Array[Byte] = java.nio.ByteBuffer.allocate(8).putLong(FileIndexContainer.Magic).array()
  val RawFormats: Set[String] = Set("bloom", "bitmap", "bsi", "range-bitmap")
  private val InferredBitmapTypes = Seq("BIGINT", "INT", "SMALLINT", "TINYINT", "STRING")
  private val ShownRanges = 16

  /** A condition whose literals do not fit the file's columns. */
  final class QueryException(message: String) extends IllegalArgumentException(message)

  def putSummary(node: ObjectNode, reader: FileIndexReader): ObjectNode = reader match {
    case r: BloomFilterIndex.Reader =>
      node.put("num_bits", r.numBits).put("num_hash_functions", r.numHashes).put("bits_set", r.bitsSet)
        .put("fill_ratio", r.bitsSet.toDouble / r.numBits)
    case r: BitmapIndex.Reader =>
      node.put("version", r.version).put("row_count", r.rowCount).put("distinct_values", r.keyCountInMeta)
        .put("null_rows", r.nullRows.getLongCardinality)
    case r: BitSliceIndex.Reader =>
      node.put("row_count", r.rowCount).put("non_null_rows", r.nonNull.getLongCardinality)
      r.valueRange match {
        case Some((low, high)) => node.put("min", low).put("max", high)
        case None              => node.putNull("min").putNull("max")
      }
      node.putObject("slices")
        .put("positive", if (r.hasPositive) r.positive.sliceCount else 0)
        .put("negative", if (r.hasNegative) r.negative.sliceCount else 0)
      node
    case r: RangeBitmapIndex.Reader =>
      val nonNull = r.isNotNull.getLongCardinality
      node.put("row_count", r.rowCount).put("distinct_values", r.cardinality).put("non_null_rows", nonNull)
        .put("null_rows", r.rowCount - nonNull)
      node.set[ObjectNode]("min", keyJson(r, r.min))
      node.set[ObjectNode]("max", keyJson(r, r.max))
      node.put("chunks", r.dictionary.chunkCount).put("slices", r.bsi.count)
    case _ => node
  }

  /** A range-bitmap key: integers as numbers, floats as raw bits `0x…`, booleans, strings. */
  private def keyJson(r: RangeBitmapIndex.Reader, key: Any): com.fasterxml.jackson.databind.JsonNode = {
    import RangeBitmapIndex.KeyKind._
    val f = mapper.getNodeFactory
    if (key == null) f.nullNode()
    else
      r.kind match {
        case Float32 => f.textNode(f"0x${key.asInstanceOf[Long]}%08x")
        case Float64 => f.textNode(f"0x${key.asInstanceOf[Long]}%016x")
        case Bool    => f.booleanNode(key == 1L)
        case Str     => f.textNode(new String(key.asInstanceOf[Array[Byte]], java.nio.charset.StandardCharsets.UTF_8))
        case _       => f.numberNode(key.asInstanceOf[Long])
      }
  }

  private def inferRangeBitmapType(bytes: Array[Byte], e: ContainerEntry, source: String): Option[String] =
    InferredBitmapTypes.find { sql =>
      try {
        val r = RangeBitmapIndex.read(KeyType.parse(sql), bytes, source, e.start, e.length)
        (0 until r.dictionary.chunkCount).foreach(r.dictionary.chunkKeys)
        true
      } catch { case _: IndexFormatException => false }
    }

  private def inferBitmapType(bytes: Array[Byte], e: ContainerEntry, source: String): Option[String] =
    InferredBitmapTypes.find { sql =>
      try {
        val r = BitmapIndex.read(KeyType.parse(sql), bytes, source, e.start, e.length)
        (r.keyRows ++ Iterator(r.nullRows)).forall(rows => rows.isEmpty || Integer.toUnsignedLong(rows.last) < r.rowCount)
      } catch { case _: IndexFormatException => false }
    }

  private def givenType(column: String, types: Map[String, String]): Option[String] =
    types.get(column).orElse {
      val top = column.takeWhile(_ != '[')
      if (top != column) types.get(top) else None
    }

  def rowsSummary(rows: RoaringBitmap): ObjectNode = {
    val node = mapper.createObjectNode().put("cardinality", rows.getLongCardinality)
    val ranges = node.putArray("ranges")
    var more = false
    var (start, end) = (-1L, -1L)
    val it = rows.getIntIterator
    while (it.hasNext && !more) {
      val r = Integer.toUnsignedLong(it.next())
      if (r != end) {
        if (start >= 0) ranges.addArray().add(start).add(end)
        if (ranges.size == ShownRanges) more = true
        start = r
      }
      end = r + 1
    }
    if (start >= 0 && !more) ranges.addArray().add(start).add(end)
    node.put("more_ranges", more)
  }

  private def query(text: String, lookup: String => Seq[FileIndexReader], types: String => Option[KeyType], source: String): ObjectNode = {
    val bound =
      try Condition.bind(Condition.parse(text, "--query"), types)
      catch { case e: IllegalArgumentException => throw new QueryException(s"$source: --query: ${e.getMessage} (pass --type COLUMN=TYPE)") }
    val result = new FileIndexPredicate(lookup).evaluate(bound)
    val node = mapper.createObjectNode().put("condition", text)
    node.set[ObjectNode]("predicate", Condition.predicateJson(bound))
    node.put("result", result match {
      case FileIndexResult.Remain  => "remain"
      case FileIndexResult.Skip    => "skip"
      case FileIndexResult.Rows(_) => "bitmap"
    }).put("remain", result.remain)
    result match {
      case FileIndexResult.Rows(rows) => node.set[ObjectNode]("rows", rowsSummary(rows))
      case _                          =>
    }
    node
  }

  private def columnsOf(p: Predicate): Seq[String] = p match {
    case Predicate.Leaf(_, column, _) => Seq(column)
    case Predicate.And(cs)            => cs.flatMap(columnsOf)
    case Predicate.Or(cs)             => cs.flatMap(columnsOf)
  }

  def describeContainer(node: ObjectNode, path: String, data: Array[Byte], types: Map[String, String], condition: Option[String]): ObjectNode = {
    val container = FileIndexContainer.read(data, path)
    node.put("format", "file-index").put("file_size", data.length).put("version", container.version)
      .put("head_length", container.headLength).put("redundant_length", container.redundantLength)
    val columns = node.putArray("columns")
    val typed = scala.collection.mutable.Map.empty[String, KeyType]
    for (column <- container.columns) {
      val entries = container.entries.filter(_.column == column)
      val (sql, typeSource) = givenType(column, types) match {
        case Some(given) => (Some(given), "given")
        case None =>
          val inferred = entries.find(e => e.indexType == BitmapIndex.Identifier && !e.isEmpty).flatMap(inferBitmapType(data, _, path))
            .orElse(entries.find(e => e.indexType == RangeBitmapIndex.Identifier && !e.isEmpty).flatMap(inferRangeBitmapType(data, _, path)))
            .orElse(if (entries.exists(e => e.indexType == BitSliceIndex.Identifier && !e.isEmpty)) Some("BIGINT") else None)
          (inferred, "inferred")
      }
      val t = sql.map(KeyType.parse)
      val c = columns.addObject().put("column", column)
      sql.fold(c.putNull("type").putNull("type_source"))(s => c.put("type", s).put("type_source", typeSource))
      val indexes = c.putArray("indexes")
      for (e <- entries) {
        val entry = indexes.addObject().put("index_type", e.indexType).put("start", e.start).put("length", e.length)
        if (e.isEmpty) entry.put("empty", true)
        else if (Set(BloomFilterIndex.Identifier, BitmapIndex.Identifier, BitSliceIndex.Identifier, RangeBitmapIndex.Identifier).contains(e.indexType))
          putSummary(entry, FileIndexContainer.reader(e, t.getOrElse(KeyType.BigIntType), data, path)) // a bloom filter reads the same whatever the type
      }
      val held = c.putArray("readers")
      container.held(column).foreach(e => held.add(if (e.isEmpty) "empty" else e.indexType))
      t.foreach(typed(column) = _)
    }
    condition.foreach { text =>
      node.set[ObjectNode]("query", query(text, column => typed.get(column).map(container.readers(column, _)).getOrElse(Nil), typed.get, path))
    }
    node
  }

  def describeRaw(node: ObjectNode, path: String, data: Array[Byte], format: String, typeSql: Option[String], condition: Option[String]): ObjectNode = {
    val sql = typeSql.getOrElse(throw new QueryException(s"$path: a raw $format payload needs --type TYPE (its column's data type)"))
    val t = KeyType.parse(sql)
    val reader = format match {
      case "bloom"  => BloomFilterIndex.read(t, data, path)
      case "bitmap" => BitmapIndex.read(t, data, path)
      case "range-bitmap" => RangeBitmapIndex.read(t, data, path)
      case _        => BitSliceIndex.read(t, data, path)
    }
    node.put("format", format).put("file_size", data.length).put("type", sql)
    putSummary(node, reader)
    condition.foreach { text =>
      val columns = columnsOf(Condition.parse(text, "--query")).toSet
      node.set[ObjectNode]("query", query(text, c => if (columns(c)) Seq(reader) else Nil, c => if (columns(c)) Some(t) else None, path))
    }
    node
  }
}
