package io.indexbridge.paimon.table

import java.io.ByteArrayOutputStream
import java.nio.ByteBuffer
import java.nio.file.{Files, Path, StandardCopyOption}
import java.util.UUID

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.{BinaryRowBuilder, KeyType}
import org.apache.avro.Schema
import org.apache.avro.file.{CodecFactory, DataFileWriter}
import org.apache.avro.generic.{GenericData, GenericDatumWriter, GenericRecord}

/** The writing half of [[Manifest]]: manifests, manifest lists and index manifests as Paimon
  * 1.4.2 writes them (`ManifestFile`, `ManifestList`, `IndexManifestFile` over `AvroFileFormat`),
  * with the same Apache Avro the reader uses.
  *
  * {{{
  * container   Avro object container file, codec `manifest.compression` (default zstd, level
  *             `file.compression.zstd-level`, default 1), sync interval and block flushing as
  *             Avro's defaults (Paimon does not change them)
  * schemas     record "record" in namespace org.apache.paimon.avro.generated, nested records
  *             "record_" + path of field names (record__FILE__KEY_STATS), nullable fields as
  *             ["null", T] with default null, nullable array items ["null", T]; the exact
  *             schema texts are below, copied from files Paimon wrote
  * _VERSION    2 in manifests and manifest lists, 1 in index manifests
  * names       manifest-<uuid>-<n>, manifest-list-<uuid>-<n>, index-manifest-<uuid>-<n>: one uuid
  *             per kind and writer (= per commit attempt), n counting from 0
  * manifest    rolls to a new file when, checked every 1000 entries, the bytes written reach
  *             `manifest.target-file-size` (8 MB); an empty list of entries writes no file
  * its meta    _NUM_ADDED/_NUM_DELETED_FILES; _PARTITION_STATS = full min/max/null counts over
  *             the entries' partitions (BinaryRows of the partition type); _SCHEMA_ID = the
  *             largest schema id of the entries' files (the latest schema id when empty);
  *             _MIN/_MAX_BUCKET, _MIN/_MAX_LEVEL; _MIN/_MAX_ROW_ID null (no row tracking)
  * }}}
  */
object ManifestWriter {
  val ManifestVersion = 2
  val IndexManifestVersion = 1

  val ManifestEntrySchema: Schema = parse(
    """{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},{"name":"_PARTITION","type":"bytes"},{"name":"_BUCKET","type":"int"},{"name":"_TOTAL_BUCKETS","type":"int"},{"name":"_FILE","type":{"type":"record","name":"record__FILE","fields":[{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},{"name":"_MIN_KEY","type":"bytes"},{"name":"_MAX_KEY","type":"bytes"},{"name":"_KEY_STATS","type":{"type":"record","name":"record__FILE__KEY_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}},{"name":"_VALUE_STATS","type":{"type":"record","name":"record__FILE__VALUE_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}},{"name":"_MIN_SEQUENCE_NUMBER","type":"long"},{"name":"_MAX_SEQUENCE_NUMBER","type":"long"},{"name":"_SCHEMA_ID","type":"long"},{"name":"_LEVEL","type":"int"},{"name":"_EXTRA_FILES","type":{"type":"array","items":"string"}},{"name":"_CREATION_TIME","type":["null",{"type":"long","logicalType":"timestamp-millis"}],"default":null},{"name":"_DELETE_ROW_COUNT","type":["null","long"],"default":null},{"name":"_EMBEDDED_FILE_INDEX","type":["null","bytes"],"default":null},{"name":"_FILE_SOURCE","type":["null","int"],"default":null},{"name":"_VALUE_STATS_COLS","type":["null",{"type":"array","items":"string"}],"default":null},{"name":"_EXTERNAL_PATH","type":["null","string"],"default":null},{"name":"_FIRST_ROW_ID","type":["null","long"],"default":null},{"name":"_WRITE_COLS","type":["null",{"type":"array","items":"string"}],"default":null}]}}]}""")

