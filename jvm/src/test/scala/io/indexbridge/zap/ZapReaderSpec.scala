package io.indexbridge.zap

import java.nio.charset.StandardCharsets.UTF_8

import scala.collection.mutable
import scala.util.Random

import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

/** Segments written by [[SegmentWriter]] and by [[Merge]] read back as a brute-force in-memory
  * index of the same generated corpus says they should: terms, postings (docs, freqs, norms,
  * locations), stored fields and docvalues, at random chunk factors. */
class ZapReaderSpec extends AnyFunSuite {
  import ZapReaderSpec.Hit

  private val fieldNames = Vector("body", "title", "tag", "Zeta", "émoji")
  private val vocab = Vector("a", "be", "cat", "dog", "", "t/e", "\u00ff", "zz", "quick", "brown") ++ (0 until 40).map(i => s"w$i")

  /** A random analysed corpus: per doc some fields (repeated instances too), tokens with locations. */
  private def corpus(rnd: Random, n: Int): IndexedSeq[Document] = (0 until n).map { d =>
    val fields = (0 until rnd.nextInt(5)).map { _ =>
      val name = fieldNames(rnd.nextInt(fieldNames.length))
      val tv = name != "tag"
      val index = name != "Zeta" || rnd.nextBoolean()
      val toks = if (!index) IndexedSeq.empty else rnd.shuffle(vocab).take(1 + rnd.nextInt(4)).map { t =>
        val freq = 1 + rnd.nextInt(3)
        val locs = if (tv) (0 until freq).map(i => Location("", 1L + i, i * 3L, i * 3L + 2, if (rnd.nextInt(4) == 0) Array(rnd.nextInt(300).toLong) else Array.emptyLongArray)) else IndexedSeq.empty
        Token(t.getBytes(UTF_8), freq, locs)
      }.sortBy(t => new String(t.term, UTF_8))
      DocField(name, 't'.toByte, s"value $d ${rnd.nextInt(1000)}".getBytes(UTF_8), if (rnd.nextBoolean()) Array(rnd.nextInt(5).toLong) else Array.emptyLongArray,
        FieldOptions(index, store = rnd.nextBoolean(), termVectors = tv, docValues = name == "tag"), toks.map(_.freq).sum, toks)
    }
    Document(s"doc$d", fields :+ Document.idField(s"doc$d".getBytes(UTF_8)))
  }

  /** What a segment of `docs` holds, computed directly (spec §15.2). */
  private def bruteForce(docs: IndexedSeq[Document]) = {
    val postings = mutable.Map.empty[(String, Seq[Byte]), mutable.ArrayBuffer[Hit]]
    for ((doc, d) <- docs.zipWithIndex) {
      val byField = doc.fields.groupBy(_.name)
      for ((name, inst) <- byField) {
        val len = inst.map(_.length).sum
        val norm = java.lang.Float.floatToRawIntBits((1.0 / math.sqrt(len.toDouble)).toFloat)
        val merged = mutable.LinkedHashMap.empty[Seq[Byte], (Int, Seq[(String, Long, Long, Long, Seq[Long])])]
        for (f <- inst; t <- f.tokens) {
          val (fr, ls) = merged.getOrElse(t.term.toSeq, (0, Nil))
          merged(t.term.toSeq) = (fr + t.freq, ls ++ t.locations.map(l => (name, l.pos, l.start, l.end, l.arrayPositions.toSeq)))
        }
        for ((term, (fr, ls)) <- merged) postings.getOrElseUpdate((name, term), mutable.ArrayBuffer.empty) += Hit(d, fr, norm, ls)
      }
    }
    postings
  }

