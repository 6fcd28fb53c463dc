package io.indexbridge.bleve

import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import io.indexbridge.zap.SegmentWriter

/** The bleve index API for callers across py4j: paths and short JSON strings in, JSON out
  * (DESIGN rule 2; the tests hold the Scala implementation to bleve through it). */
object BleveBridge {
  private val mapper = new ObjectMapper()

  private def readJson(path: String) = mapper.readTree(Files.readAllBytes(Paths.get(path)))

  /** `docsPath`: a JSON file of `[[id, document], ...]`. Writes the index; the segment file names. */
  def writeIndex(path: String, docsPath: String, mappingJson: String, rowsPerSegment: Int): String = {
    val docs = readJson(docsPath).elements().asScala.map(p => (p.get(0).textValue, IndexMapping.jsonValue(p.get(1))))
    val names = BleveIndex.write(Paths.get(path), docs, IndexMapping.parse(mappingJson), rowsPerSegment)
    names.map(GoJson.string).mkString("[", ",", "]")
  }

  /** One segment of the documents mapped and analysed in order (the bytes bleve's zap writes). */
  def writeSegment(out: String, docsPath: String, mappingJson: String): Unit = {
    val im = IndexMapping.parse(mappingJson)
    val docs = readJson(docsPath).elements().asScala.map(p => im.mapDocument(p.get(0).textValue, IndexMapping.jsonValue(p.get(1)))).toIndexedSeq
    SegmentWriter.write(docs, Paths.get(out))
  }

  /** The mapping as bleve marshals it. */
  def mappingJson(mappingJson: String): String = IndexMapping.parse(mappingJson).toJson

  /** `{"doc_count", "docs": {id: {field: value(s)}}, "order": [ids]}` of the index at `path`. */
  def documentsJson(path: String): String = {
    val index = BleveIndex.open(path)
    val sb = new StringBuilder("{\"doc_count\":").append(index.docCount).append(",\"docs\":{")
    val order = new StringBuilder
    var first = true
    index.documents.foreach { doc =>
      if (!first) { sb.append(','); order.append(',') }
      first = false
      val id = doc("_id").asInstanceOf[String]
      sb.append(GoJson.string(id)).append(':').append(fields(doc))
      order.append(GoJson.string(id))
    }
    sb.append("},\"order\":[").append(order).append("]}").toString
  }

  private def fields(doc: collection.Map[String, Any]): String =
    doc.iterator.filter(_._1 != "_id").map { case (k, v) => GoJson.string(k) + ":" + value(v) }.mkString("{", ",", "}")

  private def value(v: Any): String = v match {
    case s: String => GoJson.string(s)
    case d: Double => if (d.isNaN || d.isInfinite) "null" else java.lang.Double.toString(d)
    case b: Boolean => b.toString
    case vs: Seq[_] => vs.map(value).mkString("[", ",", "]")
    case other => GoJson.string(String.valueOf(other))
  }

  /** Each string of a JSON array parsed by bleve's default datetime parser: nanoseconds as a
    * string, or null (not a date, or outside int64 nanoseconds). */
  def parseDates(valuesPath: String): String =
    readJson(valuesPath).elements().asScala.map(n => DateTimes.parse(n.textValue) match {
      case DateTimes.Nanos(v) => "\"" + v + "\""
      case _ => "null"
    }).mkString("[", ",", "]")

  /** `{"total", "hits"}` of `queryJson` over the index at `path` (size < 0: every hit). */
  def search(path: String, queryJson: String, size: Int): String = BleveQuery.searchJson(path, queryJson, size)

  /** Searches for several queries (a JSON file of an array) at once: a JSON array of results or {"error"}. */
  def searchAll(path: String, queriesPath: String): String = {
    val index = BleveIndex.open(path)
    readJson(queriesPath).elements().asScala.map { q =>
      try {
        val r = BleveQuery.search(index, q.toString, None)
        r.hits.map { case (id, s) => "[" + GoJson.string(id) + "," + java.lang.Double.toString(s) + "]" }
          .mkString(s"""{"total":${r.total},"hits":[""", ",", "]}")
      } catch {
        case e: io.indexbridge.IndexFormatException => "{\"error\":" + GoJson.string(e.getMessage) + "}"
      }
    }.mkString("[", ",", "]")
  }

  /** `indexbridge bench bleve`: each query of a JSON file (an array) searched `rounds` times
    * over the index at `path` (every hit, ids included), after one untimed search of every
    * query for the JIT (the first, cold pass ran at 2-5x the steady time):
    * `[{"seconds": best, "total": n}]`. */
  def timeSearch(path: String, queriesPath: String, rounds: Int): String = {
    val index = BleveIndex.open(path)
    val queries = readJson(queriesPath).elements().asScala.map(q => BleveQuery.parse(q.toString)).toIndexedSeq
    queries.foreach(BleveQuery.search(index.views, index.mapping, _, None))
    queries.map { parsed =>
      var best = Double.MaxValue
      var total = 0L
      for (_ <- 0 until rounds) {
        val t0 = System.nanoTime
        total = BleveQuery.search(index.views, index.mapping, parsed, None).total
        best = math.min(best, (System.nanoTime - t0) / 1e9)
      }
      s"""{"seconds":$best,"total":$total}"""
    }.mkString("[", ",", "]")
  }
}
