package io.indexbridge.cli

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import io.indexbridge.IndexFormatException
import io.indexbridge.bytes.ByteReader
import io.indexbridge.delta.DeletionVectorFile
import io.indexbridge.iceberg.Puffin
import io.indexbridge.paimon.{DeletionFile, DeletionVector, HashIndex}

import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._

/** `indexbridge inspect --engine jvm`: the JSON summary of one file, the same fields as the
  * Python engine's `indexbridge.cli.inspect.describe` (file indexes: [[FileIndexInspect]], zap
  * segments: [[ZapInspect]]). Errors are [[IndexFormatException]]s
  * naming the file and offset. */
object Inspect {
  private val mapper = new ObjectMapper()
  private val Dv32Magic = Array[Byte](0x5e, 0x43, 0xf2.toByte, 0xd0.toByte)
  private val Dv64Magic = Array[Byte](0xd1.toByte, 0xd3.toByte, 0x39, 0x64)

  private def magicAt(data: Array[Byte], at: Int): Boolean =
    data.length >= at + 4 && {
      val m = data.slice(at, at + 4)
      m.sameElements(Dv32Magic) || m.sameElements(Dv64Magic)
    }

  private val DeltaDvFileName = "^deletion_vector_[0-9a-fA-F-]{36}\\.bin$".r

  def detect(path: String, data: Array[Byte]): String =
    if (data.length >= 4 && data.take(4).sameElements(Puffin.Magic)) "puffin"
    else if (magicAt(data, 4)) "dv"
    else if (data.nonEmpty && data(0) == 1 && DeltaDvFileName.matches(Paths.get(path).getFileName.toString)) "delta-dv"
    else if (data.nonEmpty && data(0) == 1 && (data.length == 1 || magicAt(data, 5))) "dv-file"
    else if (data.length >= 8 && data.take(8).sameElements(FileIndexInspect.ContainerMagic)) "file-index"
    else if (data.length >= 44 && data.slice(data.length - 8, data.length - 4).sameElements(Array[Byte](0, 0, 0, 11))) "zap"
    else
      throw new IndexFormatException(
        path, 0, "a Paimon deletion vector, deletion file or file index, or a zap segment " +
          "(HASH indexes and raw bloom/bitmap/bsi payloads have no magic: pass --format)")

  private def putDv(node: ObjectNode, dv: DeletionVector): ObjectNode = {
    val positions = dv.positions
    node.put("bitmap64", dv.bitmap64).put("cardinality", dv.cardinality)
    if (positions.isEmpty) node.putNull("min_position").putNull("max_position")
    else node.put("min_position", positions.head).put("max_position", positions.last)
  }

  /** Positions as a row set `{"cardinality", "ranges": [[start, end), ...]}`, every range. */
  private def putRowSet(node: ObjectNode, dv: DeletionVector): Unit = {
    val rows = node.putObject("positions").put("cardinality", dv.cardinality)
    val ranges = rows.putArray("ranges")
    var (start, end) = (-1L, -1L)
    def flush(): Unit = if (start >= 0) ranges.addArray().add(start).add(end)
    dv.foreachPosition { p =>
      if (p != end) { flush(); start = p }
      end = p + 1
    }
    flush()
  }

