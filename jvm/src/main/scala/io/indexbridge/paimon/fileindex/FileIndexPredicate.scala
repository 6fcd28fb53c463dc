package io.indexbridge.paimon.fileindex

import io.indexbridge.paimon.KeyType
import org.roaringbitmap.RoaringBitmap

/** What a file index answers (Paimon's `FileIndexResult`, spec §8): REMAIN (cannot exclude the
  * file), SKIP (no row matches) or a row set (`BitmapIndexResult`, which remains when non-empty).
  *
  * {{{
  * and   REMAIN.and(x) = x      SKIP.and(x) = SKIP    Rows.and(Rows) = intersection
  *       Rows.and(other) = Rows if other remains, else SKIP
  * or    REMAIN.or(x) = REMAIN  SKIP.or(x) = x        Rows.or(Rows) = union
  *       Rows.or(other) = REMAIN if other remains, else Rows
  * }}}
  */
sealed trait FileIndexResult {
  def remain: Boolean
  def and(other: FileIndexResult): FileIndexResult
  def or(other: FileIndexResult): FileIndexResult
}

object FileIndexResult {
  case object Remain extends FileIndexResult {
    def remain = true
    def and(other: FileIndexResult): FileIndexResult = other
    def or(other: FileIndexResult): FileIndexResult = Remain
  }

  case object Skip extends FileIndexResult {
    def remain = false
    def and(other: FileIndexResult): FileIndexResult = Skip
    def or(other: FileIndexResult): FileIndexResult = other
  }

  /** Rows of the data file (0-based ordinals, nulls counted). `rows` is the result's own bitmap,
    * never shared. A result over a bitmap its reader keeps ([[Rows.shared]]: a bitmap index's rows
    * of a key, read once per reader as Paimon's are) copies it the first time `rows` is read, as
    * Paimon's lazy `BitmapIndexResult` computes its bitmap: `remain`, `and` and `or` copy nothing
    * (200 equality queries of a 100-value column spent a third of their time in copies). */
  final class Rows private (private val source: RoaringBitmap, isShared: Boolean) extends FileIndexResult {
    lazy val rows: RoaringBitmap = if (isShared) source.clone() else source
    def remain: Boolean = !source.isEmpty
    def and(other: FileIndexResult): FileIndexResult = other match {
      case o: Rows       => Rows(RoaringBitmap.and(source, o.source))
      case o if o.remain => this
      case _             => Skip
    }
    def or(other: FileIndexResult): FileIndexResult = other match {
      case o: Rows       => Rows(RoaringBitmap.or(source, o.source))
      case o if o.remain => Remain
      case _             => this
    }
    override def equals(other: Any): Boolean = other match {
      case o: Rows => source == o.source
      case _       => false
    }
    override def hashCode: Int = source.hashCode
    override def toString: String = s"Rows($source)"
  }

  object Rows {

    /** A result owning `rows`. */
    def apply(rows: RoaringBitmap): Rows = new Rows(rows, isShared = false)

    /** A result over `rows`, which its reader keeps and nobody modifies. */
    def shared(rows: RoaringBitmap): Rows = new Rows(rows, isShared = true)

    def unapply(result: Rows): Some[RoaringBitmap] = Some(result.rows)
  }
}

/** The predicate operations a file index can be asked (Paimon's leaf functions). */
sealed abstract class Op(val name: String)

object Op {
  case object Equal extends Op("equal")
  case object NotEqual extends Op("not_equal")
  case object In extends Op("in")
  case object NotIn extends Op("not_in")
  case object IsNull extends Op("is_null")
  case object IsNotNull extends Op("is_not_null")
  case object LessThan extends Op("less_than")
  case object LessOrEqual extends Op("less_or_equal")
  case object GreaterThan extends Op("greater_than")
  case object GreaterOrEqual extends Op("greater_or_equal")
  case object Between extends Op("between")

  val all: Seq[Op] = Seq(Equal, NotEqual, In, NotIn, IsNull, IsNotNull, LessThan, LessOrEqual, GreaterThan, GreaterOrEqual, Between)
  private val byName = all.map(o => o.name -> o).toMap

  def parse(name: String): Op = byName.getOrElse(name, throw new IllegalArgumentException(s"unknown predicate operation '$name'"))

  /** How many literals the operation takes (-1: one or more). */
  def arity(op: Op): Int = op match {
    case IsNull | IsNotNull => 0
    case In | NotIn         => -1
    case Between            => 2
    case _                  => 1
  }
}

/** One index of one column, asked one question at a time. Literals are values of the column's
  * type ([[IndexValue]]); a SQL NULL literal is `null`. */
trait FileIndexReader {
  def evaluate(op: Op, literals: Seq[Any]): FileIndexResult
}

/** One order of a top-N (Paimon's `SortValue`): `direction` `ASCENDING`/`DESCENDING`,
  * `nullOrdering` `NULLS_FIRST`/`NULLS_LAST`. */
final case class SortOrder(column: String, direction: String = "ASCENDING", nullOrdering: String = "NULLS_LAST") {
  def descending: Boolean = direction == "DESCENDING"
  def nullsFirst: Boolean = nullOrdering == "NULLS_FIRST"
}

