package io.indexbridge.spark

import scala.jdk.CollectionConverters._

import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.fileindex.Predicate
import io.indexbridge.paimon.table.{DataField => PaimonField, DataType => PaimonType, _}
import org.apache.spark.sql.{Column, DataFrame, Row, SparkSession}
import org.apache.spark.sql.expressions.Window
import org.apache.spark.sql.functions.{col, element_at, lit, row_number, typedLit}
import org.apache.spark.sql.indexbridge.{DeletionVectorRef, FileIndexConditions, PaimonRowLive}
import org.apache.spark.sql.types._

/** Paimon tables in Spark, read without Paimon's code: planning on the driver with the table
  * layer ([[io.indexbridge.paimon.table.FileStoreTable]], Paimon's own scan rules), the reading
  * in Spark tasks.
  *
  * {{{
  * read   plan (partition, bucket, level, stats pruning, embedded file indexes) on the driver
  *        -> `.index` files of raw splits evaluated in tasks (only the names of skipped files
  *           come back)
  *        -> per file schema: Spark's Parquet reader, columns found by field id under the
  *           file's own names (renamed columns keep their id, added ones are null)
  *        -> raw splits: rows whose position (_metadata.row_index) the file's deletion vector
  *           holds are dropped by [[PaimonRowLive]], the vectors read on the executors
  *        -> merge splits (primary-key tables): deletion vectors applied, then per (split,
  *           trimmed primary key) the last record by (sequence.field, _SEQUENCE_NUMBER)
  *           (deduplicate) or the first by (level, _SEQUENCE_NUMBER) (first-row), retractions
  *           (_VALUE_KIND -U = 1, -D = 3) dropped (Paimon's DropDeleteReader); ignore-delete
  *           drops them before the merge
  *        -> `where` applied exactly by Spark, the columns projected
  * plan   one row per data file of the snapshot: partition, bucket, file, level, row_count,
  *        schema_id, deletion_vector, file_index (its header read in tasks) and, with `where`,
  *        index_result (FileIndexPredicate's verdict) and read (whether the read opens it)
  * }}}
  *
  * Types: Paimon's as Paimon's Spark connector maps them (TIMESTAMP is TIMESTAMP_NTZ,
  * TIMESTAMP_LTZ is TIMESTAMP, CHAR/VARCHAR are STRING, MULTISET is a map to counts) except TIME,
  * which Spark lacks: an INT of milliseconds of the day. TIMESTAMP(7..9) columns hold
  * nanoseconds no Spark type holds: reading or filtering on one is refused (leave it out with
  * `columns`). Data files must be Parquet.
  */
object Paimon {
  private val SequenceNumber = "_SEQUENCE_NUMBER"
  private val ValueKind = "_VALUE_KIND"
  private val Split = "_ib_split"
  private val Level = "_ib_level"

  // ------------------------------------------------------------------------------------------
  // API

  /** The live rows of the table at `path` (latest snapshot, or `snapshot`), kept where the
    * Spark SQL condition `where` holds, with `columns` (all by default). */
  def read(spark: SparkSession, path: String, snapshot: Option[Long] = None, where: Option[String] = None,
      columns: Option[Seq[String]] = None): DataFrame =
    readWith(spark, path, snapshot, where.map(Left(_)), columns)

  /** [[read]] with the condition as a Column. */
  def read(spark: SparkSession, path: String, snapshot: Option[Long], where: Column, columns: Option[Seq[String]]): DataFrame =
    readWith(spark, path, snapshot, Some(Right(where)), columns)

  /** One row per data file of the snapshot (see the object comment). */
  def plan(spark: SparkSession, path: String, snapshot: Option[Long] = None, where: Option[String] = None): DataFrame =
    planWith(spark, path, snapshot, where.map(Left(_)))

  def plan(spark: SparkSession, path: String, snapshot: Option[Long], where: Column): DataFrame =
    planWith(spark, path, snapshot, Some(Right(where)))

  /** [[read]] for py4j: null for what is not given; `snapshot` any integral number, `where` a
    * String or a Column. */
  def readForPython(spark: SparkSession, path: String, snapshot: AnyRef, where: AnyRef, columns: java.util.List[String]): DataFrame =
    readWith(spark, path, optionalLong("snapshot", snapshot), condition(where), Option(columns).map(_.asScala.toList))

