package io.indexbridge.delta

import java.net.URI
import java.nio.ByteBuffer
import java.nio.file.{Files, Path, Paths}
import java.util.UUID
import java.util.zip.CRC32

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}
import io.indexbridge.{IndexFormatException, Storage}
import io.indexbridge.paimon.{DeletionFile, DeletionVector}

/** Delta's `DeletionVectorDescriptor`: where a data file's DV is and what it holds.
  *
  * {{{
  * {"storageType": "u" | "p" | "i" (| "r"), "pathOrInlineDv": ..., "offset": N (not for i),
  *  "sizeInBytes": len(DATA), "cardinality": n, ["maxRowIndex": m]}
  *
  * u  random prefix (0..n characters, also the subdirectory) + Z85 of the UUID (20 characters):
  *    <table>/<prefix>/deletion_vector_<uuid>.bin
  * p  an absolute URI (percent-encoded), as SHALLOW CLONE writes
  * i  Z85 of DATA (magic + bitmap), zero-padded to a multiple of 4 bytes; sizeInBytes = len(DATA)
  * r  a path relative to the table root (read only)
  * }}}
  *
  * `offset` points at the frame's size field; `sizeInBytes` excludes the size and CRC fields
  * (Paimon's 64-bit `length` - 8). Delta's unique id: `storageType + pathOrInlineDv`, then
  * `"@" + offset` when there is one.
  */
final case class DeletionVectorDescriptor(storageType: String, pathOrInlineDv: String, sizeInBytes: Int, cardinality: Long,
    offset: Option[Int] = None, maxRowIndex: Option[Long] = None) {
  import DeletionVectorFile._

  def uniqueId: String = storageType + pathOrInlineDv + offset.fold("")("@" + _)

  /** The descriptor as Delta writes it in the log (Delta's field order). */
  def toJson: ObjectNode = {
    val node = JsonNodeFactory.instance.objectNode().put("storageType", storageType).put("pathOrInlineDv", pathOrInlineDv)
    offset.foreach(node.put("offset", _))
    node.put("sizeInBytes", sizeInBytes).put("cardinality", cardinality)
    maxRowIndex.foreach(node.put("maxRowIndex", _))
    node
  }

  def randomPrefixAndUuid(source: String = "<descriptor>"): (String, UUID) = {
    require(storageType == UuidRelative, s"a '$storageType' descriptor has no UUID")
    val n = pathOrInlineDv.length - Z85.EncodedUuidLength
    if (n < 0) throw new IndexFormatException(source, 0, s"a 'u' pathOrInlineDv of at least 20 characters, found '$pathOrInlineDv'")
    (pathOrInlineDv.take(n), Z85.decodeUuid(pathOrInlineDv.drop(n), s"$source: pathOrInlineDv '$pathOrInlineDv'", n))
  }

  /** The local file holding an on-disk DV (Delta's `absolutePath`). */
  def absolutePath(tableRoot: Path): Path = storageType match {
    case UuidRelative =>
      val (prefix, uuid) = randomPrefixAndUuid()
      (if (prefix.isEmpty) tableRoot else tableRoot.resolve(prefix)).resolve(fileName(uuid))
    case RelativePath => tableRoot.resolve(pathOrInlineDv)
    case AbsolutePath => localPath(pathOrInlineDv)
    case _            => throw new IllegalArgumentException("an inline deletion vector has no file")
  }

  /** DATA (magic + bitmap) of an inline DV, its padding dropped. */
  def inlineData(source: String = "<descriptor>"): Array[Byte] = {
    require(storageType == Inline, "only an inline deletion vector carries its data")
    Z85.decode(pathOrInlineDv, sizeInBytes, s"$source: inline pathOrInlineDv")
  }
}

/** Delta Lake deletion vector files (spec/lakehouse-dv.md §3–§4) and their descriptors.
  *
  * {{{
  * u8 version = 1
  * DV frame #1                     at offset 1
  * DV frame #2                     back to back; the file ends after the last frame
  * ...
  *
  * frame = u32 BE size | DATA (size bytes) | u32 BE CRC-32 of DATA
  * DATA  = d1 d3 39 64 (magic) | portable 64-bit roaring (RoaringBitmapArray's portable format:
  *         u64 LE count, count x (u32 LE key, portable 32-bit roaring))
  * }}}
  *
  * That is the layout of a Paimon deletion file of 64-bit DVs frame for frame
  * ([[io.indexbridge.paimon.DeletionFile]], [[io.indexbridge.paimon.DeletionVector]]). Delta does
  * not always run-optimise merged DVs, so frames read from Delta are moved as they are. Reads
  * check what Delta checks (the size field against `sizeInBytes`, the CRC, the cardinality) and
  * more (the version byte, the magic, a descriptor inside its file, Z85), each failure an
  * [[IndexFormatException]] naming the file and offset. Mirrors `indexbridge.delta.dv`.
  */
