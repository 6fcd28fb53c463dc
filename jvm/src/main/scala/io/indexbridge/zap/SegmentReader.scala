package io.indexbridge.zap

import java.nio.ByteBuffer
import java.nio.channels.FileChannel
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Path, StandardOpenOption}
import java.util.zip.CRC32

import io.indexbridge.IndexFormatException
import io.indexbridge.bytes.BufferReader

/** The 44-byte footer (spec/zap.md §9), all big-endian:
  * {{{ u64 numDocs, u64 storedIndexOffset, u64 fieldsIndexOffset, u64 docValueOffset,
  *     u32 chunkFactor, u32 version (11), u32 CRC-32 of bytes [0, fileLen-4) }}} */
final case class Footer(
    numDocs: Long,
    storedIndexOffset: Long,
    fieldsIndexOffset: Long,
    docValueOffset: Long,
    chunkFactor: Int,
    version: Int,
    crc: Int
)

/** A field: id, name, the offset of its record, its dictionary offset (0 = none) and docvalue
  * section `[start, end)` if it has one. */
final case class FieldInfo(id: Int, name: String, recordOffset: Long, dictOffset: Long, docValues: Option[(Long, Long)])

/** A zap v11 segment opened for reading (layout in [[SegmentWriter]]; procedure spec §17),
  * over a memory-mapped file or any ByteBuffer. Opening reads the footer, checks the version and
  * (by default) the CRC, then the field records and the docvalue index; everything else is read
  * on demand and checked against the bytes available, failing with IndexFormatException. */
final class SegmentReader private (buf: ByteBuffer, val source: String, verifyCrc: Boolean) {
  import SegmentReader._

  private val size = buf.limit()
  private val whole = new BufferReader(buf, source, 0, size)
  if (size < FooterSize) whole.fail(s"a zap segment of at least $FooterSize bytes (the footer), found $size", 0L)

  val footer: Footer = {
    val r = whole.range(size - FooterSize, size, "footer")
    Footer(r.u64BE("numDocs"), r.u64BE("storedIndexOffset"), r.u64BE("fieldsIndexOffset"), r.u64BE("docValueOffset"),
      r.u32BE("chunkFactor").toInt, r.u32BE("version").toInt, r.u32BE("crc").toInt)
  }
  if (footer.version != SegmentWriter.Version) whole.fail(s"zap version 11, found ${footer.version & 0xffffffffL}", size - 8L)
  if (footer.chunkFactor <= 0) whole.fail(s"a positive chunk factor, found ${footer.chunkFactor & 0xffffffffL}", size - 12L)

  /** The CRC-32 of bytes [0, size-4) (what the footer's crc must equal). */
  lazy val computedCrc: Int = {
    val crc = new CRC32
    val dup = buf.duplicate()
    dup.position(0).limit(size - 4)
    crc.update(dup)
    crc.getValue.toInt
  }
  def crcOk: Boolean = computedCrc == footer.crc
  if (verifyCrc && !crcOk)
    whole.fail(s"CRC-32 ${footer.crc & 0xffffffffL} of the footer to match the content's ${computedCrc & 0xffffffffL}", size - 4L)

  private val body = whole.range(0, size - FooterSize, "segment body")
  private val bodyEnd = size - FooterSize

  /** Documents in the segment. */
  val numDocs: Int = {
    // every doc has a stored record of at least 3 bytes and an 8-byte index entry
    if (footer.numDocs < 0 || footer.numDocs > bodyEnd / 11) whole.fail(s"at most ${bodyEnd / 11} docs for $size bytes, found ${java.lang.Long.toUnsignedString(footer.numDocs)}", size - 44L)
    footer.numDocs.toInt
  }
  val chunkFactor: Int = footer.chunkFactor

