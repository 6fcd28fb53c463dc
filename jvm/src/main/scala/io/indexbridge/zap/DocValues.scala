package io.indexbridge.zap

import io.indexbridge.bytes.{BufferReader, ByteSink}

/** A field's docvalue section ("chunked content coder", spec/zap.md §7): per document the
  * field's distinct indexed terms in byte order, each followed by 0xFF.
  *
  * {{{
  * chunk records, in chunk order (a chunk may take 0 bytes):
  *   uvarint k, k × (uvarint docNum, uvarint end)   end = cumulative offset in the uncompressed data
  *   snappy block of the chunk's concatenated values
  * uvarint chunkEnd × C          cumulative, relative to the section start
  * u64 BE  byte length of the chunkEnd varints
  * u64 BE  C
  * }}}
  * Chunk 0 is always written (`00 00` when empty); a chunk is flushed when a doc of another
  * chunk arrives, even if it is empty, and at the end; chunks never reached take 0 bytes.
  * The docvalue index after the last field holds (uvarint start, uvarint end) per field,
  * 2^64-1 twice for a field without a section.
  */
final class DocValuesBuilder {
  private val values = new ByteSink(256)
  private var docs = new Array[Int](16)
  private var ends = new Array[Int](16)
  private var n = 0

  def isEmpty: Boolean = n == 0

  def clear(): Unit = { values.clear(); n = 0 }

  /** Adds the value of `doc` (docs ascending). */
  def add(doc: Int, value: Array[Byte], off: Int, len: Int): Unit = {
    if (n == docs.length) { docs = java.util.Arrays.copyOf(docs, n * 2); ends = java.util.Arrays.copyOf(ends, n * 2) }
    values.bytes(value, off, len)
    docs(n) = doc
    ends(n) = values.size
    n += 1
  }

  /** Writes the section (all `chunks` chunks) at the end of `out`. */
  def write(out: ByteSink, chunkFactor: Int, chunks: Int): Unit = {
    val chunkLens = new Array[Long](chunks)
    var current = 0
    var i = 0
    while (i <= n) {
      val chunk = if (i < n) docs(i) / chunkFactor else -1
      // flush `current` with the docs [first, i) when a new chunk starts or at the end
      if (i == n || chunk != current) {
        var first = i
        while (first > 0 && docs(first - 1) / chunkFactor == current) first -= 1
        val before = out.size
        out.uvarint((i - first).toLong)
        val base = if (first == 0) 0 else ends(first - 1)
        var j = first
        while (j < i) { out.uvarint(docs(j).toLong); out.uvarint((ends(j) - base).toLong); j += 1 }
        Snappy.encode(values.array, base, (if (i == 0) 0 else ends(i - 1)) - base, out)
        chunkLens(current) = (out.size - before).toLong
        if (i < n) current = chunk
      }
      i += 1
    }
    val offsetsStart = out.size
    var total = 0L
    i = 0
    while (i < chunks) { total += chunkLens(i); out.uvarint(total); i += 1 }
    out.u64BE((out.size - offsetsStart).toLong)
    out.u64BE(chunks.toLong)
  }
}

/** A docvalue section read in place: `[start, end)` of the segment. */
final class DocValuesSection(seg: BufferReader, start: Long, end: Long, chunkFactor: Int, numDocs: Int) {
  private val r = seg.range(start, end, "docvalue section")
  if (end - start <= 16) r.fail(s"a docvalue section longer than 16 bytes, found ${end - start}", start)
  private val chunks: Int = {
    val c = r.seek(end - 8, "docvalue chunk count").u64BE("docvalue chunk count")
    val expected = Postings.numChunks(numDocs, chunkFactor)
    if (c != expected) r.fail(s"$expected docvalue chunks, found $c", end - 8)
    c.toInt
  }
  private val offsetsLen: Long = {
    val l = r.seek(end - 16, "docvalue offsets length").u64BE("docvalue offsets length")
    if (l < 0 || l > end - 16 - start) r.fail(s"docvalue chunk offsets of at most ${end - 16 - start} bytes, found $l", end - 16)
    l
  }
  private val chunkEnds: Array[Long] = {
    val o = r.range(end - 16 - offsetsLen, end - 16, "docvalue chunk offsets")
    val limit = end - 16 - offsetsLen - start
    val e = new Array[Long](math.min(chunks, o.remaining))
    var prev = 0L
    var i = 0
    while (i < e.length) {
      val v = o.uvarint("docvalue chunk end")
      if (v < prev || v > limit) o.fail(s"docvalue chunk ends ascending and at most $limit, found $v after $prev")
      e(i) = v; prev = v; i += 1
    }
    if (e.length != chunks || o.remaining != 0) o.fail(s"exactly $chunks docvalue chunk ends in $offsetsLen bytes")
    e
  }

