package io.indexbridge.paimon.fileindex

import java.math.{BigDecimal => JBigDecimal}
import java.nio.charset.StandardCharsets
import java.time.{DateTimeException, LocalDate}
import java.util.HexFormat
import java.util.regex.{Matcher, Pattern}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.{BooleanNode, NullNode}
import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.KeyType._
import org.apache.spark.SparkThrowable
import org.apache.spark.sql.catalyst.{expressions => cat}
import org.apache.spark.sql.catalyst.analysis.{UnresolvedAttribute, UnresolvedExtractValue, UnresolvedFunction}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.parser.{CatalystSqlParser, ParseException}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.{types => spark}
import org.apache.spark.unsafe.types.UTF8String

/** File-index predicates from conditions written in Spark SQL: the condition is parsed by Spark's
  * own `CatalystSqlParser.parseExpression` (so it reads exactly as in a Spark job), and the
  * Catalyst tree is translated. The language is Spark's expression grammar restricted to what a
  * file index can answer:
  *
  * {{{
  * condition  := condition AND condition | condition OR condition | NOT condition | ( condition )
  *             | column op literal | literal op column          -- op: = == <> != < <= > >=
  *             | column [NOT] IN (literal, ...) | column [NOT] BETWEEN literal AND literal
  *             | column IS [NOT] NULL
  * column     := name | `quoted name` | column[string or integer]   -- m['k'] is the column "m[k]"
  * literal    := any Spark literal (numbers with their suffixes, strings, X'..', TRUE, FALSE, NULL,
  *               DATE/TIMESTAMP/TIMESTAMP_NTZ/TIMESTAMP_LTZ '..'), signed, or CAST of one
  * }}}
  *
  * Literals are valued as Spark evaluates them (Spark 4's ANSI casts, TIMESTAMP literals in UTC).
  * Python's `indexbridge.paimon.fileindex.condition` (sqlglot) is held to the same trees and errors
  * by `tests/conditions.json` and by generated conditions (`tests/test_condition.py`). NOT is pushed
  * down to the leaves and what becomes [[Condition.Undecided]] is described there.
  *
  * Parsed literals: `Long` (integers), `java.math.BigDecimal`, `Double` (FLOAT literals hold a
  * float's value), `String`, `Array[Byte]`, `Boolean`, `null`, `LocalDate`, and
  * `(epochMillis: Long, nanoOfMillisecond: Int)` for timestamps. [[bind]] turns them into the
  * [[IndexValue]] conventions of each column.
  */
object Condition {

  /** A subtree no index can decide: evaluates to REMAIN. */
  val Undecided: Predicate = Predicate.And(Nil)

  import Op._
  import Predicate.{And, Leaf, Or}

  private val negated: Map[Op, Op] = Map(
    Equal -> NotEqual, NotEqual -> Equal, In -> NotIn, NotIn -> In, IsNull -> IsNotNull, IsNotNull -> IsNull,
    LessThan -> GreaterOrEqual, GreaterOrEqual -> LessThan, LessOrEqual -> GreaterThan, GreaterThan -> LessOrEqual)
  private val mirrored: Map[Op, Op] = Map(
    Equal -> Equal, NotEqual -> NotEqual, LessThan -> GreaterThan, GreaterThan -> LessThan,
    LessOrEqual -> GreaterOrEqual, GreaterOrEqual -> LessOrEqual)

  // ------------------------------------------------------------------------------------------
  // Tree building: flattening and Undecided absorption, the same in parse, negate and bind

  /** AND of the children: nested ANDs flattened, Undecided children dropped (x AND REMAIN = x). */
  def conjunction(children: Seq[Predicate]): Predicate = {
    val flat = children.flatMap { case And(cs) => cs; case c => Seq(c) }
    if (flat.size == 1) flat.head else And(flat)
  }

  /** OR of the children: nested ORs flattened; Undecided if any child is (x OR REMAIN = REMAIN). */
  def disjunction(children: Seq[Predicate]): Predicate =
    if (children.contains(Undecided)) Undecided
    else {
      val flat = children.flatMap { case Or(cs) => cs; case c => Seq(c) }
      if (flat.size == 1) flat.head else Or(flat)
    }