  val ManifestFileMetaSchema: Schema = parse(
    """{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"},{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_NUM_ADDED_FILES","type":"long"},{"name":"_NUM_DELETED_FILES","type":"long"},{"name":"_PARTITION_STATS","type":{"type":"record","name":"record__PARTITION_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}},{"name":"_SCHEMA_ID","type":"long"},{"name":"_MIN_BUCKET","type":["null","int"],"default":null},{"name":"_MAX_BUCKET","type":["null","int"],"default":null},{"name":"_MIN_LEVEL","type":["null","int"],"default":null},{"name":"_MAX_LEVEL","type":["null","int"],"default":null},{"name":"_MIN_ROW_ID","type":["null","long"],"default":null},{"name":"_MAX_ROW_ID","type":["null","long"],"default":null}]}""")

  val IndexManifestEntrySchema: Schema = parse(
    """{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},{"name":"_PARTITION","type":"bytes"},{"name":"_BUCKET","type":"int"},{"name":"_INDEX_TYPE","type":"string"},{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},{"name":"_DELETIONS_VECTORS_RANGES","type":["null",{"type":"array","items":["null",{"type":"record","name":"record__DELETIONS_VECTORS_RANGES","fields":[{"name":"f0","type":"string"},{"name":"f1","type":"int"},{"name":"f2","type":"int"},{"name":"_CARDINALITY","type":["null","long"],"default":null}]}]}],"default":null},{"name":"_EXTERNAL_PATH","type":["null","string"],"default":null},{"name":"_GLOBAL_INDEX","type":["null",{"type":"record","name":"record__GLOBAL_INDEX","fields":[{"name":"_ROW_RANGE_START","type":"long"},{"name":"_ROW_RANGE_END","type":"long"},{"name":"_INDEX_FIELD_ID","type":"int"},{"name":"_EXTRA_FIELD_IDS","type":["null",{"type":"array","items":"int"}],"default":null},{"name":"_INDEX_META","type":["null","bytes"],"default":null}]}],"default":null}]}""")

  private def parse(text: String): Schema = new Schema.Parser().parse(text)

  private val CheckRollingEvery = 1000 // RollingFileWriterImpl.CHECK_ROLLING_RECORD_CNT

  /** The codec of `manifest.compression` (`zstd` at `file.compression.zstd-level`, else by name). */
  def codec(options: Map[String, String]): CodecFactory = {
    val name = options.getOrElse("manifest.compression", "zstd").trim.toLowerCase(java.util.Locale.ROOT)
    if (name == "zstd") CodecFactory.zstandardCodec(options.get("file.compression.zstd-level").fold(1)(_.trim.toInt))
    else if (name == "none" || name == "null" || name == "uncompressed") CodecFactory.nullCodec()
    else CodecFactory.fromString(name)
  }

  /** Refuses tables whose manifests are not Avro (`manifest.format`). */
  def checkFormat(options: Map[String, String], source: String): Unit =
    options.get("manifest.format").map(_.trim.toLowerCase(java.util.Locale.ROOT)).filter(_ != "avro").foreach { f =>
      throw new IndexFormatException(source, 0, s"manifest.format = avro (writing $f manifests is not supported)")
    }

  // -- records

  private def bytes(b: Array[Byte]): ByteBuffer = ByteBuffer.wrap(b)
  private def strings(s: Seq[String]): java.util.List[CharSequence] = s.map(x => x: CharSequence).asJava

  private def statsRecord(schema: Schema, s: SimpleStats): GenericRecord = {
    val r = new GenericData.Record(schema)
    r.put("_MIN_VALUES", bytes(s.minValues))
    r.put("_MAX_VALUES", bytes(s.maxValues))
    r.put("_NULL_COUNTS", s.nullCounts.map(_.map(_.fold[java.lang.Long](null)(Long.box)).asJava).orNull)
    r
  }

  private def fieldSchema(schema: Schema, name: String): Schema = {
    val s = schema.getField(name).schema()
    if (s.getType == Schema.Type.UNION) s.getTypes.asScala.find(_.getType != Schema.Type.NULL).get else s
  }

  /** A record of a file change (manifest or index manifest entry): its first four fields. */
  private def change(schema: Schema, version: Int, kind: Int, partition: Array[Byte], bucket: Int): GenericData.Record = {
    val r = new GenericData.Record(schema)
    r.put("_VERSION", version)
    r.put("_KIND", kind)
    r.put("_PARTITION", bytes(partition))
    r.put("_BUCKET", bucket)
    r
  }

