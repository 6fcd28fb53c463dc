package io.indexbridge.bleve

import java.nio.charset.StandardCharsets.UTF_8
import java.time.{Instant, LocalDate}

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.core.JsonProcessingException
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.JsonNodeType
import io.indexbridge.IndexFormatException
import io.indexbridge.zap.{Analysis, Analyzer, Document, FieldOptions}
import io.indexbridge.zap.Analysis.FieldValue

/** bleve v1.0.14's index mapping: its JSON, and documents mapped by it into zap's writer input
  * (the twin of Python's `indexbridge.bleve.mapping`, which draws the JSON).
  *
  * {{{
  * {"types": {name: document mapping}, "default_mapping": document mapping,
  *  "type_field": "_type", "default_type": "_default", "default_analyzer": "standard",
  *  "default_datetime_parser": "dateTimeOptional", "default_field": "_all",
  *  "store_dynamic": true, "index_dynamic": true, "docvalues_dynamic": true, "analysis": {}}
  * document mapping {"enabled", "dynamic", "properties", "fields", "default_analyzer", "struct_tag_key"}
  * field mapping    {"name", "type", "analyzer", "store", "index", "include_term_vectors",
  *                   "include_in_all", "date_format", "docvalues"}
  * }}}
  *
  * Parsing follows bleve's `UnmarshalJSON` (omitted document-mapping switches are true, omitted
  * field-mapping options false, unknown keys ignored); [[IndexMapping.toJson]] writes Go's
  * `json.Marshal` bytes. [[IndexMapping.mapDocument]] is bleve's `MapDocument` over a JSON-like
  * value: `collection.Map[String, Any]` objects (in their iteration order), `Seq` arrays,
  * strings, numbers, booleans, null, and `Instant`/`java.sql.Timestamp`/`LocalDate` as Go's
  * `time.Time`. Unsupported features (custom analysis, other analyzers or datetime parsers,
  * geopoints) are an [[IndexFormatException]] naming them.
  */
final case class FieldMapping(
    name: String = "",
    fieldType: String = "",
    analyzer: String = "",
    store: Boolean = false,
    index: Boolean = false,
    includeTermVectors: Boolean = false,
    includeInAll: Boolean = false,
    dateFormat: String = "",
    docValues: Boolean = false
) {
  def options: FieldOptions = FieldOptions(index, store, includeTermVectors, docValues)

  def toJson: String = {
    val parts = mutable.ArrayBuffer.empty[String]
    if (name.nonEmpty) parts += "\"name\":" + GoJson.string(name)
    if (fieldType.nonEmpty) parts += "\"type\":" + GoJson.string(fieldType)
    if (analyzer.nonEmpty) parts += "\"analyzer\":" + GoJson.string(analyzer)
    if (store) parts += "\"store\":true"
    if (index) parts += "\"index\":true"
    if (includeTermVectors) parts += "\"include_term_vectors\":true"
    if (includeInAll) parts += "\"include_in_all\":true"
    if (dateFormat.nonEmpty) parts += "\"date_format\":" + GoJson.string(dateFormat)
    if (docValues) parts += "\"docvalues\":true"
    parts.mkString("{", ",", "}")
  }
}

