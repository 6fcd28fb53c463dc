package io.indexbridge.paimon

import java.math.BigInteger
import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets

/** The dynamic bucket index (index type `HASH`, spec/paimon.md §3) and the key hashing behind it.
  *
  * {{{
  * HASH index file   n × i32 BE hash          no header, footer or checksum; n = file size / 4
  *                                            (a trailing partial int is end of file)
  * hash              BinaryRow.hashCode() of the trimmed primary key row
  *                   = Murmur3-x86-32 variant, seed 42, over the row's 8-byte words (App. A.3)
  * order             iteration order of Paimon's IntHashSet (fastutil IntOpenHashSet)
  *
  * BinaryRow (as BinaryRowWriter writes it, little-endian)
  *   header   ((arity + 63 + 8) / 64) × 8 bytes: byte 0 = RowKind, null bit of field i = bit 8 + i
  *   fixed    arity × 8-byte slot
  *              BOOLEAN/TINYINT 1 byte, SMALLINT 2, INT/DATE/TIME/FLOAT 4, BIGINT/DOUBLE 8
  *              DECIMAL(p ≤ 18) unscaled long;  TIMESTAMP(p ≤ 3) epoch millis
  *              bytes ≤ 7 (STRING/BINARY): the bytes, top byte 0x80 | length
  *              otherwise offset << 32 | length of the variable part
  *              DECIMAL(p > 18): offset << 32 | length of the big-endian unscaled bytes, in a
  *                               16-byte variable slot (written, zero-filled, even for NULL)
  *              TIMESTAMP(p > 3): offset << 32 | nanoOfMillisecond; millis in an 8-byte
  *                               variable slot (written, zero-filled, even for NULL)
  *   variable each value padded with zeros to a multiple of 8 bytes
  * }}}
  */
object PaimonHash {
  private val Seed = 42
  private val C1 = 0xcc9e2d51
  private val C2 = 0x1b873593

  /** `MurmurHashUtils.hashBytesByWords`: `len` must be a multiple of 4 (BinaryRow.hashCode). */
  def murmurWords(bytes: Array[Byte], off: Int, len: Int): Int = {
    require(len % 4 == 0, s"murmurWords hashes whole 4-byte words, got $len bytes")
    fmix(hashWords(bytes, off, len), len)
  }

  /** `MurmurHashUtils.hashBytes` (BinarySection / BinaryString.hashCode): words, then each
    * remaining byte sign-extended and mixed on its own. */
  def murmurBytes(bytes: Array[Byte], off: Int, len: Int): Int = {
    val aligned = len - len % 4
    var h = hashWords(bytes, off, aligned)
    var i = aligned
    while (i < len) {
      h = mixH1(h, mixK1(bytes(off + i).toInt))
      i += 1
    }
    fmix(h, len)
  }

  private def hashWords(bytes: Array[Byte], off: Int, len: Int): Int = {
    var h = Seed
    var i = 0
    while (i < len) {
      val p = off + i
      val word = (bytes(p) & 0xff) | (bytes(p + 1) & 0xff) << 8 | (bytes(p + 2) & 0xff) << 16 | bytes(p + 3) << 24
      h = mixH1(h, mixK1(word))
      i += 4
    }
    h
  }

  private def mixK1(k: Int): Int = Integer.rotateLeft(k * C1, 15) * C2

  private def mixH1(h: Int, k: Int): Int = Integer.rotateLeft(h ^ k, 13) * 5 + 0xe6546b64

  private def fmix(hash: Int, len: Int): Int = {
    var h = hash ^ len
    h ^= h >>> 16
    h *= 0x85ebca6b
    h ^= h >>> 13
    h *= 0xc2b2ae35
    h ^ (h >>> 16)
  }
}

/** A reusable writer of Paimon `BinaryRow` bytes, field by field as `BinaryRowWriter` writes them
  * (layout above). Write every field after each [[reset]]; the RowKind byte stays 0 (INSERT). */
final class BinaryRowBuilder(arity: Int) {
  require(arity >= 0, s"arity must be >= 0, got $arity")