  def planForPython(spark: SparkSession, path: String, snapshot: AnyRef, where: AnyRef): DataFrame =
    planWith(spark, path, optionalLong("snapshot", snapshot), condition(where))

  /** A Python `int | None` argument through py4j (an Integer or a Long, or null). */
  private[spark] def optionalLong(name: String, value: AnyRef): Option[Long] = value match {
    case null      => None
    case n: Number => Some(n.longValue)
    case other     => throw new IllegalArgumentException(s"$name must be an integer, got ${other.getClass.getName}")
  }

  private def condition(where: AnyRef): Option[Either[String, Column]] = where match {
    case null      => None
    case s: String => Some(Left(s))
    case c: Column => Some(Right(c))
    case other     => throw new IllegalArgumentException(s"where must be a String or a Column, got ${other.getClass.getName}")
  }

  // ------------------------------------------------------------------------------------------
  // Types

  /** The Spark type of a Paimon type; Left(why) when Spark cannot hold its values exactly. */
  def sparkType(t: PaimonType): Either[String, DataType] = t match {
    case PaimonType.Atomic(k, _) =>
      k match {
        case KeyType.BooleanType               => Right(BooleanType)
        case KeyType.TinyIntType               => Right(ByteType)
        case KeyType.SmallIntType              => Right(ShortType)
        case KeyType.IntType                   => Right(IntegerType)
        case KeyType.BigIntType                => Right(LongType)
        case KeyType.FloatType                 => Right(FloatType)
        case KeyType.DoubleType                => Right(DoubleType)
        case KeyType.DecimalType(p, s)         => Right(DecimalType(p, s))
        case KeyType.CharType(_) | KeyType.VarCharType(_)     => Right(StringType)
        case KeyType.BinaryType(_) | KeyType.VarBinaryType(_) => Right(BinaryType)
        case KeyType.DateType                  => Right(DateType)
        case KeyType.TimeType(_)               => Right(IntegerType) // milliseconds of the day
        case KeyType.TimestampType(p) if p <= 6           => Right(TimestampNTZType)
        case KeyType.LocalZonedTimestampType(p) if p <= 6 => Right(TimestampType)
        case other => Left(s"$other holds nanoseconds, Spark timestamps microseconds")
      }
    case PaimonType.Array(e, _)    => sparkType(e).map(ArrayType(_, e.nullable))
    case PaimonType.Multiset(e, _) => sparkType(e).map(MapType(_, IntegerType, valueContainsNull = false))
    case PaimonType.Map(k, v, _)   => for (kt <- sparkType(k); vt <- sparkType(v)) yield MapType(kt, vt, v.nullable)
    case PaimonType.Row(fs, _) =>
      fs.foldLeft[Either[String, Seq[StructField]]](Right(Nil)) { (acc, f) =>
        for (a <- acc; ft <- sparkType(f.dataType)) yield a :+ StructField(f.name, ft, f.dataType.nullable)
      }.map(StructType(_))
  }

  /** The Spark schema of the table's columns (unrepresentable ones typed as Spark reads them:
    * refused by [[read]] when used). */
  private def sparkSchema(schema: TableSchema): StructType =
    StructType(schema.fields.map(f => StructField(f.name, sparkType(f.dataType).getOrElse(TimestampNTZType), f.dataType.nullable)))

  private def schemaFile(table: FileStoreTable): String = table.schemas.directory.resolve(s"schema-${table.schema.id}").toString

  /** The predicate of the condition for planning: text through [[FileStoreTable.predicate]]
    * (the same tree Paimon builds), falling back like a Column to Spark's analysis
    * ([[FileIndexConditions]]) for what the condition language does not parse. */
  private def predicate(spark: SparkSession, table: FileStoreTable, schema: StructType, where: Either[String, Column]): Predicate = {
    def analysed(e: org.apache.spark.sql.catalyst.expressions.Expression) =
      Predicates.paimonShape(FileIndexConditions.translate(e), table.columnTypes)
    where match {
      case Left(text) =>
        try table.predicate(text)
        catch { case _: IndexFormatException => analysed(FileIndexConditions.analyze(spark, schema, text)) }
      case Right(column) => analysed(FileIndexConditions.analyze(spark, schema, column))
    }
  }

