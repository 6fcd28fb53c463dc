package io.indexbridge.zap

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Path
import java.util.zip.CRC32

import scala.collection.mutable.ArrayBuffer

import io.indexbridge.bytes.ByteSink

/** Writes a zap v11 segment from analysed documents, byte for byte as zap's `New` does
  * (spec/zap.md §2, §15).
  *
  * {{{
  * stored records (docNum order), stored-fields index: numDocs × u64 BE   <- storedIndexOffset
  * per field id:  per term in byte order: freq/norm block, location block, postings record
  *                uvarint len(fst), vellum FST (term -> postings record offset)   <- dictOffset
  *                docvalue section, if any regular instance of the field has DocValues
  * docvalue index: per field (uvarint start, uvarint end)                 <- docValueOffset
  * field records: per field uvarint dictOffset, uvarint len(name), name
  * fields index: F × u64 BE                                               <- fieldsIndexOffset
  * footer: u64 numDocs, storedIndexOffset, fieldsIndexOffset, docValueOffset,
  *         u32 chunkFactor, u32 version 11, u32 CRC-32 of every byte before it
  * }}}
  * An empty segment holds only the field records (just `_id`, dictOffset 0), the fields index
  * and the footer, with storedIndexOffset = docValueOffset = 0.
  */
object SegmentWriter {
  final val Version = 11
  final val DefaultChunkFactor = 1024
  final val NotUninverted = -1L // 2^64-1: no docvalue section / empty merge

  /** The segment bytes for `docs` (document i = docNum i). */
  def build(docs: IndexedSeq[Document], chunkFactor: Int = DefaultChunkFactor): Array[Byte] = {
    require(chunkFactor > 0, s"chunk factor must be positive, got $chunkFactor")
    new Build(docs, chunkFactor).run()
  }

  /** Builds and writes to `path` through a temporary file renamed into place. */
  def write(docs: IndexedSeq[Document], path: Path, chunkFactor: Int = DefaultChunkFactor): Unit =
    writeFile(path, build(docs, chunkFactor))

  private[zap] def writeFile(path: Path, bytes: Array[Byte]): Unit = io.indexbridge.Storage.writeAtomically(path, bytes)

  /** Byte-order comparison of UTF-8 field names (not String.compareTo, which compares UTF-16). */
  private[zap] def sortNames(names: Iterable[String]): IndexedSeq[String] =
    "_id" +: names.filter(_ != "_id").toIndexedSeq.distinct
      .map(n => (n, n.getBytes(UTF_8)))
      .sortWith((a, b) => java.util.Arrays.compareUnsigned(a._2, b._2) < 0)
      .map(_._1)

  /** Field records, fields index, footer and CRC (shared with [[Merge]]). */
  private[zap] def finish(
      out: ByteSink,
      fieldNames: IndexedSeq[String],
      dictOffsets: Array[Long],
      numDocs: Long,
      storedIndexOffset: Long,
      docValueOffset: Long,
      chunkFactor: Int
  ): Array[Byte] = {
    val recordOffsets = new Array[Long](fieldNames.length)
    for (i <- fieldNames.indices) {
      recordOffsets(i) = out.size.toLong
      val name = fieldNames(i).getBytes(UTF_8)
      out.uvarint(dictOffsets(i))
      out.uvarint(name.length.toLong)
      out.bytes(name)
    }
    val fieldsIndexOffset = out.size.toLong
    recordOffsets.foreach(out.u64BE)
    out.u64BE(numDocs)
    out.u64BE(storedIndexOffset)
    out.u64BE(fieldsIndexOffset)
    out.u64BE(docValueOffset)
    out.u32BE(chunkFactor)
    out.u32BE(Version)
    val crc = new CRC32
    crc.update(out.array, 0, out.size)
    out.u32BE(crc.getValue.toInt)
    out.toArray
  }

  /** A term as a hash key: byte-wise equality. */
  private[zap] final class Term(val bytes: Array[Byte]) extends Comparable[Term] {
    override val hashCode: Int = java.util.Arrays.hashCode(bytes)
    override def equals(o: Any): Boolean = o match {
      case t: Term => java.util.Arrays.equals(bytes, t.bytes)
      case _       => false
    }
    def compareTo(o: Term): Int = java.util.Arrays.compareUnsigned(bytes, o.bytes)
  }

  /** One term of one field: its postings so far, and its summed freq and encoded locations in
    * the current document (`doc`, -1 before the term's first hit). One hash lookup per token. */
  private final class TermState {
    val postings = new PostingsBuilder
    var doc = -1
    var freq = 0
    val locs = new ByteSink(16)
  }

  private final class Build(docs: IndexedSeq[Document], chunkFactor: Int) {
    private val names: IndexedSeq[String] =
      sortNames(docs.iterator.flatMap(d => d.fields.iterator.map(_.name) ++ d.composites.iterator.map(_.name)).toSet)
    private val fieldIds: Map[String, Int] = names.zipWithIndex.toMap
    private val numFields = names.length
    private val postings = Array.fill(numFields)(new java.util.HashMap[Term, TermState])
    private val docValues = new Array[Boolean](numFields)
    private val out = new ByteSink(1 << 16)

    // per-document state
    private val fieldLens = new Array[Int](numFields)
    private var currentDoc = -1
    private val docTerms = Array.fill(numFields)(new ArrayBuffer[TermState]) // terms the current document hit
    private val touched = new Array[Boolean](numFields)
    private val touchedList = new Array[Int](numFields)
    private var touchedCount = 0

