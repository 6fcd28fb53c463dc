package io.indexbridge.paimon.table

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets
import java.nio.file.{FileAlreadyExistsException, Files, Path, StandardCopyOption, StandardOpenOption}
import java.util.UUID

import scala.collection.mutable
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import io.indexbridge.paimon.{DeletionFile => DeletionFileCodec, HashIndex}

/** Paimon's commit kinds (`Snapshot.CommitKind`). */
object CommitKind {
  val Append = "APPEND"
  val Compact = "COMPACT"
  val Overwrite = "OVERWRITE"
}

/** What one commit changes: data file entries (ADD / DELETE, in order), index file entries (ADD of
  * new index files, DELETE of the ones they replace), and the files the job wrote for it (removed
  * again when the commit fails). `hashPartitions` are partitions whose whole HASH index the
  * changes were computed from (a bulk load assigning new keys to buckets): a concurrent change
  * of any HASH file there is a conflict. */
final case class CommitChanges(
    kind: String,
    files: Seq[ManifestEntry],
    indexFiles: Seq[IndexManifestEntry],
    ownedFiles: Seq[Path] = Nil,
    hashPartitions: Set[ByteBuffer] = Set.empty)

final case class CommitResult(snapshotId: Long, attempts: Int)

/** Another writer changed what this commit rewrites or deletes from; nothing was committed and
  * the files of the commit were removed. */
final class CommitConflictException(message: String) extends RuntimeException(message)

/** Points where tests inject failures or concurrent commits: called with the id a commit attempt
  * is about to publish, after every file it references is written. */
trait CommitHooks extends Serializable {
  def beforePublish(snapshotId: Long, attempt: Int): Unit = ()
}

object CommitHooks {
  object None extends CommitHooks
}

/** Commits to a Paimon table as `FileStoreCommitImpl.tryCommitOnce` does, from outside Paimon.
  *
  * {{{
  * attempt   latest = the table's latest snapshot (LATEST hint, else listing)
  *           latest != the snapshot the changes were planned on: conflict check (below); a
  *             conflict removes every file of the commit and throws CommitConflictException
  *           delta manifests  the changes' entries (written once, reused by later attempts)
  *           base list        latest's base + delta manifests, small ones merged as Paimon's
  *                            ManifestFileMerger.tryMinorCompaction does (30 manifests under
  *                            manifest.target-file-size); no full compaction
  *           delta list       the delta manifests
  *           index manifest   latest's entries combined with the changes (HASH and bucketed
  *                            DELETION_VECTORS by (partition, bucket, type), unaware-bucket
  *                            DELETION_VECTORS by file name, as IndexManifestFileHandler); the
  *                            latest one reused when the changes hold no index files
  *           snapshot-N       N = latest + 1, JSON as Paimon's Snapshot (version 3, every field
  *                            Paimon writes; watermark, statistics and nextRowId carried over)
  * publish   snapshot-N created if absent: written to a hidden temporary file, hard-linked to its
  *           name (fails when it exists), read back; then the LATEST hint (temporary + rename)
  * retry     snapshot-N taken by another writer: this attempt's lists and index manifest are
  *           removed, the next attempt starts over on the new latest (commit.max-retries, 10)
  * conflicts a DELETE whose file is no longer live; an index file DELETE whose file is gone; a
  *           (partition, bucket, type) of HASH or bucketed DV files this commit replaces, or a
  *           data file whose unaware-bucket DV it replaces, changed since the planned snapshot;
  *           any HASH change in `hashPartitions`; level >= 1 files of a bucket with overlapping
  *           key ranges (primary-key tables, ConflictDetection.checkKeyRange)
  * failure   anything thrown before snapshot-N exists removes every file of the commit; after
  *           it exists nothing is removed
  * }}}
  */
final class TableCommit(val tablePath: Path, val commitUser: String = UUID.randomUUID().toString, hooks: CommitHooks = CommitHooks.None) {
  private val snapshots = new SnapshotManager(tablePath)
  private def schemas = new SchemaManager(tablePath)
  private def manifest(name: String): Path = tablePath.resolve("manifest").resolve(name)

