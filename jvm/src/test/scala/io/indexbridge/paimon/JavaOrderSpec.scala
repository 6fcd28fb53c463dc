package io.indexbridge.paimon

import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._

import org.apache.paimon.data.BinaryString
import org.scalacheck.Gen
import org.scalatest.funsuite.AnyFunSuite
import org.scalatestplus.scalacheck.ScalaCheckPropertyChecks

/** A Comparable key (by id) whose hashCode is chosen by the test; equal keys have the same id. */
private final case class Key(id: Int, hash: Int) extends Comparable[Key] {
  override def hashCode: Int = hash
  override def compareTo(other: Key): Int = Integer.compare(id, other.id)
}

/** The same without Comparable: java.util.HashMap breaks ties between equal hashes by identity. */
private final case class PlainKey(id: Int, hash: Int) {
  override def hashCode: Int = hash
}

/** JavaOrder against the real java.util.HashMap. */
class JavaOrderSpec extends AnyFunSuite with ScalaCheckPropertyChecks {
  implicit override val generatorDrivenConfig: PropertyCheckConfiguration = PropertyCheckConfiguration(minSuccessful = 300)

  private val byId: Option[Ordering[Key]] = Some(Ordering.by[Key, Int](_.id))
  private val strings: Option[Ordering[String]] = Some(JavaOrder.stringCompareTo)

  private def javaPut[K](keys: Seq[K]): Vector[K] = {
    val m = new java.util.HashMap[K, Integer]()
    keys.foreach(k => m.put(k, 1))
    m.keySet.asScala.toVector
  }

  private def javaComputeIfAbsent[K](keys: Seq[K]): Vector[K] = {
    val m = new java.util.HashMap[K, Integer]()
    keys.foreach(k => m.computeIfAbsent(k, _ => 1))
    m.keySet.asScala.toVector
  }

  /** Tree bins formed and tree bins turned back into chains, over a test. */
  private final class TreeStats {
    var treeified, untreeified = 0
    def count(map: JavaHashMapOrder[_]): Unit = { treeified += map.treeified; untreeified += map.untreeified }
  }

  private def putOrder[K](keys: Seq[K], hashCode: K => Int, ordering: Option[Ordering[K]], stats: TreeStats): Vector[K] = {
    val map = new JavaHashMapOrder(hashCode, ordering)
    keys.foreach(map.put)
    stats.count(map)
    map.keys
  }

  private def computeIfAbsentOrder[K](keys: Seq[K], hashCode: K => Int, ordering: Option[Ordering[K]], stats: TreeStats): Vector[K] = {
    val map = new JavaHashMapOrder(hashCode, ordering)
    keys.foreach(map.computeIfAbsent)
    stats.count(map)
    map.keys
  }

  /** Strings of "Aa", "BB", "C#" blocks share String.hashCode per block count, so bins of equal
    * hashes form and compareTo decides; the others are ordinary or arbitrary UTF-16. */
  private val stringKeys: Gen[List[String]] = Gen.sized { n =>
    val sameHash = Gen.choose(1, 6).flatMap(Gen.listOfN(_, Gen.oneOf("Aa", "BB", "C#")).map(_.mkString))
    Gen.listOfN(
      n * 4,
      Gen.frequency(
        5 -> Gen.alphaNumStr.map(_.take(12)),
        1 -> Gen.asciiPrintableStr,
        1 -> Gen.oneOf("a", "b", ""),
        3 -> sameHash,
        1 -> Gen.stringOf(Gen.choose(Char.MinValue, Char.MaxValue)).map(_.take(4))
      )
    )
  }

  /** Hash values that collide: spread over the int range, small (many equal low bits), or
    * multiples of 2^shift (whole groups share a bucket across resizes, like keys `k << 20`). */
  private val hashPool: Gen[Vector[Int]] = for {
    poolSize <- Gen.frequency(1 -> Gen.choose(1, 20), 3 -> Gen.choose(20, 2000))
    kind <- Gen.choose(0, 2)
    shift <- Gen.choose(4, 24)
    pool <- Gen.listOfN(
      poolSize,
      kind match {
        case 0 => Gen.choose(Int.MinValue, Int.MaxValue)
        case 1 => Gen.choose(0, poolSize * 4)
        case _ => Gen.choose(-200, 200).map(_ << shift)
      }
    )
  } yield pool.toVector

  /** Up to 1500 calls over up to 700 ids; id i has hash pool(i % poolSize), so small pools give
    * many equal hashes (compareTo decides inside tree bins) and ids repeat. */
  private val collidingKeys: Gen[List[Key]] = for {
    pool <- hashPool
    n <- Gen.choose(0, 1500)
    maxId <- Gen.choose(1, 700)
    ids <- Gen.listOfN(n, Gen.choose(0, maxId))
  } yield ids.map(id => Key(id, pool(id % pool.length)))

  /** Keys with distinct hashes (that still share buckets), which need no compareTo. */
  private val distinctHashKeys: Gen[List[PlainKey]] = for {
    pool <- hashPool
    n <- Gen.choose(0, 1500)
    ids <- Gen.listOfN(n, Gen.choose(0, pool.length - 1))
  } yield {
    val hashes = pool.distinct
    ids.map(i => PlainKey(i % hashes.length, hashes(i % hashes.length)))
  }

