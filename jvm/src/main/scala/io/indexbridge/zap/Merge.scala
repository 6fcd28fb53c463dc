package io.indexbridge.zap

import java.nio.file.Path

import io.indexbridge.bytes.ByteSink
import org.roaringbitmap.RoaringBitmap

/** The result of a merge: the segment bytes and, per input, the new doc number of each old one
  * (-1 = dropped; every array is empty when the merged segment has no documents). */
final case class MergeResult(bytes: Array[Byte], newDocNums: IndexedSeq[Array[Long]])

/** zap's `Merge` (spec/zap.md §16): several segments, each with an optional set of deleted
  * docs, into one, byte for byte as Go writes it. The output has the layout of
  * [[SegmentWriter]]; what differs from a fresh build:
  * {{{
  * fields       _id, then the byte-sorted union; "fieldsSame" = all inputs list the same fields
  * doc numbers  surviving docs renumbered in input order
  * stored       an input without drops is copied verbatim while fieldsSame; else re-encoded
  * postings     per term (union over the inputs whose FST for the field is NOT empty, in byte
  *              order), inputs in order, hits copied verbatim (fieldsSame; a 1-hit source gives
  *              uvarint 2, uvarint normBits31) or re-encoded with remapped field ids
  * 1-hit        one hit, no location bytes, doc < 2^31, and the last (term, input) pair seen
  *              ended on that doc with freq 1 — reset per input, so a later input whose hits
  *              were all dropped keeps the term general
  * docvalues    copied from the in-focus inputs (an input with an empty FST for the field is
  *              not in focus, so its docvalues are lost)
  * empty        numDocs 0: field records, fields index and footer only, docValueOffset 2^64-1
  * }}}
  */
object Merge {
  import SegmentWriter.NotUninverted

