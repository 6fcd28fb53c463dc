package io.indexbridge.paimon

import java.nio.{ByteBuffer, ByteOrder}
import java.util.zip.CRC32

import scala.collection.mutable.ArrayBuffer

import io.indexbridge.IndexFormatException
import io.indexbridge.roaring.Roaring32
import org.roaringbitmap.RoaringBitmap
import org.scalacheck.Gen
import org.scalatest.funsuite.AnyFunSuite
import org.scalatestplus.scalacheck.ScalaCheckPropertyChecks

class DeletionVectorSpec extends AnyFunSuite with ScalaCheckPropertyChecks {
  implicit override val generatorDrivenConfig: PropertyCheckConfiguration = PropertyCheckConfiguration(minSuccessful = io.indexbridge.Depth.checks(100))

  private def dvOf(set: Set[Long], bitmap64: Boolean) = {
    val dv = DeletionVector.empty(bitmap64)
    set.foreach(dv.delete)
    dv
  }

  for (bitmap64 <- Seq(false, true)) {
    val width = if (bitmap64) "64-bit" else "32-bit"

    test(s"$width: behaves like a Set[Long]") {
      forAll(DvGen.positions(bitmap64), DvGen.probes(bitmap64)) { (set, probes) =>
        val dv = dvOf(set, bitmap64)
        val sorted = set.toSeq.sorted
        assert(dv.bitmap64 == bitmap64)
        assert(dv.cardinality == set.size)
        assert(dv.positions.toSeq == sorted)
        val visited = ArrayBuffer.empty[Long]
        dv.foreachPosition(visited += _)
        assert(visited == sorted)
        for (p <- probes ++ set.take(200)) assert(dv.isDeleted(p) == set(p), p)
      }
    }

    test(s"$width: positions in any order, added in batches, serialize as delete of each, into a new DV or one read back") {
      // batches below a container's last value go into array containers as their in-place union
      implicit val whole: org.scalacheck.Shrink[Set[Long]] = org.scalacheck.Shrink.shrinkAny // (shrinking sets this size takes minutes)
      forAll(DvGen.positions(bitmap64), DvGen.positions(bitmap64), Gen.long, Gen.choose(1, 300)) { (first, second, seed, chunk) =>
        val random = new scala.util.Random(seed)
        def inBatches(dv: DeletionVector, set: Set[Long]): DeletionVector = {
          for (batch <- random.shuffle(set.toVector).grouped(chunk)) {
            if (bitmap64 || random.nextBoolean()) dv.deleteAll(batch.toArray ++ Array(-1L), batch.length) // (only count are read)
            else dv.deleteAll32(batch.map(_.toInt).toArray, batch.length)
          }
          dv
        }
        val readBack = () => DeletionVector.deserialize(dvOf(first, bitmap64).serialize()) // (run containers)
        val oneByOne = readBack()
        second.foreach(oneByOne.delete)
        assert(inBatches(inBatches(DeletionVector.empty(bitmap64), first), second).serialize().sameElements(dvOf(first ++ second, bitmap64).serialize()))
        assert(inBatches(readBack(), second).serialize().sameElements(oneByOne.serialize()))
      }
    }

    test(s"$width: serialize and deserialize round trip") {
      forAll(DvGen.positions(bitmap64)) { set =>
        val dv = dvOf(set, bitmap64)
        val bytes = dv.serialize()
        assert(bytes.length == dv.serializedSize)
        val size = ByteBuffer.wrap(bytes).getInt(0)
        assert(size == bytes.length - 8)
        assert(dv.indexMetaLength == (if (bitmap64) bytes.length else size))
        val back = DeletionVector.deserialize(bytes, expectedLength = dv.indexMetaLength)
        assert(back == dv && back.hashCode == dv.hashCode)
        assert(back.positions.toSeq == set.toSeq.sorted)
        assert(back.serialize().sameElements(bytes))
        // the same frame inside a larger array, at an offset
        val padded = Array.fill[Byte](7)(9) ++ bytes ++ Array.fill[Byte](5)(9)
        assert(DeletionVector.deserialize(padded, "padded", 7) == dv)
      }
    }

    test(s"$width: merge is set union, and leaves the argument alone") {
      forAll(DvGen.positions(bitmap64), DvGen.positions(bitmap64)) { (a, b) =>
        val (x, y) = (dvOf(a, bitmap64), dvOf(b, bitmap64))
        x.merge(y)
        assert(x.positions.toSeq == (a ++ b).toSeq.sorted)
        assert(y.positions.toSeq == b.toSeq.sorted)
        assert(x.serialize().sameElements(dvOf(a ++ b, bitmap64).serialize()))
      }
    }

    test(s"$width: equality follows the set, not the insertion order or width") {
      forAll(DvGen.positions(bitmap64)) { set =>
        val forward = DeletionVector.fromPositions(set.toArray.sorted, bitmap64)
        val backward = DeletionVector.fromPositions(set.toArray.sorted.reverse, bitmap64)
        assert(forward == backward && forward.hashCode == backward.hashCode)
        assert(forward.serialize().sameElements(backward.serialize()))
        if (set.forall(_ <= Int.MaxValue)) assert(forward != DeletionVector.fromPositions(set.toArray, !bitmap64))
      }
    }

    test(s"$width: positions outside the range are rejected on delete and isDeleted") {
      val max = if (bitmap64) DeletionVector.MaxPosition64 else DeletionVector.MaxPosition32
      val dv = DeletionVector.empty(bitmap64)
      dv.delete(0)
      dv.delete(max)
      assert(dv.isDeleted(max) && !dv.isDeleted(max - 1))
      for (bad <- Seq(-1L, max + 1, Long.MinValue, Long.MaxValue)) {
        val e = intercept[IllegalArgumentException](dv.delete(bad))
        assert(e.getMessage.contains(s"position $bad is outside 0..$max"))
        intercept[IllegalArgumentException](dv.isDeleted(bad))
      }
      assert(dv.cardinality == 2)
    }

    test(s"$width: deleteAll rejects an out-of-range position anywhere in a batch as delete does") {
      val max = if (bitmap64) DeletionVector.MaxPosition64 else DeletionVector.MaxPosition32
      // deleteAll narrows positions 4096 at a time: the bad one first, last, and at the edges of a chunk
      for (bad <- Seq(-1L, max + 1, Long.MinValue, Long.MaxValue); at <- Seq(0, 4095, 4096, 9999)) {
        val positions = Array.tabulate(10000)(_.toLong * 3)
        positions(at) = bad
        val e = intercept[IllegalArgumentException](DeletionVector.fromPositions(positions, bitmap64))
        assert(e.getMessage.contains(s"position $bad is outside 0..$max"), (bad, at))
      }
    }
  }

