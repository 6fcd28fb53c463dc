package io.indexbridge.cli

import java.nio.ByteBuffer
import java.nio.charset.{CharacterCodingException, StandardCharsets}
import java.nio.file.Paths
import java.util.HexFormat

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import io.indexbridge.zap.{SegmentReader, SegmentWriter}

/** `indexbridge inspect --engine jvm` for zap segments: the same JSON as Python's
  * `indexbridge.cli.zap_summary` (whose docstring describes the fields and the section sizes). */
object ZapInspect {
  private val mapper = new ObjectMapper()

  /** Bytes as `{key: text}` when they are UTF-8, else `{key_hex: hex}`. */
  private def putText(node: ObjectNode, raw: Array[Byte], key: String): ObjectNode =
    try node.put(key, StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(raw)).toString)
    catch { case _: CharacterCodingException => node.put(s"${key}_hex", HexFormat.of().formatHex(raw)) }

  private def uvarintSize(v: Long): Int = {
    var n = 1
    var x = v >>> 7
    while (x != 0) { n += 1; x >>>= 7 }
    n
  }

  private def unsigned(v: Long): java.math.BigInteger = new java.math.BigInteger(java.lang.Long.toUnsignedString(v))

  def describe(node: ObjectNode, path: String, terms: Boolean, prefix: Option[String], doc: Option[Int]): ObjectNode = {
    val segment = SegmentReader.open(Paths.get(path))
    val f = segment.footer
    val size = java.nio.file.Files.size(Paths.get(path))
    val n = segment.numDocs
    node.put("format", "zap").put("file_size", size).put("version", f.version).put("num_docs", n)
      .put("chunk_factor", f.chunkFactor).put("crc", f.crc & 0xffffffffL)
    node.putObject("footer").put("stored_index_offset", unsigned(f.storedIndexOffset))
      .put("fields_index_offset", unsigned(f.fieldsIndexOffset)).put("doc_value_offset", unsigned(f.docValueOffset))
    val sections = node.putObject("sections")
    val fields = node.putArray("fields")
    var (dictionaryBytes, docValueBytes, docValueIndex) = (0L, 0L, 0L)
    for (info <- segment.fields) {
      val dictionary = segment.dictionary(info.id)
      val dictSize = dictionary.fstLength.fold(0L)(len => uvarintSize(len.toLong) + len.toLong)
      val dvSize = info.docValues.fold(0L) { case (s, e) => e - s }
      dictionaryBytes += dictSize
      docValueBytes += dvSize
      val (start, end) = info.docValues.getOrElse((SegmentWriter.NotUninverted, SegmentWriter.NotUninverted))
      docValueIndex += uvarintSize(start) + uvarintSize(end)
      val field = fields.addObject().put("id", info.id).put("name", info.name)
        .put("terms", dictionary.terms().size).put("docvalues", info.docValues.isDefined)
        .put("dictionary_bytes", dictSize).put("docvalue_bytes", dvSize)
      if (terms || prefix.isDefined) {
        val list = field.putArray("term_list")
        val items = prefix.fold(dictionary.terms())(p => dictionary.termsWithPrefix(p.getBytes(StandardCharsets.UTF_8)))
        for ((term, value) <- items) putText(list.addObject(), term, "term").put("docs", segment.postingsAt(value).size)
      }
    }
    val (stored, storedIndex) = if (n > 0) (f.storedIndexOffset, 8L * n) else (0L, 0L)
    if (n == 0) docValueIndex = 0
    val fieldRecords = size - SegmentReader.FooterSize - (if (n > 0) f.docValueOffset + docValueIndex else 0L)
    sections.put("stored", stored).put("stored_index", storedIndex)
      .put("postings", size - SegmentReader.FooterSize - fieldRecords - docValueIndex - docValueBytes - dictionaryBytes - storedIndex - stored)
      .put("dictionaries", dictionaryBytes).put("docvalues", docValueBytes).put("docvalue_index", docValueIndex)
      .put("fields", fieldRecords).put("footer", SegmentReader.FooterSize)
    doc.foreach { d =>
      if (d < 0 || d >= n) throw new IllegalArgumentException(s"$path: --doc $d: a document number below $n")
      val document = segment.document(d)
      val out = node.putObject("doc").put("doc", d)
      val stored = out.putArray("stored")
      putText(stored.addObject().put("field", "_id").put("type", "t"), document.id, "value").putArray("array_positions")
      for (v <- document.values) {
        val entry = putText(stored.addObject().put("field", segment.fields(v.fieldId).name).put("type", (v.fieldType & 0xff).toChar.toString), v.value, "value")
        val positions = entry.putArray("array_positions")
        v.arrayPositions.foreach(p => positions.add(p))
      }
    }
    node
  }
}
