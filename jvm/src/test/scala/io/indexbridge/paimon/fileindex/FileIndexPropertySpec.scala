package io.indexbridge.paimon.fileindex

import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.fileindex.FileIndexGen._
import org.roaringbitmap.RoaringBitmap
import org.scalacheck.Gen
import org.scalatest.funsuite.AnyFunSuite
import org.scalatestplus.scalacheck.ScalaCheckPropertyChecks

/** Readers' answers against brute force over the generated rows, for every supported type,
  * with nulls, empty files and map columns. */
class FileIndexPropertySpec extends AnyFunSuite with ScalaCheckPropertyChecks {
  implicit override val generatorDrivenConfig: PropertyCheckConfiguration = PropertyCheckConfiguration(minSuccessful = 200)
  implicit def noShrink[T]: org.scalacheck.Shrink[T] = org.scalacheck.Shrink.shrinkAny

  /** The key a value is compared by (Java equals of Paimon's key object). */
  private def key(t: KeyType, v: Any): Any =
    if (IndexValue.isBytes(t)) IndexValue.toBytes(t, v).toSeq else IndexValue.toLong(t, v)

  private def rows(column: Seq[Any])(p: Any => Boolean): Seq[Int] = column.indices.filter(i => p(column(i)))

  private def answer(r: FileIndexResult): Seq[Int] = r match {
    case FileIndexResult.Rows(bm) => bm.toArray.toSeq
    case other                    => fail(s"expected a row set, got $other")
  }

  private def typedColumn(supports: KeyType => Boolean, bsi: Boolean = false): Gen[(KeyType, Vector[Any], List[Any])] =
    for { t <- typesFor(supports); c <- column(t, bsi); l <- literals(t, c, bsi) } yield (t, c, l)

  test("bitmap: equal / in / not_equal / not_in / is_null / is_not_null are the brute-force row sets (v1 and v2)") {
    forAll(typedColumn(BitmapIndex.supports), Gen.oneOf("1", "2"), Gen.oneOf("16kb", "200b")) { case ((t, column, lits), version, block) =>
      val bytes = BitmapIndex.write(t, column, Map("version" -> version, "index-block-size" -> block))
      val r = BitmapIndex.read(t, bytes, "generated")
      assert(r.rowCount == column.length)
      val all = column.indices
      def eq(l: Any)(v: Any) = v != null && key(t, v) == key(t, l)
      assert(answer(r.evaluate(Op.IsNull, Nil)) == rows(column)(_ == null))
      assert(answer(r.evaluate(Op.IsNotNull, Nil)) == rows(column)(_ != null))
      for (l <- lits) {
        assert(answer(r.evaluate(Op.Equal, Seq(l))) == rows(column)(eq(l)), s"equal $l")
        assert(answer(r.evaluate(Op.NotEqual, Seq(l))) == all.diff(rows(column)(eq(l))), s"not_equal $l (null rows included)")
        assert(r.evaluate(Op.LessThan, Seq(l)) == FileIndexResult.Remain)
      }
      val group = lits.take(4)
      assert(answer(r.evaluate(Op.In, group)) == rows(column)(v => group.exists(l => eq(l)(v))))
      assert(answer(r.evaluate(Op.NotIn, group)) == all.diff(rows(column)(v => group.exists(l => eq(l)(v)))))
    }
  }

