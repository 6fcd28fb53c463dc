package io.indexbridge.spark

import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._

import io.indexbridge.Storage
import io.indexbridge.paimon.fileindex.{BitmapIndex, DataField, FileIndexContainer, FileIndexPredicate, FileIndexResult, Predicate}
import io.indexbridge.roaring.Roaring32
import org.apache.spark.sql.{Column, DataFrame, Encoders, Row}
import org.apache.spark.sql.functions.{col, not, struct}
import org.apache.spark.sql.indexbridge.{FileIndexConditions, SparkFileIndexTypes}
import org.apache.spark.sql.types._

/** Paimon file indexes for the data files of a DataFrame, and pruning with them.
  *
  * {{{
  * build      data rows (file, pos, columns...) -> one row per data file:
  *            file, embedded (the container when size <= file-index.in-manifest-threshold),
  *            index_file (<directory>/<file>.index otherwise), size, indexes (column, index_type, length)
  * prune      index rows + condition -> file, skipped, rows (candidate row set, portable roaring;
  *            null = every row), candidates (its cardinality)
  * applyPruning  data rows of the files not skipped, and of those only the candidate rows
  * }}}
  */
object FileIndexes {
  val IndexRowsSchema: StructType = StructType(Seq(
    StructField("file", StringType, nullable = false),
    StructField("embedded", BinaryType),
    StructField("index_file", StringType),
    StructField("size", LongType, nullable = false),
    StructField("indexes", ArrayType(StructType(Seq(
      StructField("column", StringType, nullable = false),
      StructField("index_type", StringType, nullable = false),
      StructField("length", IntegerType, nullable = false)))), nullable = false)
  ))

  val PrunedSchema: StructType = StructType(Seq(
    StructField("file", StringType, nullable = false),
    StructField("skipped", BooleanType, nullable = false),
    StructField("rows", BinaryType),
    StructField("candidates", LongType)
  ))

  private val ThresholdOption = "file-index.in-manifest-threshold"

  /** The data columns the `file-index.<type>.columns` options name (`m` for `m[key]`). */
  def indexedColumns(options: Seq[(String, String)]): Seq[String] =
    options.collect { case (k, v) if k.startsWith("file-index.") && k.endsWith(".columns") => v.split(",").toSeq }.flatten
      .map(_.trim).filter(_.nonEmpty).map(n => if (n.endsWith("]") && n.indexOf('[') > 0) n.substring(0, n.indexOf('[')) else n)
      .distinct

  def inManifestThreshold(options: Seq[(String, String)]): Long =
    options.reverse.collectFirst { case (ThresholdOption, v) => BitmapIndex.memorySize(v) }
      .getOrElse(FileIndexContainer.DefaultInManifestThreshold)

  /** One container per data file (JVM aggregate `ib_file_index_agg`), embedded or written to
    * `<directory>/<file>.index` (atomically, the same bytes on a retried task). Without a
    * directory, a container over the threshold fails the task. `options` in the order Paimon
    * would be handed them. */
  def build(data: DataFrame, fileCol: String, posCol: String, options: Seq[(String, String)], directory: Option[String]): DataFrame = {
    val columns = indexedColumns(options)
    val threshold = inManifestThreshold(options)
    val containers = data
      .groupBy(col(fileCol).as("file"))
      .agg(functions.fileIndexAgg(col(posCol), struct(columns.map(col): _*), options).as("container"))
    containers.mapPartitions { rows =>
      rows.map { r =>
        val file = r.getString(0)
        val bytes = r.getAs[Array[Byte]](1)
        val row = indexRow(file, bytes, threshold, directory)
        TaskFaults.failFirstAttempt("file-index")
        row
      }
    }(Encoders.row(IndexRowsSchema))
  }

  /** `build` for py4j: the options as two lists, the directory or null. */
  def build(
      data: DataFrame,
      fileCol: String,
      posCol: String,
      optionKeys: java.util.List[String],
      optionValues: java.util.List[String],
      directory: String
  ): DataFrame =
    build(data, fileCol, posCol, optionKeys.asScala.toSeq.zip(optionValues.asScala.toSeq), Option(directory))

