package io.indexbridge.paimon

import java.nio.{ByteBuffer, ByteOrder}

import io.indexbridge.IndexFormatException
import io.indexbridge.bytes.ByteReader
import io.indexbridge.roaring.Roaring32
import org.roaringbitmap.RoaringBitmap
import org.scalacheck.Gen
import org.scalatest.funsuite.AnyFunSuite
import org.scalatestplus.scalacheck.ScalaCheckPropertyChecks

class Roaring32Spec extends AnyFunSuite with ScalaCheckPropertyChecks {
  private def bitmapOf(values: Iterable[Long]): RoaringBitmap = {
    val bm = new RoaringBitmap
    values.foreach(v => bm.add(v.toInt))
    bm
  }

  private def le(size: Int) = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN)

  private def read(bytes: Array[Byte], checkContents: Boolean = true) =
    Roaring32.read(ByteReader(bytes, "r"), checkContents)

  private def bad(bytes: Array[Byte], checkContents: Boolean = true): String =
    intercept[IndexFormatException](read(bytes, checkContents)).getMessage

  test("serialize is runOptimize + the portable bytes; read gives the set back and stops at its end") {
    forAll(DvGen.positions(bitmap64 = false), Gen.choose(0, 5)) { (set, padding) =>
      val bytes = Roaring32.serialize(bitmapOf(set))
      val expected = bitmapOf(set)
      expected.runOptimize()
      assert(bytes.length == expected.serializedSizeInBytes)
      val twice = bytes ++ bytes ++ Array.fill[Byte](padding)(7)
      val reader = ByteReader(twice, "r")
      assert(Roaring32.read(reader) == expected)
      assert(reader.pos == bytes.length)
      assert(Roaring32.read(reader, checkContents = false) == expected)
      assert(reader.remaining == padding)
    }
  }

  test("the empty bitmap is 8 bytes") {
    assert(java.util.HexFormat.of.formatHex(Roaring32.serialize(new RoaringBitmap)) == "3a30000000000000")
    assert(read(Roaring32.serialize(new RoaringBitmap)).isEmpty)
  }

  test("header errors name the offset and what was expected") {
    assert(bad(Array[Byte](0x3a, 0x30)) == "r: offset 0: roaring cookie: need 4 bytes, 2 left")
    assert(bad(le(8).putInt(12345).array()) == "r: offset 0: a roaring cookie (12346, or 12347 with a container count), found 12345")
    assert(bad(le(8).putInt(12346).putInt(65537).array()) == "r: offset 4: a roaring container count in 0..65536, found 65537")
    assert(bad(le(8).putInt(12346).putInt(-1).array()) == "r: offset 4: a roaring container count in 0..65536, found 4294967295")
    assert(bad(le(12).putInt(12346).putInt(65536).array()) == "r: offset 8: descriptive header of 65536 containers: need 262144 bytes, 4 left")
    assert(bad(le(4).putInt(12347 | (65535 << 16)).array()) == "r: offset 4: run flags of 65536 containers: need 8192 bytes, 0 left")
    // two containers with the same key
    val keys = le(8 + 8 + 8 + 4).putInt(12346).putInt(2).putShort(5).putShort(0).putShort(5).putShort(0).putInt(24).putInt(26)
    assert(bad(keys.putShort(1).putShort(2).array()) == "r: offset 12: container keys in strictly ascending order, found 5 after 5")
    // an offset pointing elsewhere
    val offsets = le(8 + 4 + 4 + 2).putInt(12346).putInt(1).putShort(0).putShort(0).putInt(17).putShort(9)
    assert(bad(offsets.array()) == "r: offset 12: offset 16 for container 0 (where it starts), found 17")
    // an array container longer than the input
    val short = le(8 + 4 + 4 + 2).putInt(12346).putInt(1).putShort(0).putShort(4).putInt(16).putShort(9)
    assert(bad(short.array()) == "r: offset 16: array container of 5 values: need 10 bytes, 2 left")
  }

  test("contents are checked unless the caller vouches for them") {
    val unsorted = le(8 + 4 + 4 + 4).putInt(12346).putInt(1).putShort(0).putShort(1).putInt(16).putShort(9).putShort(3).array()
    assert(bad(unsorted) == "r: offset 18: array container values in strictly ascending order, found 3 after 9")
    assert(read(unsorted, checkContents = false).getCardinality == 2)

    val bitmap = le(8 + 4 + 4 + 8192).putInt(12346).putInt(1).putShort(0).putShort(4999).putInt(16)
    bitmap.putLong(16, -1L) // 64 bits, header says 5000
    assert(bad(bitmap.array()) == "r: offset 16: a bitmap container holding the 5000 values of the header, found 64")

    def runs(card: Int, rs: (Int, Int)*) = {
      val b = le(4 + 1 + 4 + 2 + 4 * rs.length).putInt(12347).put(1.toByte).putShort(0).putShort((card - 1).toShort).putShort(rs.length.toShort)
      rs.foreach { case (s, l) => b.putShort(s.toShort).putShort(l.toShort) }
      b.array()
    }
    assert(read(runs(15, 0 -> 9, 20 -> 4)).getCardinality == 15)
    assert(bad(runs(16, 0 -> 9, 20 -> 4)) == "r: offset 9: runs covering the 16 values of the header, found 15")
    assert(bad(runs(15, 0 -> 9, 5 -> 4)) == "r: offset 15: runs ascending, disjoint and inside 0..65535, found 5..9 after ..9")
    assert(bad(runs(11, 65530 -> 10)) == "r: offset 11: runs ascending, disjoint and inside 0..65535, found 65530..65540")
    assert(bad(runs(15, 0 -> 9, 20 -> 4).dropRight(1)) == "r: offset 11: runs: need 8 bytes, 7 left")
  }
}
