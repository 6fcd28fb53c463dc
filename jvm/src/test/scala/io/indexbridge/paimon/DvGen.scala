package io.indexbridge.paimon

import org.scalacheck.Gen

/** Generators of deletion-vector position sets that reach every roaring container kind (array,
  * bitmap, run), chunk and key boundaries, and — for 64-bit — positions beyond 2^32. */
object DvGen {
  private val maxKey64 = 40L

  def maxPosition(bitmap64: Boolean): Long = if (bitmap64) (maxKey64 << 32) | 0xffffffffL else Int.MaxValue.toLong

  private def boundaries(bitmap64: Boolean): Seq[Long] =
    Seq(0L, 1L, 4095L, 4096L, 65535L, 65536L, 65537L, Int.MaxValue.toLong) ++
      (if (bitmap64) Seq(0xffffffffL, 1L << 32, (1L << 32) + 1, 5L << 32, maxPosition(true)) else Nil)

  private def piece(bitmap64: Boolean): Gen[Seq[Long]] = {
    val max = maxPosition(bitmap64)
    val anywhere = Gen.frequency(3 -> Gen.choose(0L, 1L << 20), 1 -> Gen.choose(0L, max))
    Gen.frequency(
      4 -> anywhere.map(Seq(_)),
      2 -> (for { start <- anywhere; length <- Gen.choose(1, 5000) } yield start until math.min(max + 1, start + length)),
      1 -> (for {
        chunk <- anywhere.map(_ & ~0xffffL)
        count <- Gen.choose(3000, 6000)
        seed <- Gen.long
      } yield {
        val random = new scala.util.Random(seed)
        Seq.fill(count)(chunk + random.nextInt(65536)).filter(_ <= max)
      }),
      1 -> Gen.oneOf(boundaries(bitmap64)).map(Seq(_)),
      // runs across or just above 2^31 inside a key, where signed-int arithmetic breaks
      1 -> (for {
        key <- Gen.choose(0L, if (bitmap64) 3L else 0L)
        start <- Gen.choose(0x7fffff00L, if (bitmap64) 0x80000100L else 0x7ffffff0L)
        length <- Gen.choose(1, 3000)
      } yield ((key << 32) + start until math.min(max + 1, (key << 32) + start + length)))
    )
  }

  /** A set of valid positions, from empty to tens of thousands of entries. */
  def positions(bitmap64: Boolean): Gen[Set[Long]] =
    Gen.sized(n => Gen.listOfN(math.min(n, 12), piece(bitmap64))).map(_.flatten.toSet)

  /** Positions to probe membership with (valid for the width). */
  def probes(bitmap64: Boolean): Gen[List[Long]] = Gen.listOfN(50, Gen.oneOf(piece(bitmap64).map(_.head), Gen.oneOf(boundaries(bitmap64))))
}