  private def check(seg: SegmentReader, docs: IndexedSeq[Document]): Unit = {
    val expected = bruteForce(docs)
    assert(seg.numDocs == docs.length)
    val names = (docs.flatMap(_.fields.map(_.name)).toSet - "_id").toSeq.sortBy(_.getBytes(UTF_8).toSeq.map(_ & 0xff))(Ordering.Implicits.seqOrdering)
    if (docs.nonEmpty) assert(seg.fields.map(_.name) == "_id" +: names)
    for (f <- seg.fields if docs.nonEmpty) {
      val terms = seg.dictionary(f.id).terms().map { case (t, v) => (t.toSeq, v) }.toVector
      val want = expected.keys.filter(_._1 == f.name).map(_._2).toVector.sortBy(_.map(_ & 0xff))(Ordering.Implicits.seqOrdering)
      assert(terms.map(_._1) == want, f.name)
      for ((t, v) <- terms) {
        val pl = seg.postingsAt(v)
        val hits = (0 until pl.size).map(h => Hit(pl.docs(h), pl.freqs(h), pl.normBits(h),
          pl.locations(h).map(l => (seg.fields(l.fieldId).name, l.pos, l.start, l.end, l.arrayPositions.toSeq))))
        val exp = expected((f.name, t)).toIndexedSeq
        assert(hits == exp.map(h => if (pl.oneHitValue) h.copy(normBits = h.normBits & 0x7fffffff) else h), s"${f.name}/${new String(t.toArray, UTF_8)}")
        assert(seg.dictionary(f.id).value(t.toArray).contains(v))
      }
    }
    for ((doc, d) <- docs.zipWithIndex) {
      val sd = seg.document(d)
      assert(new String(sd.id, UTF_8) == doc.id)
      val want = doc.fields.filter(f => f.options.store && f.name != "_id").sortBy(f => seg.fieldId(f.name))
      assert(sd.values.map(v => (seg.fields(v.fieldId).name, v.value.toSeq, v.arrayPositions.toSeq)) ==
        want.map(f => (f.name, f.value.toSeq, f.arrayPositions.toSeq)))
      val tagTerms = doc.fields.filter(_.name == "tag").flatMap(_.tokens.map(_.term.toSeq)).distinct.sortBy(_.map(_ & 0xff))(Ordering.Implicits.seqOrdering)
      if (seg.fieldId("tag") >= 0 && seg.fields(seg.fieldId("tag")).docValues.isDefined)
        assert(seg.docValueTerms("tag", d).map(_.toSeq) == tagTerms, s"docvalues of $d")
    }
  }

  test("fresh segments agree with a brute-force index at random chunk factors") {
    val rnd = new Random(11)
    for (round <- 0 until 30) {
      val docs = corpus(rnd, rnd.nextInt(60))
      val cf = Seq(1, 2, 3, 7, 16, 1024)(rnd.nextInt(6))
      check(SegmentReader(SegmentWriter.build(docs, cf), s"round $round"), docs)
    }
  }

  test("merged segments agree with a brute-force index of the surviving documents") {
    val rnd = new Random(12)
    for (round <- 0 until 30) {
      val inputs = (0 until 1 + rnd.nextInt(3)).map(_ => corpus(rnd, 1 + rnd.nextInt(30)))
      val segs = inputs.map(d => SegmentReader(SegmentWriter.build(d, Seq(1, 4, 1024)(rnd.nextInt(3)))))
      val drops = inputs.map(d => if (rnd.nextBoolean()) null else RoaringBitmap.bitmapOf(d.indices.filter(_ => rnd.nextInt(4) == 0): _*))
      val cf = Seq(1, 5, 1024)(rnd.nextInt(3))
      val r = Merge.merge(segs, drops, cf)
      val surviving = inputs.zip(drops).flatMap { case (d, dr) => d.indices.filter(i => dr == null || !dr.contains(i)).map(d) }
      val merged = SegmentReader(r.bytes, s"merge $round")
      check(merged, surviving)
      assert(r.newDocNums.flatten.filter(_ >= 0).toSeq == surviving.indices.map(_.toLong))
      // merging the merged segment alone with no drops gives the same content again
      if (surviving.nonEmpty) check(SegmentReader(Merge.merge(IndexedSeq(merged), IndexedSeq(null), cf).bytes), surviving)
    }
  }

  test("a single-hit term becomes 1-hit in a merge but stays general in a fresh build") {
    val docs = corpus(new Random(3), 5)
    val fresh = SegmentReader(SegmentWriter.build(docs))
    assert(fresh.dictionary(0).terms().forall { case (_, v) => !Postings.isOneHit(v) })
    val merged = SegmentReader(Merge.merge(IndexedSeq(fresh), IndexedSeq(null)).bytes)
    assert(merged.dictionary(0).terms().forall { case (_, v) => Postings.isOneHit(v) })
  }

  test("a segment written to disk opens memory-mapped with its CRC checked") {
    val docs = corpus(new Random(4), 20)
    val path = java.nio.file.Files.createTempDirectory("zap").resolve("seg.zap")
    SegmentWriter.write(docs, path)
    check(SegmentReader.open(path), docs)
    val bytes = java.nio.file.Files.readAllBytes(path)
    bytes(10) = (bytes(10) ^ 1).toByte
    assertThrows[io.indexbridge.IndexFormatException](SegmentReader(bytes))
    java.nio.file.Files.delete(path)
  }
}

object ZapReaderSpec {
  final case class Hit(doc: Int, freq: Int, normBits: Int, locs: Seq[(String, Long, Long, Long, Seq[Long])])
}
