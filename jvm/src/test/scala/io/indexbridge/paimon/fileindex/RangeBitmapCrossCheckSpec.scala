package io.indexbridge.paimon.fileindex

import scala.jdk.CollectionConverters._

import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.KeyType._
import io.indexbridge.paimon.fileindex.FileIndexGen._
import org.apache.paimon.fileindex.{FileIndexResult => PaimonResult, FileIndexer}
import org.apache.paimon.fileindex.{FileIndexPredicate => PaimonPredicate}
import org.apache.paimon.fileindex.bitmap.BitmapIndexResult
import org.apache.paimon.fs.ByteArraySeekableStream
import org.apache.paimon.options.Options
import org.apache.paimon.predicate.{FieldRef, PredicateBuilder, SortValue, TopN => PaimonTopN, Predicate => PaimonPredicateTree}
import org.apache.paimon.utils.RoaringBitmap32
import org.roaringbitmap.RoaringBitmap
import org.scalacheck.Gen
import org.scalatest.funsuite.AnyFunSuite
import org.scalatestplus.scalacheck.ScalaCheckPropertyChecks

/** RangeBitmapIndex against Paimon 1.4.2's own `RangeBitmapFileIndex` (paimon-bundle, test
  * scope), on generated columns of every type (the ones Paimon refuses too), chunk sizes from one
  * key per chunk to one chunk, nulls, one distinct value, all distinct, empty input: identical
  * bytes, identical row sets for every predicate and top-N (orders, null orderings, strict or
  * not, restricted or not), and in containers `FileIndexPredicate.evaluate`/`evaluateTopN` alike;
  * plus mutated payloads that decode or fail with IndexFormatException only. */
class RangeBitmapCrossCheckSpec extends AnyFunSuite with ScalaCheckPropertyChecks {
  implicit override val generatorDrivenConfig: PropertyCheckConfiguration = PropertyCheckConfiguration(minSuccessful = io.indexbridge.Depth.checks(120))
  implicit def noShrink[T]: org.scalacheck.Shrink[T] = org.scalacheck.Shrink.shrinkAny

  private val Id = RangeBitmapIndex.Identifier

  private def paimonWrite(t: KeyType, options: Map[String, String], column: Seq[Any]): Either[Throwable, Array[Byte]] =
    try {
      val w = FileIndexer.create(Id, paimonType(t), paimonOptions(options)).createWriter()
      column.foreach(v => w.writeRecord(paimonValue(v, t)))
      Right(w.serializedBytes())
    } catch { case e: Exception => Left(e) }

  /** Every type FileIndexGen makes, and narrower integers/floats more often (more keys per chunk). */
  private val types: Gen[KeyType] = Gen.frequency(4 -> allTypes, 1 -> Gen.oneOf(TinyIntType, SmallIntType, BooleanType, FloatType))

  /** chunk-size: absent (the type's default), 0 (one key per chunk), small, a few keys, one chunk. */
  private val chunkSizes: Gen[Map[String, String]] =
    Gen.oneOf(Gen.const(None), Gen.oneOf("0b", "1b", "3b", "4b", "7b", "8b", "12b", "16b", "25b", "40b", "64b", "100", "1 kb", "16kb", "4gb").map(Some(_)))
      .map(_.map(RangeBitmapIndex.ChunkSize -> _).toMap)

  /** Columns shaped for the index: the generic ones, all distinct, one distinct value, all null. */
  private def columnOf(t: KeyType): Gen[Vector[Any]] = Gen.frequency(
    5 -> column(t),
    1 -> Gen.choose(1, 300).flatMap(n => Gen.listOfN(n, value(t))).map(_.toVector),
    1 -> (for { v <- value(t); n <- Gen.choose(1, 50); nulls <- Gen.prob(0.5) } yield Vector.tabulate(n)(i => if (nulls && i % 3 == 0) null else v)),
    1 -> Gen.choose(0, 20).map(n => Vector.fill[Any](n)(null))
  )

  private def topNs(rows: Int): Gen[(Int, Boolean, Boolean, Boolean)] =
    for {
      k <- Gen.oneOf(Gen.choose(0, 5), Gen.choose(0, rows + 2))
      descending <- Gen.prob(0.5)
      nullsFirst <- Gen.prob(0.5)
      strict <- Gen.prob(0.7)
    } yield (k, descending, nullsFirst, strict)

