package io.indexbridge.paimon.table

import io.indexbridge.paimon.{KeyHash, KeyType}
import io.indexbridge.paimon.fileindex.{Op, Predicate}

/** Which buckets of a fixed-bucket table can hold rows matching a predicate
  * (`BucketSelectConverter`, `BucketSelector`).
  *
  * {{{
  * when      bucket > 0 (HASH_FIXED), a non-empty bucket key, and the predicate names every
  *           bucket-key column; otherwise every bucket is read
  * per       partition: leaves on partition columns become true/false for its value, then the
  *           conjuncts projected on the bucket-key columns (`PredicateProjectionConverter`:
  *           `(a = 1 AND c > 0) OR a = 2` gives `a = 1 OR a = 2`); a conjunct counts when each OR branch is
  *           = or IN on one and the same column (its non-null literals are that column's values;
  *           the same column in several conjuncts intersects them, an empty intersection
  *           selects nothing, i.e. every bucket); every bucket-key column needs values, at most
  *           1000 combinations
  * buckets   of each combination's BinaryRow: default |hashCode % N| (Java %), mod floorMod(key, N),
  *           N = the entry's _TOTAL_BUCKETS
  * }}}
  */
final class BucketSelector private (predicate: Predicate, schema: TableSchema, bucketKeys: Seq[String], function: String) {
  import Predicates._

  private val keyTypes: Seq[KeyType] = bucketKeys.map(k => schema.keyTypeOf(k).get)
  private val partitionKeys = schema.partitionKeys.toSet
  private val selectors = scala.collection.mutable.HashMap.empty[Seq[Any], Option[Seq[Seq[Any]]]]

  /** Whether the entry of `partition` (its values), `bucket` of `totalBuckets` may match. */
  def test(partition: Seq[Any], bucket: Int, totalBuckets: Int): Boolean =
    selectors.getOrElseUpdate(partition, keyRows(partition)).forall { rows =>
      rows.exists(values => bucketOf(values, totalBuckets) == bucket)
    }

  private def bucketOf(values: Seq[Any], n: Int): Int = function match {
    case "mod" => Math.floorMod(values.head.asInstanceOf[Number].longValue, n.toLong).toInt
    case _     => Math.abs(KeyHash.hash(values, keyTypes) % n)
  }

  /** `PartitionValuePredicateVisitor`: Left(truth) for a decided subtree; AND and OR simplified
    * as `PredicateBuilder.and/or` do (false absorbs an AND, true an OR). */
  private def decide(p: Predicate, partition: Map[String, Any]): Either[Boolean, Predicate] = p match {
    case l @ Predicate.Leaf(_, column, _) =>
      if (partitionKeys.contains(column)) Left(holds(l, c => (schema.keyTypeOf(c).get, partition(c)))) else Right(l)
    case Predicate.And(cs) => combine(cs.map(decide(_, partition)), isOr = false)
    case Predicate.Or(cs)  => combine(cs.map(decide(_, partition)), isOr = true)
  }

  private def combine(parts: Seq[Either[Boolean, Predicate]], isOr: Boolean): Either[Boolean, Predicate] =
    if (parts.contains(Left(isOr))) Left(isOr)
    else parts.collect { case Right(q) => q } match {
      case Seq()  => Left(!isOr)
      case Seq(q) => Right(q)
      case qs     => Right(if (isOr) Predicate.Or(qs) else Predicate.And(qs))
    }

  /** The bucket-key rows to hash for one partition, None when every bucket may match. */
  private def keyRows(partitionValues: Seq[Any]): Option[Seq[Seq[Any]]] =
    decide(predicate, schema.partitionKeys.zip(partitionValues).toMap).toOption.flatMap { remaining =>
      val values = Array.fill[Option[Seq[Any]]](bucketKeys.size)(None)
      val conjuncts = splitAnd(remaining).flatMap(project(_, bucketKeys.toSet))
      var contradiction = false
      for (conjunct <- conjuncts if !contradiction) {
        val branches = splitOr(conjunct)
        val usable = branches.forall {
          case Predicate.Leaf(Op.Equal | Op.In, c, _) => c == columnOf(branches.head)
          case _                                      => false
        }
        if (usable) {
          val i = bucketKeys.indexOf(columnOf(branches.head))
          val found = branches.flatMap { case l: Predicate.Leaf => l.literals.filter(_ != null); case _ => Nil }
          values(i) = Some(values(i).fold(found) { previous =>
            val kept = previous.filter(v => found.exists(f => compare(keyTypes(i), f, v) == 0))
            if (kept.isEmpty) contradiction = true
            kept
          })
        }
      }
      if (contradiction || values.exists(_.isEmpty) || values.map(_.get.size.toLong).product > BucketSelector.MaxValues) None
      else Some(values.toSeq.map(_.get).foldLeft(Seq(Seq.empty[Any]))((rows, column) => for (r <- rows; v <- column) yield r :+ v))
    }

  private def columnOf(p: Predicate): String = p match {
    case Predicate.Leaf(_, c, _) => c
    case _                       => ""
  }
}

object BucketSelector {
  private val MaxValues = 1000L

  /** The selector of a fixed-bucket table's predicate, None when Paimon would not select. */
  def apply(predicate: Predicate, schema: TableSchema, options: CoreOptions): Option[BucketSelector] = {
    val keys = schema.bucketKeys
    if (options.bucket <= 0 || keys.isEmpty || !keys.toSet.subsetOf(Predicates.columns(predicate))) None
    else Some(new BucketSelector(predicate, schema, keys, options.bucketFunction))
  }
}