  private def describePuffin(node: ObjectNode, path: String, data: Array[Byte]): Unit = {
    val meta = Puffin.readFileMetadata(data, path)
    node.put("format", "puffin").put("file_size", data.length).put("footer_offset", meta.footerOffset)
      .put("footer_compressed", meta.footerCompressed)
    val properties = node.putObject("properties")
    meta.properties.foreach { case (k, v) => properties.put(k, v) }
    val blobs = node.putArray("blobs")
    meta.blobs.foreach { blob =>
      val entry = blobs.addObject().put("type", blob.`type`).put("offset", blob.offset).put("length", blob.length)
      val fields = entry.putArray("fields")
      blob.fields.foreach(fields.add(_))
      entry.put("snapshot_id", blob.snapshotId).put("sequence_number", blob.sequenceNumber)
      blob.compressionCodec.fold(entry.putNull("compression_codec"))(entry.put("compression_codec", _))
      val props = entry.putObject("properties")
      blob.properties.foreach { case (k, v) => props.put(k, v) }
      if (blob.`type` == Puffin.DvBlobType) {
        val recorded = blob.property(Puffin.Cardinality).filter(r => r.nonEmpty && r.forall(_.isDigit)).flatMap(_.toLongOption)
        val dv = Puffin.readDeletionVector(data, blob.offset, blob.length, path, recorded)
        blob.property(Puffin.ReferencedDataFile).fold(entry.putNull("referenced_data_file"))(entry.put("referenced_data_file", _))
        entry.put("cardinality", dv.cardinality)
        putRowSet(entry, dv)
      }
    }
  }

  private def describeDeltaDvFile(node: ObjectNode, path: String, data: Array[Byte]): Unit = {
    node.put("format", "delta-dv").put("file_size", data.length).put("version", 1)
    val vectors = node.putArray("vectors")
    DeletionVectorFile.scan(data, path).foreach { case (offset, dv) => // the size fields were checked by the scan
      val entry = vectors.addObject().put("offset", offset).put("length", ByteReader.i32BE(data, offset) + 8)
        .put("size_in_bytes", ByteReader.i32BE(data, offset)).put("cardinality", dv.cardinality)
      putRowSet(entry, dv)
    }
  }

  /** The summary of one file; `options` is the JSON of Python's `InspectOptions` (`types`,
    * `query` for file indexes; `terms`, `prefix`, `doc` for zap segments). */
  def describe(path: String, format: String, options: String): String = {
    val opts = mapper.readTree(options)
    val types = opts.path("types").properties.asScala.map(e => e.getKey -> e.getValue.asText).toMap
    val query = Option(opts.get("query")).filterNot(_.isNull).map(_.asText)
    val prefix = Option(opts.get("prefix")).filterNot(_.isNull).map(_.asText)
    val doc = Option(opts.get("doc")).filterNot(_.isNull).map(_.asInt)
    val data =
      try Files.readAllBytes(Paths.get(path))
      catch { case e: java.io.IOException => throw new java.io.IOException(s"$path: cannot read (${e.getClass.getSimpleName})") }
    val node = mapper.createObjectNode().put("file", path)
    (if (format.isEmpty) detect(path, data) else format) match {
      case "dv" =>
        val dv = DeletionVector.deserialize(data, source = path)
        node.put("format", "dv").put("file_size", data.length).put("index_meta_length", dv.indexMetaLength)
        putDv(node, dv)
      case "dv-file" =>
        node.put("format", "dv-file").put("file_size", data.length).put("version", 1)
        val vectors = node.putArray("vectors")
        DeletionFile.scan(data, path).foreach { case (offset, dv) =>
          putDv(vectors.addObject().put("offset", offset).put("length", dv.indexMetaLength), dv)
        }
      case "puffin"   => describePuffin(node, path, data)
      case "delta-dv" => describeDeltaDvFile(node, path, data)
      case "hash" =>
        val hashes = HashIndex.decode(data, path)
        node.put("format", "hash").put("file_size", data.length).put("count", hashes.length)
          .put("distinct", hashes.distinct.length)
        if (hashes.isEmpty) node.putNull("min").putNull("max") else node.put("min", hashes.min).put("max", hashes.max)
      case "zap" => ZapInspect.describe(node, path, opts.path("terms").asBoolean, prefix, doc)
      case "file-index" => FileIndexInspect.describeContainer(node, path, data, types, query)
      case raw if FileIndexInspect.RawFormats(raw) => FileIndexInspect.describeRaw(node, path, data, raw, types.get(""), query)
      case other => throw new IllegalArgumentException(s"unknown format $other")
    }
    mapper.writeValueAsString(node)
  }
}
