package io.indexbridge.paimon.fileindex

import java.math.{BigDecimal => JBigDecimal, RoundingMode}
import java.nio.charset.StandardCharsets
import java.time.{DateTimeException, LocalDate}
import java.util.HexFormat
import java.util.regex.{Matcher, Pattern}

import scala.collection.mutable.ArrayBuffer

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.{BooleanNode, NullNode}
import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.KeyType._

/** File-index predicates from conditions written in Spark SQL (what `Expression.sql` prints): the
  * Scala twin of Python's `indexbridge.paimon.fileindex.condition`, held to the same trees and
  * errors by `tests/conditions.json`. The grammar, the NOT push-down and what becomes
  * [[Condition.Undecided]] are described there; in short:
  *
  * {{{
  * condition  := or EOF;  or := and (OR and)*;  and := not (AND not)*
  * not        := NOT not | '(' or ')' | comparison
  * comparison := operand (= | == | <> | != | < | <= | > | >=) operand     -- one side a column
  *             | column [NOT] IN (literal, ...) | column IS [NOT] NULL | column [NOT] BETWEEN literal AND literal
  * column     := name | `quoted` | column '[' string-or-integer ']'       -- m['k'] is "m[k]"
  * literal    := [+|-] number | 'string' | X'hex' | TRUE | FALSE | NULL | DATE '…' | TIMESTAMP '…'
  *             | TIMESTAMP_NTZ '…' | TIMESTAMP_LTZ '…' | CAST(literal AS type)
  * number     := 12 | 12L | 12S | 12Y | 1.5 | 1.5BD | 1.5D | 1e3 | 1.5F
  * }}}
  *
  * Hand-written rather than Spark's `CatalystSqlParser`: the parse must equal Python's exactly
  * (trees, error offsets and messages) and work without Spark on the classpath (`inspect --engine jvm`).
  *
  * Parsed literals: `Long` (integers; beyond a long a `java.math.BigDecimal`), `java.math.BigDecimal`,
  * `Double` (FLOAT literals hold a float's value), `String`, `Array[Byte]`, `Boolean`, `null`,
  * `LocalDate`, and `(epochMillis: Long, nanoOfMillisecond: Int)` for timestamps (UTC unless the
  * text carries an offset). [[bind]] turns them into the [[IndexValue]] conventions of each column.
  */
object Condition {

  /** A subtree no index can decide: evaluates to REMAIN. */
  val Undecided: Predicate = Predicate.And(Nil)

  import Op._
  import Predicate.{And, Leaf, Or}

  private val negated: Map[Op, Op] = Map(
    Equal -> NotEqual, NotEqual -> Equal, In -> NotIn, NotIn -> In, IsNull -> IsNotNull, IsNotNull -> IsNull,
    LessThan -> GreaterOrEqual, GreaterOrEqual -> LessThan, LessOrEqual -> GreaterThan, GreaterThan -> LessOrEqual)
  private val comparisons: Map[String, Op] = Map(
    "=" -> Equal, "==" -> Equal, "<>" -> NotEqual, "!=" -> NotEqual, "<" -> LessThan, "<=" -> LessOrEqual,
    ">" -> GreaterThan, ">=" -> GreaterOrEqual)
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
  // Tokens

  private val TokenPattern = Pattern.compile(
    "(?<space>\\s+)" +
      "|(?<number>(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d{1,4})?(?:BD|[LSYDF])?(?![A-Za-z0-9_]))" +
      "|(?<hex>[xX]'[0-9A-Fa-f]*')" +
      "|(?<string>'(?:[^'\\\\]++|\\\\.|'')*+')" +
      "|(?<quoted>`(?:[^`]++|``)*+`)" +
      "|(?<name>[A-Za-z_][A-Za-z0-9_]*)" +
      "|(?<op><=|>=|<>|!=|==|[=<>(),\\[\\]+-])",
    Pattern.DOTALL | Pattern.CASE_INSENSITIVE
  )
  private val Kinds = Seq("space", "number", "hex", "string", "quoted", "name", "op")
  private val Escapes = Map('0' -> "\u0000", 'b' -> "\b", 'n' -> "\n", 'r' -> "\r", 't' -> "\t", 'Z' -> "\u001a", '%' -> "\\%", '_' -> "\\_")
  private val Hex4 = Pattern.compile("[0-9A-Fa-f]{4}")

