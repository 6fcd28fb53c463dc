package io.indexbridge.paimon

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/** The Paimon golden vectors, read in place (`$INDEXBRIDGE_VECTORS/paimon`). */
object PaimonVectors {
  val dir: Path = Paths.get(sys.env.getOrElse("INDEXBRIDGE_VECTORS", "../shared/vectors")).resolve("paimon").toAbsolutePath.normalize

  private val mapper = new ObjectMapper

  lazy val manifest: JsonNode = mapper.readTree(dir.resolve("manifest.json").toFile)

  /** Manifest entries of the given formats, in manifest order. */
  def cases(formats: String*): Seq[JsonNode] =
    manifest.path("cases").asScala.filter(e => formats.contains(e.path("format").asText)).toList

  def json(entry: JsonNode): JsonNode = mapper.readTree(dir.resolve(entry.path("json").asText).toFile)

  /** Every binary of a case (relative path → bytes): `bin` and any `extra_bins`. */
  def binaries(entry: JsonNode): Seq[(String, Array[Byte])] = {
    val names = Option(entry.get("bin")).map(_.asText).toList ++ entry.path("extra_bins").asScala.map(_.path("bin").asText)
    names.map(n => n -> Files.readAllBytes(dir.resolve(n)))
  }
}