final case class DocumentMapping(
    enabled: Boolean = true,
    dynamic: Boolean = true,
    properties: Option[Map[String, DocumentMapping]] = None,
    fields: Option[IndexedSeq[FieldMapping]] = None,
    defaultAnalyzer: String = "",
    structTagKey: String = ""
) {
  private def props: Map[String, DocumentMapping] = properties.getOrElse(Map.empty)
  def fieldList: IndexedSeq[FieldMapping] = fields.getOrElse(IndexedSeq.empty)

  def toJson: String = {
    val parts = mutable.ArrayBuffer(s"\"enabled\":$enabled", s"\"dynamic\":$dynamic")
    if (props.nonEmpty)
      parts += props.keys.toSeq.sortWith((a, b) => java.util.Arrays.compareUnsigned(a.getBytes(UTF_8), b.getBytes(UTF_8)) < 0)
        .map(k => GoJson.string(k) + ":" + props(k).toJson).mkString("\"properties\":{", ",", "}")
    if (fieldList.nonEmpty) parts += fieldList.map(_.toJson).mkString("\"fields\":[", ",", "]")
    if (defaultAnalyzer.nonEmpty) parts += "\"default_analyzer\":" + GoJson.string(defaultAnalyzer)
    if (structTagKey.nonEmpty) parts += "\"struct_tag_key\":" + GoJson.string(structTagKey)
    parts.mkString("{", ",", "}")
  }

  def documentMappingForPath(path: String): Option[DocumentMapping] = {
    var current = this
    for (element <- IndexMapping.decodePath(path)) {
      current.props.get(element) match {
        case Some(next) => current = next
        case None => return None
      }
    }
    Some(current)
  }

  def closestDocMapping(path: String): DocumentMapping = {
    var current = this
    val it = IndexMapping.decodePath(path).iterator
    var going = true
    while (going && it.hasNext) current.props.get(it.next()) match {
      case Some(next) => current = next
      case None => going = false
    }
    current
  }

  def defaultAnalyzerName(path: Seq[String]): String = {
    var current = this
    var rv = defaultAnalyzer
    val it = path.iterator
    var going = true
    while (going && it.hasNext) current.props.get(it.next()) match {
      case Some(next) =>
        current = next
        if (next.defaultAnalyzer.nonEmpty) rv = next.defaultAnalyzer
      case None => going = false
    }
    rv
  }

  def fieldDescribedByPath(path: String): Option[FieldMapping] = {
    val elements = IndexMapping.decodePath(path)
    if (elements.length > 1 && props.contains(elements(0))) return props(elements(0)).fieldDescribedByPath(elements.tail.mkString("."))
    props.get(path).flatMap(_.fieldList.find(f => f.name.isEmpty || f.name == path)).orElse {
      props.keys.toSeq.sorted.filter(_ != path).iterator.flatMap(k => props(k).fieldList.find(_.name == path)).nextOption()
    }
  }

  /** Every document mapping at or under this one, with its path. */
  def walk(prefix: String = ""): Iterator[(String, DocumentMapping)] =
    Iterator((prefix, this)) ++ props.iterator.flatMap { case (k, v) => v.walk(if (prefix.isEmpty) k else s"$prefix.$k") }

  private val lookups = new java.util.concurrent.ConcurrentHashMap[String, (Option[DocumentMapping], Boolean)]

  /** (`documentMappingForPath`, `closestDocMapping(path).Dynamic`), memoised. */
  def lookup(path: String): (Option[DocumentMapping], Boolean) = {
    val found = lookups.get(path)
    if (found != null) found
    else {
      val v = (documentMappingForPath(path), closestDocMapping(path).dynamic)
      lookups.put(path, v)
      v
    }
  }
}

