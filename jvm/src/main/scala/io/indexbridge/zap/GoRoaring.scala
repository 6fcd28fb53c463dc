package io.indexbridge.zap

import io.indexbridge.IndexFormatException
import io.indexbridge.bytes.{ByteReader, ByteSink}
import io.indexbridge.roaring.Roaring32
import org.roaringbitmap.RoaringBitmap

/** Postings bitmaps as Go roaring v0.4.23 writes them (spec/zap.md §13): the portable format
  * (layout drawn in [[Roaring32]]) of a bitmap built by `Add` in ascending order and never
  * run-optimised. A container is an array up to 4096 values, a bitmap above — except a
  * completely full container (65536 values), which Go's `Add` turns into the run [0, 65535];
  * one such container switches the whole blob to cookie 12347. Java's RoaringBitmap never does
  * that on add and `runOptimize()` converts other containers too, hence this writer. Reading
  * goes through [[Roaring32.read]].
  */
object GoRoaring {
  private final val CookieNoRuns = 12346
  private final val CookieRuns = 12347

  /** Appends the Go bytes of the ascending, distinct `docs(0 until n)` to `out`; returns their length. */
  def write(docs: Array[Int], n: Int, out: ByteSink): Int = {
    val begin = out.size
    // containers: key and cardinality
    var k = 0
    var keys = new Array[Int](4)
    var cards = new Array[Int](4)
    var i = 0
    while (i < n) {
      val key = docs(i) >>> 16
      if (k == 0 || keys(k - 1) != key) {
        if (k == keys.length) { keys = java.util.Arrays.copyOf(keys, k * 2); cards = java.util.Arrays.copyOf(cards, k * 2) }
        keys(k) = key; cards(k) = 0; k += 1
      }
      cards(k - 1) += 1
      i += 1
    }
    var hasRun = false
    i = 0
    while (i < k) { if (cards(i) == 65536) hasRun = true; i += 1 }
    var header = 0
    if (hasRun) {
      writeLE32(out, CookieRuns | (k - 1) << 16)
      val flags = new Array[Byte]((k + 7) / 8)
      i = 0
      while (i < k) { if (cards(i) == 65536) flags(i >>> 3) = (flags(i >>> 3) | 1 << (i & 7)).toByte; i += 1 }
      out.bytes(flags)
      header = 4 + flags.length + 4 * k + (if (k >= 4) 4 * k else 0)
    } else {
      writeLE32(out, CookieNoRuns)
      writeLE32(out, k)
      header = 8 + 8 * k
    }
    i = 0
    while (i < k) { writeLE16(out, keys(i)); writeLE16(out, cards(i) - 1); i += 1 }
    if (!hasRun || k >= 4) {
      var offset = header
      i = 0
      while (i < k) {
        writeLE32(out, offset)
        offset += (if (cards(i) == 65536) 6 else if (cards(i) > 4096) 8192 else 2 * cards(i))
        i += 1
      }
    }
    var p = 0
    i = 0
    while (i < k) {
      val card = cards(i)
      if (card == 65536) { writeLE16(out, 1); writeLE16(out, 0); writeLE16(out, 65535) }
      else if (card > 4096) {
        val words = new Array[Long](1024)
        var j = p
        while (j < p + card) { val low = docs(j) & 0xffff; words(low >>> 6) |= 1L << (low & 63); j += 1 }
        j = 0
        while (j < 1024) { out.u64LE(words(j)); j += 1 }
      } else {
        var j = p
        while (j < p + card) { writeLE16(out, docs(j) & 0xffff); j += 1 }
      }
      p += card
      i += 1
    }
    out.size - begin
  }

  @inline private def writeLE16(out: ByteSink, v: Int): Unit = { out.u8(v); out.u8(v >>> 8) }
  @inline private def writeLE32(out: ByteSink, v: Int): Unit = { out.u8(v); out.u8(v >>> 8); out.u8(v >>> 16); out.u8(v >>> 24) }

  /** Reads a validated bitmap from `bytes` (a roaring blob taken from `source` at file offset `at`). */
  def read(bytes: Array[Byte], source: String, at: Long, checkContents: Boolean): RoaringBitmap = {
    // offsets inside the blob become file offsets only when something fails
    try {
      val r = ByteReader(bytes, source)
      val bm = Roaring32.read(r, checkContents)
      if (r.remaining != 0) r.fail(s"a roaring blob filling its ${bytes.length} bytes, ${r.remaining} left over")
      bm
    } catch {
      case e: IndexFormatException => throw new IndexFormatException(source, at + e.offset, e.expected)
    }
  }

  /** What a blob already accepted by [[read]] holds: the cookie and per container (key, kind, cardinality). */
  def describe(bytes: Array[Byte]): (Int, Seq[(Int, String, Int)]) = {
    val le = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    val cookie = le.getInt(0)
    val runs = (cookie & 0xffff) == CookieRuns
    val n = if (runs) (cookie >>> 16) + 1 else le.getInt(4)
    val flagsAt = 4
    val descAt = if (runs) 4 + (n + 7) / 8 else 8
    val containers = (0 until n).map { i =>
      val key = le.getChar(descAt + 4 * i).toInt
      val card = le.getChar(descAt + 4 * i + 2).toInt + 1
      val kind =
        if (runs && (bytes(flagsAt + i / 8) & (1 << (i % 8))) != 0) "run"
        else if (card > 4096) "bitmap"
        else "array"
      (key, kind, card)
    }
    (cookie & 0xffff, containers)
  }
}
