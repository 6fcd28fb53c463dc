package io.indexbridge.examples

import io.indexbridge.paimon.{DeletionFile, DeletionVector}
import io.indexbridge.spark.IndexBridgeExtensions
import io.indexbridge.spark.functions.{dvAgg, dvCardinality}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.functions.{col, concat, lit, sum}

import java.nio.file.Paths

/** A Scala Spark job over the jar, for `spark-submit --class io.indexbridge.examples.DeletionVectorsJob`:
  * deletes every 7th of `rows` generated rows spread over 16 data files in 4 buckets, aggregates
  * one Paimon deletion vector per data file with `dvAgg`, writes one deletion file per bucket on
  * the executors (as Paimon's maintainer does), and writes the index-manifest rows as JSON.
  *
  * Arguments: OUTDIR [ROWS] [bitmap64]. Deletion files go to OUTDIR/index, the manifest rows to
  * OUTDIR/manifest. */
object DeletionVectorsJob {
  def main(args: Array[String]): Unit = {
    require(args.nonEmpty, "usage: DeletionVectorsJob OUTDIR [ROWS] [bitmap64]")
    val out = args(0)
    val rows = if (args.length > 1) args(1).toLong else 100000L
    val bitmap64 = args.length > 2 && args(2).toBoolean
    val spark = SparkSession.builder().appName("indexbridge-dv-job").withExtensions(new IndexBridgeExtensions).getOrCreate()
    import spark.implicits._

    val deletes = spark
      .range(rows)
      .where(col("id") % 7 === 0)
      .select(
        (col("id") % 4).as("bucket"),
        concat(lit("data-"), (col("id") % 16).cast("string"), lit(".parquet")).as("file"),
        (col("id") / 16).cast("long").as("pos"))
    val dvs = deletes.groupBy(col("bucket"), col("file")).agg(dvAgg(col("pos"), bitmap64).as("dv"))

    val indexDir = Paths.get(out, "index").toString
    val ranges = dvs
      .as[(Long, String, Array[Byte])]
      .groupByKey(_._1)
      .flatMapGroups { (bucket, entries) =>
        val vectors = entries.map { case (_, file, dv) => file -> DeletionVector.deserialize(dv, source = file) }.toSeq
        DeletionFile
          .write(Paths.get(indexDir), vectors, fileName = n => s"index-bucket-$bucket-$n")
          .flatMap(meta => meta.ranges.map(r => (bucket, meta.fileName, r.dataFile, r.offset, r.length, r.cardinality)))
      }
      .toDF("bucket", "index_file", "data_file", "offset", "length", "cardinality")
      .cache()
    ranges.write.mode("overwrite").json(Paths.get(out, "manifest").toString)

    val deleted = deletes.count()
    val recorded = ranges.agg(sum(col("cardinality"))).first().getLong(0)
    val aggregated = dvs.agg(sum(dvCardinality(col("dv")))).first().getLong(0)
    println(s"indexbridge DeletionVectorsJob: $deleted deleted rows, ${ranges.count()} DVs, " +
      s"${ranges.select("index_file").distinct().count()} deletion files, cardinality recorded $recorded, aggregated $aggregated")
    spark.stop()
    if (recorded != deleted || aggregated != deleted) sys.exit(1)
  }
}