  /** NOT p, pushed down to the leaves. */
  def negate(p: Predicate): Predicate = p match {
    case And(cs) => if (cs.isEmpty) Undecided else disjunction(cs.map(negate))
    case Or(cs)  => conjunction(cs.map(negate))
    case Leaf(Between, column, Seq(lo, hi)) => disjunction(Seq(Leaf(LessThan, column, Seq(lo)), Leaf(GreaterThan, column, Seq(hi))))
    case Leaf(op, column, literals) => Leaf(negated(op), column, literals)
  }

  // ------------------------------------------------------------------------------------------
  // Literal values

  private def inBits(n: BigInt, bits: Int): Boolean = n >= -(BigInt(1) << (bits - 1)) && n < (BigInt(1) << (bits - 1))

  /** `Float.parseFloat` / `(float)` of an exact number: the nearest float, ties to even. */
  private def float32(exact: Any): Float = exact match {
    case d: JBigDecimal => d.floatValue() // correctly rounded: exact float arithmetic or Float.parseFloat
    case d: Double      => d.toFloat
    case l: Long        => l.toFloat
  }

  private val TimePattern = Pattern.compile("\\s*(\\d{1,2}):(\\d{1,2})(?::(\\d{1,2})(?:\\.(\\d{1,9}))?)?\\s*")
  private val DecimalText = Pattern.compile("\\s*[+-]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d{1,4})?\\s*")

  private def group(m: Matcher, i: Int, default: String = "0"): String = Option(m.group(i)).getOrElse(default)

  private final case class TimeOfDay(millis: Int, nanos: Int)

  private def parseTime(text: String): TimeOfDay = {
    val m = TimePattern.matcher(text)
    if (!m.matches() || m.group(1).toInt > 23 || m.group(2).toInt > 59 || group(m, 3).toInt > 59)
      throw new IllegalArgumentException(s"'$text' is not a time (hh:mm:ss[.fraction])")
    val nanos = group(m, 4, "").padTo(9, '0').toInt
    TimeOfDay((m.group(1).toInt * 3600 + m.group(2).toInt * 60 + group(m, 3).toInt) * 1000 + nanos / 1000000, nanos % 1000000)
  }

  private val FloatWords = Map(
    "NAN" -> Double.NaN, "INFINITY" -> Double.PositiveInfinity, "+INFINITY" -> Double.PositiveInfinity,
    "-INFINITY" -> Double.NegativeInfinity, "INF" -> Double.PositiveInfinity, "+INF" -> Double.PositiveInfinity,
    "-INF" -> Double.NegativeInfinity)

  /** A number in a string, as `new java.math.BigDecimal(String)` reads it (trimmed). */
  def decimalOf(text: String): JBigDecimal =
    if (DecimalText.matcher(text).matches()) new JBigDecimal(text.trim)
    else throw new IllegalArgumentException(s"'$text' is not a number")

  /** A string cast to FLOAT/DOUBLE: NaN and the infinities by name, else the exact number. */
  private def floating(text: String): Any = FloatWords.getOrElse(
    text.trim.toUpperCase(java.util.Locale.ROOT), {
      val d = decimalOf(text)
      if (d.signum == 0 && text.trim.startsWith("-")) -0.0 else d // Float.parseFloat("-0.0") is negative zero
    })

  private def exactDecimal(v: Any): JBigDecimal = v match {
    case l: Long        => JBigDecimal.valueOf(l)
    case d: Double      => new JBigDecimal(d)
    case d: JBigDecimal => d
  }

  /** `CAST(literal AS target)` for the literals Spark prints that way. */
  // ------------------------------------------------------------------------------------------
  // Parsing: Spark's own parser, its Catalyst tree translated to predicates

  /** The conf the conditions are read under: Spark 4's defaults (ANSI casts), TIMESTAMP literals in UTC. */
  private val conf = {
    val c = new SQLConf
    c.setConf(SQLConf.ANSI_ENABLED, true)
    c.setConf(SQLConf.SESSION_LOCAL_TIMEZONE, "UTC")
    c
  }

  /** The predicate of a Spark SQL condition, with SQL literals: `CatalystSqlParser.parseExpression`'s
    * tree, translated. Errors name the offset (in code points) in `text`. */
  def parse(text: String, source: String = "condition"): Predicate = {
    val expression =
      try SQLConf.withExistingConf(conf)(CatalystSqlParser.parseExpression(text))
      catch {
        case e: ParseException => throw parseError(text, source, e)
        case e: SparkThrowable => // DecimalType's own check, thrown while the parser builds the type
          throw new IndexFormatException(source, 0, s"a valid data type (${e.getCondition})")
      }
    new Translation(text, source).condition(expression)
  }

