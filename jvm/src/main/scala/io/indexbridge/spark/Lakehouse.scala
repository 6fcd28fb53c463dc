package io.indexbridge.spark

import java.nio.file.{Files, Path, Paths}
import java.util.UUID

import scala.collection.mutable

import io.indexbridge.Storage
import io.indexbridge.delta.{DeletionVectorDescriptor, DeletionVectorFile, DeltaLog, PaimonBridge => DeltaBridge}
import io.indexbridge.iceberg.{Puffin, PaimonBridge => IcebergBridge}
import io.indexbridge.paimon.DeletionVector
import org.apache.hadoop.fs.{Path => HadoopPath}
import org.apache.spark.sql.{Column, DataFrame, Row, SparkSession}
import org.apache.spark.sql.functions.{col, concat, lit, max, regexp_extract, struct, when}
import org.apache.spark.sql.types._

/** Deletion vectors across lakehouse formats in Spark: Iceberg v3 Puffin files and Delta Lake
  * DV files written from a DataFrame of (file, position) rows or from a Paimon table's snapshot,
  * and read back as (file, position) rows or as DV frames (the `binary` the `ib_dv_*` functions
  * and `apply_deletion_vectors` take). The driver plans (log listings, Paimon's manifests);
  * executors read and write every DV.
  *
  * {{{
  * writeIcebergDvs  rows -> shuffled by file -> per task one Puffin file
  *                  <outDir>/<uuid of its bytes>-deletes.puffin (blobs of the task's files, Iceberg's
  *                  HashMap order of the sorted names) -> per data file Iceberg's DeleteFile fields
  * writeDeltaDvs    rows -> shuffled by file -> per task one DV file
  *                  <table>/<prefix>/deletion_vector_<uuid of its bytes>.bin -> per data file its
  *                  `u` descriptor
  * paimonToIceberg  one task per Paimon deletion file (io.indexbridge.iceberg.PaimonBridge)
  * paimonToDelta    one task per Paimon deletion file (io.indexbridge.delta.PaimonBridge)
  * readIcebergDvs   one task per Puffin file, its footer's deletion-vector-v1 blobs
  * readDeltaDvs     checkpoint (Parquet) + commits (JSON) read by Spark, reconciled by
  *                  (path, DV unique id); the DVs read in tasks (a task's DV files read once)
  * }}}
  *
  * Names derived from the bytes make a retried task write the same file under the same name: the
  * UUID is `UUID.nameUUIDFromBytes` of the file, the Delta prefix its digits in base 62 (the
  * Python engine, `indexbridge.spark.lakehouse`, names its files the same way). Paths are local
  * (or `file:` URIs).
  */
object Lakehouse {

  val DeleteFileSchema: StructType = StructType(Seq(
    StructField("file_path", StringType, nullable = false), StructField("file_size_in_bytes", LongType, nullable = false),
    StructField("content_offset", LongType, nullable = false), StructField("content_size_in_bytes", LongType, nullable = false),
    StructField("referenced_data_file", StringType, nullable = false), StructField("record_count", LongType, nullable = false)))

  val DescriptorSchema: StructType = StructType(Seq(
    StructField("storageType", StringType, nullable = false), StructField("pathOrInlineDv", StringType, nullable = false),
    StructField("offset", IntegerType), StructField("sizeInBytes", IntegerType, nullable = false),
    StructField("cardinality", LongType, nullable = false)))

  val DeltaDvSchema: StructType = StructType(Seq(
    StructField("data_file", StringType, nullable = false), StructField("deletionVector", DescriptorSchema, nullable = false)))

  private val PositionSchema = StructType(Seq(StructField("file", StringType, nullable = false), StructField("pos", LongType, nullable = false)))
  private val DvSchema = StructType(Seq(StructField("file", StringType, nullable = false), StructField("dv", BinaryType, nullable = false)))

  private def deleteFileRow(prefix: Seq[Any], d: Puffin.DeleteFile): Row =
    Row.fromSeq(prefix ++ Seq(d.filePath, d.fileSizeInBytes, d.contentOffset, d.contentSizeInBytes, d.referencedDataFile, d.recordCount))

  private def descriptorRow(d: DeletionVectorDescriptor): Row =
    Row(d.storageType, d.pathOrInlineDv, d.offset.map(Int.box).orNull, d.sizeInBytes, d.cardinality)

  private def localDir(dir: String): Path =
    (if (dir.startsWith("file:")) DeletionVectorFile.localPath(dir) else Paths.get(dir)).toAbsolutePath

  // ------------------------------------------------------------------------------------------
  // From a DataFrame of positions

