package io.indexbridge.paimon

import java.nio.file.Files

import scala.jdk.CollectionConverters._

import io.indexbridge.IndexFormatException
import org.scalatest.funsuite.AnyFunSuite

class DeletionFileSpec extends AnyFunSuite {
  private def dv(bitmap64: Boolean, positions: Long*) = DeletionVector.fromPositions(positions.toArray, bitmap64)

  private val dvs = Seq(
    "a.parquet" -> dv(false, 0),
    "b.parquet" -> dv(false),
    "c.orc" -> dv(false, (10L until 20L): _*),
    "d.parquet" -> dv(false, (0L until 5000L): _*)
  )

  test("writeSingleFile of nothing is the version byte; writeWithRolling of nothing is no file") {
    val single = DeletionFile.encode(Nil)
    assert(single.length == 1 && single.head._1.sameElements(Array[Byte](1)) && single.head._2.isEmpty)
    assert(DeletionFile.encode(Nil, targetSize = 100).isEmpty)
  }

  test("frames follow each other after the version byte; ranges point at them") {
    val Seq((bytes, ranges)) = DeletionFile.encode(dvs, hashMapOrder = false)
    assert(bytes(0) == 1)
    assert(ranges.map(_.dataFile) == dvs.map(_._1))
    assert(ranges.head.offset == 1)
    var offset = 1
    for ((range, (name, v)) <- ranges.zip(dvs)) {
      assert(range == DeletionVectorRange(name, offset, v.indexMetaLength, v.cardinality))
      offset += v.serializedSize
    }
    assert(offset == bytes.length)
    assert(DeletionFile.read(bytes, ranges, "f") == dvs)
    assert(DeletionFile.scan(bytes, "f") == ranges.map(_.offset).zip(dvs.map(_._2)))
  }

  test("HashMap order is computed by the writer") {
    val names = dvs.map(_._1)
    val expected = {
      val m = new java.util.HashMap[String, Integer]()
      names.foreach(m.put(_, 0))
      m.keySet.asScala.toList
    }
    assert(DeletionFile.order(names) == expected)
    val Seq((_, ranges)) = DeletionFile.encode(dvs)
    assert(ranges.map(_.dataFile) == expected)
  }

  test("rolling closes a file once it exceeds the target, version byte included") {
    val sizes = dvs.map(_._2.serializedSize)
    // a target of 0: one DV per file
    assert(DeletionFile.encode(dvs, targetSize = 0, hashMapOrder = false).map(_._2.map(_.dataFile)) == dvs.map(d => Seq(d._1)))
    // a target of exactly the first two frames: the file is not yet "exceeding", so the third joins
    val target = 1L + sizes(0) + sizes(1)
    val files = DeletionFile.encode(dvs, targetSize = target, hashMapOrder = false)
    assert(files.map(_._2.map(_.dataFile)) == Seq(Seq("a.parquet", "b.parquet", "c.orc"), Seq("d.parquet")))
    for ((bytes, ranges) <- files) {
      assert(bytes(0) == 1 && ranges.head.offset == 1)
      assert(DeletionFile.read(bytes, ranges, "f").map(_._1) == ranges.map(_.dataFile))
    }
    assert(DeletionFile.encode(dvs, targetSize = Long.MaxValue, hashMapOrder = false).length == 1)
  }

  test("duplicate data files are refused") {
    intercept[IllegalArgumentException](DeletionFile.encode(dvs :+ ("a.parquet" -> dv(false, 1))))
  }

  test("readers check the version, the offsets, the recorded length and cardinality") {
    val Seq((bytes, ranges)) = DeletionFile.encode(dvs, hashMapOrder = false)
    def bad(b: Array[Byte], r: Seq[DeletionVectorRange]) = intercept[IndexFormatException](DeletionFile.read(b, r, "f")).getMessage
    assert(bad(Array.emptyByteArray, ranges) == "f: offset 0: deletion file version: need 1 bytes, 0 left")
    assert(bad(2.toByte +: bytes.drop(1), ranges) == "f: offset 0: deletion file version 1, found 2")
    assert(bad(bytes, Seq(ranges(0).copy(offset = 0))).contains("offset 0: a deletion vector offset >= 1"))
    assert(bad(bytes, Seq(ranges(0).copy(offset = bytes.length + 3))).startsWith(s"f: offset ${bytes.length + 3}: a range inside"))
    assert(bad(bytes, Seq(ranges(2).copy(length = 5))).contains("of length 5 (index manifest), frame has"))
    assert(bad(bytes, Seq(ranges(2).copy(cardinality = 3))).contains("3 deleted positions for c.orc (index manifest), frame holds 10"))
    assert(DeletionFile.read(bytes, Seq(ranges(2).copy(cardinality = -1)), "f").head._2.cardinality == 10)
    assert(intercept[IndexFormatException](DeletionFile.scan(bytes.dropRight(2), "f")).getMessage.contains("left"))
  }

  test("write puts each file in place atomically and returns its manifest entry") {
    val dir = Files.createTempDirectory("ib-dvfile")
    val metas = DeletionFile.write(dir, dvs, targetSize = 0, hashMapOrder = false, fileName = n => s"index-test-$n")
    assert(metas.map(_.fileName) == (0 until 4).map(n => s"index-test-$n"))
    assert(Files.list(dir).iterator.asScala.map(_.getFileName.toString).toList.sorted == metas.map(_.fileName))
    for ((meta, (bytes, ranges)) <- metas.zip(DeletionFile.encode(dvs, 0, hashMapOrder = false))) {
      val written = Files.readAllBytes(dir.resolve(meta.fileName))
      assert(written.sameElements(bytes))
      assert(meta == DeletionFileMeta(meta.fileName, bytes.length.toLong, 1, ranges))
    }
    val defaultName = DeletionFile.write(dir, dvs).head.fileName
    assert(defaultName.matches("index-[0-9a-f-]{36}-0"), defaultName)
  }

  test("a failed write leaves nothing behind") {
    val dir = Files.createTempDirectory("ib-dvfile")
    // the third file cannot be moved into place: the first two were, and must go again
    intercept[java.nio.file.NoSuchFileException](
      DeletionFile.write(dir, dvs, targetSize = 0, hashMapOrder = false, fileName = n => if (n == 2) "missing/x" else s"f$n")
    )
    assert(Files.list(dir).count() == 0)
    intercept[RuntimeException](
      DeletionFile.write(dir, dvs, fileName = _ => throw new RuntimeException("no name"))
    )
    assert(Files.list(dir).count() == 0)
  }
}
