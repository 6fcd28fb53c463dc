package io.indexbridge.paimon

import java.nio.ByteBuffer
import java.nio.channels.FileChannel
import java.nio.file.{Files, Path, StandardCopyOption, StandardOpenOption}

import scala.collection.mutable.ArrayBuffer
import scala.util.control.NonFatal

import io.indexbridge.bytes.ByteReader

/** Where one DV sits in a deletion file: Paimon's `DeletionVectorMeta` (§2.5). `offset` points at
  * the frame's size field; `length` is [[DeletionVector.indexMetaLength]]; a negative
  * `cardinality` means "not recorded". */
final case class DeletionVectorRange(dataFile: String, offset: Int, length: Int, cardinality: Long)

/** The manifest side of one deletion file (Paimon's `IndexFileMeta`, index type
  * `DELETION_VECTORS`): `rowCount` is the number of DVs in the file. */
final case class DeletionFileMeta(fileName: String, fileSize: Long, rowCount: Int, ranges: Seq[DeletionVectorRange])

/** Deletion files, the DV index files of Paimon (spec/paimon.md §2.4–2.5).
  *
  * {{{
  * u8 version = 1
  * DV frame (DeletionVector layout) of data file #1
  * DV frame of data file #2
  * …                                no count, names or footer: the manifest's ranges say which
  *                                  frame belongs to which data file
  * }}}
  *
  * Frames appear in the iteration order of the writer's map — for `BucketedDvMaintainer` a
  * `java.util.HashMap`. `writeSingleFile` writes everything into one file (an empty map gives the
  * single byte `01`); `writeWithRolling` closes a file as soon as its size, version byte
  * included, exceeds the target size, and writes no file for an empty map.
  */
object DeletionFile {
  val IndexType = "DELETION_VECTORS"
  val Version: Byte = 1

  /** The order a `java.util.HashMap` filled by `put` in the given order iterates the names,
    * which is the frame order `BucketedDvMaintainer` produces. */
  def order(dataFiles: Seq[String]): Seq[String] =
    JavaOrder.afterPuts(dataFiles)(JavaOrder.javaStringHash, Some(JavaOrder.stringCompareTo))

  /** The bytes and ranges of each file Paimon writes for `dvs`.
    *
    * @param targetSize     < 0: one file (`writeSingleFile`); otherwise rolling at this many bytes
    *                       (`writeWithRolling`)
    * @param hashMapOrder   frames in [[order]] of the names; false: in the given order
    */
  def encode(
      dvs: Seq[(String, DeletionVector)],
      targetSize: Long = -1L,
      hashMapOrder: Boolean = true
  ): Seq[(Array[Byte], Seq[DeletionVectorRange])] = {
    val names = dvs.map(_._1)
    val duplicates = names.diff(names.distinct).distinct
    require(duplicates.isEmpty, s"data files appear more than once: ${duplicates.mkString(", ")}")
    val ordered =
      if (hashMapOrder) {
        val byName = dvs.toMap
        order(names).map(name => name -> byName(name))
      } else dvs
    val sized = ordered.map { case (name, dv) => (name, dv, dv.serializedSize) }

    if (targetSize < 0) Seq(writeFile(sized))
    else {
      val files = ArrayBuffer.empty[Seq[(String, DeletionVector, Int)]]
      val current = ArrayBuffer.empty[(String, DeletionVector, Int)]
      var written = 1L
      for (entry <- sized) {
        current += entry
        written += entry._3
        if (written > targetSize) {
          files += current.toList
          current.clear()
          written = 1L
        }
      }
      if (current.nonEmpty) files += current.toList
      files.map(writeFile).toList
    }
  }