  def manifestEntryRecord(e: ManifestEntry): GenericRecord = {
    val r = change(ManifestEntrySchema, ManifestVersion, e.kind, e.partition, e.bucket)
    r.put("_TOTAL_BUCKETS", e.totalBuckets)
    val fs = fieldSchema(ManifestEntrySchema, "_FILE")
    val f = new GenericData.Record(fs)
    val m = e.file
    f.put("_FILE_NAME", m.fileName)
    f.put("_FILE_SIZE", m.fileSize)
    f.put("_ROW_COUNT", m.rowCount)
    f.put("_MIN_KEY", bytes(m.minKey))
    f.put("_MAX_KEY", bytes(m.maxKey))
    f.put("_KEY_STATS", statsRecord(fieldSchema(fs, "_KEY_STATS"), m.keyStats))
    f.put("_VALUE_STATS", statsRecord(fieldSchema(fs, "_VALUE_STATS"), m.valueStats))
    f.put("_MIN_SEQUENCE_NUMBER", m.minSequenceNumber)
    f.put("_MAX_SEQUENCE_NUMBER", m.maxSequenceNumber)
    f.put("_SCHEMA_ID", m.schemaId)
    f.put("_LEVEL", m.level)
    f.put("_EXTRA_FILES", strings(m.extraFiles))
    f.put("_CREATION_TIME", m.creationTime.map(Long.box).orNull)
    f.put("_DELETE_ROW_COUNT", m.deleteRowCount.map(Long.box).orNull)
    f.put("_EMBEDDED_FILE_INDEX", m.embeddedIndex.map(bytes).orNull)
    f.put("_FILE_SOURCE", m.fileSource.map(Int.box).orNull)
    f.put("_VALUE_STATS_COLS", m.valueStatsCols.map(strings).orNull)
    f.put("_EXTERNAL_PATH", m.externalPath.orNull)
    f.put("_FIRST_ROW_ID", m.firstRowId.map(Long.box).orNull)
    f.put("_WRITE_COLS", m.writeCols.map(strings).orNull)
    r.put("_FILE", f)
    r
  }

  def manifestFileMetaRecord(m: ManifestFileMeta): GenericRecord = {
    val r = new GenericData.Record(ManifestFileMetaSchema)
    r.put("_VERSION", ManifestVersion)
    r.put("_FILE_NAME", m.fileName)
    r.put("_FILE_SIZE", m.fileSize)
    r.put("_NUM_ADDED_FILES", m.numAddedFiles)
    r.put("_NUM_DELETED_FILES", m.numDeletedFiles)
    r.put("_PARTITION_STATS", statsRecord(fieldSchema(ManifestFileMetaSchema, "_PARTITION_STATS"), m.partitionStats))
    r.put("_SCHEMA_ID", m.schemaId)
    r.put("_MIN_BUCKET", m.minBucket.map(Int.box).orNull)
    r.put("_MAX_BUCKET", m.maxBucket.map(Int.box).orNull)
    r.put("_MIN_LEVEL", m.minLevel.map(Int.box).orNull)
    r.put("_MAX_LEVEL", m.maxLevel.map(Int.box).orNull)
    r.put("_MIN_ROW_ID", m.minRowId.map(Long.box).orNull)
    r.put("_MAX_ROW_ID", m.maxRowId.map(Long.box).orNull)
    r
  }

  def indexManifestEntryRecord(e: IndexManifestEntry): GenericRecord = {
    val r = change(IndexManifestEntrySchema, IndexManifestVersion, e.kind, e.partition, e.bucket)
    r.put("_INDEX_TYPE", e.indexType)
    r.put("_FILE_NAME", e.fileName)
    r.put("_FILE_SIZE", e.fileSize)
    r.put("_ROW_COUNT", e.rowCount)
    val rangeSchema = fieldSchema(IndexManifestEntrySchema, "_DELETIONS_VECTORS_RANGES").getElementType.getTypes.asScala
      .find(_.getType != Schema.Type.NULL).get
    r.put("_DELETIONS_VECTORS_RANGES", e.dvRanges.map(_.map { d =>
      val x = new GenericData.Record(rangeSchema)
      x.put("f0", d.dataFile)
      x.put("f1", d.offset)
      x.put("f2", d.length)
      x.put("_CARDINALITY", if (d.cardinality < 0) null else Long.box(d.cardinality))
      x: AnyRef
    }.asJava).orNull)
    r.put("_EXTERNAL_PATH", e.externalPath.orNull)
    r.put("_GLOBAL_INDEX", null)
    r
  }