  /** Spark's parse error as ours: a literal or type Spark rejects (its query context names the
    * text), else a syntax error at the position of Spark's offending token. */
  private def parseError(text: String, source: String, e: ParseException): IndexFormatException =
    e.getQueryContext.headOption match {
      case Some(c) if c.startIndex >= 0 =>
        val expected = if (e.getCondition.startsWith("UNSUPPORTED_DATATYPE")) "a type name" else "a valid literal"
        new IndexFormatException(source, c.startIndex, s"$expected, found '${c.fragment}'")
      case _ =>
        val lineStart = text.linesWithSeparators.take(e.start.line.getOrElse(1) - 1).map(l => l.codePointCount(0, l.length)).sum
        new IndexFormatException(source, lineStart + e.start.startPosition.getOrElse(0), SyntaxExpected)
    }

  private val SyntaxExpected = "a condition in Spark SQL syntax"

  private final class Translation(text: String, source: String) {
    private val length = text.codePointCount(0, text.length)

    /** Where `e` was written; Spark's shared constants (TRUE, FALSE) carry no origin of this text. */
    private def ours(e: Expression): Boolean = e.origin.sqlText.contains(text) && e.origin.startIndex.isDefined

    private def at(e: Expression): Int = if (ours(e)) e.origin.startIndex.get else 0

    private def end(e: Expression): Int = if (ours(e)) e.origin.stopIndex.fold(at(e))(_ + 1) else length

    private def fragment(from: Int, to: Int): String =
      text.substring(text.offsetByCodePoints(0, from), text.offsetByCodePoints(0, to))

    private def fragment(e: Expression): String = fragment(at(e), end(e))

    private def error(e: Expression, expected: String): IndexFormatException =
      new IndexFormatException(source, at(e), s"$expected, found '${fragment(e)}'")

    def condition(e: Expression): Predicate = e match {
      case cat.And(l, r)                => conjunction(Seq(condition(l), condition(r)))
      case cat.Or(l, r)                 => disjunction(Seq(condition(l), condition(r)))
      case cat.Not(c)                   => negate(condition(c))
      case cat.EqualTo(l, r)            => comparison(e, Equal, l, r)
      case cat.LessThan(l, r)           => comparison(e, LessThan, l, r)
      case cat.LessThanOrEqual(l, r)    => comparison(e, LessOrEqual, l, r)
      case cat.GreaterThan(l, r)        => comparison(e, GreaterThan, l, r)
      case cat.GreaterThanOrEqual(l, r) => comparison(e, GreaterOrEqual, l, r)
      case cat.In(v, list)              => Leaf(In, column(v), list.map(literal))
      case cat.IsNull(c)                => Leaf(IsNull, column(c))
      case cat.IsNotNull(c)             => Leaf(IsNotNull, column(c))
      case f: UnresolvedFunction if f.nameParts.map(_.toLowerCase(java.util.Locale.ROOT)) == Seq("between") && f.arguments.size == 3 =>
        Leaf(Between, column(f.arguments.head), Seq(literal(f.arguments(1)), literal(f.arguments(2))))
      case a: cat.Alias => // `i = 1 b` is `i = 1 AS b` to Spark: text after a whole condition
        condition(a.child) // errors inside the condition come first
        val after = end(a.child)
        val start = after + fragment(after, length).takeWhile(Character.isWhitespace).length
        throw new IndexFormatException(source, start, s"AND, OR or the end of the condition, found '${fragment(start, end(a))}'")
      case other => throw error(other, "a comparison, IN, BETWEEN, IS [NOT] NULL, AND, OR or NOT")
    }

    private def comparison(e: Expression, op: Op, left: Expression, right: Expression): Predicate =
      (columnName(left), columnName(right)) match {
        case (Some(c), None) => Leaf(op, c, Seq(literal(right)))
        case (None, Some(c)) => Leaf(mirrored(op), c, Seq(literal(left)))
        case _               => throw new IndexFormatException(source, at(e), "a comparison of one column with a literal")
      }

