package org.apache.spark.sql.indexbridge

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.{Files, Path, StandardCopyOption}
import java.util.UUID

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.table.{ColumnStatistics, DataField => PaimonField, DataType => PaimonType, TableSchema}
import org.apache.hadoop.conf.Configuration
import org.apache.parquet.column.statistics._
import org.apache.parquet.format.Util
import org.apache.parquet.hadoop.ParquetWriter
import org.apache.parquet.hadoop.api.WriteSupport
import org.apache.parquet.hadoop.metadata.{CompressionCodecName, ParquetMetadata}
import org.apache.parquet.io.LocalOutputFile
import org.apache.parquet.io.api.{Binary, RecordConsumer}
import org.apache.parquet.schema.{ConversionPatterns, LogicalTypeAnnotation, MessageType, PrimitiveType, Type, Types}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName._
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.types.{DataType => SparkType, _}

/** Paimon's primary-key data files written from Spark rows: the Parquet layout of Paimon 1.4.2
  * (`ParquetSchemaConverter`, `ParquetRowDataWriter`, `RowDataParquetBuilder`), and their
  * statistics as `ParquetSimpleStatsExtractor` reads them back from the footer.
  *
  * {{{
  * message paimon_schema   _KEY_<k> (id 1073741823 + id of k) for each trimmed primary key,
  *                         _SEQUENCE_NUMBER INT64 REQUIRED (id 2147483646),
  *                         _VALUE_KIND INT32 INT(8) REQUIRED (id 2147483645), then every column
  * types                   CHAR/VARCHAR BINARY (STRING), BINARY/VARBINARY BINARY, TINYINT INT32
  *                         INT(8), SMALLINT INT32 INT(16), DATE INT32 DATE, TIME INT32 TIME(MILLIS,
  *                         utc), DECIMAL INT32/INT64/FIXED(minBytes) DECIMAL, TIMESTAMP(p) INT64
  *                         MILLIS (p <= 3) / MICROS (p <= 6) / INT96, LTZ the same adjusted to UTC,
  *                         ARRAY list/element (id 536870911 + 1024 id + depth), MAP key_value
  *                         key (REQUIRED; 536870911 - 1024 id - depth) / value, ROW a group
  * writer                  file.compression (zstd at file.compression.zstd-level 1), row groups
  *                         of parquet.block.size (128 mb), pages of 1 mb, dictionaries on,
  *                         writer version 1; written to a hidden file renamed into place on close
  * statistics              per top-level column, row groups merged: min/max by Paimon type
  *                         (INT96 and binary: null), null count
  * }}}
  */
object PaimonParquet {
  val KeyFieldIdStart: Int = Int.MaxValue / 2
  val SequenceNumber = "_SEQUENCE_NUMBER"
  val ValueKind = "_VALUE_KIND"
  private val StructuredBase = Int.MaxValue / 4

  /** The fields of a primary-key data file (`KeyValue.schema`). */
  def keyValueFields(schema: TableSchema): Seq[PaimonField] =
    schema.trimmedPrimaryKeys.map { k =>
      val f = schema.field(k)
      PaimonField(KeyFieldIdStart + f.id, "_KEY_" + f.name, f.dataType)
    } ++ Seq(
      PaimonField(Int.MaxValue - 1, SequenceNumber, PaimonType.Atomic(KeyType.BigIntType, nullable = false)),
      PaimonField(Int.MaxValue - 2, ValueKind, PaimonType.Atomic(KeyType.TinyIntType, nullable = false))) ++ schema.fields

  def messageType(fields: Seq[PaimonField]): MessageType =
    new MessageType("paimon_schema", fields.map(f => parquetType(f.name, f.dataType, f.id, 0)): _*)

