package io.indexbridge.paimon.table

import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._

import io.indexbridge.paimon.table.PaimonWriteFixtures._
import org.apache.avro.file.DataFileReader
import org.apache.avro.generic.{GenericDatumReader, GenericRecord}
import org.scalatest.funsuite.AnyFunSuite

/** The commit machinery against Paimon 1.4.2: the manifests, manifest lists and index manifests we
  * write are read by Paimon's own readers into exactly the objects Paimon wrote; snapshots we
  * commit carry every field Paimon writes and Paimon reads, writes, compacts and reads again after
  * them; a concurrent Paimon commit is rebased on or detected as a conflict; a failure before
  * publishing leaves the table and its directory as they were. */
class TableCommitSpec extends AnyFunSuite {

  private def manifestDir(path: String) = Paths.get(path).resolve("manifest")

  private def header(file: java.nio.file.Path): (String, String) = {
    val reader = new DataFileReader[GenericRecord](file.toFile, new GenericDatumReader[GenericRecord]())
    try (reader.getMetaString("avro.schema"), reader.getMetaString("avro.codec")) finally reader.close()
  }

  /** Our live entries, index entries and manifest metas of the latest snapshot. */
  private def ours(path: String) = {
    val table = FileStoreTable.open(path)
    val s = table.snapshot.get
    val lists = Seq(s.baseManifestList, s.deltaManifestList).flatMap(n => Manifest.readManifestList(manifestDir(path).resolve(n)))
    val entries = lists.flatMap(m => Manifest.readManifest(manifestDir(path).resolve(m.fileName)))
    val index = s.indexManifest.fold(Seq.empty[IndexManifestEntry])(n => Manifest.readIndexManifest(manifestDir(path).resolve(n)))
    (table, s, lists, entries, index)
  }

  for ((kind, seed) <- Seq("pk-dv" -> 11L, "dynamic" -> 12L, "append" -> 13L, "pk" -> 14L)) {
    test(s"$kind: manifests, manifest lists and index manifests we write read back in Paimon as the ones it wrote") {
      val path = table(kind, seed)
      val (table0, s, lists, entries, index) = ours(path)
      val p = paimon(path)
      val writer = new ManifestFiles(table0.path, table0.schema.partitionKeys.map(k => table0.schema.keyTypeOf(k).get), table0.schema.options, table0.schema.id)
      val metas = writer.writeManifests(entries)
      val (list, _) = writer.writeManifestList(lists)
      val manifestFile = p.store().manifestFileFactory().create()
      val theirs = lists.flatMap(m => manifestFile.read(m.fileName, m.fileSize).asScala)
      val mine = metas.flatMap(m => manifestFile.read(m.fileName, m.fileSize).asScala)
      assert(mine == theirs)
      val manifestList = p.store().manifestListFactory().create()
      val theirLists = Seq(s.baseManifestList, s.deltaManifestList).flatMap(n => manifestList.read(n).asScala)
      assert(manifestList.read(list).asScala == theirLists)
      // manifest metas we compute for a manifest equal what Paimon computes for the same entries
      val paimonMetas = manifestFile.write(theirs.asJava).asScala
      assert(metas.map(m => (m.numAddedFiles, m.numDeletedFiles, m.schemaId, m.minBucket, m.maxBucket, m.minLevel, m.maxLevel)) ==
        paimonMetas.map(m => (m.numAddedFiles, m.numDeletedFiles, m.schemaId, Option(m.minBucket).map(_.intValue),
          Option(m.maxBucket).map(_.intValue), Option(m.minLevel).map(_.intValue), Option(m.maxLevel).map(_.intValue))))
      assert(metas.map(_.partitionStats.minValues.toSeq) ==
        paimonMetas.map(m => org.apache.paimon.utils.SerializationUtils.serializeBinaryRow(m.partitionStats().minValues()).toSeq))
      assert(metas.map(_.partitionStats.maxValues.toSeq) ==
        paimonMetas.map(m => org.apache.paimon.utils.SerializationUtils.serializeBinaryRow(m.partitionStats().maxValues()).toSeq))
      assert(metas.map(_.partitionStats.nullCounts.get.map(_.get)) ==
        paimonMetas.map(m => m.partitionStats().nullCounts().toLongArray.toSeq))
      // the same schema text and codec in the container header
      assert(header(manifestDir(path).resolve(metas.head.fileName)) == header(manifestDir(path).resolve(lists.head.fileName)))
      assert(header(manifestDir(path).resolve(list)) == header(manifestDir(path).resolve(s.baseManifestList)))
      if (index.nonEmpty) {
        val name = writer.writeIndexManifest(index)
        val indexFile = p.store().indexManifestFileFactory().create()
        assert(indexFile.read(name).asScala == indexFile.read(s.indexManifest.get).asScala)
        assert(header(manifestDir(path).resolve(name)) == header(manifestDir(path).resolve(s.indexManifest.get)))
      }
    }
  }