  private def references(spark: SparkSession, schema: StructType, where: Either[String, Column]): Set[String] =
    (where match {
      case Left(text)    => FileIndexConditions.analyze(spark, schema, text)
      case Right(column) => FileIndexConditions.analyze(spark, schema, column)
    }).references.map(_.name).toSet

  // ------------------------------------------------------------------------------------------
  // Read

  private def readWith(spark: SparkSession, path: String, snapshot: Option[Long], where: Option[Either[String, Column]],
      columns: Option[Seq[String]]): DataFrame = {
    val table = FileStoreTable.open(path, snapshot)
    val schema = table.schema
    val fullSchema = sparkSchema(schema)
    val projected = columns.getOrElse(schema.fieldNames)
    projected.filterNot(schema.fieldNames.contains).foreach { c =>
      throw new IllegalArgumentException(s"no column '$c' in the table (columns: ${schema.fieldNames.mkString(", ")})")
    }
    val options = table.options
    val merging = if (table.primaryKeyTable) schema.trimmedPrimaryKeys ++ options.sequenceFields else Nil
    val used = (projected ++ where.toSeq.flatMap(references(spark, fullSchema, _)) ++ merging).distinct
    for (name <- used; why <- sparkType(schema.field(name).dataType).left.toOption)
      throw new IndexFormatException(schemaFile(table), 0,
        s"columns Spark can hold exactly: '$name' is $why (leave it out with columns)")
    val format = schema.options.getOrElse("file.format", "parquet")
    if (!format.equalsIgnoreCase("parquet"))
      throw new IndexFormatException(schemaFile(table), 0, s"Parquet data files (file.format = $format is not supported by the Spark read)")
    val plan = table.plan(where.map(predicate(spark, table, fullSchema, _)))
    val skipped = skippedByIndex(spark, plan)
    val rawFiles = plan.splits.filter(_.rawRead(table.primaryKeyTable)).flatMap(_.files).filterNot(f => skipped.contains(f.name))
    val mergeSplits = plan.splits.filterNot(_.rawRead(table.primaryKeyTable))
    val fields = used.map(schema.field)
    val raw = rawFiles.groupBy(_.meta.schemaId).toSeq.sortBy(_._1).map { case (id, files) => frame(spark, table, files, id, fields, system = false) }
    val merged = if (mergeSplits.isEmpty) Nil else Seq(merge(table, mergeSplits.zipWithIndex.flatMap { case (s, i) =>
      s.files.groupBy(_.meta.schemaId).toSeq.sortBy(_._1).map { case (id, files) =>
        frame(spark, table, files, id, fields, system = true).withColumn(Split, lit(i))
      }
    }))
    val all = (raw ++ merged).reduceOption(_ unionByName _)
      .getOrElse(spark.createDataFrame(java.util.Collections.emptyList[Row](), StructType(fields.map(f => fullSchema(f.name)))))
    val filtered = where.fold(all) {
      case Left(text)    => all.where(text)
      case Right(column) => all.where(column)
    }
    filtered.select(projected.map(quoted): _*)
  }

  private def quoted(name: String): Column = col("`" + name.replace("`", "``") + "`")

  /** The raw-read files whose file index rules the condition out: embedded indexes checked here,
    * `.index` files in Spark tasks (only the names of skipped files come back). */
  private def skippedByIndex(spark: SparkSession, plan: Plan): Set[String] =
    if (plan.predicate.isEmpty || !plan.table.options.fileIndexReadEnabled) Set.empty
    else {
      val checks = plan.splits.filter(_.rawRead(plan.table.primaryKeyTable)).flatMap(_.files)
        .flatMap(FileIndexEvaluator.check(plan, _)).filter(_.filter.isDefined)
      val (embedded, inFiles) = checks.partition(_.embedded.isDefined)
      val skippedHere = embedded.filterNot(_.remain).map(_.dataFile)
      val skippedInTasks =
        if (inFiles.isEmpty) Nil
        else spark.sparkContext.parallelize(inFiles, math.min(inFiles.size, spark.sparkContext.defaultParallelism))
          .filter(!_.remain).map(_.dataFile).collect().toSeq
      (skippedHere ++ skippedInTasks).toSet
    }

