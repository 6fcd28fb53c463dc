package io.indexbridge.paimon.table

import java.nio.charset.StandardCharsets

import scala.collection.mutable

import io.indexbridge.paimon.{BinaryRow, KeyType}
import io.indexbridge.paimon.fileindex.{Condition, IndexValue, Op, Predicate}

/** Paimon's predicates over a table's columns (`org.apache.paimon.predicate`), on the trees of
  * [[io.indexbridge.paimon.fileindex.Predicate]] whose literals follow the [[IndexValue]]
  * conventions (what `Condition.bind` and `FileIndexConditions` produce).
  *
  * {{{
  * shape   PredicateBuilder: IN of 1..20 literals is an OR of =, NOT IN its negation (an AND of
  *         <>); and() flattens, and merges <= and >= of one column into BETWEEN
  *         (Between.optimize) — which matters: a bitmap index answers BETWEEN with REMAIN
  * stats   LeafPredicate.test(rowCount, min, max, nullCounts): a column that is not all null
  *         but lacks min or max keeps the file; otherwise the function's test (table below)
  * rows    LeafPredicate.test(row): a null value fails every function but IS NULL
  * }}}
  *
  * Stats tests (`nc` = null count, `n` = row count; an all-null column (`nc = n`) fails all but IS NULL):
  * {{{
  * =  lit in [min, max]     <>  lit != min || lit != max     <  lit > min    <=  lit >= min
  * >  lit < max             >=  lit <= max                   BETWEEN a b  a <= max && b >= min
  * IN any lit in [min, max] NOT IN no lit equals both min and max
  * IS NULL  nc unknown or > 0                               IS NOT NULL  nc unknown or < n
  * }}}
  *
  * Values compare as Java's `compareTo` of Paimon's internal values: strings as unsigned UTF-8
  * bytes, binary as signed bytes then length, FLOAT/DOUBLE with `Float/Double.compare` (NaN
  * greatest, -0.0 < 0.0), timestamps by (millis, nanos). Hand-written: the shapes and tests
  * decide which files Paimon reads, so they are copied rule for rule.
  */
object Predicates {
  import Op._
  import Predicate.{And, Leaf, Or}

  /** The predicate that holds everywhere (Paimon's `AlwaysTrue`; `Condition.Undecided`). */
  val AlwaysTrue: Predicate = Condition.Undecided

  /** Statistics of one column of a data file (or of a manifest's partitions). */
  final case class ColumnStats(min: Any, max: Any, nullCount: Option[Long])

  val UnknownStats: ColumnStats = ColumnStats(null, null, None)

  /** Paimon's `PredicateBuilder.in` limit: larger IN lists stay one leaf. */
  private val InExpansionLimit = 20

  // ------------------------------------------------------------------------------------------
  // Shapes

  /** The tree `PredicateBuilder` builds for a bound condition (or, and, in, notIn, between). */
  def paimonShape(p: Predicate, types: String => Option[KeyType]): Predicate = p match {
    case And(cs) if cs.isEmpty => p
    case And(cs)               => and(cs.map(paimonShape(_, types)), types)
    case Or(cs)                => or(cs.map(paimonShape(_, types)))
    case Leaf(In, c, lits) if lits.size <= InExpansionLimit => or(lits.map(l => Leaf(Equal, c, Seq(l))))
    case Leaf(NotIn, c, lits) if lits.size <= InExpansionLimit =>
      if (lits.size == 1) Leaf(NotEqual, c, lits) else And(lits.map(l => Leaf(NotEqual, c, Seq(l))))
    case leaf => leaf
  }

  /** The conjuncts of `p` (`PredicateBuilder.splitAnd`). */
  def splitAnd(p: Predicate): Seq[Predicate] = p match {
    case And(cs) => cs.flatMap(splitAnd)
    case other   => Seq(other)
  }

  def splitOr(p: Predicate): Seq[Predicate] = p match {
    case Or(cs) => cs.flatMap(splitOr)
    case other  => Seq(other)
  }