  /** Writes the files of [[encode]] into `directory` and returns their manifest entries. Each file
    * is written under a temporary name in the same directory, flushed, and moved into place
    * atomically; on any failure every file of this call is removed. */
  def write(
      directory: Path,
      dvs: Seq[(String, DeletionVector)],
      targetSize: Long = -1L,
      hashMapOrder: Boolean = true,
      fileName: Int => String = n => s"index-${java.util.UUID.randomUUID()}-$n"
  ): Seq[DeletionFileMeta] = {
    val files = encode(dvs, targetSize, hashMapOrder).zipWithIndex.map { case ((bytes, ranges), n) =>
      (directory.resolve(fileName(n)), bytes, ranges)
    }
    Files.createDirectories(directory)
    val created = ArrayBuffer.empty[Path]
    try {
      val temporaries = files.map { case (target, bytes, _) =>
        val tmp = directory.resolve(s".${target.getFileName}.${java.util.UUID.randomUUID()}.tmp")
        val channel = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)
        created += tmp
        try {
          val buffer = ByteBuffer.wrap(bytes)
          while (buffer.hasRemaining) channel.write(buffer)
          channel.force(true)
        } finally channel.close()
        tmp
      }
      for ((tmp, (target, _, _)) <- temporaries.zip(files)) {
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE)
        created += target
      }
      files.map { case (target, bytes, ranges) =>
        DeletionFileMeta(target.getFileName.toString, bytes.length.toLong, ranges.length, ranges)
      }
    } catch {
      case NonFatal(e) =>
        created.foreach(p => scala.util.Try(Files.deleteIfExists(p)))
        throw e
    }
  }

  /** The DV of each range (§2.4 reader): the version byte must be 1, every frame must have the
    * recorded length (and cardinality, when recorded). */
  def read(
      bytes: Array[Byte],
      ranges: Seq[DeletionVectorRange],
      source: String,
      verifyCrc: Boolean = true
  ): Seq[(String, DeletionVector)] = {
    checkVersion(bytes, source)
    ranges.map { range =>
      val reader = ByteReader(bytes, source, range.offset)
      if (range.offset < 1) reader.fail(s"a deletion vector offset >= 1 (after the version byte) for ${range.dataFile}")
      if (range.length < 0) reader.fail(s"a deletion vector length >= 0 for ${range.dataFile}, found ${range.length}")
      val dv = DeletionVector.readFrame(reader, range.length, verifyCrc)
      if (range.cardinality >= 0 && dv.cardinality != range.cardinality)
        reader.fail(
          s"${range.cardinality} deleted positions for ${range.dataFile} (index manifest), frame holds ${dv.cardinality}",
          range.offset.toLong
        )
      range.dataFile -> dv
    }
  }

  /** Every frame with its offset, walking the file from offset 1 to its end (for inspection;
    * writers and readers go by the manifest's ranges). */
  def scan(bytes: Array[Byte], source: String, verifyCrc: Boolean = true): Seq[(Int, DeletionVector)] = {
    checkVersion(bytes, source)
    val reader = ByteReader(bytes, source, 1)
    val frames = ArrayBuffer.empty[(Int, DeletionVector)]
    while (reader.remaining > 0) {
      val at = reader.pos
      frames += at -> DeletionVector.readFrame(reader, -1, verifyCrc)
    }
    frames.toList
  }

  private def checkVersion(bytes: Array[Byte], source: String): Unit = {
    val reader = ByteReader(bytes, source)
    val version = reader.u8("deletion file version")
    if (version != Version) reader.fail(s"deletion file version $Version, found $version", 0L)
  }

  private def writeFile(entries: Seq[(String, DeletionVector, Int)]): (Array[Byte], Seq[DeletionVectorRange]) = {
    val total = 1L + entries.map(_._3.toLong).sum
    if (total > Int.MaxValue) throw new IllegalStateException(s"a deletion file of $total bytes exceeds 2 GiB")
    val out = new Array[Byte](total.toInt)
    out(0) = Version
    var offset = 1
    val ranges = entries.map { case (name, dv, _) =>
      val range = DeletionVectorRange(name, offset, dv.indexMetaLength, dv.cardinality)
      offset += dv.writeFrame(out, offset)
      range
    }
    (out, ranges)
  }
}
