package io.indexbridge.paimon.fileindex

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream, IOException}

import io.indexbridge.bytes.ByteReader
import io.indexbridge.paimon.{JavaOrder, KeyType}

/** One entry of a container header: a column's index payload at `start` (absolute), or an empty
  * entry (`start = -1`, `length = 0`) whose writer produced no bytes. */
final case class ContainerEntry(column: String, indexType: String, start: Int, length: Int) {
  def isEmpty: Boolean = start == -1
}

/** Paimon's file index container (`FileIndexFormat` v1, spec §4): every index of one data file.
  *
  * {{{
  * HEAD   i64 BE magic = 1493475289347502
  *        i32 BE version = 1
  *        i32 BE head_length               bytes from the magic through redundant_length
  *        i32 BE column_count
  *        per column:  mutf8 name, i32 BE index_count,
  *                     per index: mutf8 index_type, i32 BE start (absolute, or -1), i32 BE length
  *        i32 BE redundant_length = 0
  * BODY   the payloads, in header order
  *
  * mutf8  u16 BE byte length + Java modified UTF-8 (DataOutput.writeUTF)
  * }}}
  *
  * Readers take the entries by name (a repeated name: the last one wins), never by position.
  */
final class FileIndexContainer private (
    val bytes: Array[Byte],
    val source: String,
    val version: Int,
    val headLength: Int,
    val columnCount: Int,
    columnNames: Seq[String],
    val entries: Seq[ContainerEntry],
    val redundantLength: Int
) {
  private val byName: Map[String, Seq[ContainerEntry]] = {
    val last = scala.collection.mutable.LinkedHashMap.empty[(String, String), ContainerEntry]
    entries.foreach(e => last((e.column, e.indexType)) = e)
    last.values.toSeq.groupBy(_.column)
  }

  /** Names of the indexed columns in header order (`m[k]` for map-nested indexes). */
  def columns: Seq[String] = columnNames.distinct

  def entry(column: String, indexType: String): Option[ContainerEntry] =
    byName.getOrElse(column, Nil).find(_.indexType == indexType)

  /** A copy of one payload; None for a missing or empty entry. */
  def payload(column: String, indexType: String): Option[Array[Byte]] =
    entry(column, indexType).filterNot(_.isEmpty).map(e => java.util.Arrays.copyOfRange(bytes, e.start, e.start + e.length))

  /** The reader of one entry, for a column of type `t`. */
  def reader(column: String, indexType: String, t: KeyType): Option[FileIndexReader] =
    entry(column, indexType).map(e => FileIndexContainer.reader(e, t, bytes, source))

  /** The entries whose readers Paimon's `FileIndexFormat.Reader.readColumnIndex(column)` holds:
    * per index type the last entry of that name (its header is a HashMap per column), and of the
    * empty entries only the first, since every empty entry reads as the one
    * `EmptyFileIndexReader.INSTANCE` and the readers are collected into a Set. In header order
    * (Paimon's HashSet has no meaningful order: identity hashes). */
  def held(column: String): Seq[ContainerEntry] = {
    val entries = byName.getOrElse(column, Nil)
    val firstEmpty = entries.find(_.isEmpty)
    entries.filter(e => !e.isEmpty || firstEmpty.exists(_ eq e))
  }

  /** Readers of [[held]] entries of `column`, in header order. */
  def readers(column: String, t: KeyType): Seq[FileIndexReader] =
    held(column).map(e => FileIndexContainer.reader(e, t, bytes, source))
}

object FileIndexContainer {
  val Magic = 1493475289347502L
  val Version = 1
  /** `file-index.in-manifest-threshold`: containers up to this size go into the manifest. */
  val DefaultInManifestThreshold = 500L

  /** Whether Paimon embeds a container of this size in the manifest (`_EMBEDDED_FILE_INDEX`)
    * instead of writing `<data-file>.index`. */
  def embeddedInManifest(size: Long, threshold: Long = DefaultInManifestThreshold): Boolean = size <= threshold