    private def column(e: Expression): String = columnName(e).getOrElse(throw error(e, "a column name"))

    /** `name`, `` `quoted` ``, and map entries `m['k']` / `m[1]` named `m[k]` / `m[1]`. */
    private def columnName(e: Expression): Option[String] = e match {
      case UnresolvedAttribute(Seq(name)) => Some(name)
      case a: UnresolvedAttribute         => throw error(a, "a column name (backquote a name holding '.')")
      case UnresolvedExtractValue(child, key) =>
        columnName(child).map { name =>
          key match {
            case cat.Literal(k: UTF8String, _)                                            => s"$name[$k]"
            case cat.Literal(k @ (_: Int | _: Long), spark.IntegerType | spark.LongType) => s"$name[$k]"
            case _ => throw error(key, "a map key (a string or an integer)")
          }
        }
      case _ => None
    }

    /** A literal, typed literal, signed literal or CAST of one, valued as Spark evaluates it. */
    private def literal(e: Expression): Any = {
      def constant(x: Expression): Boolean = x match {
        case _: cat.Literal       => true
        case c: cat.Cast          => constant(c.child)
        case m: cat.UnaryMinus    => constant(m.child)
        case p: cat.UnaryPositive => constant(p.child)
        case _                    => false
      }
      if (!constant(e)) throw error(e, "a literal (number, string, TRUE, FALSE, NULL, typed literal, CAST)")
      val zoned = e.transform { case c: cat.Cast => c.withTimeZone("UTC") }
      val value =
        try if (zoned.resolved) Some(SQLConf.withExistingConf(conf)(zoned.eval())) else None
        catch { case _: SparkThrowable | _: ArithmeticException | _: NumberFormatException | _: DateTimeException => None }
      value.flatMap(v => fromCatalyst(v, zoned.dataType)).getOrElse(throw error(e, "a valid literal")) match {
        case Null => null
        case v    => v
      }
    }
  }

  private case object Null

  /** A Catalyst value as a parsed literal (the conventions above); None for kinds no column holds. */
  private def fromCatalyst(v: Any, t: spark.DataType): Option[Any] = (v, t) match {
    case (null, _)                                                   => Some(Null)
    case (d: Int, spark.DateType)                                    => Some(LocalDate.ofEpochDay(d.toLong))
    case (us: Long, spark.TimestampType | spark.TimestampNTZType)   => Some((Math.floorDiv(us, 1000L), Math.floorMod(us, 1000L).toInt * 1000))
    case (n: Number, spark.ByteType | spark.ShortType | spark.IntegerType | spark.LongType) => Some(n.longValue)
    case (d: spark.Decimal, _: spark.DecimalType)                    => Some(d.toJavaBigDecimal)
    case (d: Double, spark.DoubleType)                               => Some(d)
    case (f: Float, spark.FloatType)                                 => Some(f.toDouble)
    case (s: UTF8String, _: spark.StringType)                        => Some(s.toString)
    case (b: Array[Byte], spark.BinaryType)                          => Some(b)
    case (b: Boolean, spark.BooleanType)                             => Some(b)
    case _                                                           => None
  }

  // ------------------------------------------------------------------------------------------
  // Binding literals to column types

  /** The literal is no value of the column's type: the leaf is Undecided. */
  private object Inexact extends RuntimeException(null, null, false, false)

  private def notComparable(t: KeyType, v: Any): Nothing =
    throw new IllegalArgumentException(s"a $t column is not comparable with ${literalJson(v)}")

  private def integral(v: Any): BigInt = v match {
    case l: Long => BigInt(l)
    case d: JBigDecimal =>
      try BigInt(d.toBigIntegerExact)
      catch { case _: ArithmeticException => throw Inexact }
    case d: Double if !d.isNaN && !d.isInfinite && d == Math.rint(d) => BigInt(new JBigDecimal(d).toBigInteger)
    case _: Double => throw Inexact
  }

