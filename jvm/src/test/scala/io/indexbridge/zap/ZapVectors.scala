package io.indexbridge.zap

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/** The zap golden vectors, read in place (`$INDEXBRIDGE_VECTORS/zap`). */
object ZapVectors {
  val dir: Path = Paths.get(sys.env.getOrElse("INDEXBRIDGE_VECTORS", "../shared/vectors")).resolve("zap").toAbsolutePath.normalize

  lazy val manifest: JsonNode = new ObjectMapper().readTree(dir.resolve("manifest.json").toFile)

  /** Top-level cases, in manifest order. */
  def cases: Seq[JsonNode] = manifest.path("cases").asScala.toList

  /** Every segment file: the top-level cases and the merge inputs (name without .zap → bytes). */
  lazy val segmentNames: Seq[String] =
    Files.list(dir).iterator.asScala.map(_.getFileName.toString).filter(_.endsWith(".zap")).map(_.stripSuffix(".zap")).toList.sorted

  def zap(name: String): Array[Byte] = Files.readAllBytes(dir.resolve(s"$name.zap"))
}
