package io.indexbridge.lakehouse

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import io.indexbridge.IndexFormatException
import io.indexbridge.iceberg.Puffin
import io.indexbridge.paimon.DeletionVector
import org.apache.iceberg.{FileFormat, FileMetadata, IcebergBuild, PartitionSpec, Files => IcebergFiles, DeleteFile => IcebergDeleteFile}
import org.apache.iceberg.data.BaseDeleteLoader
import org.apache.iceberg.deletes.BaseDVFileWriter
import org.apache.iceberg.puffin.{Blob => IcebergBlob, Puffin => IcebergPuffin, PuffinCompressionCodec}
import org.scalatest.funsuite.AnyFunSuite

/** io.indexbridge.iceberg.Puffin against Iceberg 1.11's own classes: `BaseDVFileWriter` writes
  * the reference bytes, `BaseDeleteLoader` and `PuffinReader` read ours, Iceberg's `PuffinWriter`
  * writes the compressed blobs our reader reads. */
class PuffinSpec extends AnyFunSuite {
  private val dir = Files.createTempDirectory("puffin-spec")
  private val createdBy = IcebergBuild.fullVersion()

  private def icebergDeleteFile(d: Puffin.DeleteFile): IcebergDeleteFile =
    FileMetadata.deleteFileBuilder(PartitionSpec.unpartitioned()).ofPositionDeletes().withFormat(FileFormat.PUFFIN)
      .withPath(d.filePath).withFileSizeInBytes(d.fileSizeInBytes).withContentOffset(d.contentOffset)
      .withContentSizeInBytes(d.contentSizeInBytes).withReferencedDataFile(d.referencedDataFile).withRecordCount(d.recordCount).build()

  /** Iceberg's writer over the DVs, positions deleted file by file in the given order. */
  private def icebergWrites(path: Path, dvs: Seq[(String, DeletionVector)]): Seq[IcebergDeleteFile] = {
    val writer = new BaseDVFileWriter(() => IcebergFiles.localOutput(path.toFile), (_: String) => null)
    try dvs.foreach { case (name, dv) => dv.foreachPosition(p => writer.delete(name, p, PartitionSpec.unpartitioned(), null)) }
    finally writer.close()
    writer.result().deleteFiles().asScala.toSeq
  }

  for (seed <- 0 until 14) test(s"our Puffin bytes equal BaseDVFileWriter's, and Iceberg reads ours (seed $seed)") {
    val dvs = LakehouseGen.dvs(seed, Seq(1, 3, 12, 13, 25, 7, 30)(seed % 7))
    val theirs = dir.resolve(s"iceberg-$seed.puffin")
    val icebergFiles = icebergWrites(theirs, dvs)
    val ours = dir.resolve(s"ours-$seed.puffin")
    val written = Puffin.writeDeletionVectors(ours, Puffin.dvFrames(dvs), createdBy)
    assert(Files.readAllBytes(ours).sameElements(Files.readAllBytes(theirs)), "bytes differ from Iceberg's")
    // the manifest fields equal Iceberg's DeleteFiles (but for the file's location)
    val byRef = icebergFiles.map(f => f.referencedDataFile() -> f).toMap
    assert(written.map(_.referencedDataFile).toSet == byRef.keySet)
    for (d <- written) {
      val f = byRef(d.referencedDataFile)
      assert((d.contentOffset, d.contentSizeInBytes, d.recordCount, d.fileSizeInBytes) ==
        (f.contentOffset().longValue, f.contentSizeInBytes().longValue, f.recordCount(), f.fileSizeInBytes()))
    }
    // Iceberg's delete loader reads each DV at the offsets we report
    val loader = new BaseDeleteLoader((f: IcebergDeleteFile) => IcebergFiles.localInput(f.location()))
    val expected = dvs.toMap
    for (d <- written) {
      val index = loader.loadPositionDeletes(Seq(icebergDeleteFile(d)).asJava, d.referencedDataFile)
      val dv = expected(d.referencedDataFile)
      // (membership, not PositionDeleteIndex.forEach: RoaringBitmap 1.3.0's forEach skips runs
      // starting above 2^31 within a key, see DeletionVector.foreachPosition)
      assert(index.cardinality() == dv.cardinality)
      dv.foreachPosition(p => assert(index.isDeleted(p), s"position $p of ${d.referencedDataFile}"))
    }
    // Iceberg's Puffin reader sees our footer as we wrote it; ours reads Iceberg's file
    val reader = IcebergPuffin.read(IcebergFiles.localInput(ours.toFile)).build()
    try {
      val blobs = reader.fileMetadata().blobs().asScala
      assert(blobs.map(b => (b.`type`, b.offset, b.length, b.properties.asScala.toMap)) ==
        written.map(d => (Puffin.DvBlobType, d.contentOffset, d.contentSizeInBytes,
          Map(Puffin.ReferencedDataFile -> d.referencedDataFile, Puffin.Cardinality -> d.recordCount.toString))))
    } finally reader.close()
    assert(Puffin.readDeletionVectors(theirs).map { case (b, dv) => b.property(Puffin.ReferencedDataFile).get -> dv }.toMap == expected)
  }