  private def parquetType(name: String, t: PaimonType, id: Int, depth: Int): Type = {
    val rep = if (t.nullable) Type.Repetition.OPTIONAL else Type.Repetition.REQUIRED
    def prim(p: PrimitiveType.PrimitiveTypeName, a: LogicalTypeAnnotation = null) =
      (if (a == null) Types.primitive(p, rep) else Types.primitive(p, rep).as(a)).named(name).withId(id)
    t match {
      case PaimonType.Atomic(k, _) =>
        k match {
          case KeyType.CharType(_) | KeyType.VarCharType(_)     => prim(BINARY, LogicalTypeAnnotation.stringType())
          case KeyType.BooleanType                              => prim(BOOLEAN)
          case KeyType.BinaryType(_) | KeyType.VarBinaryType(_) => prim(BINARY)
          case KeyType.DecimalType(p, s) if p <= 9              => prim(INT32, LogicalTypeAnnotation.decimalType(s, p))
          case KeyType.DecimalType(p, s) if p <= 18             => prim(INT64, LogicalTypeAnnotation.decimalType(s, p))
          case KeyType.DecimalType(p, s) =>
            Types.primitive(FIXED_LEN_BYTE_ARRAY, rep).as(LogicalTypeAnnotation.decimalType(s, p)).length(minBytes(p)).named(name).withId(id)
          case KeyType.TinyIntType  => prim(INT32, LogicalTypeAnnotation.intType(8, true))
          case KeyType.SmallIntType => prim(INT32, LogicalTypeAnnotation.intType(16, true))
          case KeyType.IntType      => prim(INT32)
          case KeyType.BigIntType   => prim(INT64)
          case KeyType.FloatType    => prim(FLOAT)
          case KeyType.DoubleType   => prim(DOUBLE)
          case KeyType.DateType     => prim(INT32, LogicalTypeAnnotation.dateType())
          case KeyType.TimeType(_)  => prim(INT32, LogicalTypeAnnotation.timeType(true, LogicalTypeAnnotation.TimeUnit.MILLIS))
          case KeyType.TimestampType(p)           => timestamp(name, p, rep, utc = false).withId(id)
          case KeyType.LocalZonedTimestampType(p) => timestamp(name, p, rep, utc = true).withId(id)
        }
      case PaimonType.Array(e, _) =>
        val element = parquetType("element", e, id, depth + 1).withId(StructuredBase + id * 1024 + depth + 1)
        ConversionPatterns.listOfElements(rep, name, element).withId(id)
      case PaimonType.Map(k, v, _) =>
        val key = parquetType("key", notNull(k), id, depth + 1).withId(StructuredBase - id * 1024 - depth - 1)
        val value = parquetType("value", v, id, depth + 1).withId(StructuredBase + id * 1024 + depth + 1)
        ConversionPatterns.mapType(rep, name, "key_value", key, value).withId(id)
      case PaimonType.Multiset(e, _) =>
        val key = parquetType("key", notNull(e), id, depth + 1).withId(StructuredBase - id * 1024 - depth - 1)
        val value = parquetType("value", PaimonType.Atomic(KeyType.IntType, nullable = false), id, depth + 1).withId(StructuredBase + id * 1024 + depth + 1)
        ConversionPatterns.mapType(rep, name, "key_value", key, value).withId(id)
      case PaimonType.Row(fs, _) =>
        Types.buildGroup(rep).addFields(fs.map(f => parquetType(f.name, f.dataType, f.id, 0)): _*).named(name).withId(id)
    }
  }

  private def notNull(t: PaimonType): PaimonType = t match {
    case a: PaimonType.Atomic   => a.copy(nullable = false)
    case a: PaimonType.Array    => a.copy(nullable = false)
    case m: PaimonType.Multiset => m.copy(nullable = false)
    case m: PaimonType.Map      => m.copy(nullable = false)
    case r: PaimonType.Row      => r.copy(nullable = false)
  }

  private def timestamp(name: String, p: Int, rep: Type.Repetition, utc: Boolean): Type =
    if (p <= 3) Types.primitive(INT64, rep).as(LogicalTypeAnnotation.timestampType(utc, LogicalTypeAnnotation.TimeUnit.MILLIS)).named(name)
    else if (p > 6) Types.primitive(INT96, rep).named(name)
    else Types.primitive(INT64, rep).as(LogicalTypeAnnotation.timestampType(utc, LogicalTypeAnnotation.TimeUnit.MICROS)).named(name)