  private def sameAnswers(t: KeyType, bytes: Array[Byte], column: Seq[Any], literals: List[Any], seed: Long): Unit = {
    val paimon = FileIndexer.create(Id, paimonType(t), new Options()).createReader(new ByteArraySeekableStream(bytes), 0, bytes.length)
    val reader = RangeBitmapIndex.read(t, bytes, "generated")
    FileIndexGen.sameAnswers(paimon, reader, t, literals)
    // top-N: unrestricted, all rows, a random subset, no rows
    val ref = new FieldRef(0, "c", paimonType(t))
    val random = new scala.util.Random(seed)
    val subset = new RoaringBitmap
    column.indices.filter(_ => random.nextInt(3) > 0).foreach(subset.add)
    val all = new RoaringBitmap
    all.add(0L, column.length.toLong)
    for (found <- Seq[RoaringBitmap](null, all, subset, new RoaringBitmap); _ <- 0 until 3) {
      val (k, descending, nullsFirst, strict) = topNs(column.length).pureApply(Gen.Parameters.default, org.scalacheck.rng.Seed(random.nextLong()))
      val direction = if (descending) SortValue.SortDirection.DESCENDING else SortValue.SortDirection.ASCENDING
      val nulls = if (nullsFirst) SortValue.NullOrdering.NULLS_FIRST else SortValue.NullOrdering.NULLS_LAST
      val orders = if (strict) List(new SortValue(ref, direction, nulls)) else List(new SortValue(ref, direction, nulls), new SortValue(ref, direction, nulls))
      val input = if (found == null) FileIndexResult.Remain else FileIndexResult.Rows(found.clone())
      val theirInput = if (found == null) PaimonResult.REMAIN else new BitmapIndexResult(() => RoaringBitmap32.bitmapOf(found.toArray: _*))
      val mine = TopN(orders.map(_ => SortOrder("c", if (descending) "DESCENDING" else "ASCENDING", if (nullsFirst) "NULLS_FIRST" else "NULLS_LAST")), k)
      assert(ours(reader.visitTopN(mine, input)) == theirs(paimon.visitTopN(new PaimonTopN(orders.asJava, k), theirInput)), s"$mine over $found on $t")
    }
  }

  test("range-bitmap: same bytes and answers (predicates, top-N) as RangeBitmapFileIndex") {
    forAll(types.flatMap(t => columnOf(t).map(t -> _)), chunkSizes, Gen.long) { case ((t, column), opts, seed) =>
      val mine = scala.util.Try(RangeBitmapIndex.write(t, column, opts)).toEither
      (paimonWrite(t, opts, column), mine) match {
        case (Right(expected), Right(bytes)) =>
          assert(bytes.sameElements(expected), s"range-bitmap over $t with $opts: ${column.take(20)}")
          forAll(literals(t, column), minSuccessful(1)) { lits => sameAnswers(t, bytes, column, lits, seed) }
        case (Left(e), Left(_)) => info(s"both refuse $t with $opts: ${e.getMessage}")
        case (theirs, mine)     => fail(s"range-bitmap over $t with $opts: Paimon $theirs, ours $mine")
      }
    }
  }

  test("chunk boundaries: every chunk-size from 0 to 40 bytes over all-distinct INT, BIGINT and STRING keys") {
    val random = new scala.util.Random(7)
    for (t <- Seq(IntType, BigIntType, VarCharType(Int.MaxValue)); size <- 0 to 40) {
      val column: Vector[Any] = Vector.tabulate(60) { i =>
        t match {
          case IntType    => i * 7 - 200
          case BigIntType => i.toLong * 1000003L - 30000000L
          case _          => random.alphanumeric.take(random.nextInt(9)).mkString + i
        }
      }
      val opts = Map(RangeBitmapIndex.ChunkSize -> s"${size}b")
      val bytes = RangeBitmapIndex.write(t, column, opts)
      assert(bytes.sameElements(paimonWrite(t, opts, column).toOption.get), s"$t at $size bytes")
      sameAnswers(t, bytes, column, column.take(5).toList ++ column.takeRight(3), size.toLong)
    }
  }