object DeletionVectorFile {
  val FileVersion = 1
  val UuidRelative = "u"
  val AbsolutePath = "p"
  val Inline = "i"
  val RelativePath = "r"
  val StorageTypes: Seq[String] = Seq(UuidRelative, AbsolutePath, Inline, RelativePath)
  val FileNamePrefix = "deletion_vector_"
  private val DvMagic = Array[Byte](0xd1.toByte, 0xd3.toByte, 0x39, 0x64)
  private val MaxSize = Int.MaxValue.toLong

  /** `deletion_vector_<uuid>.bin`, the file of a `u` descriptor. */
  def fileName(uuid: UUID): String = s"$FileNamePrefix$uuid.bin"

  def uuidRelative(uuid: UUID, sizeInBytes: Int, cardinality: Long, offset: Int, randomPrefix: String = ""): DeletionVectorDescriptor =
    DeletionVectorDescriptor(UuidRelative, randomPrefix + Z85.encodeUuid(uuid), sizeInBytes, cardinality, Some(offset))

  /** A `p` descriptor; a local path becomes its `file:` URI. */
  def absolute(pathOrUri: String, sizeInBytes: Int, cardinality: Long, offset: Int): DeletionVectorDescriptor = {
    val uri = if (scala.util.Try(new URI(pathOrUri).getScheme).toOption.flatMap(Option(_)).isDefined) pathOrUri
              else Paths.get(pathOrUri).toAbsolutePath.toUri.toString
    DeletionVectorDescriptor(AbsolutePath, uri, sizeInBytes, cardinality, Some(offset))
  }

  /** `DeletionVectorDescriptor.inlineInLog`: `data` is magic + bitmap (no size, no CRC). */
  def inline(data: Array[Byte], cardinality: Long): DeletionVectorDescriptor =
    DeletionVectorDescriptor(Inline, Z85.encode(data), data.length, cardinality)

  /** A descriptor from the log's JSON, validated. */
  def fromJson(obj: JsonNode, source: String = "<descriptor>"): DeletionVectorDescriptor = {
    def fail(expected: String): Nothing = throw new IndexFormatException(source, 0, expected)
    if (obj == null || !obj.isObject) fail(s"a deletion vector descriptor object, found $obj")
    def integer(key: String, required: Boolean, low: Long, high: Long): Option[Long] = {
      val v = obj.get(key)
      if ((v == null || v.isNull) && !required) None
      else if (v == null || !v.isIntegralNumber || !v.canConvertToLong || v.asLong < low || v.asLong > high)
        fail(s"""descriptor "$key" as an integer in $low..$high, found ${Option(v).getOrElse("None")}""")
      else Some(v.asLong)
    }
    val storage = Option(obj.get("storageType")).filter(_.isTextual).map(_.asText)
    if (!storage.exists(StorageTypes.contains))
      fail(s"""descriptor "storageType" one of ${StorageTypes.mkString(", ")}, found ${Option(obj.get("storageType")).getOrElse("None")}""")
    val path = obj.get("pathOrInlineDv")
    if (path == null || !path.isTextual) fail(s"""descriptor "pathOrInlineDv" as a string, found ${Option(path).getOrElse("None")}""")
    of(storage.get, path.asText, integer("offset", storage.get != Inline, if (storage.get == Inline) 0 else 1, MaxSize),
      integer("sizeInBytes", true, 0, MaxSize).get, integer("cardinality", true, 0, Long.MaxValue).get,
      integer("maxRowIndex", false, 0, Long.MaxValue), source)
  }

