package io.indexbridge.paimon

import java.math.BigInteger
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.{CharacterCodingException, CodingErrorAction, StandardCharsets}

import io.indexbridge.IndexFormatException
import io.indexbridge.bytes.ByteReader

/** Paimon's `BinaryRow`: the row format of key rows (hash index, bucket keys), partitions and
  * min/max statistics in the manifests. Python's twin is `indexbridge.paimon.binary_row`.
  *
  * A row of `arity` fields (`BinaryRowWriter`):
  *
  * {{{
  * null bits   ((arity + 63 + 8) / 64) × 8 bytes; byte 0 = RowKind (0, INSERT),
  *             then bit 8 + i (LSB first within each byte) is set when field i is null
  * fixed part  8 bytes per field, little-endian:
  *               BOOLEAN/TINYINT 1 byte, SMALLINT 2, INT/DATE/TIME 4, BIGINT 8,
  *               FLOAT 4 (raw IEEE bits), DOUBLE 8, rest of the slot zero
  *               DECIMAL(p ≤ 18)       unscaled long
  *               TIMESTAMP(p ≤ 3)      epoch millis
  *               STRING/BINARY ≤ 7 B   bytes inline in slot bytes 0..6, byte 7 = 0x80 | length
  *               STRING/BINARY > 7 B   (offset << 32) | length  -> variable part
  *               DECIMAL(p > 18)       (offset << 32) | n       -> 16 bytes in the variable part:
  *                                      unscaled value, minimal big-endian two's complement
  *                                      (BigInteger.toByteArray, n bytes), then zeros
  *               TIMESTAMP(p > 3)      (offset << 32) | nanoOfMillisecond -> 8 bytes: millis
  *               null                  0, except DECIMAL(p > 18) and TIMESTAMP(p > 3), which
  *                                      still reserve their zeroed variable slot: (offset << 32)
  * variable    each value padded with zeros to a multiple of 8 bytes, offsets from row start
  * }}}
  *
  * In manifests a row is stored as `SerializationUtils.serializeBinaryRow` writes it: `i32 BE
  * arity` followed by the row's bytes ([[BinaryRow.deserialize]]).
  *
  * Values are Paimon's internal values in the conventions of [[KeyHash]] and the file-index
  * codecs: `Boolean`; `Byte`, `Short`, `Int` (INT, DATE days, TIME millis of day), `Long`;
  * `Float`, `Double`; `java.math.BigDecimal` at the type's scale; `(epochMillis: Long,
  * nanoOfMillisecond: Int)` for TIMESTAMP / TIMESTAMP_LTZ; `String` for CHAR/VARCHAR/STRING;
  * `Array[Byte]` for BINARY/VARBINARY/BYTES; `null` for SQL NULL.
  */
object BinaryRow {

  /** `BinaryRow.calculateBitSetWidthInBytes`: the 8-bit header plus one bit per field, in longs. */
  def nullBitsSize(arity: Int): Int = ((arity + 63 + 8) / 64) * 8

  /** The values of the row in `bytes(offset until offset + length)` with one field per type.
    * Every slot and variable-part reference is checked against those bytes; errors name
    * `source` and the offset `base + position in bytes`. */
  def read(bytes: Array[Byte], offset: Int, length: Int, types: Seq[KeyType], source: String, base: Long): IndexedSeq[Any] = {
    val row = view(bytes, offset, length, types.length, source, base)
    types.indices.map(i => if (row.isNull(i)) null else row.value(i, types(i)))
  }

  /** Field-by-field access to the row of `arity` fields in `bytes(offset until offset + length)`
    * (for rows whose fields are not all atomic, or only partly needed). */
  def view(bytes: Array[Byte], offset: Int, length: Int, arity: Int, source: String, base: Long): View = {
    val fixedEnd = nullBitsSize(arity) + 8 * arity
    if (offset < 0 || length < 0 || offset.toLong + length > bytes.length)
      throw new IndexFormatException(source, base + offset, s"a BinaryRow within the ${bytes.length} bytes, asked for $length at $offset")
    if (length < fixedEnd)
      throw new IndexFormatException(source, base + offset + length,
        s"a BinaryRow of $arity fields needs $fixedEnd fixed bytes, $length present")
    new View(bytes, offset, length, arity, source, base)
  }