  test("32-bit: deleteAll32 of the positions as ints serializes as delete of each; it refuses a negative int and a 64-bit DV") {
    forAll(DvGen.positions(bitmap64 = false), DvGen.positions(bitmap64 = false)) { (first, second) =>
      val dv = DeletionVector.empty(false)
      for (batch <- Seq(first, second)) {
        val lows = scala.util.Random.shuffle(batch.toSeq).map(_.toInt).toArray
        dv.deleteAll32(lows ++ Array(0, 0), lows.length) // what follows count is not read
      }
      assert(dv.serialize().sameElements(dvOf(first ++ second, bitmap64 = false).serialize()))
    }
    for (at <- Seq(0, 4095, 9999)) {
      val lows = Array.tabulate(10000)(_ * 3)
      lows(at) = -1
      val e = intercept[IllegalArgumentException](DeletionVector.empty(false).deleteAll32(lows, lows.length))
      assert(e.getMessage.contains("position -1 is outside 0..2147483647"), at)
    }
    intercept[IllegalArgumentException](DeletionVector.empty(true).deleteAll32(Array(1), 1))
  }

  test("a 32-bit frame is size, magic 5e43f2d0, roaring, CRC; the empty one is 20 bytes") {
    val bytes = DeletionVector.empty(false).serialize()
    assert(java.util.HexFormat.of.formatHex(bytes).startsWith("0000000c5e43f2d03a30000000000000"))
    assert(bytes.length == 20)
    val crc = new CRC32
    crc.update(bytes, 4, 12)
    assert(ByteBuffer.wrap(bytes).getInt(16) == crc.getValue.toInt)
  }