  /** The 64-bit DV of each data file of the rows of one task, names sorted. */
  private def dvsOfTask(rows: Iterator[org.apache.spark.sql.catalyst.InternalRow]): Seq[(String, DeletionVector)] = {
    val dvs = mutable.HashMap.empty[String, DeletionVector]
    rows.foreach { r =>
      if (r.isNullAt(0) || r.isNullAt(1)) throw new IllegalArgumentException("deletion vector rows need a file and a position (found null)")
      dvs.getOrElseUpdate(r.getUTF8String(0).toString, DeletionVector.empty(bitmap64 = true)).delete(r.getLong(1))
    }
    dvs.toSeq.sortBy(_._1)
  }

  private def positionsByFile(dvs: DataFrame, fileCol: String, posCol: String) =
    dvs.select(col(fileCol).cast(StringType), col(posCol).cast(LongType)).repartition(col(fileCol)).queryExecution.toRdd

  /** One Puffin file of DVs per task from rows of (`fileCol`, `posCol`); returns per data file
    * Iceberg's DeleteFile fields (see [[DeleteFileSchema]]). Positions beyond 0x7FFFFFFE_80000000
    * (Iceberg's and Paimon's limit) fail the task. */
  def writeIcebergDvs(dvs: DataFrame, outDir: String, fileCol: String = "file", posCol: String = "pos"): DataFrame = {
    val out = localDir(outDir).toString
    val rows = positionsByFile(dvs, fileCol, posCol).mapPartitions { it =>
      val frames = Puffin.dvFrames(dvsOfTask(it))
      if (frames.isEmpty) Iterator.empty
      else {
        val (content, blobs) = Puffin.encodeDeletionVectors(frames)
        val path = Paths.get(out, s"${UUID.nameUUIDFromBytes(content)}-deletes.puffin")
        Storage.writeAtomically(path, content)
        Puffin.deleteFiles(path.toString, content.length.toLong, blobs).iterator.map(deleteFileRow(Nil, _))
      }
    }
    dvs.sparkSession.createDataFrame(rows, DeleteFileSchema)
  }

  /** One Delta DV file per task from rows of (`fileCol`, `posCol`) under the table root
    * `tableDir` (in a subdirectory of `prefixLength` characters, as Delta's
    * `randomPrefixLength`); returns per data file its `u` descriptor ([[DeltaDvSchema]]). */
  def writeDeltaDvs(dvs: DataFrame, tableDir: String, fileCol: String = "file", posCol: String = "pos", prefixLength: Int = 0): DataFrame = {
    require(prefixLength >= 0, s"prefixLength must be >= 0, got $prefixLength")
    val root = localDir(tableDir).toString
    val rows = positionsByFile(dvs, fileCol, posCol).mapPartitions { it =>
      val frames = dvsOfTask(it).map { case (name, dv) => DeletionVectorFile.DvFrame(name, dv.serialize(), dv.cardinality) }
      if (frames.isEmpty) Iterator.empty
      else {
        val (content, offsets) = DeletionVectorFile.encode(frames.map(_.frame))
        val uuid = UUID.nameUUIDFromBytes(content)
        DeletionVectorFile.writeEncoded(Paths.get(root), frames, content, offsets, randomPrefix(uuid, prefixLength), uuid).iterator
          .map { case (name, d) => Row(name, descriptorRow(d)) }
      }
    }
    dvs.sparkSession.createDataFrame(rows, DeltaDvSchema)
  }

  private val PrefixAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

  /** `n` letters and digits of the file's UUID: its 128 bits' base-62 digits, lowest first
    * (Delta draws them at random; deriving them keeps a retried task's path). */
  private def randomPrefix(uuid: UUID, n: Int): String = {
    var value = BigInt(1, java.nio.ByteBuffer.allocate(16).putLong(uuid.getMostSignificantBits).putLong(uuid.getLeastSignificantBits).array())
    val base = BigInt(PrefixAlphabet.length)
    Seq.fill(n) { val (rest, digit) = value /% base; value = rest; PrefixAlphabet(digit.toInt) }.mkString
  }

  // ------------------------------------------------------------------------------------------
  // From a Paimon table

  private def perDeletionFile(spark: SparkSession, tableDir: String, snapshot: Option[Long]) = {
    val files = IcebergBridge.deletionFiles(tableDir, snapshot).filter(_.dvs.nonEmpty)
    spark.sparkContext.parallelize(files, math.max(1, math.min(files.size, spark.sparkContext.defaultParallelism * 4)))
  }

