package io.indexbridge.paimon.fileindex

import scala.jdk.CollectionConverters._

import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.KeyType._
import org.apache.paimon.CoreOptions
import org.apache.paimon.data.{BinaryString, Decimal, GenericMap, GenericRow, Timestamp}
import org.apache.paimon.fileindex.{FileIndexOptions, FileIndexPredicate => PaimonPredicate, FileIndexReader => PaimonReader, FileIndexResult => PaimonResult}
import org.apache.paimon.fileindex.bitmap.BitmapIndexResult
import org.apache.paimon.fs.{Path => PaimonPath}
import org.apache.paimon.fs.local.LocalFileIO
import org.apache.paimon.io.DataFileIndexWriter
import org.apache.paimon.options.Options
import org.apache.paimon.predicate.{FieldRef, PredicateBuilder, Predicate => PaimonPredicateTree}
import org.apache.paimon.types.{DataType, DataTypeJsonParser, DataTypes, RowType}
import org.scalacheck.Gen
import org.scalatest.Assertions.assert

/** Generated columns for the file indexes: every type an index supports, nulls, repeats (so
  * bitmaps get multi-row keys), extremes, the conversions to Paimon's internal values, and the
  * comparison of our readers' answers with Paimon's. */
object FileIndexGen {
  val allTypes: Gen[KeyType] = Gen.oneOf(
    Gen.oneOf(BooleanType, TinyIntType, SmallIntType, IntType, BigIntType, FloatType, DoubleType, DateType),
    Gen.choose(0, 3).map(TimeType(_)),
    Gen.choose(0, 9).map(TimestampType(_)),
    Gen.choose(0, 9).map(LocalZonedTimestampType(_)),
    Gen.oneOf(Gen.choose(1, 50).map(CharType(_)), Gen.const(VarCharType(Int.MaxValue))),
    Gen.oneOf(Gen.choose(1, 50).map(VarBinaryType(_)), Gen.const(VarBinaryType(Int.MaxValue))),
    for { p <- Gen.choose(1, 38); s <- Gen.choose(0, math.min(p, 6)) } yield DecimalType(p, s)
  )

  def typesFor(supports: KeyType => Boolean): Gen[KeyType] = allTypes.retryUntil(supports, 1000)

  def sqlOf(t: KeyType): String = t match {
    case BooleanType                 => "BOOLEAN"
    case TinyIntType                 => "TINYINT"
    case SmallIntType                => "SMALLINT"
    case IntType                     => "INT"
    case BigIntType                  => "BIGINT"
    case FloatType                   => "FLOAT"
    case DoubleType                  => "DOUBLE"
    case DateType                    => "DATE"
    case TimeType(p)                 => s"TIME($p)"
    case TimestampType(p)            => s"TIMESTAMP($p)"
    case LocalZonedTimestampType(p)  => s"TIMESTAMP($p) WITH LOCAL TIME ZONE"
    case CharType(n)                 => s"CHAR($n)"
    case VarCharType(Int.MaxValue)   => "STRING"
    case VarCharType(n)              => s"VARCHAR($n)"
    case BinaryType(n)               => s"BINARY($n)"
    case VarBinaryType(Int.MaxValue) => "BYTES"
    case VarBinaryType(n)            => s"VARBINARY($n)"
    case DecimalType(p, s)           => s"DECIMAL($p, $s)"
  }

  def paimonType(t: KeyType): DataType = DataTypeJsonParser.parseAtomicTypeSQLString(sqlOf(t))