  /** `ParquetSchemaConverter.computeMinBytesForDecimalPrecision`. */
  def minBytes(precision: Int): Int = {
    var n = 1
    while (math.pow(2.0, 8 * n - 1) < math.pow(10.0, precision)) n += 1
    n
  }

  // ------------------------------------------------------------------------------------------
  // Writing

  private type Writer = (RecordConsumer, SpecializedGetters, Int) => Unit

  /** A value writer for a Paimon type over Spark values of `st` (as the table's Spark type). */
  private def writer(t: PaimonType, st: SparkType): Writer = (t, st) match {
    case (PaimonType.Atomic(k, _), _) =>
      k match {
        case KeyType.BooleanType  => (c, g, i) => c.addBoolean(g.getBoolean(i))
        case KeyType.TinyIntType  => (c, g, i) => c.addInteger(g.getByte(i).toInt)
        case KeyType.SmallIntType => (c, g, i) => c.addInteger(g.getShort(i).toInt)
        case KeyType.IntType | KeyType.DateType | KeyType.TimeType(_) => (c, g, i) => c.addInteger(g.getInt(i))
        case KeyType.BigIntType   => (c, g, i) => c.addLong(g.getLong(i))
        case KeyType.FloatType    => (c, g, i) => c.addFloat(g.getFloat(i))
        case KeyType.DoubleType   => (c, g, i) => c.addDouble(g.getDouble(i))
        case KeyType.CharType(_) | KeyType.VarCharType(_) => (c, g, i) => c.addBinary(Binary.fromReusedByteArray(g.getUTF8String(i).getBytes))
        case KeyType.BinaryType(_) | KeyType.VarBinaryType(_) => (c, g, i) => c.addBinary(Binary.fromReusedByteArray(g.getBinary(i)))
        case KeyType.DecimalType(p, s) if p <= 9  => (c, g, i) => c.addInteger(g.getDecimal(i, p, s).toUnscaledLong.toInt)
        case KeyType.DecimalType(p, s) if p <= 18 => (c, g, i) => c.addLong(g.getDecimal(i, p, s).toUnscaledLong)
        case KeyType.DecimalType(p, s) =>
          val n = minBytes(p)
          (c, g, i) => {
            val bytes = g.getDecimal(i, p, s).toJavaBigDecimal.unscaledValue.toByteArray
            val out = new Array[Byte](n)
            val fill: Byte = if (bytes(0) < 0) -1 else 0
            java.util.Arrays.fill(out, 0, n - bytes.length, fill)
            System.arraycopy(bytes, 0, out, n - bytes.length, bytes.length)
            c.addBinary(Binary.fromReusedByteArray(out))
          }
        case KeyType.TimestampType(p)           => timestampWriter(p)
        case KeyType.LocalZonedTimestampType(p) => timestampWriter(p)
      }
    case (PaimonType.Array(e, _), ArrayType(et, _)) =>
      val w = writer(e, et)
      (c, g, i) => {
        val a = g.getArray(i)
        c.startGroup()
        if (a.numElements() > 0) {
          c.startField("list", 0)
          var j = 0
          while (j < a.numElements()) {
            c.startGroup()
            if (!a.isNullAt(j)) { c.startField("element", 0); w(c, a, j); c.endField("element", 0) }
            c.endGroup()
            j += 1
          }
          c.endField("list", 0)
        }
        c.endGroup()
      }
    case (PaimonType.Map(k, v, _), MapType(kt, vt, _)) => mapWriter(writer(k, kt), writer(v, vt))
    case (PaimonType.Multiset(e, _), MapType(kt, vt, _)) => mapWriter(writer(e, kt), writer(PaimonType.Atomic(KeyType.IntType, nullable = false), vt))
    case (PaimonType.Row(fs, _), StructType(sfs)) =>
      val ws = fs.zip(sfs).map { case (f, sf) => writer(f.dataType, sf.dataType) }.toArray
      val names = fs.map(_.name).toArray
      (c, g, i) => {
        val r = g.getStruct(i, ws.length)
        c.startGroup()
        var j = 0
        while (j < ws.length) {
          if (!r.isNullAt(j)) { c.startField(names(j), j); ws(j)(c, r, j); c.endField(names(j), j) }
          j += 1
        }
        c.endGroup()
      }
    case other => throw new IllegalArgumentException(s"no Parquet writer for Paimon type ${other._1} from Spark type ${other._2}")
  }