  /** The rows of data files of one schema as the table's `fields` (and, for merging, the
    * system columns), deleted rows dropped. */
  private def frame(spark: SparkSession, table: FileStoreTable, files: Seq[DataFileEntry], schemaId: Long, fields: Seq[PaimonField],
      system: Boolean): DataFrame = {
    files.find(!_.name.endsWith(".parquet")).foreach { f =>
      throw new IndexFormatException(f.path.toString, 0, "a Parquet data file (the Spark read supports Parquet; file.format of this table is not)")
    }
    val fileSchema = table.schemas.schema(schemaId)
    val byId = fileSchema.fields.map(f => f.id -> f).toMap
    val physical = fields.flatMap(f => byId.get(f.id)).distinct
    val readSchema = StructType(physical.map(f => StructField(f.name, sparkType(f.dataType).toOption.get)) ++
      (if (system) Seq(StructField(SequenceNumber, LongType), StructField(ValueKind, ByteType)) else Nil))
    val data = spark.read.schema(readSchema).parquet(files.map(_.path.toString): _*)
    val dvs = files.flatMap(f => f.deletionFile.map(d => f.name -> DeletionVectorRef(d.path.toString, d.offset, d.length, d.cardinality, f.meta.rowCount))).toMap
    val live = if (dvs.isEmpty) data else data.where(PaimonRowLive.column(col("_metadata.file_name"), col("_metadata.row_index"), dvs))
    val columns = fields.map { f =>
      val target = sparkType(f.dataType).toOption.get
      byId.get(f.id) match {
        case Some(ff) if ff.dataType == f.dataType => quoted(ff.name).as(f.name)
        case Some(ff)                              => quoted(ff.name).cast(target).as(f.name)
        case None                                  => lit(null).cast(target).as(f.name)
      }
    }
    val levels = if (system) Seq(element_at(typedLit(files.map(f => f.name -> f.meta.level).toMap), col("_metadata.file_name")).as(Level)) else Nil
    live.select(columns ++ (if (system) Seq(col(SequenceNumber), col(ValueKind)) else Nil) ++ levels: _*)
  }

  /** Merge-on-read of the merge splits' rows (see the object comment). */
  private def merge(table: FileStoreTable, frames: Seq[DataFrame]): DataFrame = {
    val options = table.options
    val keys = table.schema.trimmedPrimaryKeys.map(quoted)
    val rows = frames.reduce(_ unionByName _)
    val retraction = col(ValueKind).isin(1, 3)
    val candidates = if (options.ignoreDelete) rows.where(!retraction) else rows
    val order =
      if (options.firstRow) col(Level).asc +: options.sequenceFields.map(f => quoted(f).asc_nulls_first) :+ col(SequenceNumber).asc
      else options.sequenceFields.map(f => if (options.sequenceDescending) quoted(f).asc_nulls_last else quoted(f).desc_nulls_last) :+
        col(SequenceNumber).desc
    val winner = row_number().over(Window.partitionBy(col(Split) +: keys: _*).orderBy(order: _*))
    candidates.withColumn("_ib_rank", winner).where(col("_ib_rank") === 1 && !retraction)
      .drop("_ib_rank", SequenceNumber, ValueKind, Split, Level)
  }

  // ------------------------------------------------------------------------------------------
  // Plan

  private val DeletionVectorSchema = StructType(Seq(
    StructField("index_file", StringType, nullable = false), StructField("offset", IntegerType, nullable = false),
    StructField("length", IntegerType, nullable = false), StructField("cardinality", LongType)))
  private val FileIndexSchema = StructType(Seq(
    StructField("embedded", BooleanType, nullable = false), StructField("index_file", StringType),
    StructField("indexes", MapType(StringType, ArrayType(StringType, containsNull = false), valueContainsNull = false), nullable = false)))