  /** Commits `changes` planned on `base` (None: the table had no snapshot). */
  def commit(base: Option[Snapshot], changes: CommitChanges): CommitResult = {
    val latestSchema = schemas.latest.getOrElse(throw new IllegalStateException(s"$tablePath has no schema"))
    val options = latestSchema.options
    ManifestWriter.checkFormat(options, tablePath.resolve("schema").resolve(s"schema-${latestSchema.id}").toString)
    val partitionTypes = latestSchema.partitionKeys.map(k => latestSchema.keyTypeOf(k).get)
    val maxRetries = options.get("commit.max-retries").fold(10)(_.trim.toInt)
    // Paimon's scan drops an ADD whose identifier a DELETE of the same snapshot names, so deleting
    // and re-adding one file loses it (ConflictDetection refuses such a delta too)
    val deletes = changes.files.filter(_.kind == Manifest.Delete).map(_.identifier).toSet
    changes.files.find(e => e.kind == Manifest.Add && deletes.contains(e.identifier)).foreach { e =>
      throw new IllegalArgumentException(s"the changes delete and add data file ${e.file.fileName} unchanged (the same identifier)")
    }
    val deltaWriter = new ManifestFiles(tablePath, partitionTypes, options, latestSchema.id)
    val attemptWriters = mutable.ArrayBuffer.empty[ManifestFiles]
    var published = false
    try {
      lazy val deltaManifests = deltaWriter.writeManifests(changes.files)
      var attempt = 0
      var result: Option[CommitResult] = None
      while (result.isEmpty) {
        attempt += 1
        val latest = snapshots.latestSnapshot
        if (latest.map(_.id) != base.map(_.id)) conflict(base, latest, changes, latestSchema).foreach { why =>
          throw new CommitConflictException(s"$tablePath: conflict with snapshot ${latest.map(_.id).getOrElse(0L)} " +
            s"(the changes were planned on snapshot ${base.map(_.id).getOrElse(0L)}): $why; nothing was committed")
        }
        val schema = schemas.latest.get
        val writer = new ManifestFiles(tablePath, partitionTypes, options, schema.id)
        attemptWriters += writer
        val previous = latest.toSeq.flatMap(s =>
          Seq(s.baseManifestList, s.deltaManifestList).flatMap(n => Manifest.readManifestList(manifest(n))))
        val merged = TableCommit.minorCompaction(previous, writer, options, n => Manifest.readManifest(manifest(n)))
        val (baseList, baseSize) = writer.writeManifestList(merged)
        val (deltaList, deltaSize) = writer.writeManifestList(deltaManifests)
        val indexManifest =
          if (changes.indexFiles.isEmpty) latest.flatMap(_.indexManifest)
          else Some(writer.writeIndexManifest(TableCommit.combineIndex(
            latest.flatMap(_.indexManifest).fold(Seq.empty[IndexManifestEntry])(n => Manifest.readIndexManifest(manifest(n))),
            changes.indexFiles, unawareDv = schema.primaryKeys.isEmpty && CoreOptions(schema.options).bucket == -1, tablePath.toString)))
        val id = latest.fold(1L)(_.id + 1)
        val json = snapshotJson(id, schema.id, latest, baseList, baseSize, deltaList, deltaSize, indexManifest, changes)
        hooks.beforePublish(id, attempt)
        if (publish(id, json)) {
          published = true
          latestHint(id)
          result = Some(CommitResult(id, attempt))
        } else {
          writer.removeExcept(Set.empty)
          if (attempt > maxRetries)
            throw new CommitConflictException(s"$tablePath: snapshot $id was taken by another writer ${attempt} times in a row " +
              s"(commit.max-retries = $maxRetries); nothing was committed")
          Thread.sleep(math.min(1000L, 10L << math.min(attempt, 6)) + scala.util.Random.nextInt(10))
        }
      }
      result.get
    } catch {
      case NonFatal(e) if !published =>
        attemptWriters.foreach(_.removeExcept(Set.empty))
        deltaWriter.removeExcept(Set.empty)
        TableCommit.removeUnreferenced(tablePath, changes.ownedFiles)
        throw e
    }
  }

