package io.indexbridge.paimon.table

import java.nio.ByteBuffer
import java.nio.file.{Files, NoSuchFileException, Path}

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.DeletionVectorRange
import org.apache.avro.file.{DataFileReader, SeekableByteArrayInput}
import org.apache.avro.generic.{GenericDatumReader, GenericRecord}

/** Min/max rows (serialized BinaryRows) and null counts of some columns (`SimpleStats`). */
final case class SimpleStats(minValues: Array[Byte], maxValues: Array[Byte], nullCounts: Option[IndexedSeq[Option[Long]]])

/** One manifest of a manifest list (`ManifestFileMeta`). */
final case class ManifestFileMeta(
    fileName: String,
    fileSize: Long,
    numAddedFiles: Long,
    numDeletedFiles: Long,
    partitionStats: SimpleStats,
    schemaId: Long,
    minBucket: Option[Int] = None,
    maxBucket: Option[Int] = None,
    minLevel: Option[Int] = None,
    maxLevel: Option[Int] = None,
    minRowId: Option[Long] = None,
    maxRowId: Option[Long] = None)

/** A data file as a manifest describes it (`DataFileMeta`). */
final case class DataFileMeta(
    fileName: String,
    fileSize: Long,
    rowCount: Long,
    minKey: Array[Byte],
    maxKey: Array[Byte],
    keyStats: SimpleStats,
    valueStats: SimpleStats,
    minSequenceNumber: Long,
    maxSequenceNumber: Long,
    schemaId: Long,
    level: Int,
    extraFiles: Seq[String],
    deleteRowCount: Option[Long],
    embeddedIndex: Option[Array[Byte]],
    fileSource: Option[Int],
    valueStatsCols: Option[Seq[String]],
    externalPath: Option[String],
    firstRowId: Option[Long],
    writeCols: Option[Seq[String]],
    creationTime: Option[Long] = None) {

  /** The extra file holding this file's file index (`<file>.index`), if any. */
  def indexFile: Option[String] = extraFiles.find(_.endsWith(".index"))
}

/** A file change of a manifest (`ManifestEntry`): `kind` is [[Manifest.Add]] or [[Manifest.Delete]];
  * `partition` is the serialized BinaryRow. */
final case class ManifestEntry(kind: Int, partition: Array[Byte], bucket: Int, totalBuckets: Int, file: DataFileMeta) {

  /** What makes two entries the same file (`FileEntry.Identifier`). */
  def identifier: Manifest.Identifier =
    Manifest.Identifier(ByteBuffer.wrap(partition), bucket, file.level, file.fileName, file.extraFiles,
      file.embeddedIndex.map(ByteBuffer.wrap), file.externalPath)
}

/** An index file live in a snapshot (`IndexManifestEntry` + `IndexFileMeta`): index type `HASH`
  * or `DELETION_VECTORS` (then `dvRanges` says where each data file's vector sits). */
final case class IndexManifestEntry(
    kind: Int,
    partition: Array[Byte],
    bucket: Int,
    indexType: String,
    fileName: String,
    fileSize: Long,
    rowCount: Long,
    dvRanges: Option[Seq[DeletionVectorRange]],
    externalPath: Option[String])

/** Paimon's manifest lists, manifests and index manifests: Avro object container files read with
  * the Apache Avro on Spark's classpath (`ManifestList`, `ManifestFile`, `IndexManifestFile`;
  * records as `ManifestFileMetaSerializer`, `ManifestEntrySerializer` + `DataFileMetaSerializer`
  * and `IndexManifestEntrySerializer` write them, zstd-compressed by default). Python's twin is
  * `indexbridge.paimon.table.manifest`.
  *
  * {{{
  * Manifest list (manifest/manifest-list-…), one record per manifest:
  *   _VERSION int, _FILE_NAME string, _FILE_SIZE long, _NUM_ADDED_FILES long,
  *   _NUM_DELETED_FILES long, _PARTITION_STATS {_MIN_VALUES bytes, _MAX_VALUES bytes,
  *   _NULL_COUNTS [long?]?}, _SCHEMA_ID long, _MIN_BUCKET/_MAX_BUCKET int?, _MIN_LEVEL/_MAX_LEVEL int?, …
  *
  * Manifest (manifest/manifest-…), one record per file change:
  *   _VERSION int, _KIND int (0 ADD, 1 DELETE), _PARTITION bytes (serialized BinaryRow),
  *   _BUCKET int, _TOTAL_BUCKETS int, _FILE {
  *     _FILE_NAME, _FILE_SIZE, _ROW_COUNT, _MIN_KEY bytes, _MAX_KEY bytes,
  *     _KEY_STATS {…}, _VALUE_STATS {…}, _MIN_SEQUENCE_NUMBER, _MAX_SEQUENCE_NUMBER, _SCHEMA_ID,
  *     _LEVEL int, _EXTRA_FILES [string], _CREATION_TIME timestamp-millis?, _DELETE_ROW_COUNT long?,
  *     _EMBEDDED_FILE_INDEX bytes?, _FILE_SOURCE int?, _VALUE_STATS_COLS [string]?,
  *     _EXTERNAL_PATH string?, _FIRST_ROW_ID long?, _WRITE_COLS [string]? }
  *
  * Index manifest (manifest/index-manifest-…), the index files live in a snapshot (all ADD):
  *   _VERSION int, _KIND int, _PARTITION bytes, _BUCKET int, _INDEX_TYPE string ("HASH",
  *   "DELETION_VECTORS", …), _FILE_NAME string, _FILE_SIZE long, _ROW_COUNT long,
  *   _DELETIONS_VECTORS_RANGES [{f0 string data file, f1 int offset, f2 int length,
  *   _CARDINALITY long?}]?, _EXTERNAL_PATH string?, _GLOBAL_INDEX {…}?
  * }}}
  *
  * Fields added by later Paimon versions are read when present; older files simply lack them.
  */