  /** A serialized row (`i32 BE arity` + row) of any arity, field by field. */
  def serializedView(bytes: Array[Byte], source: String, base: Long = 0): View =
    view(bytes, 4, bytes.length - 4, arity(bytes, source, base), source, base)

  /** A row as `SerializationUtils.serializeBinaryRow` stores it in manifests: `i32 BE arity`
    * then the row's bytes. The arity must equal the number of types. */
  def deserialize(bytes: Array[Byte], types: Seq[KeyType], source: String, base: Long = 0): IndexedSeq[Any] = {
    val found = arity(bytes, source, base)
    if (found != types.length)
      throw new IndexFormatException(source, base, s"a BinaryRow of ${types.length} fields, got arity $found")
    read(bytes, 4, bytes.length - 4, types, source, base)
  }

  /** The arity of a serialized row (its `i32 BE` prefix). */
  def arity(serialized: Array[Byte], source: String, base: Long = 0): Int = {
    if (serialized.length < 4)
      throw new IndexFormatException(source, base, s"a serialized BinaryRow (4-byte arity), got ${serialized.length} bytes")
    val n = ByteReader.i32BE(serialized, 0)
    if (n < 0) throw new IndexFormatException(source, base, s"a BinaryRow arity >= 0, got $n")
    n
  }

  /** Field access over one row's bytes (`bytes(start until start + length)`), every
    * variable-part reference checked against them. */
  final class View private[BinaryRow] (bytes: Array[Byte], start: Int, length: Int, val arity: Int, source: String, base: Long) {
    private val fixedEnd = nullBitsSize(arity) + 8 * arity

    /** Whether field `i` is null. */
    def isNull(i: Int): Boolean = (bytes(start + ((i + 8) >> 3)) & (1 << ((i + 8) & 7))) != 0

    private def slot(i: Int): Int = start + nullBitsSize(arity) + 8 * i

    private def long(p: Int): Long =
      (ByteReader.i32LE(bytes, p).toLong & 0xffffffffL) | (ByteReader.i32LE(bytes, p + 4).toLong << 32)

    private def fail(at: Int, expected: String): Nothing = throw new IndexFormatException(source, base + at, expected)

    /** The bytes a variable-part reference of slot `p` points at. */
    private def variable(p: Int, offset: Long, len: Long): Array[Byte] = {
      if (offset < fixedEnd || len < 0 || offset + len > length)
        fail(p, s"a variable-part reference within the row's $length bytes, got offset $offset length $len")
      java.util.Arrays.copyOfRange(bytes, start + offset.toInt, start + (offset + len).toInt)
    }

    /** The value of non-null field `i` of type `t`. */
    def value(i: Int, t: KeyType): Any = {
      import KeyType._
      val p = slot(i)
      t match {
        case BooleanType                      => bytes(p) != 0
        case TinyIntType                      => bytes(p)
        case SmallIntType                     => ((bytes(p) & 0xff) | (bytes(p + 1) << 8)).toShort
        case IntType | DateType | TimeType(_) => ByteReader.i32LE(bytes, p)
        case BigIntType                       => long(p)
        case FloatType                        => java.lang.Float.intBitsToFloat(ByteReader.i32LE(bytes, p))
        case DoubleType                       => java.lang.Double.longBitsToDouble(long(p))
        case DecimalType(precision, scale) =>
          val word = long(p)
          if (isCompactDecimal(precision)) java.math.BigDecimal.valueOf(word, scale)
          else {
            val content = variable(p, word >>> 32, word & 0xffffffffL)
            if (content.length < 1 || content.length > 16) fail(p, s"a DECIMAL of 1 to 16 bytes, got ${content.length}")
            new java.math.BigDecimal(new BigInteger(content), scale)
          }
        case TimestampType(precision)           => timestamp(p, precision)
        case LocalZonedTimestampType(precision) => timestamp(p, precision)
        case CharType(_) | VarCharType(_) =>
          val content = binary(p)
          try StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(content)).toString
          catch { case e: CharacterCodingException => fail(p, s"UTF-8 text: $e") }
        case BinaryType(_) | VarBinaryType(_) => binary(p)
      }
    }

