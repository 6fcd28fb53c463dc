package io.indexbridge.paimon.table

import java.nio.file.Paths

import scala.collection.mutable

import io.indexbridge.Storage
import io.indexbridge.paimon.{DeletionVector, DeletionVectorRange, DeletionFile => DeletionFileCodec}

/** New deletion vectors merged into a table's deletion files, as Paimon 1.4.2's append-table
  * maintainers do for a DELETE (`AppendDeleteFileMaintainer` for unaware-bucket tables,
  * `BucketedAppendDeleteFileMaintainer` for fixed buckets), committed as OVERWRITE.
  *
  * {{{
  * group      unaware bucket (bucket = -1): a partition, its DV entries all at bucket 0, many
  *            deletion files each with per-data-file ranges; fixed buckets: a (partition,
  *            bucket) with at most one deletion file
  * merge      a data file's new vector takes in its old one (a data file has one vector)
  * unaware    every deletion file holding an old vector of an updated data file is "touched":
  *            its other vectors are rewritten into new files (rolling), and it is deleted; then
  *            the updated vectors go to new files, rolling at
  *            deletion-vector.index-file.target-size (2 mb): a file closes once its size
  *            passes the target
  * bucketed   all vectors of the bucket (old, merged, new) into one new file replacing the old
  *            one (BucketedCombiner), no DELETE entry
  * frames     in java.util.HashMap order of the data file names (DeletionFile.order)
  * names      index-<uuid of the commit and group>-<n>, n from 0 in write order; written through
  *            a temporary file renamed into place, so a retried task rewrites the same bytes
  * }}}
  */
object DeletionVectorWrite {

  /** One group of deletion files: the DV index entries live in it (with their paths), where new
    * files go, and the table's options. */
  final case class Group(
      partition: Array[Byte],
      bucket: Int,
      unaware: Boolean,
      existing: Seq[(IndexManifestEntry, String)],
      directory: String,
      uuid: String,
      targetSize: Long,
      bitmap64: Boolean)

  /** The index entries (ADD of new files, DELETE of replaced ones) after merging `updates` into
    * the group's vectors, and the paths of the files written. */
  def write(group: Group, updates: Seq[(String, DeletionVector)]): (Seq[IndexManifestEntry], Seq[String]) = {
    val written = mutable.ArrayBuffer.empty[String]
    var n = 0
    def persist(vectors: Seq[(String, DeletionVector)], rolling: Boolean): Seq[IndexManifestEntry] =
      DeletionFileCodec.encode(vectors, if (rolling) group.targetSize else -1L).map { case (bytes, ranges) =>
        val name = s"index-${group.uuid}-$n"
        n += 1
        val path = Paths.get(group.directory).resolve(name)
        Storage.writeAtomically(path, bytes)
        written += path.toString
        IndexManifestEntry(Manifest.Add, group.partition, group.bucket, DeletionFileCodec.IndexType, name, bytes.length.toLong,
          ranges.size.toLong, Some(ranges), None)
      }
    val cache = mutable.HashMap.empty[String, Array[Byte]]
    def vectorsOf(entry: IndexManifestEntry, path: String, ranges: Seq[DeletionVectorRange]): Seq[(String, DeletionVector)] =
      DeletionFileCodec.read(cache.getOrElseUpdate(path, DeletionFile.readIndexFile(path)), ranges, path)
    val dvEntries = group.existing.filter(_._1.indexType == DeletionFileCodec.IndexType)
    if (group.unaware) {
      val where = dvEntries.flatMap { case (e, p) => e.dvRanges.getOrElse(Nil).map(r => r.dataFile -> (e, p, r)) }.toMap
      val touched = mutable.LinkedHashSet.empty[String]
      val merged = updates.map { case (file, dv) =>
        where.get(file).foreach { case (e, p, r) =>
          touched += e.fileName
          dv.merge(vectorsOf(e, p, Seq(r)).head._2)
        }
        file -> dv
      }
      val updated = merged.map(_._1).toSet
      val unchanged = dvEntries.filter(x => touched.contains(x._1.fileName)).flatMap { case (e, p) =>
        val rest = e.dvRanges.getOrElse(Nil).filterNot(r => updated.contains(r.dataFile))
        (if (rest.isEmpty) Nil else persist(vectorsOf(e, p, rest), rolling = true)) :+ e.copy(kind = Manifest.Delete)
      }
      (unchanged ++ persist(merged, rolling = true), written.toList)
    } else {
      val all = mutable.LinkedHashMap.empty[String, DeletionVector]
      dvEntries.foreach { case (e, p) => vectorsOf(e, p, e.dvRanges.getOrElse(Nil)).foreach { case (f, dv) => all(f) = dv } }
      updates.foreach { case (f, dv) => all.get(f).foreach(dv.merge); all(f) = dv }
      (persist(all.toSeq, rolling = false), written.toList)
    }
  }
}
