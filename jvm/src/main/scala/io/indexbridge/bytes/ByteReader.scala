package io.indexbridge.bytes

import io.indexbridge.IndexFormatException

/** A bounds-checked cursor over `bytes(start until end)`.
  *
  * Positions are indexes into `bytes`; when `bytes` holds a whole file (the usual case) they
  * are file offsets, which is what every error reports. Each read names what it reads, and
  * every length is checked against the bytes actually left before anything is allocated, so
  * a short or lying input ends in one [[IndexFormatException]]:
  * `source: offset N: <what>: need 4 bytes, 1 left`.
  */
final class ByteReader(val bytes: Array[Byte], val source: String, start: Int, val end: Int) {
  if (start < 0 || end > bytes.length || start > end)
    throw new IndexFormatException(
      source,
      start.toLong,
      s"a range inside the ${bytes.length} bytes of data (asked for $start until $end)"
    )

  private var position = start

  /** Index of the next byte to read. */
  def pos: Int = position

  /** Bytes left before `end`. */
  def remaining: Int = end - position

  /** Fails unless `n` more bytes are available. */
  def require(n: Long, what: String): Unit =
    if (n < 0 || n > remaining)
      fail(s"$what: need $n bytes, $remaining left")

  /** Throws the library error at `at` (default: the current position). */
  def fail(expected: String, at: Long = position.toLong): Nothing =
    throw new IndexFormatException(source, at, expected)

  def u8(what: String = "u8"): Int = {
    require(1, what)
    val v = bytes(position) & 0xff
    position += 1
    v
  }

  def i32BE(what: String = "i32 BE"): Int = {
    require(4, what)
    position += 4
    ByteReader.i32BE(bytes, position - 4)
  }

  def i32LE(what: String = "i32 LE"): Int = {
    require(4, what)
    val v = ByteReader.i32LE(bytes, position)
    position += 4
    v
  }

  def i64LE(what: String = "i64 LE"): Long = {
    require(8, what)
    val v = (ByteReader.i32LE(bytes, position).toLong & 0xffffffffL) | (ByteReader.i32LE(bytes, position + 4).toLong << 32)
    position += 8
    v
  }

  /** A copy of the next `n` bytes. */
  def take(n: Int, what: String = "bytes"): Array[Byte] = {
    require(n.toLong, what)
    val out = java.util.Arrays.copyOfRange(bytes, position, position + n)
    position += n
    out
  }

  def skip(n: Int, what: String = "bytes"): Unit = {
    require(n.toLong, what)
    position += n
  }

  /** A reader over the next `n` bytes only (same `bytes`, same offsets); this reader moves past them. */
  def sub(n: Int, what: String): ByteReader = {
    require(n.toLong, what)
    val r = new ByteReader(bytes, source, position, position + n)
    position += n
    r
  }
}

object ByteReader {
  def apply(bytes: Array[Byte], source: String, start: Int = 0): ByteReader =
    new ByteReader(bytes, source, start, bytes.length)

  /** Unchecked little-endian int at an absolute index (for ranges already checked). */
  def i32LE(bytes: Array[Byte], i: Int): Int =
    (bytes(i) & 0xff) | (bytes(i + 1) & 0xff) << 8 | (bytes(i + 2) & 0xff) << 16 | (bytes(i + 3) & 0xff) << 24

  def i32BE(bytes: Array[Byte], i: Int): Int =
    (bytes(i) & 0xff) << 24 | (bytes(i + 1) & 0xff) << 16 | (bytes(i + 2) & 0xff) << 8 | (bytes(i + 3) & 0xff)
}
