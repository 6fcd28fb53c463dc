package io.indexbridge.cli

import com.fasterxml.jackson.databind.ObjectMapper
import io.indexbridge.bench.ZapCorpus
import io.indexbridge.conformance.ZapConformance
import io.indexbridge.delta.{DeletionVectorFile, PaimonBridge => DeltaBridge}
import io.indexbridge.iceberg.{Puffin, PaimonBridge => IcebergBridge}
import io.indexbridge.paimon.{DeletionFile, DeletionVector, HashIndex}
import io.indexbridge.zap.{Merge, SegmentReader, SegmentWriter}
import org.roaringbitmap.RoaringBitmap

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.{Files, Path, Paths}
import scala.jdk.CollectionConverters._

/** File-to-file entry points of the Scala codecs for Python's driver (py4j): only paths and
  * short JSON strings cross the bridge, the bulk data goes through files (DESIGN rule 2).
  * The cross-language tests use them to compare the Scala bytes with the Python bytes.
  *
  * Position files are raw little-endian int64 arrays; hash files are the HASH layout (i32 BE). */
object FileCodecs {
  private val mapper = new ObjectMapper()

  private def readLongs(path: String): Array[Long] = {
    val buffer = ByteBuffer.wrap(Files.readAllBytes(Paths.get(path))).order(ByteOrder.LITTLE_ENDIAN)
    Array.fill(buffer.remaining() / 8)(buffer.getLong())
  }

  private def writeLongs(path: String, values: Array[Long]): Unit = {
    val buffer = ByteBuffer.allocate(values.length * 8).order(ByteOrder.LITTLE_ENDIAN)
    values.foreach(buffer.putLong)
    Files.write(Paths.get(path), buffer.array())
  }

  /** Positions file → one DV frame (`DeletionVector.serializeToBytes`). */
  def encodeDeletionVector(positionsPath: String, bitmap64: Boolean, outPath: String): Unit =
    Files.write(Paths.get(outPath), DeletionVector.fromPositions(readLongs(positionsPath), bitmap64).serialize())

  /** DV frame file → its positions (ascending) as a positions file; returns the cardinality. */
  def decodeDeletionVector(framePath: String, outPositionsPath: String): Long = {
    val dv = DeletionVector.deserialize(Files.readAllBytes(Paths.get(framePath)), source = framePath)
    writeLongs(outPositionsPath, dv.positions)
    dv.cardinality
  }

  /** `[{"data_file": name, "positions": path}, ...]` → deletion files in `outDir` named
    * `deletion-<n>`, in Java HashMap order (or the given order), rolling at `targetSize` (< 0: one
    * file). Returns `[{"file_name", "file_size", "row_count", "ranges": [[data_file, offset, length, cardinality]]}]`. */
  def encodeDeletionFiles(inputJson: String, bitmap64: Boolean, targetSize: Long, hashMapOrder: Boolean, outDir: String): String = {
    val entries = mapper.readTree(inputJson).elements().asScala.map { e =>
      e.get("data_file").asText() -> DeletionVector.fromPositions(readLongs(e.get("positions").asText()), bitmap64)
    }.toSeq
    val metas = DeletionFile.write(Paths.get(outDir), entries, targetSize, hashMapOrder, n => s"deletion-$n")
    val out = mapper.createArrayNode()
    metas.foreach { m =>
      val node = out.addObject().put("file_name", m.fileName).put("file_size", m.fileSize).put("row_count", m.rowCount)
      val ranges = node.putArray("ranges")
      m.ranges.foreach(r => ranges.addArray().add(r.dataFile).add(r.offset).add(r.length).add(r.cardinality))
    }
    mapper.writeValueAsString(out)
  }

  private def dvEntries(inputJson: String): Seq[(String, DeletionVector)] =
    mapper.readTree(inputJson).elements().asScala.map { e =>
      e.get("data_file").asText() -> DeletionVector.fromPositions(readLongs(e.get("positions").asText()), bitmap64 = true)
    }.toSeq

  /** `[{"data_file", "positions": path}, ...]` → a Puffin file of deletion-vector-v1 blobs at
    * `outPath` (Iceberg's HashMap order). Returns Iceberg's DeleteFile fields per blob as JSON
    * (`[{"file_path", "file_size_in_bytes", "content_offset", "content_size_in_bytes",
    * "referenced_data_file", "record_count"}]`). */
  def encodePuffinDeletionVectors(inputJson: String, createdBy: String, outPath: String): String = {
    val out = mapper.createArrayNode()
    Puffin.writeDeletionVectors(Paths.get(outPath), Puffin.dvFrames(dvEntries(inputJson)), createdBy).foreach { d =>
      out.addObject().put("file_path", d.filePath).put("file_size_in_bytes", d.fileSizeInBytes).put("content_offset", d.contentOffset)
        .put("content_size_in_bytes", d.contentSizeInBytes).put("referenced_data_file", d.referencedDataFile).put("record_count", d.recordCount)
    }
    mapper.writeValueAsString(out)
  }

  /** Every deletion-vector-v1 blob of a Puffin file → `outDir/<n>` positions files; returns
    * `[{"referenced_data_file", "cardinality", "positions": path}]`. */
  def decodePuffinDeletionVectors(puffinPath: String, outDir: String): String = {
    val out = mapper.createArrayNode()
    Puffin.readDeletionVectors(Paths.get(puffinPath)).zipWithIndex.foreach { case ((blob, dv), n) =>
      val positions = Paths.get(outDir, n.toString).toString
      writeLongs(positions, dv.positions)
      out.addObject().put("referenced_data_file", blob.property(Puffin.ReferencedDataFile).get).put("cardinality", dv.cardinality)
        .put("positions", positions)
    }
    mapper.writeValueAsString(out)
  }