  test("a 64-bit frame writes every key up to the largest, empty ones included") {
    val dv = DeletionVector.fromPositions(Array(3L << 32), bitmap64 = true)
    val data = ByteBuffer.wrap(dv.serialize()).order(ByteOrder.LITTLE_ENDIAN)
    assert(data.getInt(4) == DeletionVector.Magic64)
    assert(data.getLong(8) == 4)
    assert(data.getInt(16) == 0 && data.getInt(20) == 12346 && data.getInt(24) == 0)
    assert(dv.serializedSize == 4 + 4 + 8 + 4 * 12 + (18 - 8) + 4) // key 3 holds an 18-byte array bitmap
  }

  test("a sparse 64-bit key list is read without allocating the gaps, and written back dense") {
    def frame(entries: Seq[(Int, RoaringBitmap)]): Array[Byte] = {
      val roarings = entries.map { case (k, bm) => (k, Roaring32.serialize(bm)) }
      val data = ByteBuffer.allocate(4 + 8 + roarings.map(4 + _._2.length).sum).order(ByteOrder.LITTLE_ENDIAN)
      data.putInt(DeletionVector.Magic64).putLong(roarings.length.toLong)
      for ((k, r) <- roarings) data.putInt(k).put(r)
      val crc = new CRC32
      crc.update(data.array())
      ByteBuffer.allocate(data.capacity + 8).putInt(data.capacity).put(data.array()).putInt(crc.getValue.toInt).array()
    }
    val dv = DeletionVector.deserialize(frame(Seq(1 -> RoaringBitmap.bitmapOf(7), 5 -> RoaringBitmap.bitmapOf(9, -1))))
    assert(dv.positions.toSeq == Seq((1L << 32) + 7, (5L << 32) + 9, (5L << 32) + 0xffffffffL))
    val dense = ByteBuffer.wrap(dv.serialize()).order(ByteOrder.LITTLE_ENDIAN)
    assert(dense.getLong(8) == 6)

    // the largest key Paimon allows: read fine, but no writer can emit 2^31-1 dense bitmaps
    val top = DeletionVector.deserialize(frame(Seq((Int.MaxValue - 1) -> RoaringBitmap.bitmapOf(0x80000000))))
    assert(top.positions.toSeq == Seq(DeletionVector.MaxPosition64))
    assert(top.isDeleted(DeletionVector.MaxPosition64))
    assert(intercept[IllegalStateException](top.serializedSize).getMessage.contains("exceeds 2 GiB"))

    val beyond = intercept[IndexFormatException](
      DeletionVector.deserialize(frame(Seq((Int.MaxValue - 1) -> RoaringBitmap.bitmapOf(0x80000001))))
    )
    assert(beyond.getMessage.contains("64-bit deletion vector positions <="))
    val unsorted = intercept[IndexFormatException](
      DeletionVector.deserialize(frame(Seq(3 -> new RoaringBitmap, 3 -> new RoaringBitmap)), "f")
    )
    assert(unsorted.getMessage == "f: offset 28: bitmap keys ascending in 0..2147483646, found 3 after 3")
  }

  test("a 64-bit DV with trailing empty bitmaps keeps Paimon's key count but equals the plain one") {
    val a = DeletionVector.fromPositions(Array(1L), bitmap64 = true)
    val b = DeletionVector.fromPositions(Array(1L, 7L << 32), bitmap64 = true)
    val c = DeletionVector.empty(bitmap64 = true)
    c.merge(b)
    assert(c == b)
    val onlyLow = DeletionVector.empty(bitmap64 = true)
    onlyLow.merge(a)
    assert(onlyLow == a && onlyLow.serialize().sameElements(a.serialize()))
  }

