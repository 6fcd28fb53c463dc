package io.indexbridge.bench

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import io.indexbridge.zap.{Analysis, Document, FieldMapping, SegmentReader, SegmentWriter}

import java.nio.file.{Files, Paths}
import java.time.OffsetDateTime
import scala.jdk.CollectionConverters._

/** A raw-document corpus in the JSON form of python/indexbridge/zap/corpus.py (mappings,
  * `all_field`, docs of `[field, value]` pairs in document order), as Scala values for
  * [[Analysis.analyzeDocument]]: strings, doubles, booleans, `Instant`s for datetime fields
  * (RFC 3339 in JSON), `Seq`s for arrays. */
final case class ZapCorpus(mappings: Seq[FieldMapping], allField: Boolean, docs: IndexedSeq[(String, Seq[(String, Any)])]) {
  def documents(): IndexedSeq[Document] = docs.map { case (id, values) => Analysis.analyzeDocument(id, values, mappings, allField) }
}

object ZapCorpus {
  def read(path: String): ZapCorpus = {
    val root = new ObjectMapper().readTree(Files.readAllBytes(Paths.get(path)))
    val mappings = root.get("mappings").asScala.map { m =>
      FieldMapping(m.get("name").asText, m.get("type").asText, m.get("analyzer").asText, m.get("index").asBoolean,
        m.get("store").asBoolean, Some(m.get("term_vectors").asBoolean), m.get("doc_values").asBoolean, m.get("include_in_all").asBoolean)
    }.toSeq
    val types = mappings.map(m => m.name -> m.fieldType).toMap
    def value(fieldType: String, v: JsonNode): Any =
      if (v.isArray) v.asScala.map(value(fieldType, _)).toSeq
      else if (v.isBoolean) v.asBoolean
      else if (v.isNumber) v.asDouble
      else if (fieldType == "datetime") OffsetDateTime.parse(v.asText).toInstant
      else v.asText
    val docs = root.get("docs").asScala.map { d =>
      d.get("id").asText -> d.get("fields").asScala.map { f =>
        val name = f.get(0).asText
        name -> value(types.getOrElse(name, "text"), f.get(1))
      }.toSeq
    }.toIndexedSeq
    ZapCorpus(mappings, root.get("all_field").asBoolean, docs)
  }
}

/** The Scala half of `indexbridge bench zap`: best-of-`rounds` seconds (after three untimed
  * warm-up builds, and three untimed passes of the lookups and of the iteration, for the JIT)
  * for analysing + building a segment from the raw corpus, building from the analysed
  * documents, looking up every term of every field, and iterating every postings list with its
  * locations (as zapgo `bench`). */
object ZapBench {
  private def best(rounds: Int)(body: => Unit): Double =
    (1 to rounds).map { _ =>
      val t0 = System.nanoTime(); body; (System.nanoTime() - t0) / 1e9
    }.min

  def run(corpusPath: String, rounds: Int): String = {
    val corpus = ZapCorpus.read(corpusPath)
    for (_ <- 1 to 3) SegmentWriter.build(corpus.documents()) // JIT warm-up, untimed
    val analyzeBuild = best(rounds)(SegmentWriter.build(corpus.documents())) // before `docs` takes heap
    val docs = corpus.documents()
    val build = best(rounds)(SegmentWriter.build(docs))
    val seg = SegmentReader(SegmentWriter.build(docs))
    val terms = (for (f <- seg.fields; d = seg.dictionary(f.id); (t, _) <- d.terms()) yield (d, t)).toIndexedSeq
    def lookups(): Unit = terms.foreach { case (d, t) => require(d.value(t).isDefined) }
    var postings = 0L
    def iteration(): Unit = {
      postings = 0L
      terms.foreach { case (d, t) =>
        val pl = d.postings(t).get
        var i = 0
        while (i < pl.size) { postings += pl.locations(i).size + 1; i += 1 }
      }
    }
    for (_ <- 1 to 3) { lookups(); iteration() } // JIT warm-up, untimed: a first pass ran at 2-3x the steady time
    val lookup = best(rounds)(lookups())
    val iterate = best(rounds)(iteration())
    val out = new ObjectMapper().createObjectNode()
    out.put("docs", docs.size).put("terms", terms.size).put("postings", postings)
      .put("analyze_build_s", analyzeBuild).put("build_s", build).put("lookup_s", lookup).put("iterate_s", iterate)
    out.toString
  }
}
