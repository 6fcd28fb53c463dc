package io.indexbridge.zap

import org.scalacheck.Gen
import org.scalatest.funsuite.AnyFunSuite
import org.scalatestplus.scalacheck.ScalaCheckPropertyChecks

/** Vellum FSTs built by [[FstBuilder]] and read by [[Fst]] behave like a sorted map: exact
  * lookup, ordered iteration, prefix and range iteration. */
class FstSpec extends AnyFunSuite with ScalaCheckPropertyChecks {
  implicit override val generatorDrivenConfig: PropertyCheckConfiguration = PropertyCheckConfiguration(minSuccessful = io.indexbridge.Depth.checks(200))

  private val ord: Ordering[Array[Byte]] = (a, b) => java.util.Arrays.compareUnsigned(a, b)

  private val byteGen: Gen[Byte] = Gen.frequency(6 -> Gen.oneOf("abet/_0".getBytes.toSeq), 2 -> Gen.choose(-128, 127).map(_.toByte), 1 -> Gen.const(-1.toByte))
  private val keyGen: Gen[Array[Byte]] = Gen.choose(0, 9).flatMap(n => Gen.listOfN(n, byteGen).map(_.toArray))
  private val valueGen: Gen[Long] = Gen.frequency(5 -> Gen.choose(0L, 1000L), 3 -> Gen.choose(0L, Long.MaxValue), 1 -> Gen.choose(Long.MinValue, -1L))
  private val mapGen: Gen[Vector[(Array[Byte], Long)]] =
    Gen.listOf(Gen.zip(keyGen, valueGen)).map(kvs => kvs.groupBy(kv => kv._1.toSeq).values.map(_.head).toVector.sortBy(_._1)(ord))

  private def build(kvs: Seq[(Array[Byte], Long)]): Fst = Fst.open(Fst.build(kvs))

  private def drain(it: FstIterator): Vector[(Seq[Byte], Long)] = {
    val b = Vector.newBuilder[(Seq[Byte], Long)]
    while (it.next()) b += ((it.key.toSeq, it.value))
    b.result()
  }

  test("lookup and iteration equal a sorted map") {
    forAll(mapGen, Gen.listOfN(20, keyGen)) { (kvs, probes) =>
      val fst = build(kvs)
      assert(fst.numKeys == kvs.length)
      for ((k, v) <- kvs) assert(fst.get(k).contains(v))
      val keys = kvs.map(_._1.toSeq).toSet
      for (p <- probes if !keys(p.toSeq)) assert(fst.get(p).isEmpty)
      assert(drain(fst.iterator()) == kvs.map(kv => (kv._1.toSeq, kv._2)))
    }
  }

  test("range and prefix iteration equal filtering the sorted map") {
    forAll(mapGen, keyGen, keyGen, Gen.choose(0, 3)) { (kvs, a, b, prefixLen) =>
      val fst = build(kvs)
      def in(k: Array[Byte], lo: Array[Byte], hi: Array[Byte]) =
        (lo == null || ord.compare(k, lo) >= 0) && (hi == null || ord.compare(k, hi) < 0)
      for ((lo, hi) <- Seq((a, b), (b, a), (null, b), (a, null), (a, a)))
        assert(drain(fst.iterator(lo, hi)) == kvs.filter(kv => in(kv._1, lo, hi)).map(kv => (kv._1.toSeq, kv._2)), s"range $lo $hi")
      val prefix = (if (kvs.nonEmpty) kvs((a.length * 7) % kvs.length)._1 else a).take(prefixLen)
      assert(drain(fst.prefixIterator(prefix)) == kvs.filter(_._1.startsWith(prefix)).map(kv => (kv._1.toSeq, kv._2)))
    }
  }

  test("a large dictionary (registry evictions) still reads back exactly") {
    val rnd = new scala.util.Random(7)
    val kvs = Vector.fill(30000)(Array.fill(rnd.nextInt(12))("abcdefghij".charAt(rnd.nextInt(10)).toByte))
      .distinctBy(_.toSeq).sorted(ord).map(k => (k, rnd.nextLong() & 0xfffffL))
    val fst = build(kvs)
    assert(drain(fst.iterator()) == kvs.map(kv => (kv._1.toSeq, kv._2)))
    kvs.foreach { case (k, v) => assert(fst.getOrElse(k, -1L) == v) }
  }

  test("nodes of 1 to 256 transitions: every one- and two-byte key, present or not, and ranges starting at each") {
    val rnd = new scala.util.Random(11)
    // a first byte's node has a random number of transitions (1 to 256), over random second bytes
    val kvs = (0 until 256).filter(_ => rnd.nextInt(4) > 0).flatMap { first =>
      val seconds = rnd.shuffle((0 until 256).toVector).take(1 + rnd.nextInt(256)).sorted
      (if (rnd.nextBoolean()) Seq(Array(first.toByte)) else Nil) ++ seconds.map(s => Array(first.toByte, s.toByte))
    }.map(k => (k, rnd.nextLong() & 0xffffL))
    val fst = build(kvs)
    val expected = kvs.map(kv => kv._1.toSeq -> kv._2).toMap
    val probes = (0 until 256).map(a => Array(a.toByte)) ++ (for (a <- 0 until 256; b <- 0 until 256) yield Array(a.toByte, b.toByte))
    for (p <- probes) assert(fst.get(p) == expected.get(p.toSeq), p.toSeq)
    // ranges from each one-byte key and the first two-byte ones: the keys from the first at or
    // past the start, in order (compared in place: about ten million keys in all)
    for (lo <- probes.iterator.take(256 * 3)) {
      val it = fst.iterator(lo, null)
      var i = kvs.indexWhere(kv => ord.compare(kv._1, lo) >= 0) match { case -1 => kvs.length; case from => from }
      while (it.next()) {
        if (i == kvs.length || !java.util.Arrays.equals(it.key, kvs(i)._1))
          fail(s"range from ${lo.toSeq}: ${it.key.toSeq} where ${kvs.lift(i).map(_._1.toSeq)} was due")
        i += 1
      }
      if (i < kvs.length) fail(s"range from ${lo.toSeq} ended before ${kvs(i)._1.toSeq}")
    }
  }

  test("the empty FST is the 35 bytes of spec §11.3") {
    val bytes = Fst.build(Nil)
    assert(bytes.length == 35)
    assert(bytes.slice(16, 19).toSeq == Seq[Byte](0, 0, 0))
    assert(bytes(27) == 18)
    assert(!Fst.open(bytes).iterator().next())
  }

  test("keys out of order are refused") {
    val b = new FstBuilder
    b.insert("b".getBytes, 1)
    assertThrows[IllegalArgumentException](b.insert("a".getBytes, 2))
  }
}