  /** One non-null value; `bsi` keeps values a BSI can hold (no Long.MIN_VALUE, decimals fit a long). */
  def value(t: KeyType, bsi: Boolean = false): Gen[Any] = t match {
    case BooleanType                      => Gen.oneOf(true, false)
    case TinyIntType                      => Gen.oneOf(Gen.choose(Byte.MinValue, Byte.MaxValue), Gen.oneOf(Byte.MinValue, Byte.MaxValue, 0.toByte))
    case SmallIntType                     => Gen.choose(Short.MinValue, Short.MaxValue)
    case IntType | DateType | TimeType(_) => Gen.frequency(3 -> Gen.choose(-1000, 1000), 1 -> Gen.choose(Int.MinValue, Int.MaxValue), 1 -> Gen.oneOf(Int.MinValue, Int.MaxValue, 0))
    case BigIntType =>
      Gen.frequency(3 -> Gen.choose(-100000L, 100000L), 1 -> Gen.long, 1 -> Gen.oneOf(Long.MaxValue, Long.MinValue, 0L, -1L))
        .map(v => if (bsi && v == Long.MinValue) Long.MinValue + 1 else v)
    case FloatType =>
      Gen.oneOf(Gen.choose(-100f, 100f), Gen.choose(Int.MinValue, Int.MaxValue).map(java.lang.Float.intBitsToFloat),
        Gen.oneOf(Float.NaN, -0.0f, 0.0f, Float.PositiveInfinity, Float.NegativeInfinity, Float.MinPositiveValue))
    case DoubleType =>
      Gen.oneOf(Gen.choose(-100.0, 100.0), Gen.long.map(java.lang.Double.longBitsToDouble),
        Gen.oneOf(Double.NaN, -0.0, 0.0, Double.PositiveInfinity, Double.NegativeInfinity))
    case CharType(_) | VarCharType(_) =>
      Gen.oneOf(Gen.alphaStr.map(_.take(6)), Gen.stringOf(Gen.choose('\u0000', '\uffff')).map(_.take(8)), Gen.oneOf("", "a", "ab", "\u00e9t\u00e9", "\ud83d\ude00"))
        .map(s => s.filterNot(Character.isSurrogate) + (if (s.contains("\ud83d\ude00")) "\ud83d\ude00" else ""))
    case BinaryType(_) | VarBinaryType(_) => Gen.choose(0, 12).flatMap(n => Gen.listOfN(n, Gen.choose(Byte.MinValue, Byte.MaxValue))).map(_.toArray)
    case DecimalType(p, s) =>
      for { digits <- Gen.choose(1, if (bsi) math.min(p, 18) else p); unscaled <- Gen.listOfN(digits, Gen.numChar); negative <- Gen.prob(0.5) }
        yield new java.math.BigDecimal(new java.math.BigInteger((if (negative) "-" else "") + unscaled.mkString), s)
    case TimestampType(_) | LocalZonedTimestampType(_) =>
      for { millis <- Gen.choose(-100000000000L, 100000000000L); nanos <- Gen.choose(0, 999999) } yield (millis, nanos)
  }

  /** A column: 0…n rows drawn from a small pool (repeats) or fresh values, ~15% nulls. */
  def column(t: KeyType, bsi: Boolean = false): Gen[Vector[Any]] =
    for {
      pool <- Gen.choose(1, 30).flatMap(n => Gen.listOfN(n, value(t, bsi)))
      n <- Gen.frequency(1 -> Gen.const(0), 1 -> Gen.choose(1, 3), 6 -> Gen.choose(0, 400), 1 -> Gen.choose(1000, 5000))
      nulls <- Gen.oneOf(0.0, 0.15, 0.9)
      fresh <- Gen.oneOf(0.0, 0.3, 1.0)
      seed <- Gen.long
    } yield {
      val random = new scala.util.Random(seed)
      Vector.fill(n) {
        if (random.nextDouble() < nulls) null
        else if (random.nextDouble() < fresh) value(t, bsi).pureApply(Gen.Parameters.default, org.scalacheck.rng.Seed(random.nextLong()))
        else pool(random.nextInt(pool.length))
      }
    }

  /** Literals to ask about: values of the column and fresh ones. */
  def literals(t: KeyType, column: Seq[Any], bsi: Boolean = false): Gen[List[Any]] = {
    val present = column.filter(_ != null)
    val one = if (present.isEmpty) value(t, bsi) else Gen.oneOf(Gen.oneOf(present), value(t, bsi))
    Gen.listOfN(12, one)
  }

  /** Paimon's internal object for a value. */
  def paimonValue(v: Any, t: KeyType): AnyRef = (v, t) match {
    case (null, _)                                    => null
    case (s: String, _)                               => BinaryString.fromString(s)
    case (d: java.math.BigDecimal, DecimalType(p, s)) => Decimal.fromBigDecimal(d, p, s)
    case ((millis: Long, nanos: Int), _)              => Timestamp.fromEpochMillis(millis, nanos)
    case (other, _)                                   => other.asInstanceOf[AnyRef]
  }

  /** Paimon's result as (kind, rows): rows only for row sets. */
  def theirs(r: PaimonResult): (String, Seq[Int]) = r match {
    case b: BitmapIndexResult          => ("bitmap", b.get().iterator().asScala.map(_.intValue).toList)
    case x if x eq PaimonResult.REMAIN => ("remain", Nil)
    case x if x eq PaimonResult.SKIP   => ("skip", Nil)
    case other                         => (s"unknown ${other.getClass}", Nil)
  }

  /** Our result as [[theirs]] gives Paimon's. */
  def ours(r: FileIndexResult): (String, Seq[Int]) = r match {
    case FileIndexResult.Remain     => ("remain", Nil)
    case FileIndexResult.Skip       => ("skip", Nil)
    case FileIndexResult.Rows(rows) => ("bitmap", rows.toArray.toList)
  }

  def paimonOptions(options: Map[String, String]): Options = {
    val o = new Options()
    options.foreach { case (k, v) => o.set(k, v) }
    o
  }