  private val nullBitsSize = ((arity + 63 + 8) / 64) * 8
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

/** Paimon's key row and its hash from typed values.
  *
  * Values per type: BOOLEAN `Boolean`; TINYINT/SMALLINT/INT/DATE (days)/TIME (millis of day)/
  * BIGINT any of `Byte`/`Short`/`Int`/`Long` in range; FLOAT `Float`; DOUBLE `Double`;
  * CHAR/VARCHAR `String` or its UTF-8 `Array[Byte]`; BINARY/VARBINARY `Array[Byte]`; DECIMAL
  * `BigDecimal` or `java.math.BigDecimal` with at most `scale` fraction digits; TIMESTAMP /
  * TIMESTAMP_LTZ `(millis: Long, nanoOfMillisecond: Int)` or millis as `Long`; `null` = SQL NULL.
  */
object KeyHash {
  import KeyType._

  /** The `BinaryRow` bytes of the key. */
  def binaryRow(values: Seq[Any], types: Seq[KeyType]): Array[Byte] = build(values, types).bytes

  /** `BinaryRow.hashCode()` of the key: the int stored in HASH index files. */
  def hash(values: Seq[Any], types: Seq[KeyType]): Int = build(values, types).hashCode

  private def build(values: Seq[Any], types: Seq[KeyType]): BinaryRowBuilder = {
    require(values.length == types.length, s"${values.length} values for ${types.length} key types")
    val row = new BinaryRowBuilder(types.length)
    for (((value, keyType), i) <- values.zip(types).zipWithIndex) write(row, i, value, keyType)
    row
  }

  private def write(row: BinaryRowBuilder, i: Int, value: Any, keyType: KeyType): Unit = {
    def wrong(expected: String): Nothing =
      throw new IllegalArgumentException(
        s"key field $i of type $keyType expects $expected, got ${value.getClass.getSimpleName} $value"
      )
    def integral(min: Long, max: Long): Long = {
      val v = value match {
        case b: Byte  => b.toLong
        case s: Short => s.toLong
        case n: Int   => n.toLong
        case l: Long  => l
        case _        => wrong("an integral number")
      }
      if (v < min || v > max) wrong(s"a value in $min..$max")
      v
    }
    if (value == null) row.writeNull(i, keyType)
    else
      keyType match {
        case BooleanType => row.writeBoolean(i, value match { case b: Boolean => b; case _ => wrong("a Boolean") })
        case TinyIntType => row.writeByte(i, integral(Byte.MinValue, Byte.MaxValue).toByte)
        case SmallIntType => row.writeShort(i, integral(Short.MinValue, Short.MaxValue).toShort)
        case IntType | DateType | TimeType(_) => row.writeInt(i, integral(Int.MinValue, Int.MaxValue).toInt)
        case BigIntType => row.writeLong(i, integral(Long.MinValue, Long.MaxValue))
        case FloatType  => row.writeFloat(i, value match { case f: Float => f; case _ => wrong("a Float") })
        case DoubleType => row.writeDouble(i, value match { case d: Double => d; case _ => wrong("a Double") })
        case CharType(_) | VarCharType(_) =>
          value match {
            case s: String      => row.writeString(i, s.getBytes(StandardCharsets.UTF_8))
            case b: Array[Byte] => row.writeString(i, b)
            case _              => wrong("a String or its UTF-8 bytes")
          }
        case BinaryType(_) | VarBinaryType(_) =>
          row.writeBinary(i, value match { case b: Array[Byte] => b; case _ => wrong("an Array[Byte]") })
        case DecimalType(precision, scale) =>
          val decimal = value match {
            case d: BigDecimal           => d.bigDecimal
            case d: java.math.BigDecimal => d
            case _                       => wrong("a BigDecimal")
          }
          val atScale =
            try decimal.setScale(scale)
            catch { case _: ArithmeticException => wrong(s"at most $scale fraction digits") }
          if (atScale.precision > precision) wrong(s"at most $precision digits")
          row.writeDecimal(i, atScale.unscaledValue, precision)
        case TimestampType(precision) => writeTimestamp(row, i, value, precision, wrong)
        case LocalZonedTimestampType(precision) => writeTimestamp(row, i, value, precision, wrong)
      }
  }

  private def writeTimestamp(row: BinaryRowBuilder, i: Int, value: Any, precision: Int, wrong: String => Nothing): Unit =
    value match {
      case (millis: Long, nanos: Int) if nanos >= 0 && nanos <= 999999 => row.writeTimestamp(i, millis, nanos, precision)
      case millis: Long => row.writeTimestamp(i, millis, 0, precision)
      case _            => wrong("(millis: Long, nanoOfMillisecond: Int 0..999999) or millis: Long")
    }
}

/** HASH index files: encode, decode, and the order Paimon writes them in. */
object HashIndex {
  val IndexType = "HASH"

