package io.indexbridge.paimon.fileindex

import scala.jdk.CollectionConverters._

import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.fileindex.FileIndexGen._
import org.apache.paimon.fileindex.{FileIndexFormat, FileIndexer}
import org.apache.paimon.fileindex.{FileIndexPredicate => PaimonPredicate}
import org.apache.paimon.fs.ByteArraySeekableStream
import org.apache.paimon.options.Options
import org.apache.paimon.predicate.{PredicateBuilder, Predicate => PaimonPredicateTree}
import org.apache.paimon.types.{DataTypes, RowType}
import org.scalacheck.Gen
import org.scalatest.funsuite.AnyFunSuite
import org.scalatestplus.scalacheck.ScalaCheckPropertyChecks

/** Our file-index bytes and answers against Paimon 1.4.2's own classes (paimon-bundle, test
  * scope): the same generated column through `FileIndexer.create(...).createWriter()` and through
  * ours must give identical bytes, and Paimon's reader and ours must answer every operation alike. */
class FileIndexCrossCheckSpec extends AnyFunSuite with ScalaCheckPropertyChecks {
  implicit override val generatorDrivenConfig: PropertyCheckConfiguration = PropertyCheckConfiguration(minSuccessful = io.indexbridge.Depth.checks(150))
  // shrinking would invent column names and types the generators never make
  implicit def noShrink[T]: org.scalacheck.Shrink[T] = org.scalacheck.Shrink.shrinkAny

  /** Paimon's payload of `column`, or its exception. */
  private def paimonWrite(indexType: String, t: KeyType, options: Map[String, String], column: Seq[Any]): Either[Throwable, Array[Byte]] =
    try {
      val w = FileIndexer.create(indexType, paimonType(t), paimonOptions(options)).createWriter()
      column.foreach(v => w.writeRecord(paimonValue(v, t)))
      Right(w.serializedBytes())
    } catch { case e: Exception => Left(e) }

  /** Asks both readers of `bytes` every operation with each literal. */
  private def sameAnswers(indexType: String, t: KeyType, bytes: Array[Byte], literals: List[Any]): Unit =
    FileIndexGen.sameAnswers(FileIndexer.create(indexType, paimonType(t), new Options()).createReader(new ByteArraySeekableStream(bytes), 0, bytes.length),
      FileIndexContainer.reader(ContainerEntry("c", indexType, 0, bytes.length), t, bytes, "generated"), t, literals)

  private def crossCheck(indexType: String, supports: KeyType => Boolean, options: Gen[Map[String, String]], bsi: Boolean = false): Unit =
    forAll(typesFor(supports).flatMap(t => column(t, bsi).map(t -> _)), options) { case ((t, column), opts) =>
      val mine = scala.util.Try(FileIndexContainer.writer(indexType, t, opts)).map { w => column.foreach(w.write); w.serialize() }.toEither
      (paimonWrite(indexType, t, opts, column), mine) match {
        case (Right(expected), Right(bytes)) =>
          assert(bytes.sameElements(expected), s"$indexType over $t with $opts: ${column.take(20)}")
          forAll(literals(t, column, bsi), minSuccessful(1)) { lits => sameAnswers(indexType, t, bytes, lits) }
        case (Left(e), Left(_)) => info(s"both refuse $t with $opts: ${e.getMessage}")
        case (theirs, mine)     => fail(s"$indexType over $t with $opts: Paimon $theirs, ours $mine")
      }
    }

  test("bloom-filter: same bytes and answers as BloomFilterFileIndex") {
    val options = for { items <- Gen.choose(1, 3000); fpp <- Gen.oneOf(0.01, 0.03, 0.1, 0.5) } yield Map("items" -> items.toString, "fpp" -> fpp.toString)
    crossCheck(BloomFilterIndex.Identifier, BloomFilterIndex.supports, options)
  }

  test("bitmap v1 and v2: same bytes and answers as BitmapFileIndex") {
    val options = for {
      version <- Gen.oneOf("1", "2")
      block <- Gen.oneOf(None, Some("16kb"), Some("100b"), Some("256b"), Some("1 kb"), Some("32b"))
    } yield Map("version" -> version) ++ block.map("index-block-size" -> _)
    crossCheck(BitmapIndex.Identifier, BitmapIndex.supports, options)
  }

  test("bsi: same bytes and answers as BitSliceIndexBitmapFileIndex") {
    crossCheck(BitSliceIndex.Identifier, BitSliceIndex.supports, Gen.const(Map.empty[String, String]), bsi = true)
  }