  /** The [[IndexValue]] a non-null SQL literal stands for in a column of type `t`. Throws
    * `Inexact` when no value of the type equals it, IllegalArgumentException when the two
    * cannot be compared. */
  private def columnValue(t: KeyType, v: Any): Any = {
    val isNumber = v match { case _: Long | _: Double | _: JBigDecimal => true; case _ => false }
    if (v.isInstanceOf[Boolean] && t != BooleanType && !IndexValue.isString(t)) notComparable(t, v)
    t match {
      case CharType(_) | VarCharType(_) =>
        v match { case s: String => s; case _ => throw Inexact } // Spark would cast the column
      case BinaryType(_) | VarBinaryType(_) =>
        v match { case s: String => s.getBytes(StandardCharsets.UTF_8); case b: Array[Byte] => b; case _ => notComparable(t, v) }
      case BooleanType =>
        v match {
          case b: Boolean => b
          case s: String =>
            s.trim.toLowerCase(java.util.Locale.ROOT) match {
              case "true"  => true
              case "false" => false
              case _       => throw new IllegalArgumentException(s"'$s' is not a BOOLEAN value")
            }
          case _ => notComparable(t, v)
        }
      case _ if v.isInstanceOf[String] => columnValue(t, fromString(t, v.asInstanceOf[String]))
      case TinyIntType | SmallIntType | IntType | BigIntType if isNumber =>
        val n = integral(v)
        t match {
          case TinyIntType  => if (inBits(n, 8)) n.toByte else throw Inexact
          case SmallIntType => if (inBits(n, 16)) n.toShort else throw Inexact
          case IntType      => if (inBits(n, 32)) n.toInt else throw Inexact
          case _            => if (inBits(n, 64)) n.toLong else throw Inexact
        }
      case FloatType | DoubleType if isNumber =>
        v match {
          case d: Double if d.isNaN || d.isInfinite => if (t == FloatType) d.toFloat else d
          case _ =>
            val f: Double = v match {
              case _ if t == FloatType => float32(v).toDouble
              case d: Double           => d // keeps -0.0
              case _                   => exactDecimal(v).doubleValue()
            }
            if (f.isInfinite || new JBigDecimal(f).compareTo(exactDecimal(v)) != 0) throw Inexact
            if (t == FloatType) f.toFloat else f
        }
      case DecimalType(_, _) if v.isInstanceOf[Double] && (v.asInstanceOf[Double].isNaN || v.asInstanceOf[Double].isInfinite) =>
        throw Inexact
      case DecimalType(precision, scale) if isNumber =>
        val unscaled =
          try exactDecimal(v).setScale(scale).unscaledValue.longValueExact()
          catch { case _: ArithmeticException => throw Inexact }
        if (BigInt(unscaled).abs >= BigInt(10).pow(precision)) throw Inexact
        JBigDecimal.valueOf(unscaled, scale)
      case DateType =>
        v match {
          case d: LocalDate => d.toEpochDay.toInt
          case (millis: Long, nanos: Int) =>
            if (Math.floorMod(millis, 86400000L) != 0 || nanos != 0) throw Inexact
            Math.floorDiv(millis, 86400000L).toInt
          case _ => notComparable(t, v)
        }
      case TimeType(_) =>
        v match {
          case TimeOfDay(millis, nanos) =>
            if (nanos != 0) throw Inexact // finer than the millisecond key
            millis
          case _ => notComparable(t, v)
        }
      case TimestampType(_) | LocalZonedTimestampType(_) =>
        val precision = t match { case TimestampType(p) => p; case LocalZonedTimestampType(p) => p; case _ => 0 }
        v match {
          case d: LocalDate => (d.toEpochDay * 86400000L, 0)
          case (millis: Long, nanos: Int) =>
            val nanosOfSecond = Math.floorMod(millis, 1000L) * 1000000L + nanos
            if (nanosOfSecond % (if (precision <= 3) 1000000L else if (precision <= 6) 1000L else 1L) != 0) throw Inexact // finer than the key
            (millis, nanos)
          case _ => notComparable(t, v)
        }
      case _ => notComparable(t, v)
    }
  }

  /** A string cast to a date or timestamp by Spark's own `Cast` (ANSI, UTC session zone). */
  private def sparkCast(text: String, t: spark.DataType): Any =
    try fromCatalyst(SQLConf.withExistingConf(conf)(cat.Cast(cat.Literal(text), t, Some("UTC")).eval()), t).get
    catch { case _: SparkThrowable | _: DateTimeException => throw new IllegalArgumentException(s"'$text' is not a $t") }

