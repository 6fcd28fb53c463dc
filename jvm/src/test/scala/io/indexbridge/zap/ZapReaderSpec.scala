package io.indexbridge.zap

import java.nio.file.Files

import org.roaringbitmap.RoaringBitmap
import org.scalacheck.Gen
import org.scalacheck.rng.Seed
import org.scalatest.funsuite.AnyFunSuite
import org.scalatestplus.scalacheck.ScalaCheckPropertyChecks

/** Segments written by [[SegmentWriter]] and by [[Merge]] read back as a brute-force in-memory
  * index of the same generated corpus ([[ZapGen]]) says they should: every field's terms in
  * order with their postings (docs, freqs, norms, locations), exact lookup, prefix and range
  * iteration, stored fields and docvalues, at random chunk factors; a merge with random drops
  * reads like a build of the surviving documents, with the documented doc-number mapping. */
class ZapReaderSpec extends AnyFunSuite with ScalaCheckPropertyChecks {
  import ZapGen._

  implicit override val generatorDrivenConfig: PropertyCheckConfiguration = PropertyCheckConfiguration(minSuccessful = io.indexbridge.Depth.checks(40))

  private val probes: Gen[List[String]] = Gen.listOfN(4, Gen.oneOf(vocabulary).map(key))

  /** Lookup, prefix and range iteration of every dictionary agree with its ordered terms. */
  private def checkLookups(seg: SegmentReader, index: Index, probes: Seq[String]): Unit =
    for (f <- seg.fields) {
      val dict = seg.dictionary(f.id)
      val terms = index.postings(f.name).map(_._1)
      for ((term, hits) <- index.postings(f.name)) assert(dict.postings(bytesOf(term)).map(_.size).contains(hits.length), s"${f.name}/$term")
      assert(dict.value(bytesOf("\u0000absent")).isEmpty)
      for (p <- probes) {
        assert(dict.termsWithPrefix(bytesOf(p)).map(t => key(t._1)).toVector == terms.filter(_.startsWith(p)), s"${f.name} prefix $p")
        assert(dict.terms(bytesOf(p), null).map(t => key(t._1)).toVector == terms.filter(_ >= p), s"${f.name} from $p")
        for (q <- probes)
          assert(dict.terms(bytesOf(p), bytesOf(q)).map(t => key(t._1)).toVector == terms.filter(t => t >= p && t < q), s"${f.name} [$p, $q)")
      }
    }

  test("fresh segments read back as the brute-force index at random chunk factors") {
    forAll(Gen.choose(0, 60).flatMap(corpus(0, _)), Gen.oneOf(chunkFactors), probes) { (docs, chunkFactor, probes) =>
      val seg = SegmentReader(SegmentWriter.build(docs, chunkFactor))
      assert(seg.numDocs == docs.length && seg.footer.chunkFactor == chunkFactor)
      val expected = bruteForce(docs)
      assert(readBack(seg) == expected)
      checkLookups(seg, expected, probes)
      for ((doc, d) <- docs.zipWithIndex) assert(key(seg.docId(d)) == key(doc.fields.last.value))
    }
  }

  /** Inputs (each with its chunk factor), their drops (random, all of one input, or all), the output chunk factor. */
  private val mergeCase: Gen[(Vector[(IndexedSeq[Document], Int)], Vector[Set[Int]], Int)] = for {
    shared <- Gen.oneOf(Some(fieldNames), None) // then the inputs' field lists are (likely) the same
    n <- Gen.choose(1, 3)
    sizes <- Gen.listOfN(n, Gen.choose(0, 25))
    corpora <- Gen.sequence[Vector[IndexedSeq[Document]], IndexedSeq[Document]](
      sizes.indices.map(i => corpus(sizes.take(i).sum, sizes(i), shared)))
    factors <- Gen.listOfN(n, Gen.oneOf(chunkFactors))
    random <- Gen.sequence[Vector[Set[Int]], Set[Int]](sizes.map(subset))
    mode <- Gen.frequency(2 -> "random", 1 -> "one input", 1 -> "all")
    victim <- Gen.choose(0, n - 1)
    chunkFactor <- Gen.oneOf(chunkFactors)
  } yield {
    val drops = mode match {
      case "random"    => random
      case "one input" => random.updated(victim, (0 until sizes(victim)).toSet)
      case _           => sizes.map(s => (0 until s).toSet).toVector
    }
    (corpora.zip(factors), drops, chunkFactor)
  }