  private val indexTypes = Seq(BloomFilterIndex.Identifier -> BloomFilterIndex.supports _, BitmapIndex.Identifier -> BitmapIndex.supports _,
    BitSliceIndex.Identifier -> BitSliceIndex.supports _)

  test("containers: DataFileIndexWriter's bytes, FileIndexFormat.Writer's bytes and FileIndexPredicate's answers") {
    // a row type of plain columns and one MAP<STRING, INT>, with indexes configured on some of them
    val table = for {
      n <- Gen.choose(1, 5)
      types <- Gen.listOfN(n, allTypes)
      names <- Gen.listOfN(n, Gen.oneOf(Gen.identifier.map(_.take(6)), Gen.oneOf("id", "名前", "e\ud83d\ude00", "a b")))
        .map(ns => ns.zipWithIndex.map { case (s, i) => s"$s$i" })
      mapKeys <- Gen.someOf("k1", "k2", "k3")
      indexed <- Gen.sequence[List[List[String]], List[String]](types.map(t => Gen.someOf(indexTypes.filter(_._2(t)).map(_._1)).map(_.toList)))
      mapIndexes <- Gen.someOf(BloomFilterIndex.Identifier, BitmapIndex.Identifier, BitSliceIndex.Identifier)
      rows <- Gen.oneOf(Gen.const(0), Gen.choose(1, 300))
      seed <- Gen.long
    } yield (types, names, mapKeys.toList, indexed, mapIndexes.toList, rows, seed)
    forAll(table, minSuccessful(100)) { case (types, names, mapKeys, indexed, mapIndexes, rowCount, seed) =>
      val fields = names.zip(types).map { case (n, t) => DataField(n, t) } :+ DataField("m", KeyType.IntType, isMap = true)
      val byType = (indexed.zip(names).flatMap { case (ts, n) => ts.map(_ -> n) } ++
        (if (mapKeys.isEmpty) Nil else mapIndexes.flatMap(t => mapKeys.map(k => t -> s"m[$k]")))).groupBy(_._1)
      val columnsOptions = byType.toList.map { case (t, ns) => s"file-index.$t.columns" -> ns.map(_._2).mkString(",") }
      val extra = names.zip(indexed).find(_._2.contains(BitmapIndex.Identifier)).map(n => s"file-index.bitmap.${n._1}.version" -> "1") ++
        names.zip(indexed).find(_._2.contains(BloomFilterIndex.Identifier)).map(n => s"file-index.bloom-filter.${n._1}.items" -> "100")
      val random = new scala.util.Random(seed)
      val tableOptions = random.shuffle(columnsOptions ++ extra)
      if (columnsOptions.nonEmpty) {
        val columns: Map[String, Vector[Any]] = fields.map { f =>
          val values =
            if (f.isMap) Vector.fill(rowCount)(if (random.nextInt(8) == 0) null else mapKeys.filter(_ => random.nextBoolean()).map(k => k -> (if (random.nextInt(6) == 0) null else random.nextInt(20) - 10)).toMap)
            else column(f.valueType, bsi = true).pureApply(Gen.Parameters.default, org.scalacheck.rng.Seed(random.nextLong())).padTo(rowCount, null).take(rowCount)
          f.name -> values
        }.toMap
        val (expected, embedded, rowType) = paimonDataFileIndex(fields, columns, rowCount, tableOptions)
        val bytes = DataFileIndex.write(tableOptions, fields, columns, rowCount)
        assert(bytes.sameElements(expected), tableOptions)
        assert(FileIndexContainer.embeddedInManifest(bytes.length.toLong) == embedded)

        // FileIndexFormat.Writer over the same maps, in our header order
        val container = FileIndexContainer.read(bytes, "generated")
        val nested = new java.util.LinkedHashMap[String, java.util.Map[String, Array[Byte]]]()
        for (e <- container.entries)
          nested.computeIfAbsent(e.column, _ => new java.util.LinkedHashMap[String, Array[Byte]]()).put(e.indexType, container.payload(e.column, e.indexType).orNull)
        val out = new java.io.ByteArrayOutputStream
        new FileIndexFormat.Writer(out).writeColumnIndexes(nested)
        assert(out.toByteArray.sameElements(FileIndexContainer.write(container.columns.map(c => c -> container.entries.filter(_.column == c).map(e => e.indexType -> container.payload(c, e.indexType).orNull)))))

        // predicates: one leaf per plain column and an AND / OR of two
        val paimon = new PaimonPredicate(bytes, rowType)
        val ourPredicate = new FileIndexPredicate(container, fields)
        val builder = new PredicateBuilder(rowType)
        val leaves = fields.zipWithIndex.filterNot(_._1.isMap).flatMap { case (f, i) =>
          val present = columns(f.name).filter(_ != null)
          val lit = if (present.nonEmpty && random.nextBoolean()) present(random.nextInt(present.length)) else value(f.valueType, bsi = true).pureApply(Gen.Parameters.default, org.scalacheck.rng.Seed(random.nextLong()))
          val p = paimonValue(lit, f.valueType)
          Seq[(Predicate, PaimonPredicateTree)](
            Predicate.Leaf(Op.Equal, f.name, Seq(lit)) -> builder.equal(i, p),
            Predicate.Leaf(Op.IsNull, f.name) -> builder.isNull(i),
            Predicate.Leaf(Op.GreaterThan, f.name, Seq(lit)) -> builder.greaterThan(i, p),
            Predicate.Leaf(Op.NotEqual, f.name, Seq(lit)) -> builder.notEqual(i, p)
          )
        }
        samePredicateAnswers(ourPredicate, paimon, leaves)
      }
    }
  }
  /** Paimon's `FileIndexFormat.Reader.readColumnIndex(column)` as labels (sorted: its Set has no order). */
  private def paimonHeld(reader: FileIndexFormat.Reader, column: String): Seq[String] =
    reader.readColumnIndex(column).asScala.toSeq.map { r =>
      r.getClass.getName match {
        case "org.apache.paimon.fileindex.empty.EmptyFileIndexReader"               => "empty"
        case "org.apache.paimon.fileindex.bloomfilter.BloomFilterFileIndex$Reader"  => BloomFilterIndex.Identifier
        case "org.apache.paimon.fileindex.bitmap.BitmapFileIndex$Reader"            => BitmapIndex.Identifier
        case "org.apache.paimon.fileindex.bsi.BitSliceIndexBitmapFileIndex$Reader"  => BitSliceIndex.Identifier
        case "org.apache.paimon.fileindex.rangebitmap.RangeBitmapFileIndex$Reader"  => RangeBitmapIndex.Identifier
        case other                                                                 => s"unknown $other"
      }
    }.sorted

