package io.indexbridge.reference

import java.math.{BigDecimal => JBigDecimal}
import java.nio.file.{Files, Paths}
import java.time.LocalDate

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.paimon.catalog.{Catalog, CatalogContext, CatalogFactory, Identifier}
import org.apache.paimon.data.{BinaryString, Decimal, GenericArray, GenericMap, GenericRow, Timestamp}
import org.apache.paimon.disk.IOManager
import org.apache.paimon.index.HashBucketAssigner
import org.apache.paimon.options.Options
import org.apache.paimon.schema.{Schema, SchemaChange}
import org.apache.paimon.table.FileStoreTable
import org.apache.paimon.types.{ArrayType, DataType, DataTypes, MapType, RowKind, RowType}

/** Real Paimon tables, made by Paimon 1.4.2's own Java API from a seed: the tables the table
  * layer is tested against, that the demo reads and that `bench table` measures.
  *
  * A recipe (kind + seed) decides the schema, the options and a history of commits:
  *
  *  - `pk`: primary-key table with fixed buckets, merge-on-read (level-0 files overlap until a
  *    compaction); `pk-dv`: the same with deletion vectors (32- or 64-bit, seeded);
  *  - `dynamic`: primary-key table with `bucket = -1` (hash indexes), keys assigned by Paimon's
  *    `HashBucketAssigner` with a small `dynamic-bucket.target-row-num`, DVs on or off;
  *  - `append`: append table (unaware or fixed buckets) with bloom-filter, bitmap and BSI file
  *    indexes, some embedded in the manifest and some in `.index` files.
  *
  * Every table may be partitioned (STRING, INT or DATE partitions, one of them sometimes null),
  * carries value columns of many types with nulls, sees inserts, updates and deletes (primary-key
  * kinds) over several commits, full compactions, and sometimes an added column. Paimon is a
  * provided dependency: the paimon-bundle jar must be on the classpath. */
object PaimonTables {

  /** A column: its name and Paimon type. */
  final case class Column(name: String, dataType: DataType)

  /** What a table is made of, before any row is written. */
  final case class Recipe(
      kind: String,
      seed: Long,
      columns: Seq[Column],
      primaryKeys: Seq[String],
      partitionKeys: Seq[String],
      options: Map[String, String],
      rows: Int,
      commits: Int)

  val Kinds: Seq[String] = Seq("pk", "pk-dv", "dynamic", "append")

  /** A generator for `seed` and `purpose`, seeds mixed first (SplitMix64): java.util.Random's first
    * draws from neighbouring seeds are nearly equal, which made seeds 1..4 all pick one shape. */
  def random(seed: Long, purpose: String): Random = {
    var z = seed * 0x9E3779B97F4A7C15L + purpose.hashCode
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL
    new Random(z ^ (z >>> 31))
  }

