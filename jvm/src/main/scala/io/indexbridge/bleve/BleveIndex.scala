package io.indexbridge.bleve

import java.io.RandomAccessFile
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths, StandardCopyOption}

import scala.collection.mutable

import com.fasterxml.jackson.databind.ObjectMapper
import io.indexbridge.{IndexFormatException, Storage}
import io.indexbridge.bleve.Bolt.{Bucket, Value}
import io.indexbridge.bytes.ByteReader
import io.indexbridge.roaring.Roaring32
import io.indexbridge.zap.{Document, SegmentReader, SegmentWriter}
import org.roaringbitmap.RoaringBitmap

/** bleve v1.0.14 index directories (scorch): the live documents, and whole indexes written
  * (the twin of Python's `indexbridge.bleve.index`, which draws the layout).
  *
  * {{{
  * index_meta.json     {"storage":"scorch","index_type":"scorch"}
  * store/root.bolt     s/<epoch>/{m: type "zap", version u32 BE 11 + 0;  i: _mapping = mapping JSON;
  *                                <segment id>: p = "%012x.zap", d = deleted doc numbers (roaring)}
  * store/%012x.zap     zap v11 segments
  * }}}
  *
  * Keys are `EncodeUvarintAscending`; scorch opens the highest epoch. Writing makes bleve's
  * offline Builder's layout generalised to n segments (ids 0.., files 2.., epoch 3, no
  * deletions), each file renamed into place, the segments first, `root.bolt` and then
  * `index_meta.json` last. Reading checks the meta file, the bolt file, the snapshot, that each
  * segment exists and is zap 11 ("unsupported zap version N in FILE" otherwise) and the deleted
  * bitmaps; stored values come back as bleve's `Fields` give them.
  */
final case class SegmentEntry(id: Long, file: String, path: Path, deleted: Option[RoaringBitmap], deletedBytes: Option[Array[Byte]]) {
  def deletedCount: Int = deleted.map(_.getCardinality).getOrElse(0)
}

final class BleveIndex private (
    val path: Path,
    val epoch: Option[Long],
    val internal: Map[String, Array[Byte]],
    val segments: IndexedSeq[SegmentEntry],
    val readers: IndexedSeq[SegmentReader]
) {
  def rootBolt: Path = path.resolve(BleveIndex.StoreDir).resolve(BleveIndex.RootBolt)

  def mappingJson: Option[String] = internal.get(BleveIndex.MappingKey).map(b => new String(b, UTF_8))

  /** The index's mapping as bleve reads it (bleve's default without `_mapping`). */
  lazy val mapping: IndexMapping = IndexMapping.decode(mappingJson.orNull, s"$rootBolt (_mapping)").validate()

  /** Live documents (bleve's `DocCount`). */
  def docCount: Long = segments.indices.map(i => readers(i).numDocs.toLong - segments(i).deletedCount).sum

  /** Every field of every segment, `_id` first, in order of first appearance. */
  def fieldNames: IndexedSeq[String] = {
    val seen = mutable.LinkedHashSet.empty[String]
    readers.foreach(_.fields.foreach(f => seen += f.name))
    seen.toIndexedSeq
  }

  /** The live documents in index order: `_id` -> id, field -> value or values (as bleve's Fields). */
  def documents: Iterator[collection.Map[String, Any]] =
    segments.indices.iterator.flatMap(i => BleveIndex.segmentDocuments(readers(i), segments(i).deleted).map(_._2))

  /** (segment, deleted) pairs for [[BleveQuery]]. */
  def views: IndexedSeq[(SegmentReader, Option[RoaringBitmap])] = readers.zip(segments.map(_.deleted))
}

object BleveIndex {
  val IndexMetaFile = "index_meta.json"
  val StoreDir = "store"
  val RootBolt = "root.bolt"
  val IndexMeta: Array[Byte] = """{"storage":"scorch","index_type":"scorch"}""".getBytes(UTF_8)
  val SegmentType = "zap"
  val SegmentVersion = 11
  val Epoch = 3L
  val FirstFileNumber = 2
  val MappingKey = "_mapping"
  val DefaultRowsPerSegment = 100000