  /** The container of `columns`, each with its (index type, payload) pairs, in the order given;
    * a null payload makes an empty entry. Fails for a name longer than 65535 modified-UTF-8 bytes. */
  def write(columns: Seq[(String, Seq[(String, Array[Byte])])]): Array[Byte] = {
    val names = new ByteArrayOutputStream
    val nameOut = new DataOutputStream(names)
    for ((column, indexes) <- columns) {
      nameOut.writeUTF(column)
      indexes.foreach { case (indexType, _) => nameOut.writeUTF(indexType) }
    }
    val headLength = 8 + 4 + 4 + 4 + 4 * columns.length + 8 * columns.map(_._2.length).sum + 4 + names.size
    val file = new ByteArrayOutputStream(headLength + columns.flatMap(_._2).map(p => Option(p._2).fold(0)(_.length)).sum)
    val out = new DataOutputStream(file)
    out.writeLong(Magic)
    out.writeInt(Version)
    out.writeInt(headLength)
    out.writeInt(columns.length)
    var start = headLength
    for ((column, indexes) <- columns) {
      out.writeUTF(column)
      out.writeInt(indexes.length)
      for ((indexType, payload) <- indexes) {
        out.writeUTF(indexType)
        if (payload == null) { out.writeInt(-1); out.writeInt(0) }
        else { out.writeInt(start); out.writeInt(payload.length); start += payload.length }
      }
    }
    out.writeInt(0)
    for ((_, indexes) <- columns; (_, payload) <- indexes if payload != null) out.write(payload)
    out.flush()
    file.toByteArray
  }

  /** Parses the header; the payloads are only parsed by [[FileIndexContainer.reader]]. */
  def read(bytes: Array[Byte], source: String): FileIndexContainer = {
    val in = ByteReader(bytes, source)
    in.require(8, "file index magic")
    val magic = (in.i32BE().toLong << 32) | (in.i32BE().toLong & 0xffffffffL)
    if (magic != Magic) in.fail(s"the file index magic $Magic, found $magic", 0L)
    val version = in.i32BE("file index version")
    if (version != Version) in.fail(s"file index version $Version, found $version", 8L)
    val headLength = in.i32BE("file index head_length")
    if (headLength < 16 || headLength - 16 > in.remaining)
      in.fail(s"a head_length in 16..${bytes.length}, found $headLength", 12L)
    val head = in.sub(headLength - 16, "file index header")
    val columnCount = head.i32BE("file index column_count")
    if (columnCount < 0 || columnCount.toLong * 6 > head.remaining)
      head.fail(s"a column_count that fits the header (>= 6 bytes each), found $columnCount", head.pos - 4L)
    val entries = Vector.newBuilder[ContainerEntry]
    val names = Vector.newBuilder[String]
    for (_ <- 0 until columnCount) {
      val column = mutf8(head, "column name")
      names += column
      val indexCount = head.i32BE(s"index_count of column '$column'")
      if (indexCount < 0 || indexCount.toLong * 10 > head.remaining)
        head.fail(s"an index_count that fits the header (>= 10 bytes each), found $indexCount", head.pos - 4L)
      for (_ <- 0 until indexCount) {
        val indexType = mutf8(head, "index type")
        val at = head.pos
        val start = head.i32BE(s"start of $column/$indexType")
        val length = head.i32BE(s"length of $column/$indexType")
        if (start != -1 && (start < 0 || length < 0 || start.toLong + length > bytes.length))
          head.fail(s"$column/$indexType: a payload inside the ${bytes.length} bytes of the file (or start -1), found start $start length $length", at.toLong)
        entries += ContainerEntry(column, indexType, start, if (start == -1) 0 else length)
      }
    }
    // Paimon's reader stops after the entries; the redundant length is reported when present (-1 if not)
    val redundantLength = if (head.remaining >= 4) head.i32BE("redundant_length") else -1
    new FileIndexContainer(bytes, source, version, headLength, columnCount, names.result(), entries.result(), redundantLength)
  }

  /** `DataInput.readUTF`. */
  private def mutf8(in: ByteReader, what: String): String = {
    val at = in.pos
    in.require(2, s"$what length")
    val n = (in.bytes(at) & 0xff) << 8 | (in.bytes(at + 1) & 0xff)
    in.skip(2)
    in.require(n.toLong, what)
    val s =
      try new DataInputStream(new ByteArrayInputStream(in.bytes, at, 2 + n)).readUTF()
      catch { case e: IOException => in.fail(s"$what in modified UTF-8 (${e.getMessage})", at.toLong) }
    in.skip(n, what)
    s
  }