  /** `[{"data_file", "positions": path}, ...]` → one Delta DV file under `tableDir` (frames in the
    * given order, in the subdirectory `randomPrefix`, named after `uuid`). Returns
    * `[{"data_file", "deletionVector": descriptor}]`. */
  def encodeDeltaDvFile(inputJson: String, tableDir: String, randomPrefix: String, uuid: String): String = {
    val frames = dvEntries(inputJson).map { case (name, dv) => DeletionVectorFile.DvFrame(name, dv.serialize(), dv.cardinality) }
    val out = mapper.createArrayNode()
    DeletionVectorFile.write(Paths.get(tableDir), frames, randomPrefix, java.util.UUID.fromString(uuid)).foreach { case (name, d) =>
      out.addObject().put("data_file", name).set[com.fasterxml.jackson.databind.JsonNode]("deletionVector", d.toJson)
    }
    mapper.writeValueAsString(out)
  }

  /** The DV a descriptor (JSON, as in the log) stands for in the table `tableDir` → its positions
    * at `outPositionsPath`; returns the cardinality. */
  def decodeDeltaDeletionVector(descriptorJson: String, tableDir: String, outPositionsPath: String): Long = {
    val descriptor = DeletionVectorFile.fromJson(mapper.readTree(descriptorJson))
    val (_, dv) = DeletionVectorFile.readFrameOf(descriptor, Paths.get(tableDir))
    writeLongs(outPositionsPath, dv.positions)
    dv.cardinality
  }

  /** What `indexbridge iceberg dv-from-paimon` writes, through the Scala bridge (no Spark):
    * `outDir/<deletion file>.puffin`; returns the jsonl rows as a JSON list. */
  def paimonToIceberg(tableDir: String, outDir: String): String = {
    val out = mapper.createArrayNode()
    for (file <- IcebergBridge.deletionFiles(tableDir); (name, d) <- IcebergBridge.writePuffin(file, outDir))
      out.addObject().put("data_file", name).put("file_path", d.filePath).put("file_size_in_bytes", d.fileSizeInBytes)
        .put("content_offset", d.contentOffset).put("content_size_in_bytes", d.contentSizeInBytes)
        .put("referenced_data_file", d.referencedDataFile).put("record_count", d.recordCount)
    mapper.writeValueAsString(out)
  }

  /** What `indexbridge delta dv-from-paimon --storage STORAGE` writes, through the Scala bridge. */
  def paimonToDelta(tableDir: String, outDir: String, storage: String): String = {
    val out = mapper.createArrayNode()
    for (file <- IcebergBridge.deletionFiles(tableDir); (name, d) <- DeltaBridge.writeDelta(file, Paths.get(outDir), storage))
      out.addObject().put("data_file", name).set[com.fasterxml.jackson.databind.JsonNode]("deletionVector", d.toJson)
    mapper.writeValueAsString(out)
  }

  /** HASH file of key hashes in add order → the HASH file Paimon writes (its IntHashSet order). */
  def encodeHashIndex(addOrderPath: String, outPath: String): Unit = {
    val path: Path = Paths.get(addOrderPath)
    Files.write(Paths.get(outPath), HashIndex.encodePaimon(HashIndex.decode(Files.readAllBytes(path), addOrderPath)))
  }

  /** Raw-document corpus (python/indexbridge/zap/corpus.py's JSON) → the zap segment of its analysed documents. */
  def buildZapSegment(corpusPath: String, outPath: String): Unit =
    SegmentWriter.write(ZapCorpus.read(corpusPath).documents(), Paths.get(outPath))

  /** Analysed documents (a JSON list in the shape of a zap build case's `input`,
    * vectors/zap/README.md) → their zap segment at `chunkFactor`. */
  def buildZapSegmentFromDocuments(documentsPath: String, chunkFactor: Int, outPath: String): Unit =
    SegmentWriter.write(ZapConformance.documents(mapper.readTree(Paths.get(documentsPath).toFile)), Paths.get(outPath), chunkFactor)

  /** [[mergeZapSegments]] at the default chunk factor. */
  def mergeZapSegments(pathsJson: String, dropsJson: String, outPath: String): String =
    mergeZapSegments(pathsJson, dropsJson, SegmentWriter.DefaultChunkFactor, outPath)

  /** Merges the segments at `pathsJson` (a JSON list) minus `dropsJson` (per input, a list of
    * docNums) into `outPath` at `chunkFactor`; returns the new docNum of every old one (-1
    * dropped) as JSON, an empty list per input when no document survives. */
  def mergeZapSegments(pathsJson: String, dropsJson: String, chunkFactor: Int, outPath: String): String = {
    val readers = mapper.readTree(pathsJson).asScala.map(p => SegmentReader.open(Paths.get(p.asText))).toIndexedSeq
    val drops = mapper.readTree(dropsJson).asScala.map(d => RoaringBitmap.bitmapOf(d.asScala.map(_.asInt).toSeq: _*)).toIndexedSeq
    val out = mapper.createArrayNode()
    Merge.mergeTo(readers, drops, Paths.get(outPath), chunkFactor).foreach { nums =>
      val row = out.addArray()
      nums.foreach(n => row.add(n))
    }
    mapper.writeValueAsString(out)
  }
}
