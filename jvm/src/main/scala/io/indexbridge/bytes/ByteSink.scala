package io.indexbridge.bytes

/** A growable byte buffer over a primitive array: the writers' output.
  *
  * Besides raw bytes it writes big-endian u32/u64 and Go's `binary.PutUvarint` (unsigned
  * LEB128: 7 bits at a time, low group first, bit 7 set on every byte but the last; at most
  * 10 bytes, always minimal). Positions are `Long`-free: a sink holds at most 2 GiB.
  */
final class ByteSink(initialCapacity: Int = 256) {
  private var buf = new Array[Byte](math.max(16, initialCapacity))
  private var n = 0

  /** Bytes written so far (= the offset of the next byte). */
  def size: Int = n

  def clear(): Unit = n = 0

  private def ensure(extra: Int): Unit =
    if (n + extra > buf.length) {
      val want = math.max(n.toLong + extra, buf.length.toLong * 2)
      if (want > Int.MaxValue - 8) throw new IllegalStateException(s"ByteSink cannot grow past 2 GiB (need ${n.toLong + extra})")
      buf = java.util.Arrays.copyOf(buf, want.toInt)
    }

  def u8(v: Int): Unit = {
    ensure(1)
    buf(n) = v.toByte
    n += 1
  }

  def bytes(b: Array[Byte]): Unit = bytes(b, 0, b.length)

  def bytes(b: Array[Byte], off: Int, len: Int): Unit = {
    ensure(len)
    System.arraycopy(b, off, buf, n, len)
    n += len
  }

  /** Appends everything written to `other`. */
  def bytes(other: ByteSink): Unit = bytes(other.buf, 0, other.n)

  def u32BE(v: Int): Unit = {
    ensure(4)
    buf(n) = (v >>> 24).toByte; buf(n + 1) = (v >>> 16).toByte; buf(n + 2) = (v >>> 8).toByte; buf(n + 3) = v.toByte
    n += 4
  }

  def u64BE(v: Long): Unit = {
    u32BE((v >>> 32).toInt)
    u32BE(v.toInt)
  }

  def u64LE(v: Long): Unit = {
    ensure(8)
    var i = 0
    while (i < 8) { buf(n + i) = (v >>> (8 * i)).toByte; i += 1 }
    n += 8
  }

  /** Go's `binary.PutUvarint(v)` with v read as unsigned. */
  def uvarint(v: Long): Unit = {
    ensure(10)
    var x = v
    while ((x & ~0x7fL) != 0) {
      buf(n) = ((x & 0x7f) | 0x80).toByte
      n += 1
      x >>>= 7
    }
    buf(n) = x.toByte
    n += 1
  }

  /** The array behind the sink (valid up to `size`; replaced when the sink grows). */
  def array: Array[Byte] = buf

  def toArray: Array[Byte] = java.util.Arrays.copyOf(buf, n)
}

/** Go's unsigned varint (`encoding/binary`), decoding side, over an array. */
object Uvarint {
  /** Decodes the uvarint at `bytes(pos)`, reading no further than `end`. Returns the value and
    * stores the position after it in `next(0)`; returns -1 in `next(0)` on a truncated or
    * over-long (more than 10 bytes, or overflowing 64 bits) varint, as Go's `Uvarint` does. */
  def decode(bytes: Array[Byte], pos: Int, end: Int, next: Array[Int]): Long = {
    var x = 0L
    var shift = 0
    var p = pos
    while (p < end) {
      val b = bytes(p) & 0xff
      p += 1
      if (b < 0x80) {
        if (shift == 63 && b > 1) { next(0) = -1; return 0L }
        next(0) = p
        return x | (b.toLong << shift)
      }
      if (shift == 63) { next(0) = -1; return 0L }
      x |= (b & 0x7f).toLong << shift
      shift += 7
    }
    next(0) = -1
    0L
  }
}