    private def timestamp(p: Int, precision: Int): (Long, Int) = {
      val word = long(p)
      if (KeyType.isCompactTimestamp(precision)) (word, 0)
      else {
        val nanos = word & 0xffffffffL
        val millis = variable(p, word >>> 32, 8)
        if (nanos > 999999) fail(p, s"a nano-of-millisecond in 0..999999, got $nanos")
        (ByteBuffer.wrap(millis).order(ByteOrder.LITTLE_ENDIAN).getLong, nanos.toInt)
      }
    }

    /** STRING / BINARY: inline when the slot's highest bit is set. */
    private def binary(p: Int): Array[Byte] = {
      val word = long(p)
      if (word < 0) {
        val len = bytes(p + 7) & 0x7f
        if (len > 7) fail(p + 7, s"an inline length of at most 7, got $len")
        java.util.Arrays.copyOfRange(bytes, p, p + len)
      } else variable(p, word >>> 32, word & 0xffffffffL)
    }
  }
}

/** A reusable writer of Paimon `BinaryRow` bytes, field by field as `BinaryRowWriter` writes them
  * (layout in [[BinaryRow]]). Write every field after each [[reset]]; the RowKind byte stays 0 (INSERT). */
final class BinaryRowBuilder(arity: Int) {
  require(arity >= 0, s"arity must be >= 0, got $arity")

  private val nullBitsSize = BinaryRow.nullBitsSize(arity)
  private val fixedSize = nullBitsSize + 8 * arity
  private var buffer = new Array[Byte](fixedSize + 32)
  private var cursor = fixedSize

  /** Starts a new row: header and slots zeroed, variable part emptied. */
  def reset(): Unit = {
    java.util.Arrays.fill(buffer, 0, fixedSize, 0.toByte)
    cursor = fixedSize
  }

  /** `BinaryRowWriter.setNullAt`: null bit set, slot zeroed. */
  def setNullAt(i: Int): Unit = {
    setNullBit(i)
    putLong(slot(i), 0L)
  }

  /** A SQL NULL of type `keyType` as Paimon's null setter writes it: non-compact DECIMAL and
    * TIMESTAMP keep their zeroed variable slot; every other type is [[setNullAt]]. */
  def writeNull(i: Int, keyType: KeyType): Unit = keyType match {
    case KeyType.DecimalType(p, _) if !KeyType.isCompactDecimal(p) =>
      setNullBit(i)
      putVariableSlot(i, 16, 0)
    case KeyType.TimestampType(p) if !KeyType.isCompactTimestamp(p) =>
      setNullBit(i)
      putVariableSlot(i, 8, 0)
    case KeyType.LocalZonedTimestampType(p) if !KeyType.isCompactTimestamp(p) =>
      setNullBit(i)
      putVariableSlot(i, 8, 0)
    case _ => setNullAt(i)
  }

  def writeBoolean(i: Int, v: Boolean): Unit = buffer(slot(i)) = if (v) 1 else 0
  def writeByte(i: Int, v: Byte): Unit = buffer(slot(i)) = v
  def writeShort(i: Int, v: Short): Unit = { val p = slot(i); buffer(p) = v.toByte; buffer(p + 1) = (v >> 8).toByte }
  def writeInt(i: Int, v: Int): Unit = putInt(slot(i), v)
  def writeLong(i: Int, v: Long): Unit = putLong(slot(i), v)
  def writeFloat(i: Int, v: Float): Unit = putInt(slot(i), java.lang.Float.floatToRawIntBits(v))
  def writeDouble(i: Int, v: Double): Unit = putLong(slot(i), java.lang.Double.doubleToRawLongBits(v))

  /** A CHAR/VARCHAR/STRING value given as its UTF-8 bytes. */
  def writeString(i: Int, utf8: Array[Byte]): Unit = writeBinary(i, utf8, 0, utf8.length)

  /** A string from `bytes(offset until offset + len)` (e.g. the backing array of a Spark UTF8String). */
  def writeString(i: Int, bytes: Array[Byte], offset: Int, len: Int): Unit = writeBinary(i, bytes, offset, len)

  def writeBinary(i: Int, bytes: Array[Byte]): Unit = writeBinary(i, bytes, 0, bytes.length)

