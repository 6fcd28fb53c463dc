package io.indexbridge.iceberg

import java.io.{ByteArrayInputStream, ByteArrayOutputStream}
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.core.JsonFactory
import com.fasterxml.jackson.databind.{DeserializationFeature, JsonNode, ObjectMapper}
import com.github.luben.zstd.Zstd
import io.indexbridge.{IndexFormatException, Storage}
import io.indexbridge.paimon.{DeletionVector, JavaOrder}
import net.jpountz.lz4.{LZ4FrameInputStream, LZ4FrameOutputStream}

/** Puffin files (Iceberg's container for indexes and statistics) and Iceberg v3 deletion vectors.
  *
  * {{{
  * "PFA1"                   magic, offset 0
  * blob 1                   at offset 4, then back to back (as Iceberg writes them;
  * blob 2                   a reader goes by the footer's offsets only)
  * ...
  * "PFA1"                   footer magic, at footerOffset
  * payload                  UTF-8 JSON FileMetadata, one LZ4 frame if flags bit 0 is set
  * u32 LE payload size      (after compression)
  * 4 bytes flags            byte 0 bit 0: payload compressed; every other bit reserved (0)
  * "PFA1"                   last 4 bytes of the file
  *
  * FileMetadata = {"blobs": [BlobMetadata...], "properties"?: {str: str}}
  * BlobMetadata = {"type", "fields": [int...], "snapshot-id", "sequence-number", "offset",
  *                 "length", "compression-codec"? ("lz4" | "zstd"), "properties"?: {str: str}}
  * }}}
  *
  * A blob of a codec is one LZ4 frame / one zstd frame with its content size (lz4-java and
  * zstd-jni, both shipped with Spark). Readers skip blob types they do not know.
  *
  * A `deletion-vector-v1` blob (Iceberg v3) is Paimon's 64-bit DV frame byte for byte
  * ([[io.indexbridge.paimon.DeletionVector]]: `u32 BE length(magic+bitmap) | d1 d3 39 64 |
  * portable 64-bit roaring | u32 BE CRC-32`), never compressed; its footer entry as Iceberg
  * 1.11's `BaseDVFileWriter` writes it:
  * {{{
  * {"type":"deletion-vector-v1","fields":[2147483645],"snapshot-id":-1,"sequence-number":-1,
  *  "offset":O,"length":L,"properties":{"referenced-data-file":"<data file>","cardinality":"<n>"}}
  * }}}
  * and the file's properties are `{"created-by": ...}`, written by Jackson's generator (compact,
  * Iceberg's `FileMetadataParser` field order). Iceberg's manifest entry of the DV (its
  * `DeleteFile`) points at the blob: `content_offset` = O (the length field),
  * `content_size_in_bytes` = L (the whole frame), `record_count` = the cardinality. Blobs follow
  * the iteration order of Iceberg's `HashMap` of data file paths ([[JavaOrder]]).
  *
  * Every read checks the magics, the flags, the footer's offsets against the file, and for DVs
  * the frame's magic, CRC (unless `verifyCrc = false`), length and the recorded cardinality.
  * Mirrors `indexbridge.iceberg.puffin`.
  */
object Puffin {
  val Magic: Array[Byte] = "PFA1".getBytes(StandardCharsets.US_ASCII)
  val FooterStructLength = 12 // payload size, flags, magic
  val FlagFooterCompressed = 0x01
  val DvBlobType = "deletion-vector-v1"
  val RowPositionFieldId = 2147483645 // MetadataColumns.ROW_POSITION, the field of a DV blob
  val ReferencedDataFile = "referenced-data-file"
  val Cardinality = "cardinality"
  val Codecs: Seq[String] = Seq("lz4", "zstd")
  val DefaultCreatedBy = "indexbridge 0.1.0"
  private val DvMagic = Array[Byte](0xd1.toByte, 0xd3.toByte, 0x39, 0x64)
  // The largest expansion a frame of each codec can declare per input byte: larger declared
  // content sizes are rejected before anything is allocated.
  private val MaxRatio = Map("lz4" -> 256L, "zstd" -> (1L << 15))
  private val mapper = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
  private val jsonFactory = new JsonFactory()