  /** The reader of an entry's payload (an unknown index answers REMAIN). */
  def reader(e: ContainerEntry, t: KeyType, bytes: Array[Byte], source: String): FileIndexReader =
    if (e.isEmpty) EmptyFileIndexReader
    else
      e.indexType match {
        case BloomFilterIndex.Identifier => BloomFilterIndex.read(t, bytes, source, e.start, e.length)
        case BitmapIndex.Identifier      => BitmapIndex.read(t, bytes, source, e.start, e.length)
        case BitSliceIndex.Identifier    => BitSliceIndex.read(t, bytes, source, e.start, e.length)
        case RangeBitmapIndex.Identifier => RangeBitmapIndex.read(t, bytes, source, e.start, e.length)
        case _                           => RemainReader
      }

  private object RemainReader extends FileIndexReader {
    def evaluate(op: Op, literals: Seq[Any]): FileIndexResult = FileIndexResult.Remain
  }

  /** A new writer of one index type (`bloom-filter`, `bitmap`, `bsi`, `range-bitmap`) with its options. */
  def writer(indexType: String, t: KeyType, options: Map[String, String]): FileIndexWriter = indexType match {
    case BloomFilterIndex.Identifier => BloomFilterIndex.writer(t, options)
    case BitmapIndex.Identifier      => BitmapIndex.writer(t, options)
    case BitSliceIndex.Identifier    => BitSliceIndex.writer(t)
    case RangeBitmapIndex.Identifier => RangeBitmapIndex.writer(t, options)
    case other                       => throw new UnsupportedOperationException(s"index type '$other' is not supported")
  }
}

/** A column of the data file: an atomic type, or a `MAP<STRING, valueType>` (`isMap`). */
final case class DataField(name: String, valueType: KeyType, isMap: Boolean = false)

/** Paimon's `DataFileIndexWriter`: the container of a data file from the `file-index.*` table
  * options, with Paimon's column and index order (App. B.3):
  *
  * {{{
  * 1 Options.data          put of every table option, in the order handed to CoreOptions
  * 2 FileIndexOptions      per `file-index.<type>.columns` key in Options.data order, per name:
  *                         indexTypeOptions.computeIfAbsent(Column).computeIfAbsent(type)
  *                         (Column(c) or Column(m, k, nested) for `m[k]`)
  * 3 maintainers           per Column, per type: maintainers.computeIfAbsent(type), then put of
  *                         the column (or map column, whose writers get put(k))
  * 4 indexMaps             per type, per maintainer: computeIfAbsent(name).put(type, payload),
  *                         names of a map maintainer in the order of a HashMap of put("m[k]")
  * 5 the container         in indexMaps order, the inner maps in theirs
  * }}}
  *
  * Map-nested indexes get the value under their key, or null when the map is null or lacks it;
  * a map-nested writer that saw no rows at all (an empty file) makes an empty entry.
  */
object DataFileIndex {
  private val Prefix = "file-index."
  private val ColumnsSuffix = ".columns"

  /** `FileIndexOptions.Column`: a column, or key `nested` of map column `name`. */
  private final case class Column(name: String, nested: Option[String]) {
    def javaHashCode: Int =
      31 * (31 * (31 + JavaOrder.javaStringHash(name)) + nested.fold(0)(JavaOrder.javaStringHash)) + (if (nested.isDefined) 1231 else 1237)
    def indexName: String = nested.fold(name)(k => s"$name[$k]")
  }

  private def parseColumn(text: String): Column = {
    val open = text.indexOf('[')
    if (open > 0 && text.endsWith("]")) Column(text.substring(0, open), Some(text.substring(open + 1, text.length - 1)))
    else Column(text, None)
  }

  /** HashMap<String, _> orders (String is Comparable: tree bins order by compareTo). */
  private def stringPuts(keys: Iterable[String]) = JavaOrder.afterPuts(keys)(JavaOrder.javaStringHash, Some(JavaOrder.stringCompareTo))
  private def stringComputes(keys: Iterable[String]) =
    JavaOrder.afterComputeIfAbsent(keys)(JavaOrder.javaStringHash, Some(JavaOrder.stringCompareTo))

