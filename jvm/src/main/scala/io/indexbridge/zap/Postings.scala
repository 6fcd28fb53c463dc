package io.indexbridge.zap

import org.roaringbitmap.RoaringBitmap

import io.indexbridge.bytes.{BufferReader, ByteSink}

/** Postings of one term (spec/zap.md §5, §10). With chunk factor cf and N docs every block has
  * C = (N-1)/cf + 1 chunks; chunk c holds the hits of docs [c·cf, (c+1)·cf).
  *
  * {{{
  * freq/norm block   uvarint C, C × uvarint cumulative chunk end, chunk data:
  *                   per hit  uvarint (freq << 1 | hasLocs), uvarint float32 bits of the norm
  * location block    same framing; per hit with hasLocs:
  *                   uvarint numBytes, then locations until numBytes are used:
  *                   uvarint fieldId, pos, start, end, numArrayPositions, arrayPosition × n
  * postings record   uvarint freqBlockOffset, uvarint locBlockOffset,
  *                   uvarint roaringLen, roaring[roaringLen] (Go roaring, §13)
  * FST value         bits 63..62 = 00: offset of the postings record ("general")
  *                               = 10: "1-hit": docNum in bits 30..0, norm bits 30..0 in 61..31,
  *                                     freq 1, no locations, nothing in the file
  * }}}
  */
object Postings {
  final val OneHitFlag = 1L << 63
  private final val Mask31 = 0x7fffffffL

  def isOneHit(value: Long): Boolean = (value >>> 62) == 2L

  def oneHit(docNum: Int, normBits: Int): Long = OneHitFlag | ((normBits & Mask31) << 31) | (docNum & Mask31)

  def oneHitDoc(value: Long): Int = (value & Mask31).toInt

  def oneHitNormBits(value: Long): Int = ((value >>> 31) & Mask31).toInt

  /** Number of chunks of every block in a segment of `numDocs` docs. */
  def numChunks(numDocs: Int, chunkFactor: Int): Int = if (numDocs == 0) 0 else ((numDocs - 1).toLong / chunkFactor + 1).toInt

  /** Only the doc numbers behind FST value `value` (the roaring bitmap; no freq/norm or location
    * decoding): what a document frequency needs. */
  def docs(seg: BufferReader, value: Long, numDocs: Int, checkRoaring: Boolean): RoaringBitmap = {
    if (isOneHit(value)) {
      val doc = oneHitDoc(value)
      if (doc >= numDocs) seg.fail(s"a 1-hit doc number below $numDocs, found $doc", 0L)
      return RoaringBitmap.bitmapOf(doc)
    }
    if ((value >>> 62) != 0L || value <= 0) seg.fail(s"an FST value with encoding 00 (postings offset) or 10 (1-hit), found ${java.lang.Long.toUnsignedString(value)}", 0L)
    val r = seg.range(seg.start, seg.end, "postings")
    r.seek(value, "postings record")
    r.uvarint("freq block offset")
    r.uvarint("location block offset")
    val roaringLen = r.uvarintUpTo(r.remaining.toLong, "roaring length")
    val roaringAt = r.pos
    val bm = GoRoaring.read(r.take(roaringLen, "roaring bitmap"), seg.source, roaringAt.toLong, checkRoaring)
    if (!bm.isEmpty && (bm.last() < 0 || bm.last() >= numDocs)) seg.fail(s"postings doc numbers below $numDocs, found ${bm.last().toLong & 0xffffffffL}", roaringAt.toLong)
    bm
  }