  /** Asks Paimon's reader and ours of one index of a column `c` of type `t` every operation:
    * IS NULL, IS NOT NULL, the six comparisons with each literal, IN and NOT IN of each three,
    * BETWEEN of each two; the answers must be the same. */
  def sameAnswers(paimon: PaimonReader, reader: FileIndexReader, t: KeyType, literals: List[Any]): Unit = {
    val ref = new FieldRef(0, "c", paimonType(t))
    def p(v: Any) = paimonValue(v, t)
    def check(what: String, op: Op, lits: Seq[Any], theirResult: => PaimonResult): Unit =
      assert(ours(reader.evaluate(op, lits)) == theirs(theirResult), s"$what ${lits.mkString(",")} on $t")
    check("is_null", Op.IsNull, Nil, paimon.visitIsNull(ref))
    check("is_not_null", Op.IsNotNull, Nil, paimon.visitIsNotNull(ref))
    for (l <- literals) {
      check("equal", Op.Equal, Seq(l), paimon.visitEqual(ref, p(l)))
      check("not_equal", Op.NotEqual, Seq(l), paimon.visitNotEqual(ref, p(l)))
      check("less_than", Op.LessThan, Seq(l), paimon.visitLessThan(ref, p(l)))
      check("less_or_equal", Op.LessOrEqual, Seq(l), paimon.visitLessOrEqual(ref, p(l)))
      check("greater_than", Op.GreaterThan, Seq(l), paimon.visitGreaterThan(ref, p(l)))
      check("greater_or_equal", Op.GreaterOrEqual, Seq(l), paimon.visitGreaterOrEqual(ref, p(l)))
    }
    for (group <- literals.grouped(3)) {
      check("in", Op.In, group, paimon.visitIn(ref, group.map(p).asJava))
      check("not_in", Op.NotIn, group, paimon.visitNotIn(ref, group.map(p).asJava))
    }
    for (Seq(a, b) <- literals.grouped(2).filter(_.length == 2))
      check("between", Op.Between, Seq(a, b), paimon.visitBetween(ref, p(a), p(b)))
  }

  /** A container's `predicate` against Paimon's `FileIndexPredicate` over the same bytes, for
    * each of the `leaves` (ours and Paimon's tree) and the AND and the OR of each two neighbours:
    * the same REMAIN or SKIP, and the same rows unless Paimon skips (its leaf order is arbitrary,
    * by identity hashes: an empty row set and SKIP are alike). */
  def samePredicateAnswers(predicate: FileIndexPredicate, paimon: PaimonPredicate, leaves: Seq[(Predicate, PaimonPredicateTree)]): Unit = {
    val compound = leaves.sliding(2).flatMap {
      case Seq((a, pa), (b, pb)) => Seq(Predicate.And(Seq(a, b)) -> PredicateBuilder.and(pa, pb), Predicate.Or(Seq(a, b)) -> PredicateBuilder.or(pa, pb))
      case _                     => Nil
    }
    for ((mine, theirsTree) <- leaves ++ compound) {
      val (kind, rows) = ours(predicate.evaluate(mine))
      val (theirKind, theirRows) = theirs(paimon.evaluate(theirsTree))
      val remains = theirKind == "remain" || (theirKind == "bitmap" && theirRows.nonEmpty)
      assert(predicate.evaluate(mine).remain == remains, s"$mine")
      if (remains || kind == theirKind) assert((kind, rows) == (theirKind, theirRows), s"$mine")
    }
  }

  /** What Paimon's `DataFileIndexWriter` writes for the columns' rows under the table options
    * (a map field is a `MAP<STRING, INT>`): the container's bytes, whether they are embedded in the
    * manifest (else written as a file), and the row type it was given. */
  def paimonDataFileIndex(fields: Seq[DataField], columns: Map[String, Vector[Any]], rowCount: Int,
      tableOptions: Seq[(String, String)]): (Array[Byte], Boolean, RowType) = {
    val rowType = RowType.of(fields.map(f => if (f.isMap) DataTypes.MAP(DataTypes.STRING(), DataTypes.INT()) else paimonType(f.valueType)).toArray,
      fields.map(_.name).toArray)
    val options = new java.util.LinkedHashMap[String, String]()
    tableOptions.foreach { case (k, v) => options.put(k, v) }
    val file = java.nio.file.Files.createTempDirectory("ib-fileindex").resolve("data.index")
    val writer = new DataFileIndexWriter(LocalFileIO.create(), new PaimonPath(file.toString), rowType, new FileIndexOptions(new CoreOptions(options)), null)
    for (r <- 0 until rowCount)
      writer.write(GenericRow.of(fields.map { f =>
        val v = columns(f.name)(r)
        if (f.isMap && v != null) new GenericMap(v.asInstanceOf[Map[String, Any]].map { case (k, x) => BinaryString.fromString(k) -> x }.asJava)
        else paimonValue(v, f.valueType)
      }: _*))
    writer.close()
    val embedded = writer.result().embeddedIndexBytes()
    (Option(embedded).getOrElse(java.nio.file.Files.readAllBytes(file)), embedded != null, rowType)
  }
}
