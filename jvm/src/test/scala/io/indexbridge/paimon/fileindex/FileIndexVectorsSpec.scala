package io.indexbridge.paimon.fileindex

import java.nio.file.Files

import io.indexbridge.conformance.FileIndexConformance
import io.indexbridge.paimon.PaimonVectors
import org.scalatest.funsuite.AnyFunSuite

/** Every bloom / bitmap / bsi / fileindex golden vector through the conformance checker. */
class FileIndexVectorsSpec extends AnyFunSuite {
  test("the file-index vectors are where the tests expect them") {
    assert(PaimonVectors.cases("bloom").size == 19)
    assert(PaimonVectors.cases("bitmap").size == 36)
    assert(PaimonVectors.cases("bsi").size == 18)
    assert(PaimonVectors.cases("fileindex").size == 4)
  }

  for (entry <- PaimonVectors.cases("bloom", "bitmap", "bsi", "fileindex")) {
    val name = s"${entry.path("format").asText}/${entry.path("case").asText}"
    test(s"vector $name: decodes, answers as Paimon and re-encodes byte for byte") {
      val out = Files.createTempDirectory("ib-fileindex")
      val failures = FileIndexConformance.checkCase(PaimonVectors.dir, entry, Some(out))
      assert(failures == Nil)
      for ((relative, reference) <- PaimonVectors.binaries(entry))
        assert(Files.readAllBytes(out.resolve(relative)).sameElements(reference), s"$relative written to --out")
    }
  }
}
