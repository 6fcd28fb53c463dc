package io.indexbridge.spark

import java.nio.file.Files

import scala.jdk.CollectionConverters._
import scala.util.chaining._

import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.fileindex._
import io.indexbridge.paimon.fileindex.FileIndexGen.{paimonType, paimonValue}
import org.apache.paimon.CoreOptions
import org.apache.paimon.data.{BinaryString, GenericMap, GenericRow}
import org.apache.paimon.fileindex.FileIndexOptions
import org.apache.paimon.fileindex.bitmap.BitmapIndexResult
import org.apache.paimon.fs.{Path => PaimonPath}
import org.apache.paimon.fs.local.LocalFileIO
import org.apache.paimon.io.DataFileIndexWriter
import org.apache.paimon.types.{DataTypes, RowType}
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.functions.{col, expr, lit, struct}
import org.apache.spark.sql.catalyst.expressions.aggregate.Complete
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.execution.aggregate.{ObjectHashAggregateExec, SortAggregateExec}
import org.apache.spark.sql.indexbridge.{FileIndexConditions, SortedFileIndexAggregation, SparkFileIndexTypes}
import org.apache.spark.sql.types._
import org.roaringbitmap.RoaringBitmap
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/** The Spark surface of the file indexes on a local[2] session: the aggregates give the bytes of
  * Paimon 1.4.2's own `DataFileIndexWriter` (and of the codecs) for the same rows shuffled, and
  * pruning never drops a row a plain filter keeps while skipping what the codecs' own
  * `FileIndexPredicate` and Paimon's own excludes. */