  test("bsi: every comparison is exact over the non-null rows") {
    forAll(typedColumn(BitSliceIndex.supports, bsi = true)) { case (t, column, lits) =>
      val r = BitSliceIndex.read(t, BitSliceIndex.write(t, column), "generated")
      val mapped = column.map(v => if (v == null) None else Some(IndexValue.toLong(t, v)))
      def where(p: Long => Boolean) = mapped.indices.filter(i => mapped(i).exists(p))
      assert(answer(r.evaluate(Op.IsNull, Nil)) == mapped.indices.filter(mapped(_).isEmpty))
      assert(answer(r.evaluate(Op.IsNotNull, Nil)) == where(_ => true))
      for (l <- lits; x = IndexValue.toLong(t, l)) {
        assert(answer(r.evaluate(Op.Equal, Seq(l))) == where(_ == x), s"equal $x")
        assert(answer(r.evaluate(Op.NotEqual, Seq(l))) == where(_ != x), s"not_equal $x")
        assert(answer(r.evaluate(Op.LessThan, Seq(l))) == where(_ < x), s"less_than $x")
        assert(answer(r.evaluate(Op.LessOrEqual, Seq(l))) == where(_ <= x), s"less_or_equal $x")
        assert(answer(r.evaluate(Op.GreaterThan, Seq(l))) == where(_ > x), s"greater_than $x")
        assert(answer(r.evaluate(Op.GreaterOrEqual, Seq(l))) == where(_ >= x), s"greater_or_equal $x")
      }
      for (Seq(a, b) <- lits.grouped(2).filter(_.size == 2); (x, y) = (IndexValue.toLong(t, a), IndexValue.toLong(t, b)))
        assert(answer(r.evaluate(Op.Between, Seq(a, b))) == where(v => v >= x && v <= y), s"between $x $y")
      val group = lits.take(3).map(IndexValue.toLong(t, _))
      assert(answer(r.evaluate(Op.In, lits.take(3))) == where(group.contains))
      assert(answer(r.evaluate(Op.NotIn, lits.take(3))) == where(v => !group.contains(v)))
    }
  }

  test("bloom-filter: never SKIPs a value that was written; only equal / in can SKIP") {
    forAll(typedColumn(BloomFilterIndex.supports), Gen.choose(1, 500), Gen.oneOf(0.01, 0.1, 0.5)) { case ((t, column, lits), items, fpp) =>
      val r = BloomFilterIndex.read(t, BloomFilterIndex.write(t, column, Map("items" -> items.toString, "fpp" -> fpp.toString)), "generated")
      for (v <- column if v != null) assert(r.evaluate(Op.Equal, Seq(v)) == FileIndexResult.Remain, s"$v was written")
      for (l <- lits; op <- Op.all.filterNot(o => o == Op.Equal || o == Op.In)) {
        val ls = Op.arity(op) match { case 0 => Nil; case 2 => Seq(l, l); case _ => Seq(l) }
        assert(r.evaluate(op, ls) == FileIndexResult.Remain, s"$op")
      }
      assert(r.evaluate(Op.Equal, Seq(null)) == FileIndexResult.Remain)
      val present = lits.exists(l => column.exists(v => v != null && key(t, v) == key(t, l)))
      if (present) assert(r.evaluate(Op.In, lits) == FileIndexResult.Remain)
    }
  }

