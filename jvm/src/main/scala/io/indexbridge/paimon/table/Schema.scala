package io.indexbridge.paimon.table

import java.nio.file.{Files, NoSuchFileException, Path}

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.KeyType

/** A Paimon type as the schema JSON writes it (`DataTypeJsonParser`): atomic types as their SQL
  * string ([[KeyType]]), `ARRAY` / `MULTISET` / `MAP` / `ROW` as objects. */
sealed trait DataType {
  def nullable: Boolean
}

object DataType {
  final case class Atomic(keyType: KeyType, nullable: Boolean) extends DataType
  final case class Array(element: DataType, nullable: Boolean) extends DataType
  final case class Multiset(element: DataType, nullable: Boolean) extends DataType
  final case class Map(key: DataType, value: DataType, nullable: Boolean) extends DataType
  final case class Row(fields: Seq[DataField], nullable: Boolean) extends DataType

  /** A type from its schema JSON (a SQL string, or an object for nested types). */
  def fromJson(node: JsonNode): DataType =
    if (node.isTextual) {
      val sql = node.asText.trim
      val nullable = !sql.toUpperCase(java.util.Locale.ROOT).endsWith("NOT NULL")
      Atomic(KeyType.parse(sql), nullable)
    } else if (node.isObject && node.path("type").isTextual) {
      val kind = node.get("type").asText.trim.toUpperCase(java.util.Locale.ROOT)
      val nullable = !kind.endsWith("NOT NULL")
      def child(name: String): JsonNode =
        Option(node.get(name)).getOrElse(throw new IllegalArgumentException(s"$kind type without '$name'"))
      kind.takeWhile(_.isLetter) match {
        case "ARRAY"    => Array(fromJson(child("element")), nullable)
        case "MULTISET" => Multiset(fromJson(child("element")), nullable)
        case "MAP"      => Map(fromJson(child("key")), fromJson(child("value")), nullable)
        case "ROW"      => Row(child("fields").elements().asScala.map(DataField.fromJson).toSeq, nullable)
        case _          => throw new IllegalArgumentException(s"unsupported type $node")
      }
    } else throw new IllegalArgumentException(s"unsupported type $node")
}

/** A column: its id (stable across schema versions: a renamed column keeps it, an added one
  * gets a new one), name and type. */
final case class DataField(id: Int, name: String, dataType: DataType, description: Option[String] = None)

object DataField {
  def fromJson(node: JsonNode): DataField = {
    if (!node.path("id").isIntegralNumber || !node.path("name").isTextual)
      throw new IllegalArgumentException(s"a field needs an integer 'id' and a string 'name': $node")
    DataField(node.get("id").asInt, node.get("name").asText, DataType.fromJson(node.path("type")),
      Option(node.get("description")).filterNot(_.isNull).map(_.asText))
  }
}

/** A Paimon table schema: `schema/schema-<id>` JSON (`TableSchema`, `SchemaManager`). Python's
  * twin is `indexbridge.paimon.table.schema`.
  *
  * {{{
  * {"version": 3, "id": 0,
  *  "fields": [{"id": 0, "name": "dt", "type": "STRING NOT NULL"},
  *             {"id": 4, "name": "tags", "type": {"type": "ARRAY", "element": "INT"}},
  *             {"id": 5, "name": "m", "type": {"type": "MAP NOT NULL", "key": "STRING NOT NULL", "value": "BIGINT"}},
  *             {"id": 6, "name": "r", "type": {"type": "ROW", "fields": [{"id": 7, "name": "a", "type": "INT"}]}}],
  *  "highestFieldId": 7, "partitionKeys": ["dt"], "primaryKeys": ["dt", "id"],
  *  "options": {"bucket": "2", "deletion-vectors.enabled": "true"}, "comment": null, "timeMillis": …}
  * }}}
  *
  * Atomic types are SQL strings as `DataType.asSQLString` prints them (`INT`, `DECIMAL(10, 2)`,
  * `VARCHAR(12)`, `STRING`, `BYTES`, `TIMESTAMP(6)`, `TIMESTAMP(3) WITH LOCAL TIME ZONE`,
  * optionally followed by `NOT NULL`). Field ids identify a column across schema versions:
  * data files written under an older schema are read by field id.
  */