final case class IndexMapping(
    defaultMapping: DocumentMapping = DocumentMapping(),
    types: Option[Map[String, DocumentMapping]] = None,
    typeField: String = "_type",
    defaultType: String = "_default",
    defaultAnalyzer: String = "standard",
    defaultDatetimeParser: String = IndexMapping.DatetimeParser,
    defaultField: String = "_all",
    storeDynamic: Boolean = true,
    indexDynamic: Boolean = true,
    docValuesDynamic: Boolean = true,
    analysis: Map[String, Boolean] = Map.empty, // analysis component kind -> has entries
    source: String = "<mapping>"
) {
  import IndexMapping._

  private def typeMap: Map[String, DocumentMapping] = types.getOrElse(Map.empty)

  /** Go's `json.Marshal` of the mapping: the bytes bleve stores under `_mapping`. */
  def toJson: String = {
    val parts = mutable.ArrayBuffer.empty[String]
    if (typeMap.nonEmpty)
      parts += typeMap.keys.toSeq.sortWith((a, b) => java.util.Arrays.compareUnsigned(a.getBytes(UTF_8), b.getBytes(UTF_8)) < 0)
        .map(k => GoJson.string(k) + ":" + typeMap(k).toJson).mkString("\"types\":{", ",", "}")
    parts += "\"default_mapping\":" + defaultMapping.toJson
    parts += "\"type_field\":" + GoJson.string(typeField)
    parts += "\"default_type\":" + GoJson.string(defaultType)
    parts += "\"default_analyzer\":" + GoJson.string(defaultAnalyzer)
    parts += "\"default_datetime_parser\":" + GoJson.string(defaultDatetimeParser)
    parts += "\"default_field\":" + GoJson.string(defaultField)
    parts += s"\"store_dynamic\":$storeDynamic"
    parts += s"\"index_dynamic\":$indexDynamic"
    parts += s"\"docvalues_dynamic\":$docValuesDynamic"
    if (analysis.values.exists(identity)) throw new IllegalArgumentException("custom analysis components are not supported")
    parts += "\"analysis\":{}"
    parts.mkString("{", ",", "}")
  }

  def documentMappings: Seq[(String, DocumentMapping)] =
    Seq("default_mapping" -> defaultMapping) ++ typeMap.toSeq.sortBy(_._1).map { case (k, v) => s"types.$k" -> v }

  /** bleve's `Validate`: known field types. */
  def validate(): IndexMapping = {
    for ((where, root) <- documentMappings; (path, dm) <- root.walk(); (fm, i) <- dm.fieldList.zipWithIndex)
      if (!BleveFieldTypes.contains(fm.fieldType))
        throw error(source, s"${at(where, path)}.fields[$i]: unknown field type: '${fm.fieldType}'")
    this
  }

  /** An [[IndexFormatException]] naming the first feature indexbridge does not reproduce. */
  def checkSupported(): IndexMapping = {
    def unsupported(what: String) = error(source, s"a mapping indexbridge supports: $what is not supported")
    val analyzers = Analyzer.Names.mkString(", ")
    val kinds = AnalysisKinds.filter(k => analysis.getOrElse(k, false))
    if (kinds.nonEmpty) throw unsupported(s"custom analysis (${kinds.map("analysis." + _).mkString(", ")})")
    if (!Analyzer.Names.contains(defaultAnalyzer)) throw unsupported(s"default_analyzer '$defaultAnalyzer' (analyzers: $analyzers)")
    if (defaultDatetimeParser != DatetimeParser) throw unsupported(s"default_datetime_parser '$defaultDatetimeParser' (only $DatetimeParser)")
    for ((where, root) <- documentMappings; (path, dm) <- root.walk()) {
      val here = at(where, path)
      if (dm.defaultAnalyzer.nonEmpty && !Analyzer.Names.contains(dm.defaultAnalyzer))
        throw unsupported(s"$here.default_analyzer '${dm.defaultAnalyzer}' (analyzers: $analyzers)")
      for ((fm, i) <- dm.fieldList.zipWithIndex) {
        if (fm.fieldType == "geopoint") throw unsupported(s"$here.fields[$i]: field type 'geopoint'")
        if (fm.analyzer.nonEmpty && !Analyzer.Names.contains(fm.analyzer))
          throw unsupported(s"$here.fields[$i]: analyzer '${fm.analyzer}' (analyzers: $analyzers)")
        if (fm.dateFormat.nonEmpty && fm.dateFormat != DatetimeParser)
          throw unsupported(s"$here.fields[$i]: date_format '${fm.dateFormat}' (only $DatetimeParser)")
      }
    }
    this
  }

  /** bleve's `AnalyzerNameForPath` (type mappings in name order where Go's map order is random). */
  def analyzerForPath(path: String): String = {
    val sortedTypes = typeMap.toSeq.sortBy(_._1).map(_._2)
    sortedTypes.iterator.flatMap(_.fieldDescribedByPath(path)).map(_.analyzer).find(_.nonEmpty).getOrElse {
      defaultMapping.documentMappingForPath(path).flatMap(_.fieldList.headOption).map(_.analyzer).filter(_.nonEmpty).getOrElse {
        val decoded = decodePath(path).toSeq
        sortedTypes.iterator.map(_.defaultAnalyzerName(decoded)).find(_.nonEmpty).getOrElse(defaultAnalyzer)
      }
    }
  }

  /** `determineType` + `mappingForType`. */
  def mappingFor(data: Any): DocumentMapping = {
    var current: Any = data
    val it = decodePath(typeField).iterator
    while (current != null && it.hasNext) {
      val part = it.next()
      current = current match {
        case m: collection.Map[_, _] => m.asInstanceOf[collection.Map[String, Any]].getOrElse(part, null)
        case _ => null
      }
    }
    val docType = current match {
      case s: String => s
      case _ => defaultType
    }
    typeMap.getOrElse(docType, defaultMapping)
  }

  /** The zap writer input bleve builds for `data` indexed as `docId` (`MapDocument`, then
    * scorch's `_id` field and analysis). */
  def mapDocument(docId: String, data: Any): Document = {
    val dm = mappingFor(data)
    val walk = new Walk(this, dm)
    val withAll = if (dm.enabled) {
      walk.walk(data, Vector.empty, Array.emptyLongArray)
      dm.documentMappingForPath("_all").forall(_.enabled)
    } else false
    Analysis.composeDocument(docId, walk.fields.toSeq, if (withAll) Some(walk.excluded) else None)
  }
}