class FileIndexSparkSpec extends AnyFunSuite with BeforeAndAfterAll with AdaptiveSparkPlanHelper {
  private lazy val spark = SparkSession.builder().master("local[2]").appName("FileIndexSparkSpec")
    .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "3")
    .config("spark.sql.datetime.java8API.enabled", "true")
    .config("spark.sql.extensions", classOf[IndexBridgeExtensions].getName).getOrCreate()
    .tap(_.sparkContext.setLogLevel("FATAL")) // the position-gap test fails a task on purpose

  override def afterAll(): Unit = spark.stop()

  /** (Spark field, Paimon type of the codecs) of the generated columns; `m` is MAP<STRING, INT>. */
  private val columns: Seq[(StructField, KeyType)] = Seq(
    StructField("k", LongType) -> KeyType.BigIntType,
    StructField("c", StringType) -> KeyType.VarCharType(Int.MaxValue),
    StructField("v", IntegerType) -> KeyType.IntType,
    StructField("d", DecimalType(10, 2)) -> KeyType.DecimalType(10, 2),
    StructField("ts", TimestampType) -> KeyType.LocalZonedTimestampType(6),
    StructField("dt", DateType) -> KeyType.DateType,
    StructField("f", DoubleType) -> KeyType.DoubleType,
    StructField("b", BooleanType) -> KeyType.BooleanType,
    StructField("bin", BinaryType) -> KeyType.VarBinaryType(Int.MaxValue),
    StructField("m", MapType(StringType, IntegerType)) -> KeyType.IntType
  )
  private val schema = StructType(StructField("file", StringType) +: StructField("pos", LongType) +: columns.map(_._1))
  private val dataSchema = StructType(columns.map(_._1))

  private val options = Seq(
    "file-index.bloom-filter.columns" -> "k,f,bin",
    "file-index.bloom-filter.k.items" -> "300",
    "file-index.bloom-filter.k.fpp" -> "0.01",
    "file-index.bloom-filter.f.items" -> "200",
    "file-index.bloom-filter.bin.items" -> "100",
    "file-index.in-manifest-threshold" -> "2 kb",
    "file-index.bitmap.columns" -> "c,ts,b,m[a]",
    "file-index.bsi.columns" -> "v,d,dt,k"
  )

  /** Rows of `files` data files (sizes 1 .. 250), values with nulls, as Spark external rows. */
  private def rows(seed: Long, files: Int): Seq[Row] = {
    val random = new scala.util.Random(seed)
    def maybe[T](v: => T): Any = if (random.nextInt(9) == 0) null else v
    (0 until files).flatMap { f =>
      val n = if (f == 0) 1 else 50 + random.nextInt(200)
      (0 until n).map { pos =>
        Row(s"part-$f.parquet", pos.toLong,
          maybe(random.nextInt(1000).toLong * (f + 1)),
          maybe(s"c${random.nextInt(5)}"),
          maybe(random.nextInt(200) - 100 + 50 * f),
          maybe(java.math.BigDecimal.valueOf(random.nextInt(100000) - 50000, 2)),
          maybe(java.time.Instant.ofEpochSecond(1700000000L + random.nextInt(10) * 3600L, random.nextInt(1000) * 1000L)),
          maybe(java.time.LocalDate.ofEpochDay(19000 + random.nextInt(30) + 40 * f)),
          maybe(random.nextInt(50) / 4.0 + 0.5),
          maybe(random.nextBoolean()),
          maybe(Array.fill(random.nextInt(4))(random.nextInt(3).toByte)),
          maybe(Seq("a", "b").filter(_ => random.nextBoolean()).map(_ -> random.nextInt(4)).toMap))
      }
    }
  }

  /** A Spark external value as the codecs (and FileIndexGen.paimonValue) take it. */
  private def codecValue(v: Any): Any = v match {
    case i: java.time.Instant   => (Math.floorDiv(i.getEpochSecond * 1000000L + i.getNano / 1000, 1000L), (i.getNano / 1000 % 1000) * 1000)
    case d: java.time.LocalDate => d.toEpochDay.toInt
    case m: Map[_, _]           => m
    case other                  => other
  }

  /** Paimon's DataFileIndexWriter over one file's rows (in position order). */
  private def paimonContainer(fileRows: Seq[Row]): Array[Byte] = {
    val map = new java.util.LinkedHashMap[String, String]()
    options.foreach { case (k, v) => map.put(k, v) }
    val dir = Files.createTempDirectory("ib-spark-fileindex")
    val writer = new DataFileIndexWriter(LocalFileIO.create(), new PaimonPath(dir.resolve("data.index").toString), rowType,
      new FileIndexOptions(new CoreOptions(map)), null)
    for (r <- fileRows)
      writer.write(GenericRow.of(columns.zipWithIndex.map { case ((f, t), i) =>
        val v = codecValue(r.get(i + 2))
        if (v != null && f.dataType.isInstanceOf[MapType])
          new GenericMap(v.asInstanceOf[Map[String, Any]].map { case (k, x) => BinaryString.fromString(k) -> x }.asJava)
        else paimonValue(v, t)
      }: _*))
    writer.close()
    Option(writer.result().embeddedIndexBytes()).getOrElse(Files.readAllBytes(dir.resolve("data.index")))
  }

  private lazy val rowType = RowType.of(columns.map {
    case (f, t) if f.dataType.isInstanceOf[MapType] => DataTypes.MAP(DataTypes.STRING(), paimonType(t))
    case (_, t)                                     => paimonType(t)
  }.toArray, columns.map(_._1.name).toArray)

  /** Our predicate as Paimon's (None where Paimon's has no counterpart: map keys, REMAIN under OR). */
  private def paimonPredicate(p: Predicate): Option[org.apache.paimon.predicate.Predicate] = {
    import org.apache.paimon.predicate.PredicateBuilder
    val builder = new PredicateBuilder(rowType)
    p match {
      case Predicate.Leaf(op, name, lits) if columns.exists(_._1.name == name) =>
        val i = columns.indexWhere(_._1.name == name)
        Some(io.indexbridge.reference.PaimonAnswers.leaf(builder, op, i, lits.map(paimonValue(_, columns(i)._2))))
      case Predicate.And(children) =>
        val translated = children.filter(_ != FileIndexConditions.Remain).map(paimonPredicate)
        if (translated.isEmpty || translated.contains(None)) None else Some(PredicateBuilder.and(translated.flatten.asJava))
      case Predicate.Or(children) =>
        val translated = children.map(paimonPredicate)
        if (translated.contains(None)) None else Some(PredicateBuilder.or(translated.flatten.asJava))
      case _ => None
    }
  }

  private lazy val data: Seq[Row] = rows(7, files = 4)
  private lazy val dataFrame: DataFrame = spark.createDataFrame(data.asJava, schema).repartition(3).cache()
  private def byFile: Map[String, Seq[Row]] = data.groupBy(_.getString(0)).map { case (f, rs) => f -> rs.sortBy(_.getLong(1)) }

  test("ib_file_index_agg on shuffled rows gives Paimon's DataFileIndexWriter bytes; single-index aggregates the codecs'") {
    val got = dataFrame.groupBy("file").agg(
      functions.fileIndexAgg(col("pos"), struct(columns.map(c => col(c._1.name)): _*), options).as("container"),
      functions.bloomFilterAgg(col("k"), Seq("items" -> "300", "fpp" -> "0.01")).as("bloom"),
      functions.bitmapIndexAgg(col("pos"), col("c"), Seq("version" -> "1")).as("bitmap"),
      functions.bsiAgg(col("pos"), col("dt")).as("bsi")
    ).collect()
    assert(got.length == 4)
    for (r <- got) {
      val fileRows = byFile(r.getString(0))
      def values(name: String) = fileRows.map(x => codecValue(x.get(schema.fieldIndex(name))))
      assert(r.getAs[Array[Byte]]("container").sameElements(paimonContainer(fileRows)), r.getString(0))
      assert(r.getAs[Array[Byte]]("bloom").sameElements(BloomFilterIndex.write(KeyType.BigIntType, values("k"), Map("items" -> "300", "fpp" -> "0.01"))))
      val bitmap = BitmapIndex.writer(KeyType.VarCharType(Int.MaxValue), Map("version" -> "1"))
      values("c").foreach(bitmap.write)
      assert(r.getAs[Array[Byte]]("bitmap").sameElements(bitmap.serialize()))
      val bsi = BitSliceIndex.writer(KeyType.DateType)
      values("dt").foreach(bsi.write)
      assert(r.getAs[Array[Byte]]("bsi").sameElements(bsi.serialize()))
    }
  }

  test("SortedFileIndexAggregation: one Complete sort aggregate, a data file's rows at a time; the bytes of Spark's plan; with AQE and without") {
    for (seed <- 11 to 12) {
      spark.conf.set("spark.sql.adaptive.enabled", (seed == 11).toString) // planned alike
      val many = spark.createDataFrame(rows(seed, files = 9).asJava, schema).repartition(4)
      val groupings = Seq(col("file"), col("file").as("renamed"), expr("concat('x/', file)").as("computed"))
      for (grouping <- groupings) {
        def run(sorted: Boolean) = {
          spark.conf.set(SortedFileIndexAggregation.SortedKey, sorted.toString)
          val df = many.groupBy(grouping).agg(
            functions.fileIndexAgg(col("pos"), struct(columns.map(c => col(c._1.name)): _*), options).as("container"),
            functions.rangeBitmapAgg(col("pos"), col("v")).as("range"))
          val got = df.collect().map(r => r.getString(0) -> (r.getAs[Array[Byte]](1).toSeq, r.getAs[Array[Byte]](2).toSeq)).toMap
          (got, collect(df.queryExecution.executedPlan) { case p => p })
        }
        val (sorted, sortedPlan) = run(sorted = true)
        val (plain, sparkPlan) = run(sorted = false)
        spark.conf.unset(SortedFileIndexAggregation.SortedKey)
        assert(sorted.size == 9 && sorted == plain, s"seed $seed, $grouping")
        for ((file, (container, _)) <- sorted)
          assert(container == paimonContainer(byFileOf(many, file.stripPrefix("x/"))).toSeq, s"seed $seed, $grouping: $file")
        val aggregates = sortedPlan.collect { case a: SortAggregateExec => a.aggregateExpressions.map(_.mode) }
        assert(aggregates == Seq(Seq(Complete, Complete)) && !sortedPlan.exists(_.isInstanceOf[ObjectHashAggregateExec]), sortedPlan)
        assert(sparkPlan.count(_.isInstanceOf[ObjectHashAggregateExec]) == 2, sparkPlan)
      }
    }
    spark.conf.unset("spark.sql.adaptive.enabled")
  }

  private def byFileOf(df: DataFrame, file: String): Seq[Row] =
    df.where(col("file") === file).collect().toSeq.sortBy(_.getLong(1))

  test("an empty data file (a global aggregate over no rows) gets Paimon's empty container; gaps in positions fail") {
    val empty = spark.createDataFrame(java.util.Collections.emptyList[Row](), schema)
    val bytes = empty.agg(functions.fileIndexAgg(col("pos"), struct(columns.map(c => col(c._1.name)): _*), options)).first().getAs[Array[Byte]](0)
    assert(bytes.sameElements(paimonContainer(Nil)))
    val gap = spark.createDataFrame(Seq(Row("f", 0L, 1L), Row("f", 2L, 2L)).asJava, StructType.fromDDL("file string, pos long, k long"))
    val e = intercept[Exception](gap.groupBy("file").agg(functions.bsiAgg(col("pos"), col("k"))).collect())
    assert(e.getMessage.contains("positions must be 0 .. n-1"))
  }

  test("build, prune and applyPruning: Paimon's bytes, sound, and answering as FileIndexPredicate and Paimon's own do") {
    val dir = Files.createTempDirectory("ib-spark-build")
    val indexes = FileIndexes.build(dataFrame, "file", "pos", options, Some(dir.toString)).cache()
    val built = indexes.collect().map(r => r.getString(0) -> r).toMap
    assert(built.keySet == byFile.keySet)
    for ((file, r) <- built) {
      val bytes = Option(r.getAs[Array[Byte]]("embedded")).getOrElse(Files.readAllBytes(java.nio.file.Paths.get(r.getAs[String]("index_file"))))
      assert(bytes.sameElements(paimonContainer(byFile(file))), file)
      assert(r.getAs[Long]("size") == bytes.length)
      assert(FileIndexes.inManifestThreshold(options) == 2048)
      assert((r.getAs[String]("index_file") == null) == (bytes.length <= 2048), s"$file: ${bytes.length} bytes")
    }
    assert(built.values.exists(_.getAs[String]("index_file") != null) && built.values.exists(_.getAs[String]("index_file") == null),
      built.values.map(_.getAs[Long]("size")))
    // a retried build writes the same bytes under the same names, and leaves no temporary files
    val again = FileIndexes.build(dataFrame, "file", "pos", options, Some(dir.toString)).collect()
    assert(again.map(_.getAs[String]("index_file")).toSet == built.values.map(_.getAs[String]("index_file")).toSet)
    assert(!Files.list(dir).iterator().asScala.exists(_.getFileName.toString.startsWith(".")))

    val fields = dataSchema.fields.toSeq.flatMap(SparkFileIndexTypes.field)
    def leaf(op: Op, c: String, lits: Any*) = Predicate.Leaf(op, c, lits)
    val someK = data.find(r => !r.isNullAt(2) && r.getString(0) == "part-2.parquet").get.getLong(2)
    val conditions: Seq[(String, Predicate)] = Seq(
      s"k = $someK" -> leaf(Op.Equal, "k", someK),
      "c = 'c3'" -> leaf(Op.Equal, "c", "c3"),
      "c IN ('c1', 'zz')" -> leaf(Op.In, "c", "c1", "zz"),
      "c <> 'c0' AND v < -90" -> Predicate.And(Seq(leaf(Op.NotEqual, "c", "c0"), leaf(Op.LessThan, "v", -90))),
      "v BETWEEN 40 AND 60" -> Predicate.And(Seq(leaf(Op.GreaterOrEqual, "v", 40), leaf(Op.LessOrEqual, "v", 60))),
      "NOT (v >= 0) OR d IS NULL" -> Predicate.Or(Seq(leaf(Op.LessThan, "v", 0), leaf(Op.IsNull, "d"))),
      "d > 400.00" -> leaf(Op.GreaterThan, "d", new java.math.BigDecimal("400.00")),
      "dt >= DATE'2022-01-20' AND b" -> Predicate.And(Seq(leaf(Op.GreaterOrEqual, "dt", 19012), FileIndexConditions.Remain)),
      "m['a'] = 3 OR m['a'] IS NULL" -> Predicate.Or(Seq(leaf(Op.Equal, "m[a]", 3), leaf(Op.IsNull, "m[a]"))),
      "c NOT IN ('c1', 'c2') AND b IS NOT NULL" -> Predicate.And(Seq(leaf(Op.NotIn, "c", "c1", "c2"), leaf(Op.IsNotNull, "b"))),
      "f = 3.0 AND upper(c) = 'C1'" -> Predicate.And(Seq(leaf(Op.Equal, "f", 3.0), FileIndexConditions.Remain)),
      "ts = TIMESTAMP'2023-11-14 22:13:20.001'" ->
        leaf(Op.Equal, "ts", (java.sql.Timestamp.valueOf("2023-11-14 22:13:20.001").getTime, 0))
    )
    var skips, rowSets, paimonChecked = 0
    // one job for every condition's filter, one for every condition's pruning
    val flags = dataFrame.select(col("file") +: col("pos") +: conditions.indices.map(i => expr(conditions(i)._1).as(s"_$i")): _*).collect()
    val pruned = conditions.indices.map(i => FileIndexes.prune(indexes.coalesce(1), conditions(i)._1, dataSchema).select(lit(i).as("i"), col("*")))
      .reduce(_ union _).collect().map(r => (r.getInt(0), r.getString(1)) -> r).toMap
    for (((condition, expected), i) <- conditions.zipWithIndex) {
      val translated = FileIndexes.predicate(condition, dataSchema)
      assert(translated == expected, condition)
      for ((file, r) <- built) {
        val bytes = Option(r.getAs[Array[Byte]]("embedded")).getOrElse(Files.readAllBytes(java.nio.file.Paths.get(r.getAs[String]("index_file"))))
        val answer = new FileIndexPredicate(FileIndexContainer.read(bytes, file), fields).evaluate(translated)
        val p = pruned((i, file))
        // Paimon's own FileIndexPredicate over the same container (an empty row set and SKIP are alike)
        for (theirs <- paimonPredicate(translated)) {
          val result = new org.apache.paimon.fileindex.FileIndexPredicate(bytes, rowType).evaluate(theirs)
          assert(result.remain == answer.remain, s"Paimon: $condition on $file")
          (result, answer) match {
            case (b: BitmapIndexResult, FileIndexResult.Rows(set)) =>
              assert(b.get().iterator().asScala.map(_.intValue).toSeq == set.toArray.toSeq, s"Paimon rows: $condition on $file")
            case (b: BitmapIndexResult, _)   => assert(!b.remain, s"Paimon rows where we have none: $condition on $file")
            case (_, FileIndexResult.Rows(set)) => assert(set.isEmpty, s"rows where Paimon has none: $condition on $file")
            case _                           => // REMAIN or SKIP on both sides, compared above
          }
          paimonChecked += 1
        }
        val matching = flags.filter(f => f.getString(0) == file && !f.isNullAt(i + 2) && f.getBoolean(i + 2)).map(_.getLong(1).toInt)
        assert(p.getAs[Boolean]("skipped") == !answer.remain, s"$condition on $file")
        assert(!p.getAs[Boolean]("skipped") || matching.isEmpty, s"$condition on $file: a matching row in a skipped file")
        if (!answer.remain) skips += 1
        answer match {
          case FileIndexResult.Rows(set) if !set.isEmpty =>
            val rows = RoaringBitmap.bitmapOf()
            rows.deserialize(java.nio.ByteBuffer.wrap(p.getAs[Array[Byte]]("rows")))
            assert(rows == set && p.getAs[Long]("candidates") == set.getCardinality, s"$condition on $file")
            assert(matching.forall(rows.contains), s"$condition on $file: a matching row is not a candidate")
            rowSets += 1
          case _ => assert(p.isNullAt(p.fieldIndex("rows")), s"$condition on $file")
        }
      }
    }
    val condition = conditions(3)._1
    val kept = FileIndexes.applyPruning(dataFrame, FileIndexes.prune(indexes, condition, dataSchema), "file", "pos")
    assert(kept.where(condition).select("file", "pos").collect().toSet == dataFrame.where(condition).select("file", "pos").collect().toSet)
    assert(paimonChecked >= 40, s"only $paimonChecked answers compared with Paimon's")
    assert(skips >= 5 && rowSets >= 10, s"the conditions must exercise skipping ($skips files) and row sets ($rowSets)")
    // the Column form translates like the SQL text
    assert(FileIndexes.predicate(col("c") === "c3", dataSchema) == leaf(Op.Equal, "c", "c3"))
  }
}