  /** Merges `segments`; `drops(i)` (null or empty = none) holds the deleted docs of segment i. */
  def merge(segments: IndexedSeq[SegmentReader], drops: IndexedSeq[RoaringBitmap], chunkFactor: Int = SegmentWriter.DefaultChunkFactor): MergeResult = {
    require(chunkFactor > 0, s"chunk factor must be positive, got $chunkFactor")
    require(drops.length == segments.length, "one drop set per segment")
    val names = SegmentWriter.sortNames(segments.flatMap(_.fields.map(_.name)))
    val newIds = names.zipWithIndex.toMap
    val fields0 = segments.headOption.map(_.fields.map(_.name)).getOrElse(IndexedSeq.empty)
    val fieldsSame = segments.forall(_.fields.map(_.name) == fields0)
    val dropped: IndexedSeq[Int => Boolean] = drops.map(d => if (d == null) (_: Int) => false else (i: Int) => d.contains(i))

    var next = 0L
    val newDocNums = segments.indices.map { s =>
      Array.tabulate(segments(s).numDocs)(d => if (dropped(s)(d)) -1L else { next += 1; next - 1 })
    }
    val numDocs = next
    val out = new ByteSink(1 << 16)
    if (numDocs == 0)
      return MergeResult(
        SegmentWriter.finish(out, names, new Array[Long](names.length), 0, 0, NotUninverted, chunkFactor),
        segments.map(_ => Array.emptyLongArray)
      )
    if (numDocs > Int.MaxValue) throw new IllegalArgumentException(s"a merged segment holds at most ${Int.MaxValue} docs")

    // stored records
    val storedOffsets = new Array[Long](numDocs.toInt)
    val encoder = new StoredFieldsEncoder
    for ((seg, s) <- segments.zipWithIndex if seg.numDocs > 0) {
      val map = newDocNums(s)
      if (fieldsSame && (drops(s) == null || drops(s).isEmpty)) {
        val (from, to) = seg.storedRecordsSpan
        val base = out.size.toLong
        copy(seg, from, to, out)
        for (d <- 0 until seg.numDocs) storedOffsets(map(d).toInt) = seg.recordOffset(d) - from + base
      } else {
        val remap = seg.fields.map(f => newIds(f.name))
        for (d <- 0 until seg.numDocs if map(d) >= 0) {
          val doc = seg.document(d)
          val values = doc.values.map(v => v.copy(fieldId = remap(v.fieldId))).sortBy(_.fieldId) // stable: document order kept
          storedOffsets(map(d).toInt) = out.size.toLong
          encoder.write(doc.id, values, out)
        }
      }
    }
    val storedIndexOffset = out.size.toLong
    storedOffsets.foreach(out.u64BE)

    val chunks = Postings.numChunks(numDocs.toInt, chunkFactor)
    val dictOffsets = new Array[Long](names.length)
    val dvStart = Array.fill(names.length)(NotUninverted)
    val dvEnd = Array.fill(names.length)(NotUninverted)
    val fst = new FstBuilder
    val pb = new PostingsBuilder
    val locScratch = new ByteSink(64)
    for ((name, fid) <- names.zipWithIndex) {
      // inputs in focus: the field's FST has at least one key
      val focus = segments.indices.filter { s =>
        val id = segments(s).fieldId(name)
        id >= 0 && segments(s).dictionary(id).nonEmpty
      }
      val iters = focus.map(s => segments(s).dictionary(segments(s).fieldId(name)).fst.get.iterator())
      val live = iters.map(_.next()).toArray
      fst.reset()
      var lastDoc, lastFreq = 0L
      var lastNorm = 0
      var current: Array[Byte] = null
      def finishTerm(): Unit = {
        if (current != null && !pb.isEmpty) {
          val value =
            if (pb.size == 1 && pb.locationBytes == 0 && pb.firstDoc.toLong <= 0x7fffffffL && pb.firstDoc == lastDoc && lastFreq == 1)
              Postings.oneHit(pb.firstDoc, lastNorm)
            else pb.write(out, chunkFactor, chunks)
          fst.insert(current, value)
        }
        pb.clear()
        lastDoc = 0; lastFreq = 0; lastNorm = 0
      }
      var more = live.exists(identity)
      while (more) {
        // smallest current key; ties go to the earliest input
        var k = -1
        var i = 0
        while (i < iters.length) {
          if (live(i) && (k < 0 || java.util.Arrays.compareUnsigned(iters(i).key, iters(k).key) < 0)) k = i
          i += 1
        }
        val term = iters(k).key
        if (current == null || !java.util.Arrays.equals(current, term)) { finishTerm(); current = term }
        val s = focus(k)
        val seg = segments(s)
        val map = newDocNums(s)
        val pl = seg.postingsAt(iters(k).value)
        lastDoc = 0; lastFreq = 0; lastNorm = 0
        val remap = if (fieldsSame) null else seg.fields.map(f => newIds(f.name))
        var h = 0
        while (h < pl.size) {
          val nd = map(pl.docs(h))
          if (nd >= 0) {
            if (fieldsSame) {
              if (pl.oneHitValue) pb.addOneHitRaw(nd.toInt, pl.normBits(h))
              else {
                val lf = if (pl.hasLocations(h)) pl.locSpans(2 * h) else 0
                val lt = if (pl.hasLocations(h)) pl.locSpans(2 * h + 1) else 0
                pb.addRaw(nd.toInt, seg.buffer, pl.freqSpans(2 * h), pl.freqSpans(2 * h + 1), lf, lt)
              }
            } else {
              locScratch.clear()
              for (l <- pl.locations(h)) {
                locScratch.uvarint(remap(l.fieldId).toLong)
                locScratch.uvarint(l.pos); locScratch.uvarint(l.start); locScratch.uvarint(l.end)
                locScratch.uvarint(l.arrayPositions.length.toLong)
                l.arrayPositions.foreach(locScratch.uvarint)
              }
              pb.add(nd.toInt, pl.freqs(h), pl.normBits(h), locScratch.array, 0, locScratch.size)
            }
            lastDoc = nd; lastFreq = pl.freqs(h).toLong; lastNorm = pl.normBits(h)
          }
          h += 1
        }
        live(k) = iters(k).next()
        more = live.exists(identity)
      }
      finishTerm()
      val fstBytes = fst.finish()
      dictOffsets(fid) = out.size.toLong
      out.uvarint(fstBytes.length.toLong)
      out.bytes(fstBytes)

      val dv = new DocValuesBuilder
      var anySection = false
      for (s <- focus; section <- segments(s).docValues(segments(s).fieldId(name))) {
        anySection = true
        val map = newDocNums(s)
        section.foreach((d, value) => if (map(d) >= 0) dv.add(map(d).toInt, value, 0, value.length))
      }
      if (anySection) {
        dvStart(fid) = out.size.toLong
        dv.write(out, chunkFactor, chunks)
        dvEnd(fid) = out.size.toLong
      }
    }
    val docValueOffset = out.size.toLong
    for (fid <- names.indices) { out.uvarint(dvStart(fid)); out.uvarint(dvEnd(fid)) }
    MergeResult(SegmentWriter.finish(out, names, dictOffsets, numDocs, storedIndexOffset, docValueOffset, chunkFactor), newDocNums)
  }

  /** Merges and writes to `path` through a temporary file renamed into place. */
  def mergeTo(segments: IndexedSeq[SegmentReader], drops: IndexedSeq[RoaringBitmap], path: Path, chunkFactor: Int = SegmentWriter.DefaultChunkFactor): IndexedSeq[Array[Long]] = {
    val r = merge(segments, drops, chunkFactor)
    SegmentWriter.writeFile(path, r.bytes)
    r.newDocNums
  }

  private def copy(seg: SegmentReader, from: Long, to: Long, out: ByteSink): Unit = {
    val dup = seg.buffer.duplicate()
    dup.position(from.toInt).limit(to.toInt)
    val chunk = new Array[Byte](math.min(1 << 16, (to - from).toInt))
    while (dup.hasRemaining) {
      val n = math.min(chunk.length, dup.remaining)
      dup.get(chunk, 0, n)
      out.bytes(chunk, 0, n)
    }
  }
}
