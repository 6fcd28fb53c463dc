package io.indexbridge.zap

import org.scalacheck.Gen
import org.scalatest.funsuite.AnyFunSuite
import org.scalatestplus.scalacheck.ScalaCheckPropertyChecks

/** The Go snappy encoder port: it reproduces the blocks Go wrote into every vector segment
  * (stored-field data and docvalue chunks), and any decoder reads what it writes. */
class SnappySpec extends AnyFunSuite with ScalaCheckPropertyChecks {
  implicit override val generatorDrivenConfig: PropertyCheckConfiguration = PropertyCheckConfiguration(minSuccessful = io.indexbridge.Depth.checks(300))

  /** The snappy block of every stored record of a segment. */
  private def blocks(name: String): Seq[Array[Byte]] = {
    val bytes = ZapVectors.zap(name)
    val seg = SegmentReader(bytes, name)
    val out = Seq.newBuilder[Array[Byte]]
    for (d <- 0 until seg.numDocs) {
      val at = seg.recordOffset(d).toInt
      val next = new Array[Int](1)
      val metaLen = io.indexbridge.bytes.Uvarint.decode(bytes, at, bytes.length, next)
      val p1 = next(0)
      val dataLen = io.indexbridge.bytes.Uvarint.decode(bytes, p1, bytes.length, next)
      val metaStart = next(0)
      val idLen = io.indexbridge.bytes.Uvarint.decode(bytes, metaStart, bytes.length, next)
      val blockAt = (metaStart + metaLen + idLen).toInt
      out += java.util.Arrays.copyOfRange(bytes, blockAt, (metaStart + metaLen + dataLen).toInt)
    }
    out.result()
  }

  for (name <- ZapVectors.segmentNames) test(s"Go's stored blocks of $name re-encode to the same bytes") {
    val bytes = ZapVectors.zap(name)
    val seg = SegmentReader(bytes, name)
    var checked = 0
    for (block <- blocks(name)) {
      val plain = Snappy.decode(block, 0, block.length, name, 0L)
      assert(Snappy.encode(plain).toSeq == block.toSeq)
      checked += 1
    }
    assert(checked == seg.numDocs)
  }

  test("docvalue chunks of the vectors re-encode to Go's bytes") {
    for (name <- Seq("docvalues", "many_docs_chunks", "long_field", "chunk_factor_4")) {
      val bytes = ZapVectors.zap(name)
      val seg = SegmentReader(bytes, name)
      for (f <- seg.fields; (start, _) <- f.docValues) {
        // re-writing the whole section from its decoded values must give the same bytes
        val section = seg.docValues(f.id).get
        val b = new DocValuesBuilder
        section.foreach((d, v) => b.add(d, v, 0, v.length))
        val out = new io.indexbridge.bytes.ByteSink()
        b.write(out, seg.chunkFactor, section.numChunks)
        assert(out.toArray.toSeq == bytes.slice(start.toInt, start.toInt + out.size).toSeq, s"$name ${f.name}")
      }
    }
  }

  private val payload: Gen[Array[Byte]] = Gen.oneOf(
    Gen.listOf(Gen.choose(-128, 127).map(_.toByte)).map(_.toArray),
    Gen.listOf(Gen.oneOf("abcab".getBytes.toSeq)).map(_.toArray),
    Gen.zip(Gen.choose(1, 200000), Gen.choose(1, 40)).map { case (n, period) => Array.tabulate(n)(i => ((i % period) * 7).toByte) }
  )

  test("round trip through snappy-java, and snappy-java's output decodes alike") {
    forAll(payload) { p =>
      val enc = Snappy.encode(p)
      assert(Snappy.decode(enc, 0, enc.length, "t", 0L).toSeq == p.toSeq)
      assert(org.xerial.snappy.Snappy.uncompress(enc).toSeq == p.toSeq)
      val theirs = org.xerial.snappy.Snappy.compress(p)
      assert(Snappy.decode(theirs, 0, theirs.length, "t", 0L).toSeq == p.toSeq)
    }
  }

  test("empty input is the single byte 00; a lying length is refused before allocating") {
    assert(Snappy.encode(Array.emptyByteArray).toSeq == Seq[Byte](0))
    val lying = Array[Byte](-1, -1, -1, -1, 7, 0, 'a')
    assertThrows[io.indexbridge.IndexFormatException](Snappy.decode(lying, 0, lying.length, "t", 0L))
  }
}