  /** The index row of one data file's container (writing `<directory>/<file>.index` when it is
    * not embedded). */
  def indexRow(file: String, bytes: Array[Byte], threshold: Long, directory: Option[String]): Row = {
    val embedded = FileIndexContainer.embeddedInManifest(bytes.length.toLong, threshold)
    val indexFile =
      if (embedded) null
      else {
        val dir = directory.getOrElse(throw new IllegalArgumentException(
          s"the file index of $file is ${bytes.length} bytes, over $ThresholdOption = $threshold: pass a directory to write it to"))
        val target = Paths.get(dir).resolve(file + ".index")
        Storage.writeAtomically(target, bytes)
        target.toString
      }
    val entries = FileIndexContainer.read(bytes, file).entries.map(e => Row(e.column, e.indexType, e.length))
    Row(file, if (embedded) bytes else null, indexFile, bytes.length.toLong, entries)
  }

  /** The predicate of a condition over data files of `schema` ([[FileIndexConditions]]). */
  def predicate(condition: Column, schema: StructType): Predicate =
    FileIndexConditions.translate(FileIndexConditions.analyze(session, schema, condition))

  def predicate(condition: String, schema: StructType): Predicate =
    FileIndexConditions.translate(FileIndexConditions.analyze(session, schema, condition))

  /** The predicate as JSON (for the Python engine; the schema as Spark's JSON). */
  def predicateJson(condition: Column, schemaJson: String): String =
    FileIndexConditions.toJson(predicate(condition, DataType.fromJson(schemaJson).asInstanceOf[StructType]))

  def predicateJson(condition: String, schemaJson: String): String =
    FileIndexConditions.toJson(predicate(condition, DataType.fromJson(schemaJson).asInstanceOf[StructType]))

  private def session = org.apache.spark.sql.SparkSession.active

  /** Per data file of the index rows (`build`'s schema; `embedded` or `index_file` is read): skipped, or its
    * candidate rows, for a condition over data files of `schema`. */
  def prune(indexes: DataFrame, condition: Column, schema: StructType): DataFrame =
    pruneWith(indexes, predicate(condition, schema), schema)

  def prune(indexes: DataFrame, condition: String, schema: StructType): DataFrame =
    pruneWith(indexes, predicate(condition, schema), schema)

  def prune(indexes: DataFrame, condition: String, schemaJson: String): DataFrame =
    prune(indexes, condition, DataType.fromJson(schemaJson).asInstanceOf[StructType])

  def prune(indexes: DataFrame, condition: Column, schemaJson: String): DataFrame =
    prune(indexes, condition, DataType.fromJson(schemaJson).asInstanceOf[StructType])

  private def pruneWith(indexes: DataFrame, p: Predicate, schema: StructType): DataFrame = {
    val fields: Seq[DataField] = schema.fields.toSeq.flatMap(SparkFileIndexTypes.field)
    indexes.select("file", "embedded", "index_file").mapPartitions { rows =>
      rows.map { r =>
        val file = r.getString(0)
        val (bytes, source) =
          if (!r.isNullAt(1)) (r.getAs[Array[Byte]](1), s"<embedded file index of $file>")
          else (Files.readAllBytes(Paths.get(r.getString(2))), r.getString(2))
        new FileIndexPredicate(FileIndexContainer.read(bytes, source), fields).evaluate(p) match {
          case FileIndexResult.Rows(set) if !set.isEmpty => Row(file, false, Roaring32.serialize(set), set.getLongCardinality)
          case result                                    => Row(file, !result.remain, null, null)
        }
      }
    }(Encoders.row(PrunedSchema))
  }

  /** The rows of `data` whose file is not skipped and whose position is a candidate. */
  def applyPruning(data: DataFrame, pruned: DataFrame, fileCol: String, posCol: String): DataFrame = {
    val kept = pruned.filter(not(col("skipped"))).select(col("file").as("_ib_file"), col("rows").as("_ib_rows"))
    data
      .join(kept, col(fileCol) === col("_ib_file"))
      .filter(functions.rowSetContains(col("_ib_rows"), col(posCol)))
      .drop("_ib_file", "_ib_rows")
  }
}