  /** Spark's `unescapeSQLString` for one literal body, plus the standard `''` for a quote. */
  private def unescape(body: String): String = {
    val out = new java.lang.StringBuilder
    var i = 0
    while (i < body.length) {
      val c = body.charAt(i)
      if (c == '\'' && body.startsWith("''", i)) { out.append('\''); i += 2 }
      else if (c == '\\' && i + 1 < body.length) {
        val n = body.charAt(i + 1)
        if (n == 'u' && i + 6 <= body.length && Hex4.matcher(body.substring(i + 2, i + 6)).matches()) {
          out.append(Integer.parseInt(body.substring(i + 2, i + 6), 16).toChar); i += 6
        } else { out.append(Escapes.getOrElse(n, n.toString)); i += 2 }
      } else { out.append(c); i += 1 }
    }
    out.toString
  }

  /** A token; `pos` counts UTF-16 units, errors report code points as Python does. */
  private final case class Token(kind: String, text: String, pos: Int) {
    def keyword(words: String*): Boolean = kind == "name" && words.contains(text.toUpperCase(java.util.Locale.ROOT))
    def describe: String = if (kind == "end") "the end of the condition" else s"'$text'"
  }

  private def tokens(text: String, source: String): IndexedSeq[Token] = {
    val out = ArrayBuffer.empty[Token]
    val m = TokenPattern.matcher(text)
    var pos = 0
    while (pos < text.length) {
      m.region(pos, text.length)
      if (!m.lookingAt()) {
        val what = if ("'`".indexOf(text.charAt(pos)) >= 0) "a closing quote" else "a name, literal, operator or parenthesis"
        val excerpt = text.substring(pos, text.offsetByCodePoints(pos, math.min(10, text.codePointCount(pos, text.length))))
        throw new IndexFormatException(source, text.codePointCount(0, pos), s"$what, found '$excerpt'")
      }
      val kind = Kinds.find(k => m.group(k) != null).get
      if (kind != "space") out += Token(kind, m.group(), pos)
      pos = m.end()
    }
    out += Token("end", "", text.length)
    out.toIndexedSeq
  }

  // ------------------------------------------------------------------------------------------
  // Literal values

  private val IntBits = Map("TINYINT" -> 8, "SMALLINT" -> 16, "INTEGER" -> 32, "BIGINT" -> 64)
  private val SuffixTypes = Map('L' -> "BIGINT", 'S' -> "SMALLINT", 'Y' -> "TINYINT")

  private def inBits(n: BigInt, bits: Int): Boolean = n >= -(BigInt(1) << (bits - 1)) && n < (BigInt(1) << (bits - 1))

  private def signedDecimal(d: JBigDecimal, negative: Boolean): JBigDecimal = if (negative) d.negate() else d

  /** A numeric literal as Spark's parser types it. */
  private def number(text: String, negative: Boolean): Any = {
    val upper = text.toUpperCase(java.util.Locale.ROOT)
    val sign = if (negative) -1 else 1
    if (upper.endsWith("BD")) signedDecimal(new JBigDecimal(text.dropRight(2)), negative)
    else
      upper.last match {
        case s if SuffixTypes.contains(s) =>
          val digits = text.dropRight(1)
          val typeName = SuffixTypes(s)
          if (!digits.forall(_.isDigit) || !inBits(BigInt(digits) * sign, IntBits(typeName)))
            throw new IllegalArgumentException(s"${if (negative) "-" else ""}$text is not a $typeName literal")
          (BigInt(digits) * sign).toLong
        case 'D' => sign * java.lang.Double.parseDouble(text.dropRight(1))
        case 'F' => sign * float32(new JBigDecimal(text.dropRight(1))).toDouble
        case _ if upper.contains("E") => sign * java.lang.Double.parseDouble(text)
        case _ if text.contains(".") || !inBits(BigInt(text) * sign, 64) => signedDecimal(new JBigDecimal(text), negative)
        case _ => (BigInt(text) * sign).toLong
      }
  }

  /** `Float.parseFloat` / `(float)` of an exact number: the nearest float, ties to even. */
  private def float32(exact: Any): Float = exact match {
    case d: JBigDecimal => d.floatValue() // correctly rounded: exact float arithmetic or Float.parseFloat
    case d: Double      => d.toFloat
    case l: Long        => l.toFloat
  }

  private val DatePattern = Pattern.compile("\\s*(\\d{4})-(\\d{1,2})-(\\d{1,2})\\s*")
  private val TimestampPattern = Pattern.compile(
    "\\s*(\\d{4})-(\\d{1,2})-(\\d{1,2})(?:[ T](\\d{1,2}):(\\d{1,2})(?::(\\d{1,2})(?:\\.(\\d{1,9}))?)?)?\\s*(Z|UTC|[+-]\\d{1,2}:\\d{2})?\\s*",
    Pattern.CASE_INSENSITIVE)
  private val TimePattern = Pattern.compile("\\s*(\\d{1,2}):(\\d{1,2})(?::(\\d{1,2})(?:\\.(\\d{1,9}))?)?\\s*")
  private val DecimalText = Pattern.compile("\\s*[+-]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d{1,4})?\\s*")