  /** Puffin files of a Paimon snapshot's DVs (`<outDir>/<deletion file>.puffin`, one task per
    * deletion file); the rows `indexbridge iceberg dv-from-paimon` writes to its jsonl:
    * `data_file` (the name Paimon's manifest records) and Iceberg's DeleteFile fields. */
  def paimonToIceberg(spark: SparkSession, tableDir: String, outDir: String, snapshot: Option[Long] = None): DataFrame = {
    val out = localDir(outDir)
    Files.createDirectories(out)
    val outString = out.toString
    val rows = perDeletionFile(spark, tableDir, snapshot).flatMap { f =>
      IcebergBridge.writePuffin(f, Paths.get(outString)).map { case (name, d) => deleteFileRow(Seq(name), d) }
    }
    spark.createDataFrame(rows, StructType(StructField("data_file", StringType, nullable = false) +: DeleteFileSchema.fields))
  }

  /** Delta DVs of a Paimon snapshot's DVs under the Delta table root `outDir` (`u`: whole
    * deletion files copied as `deletion_vector_<uuid>.bin`; `p`: descriptors pointing at Paimon's
    * files), one task per deletion file; the rows `indexbridge delta dv-from-paimon` writes. */
  def paimonToDelta(spark: SparkSession, tableDir: String, outDir: String, snapshot: Option[Long] = None, storage: String = "u"): DataFrame = {
    require(storage == "u" || storage == "p", s"storage must be 'u' or 'p', got '$storage'")
    val out = localDir(outDir)
    Files.createDirectories(out)
    val outString = out.toString
    val rows = perDeletionFile(spark, tableDir, snapshot).flatMap { f =>
      DeltaBridge.writeDelta(f, Paths.get(outString), storage).map { case (name, d) => Row(name, descriptorRow(d)) }
    }
    spark.createDataFrame(rows, DeltaDvSchema)
  }

  // ------------------------------------------------------------------------------------------
  // Reading

  private def expand(file: String, frame: Array[Byte], dv: DeletionVector, asDv: Boolean): Iterator[Row] =
    if (asDv) Iterator.single(Row(file, frame)) else dv.positions.iterator.map(p => Row(file, p))

  /** The DVs of Puffin files (every deletion-vector-v1 blob, one task per file): rows of
    * (`file` = the referenced data file, `pos`), or with `asDv` (`file`, `dv` = the frame). */
  def readIcebergDvs(spark: SparkSession, puffinPaths: Seq[String], asDv: Boolean = false): DataFrame = {
    val paths = puffinPaths.map(p => localDir(p).toString)
    val rows = spark.sparkContext.parallelize(paths, math.max(1, math.min(paths.size, spark.sparkContext.defaultParallelism * 4)))
      .flatMap { path =>
        val data = io.indexbridge.paimon.table.DeletionFile.readIndexFile(path)
        Puffin.readDeletionVectors(data, path).iterator.flatMap { case (blob, dv) =>
          val frame = java.util.Arrays.copyOfRange(data, blob.offset.toInt, (blob.offset + blob.length).toInt)
          expand(blob.property(Puffin.ReferencedDataFile).get, frame, dv, asDv)
        }
      }
    spark.createDataFrame(rows, if (asDv) DvSchema else PositionSchema)
  }

  private val LogDescriptor = StructType(DescriptorSchema.fields.map(_.copy(nullable = true)) :+ StructField("maxRowIndex", LongType))
  private val FileAction = StructType(Seq(StructField("path", StringType), StructField("deletionVector", LogDescriptor)))
  private val CommitSchema = StructType(Seq(StructField("add", FileAction), StructField("remove", FileAction)))
  private val CheckpointSchema = StructType(Seq(StructField("add", FileAction), StructField("sidecar", StructType(Seq(StructField("path", StringType))))))

  /** A Delta `add.path` as Spark's `_metadata.file_path` shows the data file of a Delta read:
    * Delta's `DeltaFileOperations.absolutePath` (the path is a URI; a relative one resolved
    * against the qualified table root), then Spark's `SparkPath.fromPath` (Hadoop's
    * `Path.toUri`, so escapes are java.net.URI's own). */
  def sparkFilePath(table: String, addPath: String): String = {
    val child = new HadoopPath(new java.net.URI(addPath))
    (if (child.isAbsolute) child else new HadoopPath(new HadoopPath("file", null, localDir(table).toString), child)).toUri.toString
  }

  private def uniqueId(dv: Column): Column =
    when(dv.isNull, lit("")).otherwise(concat(dv("storageType"), dv("pathOrInlineDv"),
      when(dv("offset").isNull, lit("")).otherwise(concat(lit("@"), dv("offset").cast(StringType)))))

