package io.indexbridge.roaring

import java.io.IOException
import java.nio.{ByteBuffer, ByteOrder}

import io.indexbridge.bytes.ByteReader
import org.roaringbitmap.RoaringBitmap
import org.roaringbitmap.buffer.ImmutableRoaringBitmap

/** The portable serialization of a 32-bit RoaringBitmap (RoaringFormatSpec; spec/paimon.md §1.1).
  * Every field is little-endian.
  *
  * {{{
  * without run containers            with at least one run container
  * u32 cookie = 12346                u32 cookie = 12347 | (n - 1) << 16
  * u32 n (containers)                u8[ceil(n / 8)] run flags (bit i set: container i is a run)
  * n × (u16 key, u16 cardinality-1)  n × (u16 key, u16 cardinality-1)
  * n × u32 offset                    n × u32 offset, only if n >= 4
  * n × container payload             n × container payload
  *
  * payloads:  run     u16 nruns, nruns × (u16 start, u16 length-1)
  *            bitmap  1024 × u64 (cardinality > 4096)
  *            array   cardinality × u16, ascending (cardinality <= 4096)
  * }}}
  *
  * Keys ascend; offsets count from the cookie. Writers run-optimise first (`runOptimize()`),
  * which makes the bytes a function of the set (§1.1).
  */
object Roaring32 {
  private val CookieNoRuns = 12346
  private val CookieRuns = 12347
  private val NoOffsetThreshold = 4
  private val MaxArrayCardinality = 4096
  private val BitmapBytes = 8192

  /** `runOptimize()`, then the portable bytes (what Paimon's writers store). */
  def serialize(bm: RoaringBitmap): Array[Byte] = {
    bm.runOptimize()
    val out = new Array[Byte](bm.serializedSizeInBytes)
    writeTo(bm, out, 0)
    out
  }

  /** Writes `bm` as it stands (no run-optimisation) at `out(offset)`; returns the byte count. */
  def writeTo(bm: RoaringBitmap, out: Array[Byte], offset: Int): Int = {
    val n = bm.serializedSizeInBytes
    bm.serialize(ByteBuffer.wrap(out, offset, n).order(ByteOrder.LITTLE_ENDIAN))
    n
  }

  /** Reads one serialized bitmap at the reader's position and moves past exactly its bytes.
    *
    * Before RoaringBitmap sees the bytes, the structure is validated against the bytes
    * available: cookie, container count, strictly ascending keys, run flags, offsets (each must
    * point where its container starts), run counts and container sizes. So no length in the
    * input can make the reader allocate more than the input holds, and RoaringBitmap never
    * reads past the end. Anything RoaringBitmap still rejects becomes an IndexFormatException.
    *
    * With `checkContents` (the default) the values are checked too — run lists ascending,
    * disjoint, inside 16 bits and adding up to the header's cardinality; array values strictly
    * ascending; bitmap containers holding as many bits as the header says — so the bitmap handed
    * back is consistent. Callers whose bytes a checksum already vouches for can skip these
    * O(values) passes, which cost as much as the deserialization itself.
    */
  def read(reader: ByteReader, checkContents: Boolean = true): RoaringBitmap =
    decode(reader, checkContents) { bytes =>
      val bm = new RoaringBitmap
      bm.deserialize(bytes)
      bm
    }

  /** [[read]] without copying: an immutable view over the reader's bytes (which it keeps alive),
    * after the same checks. Decoding is then O(containers), not O(bytes). */
  def view(reader: ByteReader, checkContents: Boolean = true): ImmutableRoaringBitmap =
    decode(reader, checkContents)(new ImmutableRoaringBitmap(_))

  /** Validates the serialization at the reader's position, moves past it and hands its bytes
    * (a little-endian slice) to `decode`; what `decode` still rejects becomes an IndexFormatException. */
  private def decode[B](reader: ByteReader, checkContents: Boolean)(decode: ByteBuffer => B): B = {
    val start = reader.pos
    val layout = readHeaders(reader)
    val end = walkContainers(reader, layout, checkContents)
    reader.skip(end - reader.pos)
    try decode(ByteBuffer.wrap(reader.bytes, start, end - start).slice().order(ByteOrder.LITTLE_ENDIAN))
    catch {
      case e @ (_: IOException | _: RuntimeException) =>
        reader.fail(s"a roaring bitmap RoaringBitmap can read (${e.getClass.getSimpleName}: ${e.getMessage})", start.toLong)
    }
  }

  /** Where the parts of one serialization start (indexes into the reader's bytes); `runFlagsAt`
    * and `offsetsAt` are -1 when absent. */
  private final case class Layout(start: Int, containers: Int, runFlagsAt: Int, descriptiveAt: Int, offsetsAt: Int)

