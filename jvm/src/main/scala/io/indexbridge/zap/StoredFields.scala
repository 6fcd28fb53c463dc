package io.indexbridge.zap

import io.indexbridge.bytes.{BufferReader, ByteSink}

/** Stored fields (spec/zap.md §4): one record per document, then the stored-fields index.
  *
  * {{{
  * record:  uvarint metaLen
  *          uvarint dataLen                    = len(idBytes) + len(snappyBlock)
  *          meta[metaLen]:  uvarint len(idBytes)
  *                          per stored value except _id, by field id, then document order:
  *                            uvarint fieldId, uvarint type, uvarint start, uvarint length,
  *                            uvarint numArrayPositions, uvarint arrayPosition × n
  *          idBytes                            the _id value, raw
  *          snappyBlock                        snappy(concatenated values; start/length index it)
  * index:   numDocs × u64 BE record offset     <- footer.storedIndexOffset
  * }}}
  */
final case class StoredValue(fieldId: Int, fieldType: Byte, value: Array[Byte], arrayPositions: Array[Long])

final case class StoredDocument(id: Array[Byte], values: IndexedSeq[StoredValue])

/** Encodes records; one instance is reused across documents. */
final class StoredFieldsEncoder {
  private val meta = new ByteSink(256)
  private val data = new ByteSink(1024)
  private val block = new ByteSink(1024)

  /** Appends the record of a document with `_id` value `id` and `values` (already ordered by
    * field id, then document order; `_id` not among them) to `out`. */
  def write(id: Array[Byte], values: Iterable[StoredValue], out: ByteSink): Unit = {
    meta.clear(); data.clear(); block.clear()
    meta.uvarint(id.length.toLong)
    for (v <- values) {
      meta.uvarint(v.fieldId.toLong)
      meta.uvarint((v.fieldType & 0xff).toLong)
      meta.uvarint(data.size.toLong)
      meta.uvarint(v.value.length.toLong)
      meta.uvarint(v.arrayPositions.length.toLong)
      v.arrayPositions.foreach(p => meta.uvarint(p))
      data.bytes(v.value)
    }
    Snappy.encode(data.array, 0, data.size, block)
    out.uvarint(meta.size.toLong)
    out.uvarint((id.length + block.size).toLong)
    out.bytes(meta)
    out.bytes(id)
    out.bytes(block)
  }
}

object StoredFields {
  /** The byte range `[start, end)` of the record at `offset` (used to copy records verbatim). */
  def recordEnd(r: BufferReader, offset: Long): Long = {
    r.seek(offset, "stored record")
    val metaLen = r.uvarint("stored record meta length")
    val dataLen = r.uvarint("stored record data length")
    val end = r.pos.toLong + metaLen + dataLen
    if (metaLen < 0 || dataLen < 0 || end > r.end) r.fail(s"stored record of $metaLen + $dataLen bytes inside the stored section", offset)
    end
  }

  /** A record's head at `offset`, read as far as the `_id` length: (a reader over the meta
    * after it, where the data starts, the data length, the `_id` length). */
  private def head(r: BufferReader, offset: Long): (BufferReader, Int, Int, Int) = {
    r.seek(offset, "stored record")
    val metaLen = r.uvarintUpTo(r.remaining.toLong, "stored record meta length")
    val dataLen = r.uvarintUpTo(r.remaining.toLong, "stored record data length")
    val metaStart = r.pos
    r.require(metaLen.toLong + dataLen, "stored record meta and data")
    val meta = r.range(metaStart, metaStart.toLong + metaLen, "stored record meta")
    val idLen = meta.uvarintUpTo(dataLen.toLong, "stored _id length")
    (meta, metaStart + metaLen, dataLen, idLen)
  }

  private def id(r: BufferReader, dataStart: Int, idLen: Int): Array[Byte] =
    r.range(dataStart, dataStart.toLong + idLen, "stored _id").take(idLen, "stored _id")

  /** The `_id` of the record at `offset`, read without decompressing the other values (zap
    * keeps it out of the snappy block for this). */
  def readId(r: BufferReader, offset: Long): Array[Byte] = {
    val (_, dataStart, _, idLen) = head(r, offset)
    id(r, dataStart, idLen)
  }

  /** Decodes the record at `offset`; `numFields` bounds the field ids. */
  def read(r: BufferReader, offset: Long, numFields: Int): StoredDocument = {
    val (meta, dataStart, dataLen, idLen) = head(r, offset)
    val docId = id(r, dataStart, idLen)
    val blockAt = dataStart + idLen
    val block = r.range(blockAt, dataStart.toLong + dataLen, "stored snappy block").take(dataLen - idLen, "stored snappy block")
    val data = Snappy.decode(block, 0, block.length, r.source, blockAt.toLong)
    val values = IndexedSeq.newBuilder[StoredValue]
    while (meta.remaining > 0) {
      val at = meta.pos
      val fieldId = meta.uvarintUpTo(numFields - 1L, "stored value field id")
      val typ = meta.uvarintUpTo(255, "stored value type")
      val start = meta.uvarintUpTo(data.length.toLong, "stored value start")
      val length = meta.uvarintUpTo(data.length.toLong - start, "stored value length")
      val n = meta.uvarintUpTo(meta.remaining.toLong, "stored value array position count")
      val ap = new Array[Long](n)
      var i = 0
      while (i < n) { ap(i) = meta.uvarint("stored value array position"); i += 1 }
      if (fieldId == 0) meta.fail("stored values other than _id in the meta entries", at.toLong)
      values += StoredValue(fieldId, typ.toByte, java.util.Arrays.copyOfRange(data, start, start + length), ap)
    }
    StoredDocument(docId, values.result())
  }
}