  /** The (column name, index types) of the container in Paimon's order; `tableOptions` in the
    * iteration order of the map Paimon was given. */
  def layout(tableOptions: Seq[(String, String)]): Seq[(String, Seq[String])] = {
    val options = tableOptions.toMap
    val data = stringPuts(tableOptions.map(_._1))
    // 2: indexTypeOptions
    val columnCalls = Seq.newBuilder[Column]
    val typeCalls = scala.collection.mutable.LinkedHashMap.empty[Column, Vector[String]]
    for (key <- data if key.startsWith(Prefix) && key.endsWith(ColumnsSuffix) && key.length > Prefix.length + ColumnsSuffix.length) {
      val indexType = key.substring(Prefix.length, key.length - ColumnsSuffix.length)
      for (name <- options(key).split(",").map(_.trim) if name.nonEmpty) {
        val column = parseColumn(name)
        columnCalls += column
        typeCalls(column) = typeCalls.getOrElse(column, Vector.empty) :+ indexType
      }
    }
    val columns = JavaOrder.afterComputeIfAbsent(columnCalls.result())(_.javaHashCode) // Column is not Comparable
    def typesOf(c: Column) = stringComputes(typeCalls(c))
    // 3: maintainers by type, then by column; map maintainers keep their keys
    val maintainerTypes = Vector.newBuilder[String]
    val maintainerColumns = scala.collection.mutable.HashMap.empty[String, Vector[String]]
    val mapKeys = scala.collection.mutable.HashMap.empty[(String, String), Vector[String]]
    for (c <- columns; t <- typesOf(c)) {
      maintainerTypes += t
      maintainerColumns(t) = maintainerColumns.getOrElse(t, Vector.empty) :+ c.name
      c.nested.foreach(k => mapKeys((t, c.name)) = mapKeys.getOrElse((t, c.name), Vector.empty) :+ k)
    }
    // 4: indexMaps
    val nameCalls = Vector.newBuilder[String]
    val typesByName = scala.collection.mutable.HashMap.empty[String, Vector[String]]
    for (t <- stringComputes(maintainerTypes.result());
         c <- stringPuts(maintainerColumns(t))) {
      val names = mapKeys.get((t, c)) match {
        case Some(keys) => stringPuts(stringPuts(keys).map(k => s"$c[$k]"))
        case None       => Vector(c)
      }
      for (n <- names) {
        nameCalls += n
        typesByName(n) = typesByName.getOrElse(n, Vector.empty) :+ t
      }
    }
    stringComputes(nameCalls.result()).map { n =>
      n -> stringPuts(typesByName(n))
    }
  }

  /** Options of one index: `file-index.<type>.<column>.<option>`; a map-nested index also takes
    * those of its map column, overridden by its own. */
  def indexOptions(tableOptions: Seq[(String, String)], indexType: String, column: String): Map[String, String] = {
    def of(name: String) = {
      val prefix = s"$Prefix$indexType.$name."
      tableOptions.collect { case (k, v) if k.startsWith(prefix) && k != s"$Prefix$indexType$ColumnsSuffix" => k.substring(prefix.length) -> v }.toMap
    }
    val c = parseColumn(column)
    c.nested.fold(of(c.name))(_ => of(c.name) ++ of(column))
  }

  /** The container bytes Paimon writes for a data file: `fields` is the row type, `columns` the
    * values of each indexed field in row order (map fields: a `scala.collection.Map[String, Any]`
    * or null per row), `rowCount` the number of rows. */
  def write(tableOptions: Seq[(String, String)], fields: Seq[DataField], columns: String => Iterable[Any], rowCount: Int): Array[Byte] = {
    val byName = fields.map(f => f.name -> f).toMap
    val container = layout(tableOptions).map { case (name, types) =>
      val column = parseColumn(name)
      val field = byName.getOrElse(column.name, throw new IllegalArgumentException(s"${column.name} does not exist in column fields"))
      if (column.nested.isDefined != field.isMap)
        throw new IllegalArgumentException(s"column ${column.name}: nested index names need a map column and map columns need a key")
      val writers = types.map(t => FileIndexContainer.writer(t, field.valueType, indexOptions(tableOptions, t, name)))
      val values = columns(column.name)
      for (v <- values) {
        val value = column.nested match {
          case None      => v
          case Some(key) => if (v == null) null else v.asInstanceOf[scala.collection.Map[String, Any]].getOrElse(key, null)
        }
        writers.foreach(_.write(value))
      }
      val empty = column.nested.isDefined && rowCount == 0
      name -> types.zip(writers).map { case (t, w) => t -> (if (empty) null else w.serialize()) }
    }
    FileIndexContainer.write(container)
  }
}
