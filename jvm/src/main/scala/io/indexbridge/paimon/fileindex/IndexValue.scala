package io.indexbridge.paimon.fileindex

import java.nio.charset.StandardCharsets

import io.indexbridge.paimon.{KeyType, PaimonHash}
import io.indexbridge.paimon.KeyType._

/** How the file indexes see a column value: the Paimon internal value of spec §1.4 reduced to
  * one `Long` key or one byte string, plus the Java behaviour of the boxed key Paimon's writers
  * put into their HashMaps (hashCode, compareTo) and the bytes the bitmap index stores for it.
  *
  * {{{
  * type                              key (Long)                              bitmap bytes  Java hashCode      order
  * TINYINT / SMALLINT / INT          the value                               1 / 2 / 4     value              signed
  * DATE (days), TIME (millis of day) the value                               4             value              signed
  * BIGINT                            the value                               8             (int)(v ^ v>>>32)  signed
  * TIMESTAMP(p), TIMESTAMP_LTZ(p)    millis (p <= 3) or micros               8             as BIGINT          signed
  * FLOAT                             floatToIntBits (canonical NaN)          4             the bits           Float.compare
  * DOUBLE                            doubleToLongBits (canonical NaN)        8             as BIGINT          Double.compare
  * BOOLEAN                           1 / 0                                   1             1231 / 1237        false < true
  * DECIMAL(p, s)                     unscaled value at scale s (must fit)    -             -                  signed
  * CHAR / VARCHAR / STRING           (bytes) UTF-8                           i32 len+bytes Murmur (App. A.3)  unsigned bytes, shorter first
  * BINARY / VARBINARY                (bytes) the bytes                       -             -                  -
  * }}}
  *
  * Values handed to writers and readers (the same conventions as [[io.indexbridge.paimon.KeyHash]]):
  * `Byte`/`Short`/`Int`/`Long` for the integral types, DATE and TIME; `Float`, `Double`, `Boolean`;
  * `String` or its UTF-8 `Array[Byte]` for strings; `Array[Byte]` for binary; `BigDecimal` or
  * `java.math.BigDecimal` for DECIMAL; `(millis: Long, nanoOfMillisecond: Int)` or millis as `Long`
  * for timestamps; `null` = SQL NULL.
  */
object IndexValue {

  /** True for the types whose key is a byte string (strings and binary). */
  def isBytes(t: KeyType): Boolean = t match {
    case CharType(_) | VarCharType(_) | BinaryType(_) | VarBinaryType(_) => true
    case _                                                              => false
  }

  def isString(t: KeyType): Boolean = t match {
    case CharType(_) | VarCharType(_) => true
    case _                            => false
  }

  private def wrong(t: KeyType, v: Any, expected: String): Nothing =
    throw new IllegalArgumentException(s"a $t value must be $expected, got ${v.getClass.getSimpleName} $v")

  /** The `Long` key of a non-null value of a non-bytes type (table above). */
  def toLong(t: KeyType, v: Any): Long = {
    def integral(min: Long, max: Long): Long = {
      val n = v match {
        case b: Byte  => b.toLong
        case s: Short => s.toLong
        case i: Int   => i.toLong
        case l: Long  => l
        case _        => wrong(t, v, "an integral number")
      }
      if (n < min || n > max) wrong(t, v, s"in $min..$max")
      n
    }
    t match {
      case TinyIntType                      => integral(Byte.MinValue, Byte.MaxValue)
      case SmallIntType                     => integral(Short.MinValue, Short.MaxValue)
      case IntType | DateType | TimeType(_) => integral(Int.MinValue, Int.MaxValue)
      case BigIntType                       => integral(Long.MinValue, Long.MaxValue)
      case FloatType =>
        v match {
          case f: Float => java.lang.Float.floatToIntBits(f).toLong
          case _        => wrong(t, v, "a Float")
        }
      case DoubleType =>
        v match {
          case d: Double => java.lang.Double.doubleToLongBits(d)
          case _         => wrong(t, v, "a Double")
        }
      case BooleanType =>
        v match {
          case b: Boolean => if (b) 1L else 0L
          case _          => wrong(t, v, "a Boolean")
        }
      case TimestampType(p) => timestamp(t, v, p)
      case LocalZonedTimestampType(p) => timestamp(t, v, p)
      case DecimalType(_, scale) =>
        val d = v match {
          case d: BigDecimal           => d.bigDecimal
          case d: java.math.BigDecimal => d
          case _                       => wrong(t, v, "a BigDecimal")
        }
        // Decimal.toUnscaledLong: the compact long for p <= 18, else BigDecimal.longValueExact
        d.setScale(scale).unscaledValue.longValueExact()
      case _ => throw new IllegalArgumentException(s"$t values have no Long key")
    }
  }

  private def timestamp(t: KeyType, v: Any, precision: Int): Long = v match {
    case (millis: Long, nanos: Int) => FastHash.timestampLong(millis, nanos, precision)
    case millis: Long               => FastHash.timestampLong(millis, 0, precision)
    case _                          => wrong(t, v, "(millis: Long, nanoOfMillisecond: Int) or millis")
  }

  /** The key bytes of a non-null string (UTF-8) or binary value. */
  def toBytes(t: KeyType, v: Any): Array[Byte] = v match {
    case s: String if isString(t) => s.getBytes(StandardCharsets.UTF_8)
    case b: Array[Byte]           => b
    case _                        => wrong(t, v, if (isString(t)) "a String or its UTF-8 bytes" else "an Array[Byte]")
  }

  /** Width of a `Long` key in the bitmap index (`DataOutput.writeByte/Short/Int/Long`). */
  def keyWidth(t: KeyType): Int = t match {
    case TinyIntType | BooleanType                    => 1
    case SmallIntType                                 => 2
    case IntType | DateType | TimeType(_) | FloatType => 4
    case _                                            => 8
  }

  /** `hashCode()` of the boxed Java key (App. A.4). */
  def javaHashCode(t: KeyType, key: Long): Int = t match {
    case BooleanType                                                   => if (key != 0) 1231 else 1237
    case TinyIntType | SmallIntType | IntType | DateType | TimeType(_) => key.toInt
    case FloatType                                                     => key.toInt
    case _                                                             => (key ^ (key >>> 32)).toInt
  }

  /** `compareTo` of the boxed Java keys (Float/Double.compare for floating point). */
  def compareKeys(t: KeyType, a: Long, b: Long): Int = t match {
    case FloatType  => java.lang.Float.compare(java.lang.Float.intBitsToFloat(a.toInt), java.lang.Float.intBitsToFloat(b.toInt))
    case DoubleType => java.lang.Double.compare(java.lang.Double.longBitsToDouble(a), java.lang.Double.longBitsToDouble(b))
    case _          => java.lang.Long.compare(a, b)
  }

  /** `BinaryString.compareTo`: unsigned bytes, then the shorter first. */
  def compareBytes(a: Array[Byte], b: Array[Byte]): Int = java.util.Arrays.compareUnsigned(a, b)

  /** `BinaryString.hashCode` (App. A.3). */
  def bytesHashCode(b: Array[Byte]): Int = PaimonHash.murmurBytes(b, 0, b.length)
}