  private def group(m: Matcher, i: Int, default: String = "0"): String = Option(m.group(i)).getOrElse(default)

  private def date(m: Matcher, text: String): LocalDate =
    try {
      if (m.group(1).toInt < 1) throw new DateTimeException("year 0")
      LocalDate.of(m.group(1).toInt, m.group(2).toInt, m.group(3).toInt)
    } catch { case _: DateTimeException => throw new IllegalArgumentException(s"'$text' is not a valid date") }

  def parseDate(text: String): LocalDate = {
    val m = DatePattern.matcher(text)
    if (!m.matches()) throw new IllegalArgumentException(s"'$text' is not a date (yyyy-mm-dd)")
    date(m, text)
  }

  /** `yyyy-mm-dd[ hh:mm[:ss[.fraction]]][Z|UTC|+hh:mm]` as UTC `(epochMillis, nanoOfMillisecond)`. */
  def parseTimestamp(text: String): (Long, Int) = {
    val m = TimestampPattern.matcher(text)
    if (!m.matches()) throw new IllegalArgumentException(s"'$text' is not a timestamp (yyyy-mm-dd hh:mm:ss[.fraction][+hh:mm])")
    val day = date(m, text)
    val (hour, minute, second) = (group(m, 4).toInt, group(m, 5).toInt, group(m, 6).toInt)
    if (hour > 23 || minute > 59 || second > 59) throw new IllegalArgumentException(s"'$text' is not a valid time of day")
    val nanos = group(m, 7, "").padTo(9, '0').toInt
    var seconds = day.toEpochDay * 86400L + hour * 3600L + minute * 60L + second
    val zone = group(m, 8, "Z").toUpperCase(java.util.Locale.ROOT)
    if (zone != "Z" && zone != "UTC") {
      val Array(hh, mm) = zone.substring(1).split(":")
      seconds -= (if (zone.charAt(0) == '-') -1 else 1) * (hh.toLong * 3600 + mm.toLong * 60)
    }
    (seconds * 1000 + nanos / 1000000, nanos % 1000000)
  }

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

  private val CastTypes = Map(
    "TINYINT" -> "TINYINT", "BYTE" -> "TINYINT", "SMALLINT" -> "SMALLINT", "SHORT" -> "SMALLINT", "INT" -> "INTEGER",
    "INTEGER" -> "INTEGER", "BIGINT" -> "BIGINT", "LONG" -> "BIGINT", "FLOAT" -> "FLOAT", "REAL" -> "FLOAT",
    "DOUBLE" -> "DOUBLE", "DECIMAL" -> "DECIMAL", "DEC" -> "DECIMAL", "NUMERIC" -> "DECIMAL", "STRING" -> "STRING",
    "VARCHAR" -> "STRING", "CHAR" -> "STRING", "BOOLEAN" -> "BOOLEAN", "DATE" -> "DATE", "TIMESTAMP" -> "TIMESTAMP",
    "TIMESTAMP_NTZ" -> "TIMESTAMP", "TIMESTAMP_LTZ" -> "TIMESTAMP", "BINARY" -> "BINARY")

  private def exactDecimal(v: Any): JBigDecimal = v match {
    case l: Long        => JBigDecimal.valueOf(l)
    case d: Double      => new JBigDecimal(d)
    case d: JBigDecimal => d
  }