  /** Reads cookie and container count and checks that run flags, descriptive and offset headers
    * fit; leaves the reader at the first container. */
  private def readHeaders(reader: ByteReader): Layout = {
    val start = reader.pos
    val cookie = reader.i32LE("roaring cookie")
    val hasRuns = (cookie & 0xffff) == CookieRuns
    val n =
      if (hasRuns) (cookie >>> 16) + 1
      else if (cookie == CookieNoRuns) {
        val count = reader.i32LE("roaring container count")
        if (count < 0 || count > 65536)
          reader.fail(s"a roaring container count in 0..65536, found ${count & 0xffffffffL}", reader.pos - 4L)
        count
      } else reader.fail(s"a roaring cookie (12346, or 12347 with a container count), found ${cookie & 0xffffffffL}", start.toLong)
    val runFlagsAt = if (hasRuns) reader.pos else -1
    if (hasRuns) reader.skip((n + 7) / 8, s"run flags of $n containers")
    val descriptiveAt = reader.pos
    reader.skip(4 * n, s"descriptive header of $n containers")
    val offsetsAt = if (!hasRuns || n >= NoOffsetThreshold) reader.pos else -1
    if (offsetsAt >= 0) reader.skip(4 * n, s"offset header of $n containers")
    Layout(start, n, runFlagsAt, descriptiveAt, offsetsAt)
  }

  /** Checks every container against its header entry, its offset and the bytes left; returns
    * the index just past the last one. The loop stays small: messages are built out of line. */
  private def walkContainers(reader: ByteReader, layout: Layout, checkContents: Boolean): Int = {
    import layout._
    val bytes = reader.bytes
    val end = reader.end
    val le = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    var p = reader.pos
    var previousKey = -1
    var i = 0
    while (i < containers) {
      val keyAndCard = le.getInt(descriptiveAt + 4 * i)
      val key = keyAndCard & 0xffff
      if (key <= previousKey) Errors.keysNotAscending(reader, descriptiveAt + 4 * i, key, previousKey)
      previousKey = key
      val card = (keyAndCard >>> 16) + 1
      if (offsetsAt >= 0) {
        // continue from the recorded offset once it is known to be right: the next container's
        // address then comes from the offset header, not from this container's size
        val recorded = start + le.getInt(offsetsAt + 4 * i)
        if (recorded != p) Errors.wrongOffset(reader, layout, i, p)
        p = recorded
      }
      if (runFlagsAt >= 0 && (bytes(runFlagsAt + (i >>> 3)) & (1 << (i & 7))) != 0) {
        if (end - p < 2) Errors.missing(reader, p, 2, "run count")
        val runs: Int = le.getChar(p)
        if (end - p - 2 < 4L * runs) Errors.missing(reader, p + 2, 4L * runs, "runs")
        if (checkContents) checkRuns(reader, le, p, runs, card)
        p += 2 + 4 * runs
      } else if (card > MaxArrayCardinality) {
        if (end - p < BitmapBytes) Errors.missing(reader, p, BitmapBytes, "bitmap container")
        if (checkContents) {
          val bits = popcount(le, p)
          if (bits != card) reader.fail(s"a bitmap container holding the $card values of the header, found $bits", p.toLong)
        }
        p += BitmapBytes
      } else {
        if (end - p < 2 * card) Errors.missing(reader, p, 2L * card, s"array container of $card values")
        if (checkContents) checkArray(reader, le, p, card)
        p += 2 * card
      }
      i += 1
    }
    p
  }

  /** Failures of the container walk, kept out of its loop. */
  private object Errors {
    def keysNotAscending(reader: ByteReader, at: Int, key: Int, previous: Int): Nothing =
      reader.fail(s"container keys in strictly ascending order, found $key after $previous", at.toLong)

    def wrongOffset(reader: ByteReader, layout: Layout, i: Int, at: Int): Nothing = {
      val recorded = ByteReader.i32LE(reader.bytes, layout.offsetsAt + 4 * i)
      reader.fail(
        s"offset ${at - layout.start} for container $i (where it starts), found ${recorded & 0xffffffffL}",
        layout.offsetsAt + 4L * i
      )
    }

    def missing(reader: ByteReader, at: Int, n: Long, what: String): Nothing =
      reader.fail(s"$what: need $n bytes, ${reader.end - at} left", at.toLong)
  }

  /** Runs must ascend, be disjoint, stay inside 16 bits and add up to the header's cardinality. */
  private def checkRuns(reader: ByteReader, le: ByteBuffer, at: Int, runs: Int, card: Int): Unit = {
    var previousEnd = -1
    var total = 0
    var p = at + 2
    while (p < at + 2 + 4 * runs) {
      val run = le.getInt(p)
      val runStart = run & 0xffff
      val runEnd = runStart + (run >>> 16)
      if (runStart <= previousEnd || runEnd > 0xffff) {
        val after = if (previousEnd < 0) "" else s" after ..$previousEnd"
        reader.fail(s"runs ascending, disjoint and inside 0..65535, found $runStart..$runEnd$after", p.toLong)
      }
      total += runEnd - runStart + 1
      previousEnd = runEnd
      p += 4
    }
    if (total != card) reader.fail(s"runs covering the $card values of the header, found $total", at.toLong)
  }

  /** Array values must be strictly ascending. */
  private def checkArray(reader: ByteReader, le: ByteBuffer, at: Int, card: Int): Unit = {
    var previous = -1
    var p = at
    while (p < at + 2 * card) {
      val v: Int = le.getChar(p)
      if (v <= previous) reader.fail(s"array container values in strictly ascending order, found $v after $previous", p.toLong)
      previous = v
      p += 2
    }
  }

  private def popcount(le: ByteBuffer, at: Int): Int = {
    var bits = 0
    var p = at
    val end = at + BitmapBytes
    while (p < end) {
      bits += java.lang.Long.bitCount(le.getLong(p))
      p += 8
    }
    bits
  }
}
