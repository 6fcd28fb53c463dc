package io.indexbridge.zap

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.scalatest.funsuite.AnyFunSuite

import scala.jdk.CollectionConverters._

/** The analyzers against tokens bleve v1.0.14 produced (tests/data/zap_analyzer_cases.json, written by
  * integration/zapgo `analyze`; the Python tests read the same table), and a mapped document
  * against a golden vector's writer input.
  */
class AnalysisSpec extends AnyFunSuite {
  private val mapper = new ObjectMapper()
  private def bytesOf(n: JsonNode): Array[Byte] =
    if (n.isObject) java.util.HexFormat.of().parseHex(n.get("hex").asText) else n.asText.getBytes(UTF_8)

  test("every shared case gives bleve's tokens") {
    val cases = mapper.readTree(Files.readAllBytes(Paths.get("tests/data/zap_analyzer_cases.json"))).asScala.toSeq
    assert(cases.size > 100)
    for (c <- cases) {
      val got = Analyzer.analyze(c.get("text").asText, c.get("analyzer").asText).map(t => (t.term.toSeq, t.start, t.end, t.position))
      val expected = c.get("tokens").asScala.map(t => (bytesOf(t.get(0)).toSeq, t.get(1).asInt, t.get(2).asInt, t.get(3).asInt)).toSeq
      assert(got == expected, s"${c.get("analyzer").asText} ${c.get("text")}")
    }
  }

  test("a mapped document builds one_doc's bytes") {
    val doc = Analysis.analyzeDocument("doc1", Seq("body" -> "The quick brown fox jumps over the lazy dog"),
      Seq(FieldMapping("body", docValues = false)), allField = false)
    val expected = Files.readAllBytes(Paths.get("../shared/vectors/zap/one_doc.zap"))
    assert(SegmentWriter.build(IndexedSeq(doc)).sameElements(expected))
  }

  test("numbers are prefix coded at every precision step; unknown analyzers and mismatched values are refused") {
    val doc = Analysis.analyzeDocument("d", Seq("n" -> 3.5, "b" -> true), Seq(FieldMapping("n", "number"), FieldMapping("b", "boolean")))
    val n = doc.fields.head
    assert(n.fieldType == 'n' && n.length == 16 && n.tokens.forall(_.locations.isEmpty))
    assert(n.value.toSeq == Analysis.prefixCodedInt64(Analysis.float64ToInt64(3.5), 0).toSeq)
    assert(doc.composites.head.length == 17)
    assertThrows[IllegalArgumentException](Analyzer.analyze("x", "whitespace"))
    assertThrows[IllegalArgumentException](Analysis.analyzeDocument("d", Seq("n" -> "x"), Seq(FieldMapping("n", "number"))))
  }
}
