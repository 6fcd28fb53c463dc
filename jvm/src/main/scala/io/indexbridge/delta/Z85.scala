package io.indexbridge.delta

import java.nio.ByteBuffer
import java.util.UUID

import io.indexbridge.IndexFormatException

/** Z85 (ZeroMQ RFC 32) as Delta Lake uses it in deletion vector descriptors.
  *
  * {{{
  * 4 bytes (u32 BE)  ->  5 characters, most significant base-85 digit first
  * alphabet          0-9 a-z A-Z . - : + = ^ ! / * ? & < > ( ) [ ] { } @ % $ #
  * unaligned input   zero-padded to a multiple of 4 bytes before encoding (Delta's
  *                   Codec.Base85Codec.encodeBytes); decoding cuts to the recorded size
  * UUID              its 16 bytes, most significant half first: always 20 characters
  * }}}
  *
  * Hand-written: no library on Spark's classpath implements Z85 (commons-codec has Base32/64
  * only; JeroMQ's `ZMQ.Z85` is not shipped with Spark), and Delta's own `Codec` lives in
  * delta-spark, which a Spark job writing Delta DVs need not have. The padding and the
  * cut-to-size are Delta's, not Z85's. Unlike Delta, decoding rejects a group whose value
  * exceeds 2^32-1 (Delta wraps it silently). Mirrors `indexbridge.delta.z85`.
  */
object Z85 {
  val Alphabet: String = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
  val EncodedUuidLength = 20

  private val Decode: Array[Int] = {
    val table = Array.fill(128)(-1)
    Alphabet.zipWithIndex.foreach { case (c, i) => table(c.toInt) = i }
    table
  }

  /** Z85 of `data`, zero-padded to a multiple of 4 bytes first (as Delta does). */
  def encode(data: Array[Byte]): String = {
    val padded = java.util.Arrays.copyOf(data, (data.length + 3) / 4 * 4)
    val out = new java.lang.StringBuilder(padded.length / 4 * 5)
    val digits = new Array[Char](5)
    val buffer = ByteBuffer.wrap(padded)
    while (buffer.hasRemaining) {
      var value = buffer.getInt() & 0xffffffffL
      var i = 4
      while (i >= 0) {
        digits(i) = Alphabet.charAt((value % 85).toInt)
        value /= 85
        i -= 1
      }
      out.append(digits)
    }
    out.toString
  }

  /** The bytes of a Z85 string; with `size` >= 0 the first `size` bytes (Delta's padding
    * dropped; the decoded length must cover `size` with less than 4 bytes of padding). Errors
    * name the character's index plus `offset`. */
  def decode(text: String, size: Int = -1, source: String = "<z85>", offset: Int = 0): Array[Byte] = {
    if (text.length % 5 != 0)
      throw new IndexFormatException(source, offset.toLong + text.length, s"a Z85 string of a multiple of 5 characters, found ${text.length}")
    val out = ByteBuffer.allocate(text.length / 5 * 4)
    var start = 0
    while (start < text.length) {
      var value = 0L
      for (i <- start until start + 5) {
        val c = text.charAt(i)
        val digit = if (c < 128) Decode(c.toInt) else -1
        if (digit < 0) throw new IndexFormatException(source, offset.toLong + i, s"a Z85 character, found '${c}'")
        value = value * 85 + digit
      }
      if (value > 0xffffffffL)
        throw new IndexFormatException(source, offset.toLong + start,
          s"a Z85 group of at most 2^32-1, found '${text.substring(start, start + 5)}' = $value")
      out.putInt(value.toInt)
      start += 5
    }
    val bytes = out.array
    if (size < 0) bytes
    else {
      if (size > bytes.length || bytes.length - size >= 4)
        throw new IndexFormatException(source, offset.toLong,
          s"Z85 data of $size bytes (padded to ${(size.toLong + 3) / 4 * 4}), found ${bytes.length} bytes")
      java.util.Arrays.copyOf(bytes, size)
    }
  }

  /** The 20 characters of a UUID. */
  def encodeUuid(uuid: UUID): String =
    encode(ByteBuffer.allocate(16).putLong(uuid.getMostSignificantBits).putLong(uuid.getLeastSignificantBits).array)

  def decodeUuid(text: String, source: String = "<z85>", offset: Int = 0): UUID = {
    if (text.length != EncodedUuidLength)
      throw new IndexFormatException(source, offset.toLong, s"a Z85 UUID of $EncodedUuidLength characters, found ${text.length}")
    val buffer = ByteBuffer.wrap(decode(text, -1, source, offset))
    new UUID(buffer.getLong, buffer.getLong)
  }
}