  test("our reader reads Iceberg's zstd blobs and skips blob types it does not know") {
    val random = new scala.util.Random(7)
    val path = dir.resolve("zstd.puffin")
    val payloads = Seq.fill(5)(Array.fill(random.nextInt(5000))((random.nextInt(8) + 'a').toByte))
    val writer = IcebergPuffin.write(IcebergFiles.localOutput(path.toFile)).createdBy("spec").set("k", "v")
      .compressBlobs(PuffinCompressionCodec.ZSTD).build()
    try payloads.zipWithIndex.foreach { case (p, i) =>
      writer.add(new IcebergBlob(s"some-type-$i", java.util.List.of(Int.box(i)), i.toLong, 2L * i, ByteBuffer.wrap(p)))
    } finally writer.close()
    val (meta, blobs) = Puffin.read(Files.readAllBytes(path), path.toString)
    assert(meta.properties.toMap == Map("created-by" -> "spec", "k" -> "v"))
    assert(meta.blobs.map(b => (b.`type`, b.fields, b.snapshotId, b.sequenceNumber, b.compressionCodec)) ==
      payloads.indices.map(i => (s"some-type-$i", Seq(i), i.toLong, 2L * i, Some("zstd"))))
    assert(blobs.map(_.toSeq) == payloads.map(_.toSeq))
    assert(Puffin.readDeletionVectors(path).isEmpty) // no DV blobs: all skipped
  }

  test("Iceberg reads our zstd blobs; our LZ4 blobs and LZ4 footer read back") {
    val random = new scala.util.Random(8)
    val payloads = Seq.fill(4)(Array.fill(random.nextInt(3000))((random.nextInt(4) + 'a').toByte))
    val (zstd, _) = Puffin.encode(payloads.map(p => Puffin.Blob("t", Seq(1), p, compressionCodec = Some("zstd"))), Seq("created-by" -> "x"))
    val path = dir.resolve("ours-zstd.puffin")
    Files.write(path, zstd)
    val reader = IcebergPuffin.read(IcebergFiles.localInput(path.toFile)).build()
    try {
      val read = reader.readAll(reader.fileMetadata().blobs()).asScala.map { pair =>
        val b = pair.second(); val a = new Array[Byte](b.remaining()); b.get(a); a.toSeq
      }
      assert(read.toSeq == payloads.map(_.toSeq))
    } finally reader.close()
    val (lz4, _) = Puffin.encode(payloads.map(p => Puffin.Blob("t", Seq(1), p, compressionCodec = Some("lz4"))), Nil, compressFooter = true)
    val (meta, blobs) = Puffin.read(lz4, "lz4")
    assert(meta.footerCompressed && blobs.map(_.toSeq) == payloads.map(_.toSeq))
  }

  // ---------------------------------------------------------------------------------------------
  // Damage: one IndexFormatException naming the file and the offset; Iceberg rejects it too

  private lazy val sample: (Array[Byte], Seq[Puffin.DeleteFile]) = {
    val path = dir.resolve("sample.puffin")
    val written = Puffin.writeDeletionVectors(path, Puffin.dvFrames(LakehouseGen.dvs(99, 4)), createdBy)
    (Files.readAllBytes(path), written)
  }

  private def rejected(data: Array[Byte], offset: Long, expected: String): Unit = {
    val e = intercept[IndexFormatException](Puffin.readDeletionVectors(data, "damaged.puffin"))
    assert(e.source == "damaged.puffin" && e.offset == offset, e.getMessage)
    assert(e.expected.contains(expected), e.getMessage)
  }