  val fields: IndexedSeq[FieldInfo] = {
    val fio = footer.fieldsIndexOffset
    if (fio < 0 || fio > bodyEnd || (bodyEnd - fio) % 8 != 0)
      whole.fail(s"a fields index offset leaving a multiple of 8 bytes before the footer (at most $bodyEnd), found ${java.lang.Long.toUnsignedString(fio)}", size - 28L)
    val n = ((bodyEnd - fio) / 8).toInt
    if (n == 0) whole.fail("at least the _id field in the fields index", fio)
    val index = body.range(fio, bodyEnd, "fields index")
    val dvIndex: Option[BufferReader] =
      if (numDocs == 0 || footer.docValueOffset == SegmentWriter.NotUninverted) None
      else {
        val o = footer.docValueOffset
        if (o < 0 || o > fio) whole.fail(s"a docvalue index offset in 0..$fio, found ${java.lang.Long.toUnsignedString(o)}", size - 20L)
        Some(body.range(o, fio, "docvalue index"))
      }
    (0 until n).map { i =>
      val recordOffset = index.u64BE("field record offset")
      val rec = body.range(0, fio, "field records").seek(recordOffset, s"field record $i")
      val dictOffset = rec.uvarint(s"field $i dictionary offset")
      val nameLen = rec.uvarintUpTo(rec.remaining.toLong, s"field $i name length")
      val name = new String(rec.take(nameLen, s"field $i name"), UTF_8)
      if (i == 0 && name != "_id") rec.fail(s"field 0 to be _id, found '$name'", recordOffset)
      if (dictOffset < 0 || dictOffset >= fio || (numDocs == 0 && dictOffset != 0))
        rec.fail(s"field $i dictionary offset in 0..${fio - 1}, found ${java.lang.Long.toUnsignedString(dictOffset)}", recordOffset)
      val dv = dvIndex.flatMap { r =>
        val s = r.uvarint(s"field $i docvalue start")
        val e = r.uvarint(s"field $i docvalue end")
        if (s == SegmentWriter.NotUninverted && e == SegmentWriter.NotUninverted) None
        else if (s < 0 || e < s || e > fio) r.fail(s"field $i docvalue section inside 0..$fio, found $s..$e")
        else Some((s, e))
      }
      FieldInfo(i, name, recordOffset, dictOffset, dv)
    }
  }

  private val byName: Map[String, Int] = fields.map(f => f.name -> f.id).toMap

  /** Field id of `name`, or -1. */
  def fieldId(name: String): Int = byName.getOrElse(name, -1)

  private val dictionaries = new Array[Dictionary](fields.length)

  /** The term dictionary of field `id` (an empty one when the field has no dictionary). */
  def dictionary(id: Int): Dictionary = {
    if (dictionaries(id) == null) dictionaries(id) = new Dictionary(this, fields(id))
    dictionaries(id)
  }

  def dictionary(name: String): Option[Dictionary] = Option(fieldId(name)).filter(_ >= 0).map(dictionary)

  /** The doc numbers of `term` in field `name` (no freqs, norms or locations decoded), if present. */
  def postingsDocs(name: String, term: Array[Byte]): Option[org.roaringbitmap.RoaringBitmap] =
    dictionary(name).flatMap(_.value(term)).map(v => Postings.docs(body, v, numDocs, checkRoaring = true))

  /** The postings of `term` in field `name`, if present. */
  def postings(name: String, term: Array[Byte]): Option[PostingsList] = dictionary(name).flatMap(_.postings(term))

  /** Stored fields of `doc`. */
  def document(doc: Int): StoredDocument = {
    checkDoc(doc)
    StoredFields.read(storedSection, recordOffset(doc), fields.length)
  }

  /** The external id (`_id`) of `doc` (its record's head only: no decompression). */
  def docId(doc: Int): Array[Byte] = {
    checkDoc(doc)
    StoredFields.readId(storedSection, recordOffset(doc))
  }

  private def checkDoc(doc: Int): Unit =
    if (doc < 0 || doc >= numDocs) throw new IndexOutOfBoundsException(s"doc $doc of $numDocs")

  private lazy val storedIndex: Long = {
    val o = footer.storedIndexOffset
    if (o < 0 || o + 8L * numDocs > bodyEnd) whole.fail(s"a stored index of $numDocs entries inside the body, at ${java.lang.Long.toUnsignedString(o)}", size - 36L)
    o
  }
  private lazy val storedSection: BufferReader = body.range(0, storedIndex, "stored records")

