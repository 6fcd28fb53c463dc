package io.indexbridge.zap

import io.indexbridge.bytes.{ByteSink, Uvarint}
import io.indexbridge.IndexFormatException

/** Snappy *block* format as zap uses it for stored-field data (§4) and docvalue chunks (§7);
  * spec/zap.md §12. Never the framed format, no CRC.
  *
  * {{{
  * uvarint uncompressedLength
  * elements, each led by a tag byte whose low 2 bits give the kind:
  *   00 literal      tag>>2 < 60: length tag>>2 + 1; 60..63: 1..4 LE bytes of length-1 follow
  *   01 copy1        length 4 + (tag>>2 & 7), offset (tag>>5) << 8 | next byte
  *   10 copy2        length 1 + tag>>2, offset u16 LE
  *   11 copy4        length 1 + tag>>2, offset u32 LE (never written by Go)
  * }}}
  *
  * Decoding goes through snappy-java (any decoder reads the block format alike). Encoding is a
  * port of golang/snappy v0.0.1's `Encode`: byte-exact zap output needs Go's match finder, and
  * snappy-java (the C++ encoder) picks different matches on some inputs.
  */
object Snappy {
  private final val MaxBlockSize = 65536
  private final val InputMargin = 15
  private final val MinNonLiteralBlockSize = 1 + 1 + InputMargin
  private final val MaxTableSize = 1 << 14
  /** The match table, reused per thread (encodeBlock clears the part it uses, as Go's fresh array is zero). */
  private val tables: ThreadLocal[Array[Short]] = ThreadLocal.withInitial(() => new Array[Short](MaxTableSize))

  /** Go's `snappy.Encode(nil, src[off:off+len])`, appended to `out`. */
  def encode(src: Array[Byte], off: Int, len: Int, out: ByteSink): Unit = {
    out.uvarint(len.toLong)
    val table = tables.get
    var p = off
    val end = off + len
    while (p < end) {
      val n = math.min(end - p, MaxBlockSize)
      if (n < MinNonLiteralBlockSize) emitLiteral(out, src, p, n)
      else encodeBlock(out, src, p, n, table)
      p += n
    }
  }

  def encode(src: Array[Byte]): Array[Byte] = {
    val out = new ByteSink(src.length + src.length / 6 + 16)
    encode(src, 0, src.length, out)
    out.toArray
  }

  @inline private def load32(b: Array[Byte], i: Int): Int =
    (b(i) & 0xff) | (b(i + 1) & 0xff) << 8 | (b(i + 2) & 0xff) << 16 | (b(i + 3) & 0xff) << 24

  @inline private def load64(b: Array[Byte], i: Int): Long =
    (load32(b, i).toLong & 0xffffffffL) | (load32(b, i + 4).toLong << 32)

  @inline private def hash(u: Int, shift: Int): Int = (u * 0x1e35a7bd) >>> shift

  /** `encodeBlock` of golang/snappy encode_other.go; positions are relative to `base`. */
  private def encodeBlock(out: ByteSink, src: Array[Byte], base: Int, n: Int, table: Array[Short]): Unit = {
    var shift = 32 - 8
    var tableSize = 1 << 8
    while (tableSize < MaxTableSize && tableSize < n) { tableSize *= 2; shift -= 1 }
    java.util.Arrays.fill(table, 0, tableSize, 0.toShort)
    val sLimit = n - InputMargin
    var nextEmit = 0
    var s = 1
    var nextHash = hash(load32(src, base + s), shift)
    var done = false
    while (!done) {
      var skip = 32
      var nextS = s
      var candidate = 0
      var found = false
      while (!found && !done) {
        s = nextS
        val bytesBetweenHashLookups = skip >> 5
        nextS = s + bytesBetweenHashLookups
        skip += bytesBetweenHashLookups
        if (nextS > sLimit) done = true
        else {
          candidate = table(nextHash) & 0xffff
          table(nextHash) = s.toShort
          nextHash = hash(load32(src, base + nextS), shift)
          if (load32(src, base + s) == load32(src, base + candidate)) found = true
        }
      }
      if (!done) {
        emitLiteral(out, src, base + nextEmit, s - nextEmit)
        var chaining = true
        while (chaining && !done) {
          val b = s
          s += 4
          var i = candidate + 4
          while (s < n && src(base + i) == src(base + s)) { i += 1; s += 1 }
          emitCopy(out, b - candidate, s - b)
          nextEmit = s
          if (s >= sLimit) done = true
          else {
            val x = load64(src, base + s - 1)
            val prevHash = hash(x.toInt, shift)
            table(prevHash) = (s - 1).toShort
            val currHash = hash((x >>> 8).toInt, shift)
            candidate = table(currHash) & 0xffff
            table(currHash) = s.toShort
            if ((x >>> 8).toInt != load32(src, base + candidate)) {
              nextHash = hash((x >>> 16).toInt, shift)
              s += 1
              chaining = false
            }
          }
        }
      }
    }
    if (nextEmit < n) emitLiteral(out, src, base + nextEmit, n - nextEmit)
  }