  private val IntZero = 136
  private val IntSmall = 109
  private val IntMax = 253

  def encodeUvarintAscending(v: Long): Array[Byte] =
    if (v >= 0 && v <= IntSmall) Array((IntZero + v).toByte)
    else {
      val n = (64 - java.lang.Long.numberOfLeadingZeros(v) + 7) / 8
      val out = new Array[Byte](1 + n)
      out(0) = (IntMax - 8 + n).toByte
      for (k <- 0 until n) out(1 + k) = (v >>> (8 * (n - 1 - k))).toByte
      out
    }

  def decodeUvarintAscending(key: Array[Byte]): Option[Long] = {
    if (key.isEmpty || (key(0) & 0xff) < IntZero) return None
    var length = (key(0) & 0xff) - IntZero
    if (length <= IntSmall) return if (key.length == 1) Some(length.toLong) else None
    length -= IntSmall
    if (length > 8 || key.length != 1 + length) return None
    var v = 0L
    for (k <- 1 to length) v = (v << 8) | (key(k) & 0xff)
    Some(v)
  }

  def segmentFileName(number: Long): String = f"$number%012x.zap"

  // -- stored values ---------------------------------------------------------------------------

  /** `numeric.PrefixCoded.Int64`; None where Go returns an error. */
  def prefixCodedInt64(raw: Array[Byte]): Option[Long] = {
    if (raw.isEmpty) return None
    val shift = (raw(0) - 0x20) & 0xff
    if (shift >= 63) return None
    var bits = 0L
    for (k <- 1 until raw.length) bits = (bits << 7) | (raw(k) & 0xff)
    Some((bits << shift) ^ Long.MinValue)
  }

  def int64ToFloat64(v: Long): Double = java.lang.Double.longBitsToDouble(if (v < 0) v ^ Long.MaxValue else v)

  /** Go's `time.Unix(0, nanos).UTC().Format(time.RFC3339)`. */
  def rfc3339Utc(nanos: Long): String = {
    val seconds = Math.floorDiv(nanos, 1000000000L)
    java.time.format.DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss'Z'")
      .format(java.time.LocalDateTime.ofEpochSecond(seconds, 0, java.time.ZoneOffset.UTC))
  }

  /** One stored value as bleve's `Fields` give it: String, Double, Boolean; None where bleve leaves it out. */
  def storedValue(kind: Byte, raw: Array[Byte]): Option[Any] = kind match {
    case 't' => Some(new String(raw, UTF_8))
    case 'n' => prefixCodedInt64(raw).map(int64ToFloat64)
    case 'd' => prefixCodedInt64(raw).map(rfc3339Utc)
    case 'b' => if (raw.length == 1) Some(raw(0) == 'T') else None
    case _ => None
  }

  /** (doc number, document) of the live documents of one segment; a field with several values
    * holds a `Vector` of them. `fields` limits the stored fields read. */
  def segmentDocuments(seg: SegmentReader, deleted: Option[RoaringBitmap], fields: Option[collection.Set[String]] = None)
      : Iterator[(Int, collection.Map[String, Any])] = {
    val names = seg.fields.map(_.name)
    (0 until seg.numDocs).iterator.filterNot(d => deleted.exists(_.contains(d))).map { doc =>
      val stored = seg.document(doc)
      val out = mutable.LinkedHashMap[String, Any]("_id" -> new String(stored.id, UTF_8))
      for (v <- stored.values) {
        val name = names(v.fieldId)
        if (fields.forall(_.contains(name))) storedValue(v.fieldType, v.value).foreach { value =>
          out.get(name) match {
            case None => out(name) = value
            case Some(vs: MultiValue) => vs.values += value
            case Some(first) => out(name) = new MultiValue(mutable.ArrayBuffer(first, value))
          }
        }
      }
      (doc, out.map { case (k, v) => k -> (v match { case m: MultiValue => m.values.toVector; case o => o }) })
    }
  }