  /** `CAST(literal AS target)` for the literals Spark prints that way. */
  private def cast(value: Any, target: String, args: Seq[Int]): Any = (value, target) match {
    case (null, _) => null
    case (v, t) if IntBits.contains(t) =>
      val n: BigInt = v match {
        case s: String      => BigInt(decimalOf(s).toBigInteger)
        case l: Long        => BigInt(l)
        case d: JBigDecimal => BigInt(d.toBigInteger)
        case d: Double if !d.isNaN && !d.isInfinite => BigInt(new JBigDecimal(d).toBigInteger)
        case _ => throw new IllegalArgumentException(s"cannot cast ${literalJson(v)} to $t")
      }
      if (!inBits(n, IntBits(t))) throw new IllegalArgumentException(s"$v is out of range for $t")
      n.toLong
    case (v @ (_: String | _: Long | _: Double | _: JBigDecimal), "FLOAT" | "DOUBLE") =>
      val exact = v match { case s: String => floating(s); case other => other }
      exact match {
        case d: Double if target == "FLOAT" => d.toFloat.toDouble
        case d: Double                      => d
        case e if target == "FLOAT"         => float32(e).toDouble
        case e                              => exactDecimal(e).doubleValue()
      }
    case (v @ (_: String | _: Long | _: JBigDecimal), "DECIMAL") =>
      val (precision, scale) = (args.headOption.getOrElse(10), if (args.size > 1) args(1) else 0)
      if (precision < 1 || precision > 38 || scale < 0 || scale > precision)
        throw new IllegalArgumentException(s"DECIMAL($precision, $scale) is not a valid type")
      val d = (v match { case s: String => decimalOf(s); case o => exactDecimal(o) }).setScale(scale, RoundingMode.HALF_UP)
      if (d.unscaledValue.abs.compareTo(java.math.BigInteger.TEN.pow(precision)) >= 0)
        throw new IllegalArgumentException(s"$v does not fit DECIMAL($precision, $scale)")
      d
    case (s: String, "STRING")       => s
    case (l: Long, "STRING")         => l.toString
    case (d: JBigDecimal, "STRING")  => d.toPlainString
    case (b: Boolean, "BOOLEAN")     => b
    case (s: String, "BOOLEAN") if Set("true", "false").contains(s.trim.toLowerCase(java.util.Locale.ROOT)) =>
      s.trim.toLowerCase(java.util.Locale.ROOT) == "true"
    case (s: String, "DATE")         => parseDate(s)
    case (d: LocalDate, "DATE")      => d
    case (s: String, "TIMESTAMP")    => parseTimestamp(s)
    case (t: (Long, Int) @unchecked, "TIMESTAMP") if isTimestamp(t) => t
    case (d: LocalDate, "TIMESTAMP") => (d.toEpochDay * 86400000L, 0)
    case (s: String, "BINARY")       => s.getBytes(StandardCharsets.UTF_8)
    case (b: Array[Byte], "BINARY")  => b
    case (v, t)                      => throw new IllegalArgumentException(s"cannot cast ${literalJson(v)} to $t")
  }

  private def isTimestamp(v: Any): Boolean = v match {
    case (_: Long, _: Int) => true
    case _                 => false
  }

  // ------------------------------------------------------------------------------------------
  // Parser

  private sealed trait Operand
  private final case class ColumnRef(name: String) extends Operand
  private final case class LiteralValue(value: Any) extends Operand

  private final class Parser(text: String, source: String) {
    private val toks = tokens(text, source)
    private var i = 0

    private def token: Token = toks(i)

    private def error(expected: String, t: Token = null): IndexFormatException = {
      val at = if (t == null) token else t
      new IndexFormatException(source, offset(at), s"$expected, found ${at.describe}")
    }

    private def offset(t: Token): Int = text.codePointCount(0, t.pos)

    private def span(start: Token): String = {
      val end = if (token.pos > start.pos) token.pos else start.pos + start.text.length
      text.substring(start.pos, end).trim
    }

    private def advance(): Token = { val t = token; i += 1; t }

    private def accept(words: String*): Boolean =
      if (token.keyword(words: _*) || (token.kind == "op" && words.contains(token.text))) { i += 1; true }
      else false

    private def expect(word: String, expected: String): Unit = if (!accept(word)) throw error(expected)

    def condition(): Predicate = {
      val p = disjunctionRule()
      if (token.kind != "end") throw error("AND, OR or the end of the condition")
      p
    }

    private def disjunctionRule(): Predicate = {
      val children = ArrayBuffer(conjunctionRule())
      while (accept("OR")) children += conjunctionRule()
      disjunction(children.toList)
    }

    private def conjunctionRule(): Predicate = {
      val children = ArrayBuffer(negation())
      while (accept("AND")) children += negation()
      conjunction(children.toList)
    }

    private def negation(): Predicate =
      if (accept("NOT")) negate(negation())
      else if (accept("(")) {
        val p = disjunctionRule()
        expect(")", "')'")
        p
      } else comparison()