  // ------------------------------------------------------------------------------------------
  // Conflicts

  private def conflict(base: Option[Snapshot], latest: Option[Snapshot], changes: CommitChanges, schema: TableSchema): Option[String] = {
    val now = latest.getOrElse(return Some("the table's snapshots were removed"))
    val live = TableCommit.liveEntries(tablePath, now)
    val liveIds = live.map(_.identifier).toSet
    def describe(e: ManifestEntry) = s"data file ${e.file.fileName} (bucket ${e.bucket}, level ${e.file.level})"
    val gone = changes.files.filter(_.kind == Manifest.Delete).filterNot(e => liveIds.contains(e.identifier))
    if (gone.nonEmpty)
      return Some(s"${describe(gone.head)}${if (gone.size > 1) s" and ${gone.size - 1} more" else ""} " +
        s"was rewritten or removed by snapshot ${now.id} (${now.commitKind} by ${now.commitUser})")
    val (before, after) = (TableCommit.indexEntries(tablePath, base), TableCommit.indexEntries(tablePath, latest))
    // a new deletion vector needs its data file live (ConflictDetection.buildDeltaEntriesWithDV)
    val liveNames = live.map(_.file.fileName).toSet
    changes.indexFiles.filter(e => e.kind == Manifest.Add && e.indexType == DeletionFileCodec.IndexType)
      .flatMap(_.dvRanges.getOrElse(Nil)).find(r => !liveNames.contains(r.dataFile)).foreach { r =>
        return Some(s"data file ${r.dataFile}, which this commit gives a deletion vector, was rewritten or removed by snapshot ${now.id}")
      }
    val afterNames = after.map(_.fileName).toSet
    changes.indexFiles.filter(_.kind == Manifest.Delete).find(e => !afterNames.contains(e.fileName)).foreach { e =>
      return Some(s"${e.indexType} index file ${e.fileName} (bucket ${e.bucket}) was replaced by snapshot ${now.id}")
    }
    val unaware = schema.primaryKeys.isEmpty && CoreOptions(schema.options).bucket == -1
    def key(e: IndexManifestEntry) = (ByteBuffer.wrap(e.partition), e.bucket, e.indexType)
    def groups(es: Seq[IndexManifestEntry]) = es.groupBy(key).map { case (k, v) => k -> v.map(_.fileName).toSet }
    val (g0, g1) = (groups(before), groups(after))
    val bucketed = changes.indexFiles.filterNot(e => unaware && e.indexType == DeletionFileCodec.IndexType).map(key).distinct
    bucketed.find(k => g0.get(k) != g1.get(k)).foreach { case (_, bucket, t) =>
      return Some(s"the $t index of bucket $bucket changed in snapshot ${now.id}")
    }
    if (unaware) {
      def dvFiles(es: Seq[IndexManifestEntry]) = es.filter(_.indexType == DeletionFileCodec.IndexType)
        .flatMap(e => e.dvRanges.getOrElse(Nil).map(_.dataFile -> e.fileName)).toMap
      val (d0, d1) = (dvFiles(before), dvFiles(after))
      changes.indexFiles.filter(e => e.kind == Manifest.Add && e.indexType == DeletionFileCodec.IndexType)
        .flatMap(_.dvRanges.getOrElse(Nil)).map(_.dataFile).find(f => d0.get(f) != d1.get(f)).foreach { f =>
          return Some(s"the deletion vector of data file $f changed in snapshot ${now.id}")
        }
    }
    if (changes.hashPartitions.nonEmpty) {
      def hashes(es: Seq[IndexManifestEntry]) =
        es.filter(e => e.indexType == HashIndex.IndexType && changes.hashPartitions.contains(ByteBuffer.wrap(e.partition)))
          .map(e => (ByteBuffer.wrap(e.partition), e.bucket, e.fileName)).toSet
      if (hashes(before) != hashes(after)) return Some(s"the HASH index of a partition this load assigns keys in changed in snapshot ${now.id}")
    }
    TableCommit.keyRangeConflict(live ++ changes.files, changes.files, schema, manifest(now.deltaManifestList).toString)
  }

