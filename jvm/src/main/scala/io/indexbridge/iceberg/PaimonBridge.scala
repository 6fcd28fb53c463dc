package io.indexbridge.iceberg

import java.nio.file.{Path, Paths}

import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.{DeletionVector, DeletionFile => DeletionFileCodec}
import io.indexbridge.paimon.table.{DeletionFile, FileStoreTable}

/** One data file's DV: its range in the deletion file, as the index manifest records it
  * (`dataFile` is the name Paimon's manifest records, `dataPath` its absolute path; a negative
  * `cardinality` is not recorded). */
final case class PaimonDv(dataFile: String, dataPath: String, offset: Int, length: Int, cardinality: Long)

/** A deletion file of a Paimon snapshot with the DVs it holds (paths as strings: Spark ships these). */
final case class PaimonDeletionFile(indexFile: String, path: String, dvs: Seq[PaimonDv])

/** Paimon's deletion vectors moved into Iceberg v3 Puffin files, frames copied as they are.
  *
  * A Paimon 64-bit DV frame is an Iceberg `deletion-vector-v1` blob byte for byte
  * (spec/lakehouse-dv.md §1, §4): each frame of a snapshot's deletion files is checked (magic,
  * CRC, length and cardinality against the index manifest) and copied into a Puffin file, one
  * Puffin file per Paimon deletion file, named after it (`<deletion file>.puffin`), so a rerun
  * writes the same bytes. 32-bit DVs are converted to the 64-bit frame Paimon would write for the
  * same positions (run-optimised). Mirrors `indexbridge.iceberg.bridge`.
  */
object PaimonBridge {

  /** The deletion files of a Paimon snapshot with the DV range of each data file. */
  def deletionFiles(tableDir: String, snapshot: Option[Long] = None): Seq[PaimonDeletionFile] = {
    val table = FileStoreTable.open(tableDir, snapshot)
    val plan = table.plan(None)
    val dataPaths = plan.splits.flatMap(s => s.files.map(f => (s.partition, s.bucket, f.name) -> f.path.toAbsolutePath.toString)).toMap
    plan.indexFiles.filter(_.indexType == DeletionFileCodec.IndexType).map { index =>
      val dvs = index.dvRanges.getOrElse(Nil).map { r =>
        val path = dataPaths.getOrElse((index.partition, index.bucket, r.dataFile),
          throw new IndexFormatException(index.path.toString, r.offset.toLong,
            s"a deletion vector of a live data file of bucket ${index.bucket}, found one of ${r.dataFile}"))
        PaimonDv(r.dataFile, path, r.offset, r.length, r.cardinality)
      }
      PaimonDeletionFile(index.fileName, index.path.toAbsolutePath.toString, dvs)
    }
  }

  /** Each DV's frame as it is in the file (64-bit), or converted to 64-bit (`convert`; else the
    * 32-bit frame), after checking it against the manifest's range; with the decoded DV. */
  def checkedFrames(file: PaimonDeletionFile, data: Array[Byte], convert: Boolean = true): Seq[(PaimonDv, Array[Byte], DeletionVector)] =
    file.dvs.map { r =>
      val dv = DeletionFileCodec.read(data, Seq(io.indexbridge.paimon.DeletionVectorRange(r.dataFile, r.offset, r.length, r.cardinality)),
        file.path).head._2
      val frame =
        if (dv.bitmap64) java.util.Arrays.copyOfRange(data, r.offset, r.offset + r.length)
        else if (convert) Puffin.toBitmap64(dv).serialize()
        else java.util.Arrays.copyOfRange(data, r.offset, r.offset + r.length + 8)
      (r, frame, dv)
    }

  def puffinFileName(file: PaimonDeletionFile): String = s"${file.indexFile}.puffin"

  /** Writes `outDir/<deletion file>.puffin` for one deletion file; returns (data file name,
    * Iceberg DeleteFile) per data file with a DV, in blob order. */
  def writePuffin(file: PaimonDeletionFile, outDir: Path, createdBy: String = Puffin.DefaultCreatedBy): Seq[(String, Puffin.DeleteFile)] =
    if (file.dvs.isEmpty) Nil
    else {
      val checked = checkedFrames(file, DeletionFile.readIndexFile(file.path))
      val names = checked.map { case (r, _, _) => r.dataPath -> r.dataFile }.toMap
      val frames = checked.map { case (r, frame, dv) => Puffin.DvFrame(r.dataPath, frame, dv.cardinality) }
      Puffin.writeDeletionVectors(outDir.toAbsolutePath.resolve(puffinFileName(file)), frames, createdBy)
        .map(d => names(d.referencedDataFile) -> d)
    }

  def writePuffin(file: PaimonDeletionFile, outDir: String): Seq[(String, Puffin.DeleteFile)] = writePuffin(file, Paths.get(outDir))
}
