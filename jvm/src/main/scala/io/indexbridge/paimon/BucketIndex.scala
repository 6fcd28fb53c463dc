package io.indexbridge.paimon

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets

/** The dynamic bucket index (index type `HASH`, spec/paimon.md §3) and the key hashing behind it.
  *
  * {{{
  * HASH index file   n × i32 BE hash          no header, footer or checksum; n = file size / 4
  *                                            (a trailing partial int is end of file)
  * hash              BinaryRow.hashCode() of the trimmed primary key row ([[BinaryRowBuilder]])
  *                   = Murmur3-x86-32 variant, seed 42, over the row's 8-byte words (App. A.3)
  * order             iteration order of Paimon's IntHashSet (fastutil IntOpenHashSet)
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
  def paimonOrder(hashesInAddOrder: Array[Int]): Array[Int] = paimonOrder(hashesInAddOrder, 16)

  /** [[paimonOrder]] for a set made with `new IntOpenHashSet(expected)` (Paimon restores a
    * bucket's index into `new IntHashSet((int) rowCount)` before adding new hashes). */
  def paimonOrder(hashesInAddOrder: Array[Int], expected: Int): Array[Int] = {
    val set = new IntOpenHashSetOrder(expected)
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
  private final class IntOpenHashSetOrder(expected: Int) {
    private val LoadFactor = 0.75f
    private var n = arraySize(expected)
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