  /** One entry of the footer's `blobs`. */
  final case class BlobMetadata(
      `type`: String,
      fields: Seq[Int],
      snapshotId: Long,
      sequenceNumber: Long,
      offset: Long,
      length: Long,
      compressionCodec: Option[String] = None,
      properties: Seq[(String, String)] = Nil) {
    def property(key: String): Option[String] = properties.collectFirst { case (`key`, v) => v }
  }

  /** The footer of a Puffin file, and where it sits. */
  final case class FileMetadata(blobs: Seq[BlobMetadata], properties: Seq[(String, String)], footerOffset: Long,
      footerCompressed: Boolean, fileSize: Long)

  /** A blob to write: its bytes (uncompressed) and its footer fields. */
  final case class Blob(`type`: String, fields: Seq[Int], data: Array[Byte], snapshotId: Long = -1L, sequenceNumber: Long = -1L,
      compressionCodec: Option[String] = None, properties: Seq[(String, String)] = Nil)

  /** What Iceberg's manifest records for one DV (`DeleteFile` of format PUFFIN). */
  final case class DeleteFile(filePath: String, fileSizeInBytes: Long, contentOffset: Long, contentSizeInBytes: Long,
      referencedDataFile: String, recordCount: Long)

  // -------------------------------------------------------------------------------------------
  // Reading

  private def fail(source: String, at: Long, expected: String): Nothing = throw new IndexFormatException(source, at, expected)
  private def hex(bytes: Array[Byte]): String = java.util.HexFormat.of().formatHex(bytes)
  private def slice(data: Array[Byte], from: Long, n: Int): Array[Byte] =
    java.util.Arrays.copyOfRange(data, from.toInt, from.toInt + n)