object IndexMapping {
  val DatetimeParser = "dateTimeOptional"
  val FieldTypes: Seq[String] = Seq("text", "number", "datetime", "boolean")
  private val BleveFieldTypes = FieldTypes :+ "geopoint"
  val AnalysisKinds: Seq[String] = Seq("char_filters", "tokenizers", "token_maps", "token_filters", "analyzers", "date_time_parsers")
  private val mapper = new ObjectMapper()

  def decodePath(path: String): Array[String] = path.split("\\.", -1)

  private def error(source: String, expected: String) = new IndexFormatException(source, 0L, expected)

  private def at(where: String, path: String): String = if (path.isEmpty) where else s"$where.properties.$path"

  /** bleve's mapping JSON; null, `null` or `{}` is bleve's default mapping. Checked: what bleve
    * would not accept, and what indexbridge does not reproduce. */
  def parse(json: String, source: String = "<mapping>"): IndexMapping = decode(json, source).validate().checkSupported()

  /** The mapping as bleve's `json.Unmarshal` reads it, without bleve's validation. */
  def decode(json: String, source: String = "<mapping>"): IndexMapping = {
    if (json == null) return IndexMapping(source = source)
    val node = try mapper.readTree(json) catch {
      case e: JsonProcessingException =>
        val at = Option(e.getLocation).map(_.getCharOffset).filter(_ >= 0).getOrElse(0L)
        throw new IndexFormatException(source, at, s"a bleve mapping in JSON: ${e.getOriginalMessage}")
    }
    fromNode(node, source)
  }

  def fromNode(node: JsonNode, source: String): IndexMapping = {
    if (node == null || node.isNull || node.isMissingNode) return IndexMapping(source = source)
    if (!node.isObject) throw error(source, s"a bleve index mapping: a JSON object, found ${kind(node)}")
    var im = IndexMapping(source = source)
    for (e <- node.fields().asScala) {
      val (key, v) = (e.getKey, e.getValue)
      key match {
        case "type_field" => str(v, source, "index mapping", key).foreach(s => im = im.copy(typeField = s))
        case "default_type" => str(v, source, "index mapping", key).foreach(s => im = im.copy(defaultType = s))
        case "default_analyzer" => str(v, source, "index mapping", key).foreach(s => im = im.copy(defaultAnalyzer = s))
        case "default_datetime_parser" => str(v, source, "index mapping", key).foreach(s => im = im.copy(defaultDatetimeParser = s))
        case "default_field" => str(v, source, "index mapping", key).foreach(s => im = im.copy(defaultField = s))
        case "store_dynamic" => bool(v, source, "index mapping", key).foreach(b => im = im.copy(storeDynamic = b))
        case "index_dynamic" => bool(v, source, "index mapping", key).foreach(b => im = im.copy(indexDynamic = b))
        case "docvalues_dynamic" => bool(v, source, "index mapping", key).foreach(b => im = im.copy(docValuesDynamic = b))
        case "default_mapping" => im = im.copy(defaultMapping = documentMapping(v, source, "default_mapping"))
        case "types" =>
          if (v.isNull) im = im.copy(types = None)
          else {
            expectObject(v, source, "index mapping", key)
            im = im.copy(types = Some(v.fields().asScala.map(t => GoJson.sanitize(t.getKey) -> documentMapping(t.getValue, source, s"types.${t.getKey}")).toMap))
          }
        case "analysis" =>
          if (v.isNull) throw error(source, "index mapping: analysis must be a JSON object, found null") // bleve panics on it
          expectObject(v, source, "index mapping", key)
          im = im.copy(analysis = AnalysisKinds.map(k => k -> Option(v.get(k)).exists(n => n.isObject && n.size > 0)).toMap)
        case _ =>
      }
    }
    im
  }

  private def kind(n: JsonNode): String = n.getNodeType match {
    case JsonNodeType.BOOLEAN => "a boolean"
    case JsonNodeType.NUMBER => "a number"
    case JsonNodeType.STRING => "a string"
    case JsonNodeType.ARRAY => "an array"
    case JsonNodeType.OBJECT => "an object"
    case _ => "null"
  }

  private def expectObject(v: JsonNode, source: String, where: String, name: String): Unit =
    if (!v.isObject) throw error(source, s"$where: $name must be a JSON object, found ${kind(v)}")

  private def str(v: JsonNode, source: String, where: String, name: String): Option[String] =
    if (v.isNull) None
    else if (v.isTextual) Some(GoJson.sanitize(v.textValue))
    else throw error(source, s"$where: $name must be a JSON string, found ${kind(v)}")

