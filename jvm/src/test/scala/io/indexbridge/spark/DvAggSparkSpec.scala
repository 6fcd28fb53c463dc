package io.indexbridge.spark

import scala.util.chaining._

import io.indexbridge.Depth
import io.indexbridge.paimon.DvGen
import io.indexbridge.spark.functions.dvAgg
import org.apache.paimon.deletionvectors.{Bitmap64DeletionVector, BitmapDeletionVector, DeletionVector => PaimonDeletionVector}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.functions.{col, count, date_from_unix_date, lit, unix_date}
import org.apache.spark.sql.indexbridge.{BoundedDvAggregation, BoundedPartialAggregateExec}
import org.scalacheck.Gen
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/** `ib_dv_agg` as [[BoundedDvAggregation]] plans it: partial aggregation in chunks of bounded
  * memory, then a sort-based merge. Each file's DV against the frame of Paimon 1.4.2's own
  * `BitmapDeletionVector` / `Bitmap64DeletionVector` of the same positions, for chunk budgets from
  * a few groups per chunk to one chunk per task, and for Spark's plan (budget 0). */
class DvAggSparkSpec extends AnyFunSuite with BeforeAndAfterAll with AdaptiveSparkPlanHelper {
  private lazy val spark = SparkSession.builder().master("local[2]").appName("DvAggSparkSpec")
    .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "3")
    .config("spark.sql.extensions", classOf[IndexBridgeExtensions].getName)
    .getOrCreate().tap(_.sparkContext.setLogLevel("ERROR"))

  override def afterAll(): Unit = spark.stop()

  private def paimonFrame(positions: Iterable[Long], bitmap64: Boolean): Seq[Byte] = {
    val dv = if (bitmap64) new Bitmap64DeletionVector else new BitmapDeletionVector
    positions.foreach(dv.delete)
    PaimonDeletionVector.serializeToBytes(dv).toSeq
  }

  private def executed(plan: SparkPlan): Seq[SparkPlan] = collect(plan) { case p => p }

  for (bitmap64 <- Seq(false, true); seed <- Depth.pick(1 to 2, 1, s"frames-$bitmap64")) {
    val width = if (bitmap64) "64-bit" else "32-bit"
    val aqe = seed == 1 // the plan is the same without AQE
    test(s"$width, seed $seed: every file's DV is Paimon's frame, in chunks or not (AQE ${if (aqe) "on" else "off"})") {
      spark.conf.set("spark.sql.adaptive.enabled", aqe.toString)
      val files = Gen.listOfN(7, DvGen.positions(bitmap64)).pureApply(Gen.Parameters.default.withSize(6), org.scalacheck.rng.Seed(seed.toLong))
      val rows = new scala.util.Random(seed).shuffle(files.zipWithIndex.flatMap { case (set, f) => set.toSeq.map(p => (s"f$f", p)) })
      val deletes = spark.createDataFrame(rows).toDF("file", "pos").repartition(4)
      val expected = files.zipWithIndex.collect { case (set, f) if set.nonEmpty => s"f$f" -> paimonFrame(set, bitmap64) }.toMap
      // 8000 bytes: a chunk ends after about a thousand positions; 1 byte: a chunk of one row, then
      // Spark's sort-based aggregation for the rest of the task; 64 MiB: one chunk per task; 0: Spark's plan
      for (budget <- Seq("8000", "1", BoundedDvAggregation.DefaultPartialBytes.toString, "0")) {
        spark.conf.set(BoundedDvAggregation.PartialBytesKey, budget)
        val df = deletes.groupBy("file").agg(dvAgg(col("pos"), bitmap64).as("dv"), count(lit(1)).as("n"))
        val got = df.collect().map(r => r.getString(0) -> (r.getAs[Array[Byte]]("dv").toSeq, r.getLong(2))).toMap
        assert(got.keySet == expected.keySet, s"budget $budget")
        for ((file, (dv, n)) <- got) {
          assert(dv == expected(file), s"budget $budget: $file")
          assert(n == files(file.drop(1).toInt).size)
        }
        // DV aggregates alone: the chunks hash the groups themselves (DvChunk)
        val dvsOnly = deletes.groupBy("file").agg(dvAgg(col("pos"), bitmap64).as("dv"))
        assert(dvsOnly.collect().map(r => r.getString(0) -> r.getAs[Array[Byte]]("dv").toSeq).toMap == expected, s"budget $budget")
        val nodes = executed(df.queryExecution.executedPlan)
        val bounded = nodes.collect { case b: BoundedPartialAggregateExec => b }
        if (budget == "0") assert(bounded.isEmpty)
        else {
          assert(bounded.size == 1 && nodes.exists(_.nodeName == "SortAggregate"), df.queryExecution.executedPlan.toString)
          val chunks = bounded.head.metrics("chunks").value
          val sorted = bounded.head.metrics("numTasksFallBacked").value
          budget match {
            case "8000" => assert(chunks > 4 && sorted == 0, s"$chunks chunks, $sorted sorting")
            case "1"    => assert(chunks <= 8 && sorted > 0, s"$chunks chunks, $sorted sorting")
            case _      => assert(chunks <= 4 && sorted == 0, s"$chunks chunks, $sorted sorting")
          }
        }
      }
      spark.conf.unset(BoundedDvAggregation.PartialBytesKey)
      spark.conf.unset("spark.sql.adaptive.enabled")
    }
  }

  for (seed <- Depth.pick(1 to 2, 1, "alone")) test(s"seed $seed: DV aggregates alone, over composite keys with nulls, computed positions, 120 groups") {
    val rnd = new scala.util.Random(seed)
    // 30 names of 2 to 31 bytes (keys of 3 to 6 words) times 3 buckets and null, a null name in
    // some rows; int positions (cast to long: a computed input), some null
    val rows = Seq.fill(20000) {
      val k = rnd.nextInt(30)
      val name = if (rnd.nextInt(50) == 0) null else "f" + "x" * k + k
      val bucket = if (rnd.nextInt(4) == 0) null else Integer.valueOf(rnd.nextInt(3))
      val pos = if (rnd.nextInt(30) == 0) null else Integer.valueOf(if (rnd.nextBoolean()) rnd.nextInt(70000) else rnd.nextInt(300))
      (name, bucket, pos)
    }
    val deletes = spark.createDataFrame(rows).toDF("file", "bucket", "pos").repartition(3)
    val expected = rows.groupBy(r => (r._1, r._2)).map { case (key, rs) =>
      val positions = rs.flatMap(r => Option(r._3)).map(_.toLong)
      key -> (paimonFrame(positions, bitmap64 = false), paimonFrame(positions, bitmap64 = true))
    }
    // 100 kB: two chunks per task, each with tens of rows per group (no sort fallback)
    for (budget <- Seq("100000", BoundedDvAggregation.DefaultPartialBytes.toString, "0")) {
      spark.conf.set(BoundedDvAggregation.PartialBytesKey, budget)
      val df = deletes.groupBy("file", "bucket").agg(dvAgg(col("pos")).as("dv32"), dvAgg(col("pos"), bitmap64 = true).as("dv64"))
      val got = df.collect().map { r =>
        (r.getString(0), if (r.isNullAt(1)) null else Integer.valueOf(r.getInt(1))) ->
          (r.getAs[Array[Byte]]("dv32").toSeq, r.getAs[Array[Byte]]("dv64").toSeq)
      }
      assert(got.length == expected.size && got.toMap == expected, s"budget $budget")
      val bounded = executed(df.queryExecution.executedPlan).collect { case b: BoundedPartialAggregateExec => b }
      val (chunks, sorted) = bounded.map(b => (b.metrics("chunks").value, b.metrics("numTasksFallBacked").value)).headOption.getOrElse((0L, 0L))
      budget match {
        case "100000" => assert(chunks > 3 && sorted == 0, s"$chunks chunks, $sorted sorting")
        case "0"      => assert(bounded.isEmpty)
        case _        => assert(chunks == 3 && sorted == 0, s"$chunks chunks, $sorted sorting")
      }
    }
    spark.conf.unset(BoundedDvAggregation.PartialBytesKey)
  }

  for (seed <- Depth.pick(1 to 2, 1, "in place")) test(s"seed $seed: one-column keys read in place (BIGINT, INT, DATE, STRING, nulls; up to 1500 groups): the groups and DVs of Spark's plan") {
    val rnd = new scala.util.Random(seed)
    // strings of 0 to 24 bytes (ending inside a word and on one), multi-byte ones, the empty
    // string beside null; longs and ints at their extremes and negative (an INT's word is its
    // 32 bits zero-extended, so -1 and 4294967295L differ in kind, not in word)
    val strings = Seq("", "a", "é", "€uro", "x" * 7, "y" * 8, "z" * 9, "é" * 8, "f" * 24) ++ Seq.fill(20)(rnd.alphanumeric.take(rnd.nextInt(20)).mkString)
    val longs = Seq(0L, -1L, 4294967295L, Long.MinValue, Long.MaxValue) ++ Seq.fill(20)(rnd.nextLong())
    val ints = Seq(0, -1, Int.MinValue, Int.MaxValue) ++ Seq.fill(20)(rnd.nextInt())
    def pick[T](values: Seq[T]): Option[T] = if (rnd.nextInt(25) == 0) None else Some(values(rnd.nextInt(values.size)))
    // and a BIGINT of 1500 values: groups past the first arrays and table
    val many = longs ++ Seq.fill(1475)(rnd.nextLong() >> rnd.nextInt(64))
    val rows = Seq.fill(6000)((pick(strings).orNull, pick(longs).map(Long.box).orNull, pick(ints).map(Int.box).orNull,
      pick(ints).map(d => Int.box(d % 100000)).orNull, pick(many).map(Long.box).orNull, rnd.nextInt(5000).toLong))
    // the DATE column from its days (collected as days: the test JVM cannot make java.sql.Date)
    val deletes = spark.createDataFrame(rows).toDF("s", "l", "i", "days", "n", "pos")
      .select(col("s"), col("l"), col("i"), date_from_unix_date(col("days")).as("d"), col("n"), col("pos")).repartition(3)
    for (key <- Seq("s", "l", "i", "d", "n")) withClue(key) {
      val runs = for (budget <- Seq("2000", BoundedDvAggregation.DefaultPartialBytes.toString, "0")) yield {
        spark.conf.set(BoundedDvAggregation.PartialBytesKey, budget)
        val df = deletes.groupBy(key).agg(dvAgg(col("pos")).as("dv"))
        val got = df.select(if (key == "d") unix_date(col("d")) else col(key), col("dv")).collect()
          .map(r => Option(r.get(0)) -> r.getAs[Array[Byte]]("dv").toSeq)
        assert(got.length == got.map(_._1).distinct.length, s"budget $budget: a key in two groups")
        assert(executed(df.queryExecution.executedPlan).exists(_.isInstanceOf[BoundedPartialAggregateExec]) == (budget != "0"))
        got.toMap
      }
      val column = Seq("s", "l", "i", "d", "n").indexOf(key)
      val expected = rows.groupBy(r => Option(r.productElement(column))).map { case (k, rs) => k -> paimonFrame(rs.map(_._6), bitmap64 = false) }
      for ((run, budget) <- runs.zip(Seq("2000", "default", "0"))) {
        val wrong = (run.keySet ++ expected.keySet).filter(k => run.get(k) != expected.get(k))
        assert(wrong.isEmpty, s"budget $budget: ${wrong.take(3).map(k => k -> (run.get(k).map(_.size), expected.get(k).map(_.size)))}")
      }
    }
    spark.conf.unset(BoundedDvAggregation.PartialBytesKey)
  }

  for (seed <- Depth.pick(1 to 2, 1, "columnar")) test(s"seed $seed: a Parquet scan's batches read in place (one-column and composite keys, nulls, every budget): the DVs of Spark's plan") {
    val rnd = new scala.util.Random(seed)
    val names = Seq.fill(40)(rnd.alphanumeric.take(rnd.nextInt(30)).mkString)
    def maybe[T](v: => T): Option[T] = if (rnd.nextInt(20) == 0) None else Some(v)
    // rows in no order: a file's positions arrive interleaved with the others', over several batches
    val rows = Seq.fill(30000)((maybe(names(rnd.nextInt(names.size))).orNull, maybe(rnd.nextLong() >> rnd.nextInt(64)).map(Long.box).orNull,
      maybe(rnd.nextInt(7)).map(Int.box).orNull, maybe(rnd.nextInt(if (rnd.nextBoolean()) 90000 else 500).toLong).map(Long.box).orNull))
    val dir = java.nio.file.Files.createTempDirectory("dv-agg-columnar").resolve("deletes").toString
    spark.createDataFrame(rows).toDF("s", "l", "i", "pos").repartition(2).write.option("parquet.block.size", "65536").parquet(dir)
    val deletes = spark.read.option("spark.sql.parquet.columnarReaderBatchSize", "1000").parquet(dir)
    for (key <- Seq(Seq("s"), Seq("l"), Seq("i"), Seq("s", "i"))) withClue(key) {
      val expected: Map[Seq[Option[Any]], Seq[Byte]] = rows.groupBy(r => key.map(k => Option(r.productElement(Seq("s", "l", "i").indexOf(k)))).toList).map { case (k, rs) =>
        k -> paimonFrame(rs.flatMap(r => Option(r._4)).map(_.longValue), bitmap64 = false)
      }
      // 2000 bytes: many chunks; 1 byte: Spark's sort-based aggregation after the first chunk
      for (budget <- Seq("2000", "1", BoundedDvAggregation.DefaultPartialBytes.toString, "0")) {
        spark.conf.set(BoundedDvAggregation.PartialBytesKey, budget)
        val df = deletes.groupBy(key.map(col): _*).agg(dvAgg(col("pos")).as("dv"))
        val got: Map[Seq[Option[Any]], Seq[Byte]] = df.collect().map(r => key.indices.map(i => Option(r.get(i))).toList -> r.getAs[Array[Byte]]("dv").toSeq).toMap
        val wrong = (got.keySet ++ expected.keySet).filter(k => got.get(k) != expected.get(k))
        assert(wrong.isEmpty, s"budget $budget: ${wrong.take(3)}")
        val bounded = executed(df.queryExecution.executedPlan).collect { case b: BoundedPartialAggregateExec => b }
        if (budget == "0") assert(bounded.isEmpty)
        else assert(bounded.size == 1 && bounded.head.columnarTransition.isDefined, df.queryExecution.executedPlan.toString)
      }
    }
    spark.conf.unset(BoundedDvAggregation.PartialBytesKey)
  }

  test("a negative budget fails DV aggregations, and only them") {
    spark.conf.set(BoundedDvAggregation.PartialBytesKey, "-1")
    try {
      val df = spark.range(10).select((col("id") % 2).as("f"), col("id").as("pos"))
      assert(df.groupBy("f").agg(count(lit(1))).collect().length == 2)
      val e = intercept[Exception](df.groupBy("f").agg(dvAgg(col("pos"))).collect())
      assert(e.getMessage.contains("spark.indexbridge.dvAgg.partialBytes must be 0 (Spark's plan) or positive, got -1"))
    } finally spark.conf.unset(BoundedDvAggregation.PartialBytesKey)
  }
}