  /** The DVs of a Delta table at `version` (default: the latest): per data file with a DV,
    * rows of (`file` = the data file as Spark's `_metadata.file_path` shows it, see [[sparkFilePath]], `pos`), or with `asDv` (`file`, `dv` =
    * the frame as Delta stored it; built around the data for inline DVs). */
  def readDeltaDvs(spark: SparkSession, tableDir: String, version: Option[Long] = None, asDv: Boolean = false): DataFrame = {
    val table = localDir(tableDir)
    val replay = DeltaLog.replay(table, version)
    def actions(df: DataFrame, v: Column) = df.select(col("add").as("a"), v.as("version"))
    val fromCheckpoint = replay.checkpoint.toSeq.flatMap { c =>
      val (json, parquet) = replay.checkpointFiles.map(_.toString).partition(_.endsWith(".json"))
      val frames = (if (json.isEmpty) Nil else Seq(spark.read.schema(CheckpointSchema).option("mode", "FAILFAST").json(json: _*))) ++
        (if (parquet.isEmpty) Nil else Seq(spark.read.schema(CheckpointSchema).parquet(parquet: _*)))
      val sidecars = if (!replay.v2) Nil else frames.flatMap(_.where(col("sidecar").isNotNull).select("sidecar.path").collect().map(_.getString(0)))
        .map(p => if (p.contains("/")) p else table.resolve("_delta_log").resolve("_sidecars").resolve(p).toString)
      val all = frames ++ (if (sidecars.isEmpty) Nil else Seq(spark.read.schema(CheckpointSchema).parquet(sidecars: _*)))
      all.map(df => actions(df.where(col("add").isNotNull), lit(c)).withColumn("isAdd", lit(true)))
    }
    val fromCommits = if (replay.commits.isEmpty) Nil else {
      val commits = spark.read.schema(CommitSchema).option("mode", "FAILFAST").json(replay.commits.map(_._2.toString): _*)
      val v = regexp_extract(col("_metadata.file_name"), "^(\\d{20})\\.json$", 1).cast(LongType)
      Seq(commits.where(col("add").isNotNull).select(col("add").as("a"), v.as("version"), lit(true).as("isAdd")),
        commits.where(col("remove").isNotNull).select(col("remove").as("a"), v.as("version"), lit(false).as("isAdd")))
    }
    val all = (fromCheckpoint ++ fromCommits).reduceOption(_ unionByName _)
    val dvRows = all.fold(spark.sparkContext.emptyRDD[Row]) { df =>
      val keyed = df.withColumn("key", struct(col("a.path"), uniqueId(col("a.deletionVector"))))
      val latest = keyed.groupBy("key").agg(max(struct(col("version"), col("isAdd"), col("a"))).as("last"))
      val live = latest.where(col("last.isAdd") && col("last.a.deletionVector").isNotNull).select(col("last.a.path").as("path"),
        col("last.a.deletionVector.*"))
      val root = table.toString
      val source = s"$root/_delta_log (version ${replay.version})"
      live.repartition(col("pathOrInlineDv")).sortWithinPartitions("storageType", "pathOrInlineDv").rdd.mapPartitions { it =>
        val files = mutable.Map.empty[Path, Array[Byte]]
        it.flatMap { r =>
          val path = sparkFilePath(root, r.getString(0))
          def opt(i: Int): Option[Long] = if (r.isNullAt(i)) None else Some(r.getAs[Number](i).longValue)
          val d = DeletionVectorFile.of(r.getString(1), r.getString(2), opt(3), opt(4).getOrElse(-1L), opt(5).getOrElse(-1L), opt(6),
            s"$source: deletionVector of $path")
          if (d.storageType != DeletionVectorFile.Inline && files.keySet.exists(_ != d.absolutePath(Paths.get(root)))) files.clear()
          val (frame, dv) = DeletionVectorFile.readFrameOf(d, Paths.get(root), files = files, source = Some(s"$source: $path"))
          expand(path, frame, dv, asDv)
        }
      }
    }
    spark.createDataFrame(dvRows, if (asDv) DvSchema else PositionSchema)
  }

  // ------------------------------------------------------------------------------------------
  // Entry points for `indexbridge.spark.lakehouse` (py4j passes a Python int | None as AnyRef)

  def paimonToIcebergForPython(spark: SparkSession, tableDir: String, outDir: String, snapshot: AnyRef): DataFrame =
    paimonToIceberg(spark, tableDir, outDir, Paimon.optionalLong("snapshot", snapshot))

  def paimonToDeltaForPython(spark: SparkSession, tableDir: String, outDir: String, snapshot: AnyRef, storage: String): DataFrame =
    paimonToDelta(spark, tableDir, outDir, Paimon.optionalLong("snapshot", snapshot), storage)

  def readDeltaDvsForPython(spark: SparkSession, tableDir: String, version: AnyRef, asDv: Boolean): DataFrame =
    readDeltaDvs(spark, tableDir, Paimon.optionalLong("version", version), asDv)
}