  private def bool(v: JsonNode, source: String, where: String, name: String): Option[Boolean] =
    if (v.isNull) None
    else if (v.isBoolean) Some(v.booleanValue)
    else throw error(source, s"$where: $name must be a JSON boolean, found ${if (v.isBoolean) v.toString else kind(v)}")

  private def documentMapping(v: JsonNode, source: String, where: String): DocumentMapping = {
    if (v == null || v.isNull) throw error(source, s"$where: a document mapping object, found null")
    if (!v.isObject) throw error(source, s"$where: a document mapping must be a JSON object, found ${kind(v)}")
    var dm = DocumentMapping()
    for (e <- v.fields().asScala) {
      val (key, n) = (e.getKey, e.getValue)
      key match {
        case "enabled" => bool(n, source, where, key).foreach(b => dm = dm.copy(enabled = b))
        case "dynamic" => bool(n, source, where, key).foreach(b => dm = dm.copy(dynamic = b))
        case "default_analyzer" => str(n, source, where, key).foreach(s => dm = dm.copy(defaultAnalyzer = s))
        case "struct_tag_key" => str(n, source, where, key).foreach(s => dm = dm.copy(structTagKey = s))
        case "properties" =>
          if (n.isNull) dm = dm.copy(properties = None)
          else {
            expectObject(n, source, where, key)
            dm = dm.copy(properties = Some(n.fields().asScala.map(p => GoJson.sanitize(p.getKey) -> documentMapping(p.getValue, source, s"$where.properties.${p.getKey}")).toMap))
          }
        case "fields" =>
          if (n.isNull) dm = dm.copy(fields = None)
          else if (!n.isArray) throw error(source, s"$where: fields must be a JSON array, found ${kind(n)}")
          else dm = dm.copy(fields = Some(n.elements().asScala.zipWithIndex.map { case (f, i) => fieldMapping(f, source, s"$where.fields[$i]") }.toIndexedSeq))
        case _ =>
      }
    }
    dm
  }

  private def fieldMapping(v: JsonNode, source: String, where: String): FieldMapping = {
    if (v == null || v.isNull) throw error(source, s"$where: a field mapping object, found null")
    if (!v.isObject) throw error(source, s"$where: a field mapping must be a JSON object, found ${kind(v)}")
    var fm = FieldMapping()
    for (e <- v.fields().asScala) {
      val (key, n) = (e.getKey, e.getValue)
      key match {
        case "name" => str(n, source, where, key).foreach(s => fm = fm.copy(name = s))
        case "type" => str(n, source, where, key).foreach(s => fm = fm.copy(fieldType = s))
        case "analyzer" => str(n, source, where, key).foreach(s => fm = fm.copy(analyzer = s))
        case "date_format" => str(n, source, where, key).foreach(s => fm = fm.copy(dateFormat = s))
        case "store" => bool(n, source, where, key).foreach(b => fm = fm.copy(store = b))
        case "index" => bool(n, source, where, key).foreach(b => fm = fm.copy(index = b))
        case "include_term_vectors" => bool(n, source, where, key).foreach(b => fm = fm.copy(includeTermVectors = b))
        case "include_in_all" => bool(n, source, where, key).foreach(b => fm = fm.copy(includeInAll = b))
        case "docvalues" => bool(n, source, where, key).foreach(b => fm = fm.copy(docValues = b))
        case _ =>
      }
    }
    fm
  }

  /** A JSON text as the values [[IndexMapping.mapDocument]] takes (objects keep their key order;
    * numbers become Doubles as Go's decoder makes them, strings lose unpaired surrogates). */
  def jsonValue(node: JsonNode): Any = node.getNodeType match {
    case JsonNodeType.OBJECT =>
      val m = mutable.LinkedHashMap.empty[String, Any]
      node.fields().asScala.foreach(e => m.put(GoJson.sanitize(e.getKey), jsonValue(e.getValue)))
      m
    case JsonNodeType.ARRAY => node.elements().asScala.map(jsonValue).toVector
    case JsonNodeType.STRING => GoJson.sanitize(node.textValue)
    case JsonNodeType.NUMBER => if (node.isBigInteger) node.bigIntegerValue.doubleValue else node.doubleValue
    case JsonNodeType.BOOLEAN => node.booleanValue
    case _ => null
  }

  def parseJsonValue(json: String): Any = jsonValue(mapper.readTree(json))
}

