package org.apache.spark.sql.indexbridge

import java.nio.file.{Files, Path, Paths, StandardCopyOption}
import java.util.UUID

import org.apache.spark.paths.SparkPath
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.{FileFormat, PartitionedFile}
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.types.StructType

/** Whole Paimon data files read and written inside Spark tasks.
  *
  * {{{
  * reader   Spark's own Parquet reader (ParquetFileFormat, vectorized where Spark can), built
  *          on the driver for one physical schema and applied in tasks to one whole file at a
  *          time: rows in file order (a file is never split across tasks), columns by name
  * output   a file is written under a hidden temporary name in its directory and renamed into
  *          place, so a retried or speculative task leaves one file with the same bytes
  * }}}
  */
object PaimonDataFiles {

  /** A serializable function from a local Parquet file path to its rows (with `schema`'s
    * columns, found by name; rows are reused: copy what you keep). */
  def parquetRows(spark: SparkSession, schema: StructType): String => Iterator[InternalRow] = {
    val session = spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession]
    val read = new ParquetFileFormat().buildReaderWithPartitionValues(session, schema, new StructType(), schema, Nil,
      Map(FileFormat.OPTION_RETURNING_BATCH -> "false"), session.sessionState.newHadoopConf())
    path => {
      val size = Files.size(Paths.get(path))
      read(PartitionedFile(InternalRow.empty, SparkPath.fromPathString(path), 0L, size, Array.empty[String], 0L, size, Map.empty))
    }
  }

  /** Writes `bytes` to `target` through a temporary file in its directory renamed over it. */
  def writeAtomically(target: Path, bytes: Array[Byte]): Unit = {
    Files.createDirectories(target.getParent)
    val tmp = target.resolveSibling(s".${target.getFileName}.${UUID.randomUUID()}.tmp")
    try {
      Files.write(tmp, bytes)
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING)
    } finally Files.deleteIfExists(tmp)
  }
}