/** Paimon's `TopN`: sort orders (indexes look at the first only) and the limit. */
final case class TopN(orders: Seq[SortOrder], limit: Int)

/** An index that can rank rows (`visitTopN`; range-bitmap); every other index answers REMAIN. */
trait TopNReader {
  def visitTopN(topN: TopN, result: FileIndexResult): FileIndexResult
}

/** The reader of a container entry whose writer produced no bytes (`start = -1`, spec §4.1). */
object EmptyFileIndexReader extends FileIndexReader {
  import Op._
  def evaluate(op: Op, literals: Seq[Any]): FileIndexResult = op match {
    case Equal | In | IsNotNull | LessThan | LessOrEqual | GreaterThan | GreaterOrEqual => FileIndexResult.Skip
    case _                                                                               => FileIndexResult.Remain
  }
}

/** A predicate over the columns of one data file. */
sealed trait Predicate

object Predicate {
  final case class Leaf(op: Op, column: String, literals: Seq[Any] = Nil) extends Predicate
  final case class And(children: Seq[Predicate]) extends Predicate
  final case class Or(children: Seq[Predicate]) extends Predicate
}

/** Paimon's `FileIndexPredicate` over the index readers of one data file: a container's, or any lookup (spec §8).
  *
  * {{{
  * leaf   REMAIN, AND-ed with the answer of every index of the column, stopping once it does
  *        not remain; a column without an index answers REMAIN
  * and    children folded with `and`, stopping once the result does not remain
  * or     children folded with `or`
  * }}}
  *
  * `evaluateTopN` is Paimon's `evaluateTopN` (see there).
  *
  * Paimon collects a column's readers into a `HashSet` of objects with identity hash codes, so
  * its leaf order is arbitrary. Here the indexes that answer with row sets (bitmap, bsi, range-bitmap) come
  * first, then the others, each in header order. The order only decides between SKIP and an
  * empty row set when two indexes both exclude the file (this one reports the empty row set, as
  * the vectors' Paimon run did); `remain` and the rows do not depend on it.
  */
final class FileIndexPredicate(lookup: String => Seq[FileIndexReader]) {
  private val readers = scala.collection.mutable.HashMap.empty[String, Seq[FileIndexReader]]

  def this(container: FileIndexContainer, types: String => Option[KeyType]) =
    this((column: String) => types(column).map(t => container.readers(column, t)).getOrElse(Nil))

  def this(container: FileIndexContainer, fields: Seq[DataField]) = this(container, FileIndexPredicate.fieldTypes(fields))

  /** The readers of `column` (empty without an index or without a type for it). */
  def readersOf(column: String): Seq[FileIndexReader] =
    readers.getOrElseUpdate(
      column,
      lookup(column).sortBy {
        case _: BitmapIndex.Reader | _: BitSliceIndex.Reader | _: RangeBitmapIndex.Reader => 0
        case _                                                                           => 1
      }
    )

  def evaluate(predicate: Predicate): FileIndexResult = predicate match {
    case Predicate.Leaf(op, column, literals) =>
      val it = readersOf(column).iterator
      var result: FileIndexResult = FileIndexResult.Remain
      while (it.hasNext && result.remain) result = result.and(it.next().evaluate(op, literals))
      result
    case Predicate.And(children) =>
      if (children.isEmpty) FileIndexResult.Remain
      else {
        val it = children.iterator
        var result = evaluate(it.next())
        while (it.hasNext && result.remain) result = result.and(evaluate(it.next()))
        result
      }
    case Predicate.Or(children) =>
      if (children.isEmpty) FileIndexResult.Remain
      else children.tail.foldLeft(evaluate(children.head))((r, c) => r.or(evaluate(c)))
  }

  /** Paimon's `evaluateTopN`: `result` unchanged when it does not remain or is a row set of at
    * most `limit` rows; else the first answer other than REMAIN of the first order's column's
    * indexes (only range-bitmap ranks rows), else `result`. */
  def evaluateTopN(topN: TopN, result: FileIndexResult): FileIndexResult =
    if (topN == null || !result.remain) result
    else
      result match {
        case FileIndexResult.Rows(rows) if rows.getLongCardinality <= topN.limit => result
        case _ =>
          readersOf(topN.orders.head.column).iterator
            .collect { case r: TopNReader => r.visitTopN(topN, result) }
            .find(_ != FileIndexResult.Remain)
            .getOrElse(result)
      }
}

object FileIndexPredicate {

  /** The type of each index name of a data file with these fields: a plain field's type, and
    * for `m[k]` the value type of map field `m`. */
  def fieldTypes(fields: Seq[DataField]): String => Option[KeyType] = {
    val plain = fields.filterNot(_.isMap).map(f => f.name -> f.valueType).toMap
    val maps = fields.filter(_.isMap).map(f => f.name -> f.valueType).toMap
    name => {
      val open = name.indexOf('[')
      plain.get(name).orElse(if (open > 0 && name.endsWith("]")) maps.get(name.substring(0, open)) else None)
    }
  }
}