  /** An Avro object container file of `records`; `roll` (checked every 1000 records with the
    * bytes written so far) closes it early: the records not written are returned. */
  def container(schema: Schema, records: Iterator[GenericRecord], codec: CodecFactory, rollAt: Long = Long.MaxValue): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val writer = new DataFileWriter[GenericRecord](new GenericDatumWriter[GenericRecord](schema))
    writer.setCodec(codec)
    writer.setFlushOnEveryBlock(false)
    writer.create(schema, out)
    try {
      var n = 0L
      var rolled = false
      while (!rolled && records.hasNext) {
        writer.append(records.next())
        n += 1
        if (n % CheckRollingEvery == 0 && out.size() >= rollAt) rolled = true
      }
    } finally writer.close()
    out.toByteArray
  }
}

/** The metadata files of one commit attempt, written into `<table>/manifest/` (each through a
  * temporary file renamed into place) and remembered so that a failed attempt can remove them. */
final class ManifestFiles(tablePath: Path, partitionTypes: Seq[KeyType], options: Map[String, String], latestSchemaId: Long) {
  import ManifestWriter._

  val directory: Path = tablePath.resolve("manifest")
  private val codecFactory = codec(options)
  private val targetSize: Long = options.get("manifest.target-file-size").fold(8L << 20)(io.indexbridge.paimon.fileindex.BitmapIndex.memorySize)
  private val manifestUuid, listUuid, indexUuid = UUID.randomUUID().toString
  private var manifests, lists, indexes = 0
  private val created = mutable.ArrayBuffer.empty[Path]

  /** Every file this writer created, in order. */
  def written: Seq[Path] = created.toList

  private def write(name: String, bytes: Array[Byte]): Long = {
    Files.createDirectories(directory)
    val target = directory.resolve(name)
    val tmp = directory.resolve(s".$name.${UUID.randomUUID()}.tmp")
    try {
      Files.write(tmp, bytes)
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE)
      created += target
    } finally Files.deleteIfExists(tmp)
    bytes.length.toLong
  }

  /** The entries in manifest files, rolling at `manifest.target-file-size`; no entries, no file. */
  def writeManifests(entries: Seq[ManifestEntry]): Seq[ManifestFileMeta] = {
    val out = mutable.ArrayBuffer.empty[ManifestFileMeta]
    var rest = entries
    while (rest.nonEmpty) {
      val iterator = rest.iterator
      var taken = 0
      val counted = iterator.map { e => taken += 1; manifestEntryRecord(e) }
      val bytes = container(ManifestEntrySchema, counted, codecFactory, targetSize)
      val part = rest.take(taken)
      rest = rest.drop(taken)
      val name = s"manifest-$manifestUuid-$manifests"
      manifests += 1
      out += meta(name, write(name, bytes), part)
    }
    out.toList
  }

  private def meta(name: String, size: Long, entries: Seq[ManifestEntry]): ManifestFileMeta = {
    val added = entries.count(_.kind == Manifest.Add).toLong
    ManifestFileMeta(name, size, added, entries.size - added, ManifestFiles.partitionStats(entries.map(_.partition), partitionTypes, name),
      if (entries.isEmpty) latestSchemaId else entries.map(_.file.schemaId).max,
      Some(entries.map(_.bucket).min), Some(entries.map(_.bucket).max),
      Some(entries.map(_.file.level).min), Some(entries.map(_.file.level).max), None, None)
  }

  /** A manifest list of `metas`; returns its name and size. */
  def writeManifestList(metas: Seq[ManifestFileMeta]): (String, Long) = {
    val name = s"manifest-list-$listUuid-$lists"
    lists += 1
    (name, write(name, container(ManifestFileMetaSchema, metas.iterator.map(manifestFileMetaRecord), codecFactory)))
  }

  /** An index manifest of `entries` (all ADD); returns its name. */
  def writeIndexManifest(entries: Seq[IndexManifestEntry]): String = {
    val name = s"index-manifest-$indexUuid-$indexes"
    indexes += 1
    write(name, container(IndexManifestEntrySchema, entries.iterator.map(indexManifestEntryRecord), codecFactory))
    name
  }

  /** Removes the files of this writer that `keep` does not hold. */
  def removeExcept(keep: Set[Path]): Unit = {
    created.filterNot(keep.contains).foreach(p => scala.util.Try(Files.deleteIfExists(p)))
    created.filterInPlace(keep.contains)
  }
}