    private def comparison(): Predicate = {
      val start = token
      val left = operand()
      left match {
        case ColumnRef(name) =>
          val not = accept("NOT")
          if (accept("IN")) {
            expect("(", "'(' after IN")
            val values = ArrayBuffer(literal())
            while (accept(",")) values += literal()
            expect(")", "',' or ')' in the IN list")
            val leaf = Leaf(In, name, values.toList)
            return if (not) negate(leaf) else leaf
          }
          if (accept("BETWEEN")) {
            val lo = literal()
            expect("AND", "AND in BETWEEN")
            val leaf = Leaf(Between, name, List(lo, literal()))
            return if (not) negate(leaf) else leaf
          }
          if (not) throw error("IN or BETWEEN after NOT")
          if (accept("IS")) {
            val op = if (accept("NOT")) IsNotNull else IsNull
            expect("NULL", "NULL")
            return Leaf(op, name)
          }
        case _ =>
      }
      if (token.kind != "op" || !comparisons.contains(token.text)) throw error("a comparison (=, <>, <, <=, >, >=, IN, BETWEEN, IS)")
      val op = comparisons(advance().text)
      (left, operand()) match {
        case (ColumnRef(name), LiteralValue(v)) => Leaf(op, name, List(v))
        case (LiteralValue(v), ColumnRef(name)) => Leaf(mirrored(op), name, List(v))
        case _ => throw new IndexFormatException(source, offset(start), "a comparison of one column with a literal")
      }
    }

    private def operand(): Operand = {
      val t = token
      if (t.kind == "quoted" || (t.kind == "name" && !startsLiteral(t))) column() else LiteralValue(literal())
    }

    private def startsLiteral(t: Token): Boolean =
      t.keyword("TRUE", "FALSE", "NULL", "CAST") ||
        (t.keyword("DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ") && toks(i + 1).kind == "string")

    private def column(): ColumnRef = {
      val t = advance()
      val name = new java.lang.StringBuilder(t.kind match {
        case "quoted" => t.text.substring(1, t.text.length - 1).replace("``", "`")
        case "name"   => t.text
        case _        => throw error("a column name", t)
      })
      while (accept("[")) {
        val key = token
        if (key.kind == "string") name.append('[').append(unescape(key.text.substring(1, key.text.length - 1))).append(']')
        else if (key.kind == "number" && key.text.forall(_.isDigit)) name.append('[').append(key.text).append(']')
        else throw error("a map key (a string or an integer)")
        advance()
        expect("]", "']'")
      }
      ColumnRef(name.toString)
    }

    def literal(): Any = {
      val t = advance()
      try {
        if (t.kind == "op" && (t.text == "+" || t.text == "-") && token.kind == "number") number(advance().text, t.text == "-")
        else if (t.kind == "number") number(t.text, negative = false)
        else if (t.kind == "string") unescape(t.text.substring(1, t.text.length - 1))
        else if (t.kind == "hex") {
          val digits = t.text.substring(2, t.text.length - 1)
          HexFormat.of().parseHex(if (digits.length % 2 == 1) "0" + digits else digits)
        } else if (t.keyword("TRUE", "FALSE")) t.text.equalsIgnoreCase("TRUE")
        else if (t.keyword("NULL")) null
        else if (t.keyword("DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ") && token.kind == "string") {
          val body = unescape(advance().text.drop(1).dropRight(1))
          if (t.text.equalsIgnoreCase("DATE")) parseDate(body) else parseTimestamp(body)
        } else if (t.keyword("CAST")) castRule()
        else throw error("a literal (number, string, TRUE, FALSE, NULL, DATE '…', TIMESTAMP '…', CAST)", t)
      } catch {
        case e: IndexFormatException => throw e
        case _: IllegalArgumentException | _: ArithmeticException =>
          throw new IndexFormatException(source, offset(t), s"a valid literal, found '${span(t)}'")
      }
    }

    private def castRule(): Any = {
      expect("(", "'(' after CAST")
      val value = literal()
      expect("AS", "AS")
      val t = advance()
      val typeName = t.text.toUpperCase(java.util.Locale.ROOT)
      if (t.kind != "name" || !CastTypes.contains(typeName)) throw error("a type name", t)
      val args = ArrayBuffer.empty[Int]
      if (accept("(")) {
        var more = true
        while (more) {
          if (token.kind != "number" || !token.text.forall(_.isDigit)) throw error("a type argument (an integer)")
          args += advance().text.toInt
          more = accept(",")
        }
        expect(")", "')'")
      }
      expect(")", "')' closing CAST")
      cast(value, CastTypes(typeName), args.toList)
    }
  }

  /** The predicate of a Spark SQL condition, with SQL literals. */
  def parse(text: String, source: String = "condition"): Predicate = new Parser(text, source).condition()

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
        v match { case b: Boolean => b; case s: String => cast(s, "BOOLEAN", Nil); case _ => notComparable(t, v) }
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

  /** A string literal compared with a column of another type, read as Spark casts it. */
  private def fromString(t: KeyType, text: String): Any =
    try
      t match {
        case DateType                                        => parseDate(text)
        case TimeType(_)                                     => parseTime(text)
        case TimestampType(_) | LocalZonedTimestampType(_)   => parseTimestamp(text)
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
}