  /** `PredicateBuilder.and`: true children dropped; the leaves' `<=` / `>=` of one column merged
    * into BETWEEN when the range is not empty (`Between.optimize`). */
  def and(children: Seq[Predicate], types: String => Option[KeyType]): Predicate = {
    val kept = children.filterNot(_ == AlwaysTrue)
    if (kept.isEmpty) AlwaysTrue
    else if (kept.size == 1) kept.head
    else {
      val leaves = kept.flatMap(splitAnd)
      val (comparable, others) = leaves.partition {
        case Leaf(_, column, _) => types(column).isDefined
        case _                  => false
      }
      val byColumn = comparable.collect { case l: Leaf => l }.groupBy(_.column).toSeq.sortBy(_._1)
      val merged = others ++ byColumn.flatMap { case (column, ls) => mergeRanges(column, ls, types(column).get) }
      if (merged.size == 1) merged.head else And(merged)
    }
  }

  /** `PredicateBuilder.or`: nested ORs flattened; a true child makes the OR true. */
  def or(children: Seq[Predicate]): Predicate =
    if (children.contains(AlwaysTrue)) AlwaysTrue
    else {
      val flat = children.flatMap(splitOr)
      if (flat.size == 1) flat.head else Or(flat)
    }

  /** `Between.mergeLessAndGreaterToBetween` then `mergeMultipleBetweens` for one column. */
  private def mergeRanges(column: String, leaves: Seq[Leaf], t: KeyType): Seq[Predicate] = {
    def cmp(a: Any, b: Any): Int = compare(t, a, b)
    val les = leaves.filter(_.op == LessOrEqual)
    val ges = leaves.filter(_.op == GreaterOrEqual)
    val rest = leaves.filter(l => l.op != LessOrEqual && l.op != GreaterOrEqual)
    // the tightest of each (on a tie the later one, as Paimon's `< 0 ? kept : new`)
    val le = les.reduceOption((a, b) => if (cmp(a.literals.head, b.literals.head) < 0) a else b)
    val ge = ges.reduceOption((a, b) => if (cmp(a.literals.head, b.literals.head) > 0) a else b)
    val ranged: Seq[Leaf] = (le, ge) match {
      case (Some(l), Some(g)) =>
        if (cmp(g.literals.head, l.literals.head) >= 0) rest ++ Seq(l, g)
        else rest :+ Leaf(Between, column, Seq(g.literals.head, l.literals.head))
      case _ => rest ++ le ++ ge
    }
    val betweens = ranged.filter(_.op == Between)
    if (betweens.size <= 1) ranged
    else {
      val lower = betweens.map(_.literals(0)).reduce((a, b) => if (cmp(b, a) > 0) b else a)
      val upper = betweens.map(_.literals(1)).reduce((a, b) => if (cmp(b, a) < 0) b else a)
      val others = ranged.filter(_.op != Between)
      if (cmp(lower, upper) <= 0) others :+ Leaf(Between, column, Seq(lower, upper)) else others ++ betweens
    }
  }

  /** The columns `p` refers to. */
  def columns(p: Predicate): Set[String] = p match {
    case And(cs)            => cs.flatMap(columns).toSet
    case Or(cs)             => cs.flatMap(columns).toSet
    case Leaf(_, column, _) => Set(column)
  }

  /** `PredicateProjectionConverter` onto `fields`: leaves on other columns dropped from ANDs; an
    * OR needs every child. None when nothing is left. */
  def project(p: Predicate, fields: Set[String]): Option[Predicate] = p match {
    case l @ Leaf(_, column, _) => if (fields.contains(column)) Some(l) else None
    case And(cs) =>
      val kept = cs.flatMap(project(_, fields))
      if (kept.isEmpty) None else Some(if (kept.size == 1) kept.head else And(kept))
    case Or(cs) =>
      val kept = cs.map(project(_, fields))
      if (kept.forall(_.isDefined)) Some(Or(kept.flatten)) else None
  }