  /** Iteration order of Paimon's `IntHashSet` after `add` of each hash in turn: a default
    * fastutil 8.5.12 `IntOpenHashSet`, iterated as `toIntArray()` does. */
  def paimonOrder(hashesInAddOrder: Array[Int]): Array[Int] = {
    val set = new IntOpenHashSetOrder
    hashesInAddOrder.foreach(set.add)
    set.toIntArray
  }

  /** The file bytes for `hashes` in the given order. */
  def encode(hashes: Array[Int]): Array[Byte] = {
    val out = new Array[Byte](Math.multiplyExact(hashes.length, 4))
    ByteBuffer.wrap(out).asIntBuffer().put(hashes)
    out
  }

  /** The file Paimon writes after adding `hashesInAddOrder` to its IntHashSet. */
  def encodePaimon(hashesInAddOrder: Array[Int]): Array[Byte] = encode(paimonOrder(hashesInAddOrder))

  /** The hashes of a file, in file order. Every byte string is a valid file (a trailing partial
    * int is end of file), so `source` only names the file for callers' messages. */
  def decode(bytes: Array[Byte], source: String): Array[Int] = {
    val out = new Array[Int](bytes.length / 4)
    ByteBuffer.wrap(bytes).asIntBuffer().get(out)
    out
  }

  /** fastutil's open-addressing int set, reduced to what decides iteration order.
    *
    * {{{
    * table    n slots (n = 32 at first), 0 marks a free slot; the key 0 lives outside (containsNull)
    * slot     mix(k) & (n - 1), mix(x) = h ^ (h >>> 16) with h = x · 0x9E3779B9; linear probing upwards
    * grow     when size reaches maxFill + 1: n = arraySize(size + 1), and the old slots are
    *          re-inserted from n-1 down to 0
    * iterate  0 first if present, then slots n-1 down to 0
    * }}}
    */
  private final class IntOpenHashSetOrder {
    private val LoadFactor = 0.75f
    private var n = arraySize(16)
    private var keys = new Array[Int](n)
    private var maxFill = maxFillOf(n)
    private var containsZero = false
    private var size = 0

    def add(k: Int): Unit = {
      if (k == 0) {
        if (containsZero) return
        containsZero = true
      } else {
        var pos = mix(k) & (n - 1)
        while (keys(pos) != 0) {
          if (keys(pos) == k) return
          pos = (pos + 1) & (n - 1)
        }
        keys(pos) = k
      }
      size += 1
      if (size - 1 >= maxFill) rehash(arraySize(size + 1))
    }

    def toIntArray: Array[Int] = {
      val out = new Array[Int](size)
      var j = 0
      if (containsZero) { out(0) = 0; j = 1 }
      var pos = n - 1
      while (pos >= 0) {
        if (keys(pos) != 0) { out(j) = keys(pos); j += 1 }
        pos -= 1
      }
      out
    }

    private def rehash(newN: Int): Unit = {
      val next = new Array[Int](newN)
      var i = n
      var left = if (containsZero) size - 1 else size
      while (left > 0) {
        i -= 1
        while (keys(i) == 0) i -= 1
        var pos = mix(keys(i)) & (newN - 1)
        while (next(pos) != 0) pos = (pos + 1) & (newN - 1)
        next(pos) = keys(i)
        left -= 1
      }
      n = newN
      keys = next
      maxFill = maxFillOf(newN)
    }

    private def mix(x: Int): Int = {
      val h = x * 0x9e3779b9
      h ^ (h >>> 16)
    }

    private def arraySize(expected: Int): Int = {
      val s = math.max(2L, nextPowerOfTwo(math.ceil((expected / LoadFactor).toDouble).toLong))
      if (s > (1 << 30)) throw new IllegalArgumentException(s"too large: $expected hashes exceed what IntOpenHashSet can hold")
      s.toInt
    }

    private def nextPowerOfTwo(x: Long): Long = 1L << (64 - java.lang.Long.numberOfLeadingZeros(x - 1))

    private def maxFillOf(n: Int): Int = math.min(math.ceil((n * LoadFactor).toDouble).toInt, n - 1)
  }
}