  test("merged segments read like a build of the surviving documents") {
    forAll(mergeCase, probes) { case ((inputs, drops, chunkFactor), probes) =>
      val segments = inputs.map { case (docs, cf) => SegmentReader(SegmentWriter.build(docs, cf)) }
      val r = Merge.merge(segments, drops.map(d => RoaringBitmap.bitmapOf(d.toSeq.sorted: _*)), chunkFactor)
      val survivors = inputs.zip(drops).flatMap { case ((docs, _), dropped) => docs.indices.filterNot(dropped).map(docs) }
      var next = -1L
      val mapping = inputs.zip(drops).map { case ((docs, _), dropped) => docs.indices.map(d => if (dropped(d)) -1L else { next += 1; next }) }
      assert(r.newDocNums.map(_.toSeq) == (if (survivors.isEmpty) inputs.map(_ => Seq.empty) else mapping))

      val merged = SegmentReader(r.bytes)
      assert(merged.numDocs == survivors.length && merged.footer.chunkFactor == chunkFactor)
      // the merged segment keeps every input field, also those only in dropped docs (with no terms)
      val got = readBack(merged)
      val expected = bruteForce(survivors, Some(fieldOrder(segments.flatMap(_.fields.map(_.name)))))
      assert(got.fields == expected.fields)
      assert(got.postings == expected.postings)
      assert(got.stored == expected.stored)
      // docvalues come from the inputs that had a section (and terms) for the field, renumbered
      val docValues = inputs.zip(mapping).flatMap { case ((docs, _), nums) =>
        bruteForce(docs).docValues.toSeq.flatMap { case (name, values) => values.collect { case (d, terms) if nums(d) >= 0 => name -> (nums(d).toInt, terms) } }
      }.groupMap(_._1)(_._2).map { case (name, values) => name -> values.sortBy(_._1) }
      assert(got.docValues == docValues)
      checkLookups(merged, expected, probes)
      if (survivors.nonEmpty) // every _id term has one freq-1 hit without locations, from one input: 1-hit
        assert(merged.dictionary(0).terms().forall { case (_, v) => Postings.isOneHit(v) })
    }
  }

  private def sample[T](gen: Gen[T], seed: Long): T = gen.pureApply(Gen.Parameters.default, Seed(seed))

  test("a single-hit term becomes 1-hit in a merge but stays general in a fresh build") {
    val fresh = SegmentReader(SegmentWriter.build(sample(corpus(0, 5), 3)))
    assert(fresh.dictionary(0).terms().forall { case (_, v) => !Postings.isOneHit(v) })
    val merged = SegmentReader(Merge.merge(IndexedSeq(fresh), IndexedSeq(null)).bytes)
    assert(merged.dictionary(0).terms().forall { case (_, v) => Postings.isOneHit(v) })
    assert(readBack(merged) == readBack(fresh))
  }

  test("a segment written to disk opens memory-mapped with its CRC checked") {
    val docs = sample(corpus(0, 20), 4)
    val path = Files.createTempDirectory("zap").resolve("seg.zap")
    SegmentWriter.write(docs, path)
    assert(readBack(SegmentReader.open(path)) == bruteForce(docs))
    val bytes = Files.readAllBytes(path)
    bytes(10) = (bytes(10) ^ 1).toByte
    assertThrows[io.indexbridge.IndexFormatException](SegmentReader(bytes))
    Files.delete(path)
    Files.delete(path.getParent)
  }
}