  test("frames that lie are rejected with the offset and what was expected") {
    val good = DeletionVector.fromPositions(Array(1L, 2L, 1000L), bitmap64 = false).serialize()
    def bad(bytes: Array[Byte], expectedLength: Int = -1, verifyCrc: Boolean = true) =
      intercept[IndexFormatException](DeletionVector.deserialize(bytes, "dv", 0, expectedLength, verifyCrc)).getMessage

    assert(bad(good.take(3)) == "dv: offset 0: deletion vector size: need 4 bytes, 3 left")
    assert(bad(good.dropRight(1)).contains("offset 4: deletion vector of 26 bytes and its CRC: need 30 bytes, 29 left"))
    val crc = good.clone()
    crc(crc.length - 1) = (crc(crc.length - 1) ^ 1).toByte
    assert(bad(crc).startsWith("dv: offset 30: CRC-32"))
    assert(DeletionVector.deserialize(crc, verifyCrc = false).positions.toSeq == Seq(1L, 2L, 1000L))
    val magic = good.clone()
    magic(4) = 0
    assert(bad(magic, verifyCrc = false).contains("offset 4: a deletion vector magic number (5e43f2d0 or d1d33964), found 0043f2d0"))
    assert(bad(good, expectedLength = 30).contains("a 32-bit deletion vector of length 30 (index manifest), frame has 26"))
    val tiny = ByteBuffer.allocate(12).putInt(3).array()
    assert(bad(tiny) == "dv: offset 0: a deletion vector size >= 4 (the magic number), found 3")
    // DATA longer than the bitmap in it
    val roaring = Roaring32.serialize(RoaringBitmap.bitmapOf(5))
    val data = ByteBuffer.allocate(4 + roaring.length + 2).putInt(DeletionVector.Magic32).put(roaring).array()
    val crc32 = new CRC32
    crc32.update(data)
    val long = ByteBuffer.allocate(data.length + 8).putInt(data.length).put(data).putInt(crc32.getValue.toInt).array()
    assert(bad(long).contains("end of the deletion vector data (2 bytes after the bitmap)"))
    // 32-bit DVs hold positions < 2^31 only
    val wide = Roaring32.serialize(RoaringBitmap.bitmapOf(-5))
    val wideData = ByteBuffer.allocate(4 + wide.length).putInt(DeletionVector.Magic32).put(wide).array()
    val wideFrame = ByteBuffer.allocate(wideData.length + 8).putInt(wideData.length).put(wideData).putInt(0).array()
    assert(bad(wideFrame, verifyCrc = false).contains("32-bit deletion vector positions <= 2147483647, found 4294967291"))
  }

  test("runs starting just above 2^31 of a key are iterated (RoaringBitmap.forEach skips them)") {
    val positions = ((1L << 32) + 0x80000000L until (1L << 32) + 0x80000000L + 1000).toArray
    val dv = DeletionVector.fromPositions(positions, bitmap64 = true)
    dv.serialize() // run-optimised: one run container
    assert(dv.positions.sameElements(positions))
    assert(DeletionVector.deserialize(dv.serialize()).positions.sameElements(positions))
  }

  test("fromBitmap takes the bitmap as it is") {
    val bm = RoaringBitmap.bitmapOf(1, 5, 70000)
    val dv = DeletionVector.fromBitmap(bm)
    assert(!dv.bitmap64 && dv.positions.toSeq == Seq(1L, 5L, 70000L))
    bm.add(9)
    assert(dv.isDeleted(9))
    intercept[IllegalArgumentException](DeletionVector.fromBitmap(RoaringBitmap.bitmapOf(-1)))
    intercept[IllegalArgumentException](DeletionVector.empty(false).merge(DeletionVector.empty(true)))
  }

  test("serializedSize run-optimises like serialize, so the sizes agree before and after") {
    val dv = DeletionVector.empty(bitmap64 = false)
    (0L until 100000L).foreach(dv.delete)
    assert(dv.serializedSize == 4 + 4 + 25 + 4) // two single-run containers: 25 roaring bytes (§1.1)
    assert(dv.serialize().length == dv.serializedSize)
    dv.delete(200000L)
    assert(dv.serialize().length == dv.serializedSize)
    assert(dv.toString == "DeletionVector(32-bit, cardinality=100001, positions=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, …])")
  }
}