  /** `SchemaEvolutionUtil.devolveFilters` of one conjunct: the leaves renamed to the data file's
    * column of the same field id, literals kept when the types are equal or narrowed exactly from
    * a wider integer type; None when a leaf cannot be devolved (a column the file lacks is kept
    * as is with `keepNewField`). */
  def devolve(p: Predicate, table: TableSchema, data: TableSchema, keepNewField: Boolean): Option[Predicate] = {
    val dataById = data.fields.map(f => f.id -> f).toMap
    def leaf(l: Leaf): Option[Predicate] = {
      val tableField = table.field(l.column)
      dataById.get(tableField.id) match {
        case None => if (keepNewField) Some(l) else None
        case Some(dataField) =>
          (tableField.dataType, dataField.dataType) match {
            case (DataType.Atomic(from, _), DataType.Atomic(to, _)) =>
              castLiteralsWithEvolution(l.literals, from, to).map(lits => Leaf(l.op, dataField.name, lits))
            case _ => None
          }
      }
    }
    def visit(q: Predicate): Option[Predicate] = q match {
      case l: Leaf => leaf(l)
      case And(cs) =>
        val converted = cs.map(visit)
        if (converted.forall(_.isDefined)) Some(and(converted.flatten, data.keyTypeOf)) else None
      case Or(cs) =>
        val converted = cs.map(visit)
        if (converted.forall(_.isDefined)) Some(or(converted.flatten)) else None
    }
    visit(p)
  }

  private val IntegerRank: Map[KeyType, Int] =
    Map(KeyType.TinyIntType -> 1, KeyType.SmallIntType -> 2, KeyType.IntType -> 3, KeyType.BigIntType -> 4)

  /** `CastExecutors.castLiteralsWithEvolution`: equal types keep the literals; from a wider to a
    * narrower integer type only when every literal survives; anything else drops the leaf. */
  private def castLiteralsWithEvolution(literals: Seq[Any], from: KeyType, to: KeyType): Option[Seq[Any]] =
    if (from == to) Some(literals)
    else
      (IntegerRank.get(from), IntegerRank.get(to)) match {
        case (Some(f), Some(t)) if f > t =>
          val narrowed = literals.map { l =>
            val v = l.asInstanceOf[Number].longValue
            val n: Any = to match {
              case KeyType.TinyIntType  => v.toByte
              case KeyType.SmallIntType => v.toShort
              case _                    => v.toInt
            }
            if (n.asInstanceOf[Number].longValue == v) Some(n) else None
          }
          if (narrowed.forall(_.isDefined)) Some(narrowed.flatten) else None
        case _ => None
      }

  // ------------------------------------------------------------------------------------------
  // Tests

  /** Java's `compareTo` of two non-null internal values of type `t`. */
  def compare(t: KeyType, a: Any, b: Any): Int = (a, b) match {
    case (x: Boolean, y: Boolean)                       => java.lang.Boolean.compare(x, y)
    case (x: Float, y: Float)                           => java.lang.Float.compare(x, y)
    case (x: Double, y: Double)                         => java.lang.Double.compare(x, y)
    case (x: java.math.BigDecimal, y: java.math.BigDecimal) => x.compareTo(y)
    case (x: String, y: String) =>
      IndexValue.compareBytes(x.getBytes(StandardCharsets.UTF_8), y.getBytes(StandardCharsets.UTF_8))
    case (x: Array[Byte], y: Array[Byte]) =>
      val n = math.min(x.length, y.length)
      var i = 0
      while (i < n && x(i) == y(i)) i += 1
      if (i < n) x(i) - y(i) else x.length - y.length
    case ((m1: Long, n1: Int), (m2: Long, n2: Int)) =>
      val c = java.lang.Long.compare(m1, m2)
      if (c != 0) c else Integer.compare(n1, n2)
    case (x: Number, y: Number) => java.lang.Long.compare(x.longValue, y.longValue)
    case _ => throw new IllegalArgumentException(s"cannot compare $a and $b as $t")
  }

