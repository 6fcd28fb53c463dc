package io.indexbridge.delta

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import io.indexbridge.IndexFormatException

/** Which files of `_delta_log` make up a Delta table's state at a version (Delta protocol,
  * "Delta Log Entries", "Checkpoints"); the actions themselves are read by Spark
  * ([[io.indexbridge.spark.Lakehouse.readDeltaDvs]]).
  *
  * {{{
  * 00000000000000000000.json                     commit N: one JSON action per line
  * 00000000000000000010.checkpoint.parquet       classic checkpoint of version 10
  * 00000000000000000010.checkpoint.0000000001.0000000002.parquet   multi-part checkpoint, part 1 of 2
  * 00000000000000000010.checkpoint.<uuid>.json|parquet             V2 checkpoint (+ Parquet files in _sidecars/)
  * 00000000000000000010.crc                      version checksum (not needed to read)
  * _last_checkpoint                              a hint; listing the directory decides here
  * }}}
  *
  * The state at version V: the newest complete checkpoint at or below V (its `add` rows; a V2
  * checkpoint's sidecars too), then the commits after it up to V in order. File actions are
  * keyed by (path, DV unique id): `add` puts, `remove` deletes. Mirrors `indexbridge.delta.log`.
  */
object DeltaLog {
  private val Commit = """^(\d{20})\.json$""".r
  private val Checkpoint = """^(\d{20})\.checkpoint(?:\.(\d{10})\.(\d{10})|\.([0-9a-fA-F-]{36}))?\.(parquet|json)$""".r

  /** The log files to replay for `version`: the checkpoint's files (empty without one) and the
    * commits after it, ascending. `v2` tells whether the checkpoint is a V2 one (sidecars). */
  final case class Replay(version: Long, checkpoint: Option[Long], checkpointFiles: Seq[Path], v2: Boolean, commits: Seq[(Long, Path)])

  def replay(table: Path, version: Option[Long]): Replay = {
    val logDir = table.resolve("_delta_log")
    if (!Files.isDirectory(logDir)) throw new IndexFormatException(logDir.toString, 0, "a Delta table's _delta_log directory")
    val names = Files.list(logDir).iterator.asScala.map(_.getFileName.toString).toList
    val commits = names.collect { case n @ Commit(v) => v.toLong -> logDir.resolve(n) }.toMap
    val checkpoints = names.collect { case n @ Checkpoint(v, part, total, uuid, _) =>
      v.toLong -> (if (part != null) ("multi", part.toInt, total.toInt) else if (uuid != null) ("v2", 1, 1) else ("classic", 1, 1), logDir.resolve(n))
    }.groupMap(_._1)(_._2)
    val known = commits.keySet ++ checkpoints.keySet
    if (known.isEmpty) throw new IndexFormatException(logDir.toString, 0, "at least one commit (00000000000000000000.json) or checkpoint")
    val latest = known.max
    val v = version.getOrElse(latest)
    if (v < 0 || v > latest) throw new IllegalArgumentException(s"version $v of $table: the log holds versions up to $latest")
    val chosen = checkpoints.keys.filter(_ <= v).toSeq.sorted.reverseIterator
      .flatMap(c => complete(checkpoints(c)).map(c -> _)).nextOption()
    val start = chosen.fold(-1L)(_._1)
    val replayed = (start + 1 to v).map { n =>
      n -> commits.getOrElse(n, throw new IndexFormatException(logDir.resolve(f"$n%020d.json").toString, 0,
        s"commit $n of the log (versions ${start + 1}..$v are needed)"))
    }
    Replay(v, chosen.map(_._1), chosen.toSeq.flatMap(_._2._1), chosen.exists(_._2._2), replayed)
  }

  /** The files of one usable checkpoint of a version (a V2 or classic one, or all parts). */
  private def complete(files: Seq[((String, Int, Int), Path)]): Option[(Seq[Path], Boolean)] =
    files.find(_._1._1 == "v2").map(f => (Seq(f._2), true))
      .orElse(files.find(_._1._1 == "classic").map(f => (Seq(f._2), false)))
      .orElse(files.filter(_._1._1 == "multi").groupBy(_._1._3).collectFirst {
        case (total, parts) if parts.map(_._1._2).toSet == (1 to total).toSet => (parts.sortBy(_._2.getFileName.toString).map(_._2), false)
      })
}