  private def withFooter(data: Array[Byte], blobs: Seq[Puffin.BlobMetadata]): Array[Byte] = {
    val meta = Puffin.readFileMetadata(data)
    val json = Puffin.footerJson(blobs, meta.properties)
    val out = ByteBuffer.allocate(meta.footerOffset.toInt + 4 + json.length + 12).order(ByteOrder.LITTLE_ENDIAN)
    out.put(data, 0, meta.footerOffset.toInt).put(Puffin.Magic).put(json).putInt(json.length).putInt(0).put(Puffin.Magic)
    out.array
  }

  test("a flipped CRC byte is rejected at the CRC, as Iceberg's loader rejects it") {
    val (data, written) = sample
    for (d <- written) {
      val damaged = data.clone()
      val crcAt = d.contentOffset + d.contentSizeInBytes - 4
      damaged(crcAt.toInt) = (damaged(crcAt.toInt) ^ 0x10).toByte
      rejected(damaged, crcAt, "CRC-32")
      val path = dir.resolve("crc.puffin")
      Files.write(path, damaged)
      val loader = new BaseDeleteLoader((_: IcebergDeleteFile) => IcebergFiles.localInput(path.toFile))
      val e = intercept[Exception](loader.loadPositionDeletes(Seq(icebergDeleteFile(d.copy(filePath = path.toString))).asJava, d.referencedDataFile))
      assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).exists(_.getMessage.contains("CRC")), e.toString)
    }
  }

  test("wrong magics, flags and footer sizes are rejected where they are") {
    val (data, _) = sample
    val size = data.length
    def damaged(at: Int, f: Byte => Byte) = { val d = data.clone(); d(at) = f(d(at)); d }
    rejected(damaged(0, b => (b ^ 1).toByte), 0, "Puffin magic")
    rejected(damaged(size - 1, b => (b ^ 1).toByte), size - 4, "footer magic")
    rejected(damaged(size - 8, _ => 2), size - 8, "flags")
    rejected(damaged(size - 6, _ => 1), size - 8, "flags")
    val tooBig = data.clone()
    ByteBuffer.wrap(tooBig).order(ByteOrder.LITTLE_ENDIAN).putInt(size - 12, size)
    rejected(tooBig, size - 12, "footer payload size")
    val meta = Puffin.readFileMetadata(data)
    rejected(damaged(meta.footerOffset.toInt, b => (b ^ 1).toByte), meta.footerOffset, "footer magic")
    rejected(damaged(meta.footerOffset.toInt + 4, _ => ' '.toByte), meta.footerOffset + 4, "JSON")
    rejected(damaged(meta.footerOffset.toInt + 5, _ => 0xff.toByte), meta.footerOffset + 4, "UTF-8 JSON")
    rejected(Array.fill(10)(0.toByte), 0, "at least 20 bytes")
  }

  test("footer offsets outside the file, a wrong length or cardinality are rejected") {
    val (data, written) = sample
    val meta = Puffin.readFileMetadata(data)
    val payloadAt = meta.footerOffset + 4
    val b0 = meta.blobs.head
    rejected(withFooter(data, meta.blobs.updated(0, b0.copy(offset = meta.footerOffset))), payloadAt, "between the magic and the footer")
    rejected(withFooter(data, meta.blobs.updated(0, b0.copy(offset = 2))), payloadAt, "between the magic and the footer")
    rejected(withFooter(data, meta.blobs.updated(0, b0.copy(length = b0.length - 1))), b0.offset, "as recorded")
    val card = b0.properties.map { case (k, v) => if (k == Puffin.Cardinality) k -> (v.toLong + 1).toString else k -> v }
    rejected(withFooter(data, meta.blobs.updated(0, b0.copy(properties = card))), b0.offset, "positions as recorded")
    val noRef = b0.properties.filterNot(_._1 == Puffin.ReferencedDataFile)
    rejected(withFooter(data, meta.blobs.updated(0, b0.copy(properties = noRef))), b0.offset, "referenced-data-file")
    val magic = data.clone()
    magic(written.head.contentOffset.toInt + 4) = 0x5e
    rejected(magic, written.head.contentOffset + 4, "deletion-vector-v1 magic")
  }
}