  private def emitLiteral(out: ByteSink, src: Array[Byte], from: Int, len: Int): Unit = {
    val m = len - 1
    if (m < 60) out.u8(m << 2)
    else if (m < 256) { out.u8(0xf0); out.u8(m) }
    else { out.u8(0xf4); out.u8(m & 0xff); out.u8(m >>> 8) }
    out.bytes(src, from, len)
  }

  private def emitCopy(out: ByteSink, offset: Int, length0: Int): Unit = {
    var length = length0
    while (length >= 68) {
      out.u8(63 << 2 | 2); out.u8(offset); out.u8(offset >>> 8)
      length -= 64
    }
    if (length > 64) {
      out.u8(59 << 2 | 2); out.u8(offset); out.u8(offset >>> 8)
      length -= 60
    }
    if (length >= 12 || offset >= 2048) {
      out.u8((length - 1) << 2 | 2); out.u8(offset); out.u8(offset >>> 8)
    } else {
      out.u8((offset >>> 8) << 5 | (length - 4) << 2 | 1); out.u8(offset & 0xff)
    }
  }

  /** The largest expansion a snappy block allows: a 2-byte copy1 element yields at most 11
    * bytes, a 3-byte copy2 element 64, so no valid block decodes to more than 22× its size. */
  private final val MaxExpansion = 22L

  /** Decodes the block `src(off until off+len)`. The declared length is checked against what
    * `len` bytes can possibly hold before anything is allocated; every malformed block ends in
    * an IndexFormatException at `at` (the block's file offset) in `source`. */
  def decode(src: Array[Byte], off: Int, len: Int, source: String, at: Long): Array[Byte] = {
    val next = new Array[Int](1)
    val declared = Uvarint.decode(src, off, off + len, next)
    if (next(0) < 0) throw new IndexFormatException(source, at, "snappy block: a uvarint uncompressed length")
    val headerLen = next(0) - off
    if (declared < 0 || declared > MaxExpansion * (len - headerLen) || declared > Int.MaxValue - 16)
      throw new IndexFormatException(source, at, s"snappy block: an uncompressed length its ${len - headerLen} bytes can hold, found ${java.lang.Long.toUnsignedString(declared)}")
    val out = new Array[Byte](declared.toInt)
    if (len - headerLen == 0) {
      if (declared != 0) throw new IndexFormatException(source, at, "snappy block: elements after the length")
      return out
    }
    val produced =
      try org.xerial.snappy.Snappy.rawUncompress(src, off, len, out, 0)
      catch {
        case e: java.io.IOException =>
          throw new IndexFormatException(source, at, s"a valid snappy block (${e.getMessage})")
        case e: RuntimeException =>
          throw new IndexFormatException(source, at, s"a valid snappy block (${e.getClass.getSimpleName}: ${e.getMessage})")
      }
    if (produced != declared) throw new IndexFormatException(source, at, s"snappy block of $declared bytes, decoded $produced")
    out
  }
}