    private def fieldId(name: String): Int =
      fieldIds.getOrElse(name, throw new IllegalArgumentException(s"location names field '$name', which no document has"))

    private def visit(fid: Int, length: Int, tokens: IndexedSeq[Token]): Unit = {
      if (!touched(fid)) { touched(fid) = true; touchedList(touchedCount) = fid; touchedCount += 1 }
      fieldLens(fid) = (fieldLens(fid) + length) & 0xffff // Go sums into a uint16
      val terms = postings(fid)
      var i = 0
      while (i < tokens.length) { // index loops: no iterator, closure or boxed var per token
        val t = tokens(i)
        val key = new Term(t.term)
        var dt = terms.get(key)
        if (dt == null) { dt = new TermState; terms.put(key, dt) }
        if (dt.doc != currentDoc) { dt.doc = currentDoc; dt.freq = 0; dt.locs.clear(); docTerms(fid) += dt }
        dt.freq += t.freq
        var k = 0
        while (k < t.locations.length) {
          val l = t.locations(k)
          dt.locs.uvarint((if (l.field.isEmpty) fid else fieldId(l.field)).toLong)
          dt.locs.uvarint(l.pos); dt.locs.uvarint(l.start); dt.locs.uvarint(l.end)
          dt.locs.uvarint(l.arrayPositions.length.toLong)
          l.arrayPositions.foreach(dt.locs.uvarint)
          k += 1
        }
        i += 1
      }
    }

    def run(): Array[Byte] = {
      val numDocs = docs.length
      val stored = new StoredFieldsEncoder
      val storedOffsets = new Array[Long](numDocs)
      val perField = Array.fill(numFields)(ArrayBuffer.empty[StoredValue])
      for ((doc, docNum) <- docs.zipWithIndex) {
        currentDoc = docNum
        for (c <- doc.composites) visit(fieldId(c.name), c.length, c.tokens)
        for (f <- doc.fields) visit(fieldId(f.name), f.length, if (f.tokens == null) IndexedSeq.empty else f.tokens)
        // hits of this document
        var i = 0
        while (i < touchedCount) {
          val fid = touchedList(i)
          val normBits = java.lang.Float.floatToRawIntBits((1.0 / math.sqrt(fieldLens(fid).toDouble)).toFloat)
          for (dt <- docTerms(fid)) dt.postings.add(docNum, dt.freq, normBits, dt.locs.array, 0, dt.locs.size)
          docTerms(fid).clear()
          fieldLens(fid) = 0
          touched(fid) = false
          i += 1
        }
        touchedCount = 0
        // stored fields and docvalue flags
        var id: Array[Byte] = null
        for (f <- doc.fields) {
          val fid = fieldId(f.name)
          if (f.options.store) {
            if (fid == 0) { if (id == null) id = f.value }
            else perField(fid) += StoredValue(fid, f.fieldType, f.value, f.arrayPositions)
          }
          if (f.options.docValues) docValues(fid) = true
        }
        if (id == null) throw new IllegalArgumentException(s"document $docNum has no stored _id")
        storedOffsets(docNum) = out.size.toLong
        stored.write(id, perField.iterator.flatten.toSeq, out)
        perField.foreach(_.clear())
      }
      if (numDocs == 0) return finish(out, names, new Array[Long](numFields), 0, 0, 0, chunkFactor)

      val storedIndexOffset = out.size.toLong
      storedOffsets.foreach(out.u64BE)
      val chunks = Postings.numChunks(numDocs, chunkFactor)
      val dictOffsets = new Array[Long](numFields)
      val dvStart = Array.fill(numFields)(NotUninverted)
      val dvEnd = Array.fill(numFields)(NotUninverted)
      val fst = new FstBuilder
      for (fid <- 0 until numFields) {
        val terms = postings(fid).keySet.toArray(new Array[Term](0))
        java.util.Arrays.sort(terms.asInstanceOf[Array[AnyRef]])
        fst.reset()
        for (t <- terms) fst.insert(t.bytes, postings(fid).get(t).postings.write(out, chunkFactor, chunks))
        val fstBytes = fst.finish()
        dictOffsets(fid) = out.size.toLong
        out.uvarint(fstBytes.length.toLong)
        out.bytes(fstBytes)
        if (docValues(fid)) {
          // per doc: its terms in byte order, each followed by 0xFF
          val values = new Array[ByteSink](numDocs)
          for (t <- terms) {
            val pb = postings(fid).get(t).postings
            pb.foreachDoc { d =>
              if (values(d) == null) values(d) = new ByteSink(16)
              values(d).bytes(t.bytes); values(d).u8(0xff)
            }
          }
          val dv = new DocValuesBuilder
          for (d <- 0 until numDocs if values(d) != null) dv.add(d, values(d).array, 0, values(d).size)
          dvStart(fid) = out.size.toLong
          dv.write(out, chunkFactor, chunks)
          dvEnd(fid) = out.size.toLong
        }
        postings(fid) = null // release as we go
      }
      val docValueOffset = out.size.toLong
      for (fid <- 0 until numFields) { out.uvarint(dvStart(fid)); out.uvarint(dvEnd(fid)) }
      finish(out, names, dictOffsets, numDocs.toLong, storedIndexOffset, docValueOffset, chunkFactor)
    }
  }
}
