package io.indexbridge.lakehouse

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._
import scala.util.chaining._

import io.indexbridge.delta.{DeletionVectorDescriptor, DeletionVectorFile}
import io.indexbridge.iceberg.{Puffin, PaimonBridge => IcebergBridge}
import io.indexbridge.paimon.DeletionVector
import io.indexbridge.paimon.table.FileStoreTable
import io.indexbridge.reference.PaimonWriteReference
import io.indexbridge.spark.{IndexBridgeExtensions, Lakehouse}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{Path => HadoopPath}
import org.apache.iceberg.{FileFormat, FileMetadata, PartitionSpec, Files => IcebergFiles, DeleteFile => IcebergDeleteFile}
import org.apache.iceberg.data.BaseDeleteLoader
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.delta.DeltaLog
import org.apache.spark.sql.delta.actions.{DeletionVectorDescriptor => DeltaDescriptor}
import org.apache.spark.sql.delta.storage.dv.HadoopFileSystemDVStore
import org.apache.spark.sql.functions.{col, expr}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/** io.indexbridge.spark.Lakehouse in one local Spark 4.0.1 with Delta 4.4 and Iceberg 1.11:
  * DVs written from DataFrames and from Paimon tables (Paimon 1.4.2's Java API made them) are
  * read by Iceberg's delete loader and Delta's DV store at the offsets we report; DVs of Delta
  * and Iceberg tables deleted from through Spark SQL are read back as the positions their own
  * readers no longer return. */
class LakehouseSparkSpec extends AnyFunSuite with BeforeAndAfterAll {
  private val tmp = Files.createTempDirectory("lakehouse-spark")
  private lazy val spark = SparkSession.builder().master("local[2]").appName("LakehouseSparkSpec")
    .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
    .config("spark.sql.extensions", Seq(classOf[IndexBridgeExtensions].getName, "io.delta.sql.DeltaSparkSessionExtension",
      "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions").mkString(","))
    .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    .config("spark.databricks.delta.properties.defaults.enableDeletionVectors", "true")
    .config("spark.databricks.delta.properties.defaults.checkpointInterval", "2")
    .config("spark.databricks.delta.snapshotPartitions", "2")
    .config("spark.sql.catalog.ice", "org.apache.iceberg.spark.SparkCatalog").config("spark.sql.catalog.ice.type", "hadoop")
    .config("spark.sql.catalog.ice.warehouse", tmp.resolve("iceberg").toUri.toString)
    .getOrCreate().tap(_.sparkContext.setLogLevel("ERROR"))

  override def afterAll(): Unit = spark.stop()

  private val dvStore = new HadoopFileSystemDVStore(new Configuration())
  private def deltaRead(d: DeletionVectorDescriptor, table: Path) =
    dvStore.read(DeltaDescriptor(d.storageType, d.pathOrInlineDv, d.offset.map(Int.box), d.sizeInBytes, d.cardinality, None),
      new HadoopPath(table.toUri))

  private def icebergLoad(file: String, offset: Long, size: Long, referenced: String, count: Long) = {
    val deleteFile = FileMetadata.deleteFileBuilder(PartitionSpec.unpartitioned()).ofPositionDeletes().withFormat(FileFormat.PUFFIN)
      .withPath(file).withFileSizeInBytes(Files.size(Paths.get(file))).withContentOffset(offset).withContentSizeInBytes(size)
      .withReferencedDataFile(referenced).withRecordCount(count).build()
    new BaseDeleteLoader((f: IcebergDeleteFile) => IcebergFiles.localInput(f.location())).loadPositionDeletes(Seq(deleteFile).asJava, referenced)
  }

  /** Generated (file, pos) rows: LakehouseGen's DVs. */
  private def generated(seed: Long, files: Int): (DataFrame, Map[String, DeletionVector]) = {
    val dvs = LakehouseGen.dvs(seed, files, size = 12).map { case (n, dv) => n.replace("/warehouse", tmp.toString) -> dv }
    val rows = dvs.flatMap { case (n, dv) => dv.positions.map(p => Row(n, p)) }
    val schema = org.apache.spark.sql.types.StructType.fromDDL("file STRING, pos BIGINT")
    (spark.createDataFrame(spark.sparkContext.parallelize(rows.reverse, 3), schema), dvs.toMap)
  }

