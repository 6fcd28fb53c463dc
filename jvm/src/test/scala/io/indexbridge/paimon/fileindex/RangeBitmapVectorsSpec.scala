package io.indexbridge.paimon.fileindex

import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import io.indexbridge.conformance.FileIndexConformance
import org.scalatest.funsuite.AnyFunSuite

/** Every range-bitmap golden vector (`$INDEXBRIDGE_VECTORS/range-bitmap`: raw payloads and
  * containers with range-bitmap columns) through the conformance checker, and its `--out` bytes. */
class RangeBitmapVectorsSpec extends AnyFunSuite {
  private val dir = Paths.get(sys.env.getOrElse("INDEXBRIDGE_VECTORS", "../shared/vectors")).resolve("range-bitmap").toAbsolutePath.normalize
  private val cases = new ObjectMapper().readTree(dir.resolve("manifest.json").toFile).path("cases").asScala.toList

  test("the range-bitmap vectors are where the tests expect them") {
    assert(cases.count(_.path("format").asText == "range-bitmap") == 53)
    assert(cases.count(_.path("format").asText == "fileindex") == 4)
  }

  for (entry <- cases) {
    val name = s"${entry.path("format").asText}/${entry.path("case").asText}"
    test(s"vector $name: decodes, answers as Paimon (top-N too) and re-encodes byte for byte") {
      val out = Files.createTempDirectory("ib-range-bitmap")
      assert(FileIndexConformance.checkCase(dir, entry, Some(out)) == Nil)
      val bin = entry.path("bin").asText
      assert(Files.readAllBytes(out.resolve(bin)).sameElements(Files.readAllBytes(dir.resolve(bin))), s"$bin written to --out")
    }
  }
}