  /** A string literal compared with a column of another type, read as Spark casts it. */
  private def fromString(t: KeyType, text: String): Any =
    try
      t match {
        case DateType                                        => sparkCast(text, spark.DateType)
        case TimeType(_)                                     => parseTime(text)
        case TimestampType(_) | LocalZonedTimestampType(_)   => sparkCast(text, spark.TimestampType)
        case FloatType | DoubleType                          => floating(text)
        case _                                               => decimalOf(text)
      }
    catch {
      case _: IllegalArgumentException | _: ArithmeticException => throw new IllegalArgumentException(s"'$text' is not a $t value")
    }

  /** The predicate with each literal converted to its column's [[IndexValue]]; leaves the indexes
    * cannot decide become [[Undecided]]. `types` gives the type of the values each indexed
    * column holds (None: unknown). */
  def bind(predicate: Predicate, types: String => Option[KeyType]): Predicate = predicate match {
    case And(cs) => if (cs.isEmpty) predicate else conjunction(cs.map(bind(_, types)))
    case Or(cs)  => disjunction(cs.map(bind(_, types)))
    case Leaf(op, column, all) =>
      val literals = if (op == In) all.filter(_ != null) else all
      types(column) match {
        case Some(t) if !literals.contains(null) && !(op == In && literals.isEmpty) =>
          try Leaf(op, column, literals.map(columnValue(t, _)))
          catch { case Inexact => Undecided }
        case _ => Undecided
      }
  }

  // ------------------------------------------------------------------------------------------
  // JSON (the shared table of conditions, `inspect --query`)

  private val mapper = new ObjectMapper()

  /** A literal as JSON, the same as Python's `literal_json`. */
  def literalJson(value: Any): JsonNode = value match {
    case null       => NullNode.instance
    case b: Boolean => BooleanNode.valueOf(b)
    case _ =>
      val node = mapper.createObjectNode()
      value match {
        case n @ (_: Byte | _: Short | _: Int | _: Long) => node.put("int", n.toString)
        case d: JBigDecimal             => node.put("decimal", d.toPlainString)
        case d: Double                  => node.put("double", f"${java.lang.Double.doubleToLongBits(d)}%016x")
        case f: Float                   => node.put("double", f"${java.lang.Double.doubleToLongBits(f.toDouble)}%016x")
        case s: String                  => node.put("string", s)
        case b: Array[Byte]             => node.put("binary", HexFormat.of().formatHex(b))
        case d: LocalDate               => node.put("date", d.toEpochDay)
        case (millis: Long, nanos: Int) => node.putArray("timestamp").add(millis).add(nanos)
        case other                      => throw new IllegalArgumentException(s"not a literal: $other")
      }
      node
  }

  /** A tree in the vectors' predicate form (`{"and": [...]}`, `{"op", "column", "literals"}`). */
  def predicateJson(p: Predicate): JsonNode = {
    val node = mapper.createObjectNode()
    p match {
      case And(cs) => val array = node.putArray("and"); cs.foreach(c => array.add(predicateJson(c)))
      case Or(cs)  => val array = node.putArray("or"); cs.foreach(c => array.add(predicateJson(c)))
      case Leaf(op, column, literals) =>
        node.put("op", op.name).put("column", column)
        val array = node.putArray("literals")
        literals.foreach(l => array.add(literalJson(l)))
    }
    node
  }

  /** Many conditions at once, as the shared table's entries (`{"parsed", "bound"}`, `{"parsed",
    * "bind_error": true}` or `{"error": {"offset", "message"}}`) in a JSON array: one py4j call
    * for a batch (the cross-language tests). `typesJson` maps columns to SQL types. */
  def tableJson(conditionsJson: String, typesJson: String): String = {
    val types = mapper.readTree(typesJson).fields.asScala.map(e => e.getKey -> KeyType.parse(e.getValue.asText)).toMap
    val out = mapper.createArrayNode()
    mapper.readTree(conditionsJson).elements.asScala.foreach { c =>
      val node = out.addObject()
      try {
        val parsed = parse(c.asText, "q")
        node.set[JsonNode]("parsed", predicateJson(parsed))
        try node.set[JsonNode]("bound", predicateJson(bind(parsed, types.get)))
        catch { case _: IllegalArgumentException => node.put("bind_error", true) }
      } catch {
        case e: IndexFormatException => node.putObject("error").put("offset", e.offset).put("message", e.expected)
      }
    }
    mapper.writeValueAsString(out)
  }
}