  private final class MultiValue(val values: mutable.ArrayBuffer[Any])

  // -- reading ---------------------------------------------------------------------------------

  private val mapper = new ObjectMapper()

  def readMeta(path: Path): Unit = {
    val metaPath = path.resolve(IndexMetaFile)
    if (!Files.isRegularFile(metaPath)) {
      if (!Files.isDirectory(path)) throw new IndexFormatException(path.toString, 0L, "a bleve index directory: it does not exist")
      throw new IndexFormatException(metaPath.toString, 0L, "a bleve index directory: index_meta.json is missing")
    }
    val node = try mapper.readTree(Files.readAllBytes(metaPath)) catch {
      case e: com.fasterxml.jackson.core.JsonProcessingException =>
        throw new IndexFormatException(metaPath.toString, Option(e.getLocation).map(_.getCharOffset).filter(_ >= 0).getOrElse(0L),
          s"index_meta.json in JSON: ${e.getOriginalMessage}")
    }
    if (node == null || !node.isObject) throw new IndexFormatException(metaPath.toString, 0L, "index_meta.json: a JSON object")
    val indexType = Option(node.get("index_type")).filter(_.isTextual).map(_.textValue).filter(_.nonEmpty).getOrElse("upside_down")
    if (indexType != "scorch") throw new IndexFormatException(metaPath.toString, 0L, s"a scorch index: index_type '$indexType' is not supported")
  }

  /** The zap footer's version field (the u32 before the CRC), or None for a short file. */
  def zapVersion(path: Path): Option[Int] = {
    val f = new RandomAccessFile(path.toFile, "r")
    try {
      if (f.length < 8) None
      else { f.seek(f.length - 8); Some(f.readInt()) }
    } finally f.close()
  }