object Manifest {
  val Add = 0
  val Delete = 1

  /** `FileEntry.Identifier` (ByteBuffers compare by content). */
  final case class Identifier(
      partition: ByteBuffer,
      bucket: Int,
      level: Int,
      fileName: String,
      extraFiles: Seq[String],
      embeddedIndex: Option[ByteBuffer],
      externalPath: Option[String])

  private def records(path: Path): Iterator[GenericRecord] = {
    val bytes =
      try Files.readAllBytes(path)
      catch { case _: NoSuchFileException => throw new IndexFormatException(path.toString, 0, "the file to exist (the snapshot references it)") }
    val out = mutable.ArrayBuffer.empty[GenericRecord]
    try {
      val reader = new DataFileReader[GenericRecord](new SeekableByteArrayInput(bytes), new GenericDatumReader[GenericRecord]())
      try {
        while (reader.hasNext) out += reader.next()
        // Avro takes a block cut short for the end of the file: the last block must end the file
        if (reader.previousSync() != bytes.length)
          throw new IndexFormatException(path.toString, reader.previousSync(),
            s"the next Avro data block of the file's ${bytes.length} bytes (the file ends inside a block)")
      } finally reader.close()
    } catch {
      case e: IndexFormatException => throw e
      case NonFatal(e) => // Avro reports damage as IOException, AvroRuntimeException, EOFException, …
        throw new IndexFormatException(path.toString, 0, s"an Avro object container file: ${e.getClass.getSimpleName}: ${e.getMessage}")
    }
    out.iterator
  }

  /** Each record built by `build`; a record without the fields Paimon writes is a format error. */
  private def checked[T](path: Path)(build: GenericRecord => T): Seq[T] =
    records(path).zipWithIndex.map { case (r, i) =>
      try build(r)
      catch {
        case NonFatal(e) if !e.isInstanceOf[IndexFormatException] =>
          throw new IndexFormatException(path.toString, 0, s"record $i: the fields Paimon writes (${e.getClass.getSimpleName}: ${e.getMessage})")
      }
    }.toList

  // -- field access: a missing required field or a wrong type throws, and `checked` names the record

  private def field(r: GenericRecord, name: String): AnyRef =
    if (r.getSchema.getField(name) == null) throw new NoSuchElementException(s"no field $name") else r.get(name)

  private def required(r: GenericRecord, name: String): AnyRef =
    Option(field(r, name)).getOrElse(throw new IllegalArgumentException(s"$name is null"))

  private def optionalField(r: GenericRecord, name: String): Option[AnyRef] =
    if (r.getSchema.getField(name) == null) None else Option(r.get(name))

  private def int(r: GenericRecord, name: String): Int = required(r, name).asInstanceOf[java.lang.Integer].intValue
  private def long(r: GenericRecord, name: String): Long = required(r, name).asInstanceOf[java.lang.Long].longValue
  private def string(r: GenericRecord, name: String): String = required(r, name).toString
  private def bytes(v: AnyRef): Array[Byte] = {
    val b = v.asInstanceOf[ByteBuffer].duplicate()
    val out = new Array[Byte](b.remaining)
    b.get(out)
    out
  }
  private def strings(v: AnyRef): Seq[String] = v.asInstanceOf[java.util.List[AnyRef]].asScala.map(_.toString).toList
  private def record(v: AnyRef): GenericRecord = v.asInstanceOf[GenericRecord]

  private def stats(r: GenericRecord): SimpleStats =
    SimpleStats(bytes(required(r, "_MIN_VALUES")), bytes(required(r, "_MAX_VALUES")),
      optionalField(r, "_NULL_COUNTS").map(_.asInstanceOf[java.util.List[java.lang.Long]].asScala
        .map(c => Option(c).map(_.longValue)).toIndexedSeq))

  private def kind(r: GenericRecord): Int = {
    val k = int(r, "_KIND")
    if (k != Add && k != Delete) throw new IllegalArgumentException(s"_KIND $k is neither ADD (0) nor DELETE (1)")
    k
  }

