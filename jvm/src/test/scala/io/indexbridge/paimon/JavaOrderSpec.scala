package io.indexbridge.paimon

import scala.jdk.CollectionConverters._

import org.scalacheck.Gen
import org.scalatest.funsuite.AnyFunSuite
import org.scalatestplus.scalacheck.ScalaCheckPropertyChecks

/** A key whose hashCode is chosen by the test; equal keys have the same id. */
private final case class Key(id: Int, hash: Int) {
  override def hashCode: Int = hash
}

/** JavaOrder against the real java.util.HashMap. */
class JavaOrderSpec extends AnyFunSuite with ScalaCheckPropertyChecks {
  implicit override val generatorDrivenConfig: PropertyCheckConfiguration = PropertyCheckConfiguration(minSuccessful = 300)

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

  private val strings: Gen[List[String]] = Gen.sized { n =>
    Gen.listOfN(n * 4, Gen.frequency(5 -> Gen.alphaNumStr.map(_.take(12)), 1 -> Gen.asciiPrintableStr, 1 -> Gen.oneOf("a", "b", "")))
  }

  /** Keys with colliding hashes: at most 7 keys share a hash value, and the values come either
    * from the whole int range or from a small range (many bucket collisions at small
    * capacities), so chains grow, resize and split; ids repeat. */
  private val collidingKeys: Gen[List[Key]] = for {
    poolSize <- Gen.choose(100, 2000)
    small <- Gen.prob(0.5)
    pool <- Gen.listOfN(poolSize, if (small) Gen.choose(0, poolSize * 4) else Gen.choose(Int.MinValue, Int.MaxValue))
    n <- Gen.choose(0, 1500)
    ids <- Gen.listOfN(n, Gen.choose(0, 700))
  } yield ids.map(id => Key(id, pool(id % poolSize)))

  test("put order of random strings equals java.util.HashMap's") {
    forAll(strings)(keys => assert(JavaOrder.afterPuts(keys)(JavaOrder.javaStringHash) == javaPut(keys)))
  }

  test("computeIfAbsent order of random strings equals java.util.HashMap's") {
    forAll(strings)(keys => assert(JavaOrder.afterComputeIfAbsent(keys)(JavaOrder.javaStringHash) == javaComputeIfAbsent(keys)))
  }

  test("colliding keys: put and computeIfAbsent orders equal Java's unless a tree bin forms") {
    var compared, treeified = 0
    forAll(collidingKeys) { keys =>
      for ((ours, java) <- Seq[(Seq[Key] => Vector[Key], Seq[Key] => Vector[Key])](
             (k => JavaOrder.afterPuts(k)(_.hash), javaPut),
             (k => JavaOrder.afterComputeIfAbsent(k)(_.hash), javaComputeIfAbsent)
           )) {
        try {
          assert(ours(keys) == java(keys))
          compared += 1
        } catch { case _: UnsupportedOperationException => treeified += 1 }
      }
    }
    assert(compared > treeified * 5, s"$compared compared, $treeified treeified")
  }

  test("a mixed sequence of put and computeIfAbsent equals Java's") {
    forAll(collidingKeys, Gen.infiniteLazyList(Gen.prob(0.5))) { (keys, usePut) =>
      val real = new java.util.HashMap[Key, Integer]()
      val ours = new JavaHashMapOrder[Key](_.hash)
      try {
        for ((k, put) <- keys.zip(usePut)) {
          if (put) { ours.put(k); real.put(k, 1) }
          else { ours.computeIfAbsent(k); real.computeIfAbsent(k, _ => 1) }
        }
        assert(ours.keys == real.keySet.asScala.toVector)
      } catch { case _: UnsupportedOperationException => () }
    }
  }

  test("resizing instead of treeifying below capacity 64, then refusing the tree bin") {
    val keys = (0 until 11).map(Key(_, 42))
    assert(JavaOrder.afterPuts(keys.take(10))(_.hash) == javaPut(keys.take(10)))
    val e = intercept[UnsupportedOperationException](JavaOrder.afterPuts(keys)(_.hash))
    assert(e.getMessage.contains("tree bin"))
    assert(JavaOrder.afterComputeIfAbsent(keys.take(9))(_.hash) == javaComputeIfAbsent(keys.take(9)))
    intercept[UnsupportedOperationException](JavaOrder.afterComputeIfAbsent(keys.take(10))(_.hash))
  }

  test("javaStringHash is String.hashCode") {
    forAll(Gen.asciiPrintableStr, Gen.alphaNumStr, Gen.stringOf(Gen.choose(Char.MinValue, Char.MaxValue))) { (a, b, c) =>
      for (s <- Seq(a, b, c)) assert(JavaOrder.javaStringHash(s) == s.hashCode)
    }
  }
}
