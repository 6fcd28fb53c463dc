package io.indexbridge.bleve

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/** integration/boltgo (bbolt v1.3.5, bleve v1.0.14) built with Go for the Scala tests into
  * target/boltgo/scala/, and run: each call's JSON output (stderr in the failure message).
  * `tmp` holds the stderr captures. */
final class BoltGo(tmp: Path) {
  private val mapper = new ObjectMapper

  lazy val binary: Path = {
    val binary = Paths.get("target", "boltgo", "scala", "boltgo").toAbsolutePath
    Files.createDirectories(binary.getParent)
    val go = sys.env.getOrElse("PATH", "").split(':').map(Paths.get(_, "go")).find(Files.isExecutable(_)).getOrElse(Paths.get("/usr/local/go/bin/go"))
    run(Paths.get("integration", "boltgo"), Map("GOFLAGS" -> "-mod=mod", "CGO_ENABLED" -> "0"), go.toString, "build", "-o", binary.toString, ".")
    binary
  }

  def run(dir: Path, env: Map[String, String], command: String*): String = {
    val pb = new ProcessBuilder(command: _*).directory(dir.toFile)
    pb.environment().putAll(env.asJava)
    val errFile = Files.createTempFile(tmp, "stderr", ".txt")
    pb.redirectError(errFile.toFile)
    val process = pb.start()
    val out = new String(process.getInputStream.readAllBytes(), UTF_8)
    val status = process.waitFor()
    assert(status == 0, s"${command.mkString(" ")} failed: ${Files.readString(errFile)}")
    out
  }

  /** `boltgo args...`: its JSON output (a JSON null for none). */
  def apply(args: String*): JsonNode = {
    val out = run(Paths.get("."), Map.empty, (binary.toString +: args): _*)
    if (out.trim.isEmpty) mapper.nullNode() else mapper.readTree(out)
  }
}
