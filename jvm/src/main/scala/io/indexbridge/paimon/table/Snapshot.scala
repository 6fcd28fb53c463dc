package io.indexbridge.paimon.table

import java.nio.file.{Files, NoSuchFileException, Path}

import scala.jdk.CollectionConverters._
import scala.util.Try

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import io.indexbridge.IndexFormatException

/** A Paimon snapshot: `snapshot/snapshot-<id>` JSON, one per commit (`Snapshot`). Python's twin
  * is `indexbridge.paimon.table.snapshot`.
  *
  * {{{
  * {"version": 3, "id": 6, "schemaId": 0,
  *  "baseManifestList": "manifest-list-…-2", "baseManifestListSize": 1208,
  *  "deltaManifestList": "manifest-list-…-3", "deltaManifestListSize": 1130,
  *  "changelogManifestList": null, "indexManifest": "index-manifest-…-0",
  *  "commitUser": "…", "commitIdentifier": 9223372036854775807, "commitKind": "COMPACT",
  *  "timeMillis": 1795575727813, "totalRecordCount": 38, "deltaRecordCount": -19,
  *  "watermark": …, "statistics": …, "properties": …, "nextRowId": 0}
  * }}}
  *
  * The data files of a snapshot are those of its base manifest list followed by its delta
  * manifest list; `indexManifest` (optional) lists the index files that are live in it.
  * Changelog manifests are not part of a batch read.
  */
final case class Snapshot(
    id: Long,
    schemaId: Long,
    baseManifestList: String,
    deltaManifestList: String,
    indexManifest: Option[String],
    commitKind: String,
    commitUser: String,
    commitIdentifier: Long,
    timeMillis: Long,
    totalRecordCount: Option[Long],
    deltaRecordCount: Option[Long],
    version: Int)

object Snapshot {
  private val mapper = new ObjectMapper()

  def fromJson(bytes: Array[Byte], source: String): Snapshot = {
    def fail(why: String): Nothing = throw new IndexFormatException(source, 0, s"a snapshot JSON document: $why")
    val doc = Json.parse(mapper, bytes, fail)
    if (!doc.isObject) fail("not a JSON object")
    def int(key: String): Long = {
      val v = doc.get(key)
      if (v == null || !v.isIntegralNumber) fail(s"field '$key' must be an integer, got $v")
      v.asLong
    }
    def str(key: String): String = {
      val v = doc.get(key)
      if (v == null || !v.isTextual) fail(s"field '$key' must be a string, got $v")
      v.asText
    }
    def optional[T](key: String)(f: JsonNode => T): Option[T] = Option(doc.get(key)).filterNot(_.isNull).map(f)
    Snapshot(
      id = int("id"),
      schemaId = int("schemaId"),
      baseManifestList = str("baseManifestList"),
      deltaManifestList = str("deltaManifestList"),
      indexManifest = optional("indexManifest")(_.asText),
      commitKind = str("commitKind"),
      commitUser = optional("commitUser")(_.asText).getOrElse(""),
      commitIdentifier = optional("commitIdentifier")(_.asLong).getOrElse(0L),
      timeMillis = optional("timeMillis")(_.asLong).getOrElse(0L),
      totalRecordCount = optional("totalRecordCount")(_.asLong),
      deltaRecordCount = optional("deltaRecordCount")(_.asLong),
      version = optional("version")(_.asInt).getOrElse(1)
    )
  }
}

/** JSON documents of the table layer, parse errors reported through `fail`. */
private[table] object Json {
  def parse(mapper: ObjectMapper, bytes: Array[Byte], fail: String => Nothing): JsonNode =
    try {
      val node = mapper.readTree(bytes)
      if (node == null || node.isMissingNode) fail("empty document") else node
    } catch { case e: com.fasterxml.jackson.core.JacksonException => fail(e.getOriginalMessage) }
}

/** The snapshots of the table at `tablePath` (`SnapshotManager`, `HintFileUtils`).
  *
  * {{{
  * snapshot/snapshot-<id>   JSON, one per commit (ids from 1, gaps where old snapshots expired)
  * snapshot/LATEST          the latest id as decimal text: a hint, trusted only if snapshot-<id + 1> is absent
  * snapshot/EARLIEST        the earliest id: a hint, trusted only if snapshot-<id> exists
  * }}}
  *
  * When a hint is missing, unreadable or stale, the ids are found by listing `snapshot-*`, as
  * `HintFileUtils.findLatest` / `findEarliest` do.
  */
final class SnapshotManager(tablePath: Path) {
  val directory: Path = tablePath.resolve("snapshot")

  def path(snapshotId: Long): Path = directory.resolve(s"snapshot-$snapshotId")

  private def hint(name: String): Option[Long] =
    Try(new String(Files.readAllBytes(directory.resolve(name)), java.nio.charset.StandardCharsets.UTF_8).trim.toLong).toOption

  /** Every id with a snapshot file, ascending (by listing the directory). */
  def snapshotIds: Seq[Long] =
    if (!Files.isDirectory(directory)) Nil
    else {
      val stream = Files.list(directory)
      try stream.iterator.asScala.map(_.getFileName.toString).collect { case SnapshotManager.FileName(id) => id.toLong }.toSeq.sorted
      finally stream.close()
    }

  def latestSnapshotId: Option[Long] =
    hint(SnapshotManager.Latest).filter(h => h > 0 && !Files.exists(path(h + 1))).orElse(snapshotIds.lastOption)

  def earliestSnapshotId: Option[Long] =
    hint(SnapshotManager.Earliest).filter(h => Files.exists(path(h))).orElse(snapshotIds.headOption)

  def snapshot(snapshotId: Long): Snapshot = {
    val file = path(snapshotId)
    val bytes =
      try Files.readAllBytes(file)
      catch {
        case _: NoSuchFileException =>
          val ids = snapshotIds
          val have = if (ids.isEmpty) "the table has no snapshot" else s"snapshots ${ids.head}..${ids.last} exist"
          throw new IndexFormatException(file.toString, 0, s"snapshot $snapshotId to exist ($have)")
      }
    val snapshot = Snapshot.fromJson(bytes, file.toString)
    if (snapshot.id != snapshotId)
      throw new IndexFormatException(file.toString, 0, s"snapshot id $snapshotId, the file says ${snapshot.id}")
    snapshot
  }

  def latestSnapshot: Option[Snapshot] = latestSnapshotId.map(snapshot)
}

object SnapshotManager {
  val Latest = "LATEST"
  val Earliest = "EARLIEST"
  private val FileName = "snapshot-(\\d+)".r
}