  private val valueTypes: Seq[DataType] = Seq(
    DataTypes.BOOLEAN(), DataTypes.TINYINT(), DataTypes.SMALLINT(), DataTypes.INT(), DataTypes.BIGINT(),
    DataTypes.FLOAT(), DataTypes.DOUBLE(), DataTypes.DECIMAL(10, 2), DataTypes.DECIMAL(24, 4), DataTypes.STRING(),
    DataTypes.VARCHAR(12), DataTypes.CHAR(5), DataTypes.BYTES(), DataTypes.DATE(), DataTypes.TIME(), DataTypes.TIMESTAMP(3),
    DataTypes.TIMESTAMP(6), DataTypes.TIMESTAMP(9), DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3),
    DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(6), DataTypes.ARRAY(DataTypes.INT()),
    DataTypes.MAP(DataTypes.STRING().notNull(), DataTypes.INT()),
    DataTypes.ROW(DataTypes.FIELD(100, "a", DataTypes.INT()), DataTypes.FIELD(101, "b", DataTypes.STRING())))

  private def root(t: DataType): String = t.getTypeRoot.name

  /** The indexes Paimon accepts for a type (spec/paimon.md App. C; range-bitmap: spec/range-bitmap.md §1). */
  private def indexTypes(t: DataType): Seq[String] = root(t) match {
    case "TIMESTAMP_WITHOUT_TIME_ZONE" | "TIMESTAMP_WITH_LOCAL_TIME_ZONE"
        if org.apache.paimon.types.DataTypeChecks.getPrecision(t) > 6 => Nil
    case "TINYINT" | "SMALLINT" | "INTEGER" | "BIGINT" | "DATE" | "TIMESTAMP_WITHOUT_TIME_ZONE" |
        "TIMESTAMP_WITH_LOCAL_TIME_ZONE" => Seq("bloom-filter", "bitmap", "bsi", "range-bitmap")
    case "FLOAT" | "DOUBLE"               => Seq("bloom-filter", "bitmap", "range-bitmap")
    case "BOOLEAN"                        => Seq("bitmap", "range-bitmap")
    case "CHAR" | "VARCHAR"               => Seq("bloom-filter", "bitmap", "range-bitmap")
    case "BINARY" | "VARBINARY"           => Seq("bloom-filter")
    case "DECIMAL" if org.apache.paimon.types.DataTypeChecks.getPrecision(t) <= 18 => Seq("bsi", "range-bitmap")
    case "DECIMAL"                        => Seq("bsi")
    case _                                => Nil
  }

  def recipe(kind: String, seed: Long, rows: Int = 240, commits: Int = 4): Recipe = {
    require(Kinds.contains(kind), s"unknown table kind '$kind' (one of ${Kinds.mkString(", ")})")
    val r = random(seed, kind)
    val partitions: Seq[Column] = r.nextInt(8) match {
      case 0     => Nil
      case 1     => Seq(Column("dt", DataTypes.STRING()), Column("hr", DataTypes.INT()))
      case 2 | 3 => Seq(Column("dt", DataTypes.STRING()))
      case 4 | 5 => Seq(Column("region", DataTypes.INT()))
      case _     => Seq(Column("day", DataTypes.DATE()))
    }
    val keyed = kind != "append"
    val keys: Seq[Column] =
      if (!keyed) Nil
      else
        r.nextInt(4) match {
          case 0 => Seq(Column("id", DataTypes.STRING().notNull()))
          case 1 => Seq(Column("id", DataTypes.INT().notNull()), Column("k2", DataTypes.SMALLINT().notNull()))
          case 2 => Seq(Column("id", DataTypes.BIGINT().notNull()))
          case _ => Seq(Column("id", DataTypes.INT().notNull()))
        }
    val appendKey = if (keyed) Nil else Seq(Column("id", DataTypes.BIGINT()))
    val values = (0 until 3 + r.nextInt(4)).map(i => Column(s"c$i", valueTypes(r.nextInt(valueTypes.size))))
    val columns = partitions.map(c => c.copy(dataType = c.dataType.notNull())) ++ keys ++ appendKey ++ values
    val options = Map.newBuilder[String, String]
    kind match {
      case "pk"      => options += "bucket" -> (1 + r.nextInt(3)).toString
      case "pk-dv"   => options += "bucket" -> (1 + r.nextInt(3)).toString
      case "dynamic" => options ++= Seq("bucket" -> "-1", "dynamic-bucket.target-row-num" -> (15 + r.nextInt(30)).toString)
      case _ =>
        if (r.nextBoolean()) options += "bucket" -> "-1"
        else options ++= Seq("bucket" -> (1 + r.nextInt(3)).toString, "bucket-key" -> "id")
    }
    if (kind == "pk-dv" || (kind == "dynamic" && r.nextBoolean())) {
      options += "deletion-vectors.enabled" -> "true"
      options += "deletion-vectors.bitmap64" -> r.nextBoolean().toString
    }
    if (keyed) {
      // merge behaviour: first-row, a user sequence field, ignored deletes
      val ordered = values.filter(c => Set("INTEGER", "BIGINT", "DOUBLE", "TIMESTAMP_WITHOUT_TIME_ZONE").contains(root(c.dataType)))
      r.nextInt(8) match {
        case 0 if !options.result().contains("deletion-vectors.enabled") => // Paimon refuses first-row with DVs
          options ++= Seq("merge-engine" -> "first-row", "first-row.ignore-delete" -> "true")
        case 1 | 2 if ordered.nonEmpty =>
          options += "sequence.field" -> ordered(r.nextInt(ordered.size)).name
          if (r.nextBoolean()) options += "sequence.field.sort-order" -> "descending"
        case 3 => options += "ignore-delete" -> "true"
        case _ =>
      }
    }
    if (r.nextInt(6) == 0) options += "file.format" -> "orc"
    // File indexes on value columns (and the append table's id): small bloom filters and
    // bitmaps fit the manifest, default-sized bloom filters go to `.index` files.
    val indexable = (appendKey ++ values).filter(c => indexTypes(c.dataType).nonEmpty)
    val chosen = r.shuffle(indexable).take(if (kind == "append") 3 else 1 + r.nextInt(2))
    val byType = chosen.flatMap { c =>
      val types = indexTypes(c.dataType)
      r.shuffle(types).take(1 + r.nextInt(types.size)).map(_ -> c.name)
    }.groupMap(_._1)(_._2)
    byType.foreach { case (t, cols) => options += s"file-index.$t.columns" -> cols.mkString(",") }
    // small bloom filters (and sometimes a larger threshold) put containers in the manifest,
    // default-sized ones (~585 KiB) in `.index` files
    val embedAll = kind == "append" && r.nextBoolean()
    byType.getOrElse("bloom-filter", Nil).foreach { c =>
      if (embedAll || r.nextBoolean()) options += s"file-index.bloom-filter.$c.items" -> (20 + r.nextInt(80)).toString
    }
    if (embedAll) options += "file-index.in-manifest-threshold" -> "4kb"
    else if (r.nextInt(3) == 0) options += "file-index.in-manifest-threshold" -> (200 + r.nextInt(2000)).toString
    Recipe(kind, seed, columns, keys.map(_.name) ++ partitions.map(_.name).filter(_ => keyed), partitions.map(_.name),
      options.result(), rows, commits)
  }

  // ------------------------------------------------------------------------------------------
  // Values

  private val Epoch2024 = LocalDate.of(2024, 1, 1).toEpochDay

  /** A random internal value of type `t`, null one time in eight where the type allows it. */
  private def value(r: Random, t: DataType): AnyRef =
    if (t.isNullable && r.nextInt(8) == 0) null else sample(r, t)

  /** A random non-null internal value of type `t`. */
  def sample(r: Random, t: DataType): AnyRef =
    root(t) match {
      case "BOOLEAN"  => Boolean.box(r.nextBoolean())
      case "TINYINT"  => Byte.box((r.nextInt(256) - 128).toByte)
      case "SMALLINT" => Short.box((r.nextInt(2000) - 1000).toShort)
      case "INTEGER"  => Int.box(r.nextInt(2000) - 1000)
      case "BIGINT"   => Long.box(r.nextLong() >> r.nextInt(60))
      case "FLOAT"    => Float.box((r.nextInt(4000) - 2000) / 4f) // binary fractions print exactly
      case "DOUBLE"   => Double.box((r.nextInt(40000) - 20000) / 8.0)
      case "DECIMAL" =>
        val d = t.asInstanceOf[org.apache.paimon.types.DecimalType]
        val digits = math.min(d.getPrecision, 15)
        val unscaled = (r.nextLong() >>> 1) % math.pow(10, digits).toLong * (if (r.nextBoolean()) 1 else -1)
        Decimal.fromBigDecimal(JBigDecimal.valueOf(unscaled, d.getScale), d.getPrecision, d.getScale)
      case "CHAR" | "VARCHAR" if t.isInstanceOf[org.apache.paimon.types.CharType] =>
        BinaryString.fromString(Seq("ab", "abcde", "x", "", "zz z")(r.nextInt(5)))
      case "CHAR" | "VARCHAR" =>
        val words = Seq("alpha", "beta", "gamma", "delta", "ε-psilon", "zeta", "eta", "theta", "", "iota kappa")
        BinaryString.fromString(words(r.nextInt(words.size)) + (if (r.nextBoolean()) r.nextInt(50).toString else ""))
      case "BINARY" | "VARBINARY" => Array.fill[Byte](r.nextInt(12))((r.nextInt(256) - 128).toByte)
      case "DATE"                 => Int.box((Epoch2024 + r.nextInt(800) - 400).toInt)
      case "TIME_WITHOUT_TIME_ZONE" => Int.box(r.nextInt(86400000))
      case "ARRAY" =>
        new GenericArray(Array.fill[AnyRef](r.nextInt(4))(value(r, t.asInstanceOf[ArrayType].getElementType)))
      case "MAP" =>
        val m = t.asInstanceOf[MapType]
        val keys = Seq("k1", "k2", "k3").filter(_ => r.nextBoolean())
        new GenericMap(keys.map(k => (BinaryString.fromString(k): AnyRef) -> value(r, m.getValueType)).toMap.asJava)
      case "ROW" =>
        val row = t.asInstanceOf[RowType]
        GenericRow.of(row.getFieldTypes.asScala.map(value(r, _)).toSeq: _*)
      case "TIMESTAMP_WITHOUT_TIME_ZONE" | "TIMESTAMP_WITH_LOCAL_TIME_ZONE" =>
        val precision = org.apache.paimon.types.DataTypeChecks.getPrecision(t)
        val micros = (Epoch2024 * 86400L + r.nextInt(86400 * 400)) * 1000000L + r.nextInt(1000000)
        val truncated = if (precision <= 3) micros - Math.floorMod(micros, 1000L) else micros
        val extraNanos = if (precision > 6) r.nextInt(1000) else 0
        Timestamp.fromEpochMillis(Math.floorDiv(truncated, 1000L), (Math.floorMod(truncated, 1000L) * 1000).toInt + extraNanos)
      case other => throw new IllegalArgumentException(s"no generator for $other")
    }

  private def partitionValue(r: Random, c: Column, keyed: Boolean): AnyRef = root(c.dataType) match {
    // a '/' in a partition value breaks Paimon's own lookup files (primary-key tables)
    case "VARCHAR" => BinaryString.fromString(Seq("2024-05-01", "2024-05-02", if (keyed) "a b:c=d" else "a b/c=d")(r.nextInt(3)))
    case "INTEGER" => Int.box(if (c.name == "hr") r.nextInt(2) else r.nextInt(3) - 1)
    case "DATE"    => Int.box((Epoch2024 + r.nextInt(2)).toInt)
    case other     => throw new IllegalArgumentException(s"no partition generator for $other")
  }

  // ------------------------------------------------------------------------------------------
  // Creating a table

  private def catalog(warehouse: String): Catalog = {
    val options = new Options()
    options.set("warehouse", warehouse)
    CatalogFactory.createCatalog(CatalogContext.create(options))
  }

  /** Creates `database.name` in `warehouse` from `recipe`, writes its commits and returns the
    * table's directory. */
  def create(warehouse: String, database: String, name: String, recipe: Recipe): String = {
    val r = random(recipe.seed, recipe.kind + "/rows")
    val cat = catalog(warehouse)
    try {
      cat.createDatabase(database, true)
      val builder = Schema.newBuilder()
      recipe.columns.foreach(c => builder.column(c.name, c.dataType))
      if (recipe.primaryKeys.nonEmpty) builder.primaryKey(recipe.primaryKeys.asJava)
      if (recipe.partitionKeys.nonEmpty) builder.partitionKeys(recipe.partitionKeys.asJava)
      builder.options(recipe.options.asJava)
      val id = Identifier.create(database, name)
      cat.createTable(id, builder.build(), false)

      var columns = recipe.columns
      val keyCols = recipe.primaryKeys.filterNot(recipe.partitionKeys.contains)
      val live = scala.collection.mutable.LinkedHashMap.empty[Seq[AnyRef], Array[AnyRef]]
      val perCommit = math.max(1, recipe.rows / recipe.commits)
      val addColumnAt = if (r.nextInt(3) == 0) 1 + r.nextInt(recipe.commits) else -1
      val io = IOManager.create(Files.createTempDirectory("paimon-io").toString)
      for (commit <- 0 until recipe.commits) {
        if (commit == addColumnAt) {
          cat.alterTable(id, SchemaChange.addColumn("added", DataTypes.INT()), false)
          columns = columns :+ Column("added", DataTypes.INT())
        }
        val table = cat.getTable(id).asInstanceOf[FileStoreTable]
        val rows = (0 until perCommit).map { i =>
          val fresh = Array.tabulate[AnyRef](columns.size) { j =>
            val c = columns(j)
            if (recipe.partitionKeys.contains(c.name)) partitionValue(r, c, recipe.primaryKeys.nonEmpty)
            else if (keyCols.contains(c.name) && c.name == "id")
              root(c.dataType) match {
                case "VARCHAR" => BinaryString.fromString(s"key-${r.nextInt(recipe.rows)}")
                case "BIGINT"  => Long.box(r.nextInt(recipe.rows).toLong * 1000003L)
                case _         => Int.box(r.nextInt(recipe.rows))
              }
            else if (keyCols.contains(c.name)) Short.box(r.nextInt(3).toShort)
            else if (c.name == "id") Long.box(commit * 100000L + i) // the append table's id
            else value(r, c.dataType)
          }
          val key = recipe.primaryKeys.map(k => fresh(columns.indexWhere(_.name == k)))
          if (recipe.primaryKeys.nonEmpty && live.contains(key) && r.nextInt(4) == 0) {
            live.remove(key)
            val row = GenericRow.of(fresh: _*)
            row.setRowKind(RowKind.DELETE)
            row
          } else {
            if (recipe.primaryKeys.nonEmpty) live(key) = fresh
            GenericRow.of(fresh: _*)
          }
        }
        write(table, rows, io, compact = recipe.kind != "append" && r.nextInt(3) == 0)
      }
      Paths.get(warehouse, s"$database.db", name).toString
    } finally cat.close()
  }

  private def write(table: FileStoreTable, rows: Seq[GenericRow], io: IOManager, compact: Boolean): Unit = {
    val builder = table.newBatchWriteBuilder()
    val write = builder.newWrite().withIOManager(io)
    val commit = builder.newCommit()
    try {
      if (table.coreOptions().bucket() == -1 && table.primaryKeys().size() > 0) {
        val assigner = new HashBucketAssigner(table.snapshotManager(), "indexbridge-tables", table.store().newIndexFileHandler(),
          1, 1, 0, table.coreOptions().dynamicBucketTargetRowNum(), Option(table.coreOptions().dynamicBucketMaxBuckets()).map(_.intValue).getOrElse(-1))
        val extractor = table.createRowKeyExtractor()
        rows.foreach { row =>
          extractor.setRecord(row)
          write.write(row, assigner.assign(extractor.partition(), extractor.trimmedPrimaryKey().hashCode()))
        }
      } else rows.foreach(write.write(_))
      if (compact)
        table.newSnapshotReader().bucketEntries().asScala.foreach(e => write.compact(e.partition(), e.bucket(), true))
      commit.commit(write.prepareCommit())
    } finally {
      write.close()
      commit.close()
    }
  }

  /** The demo's and the bench's table `database.name`: orders of two days (`dt`, the partition),
    * primary key (`dt`, `order_id`), `buckets` buckets and deletion vectors; a bloom filter on
    * `customer`, a bitmap on `status`, a BSI on `amount`. Three commits: `rows` orders, then 6%
    * of them updated and 2% deleted, so the deletion vectors hide ~8% of the rows written. */
  def orders(warehouse: String, database: String, name: String, rows: Int, buckets: Int): String = {
    val statuses = Array("NEW", "PAID", "SHIPPED", "RETURNED").map(s => BinaryString.fromString(s))
    val words = Array("fast", "delivery", "gift", "wrap", "fragile", "express", "weekend", "office", "door", "call")
    val columns = Seq(
      Column("dt", DataTypes.STRING().notNull()), Column("order_id", DataTypes.BIGINT().notNull()),
      Column("customer", DataTypes.STRING()), Column("amount", DataTypes.INT()), Column("status", DataTypes.STRING()),
      Column("note", DataTypes.STRING()), Column("updated", DataTypes.TIMESTAMP(3)))
    val perFile = math.max(1000, rows / buckets / 2)
    val options = Map(
      "bucket" -> buckets.toString, "deletion-vectors.enabled" -> "true",
      "file-index.bloom-filter.columns" -> "customer", "file-index.bloom-filter.customer.items" -> perFile.toString,
      "file-index.bitmap.columns" -> "status", "file-index.bsi.columns" -> "amount")
    val recipe = Recipe("orders", 0, columns, Seq("dt", "order_id"), Seq("dt"), options, rows, 3)
    val r = new Random(42)
    def order(id: Long, version: Int): GenericRow = GenericRow.of(
      BinaryString.fromString(if (id % 2 == 0) "2024-05-01" else "2024-05-02"), Long.box(id),
      BinaryString.fromString(s"customer-${(id * 7919 + version) % 5000}"), Int.box(((id * 31 + version * 17) % 1000).toInt),
      statuses((id % 4 + version).toInt % 4),
      BinaryString.fromString(Seq.fill(3)(words(r.nextInt(words.length))).mkString(" ")),
      Timestamp.fromEpochMillis(1714521600000L + id * 1000 + version * 86400000L))
    val cat = catalog(warehouse)
    try {
      cat.createDatabase(database, true)
      val builder = Schema.newBuilder()
      columns.foreach(c => builder.column(c.name, c.dataType))
      builder.primaryKey(recipe.primaryKeys.asJava).partitionKeys(recipe.partitionKeys.asJava).options(options.asJava)
      val id = Identifier.create(database, name)
      cat.createTable(id, builder.build(), false)
      val io = IOManager.create(Files.createTempDirectory("paimon-io").toString)
      def commit(rows: Iterator[GenericRow]): Unit = {
        val table = cat.getTable(id).asInstanceOf[FileStoreTable]
        val builder = table.newBatchWriteBuilder()
        val write = builder.newWrite().withIOManager(io)
        val commit = builder.newCommit()
        try {
          rows.foreach(write.write(_))
          commit.commit(write.prepareCommit())
        } finally {
          write.close()
          commit.close()
        }
      }
      commit(Iterator.range(0L, rows.toLong).map(order(_, 0)))
      commit(Iterator.range(0L, rows.toLong).filter(i => Math.floorMod(i * 2654435761L, 100L) < 6).map(order(_, 1)))
      commit(Iterator.range(0L, rows.toLong).filter(i => Math.floorMod(i * 40503L + 7, 100L) < 2).map { i =>
        val row = order(i, 1)
        row.setRowKind(RowKind.DELETE)
        row
      })
      Paths.get(warehouse, s"$database.db", name).toString
    } finally cat.close()
  }

  /** A SQL literal for an internal value of type `t`, in the condition language both engines
    * parse (`DATE '…'`, `TIMESTAMP '…'` in UTC, `12.50BD`, `3L`, `X'0a'` …), exactly that value. */
  def sqlLiteral(t: DataType, v: AnyRef): String = v match {
    case null => "NULL"
    case _ =>
      root(t) match {
        case "BOOLEAN"           => v.toString.toUpperCase
        case "TINYINT"           => s"${v}Y"
        case "SMALLINT"          => s"${v}S"
        case "INTEGER"           => v.toString
        case "BIGINT"            => s"${v}L"
        case "FLOAT"             => s"${java.lang.Float.toString(v.asInstanceOf[java.lang.Float])}F"
        case "DOUBLE"            => s"${java.lang.Double.toString(v.asInstanceOf[java.lang.Double])}D"
        case "DECIMAL"           => s"${v.asInstanceOf[Decimal].toBigDecimal.toPlainString}BD"
        case "CHAR" | "VARCHAR"  => "'" + v.toString.replace("'", "''") + "'"
        case "BINARY" | "VARBINARY" => "X'" + java.util.HexFormat.of().formatHex(v.asInstanceOf[Array[Byte]]) + "'"
        case "DATE"              => s"DATE '${LocalDate.ofEpochDay(v.asInstanceOf[Integer].longValue)}'"
        case "TIMESTAMP_WITHOUT_TIME_ZONE" | "TIMESTAMP_WITH_LOCAL_TIME_ZONE" =>
          s"TIMESTAMP '${Canonical.timestamp(v.asInstanceOf[Timestamp], org.apache.paimon.types.DataTypeChecks.getPrecision(t))}'"
        case other => throw new IllegalArgumentException(s"no literal for $other")
      }
  }
}
