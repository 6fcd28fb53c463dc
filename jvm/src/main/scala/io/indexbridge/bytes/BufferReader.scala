package io.indexbridge.bytes

import java.nio.ByteBuffer

import io.indexbridge.IndexFormatException

/** A bounds-checked cursor over `buf` between `start` and `end`, for inputs that live in a
  * [[java.nio.ByteBuffer]] (a memory-mapped file) rather than an array; the twin of
  * [[ByteReader]] for buffers. Positions are absolute indexes into `buf` — file offsets when the
  * buffer maps a whole file — and every error names the source, the offset and what was expected.
  */
final class BufferReader(val buf: ByteBuffer, val source: String, val start: Int, val end: Int) {
  if (start < 0 || end > buf.limit() || start > end)
    throw new IndexFormatException(source, start.toLong, s"a range inside the ${buf.limit()} bytes of data (asked for $start until $end)")

  private var position = start

  def pos: Int = position

  def remaining: Int = end - position

  /** Moves to absolute index `p`, which must lie in `start..end`. */
  def seek(p: Long, what: => String): BufferReader = {
    if (p < start || p > end) fail(s"$what: an offset in $start..$end, found $p")
    position = p.toInt
    this
  }

  def fail(expected: String, at: Long = position.toLong): Nothing = throw new IndexFormatException(source, at, expected)

  def require(n: Long, what: => String): Unit =
    if (n < 0 || n > remaining) fail(s"$what: need $n bytes, $remaining left")

  def u8(what: => String = "u8"): Int = {
    require(1, what)
    val v = buf.get(position) & 0xff
    position += 1
    v
  }

  def u32BE(what: => String = "u32 BE"): Long = {
    require(4, what)
    val v = buf.getInt(position) & 0xffffffffL // a ByteBuffer is big-endian unless told otherwise
    position += 4
    v
  }

  def u64BE(what: => String = "u64 BE"): Long = {
    require(8, what)
    val v = buf.getLong(position)
    position += 8
    v
  }

  /** Go's uvarint (unsigned LEB128, at most 10 bytes); the result is the raw 64 bits. */
  def uvarint(what: => String): Long = {
    val at = position
    var x = 0L
    var shift = 0
    while (true) {
      if (position >= end) fail(s"$what: a uvarint, cut off after ${position - at} bytes", at.toLong)
      val b = buf.get(position) & 0xff
      position += 1
      if (b < 0x80) {
        if (shift == 63 && b > 1) fail(s"$what: a uvarint inside 64 bits", at.toLong)
        return x | (b.toLong << shift)
      }
      if (shift == 63) fail(s"$what: a uvarint of at most 10 bytes", at.toLong)
      x |= (b & 0x7f).toLong << shift
      shift += 7
    }
    0L
  }

  /** A uvarint that must lie in `0..max` (a count, length or offset that indexes something). */
  def uvarintUpTo(max: Long, what: => String): Int = {
    val at = position
    val v = uvarint(what)
    if (v < 0 || v > max) fail(s"$what: a value in 0..$max, found ${java.lang.Long.toUnsignedString(v)}", at.toLong)
    v.toInt
  }

  /** A copy of the next `n` bytes. */
  def take(n: Int, what: => String): Array[Byte] = {
    require(n.toLong, what)
    val out = new Array[Byte](n)
    buf.get(position, out)
    position += n
    out
  }

  def skip(n: Long, what: => String): Unit = {
    require(n, what)
    position += n.toInt
  }

  /** A reader over `from until to` of the same buffer (absolute indexes), checked against this one's range. */
  def range(from: Long, to: Long, what: => String): BufferReader = {
    if (from < start || to > end || from > to) fail(s"$what: a range inside $start..$end, found $from..$to", from)
    new BufferReader(buf, source, from.toInt, to.toInt)
  }
}