  /** The current snapshot of the index at `path`: segment entries and internal values (no segment opened). */
  def snapshot(path: Path): (Option[Long], Map[String, Array[Byte]], IndexedSeq[SegmentEntry]) = {
    readMeta(path)
    val store = path.resolve(StoreDir)
    val rootBolt = store.resolve(RootBolt)
    if (!Files.isRegularFile(rootBolt)) throw new IndexFormatException(rootBolt.toString, 0L, "a bleve index's store/root.bolt: it is missing")
    val bolt = Bolt.readFile(rootBolt)
    def fail(expected: String) = new IndexFormatException(rootBolt.toString, 0L, expected)
    val snapshots = bolt.root.get("s".getBytes(UTF_8)) match {
      case None => return (None, Map.empty, IndexedSeq.empty)
      case Some(b: Bucket) => b
      case Some(_) => throw fail("a bucket 's' of snapshots, found a value")
    }
    if (snapshots.size == 0) return (None, Map.empty, IndexedSeq.empty)
    val (key, node) = snapshots.entries.maxBy(_._1)(Ordering.comparatorToOrdering(java.util.Arrays.compareUnsigned(_: Array[Byte], _: Array[Byte])))
    val epoch = decodeUvarintAscending(key)
    val snap = node match {
      case b: Bucket if epoch.isDefined => b
      case _ => throw fail(s"snapshot key ${key.map("%02x".format(_)).mkString}: an epoch bucket (EncodeUvarintAscending)")
    }
    val where = s"snapshot ${epoch.get}"
    val meta = snap.bucket("m".getBytes(UTF_8)).getOrElse(throw fail(s"$where: the meta-data bucket 'm'"))
    val segType = meta.value("type".getBytes(UTF_8))
    val version = meta.value("version".getBytes(UTF_8)).filter(_.length >= 4)
      .map(v => ((v(0) & 0xff) << 24) | ((v(1) & 0xff) << 16) | ((v(2) & 0xff) << 8) | (v(3) & 0xff))
      .getOrElse(throw fail(s"$where: m/version, a u32 BE segment version"))
    val internal = mutable.LinkedHashMap.empty[String, Array[Byte]]
    val entries = IndexedSeq.newBuilder[SegmentEntry]
    for ((k, v) <- snap.entries.sortWith((a, b) => java.util.Arrays.compareUnsigned(a._1, b._1) < 0)) {
      if (k.nonEmpty && k(0) == 'i') v match {
        case b: Bucket => b.entries.foreach { case (ik, iv) => iv match { case x: Value => internal(new String(ik, UTF_8)) = x.bytes; case _ => } }
        case _ => throw fail(s"$where: the internal bucket 'i'")
      }
      else if (!(k.nonEmpty && k(0) == 'm')) {
        val segId = decodeUvarintAscending(k)
        val bucket = v match {
          case b: Bucket if segId.isDefined => b
          case _ => throw fail(s"$where: segment key ${k.map("%02x".format(_)).mkString}: a segment bucket keyed by EncodeUvarintAscending")
        }
        val file = bucket.value("p".getBytes(UTF_8)).filter(_.nonEmpty).map(new String(_, UTF_8))
          .getOrElse(throw fail(s"$where: segment ${segId.get}: its path 'p'"))
        if (file.contains('/') || file.contains('\\') || file == "." || file == "..")
          throw fail(s"$where: segment ${segId.get}: a file name within store/, found '$file'")
        val deletedBytes = bucket.get("d".getBytes(UTF_8)) match {
          case None => None
          case Some(x: Value) => Some(x.bytes)
          case Some(_) => throw fail(s"$where: segment ${segId.get}: deleted docs 'd', a value")
        }
        val deleted = deletedBytes.flatMap { bytes =>
          val reader = ByteReader(bytes, s"$rootBolt (s/${epoch.get}/${segId.get}/d)")
          val bm = Roaring32.read(reader)
          if (reader.remaining > 0) reader.fail(s"a roaring bitmap of ${bytes.length} bytes, it ends ${reader.remaining} bytes early", reader.pos.toLong)
          if (bm.isEmpty) None else Some(bm)
        }
        entries += SegmentEntry(segId.get, file, store.resolve(file), deleted, deletedBytes)
      }
    }
    val segs = entries.result()
    if (!segType.exists(t => new String(t, UTF_8) == SegmentType))
      throw fail(s"$where: segment type 'zap', found '${segType.map(new String(_, UTF_8)).getOrElse("")}'")
    if (version != SegmentVersion) {
      val named = segs.headOption.map(_.path.toString).getOrElse(rootBolt.toString)
      throw fail(s"unsupported zap version $version in $named ($where); indexbridge reads zap version $SegmentVersion")
    }
    (epoch, internal.toMap, segs)
  }

  /** Opens one segment of a snapshot, checking presence, version and deleted doc numbers. */
  def openSegment(entry: SegmentEntry, rootBolt: String, verifyCrc: Boolean = true): SegmentReader = {
    val p = entry.path
    if (!Files.isRegularFile(p)) throw new IndexFormatException(p.toString, 0L, s"segment ${entry.id} named in $rootBolt: the file is missing")
    zapVersion(p).filter(_ != SegmentVersion).foreach { v =>
      throw new IndexFormatException(p.toString, Files.size(p) - 8, s"unsupported zap version $v in $p; indexbridge reads zap version $SegmentVersion")
    }
    val seg = SegmentReader.open(p, verifyCrc)
    entry.deleted.foreach { d =>
      if (d.last().toLong >= seg.numDocs)
        throw new IndexFormatException(rootBolt, 0L, s"segment ${entry.id}: deleted doc numbers below ${seg.numDocs}, found ${d.last()}")
    }
    seg
  }

  def open(path: Path, verifyCrc: Boolean = true): BleveIndex = {
    val (epoch, internal, entries) = snapshot(path)
    val rootBolt = path.resolve(StoreDir).resolve(RootBolt).toString
    new BleveIndex(path, epoch, internal, entries, entries.map(e => openSegment(e, rootBolt, verifyCrc)))
  }

  def open(path: String): BleveIndex = open(Paths.get(path))

  // -- writing ---------------------------------------------------------------------------------