  // ------------------------------------------------------------------------------------------
  // Snapshot files

  private def snapshotJson(id: Long, schemaId: Long, latest: Option[Snapshot], baseList: String, baseSize: Long,
      deltaList: String, deltaSize: Long, indexManifest: Option[String], changes: CommitChanges): Array[Byte] = {
    val previous: Option[JsonNode] = latest.map(s => TableCommit.mapper.readTree(Files.readAllBytes(snapshots.path(s.id))))
    def prev(field: String): Option[JsonNode] = previous.flatMap(p => Option(p.get(field))).filterNot(_.isNull)
    val added = changes.files.filter(_.kind == Manifest.Add).map(_.file.rowCount).sum
    val deleted = changes.files.filter(_.kind == Manifest.Delete).map(_.file.rowCount).sum
    val node = TableCommit.mapper.createObjectNode()
    node.put("version", 3)
    node.put("id", id)
    node.put("schemaId", schemaId)
    node.put("baseManifestList", baseList)
    node.put("baseManifestListSize", baseSize)
    node.put("deltaManifestList", deltaList)
    node.put("deltaManifestListSize", deltaSize)
    indexManifest.foreach(node.put("indexManifest", _))
    node.put("commitUser", commitUser)
    node.put("commitIdentifier", Long.MaxValue) // BatchWriteBuilder.COMMIT_IDENTIFIER
    node.put("commitKind", changes.kind)
    node.put("timeMillis", System.currentTimeMillis())
    node.put("totalRecordCount", prev("totalRecordCount").fold(0L)(_.asLong) + added - deleted)
    node.put("deltaRecordCount", added - deleted)
    prev("watermark").foreach(w => node.put("watermark", w.asLong))
    // Paimon keeps the statistics file while the schema stays the same
    if (latest.exists(_.schemaId == schemaId)) prev("statistics").foreach(s => node.put("statistics", s.asText))
    node.put("nextRowId", prev("nextRowId").fold(0L)(_.asLong))
    TableCommit.mapper.writerWithDefaultPrettyPrinter().writeValueAsBytes(node)
  }

  /** Creates snapshot-`id` unless it exists; true when this call created it with `json`. */
  private def publish(id: Long, json: Array[Byte]): Boolean = {
    Files.createDirectories(snapshots.directory)
    val target = snapshots.path(id)
    val tmp = snapshots.directory.resolve(s".snapshot-$id.${UUID.randomUUID()}.tmp")
    try {
      Files.write(tmp, json, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, StandardOpenOption.SYNC)
      val created =
        try { Files.createLink(target, tmp); true }
        catch {
          case _: FileAlreadyExistsException => false
          case _: UnsupportedOperationException => // no hard links: create-new of the file itself
            try { Files.write(target, json, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE); true }
            catch { case _: FileAlreadyExistsException => false }
        }
      // Paimon's own local commit checks for the file and then renames over it, unlocked across
      // processes: a snapshot replaced right after it appeared was not committed
      created && java.util.Arrays.equals(Files.readAllBytes(target), json)
    } finally Files.deleteIfExists(tmp)
  }

  private def latestHint(id: Long): Unit =
    try {
      val tmp = snapshots.directory.resolve(s".${SnapshotManager.Latest}.${UUID.randomUUID()}.tmp")
      Files.write(tmp, id.toString.getBytes(StandardCharsets.UTF_8))
      Files.move(tmp, snapshots.directory.resolve(SnapshotManager.Latest), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
    } catch { case NonFatal(_) => () } // a hint: readers list the directory when it is stale
}

object TableCommit {
  private[table] val mapper = new ObjectMapper()

