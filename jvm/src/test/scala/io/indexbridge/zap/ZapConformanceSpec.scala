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

  test("Conformance.run dispatches the zap manifest") {
    val json = new ObjectMapper().readTree(Conformance.run(ZapVectors.dir.toString, "zap", ""))
    assert(json.size == ZapVectors.cases.length)
    assert(json.get(0).path("format").asText == "zap")
  }
}