  test("put order of random strings equals java.util.HashMap's") {
    val stats = new TreeStats
    forAll(stringKeys)(keys => assert(putOrder[String](keys, JavaOrder.javaStringHash, strings, stats) == javaPut(keys)))
    assert(stats.treeified > 0, "no tree bin formed")
  }

  test("computeIfAbsent order of random strings equals java.util.HashMap's") {
    val stats = new TreeStats
    forAll(stringKeys) { keys =>
      assert(computeIfAbsentOrder[String](keys, JavaOrder.javaStringHash, strings, stats) == javaComputeIfAbsent(keys))
    }
    assert(stats.treeified > 0, "no tree bin formed")
  }

  test("colliding Comparable keys: put and computeIfAbsent orders equal Java's, tree bins included") {
    val stats = new TreeStats
    forAll(collidingKeys) { keys =>
      assert(putOrder[Key](keys, _.hash, byId, stats) == javaPut(keys))
      assert(computeIfAbsentOrder[Key](keys, _.hash, byId, stats) == javaComputeIfAbsent(keys))
    }
    assert(stats.treeified > 100 && stats.untreeified > 10, s"${stats.treeified} treeified, ${stats.untreeified} untreeified")
  }

  test("a mixed sequence of put and computeIfAbsent equals Java's") {
    val stats = new TreeStats
    forAll(collidingKeys, Gen.infiniteLazyList(Gen.prob(0.5))) { (keys, usePut) =>
      val real = new java.util.HashMap[Key, Integer]()
      val ours = new JavaHashMapOrder[Key](_.hash, byId)
      for ((k, put) <- keys.zip(usePut)) {
        if (put) { ours.put(k); real.put(k, 1) }
        else { ours.computeIfAbsent(k); real.computeIfAbsent(k, _ => 1) }
      }
      stats.count(ours)
      assert(ours.keys == real.keySet.asScala.toVector)
    }
    assert(stats.treeified > 100, s"${stats.treeified} treeified")
  }

  test("keys that are not Comparable: tree bins of distinct hashes equal Java's") {
    val stats = new TreeStats
    forAll(distinctHashKeys) { keys =>
      assert(putOrder[PlainKey](keys, _.hash, None, stats) == javaPut(keys))
      assert(computeIfAbsentOrder[PlainKey](keys, _.hash, None, stats) == javaComputeIfAbsent(keys))
    }
    assert(stats.treeified > 100, s"${stats.treeified} treeified")
  }

  test("resizing instead of treeifying below capacity 64, then a tree bin of equal hashes") {
    val keys = (0 until 40).map(i => Key(39 - i, 42))
    for (n <- 0 to keys.length) {
      assert(JavaOrder.afterPuts(keys.take(n))(_.hash, byId) == javaPut(keys.take(n)))
      assert(JavaOrder.afterComputeIfAbsent(keys.take(n))(_.hash, byId) == javaComputeIfAbsent(keys.take(n)))
    }
  }

  test("equal hashes without compareTo in a tree bin: a clear error, not a guess") {
    val keys = (0 until 11).map(PlainKey(_, 42))
    assert(JavaOrder.afterPuts(keys.take(10))(_.hash) == javaPut(keys.take(10))) // capacity 64, still a chain
    val e = intercept[UnsupportedOperationException](JavaOrder.afterPuts(keys)(_.hash))
    assert(e.getMessage.contains("identityHashCode") && e.getMessage.contains("not Comparable"))
    assert(JavaOrder.afterComputeIfAbsent(keys.take(9))(_.hash) == javaComputeIfAbsent(keys.take(9)))
    intercept[UnsupportedOperationException](JavaOrder.afterComputeIfAbsent(keys.take(10))(_.hash))
    // compareTo 0 between different keys leaves the same tie
    val e2 = intercept[UnsupportedOperationException](JavaOrder.afterPuts(keys)(_.hash, Some(Ordering.by[PlainKey, Int](_ => 0))))
    assert(e2.getMessage.contains("compareTo 0"))
  }

  test("Integer keys k << 20 (the bitmap *_int_hash_collisions case) equal Java's") {
    val vectorCase = (0 until 300).flatMap(k => Seq(k << 20, k << 20))
    val ints = Some(JavaOrder.intCompareTo)
    val stats = new TreeStats
    assert(computeIfAbsentOrder[Int](vectorCase, identity, ints, stats) == javaComputeIfAbsent(vectorCase))
    assert(stats.treeified > 0)
    forAll(Gen.choose(0, 2000), Gen.choose(12, 24)) { (n, shift) =>
      val keys = scala.util.Random.shuffle((-n / 4 until n).map(_ << shift))
      assert(putOrder[Int](keys, identity, ints, stats) == javaPut(keys))
      assert(computeIfAbsentOrder[Int](keys, identity, ints, stats) == javaComputeIfAbsent(keys))
    }
    assert(stats.untreeified > 0)
  }