  test("both refuse: DECIMAL(19), TIMESTAMP(7), binary; 2gb chunks once a value is written") {
    for (t <- Seq(DecimalType(19, 2), TimestampType(7), LocalZonedTimestampType(9), VarBinaryType(10), BinaryType(3)))
      assert(paimonWrite(t, Map.empty, Nil).isLeft && scala.util.Try(RangeBitmapIndex.write(t, Nil)).isFailure, t)
    val big = Map(RangeBitmapIndex.ChunkSize -> "2gb")
    assert(paimonWrite(IntType, big, Seq(null)).toOption.get.sameElements(RangeBitmapIndex.write(IntType, Seq(null), big)))
    assert(paimonWrite(IntType, big, Seq(1)).isLeft && scala.util.Try(RangeBitmapIndex.write(IntType, Seq(1), big)).isFailure)
  }

  test("containers with range-bitmap columns: DataFileIndexWriter's bytes, FileIndexPredicate.evaluate and evaluateTopN") {
    val table = for {
      n <- Gen.choose(1, 4)
      ts <- Gen.listOfN(n, typesFor(RangeBitmapIndex.supports))
      others <- Gen.listOfN(n, Gen.someOf(BloomFilterIndex.Identifier, BitmapIndex.Identifier))
      chunk <- Gen.listOfN(n, chunkSizes)
      mapIndexed <- Gen.prob(0.5)
      rows <- Gen.oneOf(Gen.const(0), Gen.choose(1, 200))
      seed <- Gen.long
    } yield (ts, others, chunk, mapIndexed, rows, seed)
    forAll(table, minSuccessful(40)) { case (types, others, chunks, mapIndexed, rowCount, seed) =>
      val names = types.indices.map(i => s"c$i")
      val fields = names.zip(types).map { case (n, t) => DataField(n, t) } :+ DataField("m", KeyType.IntType, isMap = true)
      val indexed = names.zip(others).zip(types).map { case ((n, o), t) => n -> o.filter(supports(_, t)).toList }
      val rb = names ++ (if (mapIndexed) Seq("m[a]", "m[zz]") else Nil)
      val tableOptions = Seq(s"file-index.$Id.columns" -> rb.mkString(",")) ++
        names.zip(chunks).flatMap { case (n, c) => c.get(RangeBitmapIndex.ChunkSize).map(v => s"file-index.$Id.$n.chunk-size" -> v) } ++
        indexed.flatMap(_._2).distinct.map(idx => s"file-index.$idx.columns" -> indexed.filter(_._2.contains(idx)).map(_._1).mkString(","))
      val random = new scala.util.Random(seed)
      val columns: Map[String, Vector[Any]] = fields.map { f =>
        val values =
          if (f.isMap) Vector.fill(rowCount)(if (random.nextInt(8) == 0) null else Seq("a", "b").filter(_ => random.nextBoolean()).map(k => k -> (if (random.nextInt(6) == 0) null else random.nextInt(20) - 10)).toMap)
          else column(f.valueType, bsi = true).pureApply(Gen.Parameters.default, org.scalacheck.rng.Seed(random.nextLong())).padTo(rowCount, null).take(rowCount)
        f.name -> values
      }.toMap
      val (expected, _, rowType) = paimonDataFileIndex(fields, columns, rowCount, tableOptions)
      val bytes = DataFileIndex.write(tableOptions, fields, columns, rowCount)
      assert(bytes.sameElements(expected), tableOptions)

      val paimon = new PaimonPredicate(bytes, rowType)
      val predicate = new FileIndexPredicate(FileIndexContainer.read(bytes, "generated"), fields)
      val builder = new PredicateBuilder(rowType)
      val leaves = fields.zipWithIndex.filterNot(_._1.isMap).flatMap { case (f, i) =>
        val present = columns(f.name).filter(_ != null)
        def lit() = if (present.nonEmpty && random.nextBoolean()) present(random.nextInt(present.length)) else value(f.valueType, bsi = true).pureApply(Gen.Parameters.default, org.scalacheck.rng.Seed(random.nextLong()))
        val (a, b) = (lit(), lit())
        Seq[(Predicate, PaimonPredicateTree)](
          Predicate.Leaf(Op.Equal, f.name, Seq(a)) -> builder.equal(i, paimonValue(a, f.valueType)),
          Predicate.Leaf(Op.LessThan, f.name, Seq(a)) -> builder.lessThan(i, paimonValue(a, f.valueType)),
          Predicate.Leaf(Op.GreaterOrEqual, f.name, Seq(b)) -> builder.greaterOrEqual(i, paimonValue(b, f.valueType)),
          Predicate.Leaf(Op.NotEqual, f.name, Seq(b)) -> builder.notEqual(i, paimonValue(b, f.valueType)),
          Predicate.Leaf(Op.IsNull, f.name) -> builder.isNull(i)
        )
      }
      samePredicateAnswers(predicate, paimon, leaves)
      for ((f, i) <- fields.zipWithIndex.filterNot(_._1.isMap); k <- Seq(0, 1, 3, rowCount / 2, rowCount + 1)) {
        val ref = new FieldRef(i, f.name, paimonType(f.valueType))
        val desc = random.nextBoolean()
        val nullsFirst = random.nextBoolean()
        val theirTop = new PaimonTopN(ref, if (desc) SortValue.SortDirection.DESCENDING else SortValue.SortDirection.ASCENDING,
          if (nullsFirst) SortValue.NullOrdering.NULLS_FIRST else SortValue.NullOrdering.NULLS_LAST, k)
        val mine = TopN(Seq(SortOrder(f.name, if (desc) "DESCENDING" else "ASCENDING", if (nullsFirst) "NULLS_FIRST" else "NULLS_LAST")), k)
        val all = new RoaringBitmap
        all.add(0L, rowCount.toLong)
        for ((input, theirInput) <- Seq(FileIndexResult.Remain -> PaimonResult.REMAIN,
               FileIndexResult.Rows(all) -> new BitmapIndexResult(() => RoaringBitmap32.bitmapOf((0 until rowCount): _*))))
          assert(ours(predicate.evaluateTopN(mine, input)) == theirs(paimon.evaluateTopN(theirTop, theirInput)), s"$mine")
      }
    }
  }