  /** Docs (ascending) and their raw values (terms each followed by 0xFF), chunk `c`; empty chunks give nothing. */
  def chunk(c: Int): (Array[Int], Array[Array[Byte]]) = {
    val from = start + (if (c == 0) 0L else chunkEnds(c - 1))
    val to = start + chunkEnds(c)
    if (from == to) return (Array.emptyIntArray, Array.empty)
    val cr = r.range(from, to, s"docvalue chunk $c")
    val k = cr.uvarintUpTo(cr.remaining / 2, "docvalue chunk doc count")
    val docs = new Array[Int](k)
    val docEnds = new Array[Long](k)
    var i = 0
    var prevDoc = -1L
    var prevEnd = 0L
    while (i < k) {
      val d = cr.uvarint("docvalue doc number")
      val e = cr.uvarint("docvalue end offset")
      if (d <= prevDoc || d / chunkFactor != c || d >= numDocs) cr.fail(s"docvalue doc numbers ascending inside chunk $c, found $d")
      if (e < prevEnd) cr.fail(s"docvalue end offsets ascending, found $e after $prevEnd")
      docs(i) = d.toInt; docEnds(i) = e; prevDoc = d; prevEnd = e
      i += 1
    }
    val blockAt = cr.pos
    val block = cr.take(cr.remaining, "docvalue snappy block")
    val data = Snappy.decode(block, 0, block.length, seg.source, blockAt.toLong)
    if (k > 0 && docEnds(k - 1) > data.length) cr.fail(s"docvalue end offsets within the ${data.length} uncompressed bytes, found ${docEnds(k - 1)}", blockAt.toLong)
    val values = new Array[Array[Byte]](k)
    var s = 0
    i = 0
    while (i < k) { values(i) = java.util.Arrays.copyOfRange(data, s, docEnds(i).toInt); s = docEnds(i).toInt; i += 1 }
    (docs, values)
  }

  def numChunks: Int = chunks

  /** Every (doc, raw value) in doc order. */
  def foreach(f: (Int, Array[Byte]) => Unit): Unit = {
    var c = 0
    while (c < chunks) {
      val (docs, values) = chunk(c)
      var i = 0
      while (i < docs.length) { f(docs(i), values(i)); i += 1 }
      c += 1
    }
  }

  /** The terms of `doc` (empty if it has none). */
  def terms(doc: Int): IndexedSeq[Array[Byte]] = {
    if (doc < 0 || doc >= numDocs) return IndexedSeq.empty
    val (docs, values) = chunk(doc / chunkFactor)
    val i = java.util.Arrays.binarySearch(docs, doc)
    if (i < 0) IndexedSeq.empty else DocValuesSection.split(values(i))
  }
}

object DocValuesSection {
  /** Splits a raw value into its terms (each ends with 0xFF; a missing last separator keeps the tail). */
  def split(value: Array[Byte]): IndexedSeq[Array[Byte]] = {
    val out = IndexedSeq.newBuilder[Array[Byte]]
    var s = 0
    var i = 0
    while (i < value.length) {
      if (value(i) == -1) { out += java.util.Arrays.copyOfRange(value, s, i); s = i + 1 }
      i += 1
    }
    if (s < value.length) out += java.util.Arrays.copyOfRange(value, s, value.length)
    out.result()
  }
}