  test("Double keys with equal hashes and the specials order by Double.compare as Java does") {
    val specials = Seq(0.0, -0.0, Double.NaN, Double.PositiveInfinity, Double.NegativeInfinity, Double.MinPositiveValue)
    val colliding: Gen[Double] = for {
      hi <- Gen.choose(0, 64)
      c <- Gen.oneOf(0, 0x12345, -7)
    } yield java.lang.Double.longBitsToDouble((hi.toLong << 32) | ((hi ^ c) & 0xffffffffL))
    val stats = new TreeStats
    forAll(Gen.listOf(Gen.frequency(5 -> colliding, 1 -> Gen.oneOf(specials)))) { keys =>
      val hash = (d: Double) => java.lang.Double.hashCode(d)
      val ordering = Some(JavaOrder.doubleCompareTo)
      val bits = (v: Vector[Double]) => v.map(java.lang.Double.doubleToLongBits)
      assert(bits(putOrder[Double](keys, hash, ordering, stats)) == bits(javaPut(keys)))
      assert(bits(computeIfAbsentOrder[Double](keys, hash, ordering, stats)) == bits(javaComputeIfAbsent(keys)))
    }
    assert(stats.treeified > 0)
  }

  test("BinaryString keys: compareTo and the HashMap order equal Paimon's") {
    val text = Gen.stringOf(Gen.frequency(4 -> Gen.alphaNumChar, 1 -> Gen.choose(Char.MinValue, Char.MaxValue).filterNot(_.isSurrogate)))
    val utf8 = (b: BinaryString) => b.toBytes
    forAll(text, text) { (a, b) =>
      val (x, y) = (BinaryString.fromString(a), BinaryString.fromString(b))
      assert(JavaOrder.binaryStringCompareTo(utf8).compare(x, y).sign == x.compareTo(y).sign)
      assert(JavaOrder.binaryStringCompareToOfStrings.compare(a, b).sign == x.compareTo(y).sign)
    }
    // Many strings whose spread hashes share the low 10 bits pile into one bin.
    val keys = Iterator
      .from(0)
      .map(i => BinaryString.fromString(s"key-$i"))
      .filter { b => val h = b.hashCode; ((h ^ (h >>> 16)) & 0x3ff) == 0 }
      .take(40)
      .toVector
    val stats = new TreeStats
    forAll(Gen.listOf(Gen.oneOf(keys))) { calls =>
      val ordering = Some(JavaOrder.binaryStringCompareTo(utf8))
      assert(putOrder[BinaryString](calls, _.hashCode, ordering, stats) == javaPut(calls))
      assert(computeIfAbsentOrder[BinaryString](calls, _.hashCode, ordering, stats) == javaComputeIfAbsent(calls))
    }
    assert(stats.treeified > 0)
  }

  test("the comparators have Java's compareTo signs") {
    val floats = Seq(Float.NaN, Float.NegativeInfinity, -1f, -0f, 0f, Float.MinPositiveValue, 1f, Float.PositiveInfinity)
    for (a <- floats; b <- floats) {
      assert(JavaOrder.floatCompareTo.compare(a, b) == java.lang.Float.compare(a, b))
      assert(JavaOrder.doubleCompareTo.compare(a.toDouble, b.toDouble) == java.lang.Double.compare(a.toDouble, b.toDouble))
    }
    assert(JavaOrder.doubleCompareTo.compare(-0.0, 0.0) < 0 && JavaOrder.doubleCompareTo.compare(Double.NaN, Double.PositiveInfinity) > 0)
    forAll { (a: Long, b: Long) =>
      assert(JavaOrder.longCompareTo.compare(a, b) == java.lang.Long.compare(a, b))
      assert(JavaOrder.intCompareTo.compare(a.toInt, b.toInt) == Integer.compare(a.toInt, b.toInt))
      assert(JavaOrder.shortCompareTo.compare(a.toShort, b.toShort).sign == java.lang.Short.compare(a.toShort, b.toShort).sign)
      assert(JavaOrder.byteCompareTo.compare(a.toByte, b.toByte).sign == java.lang.Byte.compare(a.toByte, b.toByte).sign)
    }
    forAll(Gen.stringOf(Gen.choose(Char.MinValue, Char.MaxValue)), Gen.stringOf(Gen.choose(Char.MinValue, Char.MaxValue))) { (a, b) =>
      assert(JavaOrder.stringCompareTo.compare(a, b) == a.compareTo(b))
      val bytes = (s: String) => s.getBytes(StandardCharsets.UTF_8)
      assert(JavaOrder.binaryStringCompareToOfStrings.compare(a, b).sign == java.util.Arrays.compareUnsigned(bytes(a), bytes(b)).sign)
    }
  }

  test("javaStringHash is String.hashCode") {
    forAll(Gen.asciiPrintableStr, Gen.alphaNumStr, Gen.stringOf(Gen.choose(Char.MinValue, Char.MaxValue))) { (a, b, c) =>
      for (s <- Seq(a, b, c)) assert(JavaOrder.javaStringHash(s) == s.hashCode)
    }
  }
}