  private def supports(indexType: String, t: KeyType): Boolean = indexType match {
    case BloomFilterIndex.Identifier => BloomFilterIndex.supports(t)
    case BitmapIndex.Identifier      => BitmapIndex.supports(t)
    case _                           => false
  }

  test("mutated payloads decode, answer and rank, or fail with IndexFormatException") {
    val random = new scala.util.Random(11)
    val samples = Seq(
      IntType -> Vector[Any](5, null, 3, 5, 9, -1, 3, null, 100),
      VarCharType(Int.MaxValue) -> Vector[Any]("b", "a", null, "ccc", "a", "", "dd"),
      DoubleType -> Vector[Any](1.5, Double.NaN, -0.0, 0.0, null, 1.5),
      BigIntType -> Vector[Any]()
    )
    for ((t, column) <- samples; opts <- Seq(Map.empty[String, String], Map(RangeBitmapIndex.ChunkSize -> "4b"))) {
      val bytes = RangeBitmapIndex.write(t, column, opts)
      val mutants = (0 until bytes.length).map(n => java.util.Arrays.copyOf(bytes, n)) ++
        (0 until 400).map { _ => val b = bytes.clone(); b(random.nextInt(b.length)) = random.nextInt(256).toByte; b } ++
        (0 until 200).map { _ => val b = bytes.clone(); val at = random.nextInt(math.max(1, b.length - 3)); java.nio.ByteBuffer.wrap(b).putInt(at, Seq(-1, 0, Int.MaxValue, Int.MinValue, 64, 65)(random.nextInt(6))); b }
      for (m <- mutants)
        try {
          val r = RangeBitmapIndex.read(t, m, "mutant")
          column.filter(_ != null).take(3).foreach(v => Op.all.foreach(op => r.evaluate(op, if (op == Op.Between) Seq(v, v) else if (Op.arity(op) == 0) Nil else Seq(v))))
          r.visitTopN(TopN(Seq(SortOrder("c")), 2), FileIndexResult.Remain)
          (0 until r.rowCount.min(20)).foreach(r.bsi.codeOf)
        } catch { case _: IndexFormatException => }
    }
  }
}