  /** Reads the postings behind FST value `value` of a segment. */
  def read(seg: BufferReader, value: Long, numDocs: Int, chunkFactor: Int, numFields: Int, checkRoaring: Boolean): PostingsList = {
    if (isOneHit(value)) {
      val doc = oneHitDoc(value)
      if (doc >= numDocs) seg.fail(s"a 1-hit doc number below $numDocs, found $doc", 0L)
      return new PostingsList(seg, numFields, Array(doc), Array(1), Array(oneHitNormBits(value)), null, null, -1L, -1L, null)
    }
    if ((value >>> 62) != 0L || value <= 0) seg.fail(s"an FST value with encoding 00 (postings offset) or 10 (1-hit), found ${java.lang.Long.toUnsignedString(value)}", 0L)
    val r = seg.range(seg.start, seg.end, "postings")
    r.seek(value, "postings record")
    val freqOffset = r.uvarint("freq block offset")
    val locOffset = r.uvarint("location block offset")
    val roaringLen = r.uvarintUpTo(r.remaining.toLong, "roaring length")
    val roaringAt = r.pos
    val roaring = r.take(roaringLen, "roaring bitmap")
    val bm = GoRoaring.read(roaring, seg.source, roaringAt.toLong, checkRoaring)
    if (!bm.isEmpty && (bm.last() < 0 || bm.last() >= numDocs)) seg.fail(s"postings doc numbers below $numDocs, found ${bm.last().toLong & 0xffffffffL}", roaringAt.toLong)
    val docs = bm.toArray
    val n = docs.length
    val freqs = new Array[Int](n)
    val norms = new Array[Int](n)
    val freqSpans = new Array[Int](2 * n)
    val locSpans = new Array[Int](2 * n)
    val freqChunks = new ChunkedReader(r, freqOffset, chunkFactor, "freq/norm block")
    val locChunks = new ChunkedReader(r, locOffset, chunkFactor, "location block")
    var i = 0
    while (i < n) {
      val fr = freqChunks.chunkOf(docs(i))
      freqSpans(2 * i) = fr.pos
      val fh = fr.uvarint("freq and hasLocs")
      val norm = fr.uvarint("norm bits")
      if ((fh >>> 1) > Int.MaxValue || fh < 0) fr.fail(s"a frequency in 0..${Int.MaxValue}, found ${java.lang.Long.toUnsignedString(fh >>> 1)}")
      if (norm < 0 || norm > 0xffffffffL) fr.fail(s"norm bits inside 32 bits, found ${java.lang.Long.toUnsignedString(norm)}")
      freqSpans(2 * i + 1) = fr.pos
      freqs(i) = (fh >>> 1).toInt
      norms(i) = norm.toInt
      if ((fh & 1) != 0) {
        val lr = locChunks.chunkOf(docs(i))
        locSpans(2 * i) = lr.pos
        val numBytes = lr.uvarintUpTo(lr.remaining.toLong, "location bytes")
        lr.skip(numBytes.toLong, "locations")
        locSpans(2 * i + 1) = lr.pos
      } else {
        locSpans(2 * i) = -1
        locSpans(2 * i + 1) = -1
      }
      i += 1
    }
    new PostingsList(seg, numFields, docs, freqs, norms, freqSpans, locSpans, freqOffset, locOffset, roaring)
  }

  /** The chunks of one block: reads C and the end offsets, hands out a reader per chunk. */
  private final class ChunkedReader(r: BufferReader, offset: Long, chunkFactor: Int, what: String) {
    private val head = r.range(r.start, r.end, what).seek(offset, what)
    private val c = head.uvarintUpTo(head.remaining.toLong, s"$what chunk count")
    private val ends = {
      val e = new Array[Long](c)
      var i = 0
      var prev = 0L
      while (i < c) {
        val v = head.uvarint(s"$what chunk end")
        if (v < prev) head.fail(s"$what: cumulative chunk ends, found $v after $prev")
        e(i) = v; prev = v; i += 1
      }
      e
    }
    private val dataStart = head.pos
    if (c > 0 && ends(c - 1) > head.remaining) head.fail(s"$what: ${ends(c - 1)} bytes of chunk data, ${head.remaining} left")
    private var current = -1
    private var reader: BufferReader = _

    /** The reader of the chunk holding `doc`, kept across calls for the same chunk. */
    def chunkOf(doc: Int): BufferReader = {
      val chunk = doc / chunkFactor
      if (chunk != current) {
        if (chunk >= c) head.fail(s"$what: a chunk for doc $doc (chunk $chunk), the block has $c", offset)
        val from = dataStart + (if (chunk == 0) 0L else ends(chunk - 1))
        reader = head.range(from, dataStart + ends(chunk), s"$what chunk $chunk")
        current = chunk
      }
      reader
    }
  }
}

/** One location of a hit: the field it came from, 1-based position, byte range, array positions. */
final case class LocationEntry(fieldId: Int, pos: Long, start: Long, end: Long, arrayPositions: Array[Long])

/** The decoded postings of a term: parallel arrays, one entry per hit in ascending doc order.
  * The raw byte spans of each hit's freq/norm entry and location entry (numBytes prefix
  * included; -1 when it has none) are kept for merging by copy. */
final class PostingsList private[zap] (
    seg: BufferReader,
    numFields: Int,
    val docs: Array[Int],
    val freqs: Array[Int],
    val normBits: Array[Int],
    private[zap] val freqSpans: Array[Int],
    private[zap] val locSpans: Array[Int],
    /** Offsets of the freq/norm and location blocks and the roaring bytes (-1, -1, null for 1-hit). */
    val freqBlockOffset: Long,
    val locBlockOffset: Long,
    val roaringBytes: Array[Byte]
) {
  /** True when the FST value used the 1-hit encoding. */
  def oneHitValue: Boolean = roaringBytes == null

  def size: Int = docs.length

  def norm(i: Int): Float = java.lang.Float.intBitsToFloat(normBits(i))

  def hasLocations(i: Int): Boolean = locSpans != null && locSpans(2 * i) >= 0

  /** The locations of hit `i` (empty when it has none). */
  def locations(i: Int): IndexedSeq[LocationEntry] =
    if (!hasLocations(i)) IndexedSeq.empty
    else {
      val r = seg.range(locSpans(2 * i), locSpans(2 * i + 1), "locations")
      r.uvarint("location bytes")
      val out = IndexedSeq.newBuilder[LocationEntry]
      while (r.remaining > 0) {
        val field = r.uvarintUpTo(numFields - 1L, "location field id")
        val pos = r.uvarint("location position")
        val start = r.uvarint("location start")
        val end = r.uvarint("location end")
        val n = r.uvarintUpTo(r.remaining.toLong, "location array position count")
        val ap = new Array[Long](n)
        var j = 0
        while (j < n) { ap(j) = r.uvarint("location array position"); j += 1 }
        out += LocationEntry(field, pos, start, end, ap)
      }
      out.result()
    }
}

