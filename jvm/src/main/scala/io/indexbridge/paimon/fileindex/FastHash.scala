package io.indexbridge.paimon.fileindex

import net.jpountz.xxhash.XXHashFactory

import java.nio.charset.StandardCharsets

/** Paimon's `FastHash`: the 64-bit hash of a typed value used by the bloom-filter index
  * (spec §5.3, App. A.1–A.2).
  *
  * {{{
  * CHAR, VARCHAR, STRING           xxh64(seed 0) of the UTF-8 bytes
  * BINARY, VARBINARY               xxh64(seed 0) of the bytes
  * TINYINT … BIGINT, DATE, TIME    wang64(value sign-extended to 64 bits)
  * FLOAT                           wang64(sign-extended floatToIntBits); NaN -> 0x7fc00000
  * DOUBLE                          wang64(doubleToLongBits); NaN -> 0x7ff8000000000000
  * TIMESTAMP(p), TIMESTAMP_LTZ(p)  wang64(millis if p <= 3 else micros)
  * }}}
  *
  * XXH64 is lz4-java's (shipped with Spark), its Java (Unsafe) implementation: the JNI one costs
  * a native call per value, which for the short keys of a column is most of the hash (measured
  * 2.2x Paimon's whole bloom build over 1M short strings; Paimon hashes in Java too). `wang64` is hand-written: it is Paimon's own variant
  * of Thomas Wang's hash, with arithmetic right shifts, which no library provides. */
object FastHash {
  private val xxHash64 = XXHashFactory.fastestJavaInstance().hash64()

  def xxh64(bytes: Array[Byte], offset: Int, length: Int): Long = xxHash64.hash(bytes, offset, length, 0L)
  def xxh64(bytes: Array[Byte]): Long = xxh64(bytes, 0, bytes.length)

  def wang64(value: Long): Long = {
    var key = value
    key = ~key + (key << 21)
    key = key ^ (key >> 24)
    key = key + (key << 3) + (key << 8)
    key = key ^ (key >> 14)
    key = key + (key << 2) + (key << 4)
    key = key ^ (key >> 28)
    key + (key << 31)
  }

  /** The long Paimon's indexes use for a timestamp (spec §1.4): millis, or micros above p=3. */
  def timestampLong(millis: Long, nanoOfMillisecond: Int, precision: Int): Long =
    if (precision <= 3) millis else Math.addExact(Math.multiplyExact(millis, 1000L), (nanoOfMillisecond / 1000).toLong)

  def hashString(value: String): Long = xxh64(value.getBytes(StandardCharsets.UTF_8))
  def hashIntegral(value: Long): Long = wang64(value)
  def hashFloat(value: Float): Long = wang64(java.lang.Float.floatToIntBits(value).toLong)
  def hashDouble(value: Double): Long = wang64(java.lang.Double.doubleToLongBits(value))
  def hashTimestamp(millis: Long, nanoOfMillisecond: Int, precision: Int): Long =
    wang64(timestampLong(millis, nanoOfMillisecond, precision))
}