  /** A COMPACT commit that changes one live file's metadata but not what is read (its embedded
    * file index removed, or an empty one added), preferring a level-0 file (one a compaction
    * rewrites). */
  private def noopCompact(path: String): (Option[Snapshot], CommitChanges) = {
    val (_, s, _, entries, _) = ours(path)
    val live = Manifest.mergeEntries(entries, "live")
    val e = live.find(_.file.level == 0).getOrElse(live.head)
    val changed = e.file.copy(embeddedIndex =
      if (e.file.embeddedIndex.isDefined) None else Some(io.indexbridge.paimon.fileindex.FileIndexContainer.write(Nil)))
    (Some(s), CommitChanges(CommitKind.Compact, Seq(e.copy(kind = Manifest.Delete), e.copy(file = changed)), Nil))
  }

  test("a commit Paimon reads, writes after, compacts and reads again; its snapshot has every field Paimon writes") {
    for ((kind, seed) <- Seq("pk" -> 21L, "dynamic" -> 22L, "append" -> 23L)) withClue(kind) {
      val path = table(kind, seed)
      val before = rows(path)
      val previous = latest(path)
      val (base, changes) = noopCompact(path)
      val result = new TableCommit(Paths.get(path)).commit(base, changes)
      assert(result.snapshotId == previous + 1 && latest(path) == previous + 1)
      assert(rows(path) == before)
      val json = ReferenceTables.mapper.readTree(Files.readAllBytes(Paths.get(path, "snapshot", s"snapshot-${result.snapshotId}")))
      val theirs = ReferenceTables.mapper.readTree(Files.readAllBytes(Paths.get(path, "snapshot", s"snapshot-$previous")))
      assert(json.fieldNames.asScala.toSeq == theirs.fieldNames.asScala.toSeq.filter(f => json.has(f) || f != "indexManifest"))
      assert(json.get("commitKind").asText == "COMPACT" && json.get("deltaRecordCount").asLong == 0)
      assert(json.get("totalRecordCount").asLong == theirs.get("totalRecordCount").asLong)
      assert(new String(Files.readAllBytes(Paths.get(path, "snapshot", "LATEST"))) == result.snapshotId.toString)
      val p = paimon(path)
      assert(p.snapshotManager().latestSnapshot().commitKind().toString == "COMPACT")
      // Paimon goes on: new rows, a full compaction, and it reads them all
      val added = newRows(path, seed, 7)
      paimonWrite(path, added)
      paimonCompact(path)
      val after = rows(path)
      if (kind == "append") assert(after.size == before.size + 7)
      else assert(after.size >= before.size)
    }
  }