  def readManifestList(path: Path): Seq[ManifestFileMeta] = checked(path) { r =>
    ManifestFileMeta(string(r, "_FILE_NAME"), long(r, "_FILE_SIZE"), long(r, "_NUM_ADDED_FILES"),
      long(r, "_NUM_DELETED_FILES"), stats(record(required(r, "_PARTITION_STATS"))), long(r, "_SCHEMA_ID"),
      optionalInt(r, "_MIN_BUCKET"), optionalInt(r, "_MAX_BUCKET"), optionalInt(r, "_MIN_LEVEL"), optionalInt(r, "_MAX_LEVEL"),
      optionalLong(r, "_MIN_ROW_ID"), optionalLong(r, "_MAX_ROW_ID"))
  }

  private def optionalInt(r: GenericRecord, name: String): Option[Int] =
    optionalField(r, name).map(_.asInstanceOf[java.lang.Integer].intValue)
  private def optionalLong(r: GenericRecord, name: String): Option[Long] =
    optionalField(r, name).map(_.asInstanceOf[java.lang.Long].longValue)

  def readManifest(path: Path): Seq[ManifestEntry] = checked(path) { r =>
    val f = record(required(r, "_FILE"))
    val file = DataFileMeta(
      fileName = string(f, "_FILE_NAME"),
      fileSize = long(f, "_FILE_SIZE"),
      rowCount = long(f, "_ROW_COUNT"),
      minKey = bytes(required(f, "_MIN_KEY")),
      maxKey = bytes(required(f, "_MAX_KEY")),
      keyStats = stats(record(required(f, "_KEY_STATS"))),
      valueStats = stats(record(required(f, "_VALUE_STATS"))),
      minSequenceNumber = long(f, "_MIN_SEQUENCE_NUMBER"),
      maxSequenceNumber = long(f, "_MAX_SEQUENCE_NUMBER"),
      schemaId = long(f, "_SCHEMA_ID"),
      level = int(f, "_LEVEL"),
      extraFiles = optionalField(f, "_EXTRA_FILES").fold(Seq.empty[String])(strings),
      deleteRowCount = optionalField(f, "_DELETE_ROW_COUNT").map(_.asInstanceOf[java.lang.Long].longValue),
      embeddedIndex = optionalField(f, "_EMBEDDED_FILE_INDEX").map(bytes),
      fileSource = optionalField(f, "_FILE_SOURCE").map(_.asInstanceOf[java.lang.Integer].intValue),
      valueStatsCols = optionalField(f, "_VALUE_STATS_COLS").map(strings),
      externalPath = optionalField(f, "_EXTERNAL_PATH").map(_.toString),
      firstRowId = optionalField(f, "_FIRST_ROW_ID").map(_.asInstanceOf[java.lang.Long].longValue),
      writeCols = optionalField(f, "_WRITE_COLS").map(strings),
      creationTime = optionalLong(f, "_CREATION_TIME")
    )
    ManifestEntry(kind(r), bytes(required(r, "_PARTITION")), int(r, "_BUCKET"), int(r, "_TOTAL_BUCKETS"), file)
  }

  /** The entries of an index manifest. Paimon rewrites the whole list at each commit
    * (`IndexManifestFileHandler`), so every entry is an ADD. */
  def readIndexManifest(path: Path): Seq[IndexManifestEntry] = checked(path) { r =>
    val k = kind(r)
    if (k != Add) throw new IllegalArgumentException("an index manifest holds ADD entries only, found a DELETE")
    val ranges = optionalField(r, "_DELETIONS_VECTORS_RANGES").map(_.asInstanceOf[java.util.List[GenericRecord]].asScala.map { d =>
      DeletionVectorRange(string(d, "f0"), int(d, "f1"), int(d, "f2"),
        optionalField(d, "_CARDINALITY").map(_.asInstanceOf[java.lang.Long].longValue).getOrElse(-1L))
    }.toList)
    IndexManifestEntry(k, bytes(required(r, "_PARTITION")), int(r, "_BUCKET"), string(r, "_INDEX_TYPE"),
      string(r, "_FILE_NAME"), long(r, "_FILE_SIZE"), long(r, "_ROW_COUNT"), ranges, optionalField(r, "_EXTERNAL_PATH").map(_.toString))
  }

  /** ADD and DELETE entries applied in order, as `FileEntry.mergeEntries` does: a DELETE removes
    * the file an earlier ADD added; what is left and added is live, in insertion order. */
  def mergeEntries(entries: Seq[ManifestEntry], source: String): Seq[ManifestEntry] = {
    val live = mutable.LinkedHashMap.empty[Identifier, ManifestEntry] // ADDs, and DELETEs of files added earlier
    for (e <- entries) {
      val key = e.identifier
      if (e.kind == Add) {
        if (live.contains(key)) throw new IndexFormatException(source, 0, s"each file added once; ${key.fileName} is added again")
        live(key) = e
      } else if (live.contains(key)) live.remove(key)
      else live(key) = e
    }
    live.valuesIterator.filter(_.kind == Add).toList
  }
}