  private def positions(df: DataFrame): Map[String, Set[Long]] =
    df.collect().groupBy(_.getString(0)).map { case (f, rs) => f -> rs.map(_.getLong(1)).toSet }

  private def dvPositions(dv: DeletionVector): Set[Long] = dv.positions.toSet

  test("writeIcebergDvs: Iceberg's delete loader reads every DV at the offsets returned; a rerun writes the same files") {
    val (rows, dvs) = generated(11, 6)
    val out = tmp.resolve("puffin-out")
    val written = Lakehouse.writeIcebergDvs(rows, out.toString).collect()
    assert(written.map(_.getAs[String]("referenced_data_file")).toSet == dvs.keySet)
    for (r <- written) {
      val dv = dvs(r.getAs[String]("referenced_data_file"))
      assert(r.getAs[Long]("record_count") == dv.cardinality)
      val index = icebergLoad(r.getAs[String]("file_path"), r.getAs[Long]("content_offset"), r.getAs[Long]("content_size_in_bytes"),
        r.getAs[String]("referenced_data_file"), r.getAs[Long]("record_count"))
      assert(index.cardinality() == dv.cardinality)
      dv.foreachPosition(p => assert(index.isDeleted(p)))
    }
    val files = Files.list(out).iterator.asScala.toSeq.sortBy(_.toString)
    val bytes = files.map(f => f -> Files.readAllBytes(f).toSeq).toMap
    val again = Lakehouse.writeIcebergDvs(rows.repartition(5), out.toString).collect()
    assert(again.toSet == written.toSet)
    assert(Files.list(out).iterator.asScala.toSeq.sortBy(_.toString) == files && files.forall(f => Files.readAllBytes(f).toSeq == bytes(f)))
    // read back: positions, and frames for the ib_dv_ functions
    val paths = files.map(_.toString)
    assert(positions(Lakehouse.readIcebergDvs(spark, paths)) == dvs.map { case (k, v) => k -> dvPositions(v) })
    val frames = Lakehouse.readIcebergDvs(spark, paths, asDv = true).select(col("file"), expr("ib_dv_cardinality(dv)")).collect()
    assert(frames.map(r => r.getString(0) -> r.getLong(1)).toMap == dvs.map { case (k, v) => k -> v.cardinality })
  }

  test("writeDeltaDvs: Delta's DV store reads every descriptor returned, under random prefixes") {
    val (rows, dvs) = generated(12, 7)
    val table = tmp.resolve("delta-out")
    val written = Lakehouse.writeDeltaDvs(rows, table.toString, prefixLength = 2).collect()
    assert(written.map(_.getString(0)).toSet == dvs.keySet)
    for (r <- written) {
      val s = r.getStruct(1)
      val d = DeletionVectorDescriptor(s.getString(0), s.getString(1), s.getInt(3), s.getLong(4), Some(s.getInt(2)))
      assert(d.storageType == "u" && d.randomPrefixAndUuid()._1.length == 2)
      val bitmap = deltaRead(d, table)
      val dv = dvs(r.getString(0))
      assert(bitmap.cardinality == dv.cardinality && DeletionVectorFile.readFrameOf(d, table)._2 == dv)
      dv.foreachPosition(p => assert(bitmap.contains(p)))
    }
    assert(Lakehouse.writeDeltaDvs(rows, table.toString, prefixLength = 2).collect().toSet == written.toSet)
  }

  private lazy val paimonTables: Map[String, String] = Seq("64" -> "true", "32" -> "false").map { case (w, b) =>
    w -> PaimonWriteReference.create(tmp.resolve("paimon").toString, s"t$w", "pk-dv", 1, _ + ("deletion-vectors.bitmap64" -> b))
  }.toMap

  /** data file name -> (its DV, its path), through the table layer. */
  private def paimonDvs(table: String): Map[String, (DeletionVector, String)] =
    FileStoreTable.open(table).plan(None).files.flatMap(f => f.deletionFile.map(d => f.name -> (d.load(f.name, f.meta.rowCount), f.path.toString))).toMap