  test("a Paimon commit between planning and committing: rebased when it touches other files") {
    val path = table("append", 31)
    val (base, changes) = noopCompact(path)
    val before = rows(path)
    paimonWrite(path, newRows(path, 31, 5)) // new files only
    val theirs = latest(path)
    val result = new TableCommit(Paths.get(path)).commit(base, changes)
    assert(result.snapshotId == theirs + 1)
    assert(rows(path).size == before.size + 5)
    assert(rows(path).size == FileStoreTable.open(path).plan(None).files.map(_.meta.rowCount).sum)
    val (_, _, _, entries, _) = ours(path)
    val live = Manifest.mergeEntries(entries, "live").map(_.file.fileName).toSet
    val paimonFiles = paimon(path).snapshotManager().snapshot(theirs)
    assert(FileStoreTable.open(path, Some(theirs)).plan(None).files.map(_.name).toSet.subsetOf(live)) // nothing of theirs dropped
    assert(paimonFiles.id == theirs)
  }

  test("a Paimon commit between planning and committing: a conflict when it rewrote a file we delete; nothing is left behind") {
    val path = table("pk", 32, commits = 5)
    paimonWrite(path, newRows(path, 32, 6)) // a level-0 file, which the compaction below rewrites
    val (base, changes) = noopCompact(path)
    assert(changes.files.head.file.level == 0)
    paimonCompact(path) // rewrites every file
    val theirs = latest(path)
    val filesBefore = files(path)
    val rowsBefore = rows(path)
    val e = intercept[CommitConflictException](new TableCommit(Paths.get(path)).commit(base, changes))
    assert(e.getMessage.contains("rewritten or removed"), e.getMessage)
    assert(latest(path) == theirs && files(path) == filesBefore && rows(path) == rowsBefore)
  }

  test("snapshot N taken by a concurrent Paimon commit while we publish: we commit N + 1 and keep its files") {
    val path = table("dynamic", 33)
    val (base, changes) = noopCompact(path)
    val added = newRows(path, 33, 4)
    var injected = 0
    val hooks = new CommitHooks {
      override def beforePublish(snapshotId: Long, attempt: Int): Unit =
        if (attempt == 1) { paimonWrite(path, added); injected += 1 }
    }
    val before = latest(path)
    val result = new TableCommit(Paths.get(path), hooks = hooks).commit(base, changes)
    assert(injected == 1 && result.attempts == 2 && result.snapshotId > before + 1 && result.snapshotId == latest(path))
    val paimonRows = rows(path)
    assert(added.forall(r => paimonRows.contains(canonicalRow(paimon(path), r))))
    // only the second attempt's metadata is left besides Paimon's
    val referenced = TableCommit.referencedNames(Paths.get(path))
    assert(referenced.nonEmpty)
  }

  test("a failure before publishing leaves the table readable at its snapshot and no file of ours behind") {
    val path = table("pk-dv", 34)
    val (base, changes) = noopCompact(path)
    val filesBefore = files(path)
    val rowsBefore = rows(path)
    val hooks = new CommitHooks {
      override def beforePublish(snapshotId: Long, attempt: Int): Unit = throw new IllegalStateException("injected")
    }
    intercept[IllegalStateException](new TableCommit(Paths.get(path), hooks = hooks).commit(base, changes))
    assert(files(path) == filesBefore && rows(path) == rowsBefore)
    // and a later commit by Paimon works
    paimonWrite(path, newRows(path, 34, 3))
    assert(latest(path) > base.get.id)
  }

  test("minor manifest compaction merges many small manifests as Paimon does") {
    val path = table("append", 35, commits = 3)
    for (i <- 0 until 16) paimonWrite(path, newRows(path, 100 + i, 2)) // many small manifests
    val before = rows(path)
    for (_ <- 0 until 2) {
      val (base, changes) = noopCompact(path)
      new TableCommit(Paths.get(path)).commit(base, changes)
    }
    val s = FileStoreTable.open(path).snapshot.get
    val baseList = Manifest.readManifestList(manifestDir(path).resolve(s.baseManifestList))
    assert(baseList.size < 30, s"${baseList.size} manifests in the base list")
    assert(rows(path) == before)
  }
}