  /** The live data file entries of a snapshot (base then delta manifests, merged). */
  def liveEntries(tablePath: Path, snapshot: Snapshot): Seq[ManifestEntry] = {
    val dir = tablePath.resolve("manifest")
    Manifest.mergeEntries(Seq(snapshot.baseManifestList, snapshot.deltaManifestList).flatMap(n => Manifest.readManifestList(dir.resolve(n)))
      .flatMap(m => Manifest.readManifest(dir.resolve(m.fileName))), dir.resolve(snapshot.deltaManifestList).toString)
  }

  /** The index manifest entries of a snapshot (none without an index manifest). */
  def indexEntries(tablePath: Path, snapshot: Option[Snapshot]): Seq[IndexManifestEntry] =
    snapshot.flatMap(_.indexManifest).fold(Seq.empty[IndexManifestEntry])(n => Manifest.readIndexManifest(tablePath.resolve("manifest").resolve(n)))

  /** The names of every data, extra and index file the table's latest snapshot references. */
  def referencedNames(tablePath: Path): Set[String] = {
    val snapshot = new SnapshotManager(tablePath).latestSnapshot
    val live = snapshot.fold(Seq.empty[ManifestEntry])(liveEntries(tablePath, _))
    (live.flatMap(e => e.file.fileName +: e.file.extraFiles) ++ indexEntries(tablePath, snapshot).map(_.fileName)).toSet
  }

  /** Removes those of a failed job's `files` that the latest snapshot does not reference (a
    * concurrent writer may have committed a file of the same name, e.g. `<data file>.index`). */
  def removeUnreferenced(tablePath: Path, files: Seq[Path]): Unit = if (files.nonEmpty) {
    val referenced = scala.util.Try(referencedNames(tablePath)).getOrElse(return)
    files.filterNot(p => referenced.contains(p.getFileName.toString)).foreach(p => scala.util.Try(Files.deleteIfExists(p)))
  }

  /** Entries applied in order as `FileEntry.mergeEntries` does, DELETEs of files not added
    * before kept (what a merged manifest holds). */
  def mergeKeepingDeletes(entries: Seq[ManifestEntry], source: String): Seq[ManifestEntry] = {
    val map = mutable.LinkedHashMap.empty[Manifest.Identifier, ManifestEntry]
    for (e <- entries) {
      val id = e.identifier
      if (e.kind == Manifest.Add) {
        if (map.contains(id)) throw new io.indexbridge.IndexFormatException(source, 0, s"each file added once; ${id.fileName} is added again")
        map(id) = e
      } else if (map.get(id).exists(_.kind == Manifest.Add)) map.remove(id)
      else map(id) = e
    }
    map.values.toList
  }

  /** `ManifestFileMerger.tryMinorCompaction`: consecutive manifests merged once they reach
    * `manifest.target-file-size` together, and the rest merged when there are at least
    * `manifest.merge-min-count` of them. */
  def minorCompaction(input: Seq[ManifestFileMeta], writer: ManifestFiles, options: Map[String, String],
      read: String => Seq[ManifestEntry]): Seq[ManifestFileMeta] = {
    val target = options.get("manifest.target-file-size").fold(8L << 20)(io.indexbridge.paimon.fileindex.BitmapIndex.memorySize)
    val minCount = options.get("manifest.merge-min-count").fold(30)(_.trim.toInt)
    val result = mutable.ArrayBuffer.empty[ManifestFileMeta]
    val candidates = mutable.ArrayBuffer.empty[ManifestFileMeta]
    def merge(): Unit =
      if (candidates.size == 1) result += candidates.head
      else {
        val merged = mergeKeepingDeletes(candidates.toSeq.flatMap(m => read(m.fileName)), candidates.head.fileName)
        if (merged.nonEmpty) result ++= writer.writeManifests(merged)
      }
    var total = 0L
    for (m <- input) {
      total += m.fileSize
      candidates += m
      if (total >= target) {
        merge()
        candidates.clear()
        total = 0
      }
    }
    if (candidates.size >= minCount) merge() else result ++= candidates
    result.toList
  }