object ManifestFiles {

  /** `SimpleStatsCollector` in full mode over partition rows, as `toBinaryAllMode` stores it:
    * min and max of each field by its type's order, and the number of null values. */
  def partitionStats(partitions: Seq[Array[Byte]], types: Seq[KeyType], source: String): SimpleStats = {
    val n = types.size
    val min = Array.fill[Any](n)(null)
    val max = Array.fill[Any](n)(null)
    val nulls = Array.fill(n)(0L)
    val counts = mutable.LinkedHashMap.empty[ByteBuffer, Int] // each distinct partition decoded once
    partitions.foreach(p => counts(ByteBuffer.wrap(p)) = counts.getOrElse(ByteBuffer.wrap(p), 0) + 1)
    for ((key, times) <- counts) {
      val values = io.indexbridge.paimon.BinaryRow.deserialize(key.array(), types, source)
      for (i <- 0 until n) {
        val v = values(i)
        if (v == null) nulls(i) += times
        else {
          if (min(i) == null || Predicates.compare(types(i), v, min(i)) < 0) min(i) = v
          if (max(i) == null || Predicates.compare(types(i), v, max(i)) > 0) max(i) = v
        }
      }
    }
    SimpleStats(serialize(min.toSeq, types), serialize(max.toSeq, types), Some(nulls.toIndexedSeq.map(Some(_))))
  }

  /** A row as `SerializationUtils.serializeBinaryRow` stores it: `i32 BE arity` + the row. */
  def serialize(values: Seq[Any], types: Seq[KeyType]): Array[Byte] = {
    val row = BinaryRowWriter.write(values, types)
    val out = ByteBuffer.allocate(4 + row.length)
    out.putInt(types.length).put(row)
    out.array()
  }
}

/** Rows of internal values (the table layer's conventions) as BinaryRow bytes. */
object BinaryRowWriter {
  import KeyType._

  def write(values: Seq[Any], types: Seq[KeyType]): Array[Byte] = {
    val row = new BinaryRowBuilder(types.length)
    row.reset()
    values.zip(types).zipWithIndex.foreach { case ((v, t), i) => set(row, i, v, t) }
    row.bytes
  }

  def set(row: BinaryRowBuilder, i: Int, v: Any, t: KeyType): Unit =
    if (v == null) row.writeNull(i, t)
    else
      (t, v) match {
        case (BooleanType, b: Boolean)                       => row.writeBoolean(i, b)
        case (TinyIntType, b: Byte)                          => row.writeByte(i, b)
        case (SmallIntType, s: Short)                        => row.writeShort(i, s)
        case (IntType | DateType | TimeType(_), n: Int)      => row.writeInt(i, n)
        case (BigIntType, n: Long)                           => row.writeLong(i, n)
        case (FloatType, f: Float)                           => row.writeFloat(i, f)
        case (DoubleType, d: Double)                         => row.writeDouble(i, d)
        case (CharType(_) | VarCharType(_), s: String)       => row.writeString(i, s.getBytes(java.nio.charset.StandardCharsets.UTF_8))
        case (CharType(_) | VarCharType(_), b: Array[Byte])  => row.writeString(i, b)
        case (BinaryType(_) | VarBinaryType(_), b: Array[Byte]) => row.writeBinary(i, b)
        case (DecimalType(p, s), d: java.math.BigDecimal) =>
          val unscaled = d.setScale(s).unscaledValue
          if (KeyType.isCompactDecimal(p)) row.writeDecimal(i, unscaled.longValueExact, p) else row.writeDecimal(i, unscaled, p)
        case (TimestampType(p), (millis: Long, nanos: Int))           => row.writeTimestamp(i, millis, nanos, p)
        case (LocalZonedTimestampType(p), (millis: Long, nanos: Int)) => row.writeTimestamp(i, millis, nanos, p)
        case _ => throw new IllegalArgumentException(s"a $t value, got ${v.getClass.getSimpleName} $v")
      }
}