  test("containers: the readers of every mix of empty and non-empty entries are the ones FileIndexFormat.Reader holds") {
    val types = Seq(BloomFilterIndex.Identifier, BitmapIndex.Identifier, BitSliceIndex.Identifier, RangeBitmapIndex.Identifier)
    // per index type: absent, empty (start -1) or a payload; every one of the 3^4 - 1 mixes, each a column
    val mixes = types.foldLeft(Seq(Seq.empty[(String, Int)])) { (acc, t) => for (m <- acc; state <- 0 to 2) yield m :+ (t -> state) }
      .map(_.filter(_._2 != 0)).filter(_.nonEmpty)
    assert(mixes.length == 80)
    forAll(Gen.long, minSuccessful(8)) { seed =>
      val random = new scala.util.Random(seed)
      val values = Vector.fill(1 + random.nextInt(50))(if (random.nextInt(5) == 0) null else Int.box(random.nextInt(20) - 10))
      // a column's entries in a random order, sometimes split over two header columns of one name
      val columns = mixes.zipWithIndex.flatMap { case (mix, i) =>
        val entries = random.shuffle(mix).map { case (t, state) =>
          t -> (if (state == 1) null else { val w = FileIndexContainer.writer(t, KeyType.IntType, Map.empty); values.foreach(w.write); w.serialize() })
        }
        val split = if (entries.length > 1 && random.nextBoolean()) 1 + random.nextInt(entries.length - 1) else entries.length
        Seq(s"c$i" -> entries.take(split), s"c$i" -> entries.drop(split)).filter(_._2.nonEmpty)
      }
      val bytes = FileIndexContainer.write(columns)
      val names = mixes.indices.map(i => s"c$i")
      val rowType = RowType.of(names.map(_ => DataTypes.INT()).toArray[org.apache.paimon.types.DataType], names.toArray)
      val paimon = new FileIndexFormat.Reader(new ByteArraySeekableStream(bytes), rowType)
      val container = FileIndexContainer.read(bytes, "generated")
      for ((mix, i) <- mixes.zipWithIndex) {
        val column = s"c$i"
        val expected = mix.map { case (t, state) => if (state == 1) "empty" else t }.distinct.sorted
        assert(paimonHeld(paimon, column) == expected, s"$column: $mix")
        assert(container.held(column).map(e => if (e.isEmpty) "empty" else e.indexType).sorted == expected, s"$column: $mix")
        val readers = container.readers(column, KeyType.IntType)
        assert(readers.count(_ eq EmptyFileIndexReader) == (if (expected.contains("empty")) 1 else 0) && readers.length == expected.length)
      }
    }
  }
}