  /** The index manifest after `changes` (`IndexManifestFileHandler.write`): previous entries
    * (all ADD) keyed by (partition, bucket, type) for HASH and bucketed DELETION_VECTORS, by file
    * name for unaware-bucket DELETION_VECTORS and other types; deletes applied before adds. */
  def combineIndex(previous: Seq[IndexManifestEntry], changes: Seq[IndexManifestEntry], unawareDv: Boolean, source: String): Seq[IndexManifestEntry] = {
    def byName(e: IndexManifestEntry) = !Set(HashIndex.IndexType, DeletionFileCodec.IndexType).contains(e.indexType) ||
      (unawareDv && e.indexType == DeletionFileCodec.IndexType)
    def key(e: IndexManifestEntry): Any = if (byName(e)) (e.indexType, e.fileName) else (ByteBuffer.wrap(e.partition), e.bucket, e.indexType)
    val out = mutable.LinkedHashMap.empty[Any, IndexManifestEntry]
    previous.foreach(e => out(key(e)) = e)
    val dvFiles = mutable.HashSet.empty[String]
    previous.filter(e => unawareDv && e.indexType == DeletionFileCodec.IndexType).foreach(e => dvFiles ++= e.dvRanges.getOrElse(Nil).map(_.dataFile))
    def fail(why: String): Nothing = throw new CommitConflictException(s"$source: $why")
    for (e <- changes.filter(_.kind == Manifest.Delete)) {
      if (byName(e) && !out.contains(key(e))) fail(s"trying to delete index file ${e.fileName}, which is not in the snapshot")
      if (unawareDv && e.indexType == DeletionFileCodec.IndexType) dvFiles --= out(key(e)).dvRanges.getOrElse(Nil).map(_.dataFile)
      out.remove(key(e))
    }
    for (e <- changes.filter(_.kind == Manifest.Add)) {
      if (byName(e) && out.contains(key(e))) fail(s"trying to add index file ${e.fileName}, which is already added")
      if (unawareDv && e.indexType == DeletionFileCodec.IndexType)
        e.dvRanges.getOrElse(Nil).foreach { r =>
          if (!dvFiles.add(r.dataFile)) fail(s"trying to add a deletion vector for data file ${r.dataFile}, which already has one")
        }
      out.remove(key(e))
      out(key(e)) = e
    }
    out.values.toList
  }

  /** `ConflictDetection.checkKeyRange` over the buckets `changed` touches: after merging, files
    * of one level >= 1 of a bucket must not overlap in key range. */
  def keyRangeConflict(all: Seq[ManifestEntry], changed: Seq[ManifestEntry], schema: TableSchema, source: String): Option[String] = {
    if (schema.primaryKeys.isEmpty || changed.isEmpty) return None
    val buckets = changed.map(e => (ByteBuffer.wrap(e.partition), e.bucket)).toSet
    val live = Manifest.mergeEntries(all.filter(e => buckets.contains((ByteBuffer.wrap(e.partition), e.bucket))), source)
    val types = schema.trimmedPrimaryKeys.map(k => schema.keyTypeOf(k).get)
    val order = Predicates.keyOrdering(types, source)
    live.filter(_.file.level >= 1).groupBy(e => (ByteBuffer.wrap(e.partition), e.bucket, e.file.level)).valuesIterator.flatMap { files =>
      files.sortBy(_.file.minKey)(order).sliding(2).collectFirst {
        case Seq(a, b) if order.compare(a.file.maxKey, b.file.minKey) >= 0 =>
          s"LSM conflict: files ${a.file.fileName} and ${b.file.fileName} of bucket ${a.bucket} overlap at level ${a.file.level}"
      }
    }.nextOption()
  }
}
