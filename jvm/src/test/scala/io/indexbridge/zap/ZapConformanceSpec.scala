package io.indexbridge.zap

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import io.indexbridge.conformance.Conformance
import org.scalatest.funsuite.AnyFunSuite

/** Every zap vector case through the conformance entry point the CLI calls (build bytes,
  * merge bytes and doc-number mapping, and everything the `segment` description reports). */
class ZapConformanceSpec extends AnyFunSuite {
  private val only = sys.env.getOrElse("ZAP_ONLY", "")

  for (entry <- ZapVectors.cases if only.isEmpty || only.split(',').contains(entry.path("case").asText)) {
    val name = entry.path("case").asText
    test(s"conformance $name") {
      val failures = io.indexbridge.conformance.ZapConformance.checkCase(ZapVectors.dir, entry, None)
      assert(failures.isEmpty, failures.mkString("\n"))
    }
  }

  test("the harness reports differences (a tampered description, another chunk factor)") {
    val entry = ZapVectors.cases.find(_.path("case").asText == "one_doc").get
    val json = new ObjectMapper().readTree(ZapVectors.dir.resolve("one_doc.json").toFile)
    val segment = json.path("segment").asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode]
    segment.path("dictionaries").get(1).path("terms").get(0).path("norm_bits").asInstanceOf[com.fasterxml.jackson.databind.node.ArrayNode].set(0, 1)
    val bytes = ZapVectors.zap("one_doc")
    val failures = scala.collection.mutable.ArrayBuffer.empty[String]
    io.indexbridge.conformance.ZapConformance.checkSegment(SegmentReader(bytes), bytes.length, segment, "", failures += _)
    assert(failures.exists(_.contains("norm_bits")), failures)
    val docs = io.indexbridge.conformance.ZapConformance.documents(json.path("input"))
    assert(!java.util.Arrays.equals(SegmentWriter.build(docs, 512), bytes))
    assert(java.util.Arrays.equals(SegmentWriter.build(docs, 1024), bytes))
    assert(entry.path("zap").asText == "one_doc.zap")
  }

  test("Conformance.run dispatches a zap-shaped manifest (two cases linked from the vectors)") {
    val mapper = new ObjectMapper
    val manifest = mapper.readTree(ZapVectors.dir.resolve("manifest.json").toFile).asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode]
    val picked = ZapVectors.cases.filter(c => Set("one_doc", "merge_basic")(c.path("case").asText))
    val dir = java.nio.file.Files.createTempDirectory("zap-manifest")
    for (c <- picked; name <- c.path("case").asText +: c.path("merge_inputs").asScala.map(_.asText).toSeq; suffix <- Seq(".zap", ".json"))
      java.nio.file.Files.createSymbolicLink(dir.resolve(name + suffix), ZapVectors.dir.resolve(name + suffix).toAbsolutePath)
    val cases = manifest.putArray("cases")
    picked.foreach(c => cases.add(c))
    mapper.writeValue(dir.resolve("manifest.json").toFile, manifest)
    val json = mapper.readTree(Conformance.run(dir.toString, "zap", ""))
    assert(json.size == 2)
    assert((0 until json.size).forall(i => json.get(i).path("failures").size == 0), json.toString.take(2000))
    assert(json.get(0).path("format").asText == "zap")
  }
}