/** One `walkContext`: the field instances and the names excluded from `_all`. */
private final class Walk(im: IndexMapping, dm: DocumentMapping) {
  val fields = mutable.ArrayBuffer.empty[FieldValue]
  val excluded: mutable.Set[String] = mutable.HashSet("_id")

  def walk(data: Any, path: Vector[String], indexes: Array[Long]): Unit = data match {
    case m: collection.Map[_, _] =>
      m.foreach { case (k, v) => process(v, path :+ GoJson.sanitize(k.toString), indexes) }
    case s: collection.Seq[_] =>
      var i = 0
      s.foreach { v => process(v, path, indexes :+ i.toLong); i += 1 }
    case a: Array[_] if !a.isInstanceOf[Array[Byte]] => walk(a.toSeq, path, indexes)
    case other => process(other, path, indexes)
  }

  private def process(value: Any, path: Vector[String], indexes: Array[Long]): Unit = {
    if (value == null) return
    val pathString = path.mkString(".")
    val (sub, dynamic) = dm.lookup(pathString)
    if (sub.exists(!_.enabled)) return
    value match {
      case s: String =>
        sub match {
          case Some(m) => m.fieldList.foreach(fm => string(fm, s, pathString, path, indexes))
          case None if dynamic =>
            DateTimes.parse(s) match {
              case DateTimes.NotADate => string(dynamicMapping("text"), s, pathString, path, indexes)
              case parsed => time(dynamicMapping("datetime"), parsed, pathString, path, indexes)
            }
          case None =>
        }
      case b: Boolean =>
        sub match {
          case Some(m) => m.fieldList.filter(_.fieldType == "boolean").foreach(fm => add(fm, "boolean", b, pathString, path, indexes))
          case None => if (dynamic) add(dynamicMapping("boolean"), "boolean", b, pathString, path, indexes)
        }
      case n: java.lang.Number =>
        val d = n match {
          case b: java.math.BigInteger => b.doubleValue
          case b: java.math.BigDecimal => b.doubleValue
          case other => other.doubleValue
        }
        sub match {
          case Some(m) => m.fieldList.filter(_.fieldType == "number").foreach(fm => add(fm, "number", d, pathString, path, indexes))
          case None => if (dynamic) add(dynamicMapping("number"), "number", d, pathString, path, indexes)
        }
      case t @ (_: Instant | _: java.sql.Timestamp | _: LocalDate | _: java.sql.Date | _: java.time.LocalDateTime) =>
        val nanos = DateTimes.nanos(t)
        sub match {
          case Some(m) => m.fieldList.foreach(fm => time(fm, nanos, pathString, path, indexes))
          case None => if (dynamic) time(dynamicMapping("datetime"), nanos, pathString, path, indexes)
        }
      case _: collection.Map[_, _] | _: collection.Seq[_] => walk(value, path, indexes)
      case a: Array[_] if !a.isInstanceOf[Array[Byte]] => walk(a.toSeq, path, indexes)
      case other =>
        throw new IllegalArgumentException(s"a JSON value (object, array, string, number, boolean, null) or a time, found ${other.getClass.getName}")
    }
  }

  private def dynamicMapping(kind: String): FieldMapping =
    FieldMapping(fieldType = kind, store = im.storeDynamic, index = im.indexDynamic, includeTermVectors = kind == "text",
      includeInAll = true, docValues = im.docValuesDynamic)

  private def fieldName(pathString: String, path: Vector[String], fm: FieldMapping): String =
    if (fm.name.isEmpty) pathString
    else (if (path.length > 1) path.init.mkString(".") + "." else "") + fm.name

  private def string(fm: FieldMapping, s: String, pathString: String, path: Vector[String], indexes: Array[Long]): Unit =
    if (fm.fieldType == "text") add(fm, "text", s, pathString, path, indexes)
    else if (fm.fieldType == "datetime") DateTimes.parse(s) match {
      case DateTimes.NotADate =>
      case parsed => time(fm, parsed, pathString, path, indexes)
    }

  private def time(fm: FieldMapping, parsed: DateTimes.Parsed, pathString: String, path: Vector[String], indexes: Array[Long]): Unit =
    if (fm.fieldType == "datetime") {
      val name = fieldName(pathString, path, fm)
      parsed match {
        case DateTimes.Nanos(n) => fields += FieldValue(name, "datetime", n, indexes, "", fm.options)
        case _ => // outside int64 nanoseconds: bleve drops the field
      }
      if (!fm.includeInAll) excluded += name
    }

