package io.indexbridge.paimon.table

import io.indexbridge.paimon.JavaOrder

/** Paimon 1.4.2's `HashBucketAssigner` / `PartitionIndex` for one assigner (`numAssigners` = 1,
  * every bucket its own) fed a partition's key hashes in input order, as a plan that gives the
  * bucket of the r-th new hash directly (so the assignment runs in parallel).
  *
  * {{{
  * known hash   the bucket the partition's HASH index holds it in
  * new hash     1. the first bucket of nonFullBucketInformation (a HashMap<Integer, Long> of the
  *                 existing buckets with their hash counts, iterated in HashMap order) holding
  *                 fewer than dynamic-bucket.target-row-num hashes; full ones leave the map
  *              2. otherwise a new bucket, the smallest id not in use (up to
  *                 dynamic-bucket.max-buckets - 1), which takes the next target-row-num hashes
  *              3. max-buckets reached: Paimon picks one of the partition's buckets at random;
  *                 here the bucket at floorMod(hash, n) of the partition's buckets (deterministic)
  * }}}
  *
  * Paimon's assigner keeps its largest bucket id across partitions and consults it with
  * max-buckets; this plan counts per partition. With more than one assigner (Paimon's
  * dynamic-bucket.assigner-parallelism in Flink and Spark) buckets are split among them and the
  * ids differ; either way the HASH index records the choice, which later Paimon writes follow.
  */
final case class DynamicBucketAssigner(existingCounts: Seq[(Int, Long)], target: Long, maxBuckets: Int) {
  private val globalMax = (if (maxBuckets == -1) Short.MaxValue.toInt else maxBuckets) - 1
  private val order = JavaOrder.afterComputeIfAbsent(existingCounts.map(_._1))(b => b, Some(JavaOrder.intCompareTo))
  private val counts = existingCounts.toMap
  private val used = counts.keySet
  private val buckets: IndexedSeq[Int] = (existingCounts.map(_._1).distinct ++ Nil).toIndexedSeq

  /** (bucket, how many new hashes it takes) in assignment order, existing buckets first. */
  private val slots: IndexedSeq[(Int, Long)] = order.filter(b => counts(b) < target).map(b => b -> (target - counts(b))).toIndexedSeq
  private val inExisting = slots.map(_._2).sum

  /** The bucket of the `rank`-th new hash (0-based, in input order) of the partition. */
  def bucket(rank: Long, hash: Int): Int =
    if (rank < inExisting) {
      var r = rank
      var i = 0
      while (r >= slots(i)._2) { r -= slots(i)._2; i += 1 }
      slots(i)._1
    } else {
      val k = (rank - inExisting) / target // the k-th new bucket
      val fresh = newBucket(k)
      fresh.getOrElse {
        val all = allBuckets
        all(Math.floorMod(hash, all.size))
      }
    }

  /** The buckets the first `n` new hashes go to (max-buckets reached: every bucket). */
  def bucketsFor(n: Long): Seq[Int] =
    if (n <= 0) Nil
    else if (n <= inExisting) slots.scanLeft(0L)(_ + _._2).zip(slots).takeWhile(_._1 < n).map(_._2._1)
    else {
      val created = (0L to (n - inExisting - 1) / target).iterator.map(newBucket).takeWhile(_.isDefined).flatten.toSeq
      val overflow = (n - inExisting) > created.size.toLong * target
      (slots.map(_._1) ++ created ++ (if (overflow) allBuckets else Nil)).distinct
    }

  /** The k-th bucket created (smallest ids not in use), or None past max-buckets. */
  private def newBucket(k: Long): Option[Int] = {
    if (k > globalMax) return None
    var id = -1
    var left = k
    var found = -1
    while (found < 0 && id < globalMax) {
      id += 1
      if (!used.contains(id)) { if (left == 0) found = id else left -= 1 }
    }
    if (found < 0 || (used.nonEmpty && (used.max max found) > globalMax)) None else Some(found)
  }

  /** Every bucket of the partition once max-buckets is reached (existing, then all created). */
  private lazy val allBuckets: IndexedSeq[Int] = {
    val created = Iterator.from(0).map(k => newBucket(k.toLong)).takeWhile(_.isDefined).flatten.toIndexedSeq
    (buckets ++ created).distinct
  }
}