  /** Bytes of a string or binary: inline in the slot when at most 7, else in the variable part. */
  def writeBinary(i: Int, bytes: Array[Byte], offset: Int, len: Int): Unit =
    if (len <= 7) {
      val p = slot(i)
      java.util.Arrays.fill(buffer, p, p + 8, 0.toByte)
      System.arraycopy(bytes, offset, buffer, p, len)
      buffer(p + 7) = (0x80 | len).toByte
    } else {
      val at = putVariableSlot(i, len, len)
      System.arraycopy(bytes, offset, buffer, at, len)
    }

  /** DECIMAL(precision, _) given by its unscaled value. */
  def writeDecimal(i: Int, unscaled: Long, precision: Int): Unit =
    if (KeyType.isCompactDecimal(precision)) writeLong(i, unscaled)
    else writeDecimal(i, BigInteger.valueOf(unscaled), precision)

  /** DECIMAL(precision, _) given by its unscaled value: a long when precision ≤ 18, else the
    * big-endian two's-complement bytes (at most 16) in a 16-byte variable slot. */
  def writeDecimal(i: Int, unscaled: BigInteger, precision: Int): Unit = {
    require(precision >= 1 && precision <= 38, s"DECIMAL precision must be 1..38, got $precision")
    if (KeyType.isCompactDecimal(precision)) writeLong(i, unscaled.longValueExact())
    else {
      val bytes = unscaled.toByteArray
      require(bytes.length <= 16, s"unscaled DECIMAL($precision) value $unscaled needs ${bytes.length} bytes, at most 16 fit")
      val at = putVariableSlot(i, 16, bytes.length)
      System.arraycopy(bytes, 0, buffer, at, bytes.length)
    }
  }

  /** TIMESTAMP(precision) / TIMESTAMP_LTZ(precision): epoch millis when precision ≤ 3, else the
    * millis in an 8-byte variable slot and the nano-of-millisecond in the fixed slot. */
  def writeTimestamp(i: Int, millis: Long, nanoOfMillisecond: Int, precision: Int): Unit = {
    require(nanoOfMillisecond >= 0 && nanoOfMillisecond <= 999999, s"nanoOfMillisecond must be 0..999999, got $nanoOfMillisecond")
    if (KeyType.isCompactTimestamp(precision)) writeLong(i, millis)
    else putLong(putVariableSlot(i, 8, nanoOfMillisecond), millis)
  }

  /** Number of bytes written (a multiple of 8). */
  def length: Int = cursor

  /** A copy of the row bytes. */
  def bytes: Array[Byte] = java.util.Arrays.copyOf(buffer, cursor)

  /** `BinaryRow.hashCode()` of the row as written so far (Murmur by words, App. A.3). */
  override def hashCode: Int = PaimonHash.murmurWords(buffer, 0, cursor)

  private def slot(i: Int): Int = {
    if (i < 0 || i >= arity) throw new IndexOutOfBoundsException(s"field $i of a row with arity $arity")
    nullBitsSize + 8 * i
  }

  private def setNullBit(i: Int): Unit = {
    val bit = 8 + i
    buffer(bit >>> 3) = (buffer(bit >>> 3) | (1 << (bit & 7))).toByte
  }

  /** Appends a zeroed variable-part block of `size` bytes rounded up to 8, points field `i` at
    * it with `low` as the low half of the slot, and returns the block's offset. */
  private def putVariableSlot(i: Int, size: Int, low: Int): Int = {
    val rounded = (size + 7) & ~7
    val at = cursor
    if (buffer.length < at + rounded) buffer = java.util.Arrays.copyOf(buffer, math.max(buffer.length * 2, at + rounded))
    java.util.Arrays.fill(buffer, at, at + rounded, 0.toByte)
    putLong(slot(i), at.toLong << 32 | (low & 0xffffffffL))
    cursor += rounded
    at
  }

  private def putInt(p: Int, v: Int): Unit = {
    buffer(p) = v.toByte
    buffer(p + 1) = (v >> 8).toByte
    buffer(p + 2) = (v >> 16).toByte
    buffer(p + 3) = (v >> 24).toByte
  }

  private def putLong(p: Int, v: Long): Unit = {
    putInt(p, v.toInt)
    putInt(p + 4, (v >>> 32).toInt)
  }
}

/** The Paimon types a key field can have, parsed from their SQL form (`DataType.asSQLString`). */
sealed trait KeyType