  private def add(fm: FieldMapping, kind: String, value: Any, pathString: String, path: Vector[String], indexes: Array[Long]): Unit = {
    val name = fieldName(pathString, path, fm)
    val analyzer = if (kind == "text") {
      val a = if (fm.analyzer.nonEmpty) fm.analyzer else Option(dm.defaultAnalyzerName(path)).filter(_.nonEmpty).getOrElse(im.defaultAnalyzer)
      if (!Analyzer.Names.contains(a)) throw new IllegalArgumentException(s"field '$name': analyzer '$a' is not supported")
      a
    } else ""
    val v = if (kind == "text") GoJson.sanitize(value.asInstanceOf[String]) else value
    fields += FieldValue(name, kind, v, indexes, analyzer, fm.options)
    if (!fm.includeInAll) excluded += name
  }
}

/** Go's `encoding/json`, as far as mappings and documents need it. */
object GoJson {
  /** A string as Go's `json.Unmarshal` leaves it: unpaired surrogates become U+FFFD. */
  def sanitize(s: String): String = {
    var i = 0
    val n = s.length
    while (i < n) {
      val c = s.charAt(i)
      if (Character.isSurrogate(c)) {
        val paired = Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))
        if (!paired) return fix(s)
        i += 2
      } else i += 1
    }
    s
  }

  private def fix(s: String): String = {
    val sb = new java.lang.StringBuilder(s.length)
    var i = 0
    while (i < s.length) {
      val c = s.charAt(i)
      if (Character.isHighSurrogate(c) && i + 1 < s.length && Character.isLowSurrogate(s.charAt(i + 1))) {
        sb.append(c).append(s.charAt(i + 1)); i += 2
      } else {
        sb.append(if (Character.isSurrogate(c)) '\ufffd' else c); i += 1
      }
    }
    sb.toString
  }

  /** `json.Marshal` of a Go string (HTML-safe escapes, `\u00XX` for other controls). */
  def string(value: String): String = {
    val s = sanitize(value)
    val sb = new java.lang.StringBuilder(s.length + 2).append('"')
    s.foreach {
      case '"' => sb.append("\\\"")
      case '\\' => sb.append("\\\\")
      case '\n' => sb.append("\\n")
      case '\r' => sb.append("\\r")
      case '\t' => sb.append("\\t")
      case c if c < 0x20 || c == '<' || c == '>' || c == '&' || c == '\u2028' || c == '\u2029' => sb.append(f"\\u${c.toInt}%04x")
      case c => sb.append(c)
    }
    sb.append('"').toString
  }

  /** `json.Marshal` of a float64: the shortest decimal that reads back as `value`, in 'f' form
    * unless the magnitude is below 1e-6 or from 1e21 on ('e' form, exponent without leading zeros). */
  def float(value: Double): String = {
    if (value.isNaN || value.isInfinite) throw new IllegalArgumentException(s"json: unsupported value: $value")
    if (value == 0.0) return if (1.0 / value < 0) "-0" else "0"
    val exact = new java.math.BigDecimal(value)
    var p = 1
    var d = exact.round(new java.math.MathContext(p, java.math.RoundingMode.HALF_EVEN))
    while (d.doubleValue != value) { p += 1; d = exact.round(new java.math.MathContext(p, java.math.RoundingMode.HALF_EVEN)) }
    d = d.stripTrailingZeros()
    val abs = math.abs(value)
    if (abs < 1e-6 || abs >= 1e21) {
      val digits = d.unscaledValue.abs.toString
      val exp = digits.length - 1 - d.scale
      val mantissa = digits.substring(0, 1) + (if (digits.length > 1) "." + digits.substring(1) else "")
      val expText = if (exp < 0) s"-${-exp}" else f"+$exp%02d"
      (if (value < 0) "-" else "") + mantissa + "e" + expText
    } else d.toPlainString
  }
}

/** Go's `time.Parse` over bleve's `dateTimeOptional` layouts (RFC 3339 with or without fraction
  * and zone, `T` or spaces, date only), as Unix nanoseconds. */
object DateTimes {
  sealed trait Parsed
  case object NotADate extends Parsed
  case object OutOfRange extends Parsed // parsed, but not representable as int64 nanoseconds
  final case class Nanos(value: Long) extends Parsed

  private val DaysIn = Array(31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)

  private def daysIn(month: Int, year: Int): Int =
    if (month == 2 && year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) 29 else DaysIn(month - 1)