  test("containers: entries, empty entries and modified-UTF-8 names round-trip; predicates over exact indexes are brute force") {
    val names = Gen.oneOf(Gen.identifier.map(_.take(10)), Gen.oneOf("nul\u0000col", "e\ud83d\ude00", "名前", "m[k]", ""))
    val entries = Gen.listOf(for {
      n <- names
      types <- Gen.someOf("bloom-filter", "bitmap", "bsi", "range-bitmap")
      payloads <- Gen.listOfN(types.size, Gen.option(Gen.choose(0, 40).flatMap(k => Gen.listOfN(k, Gen.choose(Byte.MinValue, Byte.MaxValue)).map(_.toArray))))
    } yield n -> types.toList.zip(payloads.map(_.orNull)))
    forAll(entries) { columns =>
      val distinct = columns.groupBy(_._1).map(_._2.head).toList
      val bytes = FileIndexContainer.write(distinct)
      val c = FileIndexContainer.read(bytes, "generated")
      assert(c.columns == distinct.map(_._1))
      for ((n, indexes) <- distinct; (t, p) <- indexes) {
        assert(c.entry(n, t).exists(_.isEmpty) == (p == null))
        assert(c.payload(n, t).map(_.toSeq) == Option(p).map(_.toSeq))
      }
      assert(c.headLength == bytes.length - distinct.flatMap(_._2).map(p => Option(p._2).fold(0)(_.length)).sum)
    }

    // two exact (bitmap) columns and a map column: AND / OR of leaves are intersections / unions
    forAll(column(KeyType.IntType), Gen.choose(0, 40), Gen.long) { (a, b0, seed) =>
      val random = new scala.util.Random(seed)
      val n = a.length
      val b = Vector.fill(n)(if (random.nextInt(5) == 0) null else random.nextInt(b0 + 1))
      val m = Vector.fill(n)(if (random.nextInt(6) == 0) null else Map("k" -> random.nextInt(4)).filter(_ => random.nextBoolean()))
      val fields = Seq(DataField("a", KeyType.IntType), DataField("b", KeyType.IntType), DataField("m", KeyType.IntType, isMap = true))
      val options = Seq("file-index.bitmap.columns" -> "a,b,m[k]", "file-index.bsi.columns" -> "b")
      val bytes = DataFileIndex.write(options, fields, Map("a" -> a, "b" -> b, "m" -> m), n)
      val predicate = new FileIndexPredicate(FileIndexContainer.read(bytes, "generated"), fields)
      val mk = m.map(x => if (x == null) null else x.getOrElse("k", null))
      val la = a.find(_ != null).orNull
      val lb = random.nextInt(b0 + 1)
      val eqA = Predicate.Leaf(Op.Equal, "a", Seq(la))
      val eqB = Predicate.Leaf(Op.Equal, "b", Seq(lb))
      val mNull = Predicate.Leaf(Op.IsNull, "m[k]")
      def brute(p: Int => Boolean) = (0 until n).filter(p)
      val inA = (i: Int) => a(i) != null && a(i) == la
      val inB = (i: Int) => b(i) != null && b(i) == lb
      if (la != null) {
        assert(answer(predicate.evaluate(Predicate.And(Seq(eqA, eqB)))) == brute(i => inA(i) && inB(i)))
        assert(answer(predicate.evaluate(Predicate.Or(Seq(eqA, eqB)))) == brute(i => inA(i) || inB(i)))
      }
      // an empty file's map-nested index is an empty entry, which answers is_null with REMAIN
      if (n > 0) assert(answer(predicate.evaluate(Predicate.Or(Seq(mNull, eqB)))) == brute(i => mk(i) == null || inB(i)))
      else assert(predicate.evaluate(Predicate.Or(Seq(mNull, eqB))) == FileIndexResult.Remain)
      assert(predicate.evaluate(Predicate.Leaf(Op.Equal, "unindexed", Seq(1))) == FileIndexResult.Remain)
      if (n == 0) assert(predicate.evaluate(Predicate.Leaf(Op.Equal, "m[k]", Seq(1))) == FileIndexResult.Skip)
    }
  }

  test("bitmap: a result's rows are its own: changing them changes none of the reader's later answers") {
    forAll(typedColumn(BitmapIndex.supports), Gen.oneOf("1", "2")) { case ((t, column, lits), version) =>
      val r = BitmapIndex.read(t, BitmapIndex.write(t, column, Map("version" -> version)), "generated")
      for ((op, args) <- (Op.IsNull, Nil) +: lits.map(l => (Op.Equal, Seq(l)))) {
        val before = answer(r.evaluate(op, args))
        r.evaluate(op, args) match {
          case FileIndexResult.Rows(bm) => bm.flip(0L, column.length + 1L) // every row in or out
          case other                    => fail(s"expected a row set, got $other")
        }
        val after = r.evaluate(op, args)
        assert(answer(after) == before && after.remain == before.nonEmpty, s"$op $args after its rows were changed")
      }
    }
  }

  test("FileIndexResult: and / or as Paimon defines them") {
    val rows = FileIndexResult.Rows(RoaringBitmap.bitmapOf(1, 2))
    val none = FileIndexResult.Rows(new RoaringBitmap)
    import FileIndexResult._
    assert(Remain.and(Skip) == Skip && Skip.and(Remain) == Skip && Remain.and(rows) == rows)
    assert(rows.and(Remain) == rows && rows.and(Skip) == Skip && rows.and(FileIndexResult.Rows(RoaringBitmap.bitmapOf(2, 3))) == FileIndexResult.Rows(RoaringBitmap.bitmapOf(2)))
    assert(rows.or(Remain) == Remain && rows.or(Skip) == rows && Skip.or(none) == none && none.or(rows) == rows)
    assert(!none.remain && rows.remain && Remain.or(Skip) == Remain)
  }
}