  for (width <- Seq("64", "32")) test(s"paimonToIceberg / paimonToDelta on a Paimon table of $width-bit DVs") {
    val table = paimonTables(width)
    val expected = paimonDvs(table)
    assert(expected.nonEmpty, "the Paimon table has deletion vectors")
    val ice = Lakehouse.paimonToIceberg(spark, table, tmp.resolve(s"ice-$width").toString).collect()
    assert(ice.map(_.getAs[String]("data_file")).toSet == expected.keySet)
    for (r <- ice) {
      val (dv, path) = expected(r.getAs[String]("data_file"))
      assert(r.getAs[String]("referenced_data_file") == path)
      val index = icebergLoad(r.getAs[String]("file_path"), r.getAs[Long]("content_offset"), r.getAs[Long]("content_size_in_bytes"), path,
        r.getAs[Long]("record_count"))
      assert(index.cardinality() == dv.cardinality)
      dv.foreachPosition(p => assert(index.isDeleted(p)))
    }
    // the rows are the bridge's, whose frames are Paimon's bytes (64-bit) copied
    val files = IcebergBridge.deletionFiles(table)
    if (width == "64") for (f <- files; (r, frame, _) <- IcebergBridge.checkedFrames(f, Files.readAllBytes(Paths.get(f.path)))) {
      val row = ice.find(_.getAs[String]("data_file") == r.dataFile).get
      val puffin = Files.readAllBytes(Paths.get(row.getAs[String]("file_path")))
      assert(puffin.slice(row.getAs[Long]("content_offset").toInt, row.getAs[Long]("content_offset").toInt + r.length).sameElements(frame))
    }
    for (storage <- Seq("u", "p")) {
      val out = tmp.resolve(s"delta-$width-$storage")
      if (width == "32" && storage == "p") {
        val e = intercept[Exception](Lakehouse.paimonToDelta(spark, table, out.toString, storage = "p").collect())
        assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).exists(_.getMessage.contains("32-bit")), e.toString)
      } else {
        val rows = Lakehouse.paimonToDelta(spark, table, out.toString, storage = storage).collect()
        assert(rows.map(_.getString(0)).toSet == expected.keySet)
        for (r <- rows) {
          val s = r.getStruct(1)
          val d = DeletionVectorDescriptor(s.getString(0), s.getString(1), s.getInt(3), s.getLong(4), Some(s.getInt(2)))
          assert(d.storageType == storage)
          val bitmap = deltaRead(d, out)
          val (dv, _) = expected(r.getString(0))
          assert(bitmap.cardinality == dv.cardinality)
          dv.foreachPosition(p => assert(bitmap.contains(p)))
        }
      }
    }
  }

  /** (data file name, position) of every row of the files minus the live rows a format's reader
    * returns: the deleted positions. */
  private def deletedRows(dataFiles: Seq[String], live: DataFrame): Set[(String, Long)] = {
    val all = spark.read.parquet(dataFiles: _*).select(col("_metadata.file_name"), col("_metadata.row_index")).collect()
    val kept = live.collect().map(r => Paths.get(new java.net.URI(r.getString(0)).getPath).getFileName.toString -> r.getLong(1)).toSet
    all.map(r => r.getString(0) -> r.getLong(1)).toSet -- kept
  }

  private def named(rows: DataFrame): Set[(String, Long)] =
    rows.collect().map(r => Paths.get(r.getString(0).replaceFirst("^file:", "")).getFileName.toString -> r.getLong(1)).toSet

  test("readDeltaDvs returns the positions Delta's reader drops (commits, a checkpoint); Delta reads a commit of our DVs") {
    val table = tmp.resolve("delta-table").toString
    spark.range(0, 3000).selectExpr("id", "cast(id * 7 as string) as v").repartition(3).write.format("delta").save(table)
    spark.sql(s"DELETE FROM delta.`$table` WHERE id % 7 = 0")
    spark.sql(s"DELETE FROM delta.`$table` WHERE id BETWEEN 500 AND 1999 OR id % 11 = 3")
    val files = Files.list(Paths.get(table)).iterator.asScala.map(_.toString).filter(_.endsWith(".parquet")).toSeq
    assert(Files.list(Paths.get(table, "_delta_log")).iterator.asScala.exists(_.toString.endsWith(".checkpoint.parquet")))
    for (version <- Seq(1L, 2L)) {
      val live = spark.read.format("delta").option("versionAsOf", version).load(table)
        .select(col("_metadata.file_path"), col("_metadata.row_index"))
      val ours = Lakehouse.readDeltaDvs(spark, table, Some(version)).cache()
      assert(named(ours) == deletedRows(files, live), s"version $version")
      val dvs = Lakehouse.readDeltaDvs(spark, table, Some(version), asDv = true).select(expr("sum(ib_dv_cardinality(dv))")).head().get(0)
      assert(Option(dvs).fold(0L)(_.asInstanceOf[Long]) == ours.count())
    }
    assert(named(Lakehouse.readDeltaDvs(spark, table)) == named(Lakehouse.readDeltaDvs(spark, table, Some(2L))))

    // A commit of our own extends the log: every file's DV plus more positions, written by
    // writeDeltaDvs; Delta's reader then drops exactly those rows.
    val deltaLog = DeltaLog.forTable(spark, table)
    val adds = deltaLog.update().allFiles.collect()
    val deleted = Lakehouse.readDeltaDvs(spark, table)
    val more = spark.createDataFrame(adds.toSeq.flatMap(a => (0L until 900L by 3).map(p => (Lakehouse.sparkFilePath(table, a.path), p)))).toDF("file", "pos")
    val written = Lakehouse.writeDeltaDvs(deleted.union(more), table, prefixLength = 1).collect()
      .map(r => r.getString(0) -> r.getStruct(1)).toMap
    val actions = adds.toSeq.flatMap { a =>
      val s = written(Lakehouse.sparkFilePath(table, a.path))
      Seq(a.removeWithTimestamp(System.currentTimeMillis(), true).json,
        a.copy(deletionVector = DeltaDescriptor(s.getString(0), s.getString(1), Some(Int.box(s.getInt(2))), s.getInt(3), s.getLong(4), None)).json)
    }
    Files.writeString(Paths.get(table, "_delta_log", f"${deltaLog.update().version + 1}%020d.json"), actions.mkString("", "\n", "\n"))
    val expected = named(deleted) ++ named(more)
    assert(deletedRows(files, spark.read.format("delta").load(table).select(col("_metadata.file_path"), col("_metadata.row_index"))) == expected)
    assert(named(Lakehouse.readDeltaDvs(spark, table)) == expected)
  }

  test("readIcebergDvs returns the positions Iceberg's reader drops from a format-version 3 table") {
    spark.sql("CREATE TABLE ice.db.t (id BIGINT, v STRING) USING iceberg TBLPROPERTIES ('format-version' = '3', " +
      "'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read', " +
      "'read.parquet.vectorization.enabled' = 'false')") // Iceberg's vectorized reader needs --add-opens java.nio
    spark.range(0, 3000).selectExpr("id", "cast(id as string) as v").repartition(3).writeTo("ice.db.t").append()
    spark.sql("DELETE FROM ice.db.t WHERE id % 7 = 0")
    spark.sql("DELETE FROM ice.db.t WHERE id % 5 = 1")
    spark.range(0, 3000).selectExpr("id").where("id % 13 = 2").createOrReplaceTempView("gone")
    spark.sql("MERGE INTO ice.db.t t USING gone g ON t.id = g.id WHEN MATCHED THEN DELETE")
    val deleteFiles = spark.sql("SELECT file_path, referenced_data_file FROM ice.db.t.delete_files").collect()
    val puffins = deleteFiles.map(_.getString(0)).distinct.toSeq
    val dataFiles = spark.sql("SELECT file_path FROM ice.db.t.data_files").collect().map(_.getString(0)).toSeq
    val live = spark.sql("SELECT _file, _pos FROM ice.db.t")
    val ours = Lakehouse.readIcebergDvs(spark, puffins.map(_.replaceFirst("^file:", "")))
    // a Puffin file may hold DVs a later statement replaced: keep the live ones
    val liveDvs = deleteFiles.map(r => r.getString(1)).toSet
    val current = ours.collect().filter(r => liveDvs.contains(r.getString(0)))
    val expected = deletedRows(dataFiles.map(_.replaceFirst("^file:", "")), live.select(col("_file"), col("_pos")))
    assert(current.map(r => Paths.get(r.getString(0).replaceFirst("^file:", "")).getFileName.toString -> r.getLong(1)).toSet == expected)
  }
}