final case class TableSchema(
    id: Long,
    fields: Seq[DataField],
    highestFieldId: Int,
    partitionKeys: Seq[String],
    primaryKeys: Seq[String],
    options: scala.collection.immutable.Map[String, String],
    version: Int) {

  def fieldNames: Seq[String] = fields.map(_.name)

  def field(name: String): DataField =
    fields.find(_.name == name).getOrElse(throw new NoSuchElementException(s"no field '$name' in schema $id"))

  def partitionFields: Seq[DataField] = partitionKeys.map(field)

  /** The atomic type of a column, None for a nested or unknown one. */
  def keyTypeOf(name: String): Option[KeyType] =
    fields.find(_.name == name).map(_.dataType).collect { case DataType.Atomic(t, _) => t }

  /** The primary key minus the partition keys: the key of the data files and hash indexes. */
  def trimmedPrimaryKeys: Seq[String] = primaryKeys.filterNot(partitionKeys.contains)

  /** `bucket-key` when set, else the trimmed primary key (`TableSchema.bucketKeys`). */
  def bucketKeys: Seq[String] =
    options.get("bucket-key").filter(_.nonEmpty).map(_.split(",").toSeq.map(_.trim)).getOrElse(trimmedPrimaryKeys)
}

object TableSchema {
  private val mapper = new ObjectMapper()

  def fromJson(bytes: Array[Byte], source: String): TableSchema = {
    def fail(why: String): Nothing = throw new IndexFormatException(source, 0, s"a table schema JSON document: $why")
    val doc = Json.parse(mapper, bytes, fail)
    val schema =
      try {
        if (!doc.path("id").isIntegralNumber) throw new IllegalArgumentException("field 'id' must be an integer")
        if (!doc.path("fields").isArray) throw new IllegalArgumentException("field 'fields' must be a list")
        val fields = doc.get("fields").elements().asScala.map(DataField.fromJson).toSeq
        def names(key: String): Seq[String] = Option(doc.get(key)).filterNot(_.isNull).fold(Seq.empty[String]) { n =>
          if (!n.isArray) throw new IllegalArgumentException(s"'$key' must be a list")
          n.elements().asScala.map(_.asText).toSeq
        }
        val options = Option(doc.get("options")).filterNot(_.isNull).fold(scala.collection.immutable.Map.empty[String, String]) { n =>
          if (!n.isObject) throw new IllegalArgumentException("options must be an object")
          n.fields().asScala.map(e => e.getKey -> e.getValue.asText).toMap
        }
        TableSchema(
          id = doc.get("id").asLong,
          fields = fields,
          highestFieldId = Option(doc.get("highestFieldId")).map(_.asInt).getOrElse((fields.map(_.id) :+ -1).max),
          partitionKeys = names("partitionKeys"),
          primaryKeys = names("primaryKeys"),
          options = options,
          version = Option(doc.get("version")).map(_.asInt).getOrElse(1)
        )
      } catch { case NonFatal(e) if !e.isInstanceOf[IndexFormatException] => fail(e.getMessage) }
    val names = schema.fieldNames
    for (key <- schema.partitionKeys ++ schema.primaryKeys if !names.contains(key))
      throw new IndexFormatException(source, 0, s"key column '$key' among the fields ${names.mkString("[", ", ", "]")}")
    schema
  }
}

/** The schemas of the table at `tablePath`, read once each. */
final class SchemaManager(tablePath: Path) {
  val directory: Path = tablePath.resolve("schema")
  private val cache = scala.collection.concurrent.TrieMap.empty[Long, TableSchema]

  def schema(schemaId: Long): TableSchema = cache.getOrElseUpdate(schemaId, {
    val file = directory.resolve(s"schema-$schemaId")
    val bytes =
      try Files.readAllBytes(file)
      catch { case _: NoSuchFileException => throw new IndexFormatException(file.toString, 0, s"schema $schemaId to exist") }
    val schema = TableSchema.fromJson(bytes, file.toString)
    if (schema.id != schemaId) throw new IndexFormatException(file.toString, 0, s"schema id $schemaId, the file says ${schema.id}")
    schema
  })

  /** The schema with the highest id, or None when there is none. */
  def latest: Option[TableSchema] =
    if (!Files.isDirectory(directory)) None
    else {
      val stream = Files.list(directory)
      val ids =
        try stream.iterator.asScala.map(_.getFileName.toString).collect { case SchemaManager.FileName(id) => id.toLong }.toSeq
        finally stream.close()
      ids.maxOption.map(schema)
    }
}

object SchemaManager {
  private val FileName = "schema-(\\d+)".r
}
