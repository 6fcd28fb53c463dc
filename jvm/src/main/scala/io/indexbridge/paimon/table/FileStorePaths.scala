package io.indexbridge.paimon.table

import java.nio.file.{Path, Paths}

import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.KeyType

/** Where a table's files are (`FileStorePathFactory`, `DataFilePathFactory`,
  * `PartitionPathUtils`, `InternalRowPartitionComputer`).
  *
  * {{{
  * data file     _EXTERNAL_PATH, or <table>/[<data-file.path-directory>/]<partition path>bucket-<b>/<file>
  * partition     per partition key: escape(name)=escape(value)/  (nothing when unpartitioned)
  * value         null, or a string that is empty or whitespace -> partition.default-name;
  *               else the internal value's toString (partition.legacy-name, the default: DATE
  *               as its day number, DECIMAL plain, TIMESTAMP as LocalDateTime.toString)
  * escape        %XX (upper-case hex) for the chars 0x00-0x1F " # % ' * / : = ? \ 0x7F { } [ ] ^
  * .index file   beside its data file (the directory of _EXTERNAL_PATH, or the bucket directory)
  * index file    _EXTERNAL_PATH, or <bucket dir>/<file> with index-file-in-data-file-dir, else <table>/index/<file>
  * }}}
  */
final class FileStorePaths(tablePath: Path, schema: TableSchema, options: CoreOptions) {
  private val dataRoot = options.dataFilePathDirectory.fold(tablePath)(tablePath.resolve)
  private val partitionTypes: Seq[KeyType] = schema.partitionKeys.map(k => schema.keyTypeOf(k).get)

  /** `partition path + bucket-<b>` of a partition given by its values. */
  def bucketPath(partition: Seq[Any], bucket: Int): Path = {
    val parts = schema.partitionKeys.zip(partitionTypes).zip(partition).map { case ((name, t), v) =>
      s"${FileStorePaths.escape(name)}=${FileStorePaths.escape(partValue(name, t, v))}"
    }
    parts.foldLeft(dataRoot)(_.resolve(_)).resolve(s"bucket-$bucket")
  }

  def dataFile(partition: Seq[Any], bucket: Int, file: DataFileMeta): Path =
    file.externalPath.fold(bucketPath(partition, bucket).resolve(file.fileName))(FileStorePaths.local)

  /** `DataFilePathFactory.toAlignedPath`: an extra file (`.index`) beside its data file. */
  def extraFile(partition: Seq[Any], bucket: Int, file: DataFileMeta, name: String): Path =
    dataFile(partition, bucket, file).resolveSibling(name)

  def indexFile(partition: Seq[Any], bucket: Int, entry: IndexManifestEntry): Path =
    entry.externalPath.fold(
      if (options.indexFileInDataFileDir) bucketPath(partition, bucket).resolve(entry.fileName)
      else tablePath.resolve("index").resolve(entry.fileName)
    )(FileStorePaths.local)

  private def partValue(name: String, t: KeyType, v: Any): String = {
    val text: String = v match {
      case null => null
      case (millis: Long, nanos: Int) =>
        java.time.LocalDateTime.ofEpochSecond(Math.floorDiv(millis, 1000L),
          (Math.floorMod(millis, 1000L) * 1000000L + nanos).toInt, java.time.ZoneOffset.UTC).toString
      case d: java.math.BigDecimal => d.toPlainString
      case _: Array[Byte] => // Paimon names such a directory after byte[].toString, an identity hash
        throw new IndexFormatException(tablePath.toString, 0, s"partition column '$name' of a type other than $t")
      case other => other.toString
    }
    if (text == null || text.forall(Character.isWhitespace)) options.partitionDefaultName else text
  }
}

object FileStorePaths {
  private val Escaped: Set[Char] = ((0 until 0x20).map(_.toChar) ++ "\"#%'*/:=?\\\u007f{}[]^").toSet

  /** `PartitionPathUtils.escapePathName`. */
  def escape(s: String): String = {
    val out = new StringBuilder
    s.foreach(c => if (Escaped.contains(c)) out.append(f"%%${c.toInt}%02X") else out.append(c))
    out.toString
  }

  /** A path or `file:` URI on the local file system. */
  def local(pathOrUri: String): Path =
    if (pathOrUri.startsWith("file:")) Paths.get(java.net.URI.create(pathOrUri)) else Paths.get(pathOrUri)
}