  def daysFromCivil(y0: Long, m: Int, d: Int): Long = {
    val y = if (m <= 2) y0 - 1 else y0
    val era = (if (y >= 0) y else y - 399) / 400
    val yoe = y - era * 400
    val doy = (153 * (m + (if (m > 2) -3 else 9)) + 2) / 5 + d - 1
    val doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    era * 146097 + doe - 719468
  }

  def parse(text: String): Parsed = {
    val b = text.getBytes(UTF_8)
    for ((sep, zone) <- Seq(('T', true), ('T', false), (' ', false), ('\u0000', false))) {
      val r = layout(b, sep, zone)
      if (r != NotADate) return r
    }
    NotADate
  }

  private def digit(b: Array[Byte], i: Int): Boolean = i < b.length && b(i) >= '0' && b(i) <= '9'

  private def layout(b: Array[Byte], sep: Char, zone: Boolean): Parsed = {
    var i = 0
    def num(fixed: Boolean): Int = {
      if (!digit(b, i)) return -1
      if (!digit(b, i + 1)) { if (fixed) return -1; i += 1; return b(i - 1) - '0' }
      i += 2
      (b(i - 2) - '0') * 10 + (b(i - 1) - '0')
    }
    def lit(c: Char): Boolean = if (i < b.length && b(i) == c) { i += 1; true } else false
    if (!(0 until 4).forall(digit(b, _))) return NotADate
    val year = (0 until 4).foldLeft(0)((acc, k) => acc * 10 + (b(k) - '0'))
    i = 4
    if (!lit('-')) return NotADate
    val month = num(true)
    if (month < 1 || month > 12 || !lit('-')) return NotADate
    val day = num(true)
    if (day < 0) return NotADate
    var hour, minute, second = 0
    var nsec = 0L
    var offset = 0L
    if (sep != '\u0000') {
      if (sep == ' ') {
        if (i < b.length && b(i) != ' ') return NotADate
        while (i < b.length && b(i) == ' ') i += 1
      } else if (!lit(sep)) return NotADate
      hour = num(false)
      if (hour < 0 || hour >= 24 || !lit(':')) return NotADate
      minute = num(true)
      if (minute < 0 || minute >= 60 || !lit(':')) return NotADate
      second = num(true)
      if (second < 0 || second >= 60) return NotADate
      if (i + 1 < b.length && (b(i) == '.' || b(i) == ',') && digit(b, i + 1)) {
        var n = i + 1
        while (n < b.length && digit(b, n)) n += 1
        val digits = new String(b, i + 1, math.min(n, i + 10) - (i + 1), UTF_8)
        nsec = digits.toLong * math.pow(10, 9 - digits.length).toLong
        i = n
      }
      if (zone) {
        if (lit('Z')) ()
        else {
          if (b.length - i < 6 || b(i + 3) != ':' || !digit(b, i + 1) || !digit(b, i + 2) || !digit(b, i + 4) || !digit(b, i + 5)) return NotADate
          val hr = (b(i + 1) - '0') * 10 + (b(i + 2) - '0')
          val mm = (b(i + 4) - '0') * 10 + (b(i + 5) - '0')
          if (hr > 24 || mm > 60 || (b(i) != '+' && b(i) != '-')) return NotADate
          offset = (hr * 60L + mm) * 60L * (if (b(i) == '+') 1 else -1)
          i += 6
        }
      }
    }
    if (i != b.length || day < 1 || day > daysIn(month, year)) return NotADate
    val seconds = daysFromCivil(year.toLong, month, day) * 86400L + hour * 3600L + minute * 60L + second - offset
    val nanos = BigInt(seconds) * 1000000000L + nsec
    if (nanos.isValidLong) Nanos(nanos.toLong) else OutOfRange
  }

  /** A JVM time as Go's `UnixNano` (LocalDate: midnight UTC; LocalDateTime and java.sql types: UTC). */
  def nanos(t: Any): Parsed = {
    val instant = t match {
      case i: Instant => i
      case ts: java.sql.Timestamp => ts.toInstant
      case d: java.sql.Date => d.toLocalDate.atStartOfDay(java.time.ZoneOffset.UTC).toInstant
      case d: LocalDate => d.atStartOfDay(java.time.ZoneOffset.UTC).toInstant
      case d: java.time.LocalDateTime => d.toInstant(java.time.ZoneOffset.UTC)
      case other => throw new IllegalArgumentException(s"not a time: $other")
    }
    val n = BigInt(instant.getEpochSecond) * 1000000000L + instant.getNano
    if (n.isValidLong) Nanos(n.toLong) else OutOfRange
  }
}