/** Collects the hits of one term in ascending doc order and writes its freq/norm block,
  * location block and postings record (or tells the merge it may be 1-hit). Hits go straight
  * into byte buffers: no object per hit. */
final class PostingsBuilder {
  private var docs = new Array[Int](4)
  private var freqEnds = new Array[Int](4)
  private var locEnds = new Array[Int](4)
  private var n = 0
  private val freqData = new ByteSink(16)
  private val locData = new ByteSink(16)

  def size: Int = n
  def isEmpty: Boolean = n == 0
  def firstDoc: Int = docs(0)
  /** Bytes of location data produced so far (Go's `locEncoder.FinalSize()`). */
  def locationBytes: Int = locData.size

  def clear(): Unit = { n = 0; freqData.clear(); locData.clear() }

  def foreachDoc(f: Int => Unit): Unit = { var i = 0; while (i < n) { f(docs(i)); i += 1 } }

  private def grow(): Unit =
    if (n == docs.length) {
      docs = java.util.Arrays.copyOf(docs, n * 2)
      freqEnds = java.util.Arrays.copyOf(freqEnds, n * 2)
      locEnds = java.util.Arrays.copyOf(locEnds, n * 2)
    }

  /** A hit whose locations (already encoded, without the numBytes prefix) are `locs(off until off+len)`. */
  def add(doc: Int, freq: Int, normBits: Int, locs: Array[Byte], off: Int, len: Int): Unit = {
    grow()
    docs(n) = doc
    freqData.uvarint((freq.toLong << 1) | (if (len > 0) 1L else 0L))
    freqData.uvarint(normBits.toLong & 0xffffffffL)
    freqEnds(n) = freqData.size
    if (len > 0) { locData.uvarint(len.toLong); locData.bytes(locs, off, len) }
    locEnds(n) = locData.size
    n += 1
  }

  /** A hit given as raw freq/norm bytes and raw location bytes (numBytes prefix included; len 0 = none). */
  def addRaw(doc: Int, buf: java.nio.ByteBuffer, freqFrom: Int, freqTo: Int, locFrom: Int, locTo: Int): Unit = {
    grow()
    docs(n) = doc
    var p = freqFrom
    while (p < freqTo) { freqData.u8(buf.get(p)); p += 1 }
    freqEnds(n) = freqData.size
    p = locFrom
    while (p < locTo) { locData.u8(buf.get(p)); p += 1 }
    locEnds(n) = locData.size
    n += 1
  }

  /** A 1-hit source posting copied into a general one: Go writes `uvarint(2) uvarint(normBits31)`. */
  def addOneHitRaw(doc: Int, normBits31: Int): Unit = {
    grow()
    docs(n) = doc
    freqData.uvarint(2L)
    freqData.uvarint(normBits31.toLong & 0xffffffffL)
    freqEnds(n) = freqData.size
    locEnds(n) = locData.size
    n += 1
  }

  /** Writes freq block, location block and postings record; returns the record's offset. */
  def write(out: ByteSink, chunkFactor: Int, chunks: Int): Long = {
    val freqOffset = out.size
    writeBlock(out, freqData, freqEnds, chunkFactor, chunks)
    val locOffset = out.size
    writeBlock(out, locData, locEnds, chunkFactor, chunks)
    val recordOffset = out.size
    out.uvarint(freqOffset.toLong)
    out.uvarint(locOffset.toLong)
    val roaring = PostingsBuilder.scratch.get
    roaring.clear()
    GoRoaring.write(docs, n, roaring)
    out.uvarint(roaring.size.toLong)
    out.bytes(roaring)
    recordOffset.toLong
  }

  private def writeBlock(out: ByteSink, data: ByteSink, ends: Array[Int], chunkFactor: Int, chunks: Int): Unit = {
    out.uvarint(chunks.toLong)
    var h = 0
    var c = 0
    while (c < chunks) {
      while (h < n && docs(h) / chunkFactor <= c) h += 1
      out.uvarint(if (h == 0) 0L else ends(h - 1).toLong)
      c += 1
    }
    out.bytes(data)
  }
}

private object PostingsBuilder {
  val scratch: ThreadLocal[ByteSink] = ThreadLocal.withInitial(() => new ByteSink(64))
}