  /** A descriptor from its fields (as a log's JSON or a checkpoint's struct hold them), validated. */
  def of(storageType: String, pathOrInlineDv: String, offset: Option[Long], sizeInBytes: Long, cardinality: Long,
      maxRowIndex: Option[Long], source: String): DeletionVectorDescriptor = {
    def fail(expected: String): Nothing = throw new IndexFormatException(source, 0, expected)
    if (pathOrInlineDv == null) fail("""descriptor "pathOrInlineDv" as a string, found None""")
    if (!StorageTypes.contains(storageType)) fail(s"""descriptor "storageType" one of ${StorageTypes.mkString(", ")}, found '$storageType'""")
    if (storageType == Inline && offset.isDefined) fail(s"no offset for an inline deletion vector, found ${offset.get}")
    if (storageType != Inline && !offset.exists(o => o >= 1 && o <= MaxSize))
      fail(s"""descriptor "offset" as an integer in 1..$MaxSize, found ${offset.getOrElse("None")}""")
    if (sizeInBytes < 0 || sizeInBytes > MaxSize) fail(s"""descriptor "sizeInBytes" as an integer in 0..$MaxSize, found $sizeInBytes""")
    if (cardinality < 0) fail(s"""descriptor "cardinality" as an integer in 0..${Long.MaxValue}, found $cardinality""")
    val d = DeletionVectorDescriptor(storageType, pathOrInlineDv, sizeInBytes.toInt, cardinality, offset.map(_.toInt), maxRowIndex)
    if (storageType == UuidRelative) d.randomPrefixAndUuid(source) // a bad Z85 UUID fails here
    d
  }

  /** A `file:` URI (or an absolute path) as a local path; other schemes are refused. */
  def localPath(uri: String): Path = {
    val parsed = scala.util.Try(new URI(uri)).toOption
    parsed match {
      case Some(u) if u.getScheme == "file" => Paths.get(u)
      case Some(u) if u.getScheme == null && Paths.get(uri).isAbsolute => Paths.get(uri)
      case None if Paths.get(uri).isAbsolute => Paths.get(uri)
      case _ => throw new IllegalArgumentException(s"only local absolute paths and file: URIs are supported, got '$uri'")
    }
  }

  // -------------------------------------------------------------------------------------------
  // Reading

  private def checkMagic(data: Array[Byte], at: Int, source: String): Unit =
    if (!java.util.Arrays.equals(data, at + 4, at + 8, DvMagic, 0, 4))
      throw new IndexFormatException(source, at + 4L, s"Delta deletion vector magic d1d33964 (portable RoaringBitmapArray), found " +
        java.util.HexFormat.of().formatHex(data, at + 4, at + 8))

  /** The frame an on-disk descriptor points at in a DV file's bytes (as it is) and its DV. */
  def readFrame(data: Array[Byte], descriptor: DeletionVectorDescriptor, source: String = "<bytes>",
      verifyCrc: Boolean = true): (Array[Byte], DeletionVector) = {
    def fail(at: Long, expected: String): Nothing = throw new IndexFormatException(source, at, expected)
    if (data.isEmpty) fail(0, s"deletion vector file version byte $FileVersion, found an empty file")
    if (data(0) != FileVersion) fail(0, s"deletion vector file version $FileVersion, found ${data(0) & 0xff}")
    val size = descriptor.sizeInBytes
    val offset = descriptor.offset.filter(_ >= 1).getOrElse(
      fail(0, s"a descriptor offset >= 1 (after the version byte), found ${descriptor.offset.getOrElse("None")}"))
    val end = offset.toLong + 4 + size + 4
    if (end > data.length)
      fail(offset, s"a deletion vector of $size bytes (+ size and CRC) inside the file of ${data.length} bytes, at offset $offset")
    val stored = ByteBuffer.wrap(data).getInt(offset) & 0xffffffffL
    if (stored != size) fail(offset, s"a deletion vector size field of $size (the descriptor's sizeInBytes), found $stored")
    checkMagic(data, offset, source)
    val dv = DeletionVector.deserialize(data, source, offset, size + 8, verifyCrc)
    if (dv.cardinality != descriptor.cardinality)
      fail(offset, s"a deletion vector of ${descriptor.cardinality} positions (the descriptor's cardinality), found ${dv.cardinality}")
    (java.util.Arrays.copyOfRange(data, offset, end.toInt), dv)
  }

  /** The frame (size, DATA, CRC) of an inline DV's DATA. */
  def inlineFrame(descriptor: DeletionVectorDescriptor, source: String = "<descriptor>"): Array[Byte] = {
    val data = descriptor.inlineData(source)
    val crc = new CRC32
    crc.update(data)
    ByteBuffer.allocate(data.length + 8).putInt(data.length).put(data).putInt(crc.getValue.toInt).array
  }