object KeyType {
  case object BooleanType extends KeyType
  case object TinyIntType extends KeyType
  case object SmallIntType extends KeyType
  case object IntType extends KeyType
  case object BigIntType extends KeyType
  case object FloatType extends KeyType
  case object DoubleType extends KeyType
  case object DateType extends KeyType
  final case class TimeType(precision: Int) extends KeyType
  final case class TimestampType(precision: Int) extends KeyType
  final case class LocalZonedTimestampType(precision: Int) extends KeyType
  final case class CharType(length: Int) extends KeyType
  final case class VarCharType(length: Int) extends KeyType
  final case class BinaryType(length: Int) extends KeyType
  final case class VarBinaryType(length: Int) extends KeyType
  final case class DecimalType(precision: Int, scale: Int) extends KeyType

  def isCompactDecimal(precision: Int): Boolean = precision <= 18
  def isCompactTimestamp(precision: Int): Boolean = precision <= 3

  private val Sql =
    """([A-Z_]+)(?:\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?(\s+WITHOUT\s+TIME\s+ZONE|\s+WITH\s+LOCAL\s+TIME\s+ZONE)?""".r

  /** Parses `INT`, `BIGINT`, `STRING`, `DECIMAL(10, 2)`, `TIMESTAMP(6)`, `TIMESTAMP(3) WITH LOCAL
    * TIME ZONE`, `TIMESTAMP_LTZ(3)`, `CHAR(n)`, `VARBINARY(n)`, `BYTES`, …; case-insensitive, with
    * an optional `NOT NULL`. */
  def parse(sql: String): KeyType = {
    def unsupported(why: String) = throw new IllegalArgumentException(s"unsupported key type '$sql': $why")
    val normalized = sql.trim.toUpperCase(java.util.Locale.ROOT).stripSuffix("NOT NULL").trim
    normalized match {
      case Sql(name, first, second, zone) =>
        val args = Seq(first, second).takeWhile(_ != null).map(a => scala.util.Try(a.toInt).getOrElse(unsupported(s"bad number $a")))
        def noArgs(t: KeyType): KeyType = if (args.isEmpty) t else unsupported(s"$name takes no arguments")
        def one(default: Int, min: Int, max: Int): Int = args match {
          case Seq() => default
          case Seq(n) if n >= min && n <= max => n
          case _ => unsupported(s"$name takes one argument in $min..$max")
        }
        val withLocalZone = zone != null && zone.contains("LOCAL")
        if (zone != null && name != "TIMESTAMP") unsupported("only TIMESTAMP has a time zone clause")
        name match {
          case "BOOLEAN" => noArgs(BooleanType)
          case "TINYINT" => noArgs(TinyIntType)
          case "SMALLINT" => noArgs(SmallIntType)
          case "INT" | "INTEGER" => noArgs(IntType)
          case "BIGINT" => noArgs(BigIntType)
          case "FLOAT" => noArgs(FloatType)
          case "DOUBLE" => noArgs(DoubleType)
          case "DATE" => noArgs(DateType)
          case "TIME" => TimeType(one(0, 0, 9))
          case "TIMESTAMP" if withLocalZone => LocalZonedTimestampType(one(6, 0, 9))
          case "TIMESTAMP" => TimestampType(one(6, 0, 9))
          case "TIMESTAMP_LTZ" => LocalZonedTimestampType(one(6, 0, 9))
          case "CHAR" => CharType(one(1, 1, Int.MaxValue))
          case "VARCHAR" => VarCharType(one(1, 1, Int.MaxValue))
          case "STRING" => noArgs(VarCharType(Int.MaxValue))
          case "BINARY" => BinaryType(one(1, 1, Int.MaxValue))
          case "VARBINARY" => VarBinaryType(one(1, 1, Int.MaxValue))
          case "BYTES" => noArgs(VarBinaryType(Int.MaxValue))
          case "DECIMAL" =>
            args match {
              case Seq() => DecimalType(10, 0)
              case Seq(p) if p >= 1 && p <= 38 => DecimalType(p, 0)
              case Seq(p, s) if p >= 1 && p <= 38 && s >= 0 && s <= p => DecimalType(p, s)
              case _ => unsupported("DECIMAL(p, s) needs 1 <= p <= 38 and 0 <= s <= p")
            }
          case _ => unsupported("not a key type")
        }
      case _ => unsupported("not a key type")
    }
  }
}