  /** The footer of the Puffin file `data`: magics, flags, payload (LZ4 if compressed), JSON. */
  def readFileMetadata(data: Array[Byte], source: String = "<bytes>"): FileMetadata = {
    val size = data.length.toLong
    val minimum = 2 * Magic.length + FooterStructLength
    if (size < minimum)
      fail(source, 0, s"a Puffin file of at least $minimum bytes (magic, footer magic, footer struct), found $size")
    if (!slice(data, 0, 4).sameElements(Magic)) fail(source, 0, s"Puffin magic ${hex(Magic)} ('PFA1'), found ${hex(slice(data, 0, 4))}")
    if (!slice(data, size - 4, 4).sameElements(Magic))
      fail(source, size - 4, s"Puffin footer magic ${hex(Magic)} at the end of the file, found ${hex(slice(data, size - 4, 4))}")
    val flagsAt = size - 8
    val flags = slice(data, flagsAt, 4)
    if ((flags(0) & ~FlagFooterCompressed) != 0 || flags.drop(1).exists(_ != 0))
      fail(source, flagsAt, s"Puffin footer flags with only byte 0 bit 0 (compressed payload) set, found ${hex(flags)}")
    val compressed = (flags(0) & FlagFooterCompressed) != 0
    val payloadSize = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN).getInt((size - 12).toInt) & 0xffffffffL
    val footerOffset = size - FooterStructLength - payloadSize - Magic.length
    if (footerOffset < Magic.length)
      fail(source, size - 12, s"a footer payload size of at most ${size - minimum} bytes (the file's size), found $payloadSize")
    if (!slice(data, footerOffset, 4).sameElements(Magic))
      fail(source, footerOffset, s"Puffin footer magic ${hex(Magic)} before the footer payload, found ${hex(slice(data, footerOffset, 4))}")
    val payloadAt = footerOffset + 4
    val raw = slice(data, payloadAt, payloadSize.toInt)
    val payload = if (compressed) decompress("lz4", raw, source, payloadAt) else raw
    val footer =
      try mapper.readTree(StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(payload)).toString)
      catch { case NonFatal(e) => fail(source, payloadAt, s"a UTF-8 JSON footer payload (${e.getMessage.linesIterator.next()})") }
    val blobs = parseFooter(footer, source, payloadAt, footerOffset)
    FileMetadata(blobs, stringMap(footer, "properties", source, payloadAt, "file"), footerOffset, compressed, size)
  }

  private def parseFooter(footer: JsonNode, source: String, at: Long, footerOffset: Long): Seq[BlobMetadata] = {
    if (footer == null || !footer.isObject || !footer.path("blobs").isArray) fail(source, at, "a footer JSON object with a \"blobs\" array")
    footer.get("blobs").elements.asScala.zipWithIndex.map { case (b, i) =>
      val what = s"blob $i"
      if (!b.isObject) fail(source, at, s"$what of the footer as a JSON object")
      def integer(key: String, low: Long = Long.MinValue): Long = {
        val v = b.get(key)
        if (v == null || !v.isIntegralNumber || !v.canConvertToLong || v.asLong < low)
          fail(source, at, s"""$what: "$key" as an integer >= $low, found ${Option(v).getOrElse("null")}""")
        v.asLong
      }
      val kind = b.get("type")
      if (kind == null || !kind.isTextual) fail(source, at, s"""$what: "type" as a string, found ${Option(kind).getOrElse("null")}""")
      val fields = b.get("fields")
      if (fields == null || !fields.isArray || !fields.elements.asScala.forall(f => f.isIntegralNumber && f.canConvertToInt))
        fail(source, at, s"""$what: "fields" as an array of int field ids, found ${Option(fields).getOrElse("null")}""")
      val (offset, length) = (integer("offset", 0), integer("length", 0))
      if (offset < Magic.length || offset + length > footerOffset)
        fail(source, at, s"$what: a blob between the magic and the footer (offsets 4..$footerOffset), found offset $offset, length $length")
      val codec = b.get("compression-codec")
      if (codec != null && !codec.isNull && !codec.isTextual) fail(source, at, s"""$what: "compression-codec" as a string, found $codec""")
      BlobMetadata(kind.asText, fields.elements.asScala.map(_.asInt).toList, integer("snapshot-id"), integer("sequence-number"),
        offset, length, Option(codec).filter(_.isTextual).map(_.asText), stringMap(b, "properties", source, at, what))
    }.toList
  }

  private def stringMap(obj: JsonNode, key: String, source: String, at: Long, what: String): Seq[(String, String)] = {
    val v = obj.get(key)
    if (v == null || v.isNull) Nil
    else {
      if (!v.isObject || !v.properties.asScala.forall(_.getValue.isTextual))
        fail(source, at, s"""$what: "$key" as a JSON object of strings""")
      v.properties.asScala.map(e => e.getKey -> e.getValue.asText).toList
    }
  }

  /** The content size an LZ4 / zstd frame header declares (None if absent or unreadable). */
  private def frameContentSize(codec: String, data: Array[Byte]): Option[Long] =
    if (codec == "lz4") {
      val magic = Array[Byte](0x04, 0x22, 0x4d, 0x18)
      if (data.length >= 15 && data.take(4).sameElements(magic) && (data(4) & 0x08) != 0)
        Some(ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN).getLong(6)).filter(_ >= 0)
      else None
    } else {
      val size = Zstd.getFrameContentSize(data)
      if (size >= 0) Some(size) else None // negative: unknown or an error code
    }

  /** One LZ4 or zstd frame with its declared content size, checked before allocating. */
  private def decompress(codec: String, data: Array[Byte], source: String, at: Long): Array[Byte] = {
    if (!Codecs.contains(codec)) fail(source, at, s"a Puffin compression codec of ${Codecs.mkString(", ")}, found '$codec'")
    val declared = frameContentSize(codec, data)
      .getOrElse(fail(source, at, s"one $codec frame with its content size (Puffin's $codec codec)"))
    if (declared > MaxRatio(codec) * data.length + 64)
      fail(source, at, s"a $codec frame of at most ${MaxRatio(codec)}x its ${data.length} bytes, found a declared size of $declared")
    val out =
      try {
        if (codec == "zstd") Zstd.decompress(data, declared.toInt)
        else {
          val in = new LZ4FrameInputStream(new ByteArrayInputStream(data), true)
          try in.readAllBytes() finally in.close()
        }
      } catch { case NonFatal(e) => fail(source, at, s"a valid $codec frame (${e.getMessage})") }
    if (out.length != declared) fail(source, at, s"a $codec frame of $declared bytes as declared, found ${out.length}")
    out
  }

  /** A blob's bytes, decompressed by its codec. */
  def readBlob(data: Array[Byte], blob: BlobMetadata, source: String = "<bytes>"): Array[Byte] = {
    if (blob.offset + blob.length > data.length)
      fail(source, blob.offset, s"a blob of ${blob.length} bytes inside the file of ${data.length} bytes")
    val raw = slice(data, blob.offset, blob.length.toInt)
    blob.compressionCodec.fold(raw)(decompress(_, raw, source, blob.offset))
  }

  /** The footer and every blob (decompressed), whatever their types. */
  def read(data: Array[Byte], source: String): (FileMetadata, Seq[Array[Byte]]) = {
    val meta = readFileMetadata(data, source)
    (meta, meta.blobs.map(readBlob(data, _, source)))
  }

  /** The DV at a manifest entry's `content_offset` / `content_size_in_bytes` (how Iceberg's scan
    * reads it: no footer). The frame must fill `length` exactly and be 64-bit. */
  def readDeletionVector(data: Array[Byte], offset: Long, length: Long, source: String = "<bytes>",
      cardinality: Option[Long] = None, verifyCrc: Boolean = true): DeletionVector = {
    if (offset < 0 || length < 0 || offset + length > data.length)
      fail(source, math.max(offset, 0L), s"a deletion vector of $length bytes inside the file of ${data.length} bytes, at offset $offset")
    if (length >= 4) {
      val size = ByteBuffer.wrap(data).getInt(offset.toInt) & 0xffffffffL
      if (size != length - 8)
        fail(source, offset, s"a deletion vector frame of $length bytes as recorded (size field ${length - 8}), found size field $size (${size + 8} bytes)")
    }
    if (length >= 8 && !slice(data, offset + 4, 4).sameElements(DvMagic))
      fail(source, offset + 4, s"deletion-vector-v1 magic ${hex(DvMagic)}, found ${hex(slice(data, offset + 4, 4))}")
    // the size field equals length - 8, so the frame ends at offset + length
    val dv = DeletionVector.deserialize(data, source, offset.toInt, length.toInt, verifyCrc)
    for (c <- cardinality if dv.cardinality != c)
      fail(source, offset, s"a deletion vector of $c positions as recorded, found ${dv.cardinality}")
    dv
  }

  /** Every `deletion-vector-v1` blob of a Puffin file through its footer (other blob types are
    * skipped): uncompressed, with a referenced data file and a cardinality that matches. */
  def readDeletionVectors(data: Array[Byte], source: String, verifyCrc: Boolean = true): Seq[(BlobMetadata, DeletionVector)] = {
    val meta = readFileMetadata(data, source)
    meta.blobs.filter(_.`type` == DvBlobType).map { blob =>
      blob.compressionCodec.foreach(c => fail(source, blob.offset, s"an uncompressed deletion-vector-v1 blob, found codec '$c'"))
      if (blob.property(ReferencedDataFile).forall(_.isEmpty))
        fail(source, blob.offset, s"""a deletion-vector-v1 blob with the property "$ReferencedDataFile"""")
      val recorded = blob.property(Cardinality)
      if (!recorded.exists(r => r.nonEmpty && r.forall(c => c >= '0' && c <= '9')))
        fail(source, blob.offset, s"""a deletion-vector-v1 blob with a decimal "$Cardinality" property, found ${recorded.map("'" + _ + "'").getOrElse("None")}""")
      val expected = scala.util.Try(recorded.get.toLong).getOrElse(-1L)
      blob -> readDeletionVector(data, blob.offset, blob.length, source, Some(expected), verifyCrc)
    }
  }

  def readDeletionVectors(path: Path): Seq[(BlobMetadata, DeletionVector)] = readDeletionVectors(Files.readAllBytes(path), path.toString)

  // -------------------------------------------------------------------------------------------
  // Writing

  /** The footer payload (uncompressed) Iceberg's `FileMetadataParser.toJson` writes, through
    * Jackson's generator as Iceberg does (so string escapes are Jackson's). */
  def footerJson(blobs: Seq[BlobMetadata], properties: Seq[(String, String)]): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val g = jsonFactory.createGenerator(out)
    def stringMap(name: String, kvs: Seq[(String, String)]): Unit = if (kvs.nonEmpty) {
      g.writeObjectFieldStart(name)
      kvs.foreach { case (k, v) => g.writeStringField(k, v) }
      g.writeEndObject()
    }
    g.writeStartObject()
    g.writeArrayFieldStart("blobs")
    blobs.foreach { b =>
      g.writeStartObject()
      g.writeStringField("type", b.`type`)
      g.writeArrayFieldStart("fields")
      b.fields.foreach(f => g.writeNumber(f))
      g.writeEndArray()
      g.writeNumberField("snapshot-id", b.snapshotId)
      g.writeNumberField("sequence-number", b.sequenceNumber)
      g.writeNumberField("offset", b.offset)
      g.writeNumberField("length", b.length)
      b.compressionCodec.foreach(g.writeStringField("compression-codec", _))
      stringMap("properties", b.properties)
      g.writeEndObject()
    }
    g.writeEndArray()
    stringMap("properties", properties)
    g.writeEndObject()
    g.close()
    out.toByteArray
  }

  private def compress(codec: String, data: Array[Byte]): Array[Byte] = codec match {
    case "zstd" => Zstd.compress(data)
    case "lz4" =>
      val out = new ByteArrayOutputStream()
      val lz4 = new LZ4FrameOutputStream(out, LZ4FrameOutputStream.BLOCKSIZE.SIZE_4MB, data.length.toLong,
        LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE, LZ4FrameOutputStream.FLG.Bits.CONTENT_SIZE)
      lz4.write(data)
      lz4.close()
      out.toByteArray
    case other => throw new IllegalArgumentException(s"a Puffin compression codec is one of ${Codecs.mkString(", ")}, got '$other'")
  }

  /** A whole Puffin file as `PuffinWriter` writes it: magic, the blobs back to back (each
    * compressed by its codec), the footer (one LZ4 frame if `compressFooter`). */
  def encode(blobs: Seq[Blob], properties: Seq[(String, String)] = Nil, compressFooter: Boolean = false): (Array[Byte], Seq[BlobMetadata]) = {
    val out = new ByteArrayOutputStream()
    out.write(Magic)
    val written = blobs.map { blob =>
      val raw = blob.compressionCodec.fold(blob.data)(compress(_, blob.data))
      val meta = BlobMetadata(blob.`type`, blob.fields, blob.snapshotId, blob.sequenceNumber, out.size.toLong, raw.length.toLong,
        blob.compressionCodec, blob.properties)
      out.write(raw)
      meta
    }
    val json = footerJson(written, properties)
    val payload = if (compressFooter) compress("lz4", json) else json
    out.write(Magic)
    out.write(payload)
    out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(payload.length).array)
    out.write(Array[Byte](if (compressFooter) FlagFooterCompressed.toByte else 0, 0, 0, 0))
    out.write(Magic)
    if (out.size < 0 || out.size.toLong > Int.MaxValue) throw new IllegalStateException("a Puffin file over 2 GiB")
    (out.toByteArray, written)
  }

  /** (referenced data file, a 64-bit DV frame, its cardinality): a blob to be, taken as it is. */
  final case class DvFrame(dataFile: String, frame: Array[Byte], cardinality: Long)

  /** The order `BaseDVFileWriter` writes blobs: its `HashMap` of paths, filled by one
    * `computeIfAbsent` per deleted position, file after file. Calls for a present key change
    * nothing but may resize the table (a resize is due when the size exceeds the threshold at
    * the start of a call): that only shows after the last file, when it has a second position
    * (`lastRepeats`) and its insertion crossed the threshold (13, 25, 49 ... files). */
  def blobOrder(referencedDataFiles: Seq[String], lastRepeats: Boolean): Seq[String] =
    JavaOrder.afterComputeIfAbsent(referencedDataFiles ++ referencedDataFiles.lastOption.filter(_ => lastRepeats))(
      JavaOrder.javaStringHash, Some(JavaOrder.stringCompareTo))

  /** `dv` as a 64-bit DV (itself if it is one). */
  def toBitmap64(dv: DeletionVector): DeletionVector =
    if (dv.bitmap64) dv else DeletionVector.fromPositions(dv.positions, bitmap64 = true)

  /** Frames of DVs: 64-bit DVs serialize as they are, 32-bit ones as the 64-bit DV of the same
    * positions (run-optimised, as Paimon's `Bitmap64DeletionVector` would write them). */
  def dvFrames(dvs: Seq[(String, DeletionVector)]): Seq[DvFrame] =
    dvs.map { case (name, dv) => DvFrame(name, toBitmap64(dv).serialize(), dv.cardinality) }

  /** A Puffin file of `deletion-vector-v1` blobs as Iceberg's `BaseDVFileWriter` writes it, the
    * frames copied as they are; blobs in the order of Iceberg's HashMap of data file paths when
    * it is handed the positions file by file in the given order (`hashMapOrder`), or as given. */
  def encodeDeletionVectors(frames: Seq[DvFrame], createdBy: String = DefaultCreatedBy,
      hashMapOrder: Boolean = true): (Array[Byte], Seq[BlobMetadata]) = {
    val byName = frames.map(f => f.dataFile -> f).toMap
    require(byName.size == frames.size, "each data file may have only one deletion vector")
    val names = if (hashMapOrder) blobOrder(frames.map(_.dataFile), frames.lastOption.exists(_.cardinality >= 2)) else frames.map(_.dataFile)
    val blobs = names.map { name =>
      val f = byName(name)
      require(DeletionVector.isFrame64(f.frame), s"the deletion vector of $name is not one 64-bit (deletion-vector-v1) frame")
      Blob(DvBlobType, Seq(RowPositionFieldId), f.frame, properties = Seq(ReferencedDataFile -> name, Cardinality -> f.cardinality.toString))
    }
    encode(blobs, Seq("created-by" -> createdBy))
  }

  /** Writes [[encodeDeletionVectors]] to `path` atomically; returns the manifest entries Iceberg
    * needs per data file (`filePath` defaults to the absolute `path`). */
  def writeDeletionVectors(path: Path, frames: Seq[DvFrame], createdBy: String = DefaultCreatedBy, hashMapOrder: Boolean = true,
      filePath: Option[String] = None): Seq[DeleteFile] = {
    val (content, blobs) = encodeDeletionVectors(frames, createdBy, hashMapOrder)
    Storage.writeAtomically(path, content)
    deleteFiles(filePath.getOrElse(path.toAbsolutePath.toString), content.length.toLong, blobs)
  }

  /** The manifest entries of the DV blobs of a Puffin file at `location` of `fileSize` bytes. */
  def deleteFiles(location: String, fileSize: Long, blobs: Seq[BlobMetadata]): Seq[DeleteFile] =
    blobs.filter(_.`type` == DvBlobType).map(b =>
      DeleteFile(location, fileSize, b.offset, b.length, b.property(ReferencedDataFile).get, b.property(Cardinality).get.toLong))

  def writeDeletionVectors(path: String, frames: Seq[DvFrame]): Seq[DeleteFile] = writeDeletionVectors(Paths.get(path), frames)
}
