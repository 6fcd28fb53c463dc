package io.indexbridge.zap

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

  test("build and merge timings on the largest vectors") {
    val mapper = new ObjectMapper
    for (name <- Seq("large_dict", "full_container_run", "roaring_containers", "many_docs_chunks")) {
      val in = new java.util.zip.GZIPInputStream(java.nio.file.Files.newInputStream(ZapVectors.dir.resolve(s"$name.json.gz")))
      val json = try mapper.readTree(in) finally in.close()
      val docs = io.indexbridge.conformance.ZapConformance.documents(json.path("input"))
      val cf = json.path("chunk_factor").asInt
      val reference = ZapVectors.zap(name)
      var best = Long.MaxValue
      for (_ <- 0 until 4) {
        val t0 = System.nanoTime
        val out = SegmentWriter.build(docs, cf)
        best = math.min(best, System.nanoTime - t0)
        assert(java.util.Arrays.equals(out, reference))
      }
      val seg = SegmentReader(reference)
      val t1 = System.nanoTime
      val merged = Merge.merge(IndexedSeq(seg, seg), IndexedSeq(null, null))
      val mergeNs = System.nanoTime - t1
      info(f"$name: ${docs.length} docs, build ${best / 1e6}%.1f ms (best of 4), 2-way self-merge ${mergeNs / 1e6}%.1f ms → ${merged.bytes.length} bytes")
    }
  }

  test("Conformance.run dispatches the zap manifest") {
    val json = new ObjectMapper().readTree(Conformance.run(ZapVectors.dir.toString, "zap", ""))
    assert((0 until json.size).forall(i => json.get(i).path("failures").size == 0), json.toString.take(2000))
    assert(json.size == ZapVectors.cases.length)
    assert(json.get(0).path("format").asText == "zap")
  }
}