  /** The order of serialized trimmed primary keys of `types` (Paimon's generated key comparator:
    * field by field, nulls first, each in its type's natural order); each key is decoded once. */
  def keyOrdering(types: Seq[KeyType], source: String): Ordering[Array[Byte]] = {
    val decoded = mutable.HashMap.empty[java.nio.ByteBuffer, IndexedSeq[Any]]
    def key(bytes: Array[Byte]) = decoded.getOrElseUpdate(java.nio.ByteBuffer.wrap(bytes), BinaryRow.deserialize(bytes, types, source))
    (a: Array[Byte], b: Array[Byte]) => {
      val (x, y) = (key(a), key(b))
      types.indices.iterator.map { i =>
        (x(i), y(i)) match {
          case (null, null) => 0
          case (null, _)    => -1
          case (_, null)    => 1
          case (u, v)       => compare(types(i), u, v)
        }
      }.find(_ != 0).getOrElse(0)
    }
  }

  /** `Predicate.test(rowCount, min, max, nullCounts)`: whether a file (or manifest) whose columns
    * have these statistics may hold a matching row. `stats` gives a column's type and stats. */
  def mayMatch(p: Predicate, rowCount: Long, stats: String => (KeyType, ColumnStats)): Boolean = p match {
    case And(cs) => cs.forall(mayMatch(_, rowCount, stats))
    case Or(cs)  => cs.exists(mayMatch(_, rowCount, stats))
    case Leaf(op, column, lits) =>
      val (t, ColumnStats(min, max, nullCount)) = stats(column)
      val allNull = nullCount.contains(rowCount)
      if (!allNull && (min == null || max == null)) true
      else {
        def c(a: Any, b: Any): Int = compare(t, a, b)
        op match {
          case IsNull    => nullCount.forall(_ > 0)
          case IsNotNull => nullCount.forall(_ < rowCount)
          case _ if allNull => false
          case In    => lits.exists(l => l != null && c(l, min) >= 0 && c(l, max) <= 0)
          case NotIn => !lits.exists(l => l == null || (c(l, min) == 0 && c(l, max) == 0))
          case _ if lits.contains(null) && nullCount.isDefined => false
          case Equal          => c(lits.head, min) >= 0 && c(lits.head, max) <= 0
          case NotEqual       => c(lits.head, min) != 0 || c(lits.head, max) != 0
          case LessThan       => c(lits.head, min) > 0
          case LessOrEqual    => c(lits.head, min) >= 0
          case GreaterThan    => c(lits.head, max) < 0
          case GreaterOrEqual => c(lits.head, max) <= 0
          case Between        => c(lits(0), max) <= 0 && c(lits(1), min) >= 0
        }
      }
  }

  /** `Predicate.test(row)` over one row's values (`value` gives a column's type and value). */
  def holds(p: Predicate, value: String => (KeyType, Any)): Boolean = p match {
    case And(cs) => cs.forall(holds(_, value))
    case Or(cs)  => cs.exists(holds(_, value))
    case Leaf(op, column, lits) =>
      val (t, v) = value(column)
      def c(l: Any): Int = compare(t, l, v)
      op match {
        case IsNull               => v == null
        case IsNotNull            => v != null
        case _ if v == null       => false
        case In                   => lits.exists(l => l != null && c(l) == 0)
        case NotIn                => !lits.exists(l => l == null || c(l) == 0)
        case _ if lits.contains(null) => false
        case Equal                => c(lits.head) == 0
        case NotEqual             => c(lits.head) != 0
        case LessThan             => c(lits.head) > 0
        case LessOrEqual          => c(lits.head) >= 0
        case GreaterThan          => c(lits.head) < 0
        case GreaterOrEqual       => c(lits.head) <= 0
        case Between              => c(lits(0)) <= 0 && c(lits(1)) >= 0
      }
  }
}
