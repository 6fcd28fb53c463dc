package io.indexbridge.paimon.table

import java.nio.file.{FileAlreadyExistsException, Files, Path, StandardOpenOption}
import java.util.UUID

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.JsonNodeFactory
import io.indexbridge.paimon.KeyType

/** Creating a table: `schema/schema-0` as Paimon's `SchemaManager.createTable` writes it
  * (`SchemaSerializer`, Jackson's default pretty printer).
  *
  * {{{
  * {"version" : 3, "id" : 0, "fields" : [ {"id" : 0, "name" : "dt", "type" : "STRING NOT NULL"}, ... ],
  *  "highestFieldId" : n, "partitionKeys" : [...], "primaryKeys" : [...], "options" : {...},
  *  "timeMillis" : ...}
  * ids       top-level columns in order; the fields of a ROW column right after it, depth first
  *           (Schema.Builder.column + ReassignFieldId)
  * keys      primary-key columns become NOT NULL (Schema.normalizePrimaryKeys)
  * types     DataType.asSQLString: STRING, BYTES, DECIMAL(p, s), TIMESTAMP(p) [WITH LOCAL TIME
  *           ZONE], " NOT NULL" appended; ARRAY/MAP/MULTISET/ROW as objects
  * publish   written to a hidden temporary file and hard-linked to schema-0 (fails if it exists)
  * }}}
  */
object SchemaWriter {
  private val mapper = new ObjectMapper()
  private val nodes = JsonNodeFactory.instance

  /** `DataType.asSQLString` of an atomic type. */
  def sql(t: KeyType): String = t match {
    case KeyType.BooleanType                        => "BOOLEAN"
    case KeyType.TinyIntType                        => "TINYINT"
    case KeyType.SmallIntType                       => "SMALLINT"
    case KeyType.IntType                            => "INT"
    case KeyType.BigIntType                         => "BIGINT"
    case KeyType.FloatType                          => "FLOAT"
    case KeyType.DoubleType                         => "DOUBLE"
    case KeyType.DateType                           => "DATE"
    case KeyType.TimeType(p)                        => s"TIME($p)"
    case KeyType.TimestampType(p)                   => s"TIMESTAMP($p)"
    case KeyType.LocalZonedTimestampType(p)         => s"TIMESTAMP($p) WITH LOCAL TIME ZONE"
    case KeyType.CharType(n)                        => s"CHAR($n)"
    case KeyType.VarCharType(n) if n == Int.MaxValue => "STRING"
    case KeyType.VarCharType(n)                     => s"VARCHAR($n)"
    case KeyType.BinaryType(n)                      => s"BINARY($n)"
    case KeyType.VarBinaryType(n) if n == Int.MaxValue => "BYTES"
    case KeyType.VarBinaryType(n)                   => s"VARBINARY($n)"
    case KeyType.DecimalType(p, s)                  => s"DECIMAL($p, $s)"
  }

  private def notNull(nullable: Boolean) = if (nullable) "" else " NOT NULL"

  def typeJson(t: DataType): JsonNode = t match {
    case DataType.Atomic(k, n) => nodes.textNode(sql(k) + notNull(n))
    case DataType.Array(e, n)  => nodes.objectNode().put("type", "ARRAY" + notNull(n)).set[JsonNode]("element", typeJson(e))
    case DataType.Multiset(e, n) => nodes.objectNode().put("type", "MULTISET" + notNull(n)).set[JsonNode]("element", typeJson(e))
    case DataType.Map(k, v, n) =>
      val o = nodes.objectNode().put("type", "MAP" + notNull(n))
      o.set[JsonNode]("key", typeJson(k))
      o.set[JsonNode]("value", typeJson(v))
    case DataType.Row(fs, n) =>
      val o = nodes.objectNode().put("type", "ROW" + notNull(n))
      val a = o.putArray("fields")
      fs.foreach(f => a.add(fieldJson(f)))
      o
  }

  private def fieldJson(f: DataField): JsonNode = {
    val o = nodes.objectNode().put("id", f.id).put("name", f.name)
    o.set[JsonNode]("type", typeJson(f.dataType))
    f.description.foreach(o.put("description", _))
    o
  }

  private def withNullable(t: DataType, nullable: Boolean): DataType = t match {
    case a: DataType.Atomic   => a.copy(nullable = nullable)
    case a: DataType.Array    => a.copy(nullable = nullable)
    case m: DataType.Multiset => m.copy(nullable = nullable)
    case m: DataType.Map      => m.copy(nullable = nullable)
    case r: DataType.Row      => r.copy(nullable = nullable)
  }

  /** Field ids as `Schema.Builder.column` gives them: the column, then the fields nested in it. */
  def assignIds(columns: Seq[(String, DataType)]): (Seq[DataField], Int) = {
    var highest = -1
    def reassign(t: DataType): DataType = t match {
      case DataType.Array(e, n)    => DataType.Array(reassign(e), n)
      case DataType.Multiset(e, n) => DataType.Multiset(reassign(e), n)
      case DataType.Map(k, v, n)   => DataType.Map(reassign(k), reassign(v), n)
      case DataType.Row(fs, n)     => DataType.Row(fs.map { f => val nt = reassign(f.dataType); highest += 1; DataField(highest, f.name, nt) }, n)
      case other                   => other
    }
    val fields = columns.map { case (name, t) =>
      highest += 1
      val id = highest
      DataField(id, name, reassign(t))
    }
    (fields, highest)
  }

  /** The schema JSON of a new table. */
  def json(schema: TableSchema, timeMillis: Long): Array[Byte] = {
    val o = nodes.objectNode().put("version", 3).put("id", schema.id)
    val fields = o.putArray("fields")
    schema.fields.foreach(f => fields.add(fieldJson(f)))
    o.put("highestFieldId", schema.highestFieldId)
    val pk = o.putArray("partitionKeys")
    schema.partitionKeys.foreach(pk.add)
    val keys = o.putArray("primaryKeys")
    schema.primaryKeys.foreach(keys.add)
    val options = o.putObject("options")
    schema.options.foreach { case (k, v) => options.put(k, v) }
    o.put("timeMillis", timeMillis)
    mapper.writerWithDefaultPrettyPrinter().writeValueAsBytes(o)
  }

  /** A schema-0 of `columns` (primary-key columns made NOT NULL), `options` in the given order. */
  def newSchema(columns: Seq[(String, DataType)], partitionKeys: Seq[String], primaryKeys: Seq[String],
      options: Seq[(String, String)]): TableSchema = {
    val (fields, highest) = assignIds(columns.map { case (n, t) => n -> (if (primaryKeys.contains(n)) withNullable(t, nullable = false) else t) })
    TableSchema(0L, fields, highest, partitionKeys, primaryKeys, scala.collection.immutable.ListMap(options: _*), 3)
  }

  /** Writes schema-0 unless the table has one; false when it exists already. */
  def create(tablePath: Path, schema: TableSchema): Boolean = {
    val dir = tablePath.resolve("schema")
    Files.createDirectories(dir)
    val target = dir.resolve("schema-0")
    val tmp = dir.resolve(s".schema-0.${UUID.randomUUID()}.tmp")
    try {
      Files.write(tmp, json(schema, System.currentTimeMillis()), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)
      try { Files.createLink(target, tmp); true }
      catch { case _: FileAlreadyExistsException => false }
    } finally Files.deleteIfExists(tmp)
  }
}
