package io.indexbridge

/** How far the seeded tests go, as `depth.py` decides it for pytest: the default run (the
  * README's test command, CI) takes a share of a test's seeds or cases, drawn anew each day from
  * the day's seed; `INDEXBRIDGE_DEEP=1` takes them all; `INDEXBRIDGE_TEST_SEED` replays a day. */
object Depth {
  val deep: Boolean = !Set("", "0").contains(sys.env.getOrElse("INDEXBRIDGE_DEEP", ""))
  val seed: Long = sys.env.get("INDEXBRIDGE_TEST_SEED").filter(_.nonEmpty).map(_.toLong)
    .getOrElse(java.time.LocalDate.now(java.time.ZoneOffset.UTC).format(java.time.format.DateTimeFormatter.BASIC_ISO_DATE).toLong)

  /** What the run is, for a suite's `info` (the seed to replay a failure with). */
  def describe: String =
    if (deep) "depth: deep (every case; INDEXBRIDGE_DEEP=1)"
    else s"depth: the day's share of the seeded cases (INDEXBRIDGE_TEST_SEED=$seed; INDEXBRIDGE_DEEP=1 runs them all)"

  /** All `items` when deep, else `n` of them (at least one), in their order: the day's draw for `key`. */
  def pick[T](items: Seq[T], n: Int, key: String): Seq[T] =
    if (deep || n >= items.size) items
    else {
      val picked = rng(key).shuffle(items.indices.toList).take(n.max(1)).toSet
      items.zipWithIndex.collect { case (item, i) if picked(i) => item }
    }

  /** ScalaCheck's `minSuccessful`: `n` when deep, else a third of it (its generators draw anew every run). */
  def checks(n: Int): org.scalactic.anyvals.PosInt =
    org.scalactic.anyvals.PosInt.ensuringValid(if (deep) n else math.max(10, n / 3))

  /** `mutants` when deep, else about `share` of them, the day's draw for `key` (lazily: an
    * iterator of mutants stays one). */
  def thin[T](mutants: Iterator[T], share: Double, key: String): Iterator[T] =
    if (deep) mutants
    else {
      val r = rng(key)
      mutants.filter(_ => r.nextDouble() < share)
    }

  /** The day's random draws for `key`. */
  private def rng(key: String): scala.util.Random = new scala.util.Random(s"$seed/$key".hashCode.toLong)
}
