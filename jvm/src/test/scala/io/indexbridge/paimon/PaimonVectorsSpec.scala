package io.indexbridge.paimon

import java.nio.file.Files

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import io.indexbridge.conformance.{Conformance, PaimonConformance}
import org.scalatest.funsuite.AnyFunSuite

/** Every dv32 / dv64 / hash / hashes golden vector through the conformance checker. */
class PaimonVectorsSpec extends AnyFunSuite {
  test("the vectors are where the tests expect them") {
    assert(Files.isRegularFile(PaimonVectors.dir.resolve("manifest.json")), PaimonVectors.dir)
    assert(PaimonVectors.cases("dv32").size == 12)
    assert(PaimonVectors.cases("dv64").size == 16)
    assert(PaimonVectors.cases("hash").size == 4)
    assert(PaimonVectors.cases("hashes").size == 1)
  }

  for (entry <- PaimonVectors.cases("dv32", "dv64", "hash", "hashes")) {
    val name = s"${entry.path("format").asText}/${entry.path("case").asText}"
    test(s"vector $name: decodes and re-encodes byte for byte") {
      val out = Files.createTempDirectory("ib-conformance")
      val failures = PaimonConformance.checkCase(PaimonVectors.dir, entry, Some(out))
      assert(failures == Nil)
      for ((relative, reference) <- PaimonVectors.binaries(entry))
        assert(Files.readAllBytes(out.resolve(relative)).sameElements(reference), s"$relative written to --out")
    }
  }

  test("a failing case reports what differs instead of throwing") {
    val entry = PaimonVectors.cases("dv32").find(_.path("case").asText == "dv32_single_mid").get
    val dir = Files.createTempDirectory("ib-vectors")
    Files.createDirectories(dir.resolve("dv32"))
    val json = PaimonVectors.json(entry).asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode]
    json.put("cardinality", 2)
    json.putArray("checks").addObject().put("position", 123456).put("deleted", false)
    Files.writeString(dir.resolve("dv32/dv32_single_mid.json"), json.toString)
    val bin = PaimonVectors.binaries(entry).head._2
    bin(bin.length - 1) = (bin(bin.length - 1) ^ 1).toByte
    Files.write(dir.resolve("dv32/dv32_single_mid.bin"), bin)
    val failures = PaimonConformance.checkCase(dir, entry, None)
    assert(failures.exists(f => f.startsWith("decode:") && f.contains("CRC-32")), failures)
    assert(failures.exists(_.startsWith("encoded bytes:")), failures)
  }

  test("Conformance.run covers the manifest, every format with a checker") {
    val mapper = new ObjectMapper
    val all = mapper.readTree(Conformance.run(PaimonVectors.dir.toString, "", "")).asScala.toList
    assert(all.size == PaimonVectors.manifest.path("cases").size)
    for (r <- all) {
      val failures = r.path("failures").asScala.map(_.asText).toList
      assert(!failures.exists(_.contains("not supported by engine jvm")), r)
      // the file-index formats have their own spec (FileIndexVectorsSpec)
      if (Set("dv32", "dv64", "hash", "hashes")(r.path("format").asText)) assert(failures.isEmpty, r)
    }
    val selected = mapper.readTree(Conformance.run(PaimonVectors.dir.toString, "hash, bloom", "")).asScala.toList
    assert(selected.map(_.path("format").asText).distinct.sorted == List("bloom", "hash"))
    assert(selected.size == 4 + 19)
  }

  test("Conformance.run --out writes every encoded file under its reference name") {
    val out = Files.createTempDirectory("ib-out")
    Conformance.run(PaimonVectors.dir.toString, "dv64", out.toString)
    for (entry <- PaimonVectors.cases("dv64"); (relative, reference) <- PaimonVectors.binaries(entry))
      assert(Files.readAllBytes(out.resolve(relative)).sameElements(reference), relative)
  }
}