  private[zap] def recordOffset(doc: Int): Long =
    body.range(storedIndex, storedIndex + 8L * numDocs, "stored index").seek(storedIndex + 8L * doc, "stored index entry").u64BE("stored record offset")

  /** Bytes `[start, end)` of the stored records of docs `0 until numDocs` (for copying). */
  private[zap] def storedRecordsSpan: (Long, Long) = {
    val first = recordOffset(0)
    (first, StoredFields.recordEnd(storedSection.range(storedSection.start, storedSection.end, "stored records"), recordOffset(numDocs - 1)))
  }

  /** The docvalue section of field `id`, if it has one. */
  def docValues(id: Int): Option[DocValuesSection] =
    fields(id).docValues.map { case (s, e) => new DocValuesSection(body, s, e, chunkFactor, numDocs) }

  /** The docvalue terms of (`field`, `doc`); empty without a section or value. */
  def docValueTerms(field: String, doc: Int): IndexedSeq[Array[Byte]] =
    Option(fieldId(field)).filter(_ >= 0).flatMap(docValues).map(_.terms(doc)).getOrElse(IndexedSeq.empty)

  private[zap] def bodyReader: BufferReader = body
  private[zap] def buffer: ByteBuffer = buf
  /** The postings behind FST value `value` of any field (general or 1-hit). */
  def postingsAt(value: Long, checkRoaring: Boolean = true): PostingsList =
    Postings.read(body, value, numDocs, chunkFactor, fields.length, checkRoaring)
}

/** A field's term dictionary: the FST (term -> FST value, §10) and the postings behind it. */
final class Dictionary private[zap] (seg: SegmentReader, val field: FieldInfo) {
  /** The FST's length prefix and the FST, or None when dictOffset is 0. */
  private val located: Option[(Int, Fst)] =
    if (field.dictOffset == 0) None
    else {
      val r = seg.bodyReader.range(seg.bodyReader.start, seg.bodyReader.end, "dictionary").seek(field.dictOffset, s"dictionary of ${field.name}")
      val len = r.uvarintUpTo(r.remaining.toLong, s"FST length of ${field.name}")
      Some((len, Fst.open(seg.buffer, r.pos, len, seg.source)))
    }

  val fst: Option[Fst] = located.map(_._2)

  def fstLength: Option[Int] = located.map(_._1)

  /** True when the dictionary has at least one term (what a merge calls "in focus"). */
  def nonEmpty: Boolean = fst.exists(f => f.iterator().next())

  /** The FST value of `term`. */
  def value(term: Array[Byte]): Option[Long] = fst.flatMap(_.get(term))

  def postings(term: Array[Byte]): Option[PostingsList] = value(term).map(v => seg.postingsAt(v))

  /** Terms in `[lo, hi)` (null = unbounded) with their FST values, in byte order. */
  def terms(lo: Array[Byte] = null, hi: Array[Byte] = null): Iterator[(Array[Byte], Long)] = fst match {
    case None => Iterator.empty
    case Some(f) =>
      val it = f.iterator(lo, hi)
      Iterator.continually(it).takeWhile(_.next()).map(i => (i.key, i.value))
  }

  def termsWithPrefix(prefix: Array[Byte]): Iterator[(Array[Byte], Long)] = terms(prefix, Fst.successor(prefix))
}

object SegmentReader {
  final val FooterSize = 44

  /** Memory-maps `path` read-only; the CRC is verified unless `verifyCrc` is false. */
  def open(path: Path, verifyCrc: Boolean = true): SegmentReader = {
    val ch = FileChannel.open(path, StandardOpenOption.READ)
    try {
      val size = ch.size
      if (size > Int.MaxValue) throw new IndexFormatException(path.toString, 0L, s"a segment below 2 GiB, found $size bytes")
      new SegmentReader(ch.map(FileChannel.MapMode.READ_ONLY, 0, size), path.toString, verifyCrc)
    } finally ch.close()
  }

  def apply(bytes: Array[Byte], source: String = "segment", verifyCrc: Boolean = true): SegmentReader =
    new SegmentReader(ByteBuffer.wrap(bytes), source, verifyCrc)
}