  /** The frame (as stored, or built around inline DATA) and DV of a descriptor. `files` caches
    * DV files by path across calls; `source` names an inline DV in errors (e.g. the log file). */
  def readFrameOf(descriptor: DeletionVectorDescriptor, tableRoot: Path, verifyCrc: Boolean = true,
      files: scala.collection.mutable.Map[Path, Array[Byte]] = scala.collection.mutable.Map.empty,
      source: Option[String] = None): (Array[Byte], DeletionVector) =
    if (descriptor.storageType == Inline) {
      val where = source.getOrElse("<inline descriptor>")
      if (descriptor.sizeInBytes == 0) {
        if (descriptor.cardinality != 0)
          throw new IndexFormatException(where, 0, s"an empty inline deletion vector of cardinality 0, found ${descriptor.cardinality}")
        (Array.emptyByteArray, DeletionVector.empty(bitmap64 = true))
      } else {
        val frame = inlineFrame(descriptor, where)
        val inFrame = s"$where: inline DV (offsets in its frame)"
        checkMagic(frame, 0, inFrame)
        val dv = DeletionVector.deserialize(frame, inFrame, verifyCrc = false)
        if (dv.cardinality != descriptor.cardinality)
          throw new IndexFormatException(where, 0,
            s"an inline deletion vector of ${descriptor.cardinality} positions (the descriptor's cardinality), found ${dv.cardinality}")
        (frame, dv)
      }
    } else {
      val path = descriptor.absolutePath(tableRoot)
      val data = files.getOrElseUpdate(path,
        try Files.readAllBytes(path)
        catch { case _: java.nio.file.NoSuchFileException => throw new IndexFormatException(path.toString, 0, "the deletion vector file to exist (a descriptor points at it)") })
      readFrame(data, descriptor, path.toString, verifyCrc)
    }

  /** Every (offset of the size field, DV) of a DV file, walking it from offset 1. */
  def scan(data: Array[Byte], source: String, verifyCrc: Boolean = true): Seq[(Int, DeletionVector)] = {
    val frames = DeletionFile.scan(data, source, verifyCrc)
    frames.find(!_._2.bitmap64).foreach { case (offset, _) =>
      throw new IndexFormatException(source, offset + 4L, "Delta deletion vector magic d1d33964, found a 32-bit Paimon frame")
    }
    frames
  }

  // -------------------------------------------------------------------------------------------
  // Writing

  /** (data file, a 64-bit DV frame, its cardinality), copied as it is. */
  final case class DvFrame(dataFile: String, frame: Array[Byte], cardinality: Long)

  /** A DV file of the frames as given, and the offset of each frame's size field. */
  def encode(frames: Seq[Array[Byte]]): (Array[Byte], Seq[Int]) = {
    val total = 1L + frames.map(_.length.toLong).sum
    if (total > Int.MaxValue) throw new IllegalStateException(s"a deletion vector file of $total bytes exceeds 2 GiB")
    val out = new Array[Byte](total.toInt)
    out(0) = FileVersion.toByte
    var pos = 1
    val offsets = frames.zipWithIndex.map { case (frame, i) =>
      require(DeletionVector.isFrame64(frame), s"frame #$i is not one 64-bit deletion vector frame")
      System.arraycopy(frame, 0, out, pos, frame.length)
      pos += frame.length
      pos - frame.length
    }
    (out, offsets)
  }

  /** Writes one DV file of `frames` (in the given order) under the table root as Delta names
    * it, atomically; returns each data file's `u` descriptor. */
  def write(tableRoot: Path, frames: Seq[DvFrame], randomPrefix: String = "", fileUuid: UUID = UUID.randomUUID()): Seq[(String, DeletionVectorDescriptor)] = {
    val (content, offsets) = encode(frames.map(_.frame))
    writeEncoded(tableRoot, frames, content, offsets, randomPrefix, fileUuid)
  }

  /** Writes the [[encode]]d `content` of `frames` as [[write]] does. */
  def writeEncoded(tableRoot: Path, frames: Seq[DvFrame], content: Array[Byte], offsets: Seq[Int], randomPrefix: String,
      fileUuid: UUID): Seq[(String, DeletionVectorDescriptor)] = {
    val directory = if (randomPrefix.isEmpty) tableRoot else tableRoot.resolve(randomPrefix)
    Storage.writeAtomically(directory.resolve(fileName(fileUuid)), content)
    frames.zip(offsets).map { case (f, offset) =>
      f.dataFile -> uuidRelative(fileUuid, f.frame.length - 8, f.cardinality, offset, randomPrefix)
    }
  }
}