  /** What a task needs to finish one plan row: the row so far, the file's index and filter,
    * and how the read treats the file. */
  private final case class PlanItem(row: Row, check: Option[FileIndexCheck], inPlan: Boolean, indexDecides: Boolean)

  private def planWith(spark: SparkSession, path: String, snapshot: Option[Long], where: Option[Either[String, Column]]): DataFrame = {
    val table = FileStoreTable.open(path, snapshot)
    val schema = table.schema
    val partitionSchema = StructType(schema.partitionFields.map(f => StructField(f.name, sparkType(f.dataType).getOrElse(TimestampNTZType))))
    val out = StructType(Seq(
      StructField("partition", partitionSchema, nullable = false), StructField("bucket", IntegerType, nullable = false),
      StructField("file", StringType, nullable = false), StructField("level", IntegerType, nullable = false),
      StructField("row_count", LongType, nullable = false), StructField("schema_id", LongType, nullable = false),
      StructField("deletion_vector", DeletionVectorSchema), StructField("file_index", FileIndexSchema)) ++
      (if (where.isDefined) Seq(StructField("index_result", StringType, nullable = false), StructField("read", BooleanType, nullable = false))
       else Nil))
    val p = where.map(predicate(spark, table, sparkSchema(schema), _))
    val all = table.plan(None)
    val filtered = p.map(q => table.plan(Some(q)))
    val readSplits = filtered.toSeq.flatMap(_.splits).flatMap(s => s.files.map(f => f.name -> s.rawRead(table.primaryKeyTable))).toMap
    val items = all.splits.flatMap { s =>
      s.files.map { f =>
        val dv = f.deletionFile.map(d => Row(d.path.getFileName.toString, d.offset, d.length, if (d.cardinality < 0) null else d.cardinality))
        val row = Row(Row.fromSeq(schema.partitionKeys.zip(s.partition).map { case (k, v) => external(schema.keyTypeOf(k).get, v) }),
          s.bucket, f.name, f.meta.level, f.meta.rowCount, f.meta.schemaId, dv.orNull)
        PlanItem(row, FileIndexEvaluator.check(table, p, f), readSplits.contains(f.name),
          readSplits.getOrElse(f.name, false) && table.options.fileIndexReadEnabled)
      }
    }
    val withWhere = where.isDefined
    val rows = spark.sparkContext.parallelize(items, math.max(1, math.min(items.size, spark.sparkContext.defaultParallelism))).map { item =>
      val container = item.check.map(_.container)
      val fileIndex = item.check.zip(container).map { case (c, index) =>
        val indexes = index.columns.map(column => column -> index.entries.filter(_.column == column).map(_.indexType).distinct).toMap
        Row(c.embedded.isDefined, c.indexFile.map(java.nio.file.Paths.get(_).getFileName.toString).orNull, indexes)
      }
      val remain = item.check.forall(_.remain)
      Row.fromSeq(item.row.toSeq :+ fileIndex.orNull) ++
        (if (withWhere) Seq(if (remain) "remain" else "skip", item.inPlan && (remain || !item.indexDecides)) else Nil)
    }
    spark.createDataFrame(rows, out)
  }

  private implicit final class RowOps(private val row: Row) extends AnyVal {
    def ++(more: Seq[Any]): Row = Row.fromSeq(row.toSeq ++ more)
  }

  /** An internal value (the table layer's conventions) as the external value of its Spark type. */
  private def external(t: KeyType, v: Any): Any = (t, v) match {
    case (_, null)                            => null
    case (KeyType.DateType, d: Int)           => java.time.LocalDate.ofEpochDay(d.toLong)
    case (_: KeyType.TimestampType, (m: Long, n: Int)) =>
      java.time.LocalDateTime.ofEpochSecond(Math.floorDiv(m, 1000L), (Math.floorMod(m, 1000L) * 1000000L + n).toInt, java.time.ZoneOffset.UTC)
    case (_: KeyType.LocalZonedTimestampType, (m: Long, n: Int)) => java.time.Instant.ofEpochMilli(m).plusNanos(n.toLong)
    case (_, other)                           => other
  }
}