  private def mapWriter(kw: Writer, vw: Writer): Writer = (c, g, i) => {
    val m = g.getMap(i)
    val (keys, values) = (m.keyArray(), m.valueArray())
    c.startGroup()
    if (m.numElements() > 0) {
      c.startField("key_value", 0)
      var j = 0
      while (j < m.numElements()) {
        c.startGroup()
        c.startField("key", 0); kw(c, keys, j); c.endField("key", 0)
        if (!values.isNullAt(j)) { c.startField("value", 1); vw(c, values, j); c.endField("value", 1) }
        c.endGroup()
        j += 1
      }
      c.endField("key_value", 0)
    }
    c.endGroup()
  }

  /** Spark microseconds as TIMESTAMP(p): millis (p <= 3), micros (p <= 6), INT96 otherwise. */
  private def timestampWriter(p: Int): Writer =
    if (p <= 3) (c, g, i) => c.addLong(Math.floorDiv(g.getLong(i), 1000L))
    else if (p <= 6) (c, g, i) => c.addLong(g.getLong(i))
    else (c, g, i) => {
      val micros = g.getLong(i)
      val millis = Math.floorDiv(micros, 1000L)
      val nanosOfMilli = Math.floorMod(micros, 1000L) * 1000L
      val buf = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN)
      buf.putLong((millis % 86400000L) * 1000000L + nanosOfMilli).putInt((millis / 86400000L + 2440588L).toInt)
      c.addBinary(Binary.fromConstantByteBuffer(buf.flip()))
    }

  /** One record of a primary-key data file: the table's columns (in `row`, as the table's Spark
    * types) with the key columns, sequence number and value kind in front. */
  final case class KeyValueRecord(row: InternalRow, sequenceNumber: Long, valueKind: Byte)

  private final class KeyValueSupport(schema: MessageType, keyIndexes: Array[Int], values: Array[Writer], names: Array[String])
      extends WriteSupport[KeyValueRecord] {
    private var c: RecordConsumer = _
    override def init(configuration: Configuration): WriteSupport.WriteContext =
      new WriteSupport.WriteContext(schema, new java.util.HashMap[String, String]())
    override def prepareForWrite(consumer: RecordConsumer): Unit = c = consumer
    override def write(r: KeyValueRecord): Unit = {
      c.startMessage()
      var f = 0
      keyIndexes.foreach { i =>
        c.startField(names(f), f); values(i)(c, r.row, i); c.endField(names(f), f)
        f += 1
      }
      c.startField(SequenceNumber, f); c.addLong(r.sequenceNumber); c.endField(SequenceNumber, f)
      f += 1
      c.startField(ValueKind, f); c.addInteger(r.valueKind.toInt); c.endField(ValueKind, f)
      f += 1
      var i = 0
      while (i < values.length) {
        if (!r.row.isNullAt(i)) { c.startField(names(f), f); values(i)(c, r.row, i); c.endField(names(f), f) }
        i += 1
        f += 1
      }
      c.endMessage()
    }
  }

  private final class Builder(file: LocalOutputFile, support: KeyValueSupport)
      extends ParquetWriter.Builder[KeyValueRecord, Builder](file) {
    override def self(): Builder = this
    override def getWriteSupport(conf: Configuration): WriteSupport[KeyValueRecord] = support
  }

  /** A primary-key data file being written to `target` (through a hidden temporary file). */
  final class KeyValueFileWriter(target: Path, schema: TableSchema, sparkTypes: Seq[SparkType]) {
    private val fields = keyValueFields(schema)
    private val keyIndexes = schema.trimmedPrimaryKeys.map(k => schema.fieldNames.indexOf(k)).toArray
    private val tmp = target.resolveSibling(s".${target.getFileName}.${UUID.randomUUID()}.tmp")
    private val options = schema.options
    private val codec = options.getOrElse("file.compression", "zstd").trim.toLowerCase(java.util.Locale.ROOT) match {
      case "none" | "uncompressed" => CompressionCodecName.UNCOMPRESSED
      case "lz4"                   => CompressionCodecName.LZ4
      case other                   => CompressionCodecName.fromConf(other.toUpperCase(java.util.Locale.ROOT))
    }
    private val conf = new Configuration(false)
    conf.set("parquet.compression.codec.zstd.level", options.getOrElse("file.compression.zstd-level", "1"))
    options.filter(_._1.startsWith("parquet.")).foreach { case (k, v) => conf.set(k, v) }
    Files.createDirectories(target.getParent)
    private val parquet: ParquetWriter[KeyValueRecord] = new Builder(new LocalOutputFile(tmp),
      new KeyValueSupport(messageType(fields), keyIndexes, schema.fields.zip(sparkTypes).map { case (f, st) => writer(f.dataType, st) }.toArray,
        fields.map(_.name).toArray))
      .withConf(conf)
      .withCompressionCodec(codec)
      .withRowGroupSize(conf.getLong("parquet.block.size", ParquetWriter.DEFAULT_BLOCK_SIZE.toLong))
      .withPageSize(conf.getInt("parquet.page.size", ParquetWriter.DEFAULT_PAGE_SIZE))
      .withDictionaryEncoding(conf.getBoolean("parquet.enable.dictionary", true))
      .build()
    private var closed = false

    def write(record: KeyValueRecord): Unit = parquet.write(record)

    /** The bytes written so far (buffered row group included). */
    def dataSize: Long = parquet.getDataSize

    /** Closes the file, moves it into place and returns its footer and size. */
    def close(): (ParquetMetadata, Long) = {
      parquet.close()
      closed = true
      sortEncodings(tmp)
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING)
      (parquet.getFooter, Files.size(target))
    }

    def abort(): Unit = if (!closed) { scala.util.Try(parquet.close()); Files.deleteIfExists(tmp) }
  }

  /** Puts each column chunk's `encodings` list of the footer of the Parquet file at `path` in
    * ascending order, in place. parquet-mr lists them in the iteration order of a HashSet of enum
    * constants, whose identity hash codes differ from JVM to JVM: without this, a task retried on
    * another executor writes different bytes. The list is a set (readers ignore its order) and
    * reordering keeps its length, so no offset moves. */
  private def sortEncodings(path: Path): Unit = {
    val channel = java.nio.channels.FileChannel.open(path, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)
    try {
      val size = channel.size()
      val tail = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN)
      channel.read(tail, size - 8)
      val length = tail.getInt(0)
      val start = size - 8 - length
      val footer = ByteBuffer.allocate(length)
      channel.read(footer, start)
      val meta = Util.readFileMetaData(new java.io.ByteArrayInputStream(footer.array()))
      for (group <- meta.getRow_groups.asScala; chunk <- group.getColumns.asScala if chunk.isSetMeta_data) {
        val column = chunk.getMeta_data
        column.setEncodings(column.getEncodings.asScala.sortBy(_.getValue).asJava)
      }
      val out = new java.io.ByteArrayOutputStream(length)
      Util.writeFileMetaData(meta, out)
      if (out.size() != length) throw new IllegalStateException(s"$path: the footer's length changed from $length to ${out.size()}")
      channel.write(ByteBuffer.wrap(out.toByteArray), start)
    } finally channel.close()
  }

  // ------------------------------------------------------------------------------------------
  // Statistics

  /** `ParquetSimpleStatsExtractor` over a footer: the stats of each of `fields` (top-level names). */
  def statistics(footer: ParquetMetadata, fields: Seq[PaimonField]): Seq[ColumnStatistics] = {
    val merged = mutable.HashMap.empty[String, Statistics[_]]
    for (block <- footer.getBlocks.asScala; column <- block.getColumns.asScala) {
      val name = column.getPath.toDotString
      val stats: Statistics[_] = column.getStatistics
      merged.get(name) match {
        case None    => merged(name) = stats
        case Some(s) => s.mergeStatistics(stats)
      }
    }
    fields.map(f => merged.get(f.name).fold(ColumnStatistics(null, null, None))(s => convert(f.dataType, s)))
  }

  private def convert(t: PaimonType, s: Statistics[_]): ColumnStatistics = {
    val nulls = Some(s.getNumNulls)
    if (!s.hasNonNullValue) return ColumnStatistics(null, null, nulls)
    def ints(f: Int => Any) = s match { case x: IntStatistics => ColumnStatistics(f(x.getMin), f(x.getMax), nulls) }
    t match {
      case PaimonType.Atomic(k, _) =>
        k match {
          case KeyType.CharType(_) | KeyType.VarCharType(_) =>
            val b = s.asInstanceOf[BinaryStatistics]
            ColumnStatistics(b.minAsString(), b.maxAsString(), nulls)
          case KeyType.BooleanType => val b = s.asInstanceOf[BooleanStatistics]; ColumnStatistics(b.getMin, b.getMax, nulls)
          case KeyType.TinyIntType => ints(_.toByte)
          case KeyType.SmallIntType => ints(_.toShort)
          case KeyType.IntType | KeyType.DateType | KeyType.TimeType(_) => ints(identity)
          case KeyType.BigIntType => val l = s.asInstanceOf[LongStatistics]; ColumnStatistics(l.getMin, l.getMax, nulls)
          case KeyType.FloatType => val x = s.asInstanceOf[FloatStatistics]; ColumnStatistics(x.getMin, x.getMax, nulls)
          case KeyType.DoubleType => val x = s.asInstanceOf[DoubleStatistics]; ColumnStatistics(x.getMin, x.getMax, nulls)
          case KeyType.DecimalType(_, scale) =>
            s match {
              case x: IntStatistics  => ColumnStatistics(java.math.BigDecimal.valueOf(x.getMin.toLong, scale), java.math.BigDecimal.valueOf(x.getMax.toLong, scale), nulls)
              case x: LongStatistics => ColumnStatistics(java.math.BigDecimal.valueOf(x.getMin, scale), java.math.BigDecimal.valueOf(x.getMax, scale), nulls)
              case x: BinaryStatistics =>
                ColumnStatistics(new java.math.BigDecimal(new java.math.BigInteger(x.getMinBytes), scale),
                  new java.math.BigDecimal(new java.math.BigInteger(x.getMaxBytes), scale), nulls)
              case _ => ColumnStatistics(null, null, nulls)
            }
          case KeyType.TimestampType(p)           => timestampStats(s, p, nulls)
          case KeyType.LocalZonedTimestampType(p) => timestampStats(s, p, nulls)
          case _ => ColumnStatistics(null, null, nulls)
        }
      case _ => ColumnStatistics(null, null, nulls)
    }
  }

  private def timestampStats(s: Statistics[_], p: Int, nulls: Option[Long]): ColumnStatistics = s match {
    case x: LongStatistics if p <= 3 => ColumnStatistics((x.getMin, 0), (x.getMax, 0), nulls)
    case x: LongStatistics if p <= 6 =>
      def fromMicros(m: Long) = (Math.floorDiv(m, 1000L), Math.floorMod(m, 1000L).toInt * 1000)
      ColumnStatistics(fromMicros(x.getMin), fromMicros(x.getMax), nulls)
    case _ => ColumnStatistics(null, null, nulls)
  }
}
