package org.apache.spark.sql.indexbridge

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import io.indexbridge.paimon.fileindex.{Op, Predicate}
import org.apache.spark.sql.{Column, DataFrame, Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical.Filter
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/** Spark conditions as file-index predicates ([[Predicate]], Paimon's leaf functions).
  *
  * The condition is analysed against the data file's schema, then translated leaf by leaf:
  *
  * {{{
  * c = v, v = c, c <=> v          equal           c <> v           not_equal
  * c < v, c <= v, c > v, c >= v   the comparisons (flipped when the literal is on the left)
  * c IN (v, ...)                  in              c NOT IN (...)   not_in
  * c IS NULL, c IS NOT NULL       is_null, is_not_null             c <=> NULL   is_null
  * BETWEEN                        (analysed as c >= a AND c <= b)
  * AND, OR                        and, or         NOT              pushed down (De Morgan, negated comparisons)
  * }}}
  *
  * `c` is a column or `m['key']` of a map column (the index named `m[key]`), possibly under a
  * widening cast (int to bigint, decimal to a wider decimal) when the literal converts back
  * exactly; `v` is any constant of the column's type. Anything else (other functions, casts
  * that change values, floating-point comparisons with zero or NaN, non-binary collations, NULL literals)
  * becomes `And()`, which every index answers with REMAIN: a leaf it cannot translate can never
  * make a file or row be skipped wrongly.
  */
object FileIndexConditions {

  /** The predicate that always answers REMAIN. */
  val Remain: Predicate = Predicate.And(Nil)

  /** A SQL condition (`spark.sql` syntax) analysed against `schema`. */
  def analyze(spark: SparkSession, schema: StructType, condition: String): Expression =
    analyzed(spark, schema, _.where(condition))

  def analyze(spark: SparkSession, schema: StructType, condition: Column): Expression =
    analyzed(spark, schema, _.where(condition))

  private def analyzed(spark: SparkSession, schema: StructType, where: DataFrame => DataFrame): Expression = {
    val empty = spark.createDataFrame(java.util.Collections.emptyList[Row](), schema)
    where(empty).asInstanceOf[org.apache.spark.sql.classic.Dataset[Row]].queryExecution.analyzed.collectFirst {
      case f: Filter => f.condition
    }.get
  }

  /** The predicate of an analysed condition (module table). */
  def translate(e: Expression): Predicate = translate(e, negated = false)

  private def translate(e: Expression, negated: Boolean): Predicate = e match {
    case Not(child)                  => translate(child, !negated)
    case r: RuntimeReplaceable       => translate(r.replacement, negated) // BETWEEN and friends
    case w: With                     => translate(inline(w), negated)      // what BETWEEN is replaced by
    case And(l, r) if !negated       => Predicate.And(Seq(translate(l, false), translate(r, false)))
    case And(l, r)                   => Predicate.Or(Seq(translate(l, true), translate(r, true)))
    case Or(l, r) if !negated        => Predicate.Or(Seq(translate(l, false), translate(r, false)))
    case Or(l, r)                    => Predicate.And(Seq(translate(l, true), translate(r, true)))
    case IsNull(c)                   => nullTest(c, if (negated) Op.IsNotNull else Op.IsNull)
    case IsNotNull(c)                => nullTest(c, if (negated) Op.IsNull else Op.IsNotNull)
    case EqualNullSafe(c, v) if !negated && v.foldable && v.eval() == null => nullTest(c, Op.IsNull)
    case EqualNullSafe(v, c) if !negated && v.foldable && v.eval() == null => nullTest(c, Op.IsNull)
    case EqualNullSafe(l, r) if !negated => comparison(l, r, Op.Equal)
    case EqualTo(l, r)               => comparison(l, r, if (negated) Op.NotEqual else Op.Equal)
    case LessThan(l, r)              => comparison(l, r, if (negated) Op.GreaterOrEqual else Op.LessThan)
    case LessThanOrEqual(l, r)       => comparison(l, r, if (negated) Op.GreaterThan else Op.LessOrEqual)
    case GreaterThan(l, r)           => comparison(l, r, if (negated) Op.LessOrEqual else Op.GreaterThan)
    case GreaterThanOrEqual(l, r)    => comparison(l, r, if (negated) Op.LessThan else Op.GreaterOrEqual)
    case In(c, list) if list.forall(_.foldable) => membership(c, list.map(_.eval()), list.headOption.map(_.dataType), negated)
    case InSet(c, set)               => membership(c, set.toSeq, Some(c.dataType), negated)
    case _                           => Remain
  }

  /** A `With` whose common expressions are substituted where they are referenced. */
  private def inline(w: With): Expression = {
    val defs = w.defs.map(d => d.id -> d.child).toMap
    w.child.transform { case r: CommonExpressionRef if defs.contains(r.id) => defs(r.id) }
  }

  private def nullTest(c: Expression, op: Op): Predicate = column(c).fold(Remain) { case (name, _, _) => Predicate.Leaf(op, name) }

  private def comparison(left: Expression, right: Expression, op: Op): Predicate =
    if (right.foldable && !left.foldable) leaf(left, op, Seq(right.eval()), right.dataType)
    else if (left.foldable && !right.foldable) leaf(right, flip(op), Seq(left.eval()), left.dataType)
    else Remain

  private def flip(op: Op): Op = op match {
    case Op.LessThan       => Op.GreaterThan
    case Op.LessOrEqual    => Op.GreaterOrEqual
    case Op.GreaterThan    => Op.LessThan
    case Op.GreaterOrEqual => Op.LessOrEqual
    case other             => other
  }

  private def membership(c: Expression, values: Seq[Any], t: Option[DataType], negated: Boolean): Predicate =
    if (values.isEmpty || values.contains(null)) Remain
    else leaf(c, if (negated) Op.NotIn else Op.In, values, t.get)

  private def leaf(c: Expression, op: Op, values: Seq[Any], literalType: DataType): Predicate =
    column(c) match {
      case Some((name, t, castFrom)) if literalType == t && values.forall(_ != null) =>
        val inColumnType = castFrom.fold(Option(values))(from => values.map(narrow(_, t, from)).foldRight(Option(Seq.empty[Any])) {
          case (Some(v), Some(acc)) => Some(v +: acc)
          case _                    => None
        })
        val columnType = castFrom.getOrElse(t)
        inColumnType.filter(vs => answerable(columnType, op, vs)) match {
          case Some(vs) => Predicate.Leaf(op, name, vs.map(v => literal(columnType, v)))
          case None     => Remain
        }
      case _ => Remain
    }

  /** String literals stay strings (the codecs take a String or its UTF-8 bytes), so that their
    * JSON form is the text; binary literals are bytes. */
  private def literal(t: DataType, v: Any): Any = v match {
    case s: UTF8String => s.toString
    case _             => SparkFileIndexTypes.value(t, v)
  }

  /** The value `v` of the wider type `to` in the column's type `from`, when it converts exactly. */
  private def narrow(v: Any, to: DataType, from: DataType): Option[Any] = {
    val back = Cast(Literal(v, to), from).eval()
    if (back != null && Cast(Literal(back, from), to).eval() == v) Some(back) else None
  }

  /** Floating point: Spark's comparisons treat -0.0 = 0.0 and NaN = NaN, the indexes work on the
    * bits (range-bitmap: `Double.compare` order, -0.0 < 0.0), so only questions about values
    * other than zero and NaN are asked; both order NaN last, so such comparisons agree (the
    * bloom filter and the bitmap index answer ranges with REMAIN, range-bitmap exactly). Strings:
    * only the binary collation orders and compares as the indexes do. */
  private def answerable(t: DataType, op: Op, values: Seq[Any]): Boolean = t match {
    case FloatType | DoubleType =>
      Seq(Op.Equal, Op.NotEqual, Op.In, Op.NotIn, Op.LessThan, Op.LessOrEqual, Op.GreaterThan, Op.GreaterOrEqual).contains(op) &&
        values.forall { v => val d = v.asInstanceOf[Number].doubleValue; d != 0.0 && !d.isNaN }
    case st: StringType => st == StringType
    case _              => true
  }

  /** The index name, type and (under a widening cast) original type of a column reference. */
  private def column(e: Expression): Option[(String, DataType, Option[DataType])] = e match {
    case a: AttributeReference if SparkFileIndexTypes.keyType(a.dataType).isDefined => Some((a.name, a.dataType, None))
    case GetMapValue(a: AttributeReference, key) if key.foldable && key.dataType.isInstanceOf[StringType] && key.eval() != null =>
      a.dataType match {
        case MapType(_: StringType, v, _) if SparkFileIndexTypes.keyType(v).isDefined =>
          Some((s"${a.name}[${key.eval().asInstanceOf[UTF8String]}]", v, None))
        case _ => None
      }
    case Cast(child, to, _, _) if child.dataType == to => column(child)
    case Cast(child, to, _, _) if widening(child.dataType, to) =>
      column(child).collect { case (name, from, None) => (name, to, Some(from)) }
    case _ => None
  }

  private def widening(from: DataType, to: DataType): Boolean = (from, to) match {
    case (FloatType, DoubleType) => true
    case (ByteType, ShortType | IntegerType | LongType) | (ShortType, IntegerType | LongType) | (IntegerType, LongType) => true
    case (f: DecimalType, t: DecimalType) => t.scale >= f.scale && t.precision - t.scale >= f.precision - f.scale
    case _ => false
  }

  // -- JSON for the Python engine (the vectors' predicate and typed-value encoding) ----------

  private val mapper = new ObjectMapper

  /** `{"and": [...]}`, `{"or": [...]}` or `{"op", "column", "literals"}` with literals encoded as
    * the vectors encode typed values (BIGINT as a string, FLOAT/DOUBLE as hex bits, binary as
    * hex, DECIMAL as a string, timestamps as `{"millis", "nanos"}`). */
  def toJson(p: Predicate): String = mapper.writeValueAsString(node(p))

  private def node(p: Predicate): ObjectNode = {
    val n = mapper.createObjectNode()
    p match {
      case Predicate.And(children) => val a = n.putArray("and"); children.foreach(c => a.add(node(c)))
      case Predicate.Or(children)  => val a = n.putArray("or"); children.foreach(c => a.add(node(c)))
      case Predicate.Leaf(op, column, literals) =>
        n.put("op", op.name).put("column", column)
        val a = n.putArray("literals")
        literals.foreach {
          case s: String                  => a.add(s)
          case b: Boolean                 => a.add(b)
          case b: Byte                    => a.add(b.toInt)
          case s: Short                   => a.add(s.toInt)
          case i: Int                     => a.add(i)
          case l: Long                    => a.add(l.toString)
          case f: Float                   => a.add(f"0x${java.lang.Float.floatToRawIntBits(f)}%08x")
          case d: Double                  => a.add(f"0x${java.lang.Double.doubleToRawLongBits(d)}%016x")
          case d: java.math.BigDecimal    => a.add(d.toPlainString)
          case (millis: Long, nanos: Int) => a.addObject().put("millis", millis).put("nanos", nanos)
          case bytes: Array[Byte]         => a.add(java.util.HexFormat.of.formatHex(bytes))
          case other                      => throw new IllegalStateException(s"no JSON form for literal $other")
        }
    }
    n
  }
}