  /** The bucket tree of `root.bolt` for one snapshot of fresh segments (ids 0 .. n-1). */
  def snapshotTree(segmentFiles: Seq[String], mappingJson: Array[Byte], epoch: Long = Epoch): Bucket = {
    val version = Array[Byte](0, 0, 0, SegmentVersion.toByte, 0) // a u32 in a MaxVarintLen32 buffer, as scorch writes it
    val entries = mutable.ArrayBuffer[(Array[Byte], Bolt.Node)](
      "m".getBytes(UTF_8) -> Bucket("type".getBytes(UTF_8) -> Value(SegmentType.getBytes(UTF_8)), "version".getBytes(UTF_8) -> Value(version)),
      "i".getBytes(UTF_8) -> Bucket(MappingKey.getBytes(UTF_8) -> Value(mappingJson)))
    for ((name, k) <- segmentFiles.zipWithIndex) entries += encodeUvarintAscending(k.toLong) -> Bucket("p".getBytes(UTF_8) -> Value(name.getBytes(UTF_8)))
    Bucket("s".getBytes(UTF_8) -> Bucket(encodeUvarintAscending(epoch) -> Bucket.of(entries)))
  }

  /** `path` ready for a new index: absent or without an index (bleve never overwrites). */
  def checkNew(path: Path): Unit =
    if (Files.exists(path)) {
      if (!Files.isDirectory(path)) throw new java.nio.file.FileAlreadyExistsException(s"$path: not a directory")
      if (Files.exists(path.resolve(IndexMetaFile)) || Files.exists(path.resolve(StoreDir).resolve(RootBolt)))
        throw new java.nio.file.FileAlreadyExistsException(s"$path: an index exists there already")
    }

  /** Makes `path` a bleve index of the given segment files, in order: each renamed to its name in
    * `store/` (`%012x.zap` of 2, 3, ...), then `root.bolt` and `index_meta.json` written, each
    * atomically, `index_meta.json` last. Returns the segment file names. */
  def publish(path: Path, segmentFiles: Seq[Path], mapping: IndexMapping): IndexedSeq[String] = {
    checkNew(path)
    val store = path.resolve(StoreDir)
    Files.createDirectories(store)
    val names = segmentFiles.zipWithIndex.map { case (src, k) =>
      val name = segmentFileName(FirstFileNumber + k)
      val target = store.resolve(name)
      if (src.toAbsolutePath.normalize != target.toAbsolutePath.normalize) {
        if (Files.exists(target)) throw new java.nio.file.FileAlreadyExistsException(s"$target: a segment file is in the way")
        Files.move(src, target, StandardCopyOption.ATOMIC_MOVE)
      }
      name
    }.toIndexedSeq
    Bolt.writeFile(store.resolve(RootBolt), snapshotTree(names, mapping.toJson.getBytes(UTF_8)))
    Storage.writeAtomically(path.resolve(IndexMetaFile), IndexMeta)
    names
  }

  /** Writes a bleve index of `docs` ((id, JSON-like value), unique ids) at `path`: segments of
    * `rowsPerSegment` documents in order (no documents: none), then root.bolt and index_meta.json. */
  def write(path: Path, docs: Iterator[(String, Any)], mapping: IndexMapping, rowsPerSegment: Int = DefaultRowsPerSegment): IndexedSeq[String] = {
    require(rowsPerSegment > 0, s"rowsPerSegment must be positive, got $rowsPerSegment")
    checkNew(path)
    val store = path.resolve(StoreDir)
    Files.createDirectories(store)
    val seen = mutable.HashSet.empty[String]
    val files = mutable.ArrayBuffer.empty[Path]
    docs.grouped(rowsPerSegment).foreach { group =>
      val mapped: IndexedSeq[Document] = group.map { case (id, value) =>
        if (!seen.add(id)) throw new IllegalArgumentException(s"document id '$id' occurs twice (an index holds one document per id)")
        mapping.mapDocument(id, value)
      }.toIndexedSeq
      val target = store.resolve(segmentFileName(FirstFileNumber + files.length))
      SegmentWriter.write(mapped, target)
      files += target
    }
    publish(path, files.toSeq, mapping)
  }
}
