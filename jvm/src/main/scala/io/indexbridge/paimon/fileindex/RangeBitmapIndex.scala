package io.indexbridge.paimon.fileindex

import java.nio.ByteBuffer

import io.indexbridge.IndexFormatException
import io.indexbridge.bytes.ByteReader
import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.KeyType._
import io.indexbridge.roaring.Roaring32
import org.roaringbitmap.{RoaringBitmap, RoaringBitmapWriter}

/** Paimon's range-bitmap file index (`RangeBitmapFileIndex`, spec/range-bitmap.md): a dictionary
  * of the distinct keys in key order (a key's code is its rank) and a bit-sliced index of every
  * row's code.
  *
  * {{{
  * i32   header_length            bytes after this field up to the dictionary
  * u8    version = 1              (read signed: any value <= 1)
  * i32   row_count                all rows, nulls included
  * i32   cardinality              distinct non-null keys
  * key   min, key max             only when cardinality > 0
  * i32   dictionary_length
  * DICTIONARY (ChunkedDictionary)
  *   i32 header_length = 13, u8 version = 1, i32 chunk_count, i32 offsets_length = 4 x chunk_count,
  *   i32 chunks_length
  *   i32 x chunk_count            offset of each chunk header in the chunk-header section
  *   chunk headers                u8 version, key head, i32 head_code, i32 keys_offset, i32 size,
  *                                fixed keys: i32 keys_length, i32 fixed_length
  *                                strings:    i32 offsets_length, i32 keys_length
  *   key areas                    fixed: size keys; strings: size x i32 offset, then the keys
  * BSI (BitSliceIndexBitmap)      the rest of the payload
  *   i32 header_length = 10 + 8 x S, u8 version = 1,
  *   u8 S                         max(1, bitlength(cardinality - 1)); 64 when cardinality = 0
  *   i32 ebm_length, i32 indexes_length = 8 x S
  *   (i32 offset, i32 length) x S slice i, from the end of the ebm
  *   roaring32(ebm)               rows with a value
  *   roaring32(slice[i]) x S      rows whose code has bit i set
  * }}}
  *
  * Keys: int8/16/32/64 (TINYINT, SMALLINT, INT/DATE/TIME, BIGINT, DECIMAL(p <= 18) unscaled,
  * TIMESTAMP/LTZ(p <= 6) millis or above p = 3 micros), float32/64 (raw IEEE bits in
  * `Float.compare` order, every NaN one key whose stored bits are the first NaN's), bool (1 byte),
  * string (i32 length + UTF-8, unsigned bytewise order). Fixed keys are `Long`s here (floats: the
  * unsigned raw bits), strings `Array[Byte]`. A chunk takes the first key as its head; a further
  * key joins while its serialized size fits the `chunk-size` bytes left in the chunk's key area.
  *
  * Queries are exact comparisons on the non-null rows, as row sets; `is_null` and top-N on a
  * payload without non-null values answer `{0, row_count - 1}` as Paimon 1.4.2 does.
  */
object RangeBitmapIndex {
  val Identifier = "range-bitmap"
  val ChunkSize = "chunk-size"
  private val Version = 1

  /** A key kind (`KeyFactory`): its name in the vectors and its serialized width (-1: strings). */
  sealed abstract class KeyKind(val name: String, val width: Int)
  object KeyKind {
    case object Int8 extends KeyKind("int8", 1)
    case object Int16 extends KeyKind("int16", 2)
    case object Int32 extends KeyKind("int32", 4)
    case object Int64 extends KeyKind("int64", 8)
    case object Float32 extends KeyKind("float32", 4)
    case object Float64 extends KeyKind("float64", 8)
    case object Bool extends KeyKind("bool", 1)
    case object Str extends KeyKind("string", -1)
  }
  import KeyKind._

  /** `KeyFactory.create`: the key kind of a type, or the exception Paimon's writer and reader throw. */
  def keyKind(t: KeyType): KeyKind = t match {
    case TinyIntType                       => Int8
    case SmallIntType                      => Int16
    case IntType | DateType | TimeType(_)  => Int32
    case BigIntType                        => Int64
    case FloatType                         => Float32
    case DoubleType                        => Float64
    case BooleanType                       => Bool
    case CharType(_) | VarCharType(_)      => Str
    case DecimalType(p, _) =>
      if (p > 18) throw new IllegalArgumentException("The range-bitmap index only supports DECIMAL with a precision in [0, 18].")
      Int64
    case TimestampType(p) => timestampKind(p)
    case LocalZonedTimestampType(p) => timestampKind(p)
    case other => throw new UnsupportedOperationException(s"data type $other is not supported by the range-bitmap index.")
  }

  private def timestampKind(p: Int): KeyKind =
    if (p > 6) throw new IllegalArgumentException("The range-bitmap index only supports TIMESTAMP with a precision in [0, 6].")
    else Int64

  def supports(t: KeyType): Boolean = scala.util.Try(keyKind(t)).isSuccess

  /** The `chunk-size` of a type without the option: `0b` for BOOLEAN, TINYINT, SMALLINT, else `16kb`. */
  def defaultChunkSize(t: KeyType): String = keyKind(t) match {
    case Bool | Int8 | Int16 => "0b"
    case _                   => "16kb"
  }

  /** `(int) MemorySize.parse(text).getBytes()` (`4gb` is 0, `2gb` negative). */
  def chunkSizeBytes(text: String): Int = BitmapIndex.memorySize(text).toInt

  // -- keys -----------------------------------------------------------------------------------

  /** A fixed key as a `Long` in key order (floats: `Float.compare` order of the raw bits). */
  def orderOf(kind: KeyKind, key: Long): Long = kind match {
    case Float32 =>
      val f = java.lang.Float.intBitsToFloat(key.toInt)
      val bits = if (f.isNaN) 0x7fc00000L else key & 0xffffffffL
      val signed = bits.toInt.toLong
      if (signed < 0) signed ^ 0x7fffffffL else signed
    case Float64 =>
      val bits = if (java.lang.Double.isNaN(java.lang.Double.longBitsToDouble(key))) 0x7ff8000000000000L else key
      if (bits < 0) bits ^ Long.MaxValue else bits
    case _ => key
  }

  /** Key order of two keys of a kind (`Long`s or, for strings, `Array[Byte]`). */
  def compareKeys(kind: KeyKind, a: Any, b: Any): Int = kind match {
    case Str => java.util.Arrays.compareUnsigned(a.asInstanceOf[Array[Byte]], b.asInstanceOf[Array[Byte]])
    case _   => java.lang.Long.compare(orderOf(kind, a.asInstanceOf[Long]), orderOf(kind, b.asInstanceOf[Long]))
  }

  /** The key of a non-null value or literal ([[IndexValue]] conventions). */
  def keyOf(t: KeyType, kind: KeyKind, v: Any): Any = kind match {
    case Str => IndexValue.toBytes(t, v)
    case Float32 =>
      v match {
        case f: Float => java.lang.Float.floatToRawIntBits(f).toLong & 0xffffffffL
        case _        => throw new IllegalArgumentException(s"a FLOAT value must be a Float, got $v")
      }
    case Float64 =>
      v match {
        case d: Double => java.lang.Double.doubleToRawLongBits(d)
        case _         => throw new IllegalArgumentException(s"a DOUBLE value must be a Double, got $v")
      }
    case _ => IndexValue.toLong(t, v)
  }

  private def putKey(buf: ByteBuffer, kind: KeyKind, key: Any): Unit = kind match {
    case Str =>
      val b = key.asInstanceOf[Array[Byte]]
      buf.putInt(b.length).put(b)
    case Int8 | Bool => buf.put(key.asInstanceOf[Long].toByte)
    case Int16       => buf.putShort(key.asInstanceOf[Long].toShort)
    case Int32 | Float32 => buf.putInt(key.asInstanceOf[Long].toInt)
    case _           => buf.putLong(key.asInstanceOf[Long])
  }

  private def keySize(kind: KeyKind, key: Any): Int = if (kind == Str) 4 + key.asInstanceOf[Array[Byte]].length else kind.width

  private def readKey(in: ByteReader, kind: KeyKind, what: String): Any = kind match {
    case Str =>
      val n = in.i32BE(s"$what length")
      if (n < 0) in.fail(s"a $what length >= 0, found $n", in.pos - 4L)
      in.take(n, what)
    case _ =>
      in.require(kind.width, what)
      val at = in.pos
      in.skip(kind.width)
      fixedKey(kind, in.bytes, at)
  }

  private def fixedKey(kind: KeyKind, b: Array[Byte], at: Int): Long = kind match {
    case Int8    => b(at).toLong
    case Bool    => if (b(at) == 1) 1L else 0L
    case Int16   => ((b(at) << 8) | (b(at + 1) & 0xff)).toShort.toLong
    case Int32   => ByteReader.i32BE(b, at).toLong
    case Float32 => ByteReader.i32BE(b, at).toLong & 0xffffffffL
    case _       => (ByteReader.i32BE(b, at).toLong << 32) | (ByteReader.i32BE(b, at + 4).toLong & 0xffffffffL)
  }

  /** The number of BSI slices for a cardinality (64 for 0: the sign extension of -1). */
  def sliceCount(cardinality: Int): Int =
    math.max(64 - java.lang.Long.numberOfLeadingZeros((cardinality - 1).toLong), 1)

  // -- writer -----------------------------------------------------------------------------------

  def writer(t: KeyType, options: Map[String, String] = Map.empty): Writer = new Writer(t, options)

  def write(t: KeyType, values: Iterable[Any], options: Map[String, String] = Map.empty): Array[Byte] = {
    val w = writer(t, options)
    values.foreach(w.write)
    w.serialize()
  }

  /** `RangeBitmapFileIndex.Writer`: every row's value (null = SQL NULL), then the payload. */
  final class Writer(t: KeyType, options: Map[String, String]) extends FileIndexWriter {
    val kind: KeyKind = keyKind(t)
    private val capacity = chunkSizeBytes(options.getOrElse(ChunkSize, defaultChunkSize(t)))
    private var rows = 0
    private var keys = new Array[Long](1024) // fixed kinds: the key order value per row
    private val nulls = new java.util.BitSet
    private var firstNaN = 0L // the first NaN's raw bits (floats), when sawNaN
    private var sawNaN = false
    // strings: distinct keys by first appearance, each row's distinct id
    private val distinct = new java.util.HashMap[ByteBuffer, Integer]
    private val distinctKeys = scala.collection.mutable.ArrayBuffer.empty[Array[Byte]]
    private var ids = new Array[Int](if (kind == Str) 1024 else 0)

    def write(value: Any): Unit =
      if (value == null) {
        nulls.set(rows)
        next(0L, -1)
      } else
        kind match {
          case Str =>
            val b = IndexValue.toBytes(t, value)
            val key = ByteBuffer.wrap(b)
            var id = distinct.get(key)
            if (id == null) {
              id = distinctKeys.length
              distinct.put(key, id)
              distinctKeys += b
            }
            next(0L, id)
          case _ => writeKey(keyOf(t, kind, value).asInstanceOf[Long])
        }

    /** A non-null row of a fixed kind by its key ([[keyOf]]). */
    def writeKey(key: Long): Unit = {
      if (!sawNaN && isNaN(key)) { firstNaN = key; sawNaN = true }
      next(orderOf(kind, key), 0)
    }

    private def isNaN(key: Long): Boolean = kind match {
      case Float32 => java.lang.Float.isNaN(java.lang.Float.intBitsToFloat(key.toInt))
      case Float64 => java.lang.Double.isNaN(java.lang.Double.longBitsToDouble(key))
      case _       => false
    }

    private def next(order: Long, id: Int): Unit = {
      if (kind == Str) {
        if (rows == ids.length) ids = java.util.Arrays.copyOf(ids, rows * 2)
        ids(rows) = id
      } else {
        if (rows == keys.length) keys = java.util.Arrays.copyOf(keys, rows * 2)
        keys(rows) = order
      }
      rows += 1
    }

    /** The distinct keys in key order and each row's code (-1 = null). */
    private def codes(): (Array[Any], Array[Int]) = kind match {
      case Str =>
        val n = distinctKeys.length
        val order = (0 until n).toArray.map(Int.box)
        java.util.Arrays.sort(order, (a: Integer, b: Integer) => java.util.Arrays.compareUnsigned(distinctKeys(a), distinctKeys(b)))
        val rank = new Array[Int](n)
        for (i <- 0 until n) rank(order(i)) = i
        val codes = Array.tabulate(rows)(r => if (nulls.get(r)) -1 else rank(ids(r)))
        (order.map(i => distinctKeys(i): Any), codes)
      case _ =>
        val present = new Array[Long](rows - nulls.cardinality)
        var j = 0
        for (r <- 0 until rows if !nulls.get(r)) { present(j) = keys(r); j += 1 }
        java.util.Arrays.sort(present)
        var n = 0
        for (i <- present.indices if i == 0 || present(i) != present(i - 1)) { present(n) = present(i); n += 1 }
        val sorted = java.util.Arrays.copyOf(present, n)
        val codes = Array.tabulate(rows)(r => if (nulls.get(r)) -1 else java.util.Arrays.binarySearch(sorted, keys(r)))
        val stored: Array[Any] = sorted.map { o =>
          val key = unorder(o)
          (if (sawNaN && isNaN(key)) firstNaN else key): Any
        }
        (stored, codes)
    }

    /** The raw key of a key-order value (inverse of [[orderOf]] for non-NaN floats). */
    private def unorder(o: Long): Long = kind match {
      case Float32 => (if (o < 0) o ^ 0x7fffffffL else o) & 0xffffffffL
      case Float64 => if (o < 0) o ^ Long.MaxValue else o
      case _       => o
    }

    def serialize(): Array[Byte] = {
      val (sortedKeys, rowCodes) = codes()
      val cardinality = sortedKeys.length
      val dictionary = dictionaryBytes(kind, sortedKeys, capacity)
      val bsi = bsiBytes(rowCodes, cardinality)
      val bounds = if (cardinality == 0) 0 else keySize(kind, sortedKeys(0)) + keySize(kind, sortedKeys(cardinality - 1))
      val headerLength = 1 + 4 + 4 + bounds + 4
      val buf = ByteBuffer.allocate(4 + headerLength + dictionary.length + bsi.length)
      buf.putInt(headerLength).put(Version.toByte).putInt(rows).putInt(cardinality)
      if (cardinality > 0) { putKey(buf, kind, sortedKeys(0)); putKey(buf, kind, sortedKeys(cardinality - 1)) }
      buf.putInt(dictionary.length).put(dictionary).put(bsi)
      buf.array()
    }
  }

  /** `ChunkedDictionary.Appender` over distinct keys in key order, key areas of `capacity` bytes. */
  def dictionaryBytes(kind: KeyKind, keys: Array[Any], capacity: Int): Array[Byte] = {
    if (keys.nonEmpty && capacity < 0) throw new IllegalArgumentException(s"capacity < 0: ($capacity < 0)")
    val heads = scala.collection.mutable.ArrayBuffer.empty[Int] // index of each chunk's head
    val used = scala.collection.mutable.ArrayBuffer.empty[Int] // key-area bytes of each chunk (fixed: keys only)
    var i = 0
    while (i < keys.length) {
      heads += i
      var bytes = 0
      var count = 0
      i += 1
      while (i < keys.length && keySize(kind, keys(i)) <= capacity - bytes && (kind != Str || 4 <= capacity - 4 * count)) {
        bytes += keySize(kind, keys(i)); count += 1; i += 1
      }
      used += bytes
    }
    val n = heads.length
    val sizes = Array.tabulate(n)(c => (if (c + 1 < n) heads(c + 1) else keys.length) - heads(c) - 1)
    val headerSizes = Array.tabulate(n)(c => 1 + keySize(kind, keys(heads(c))) + 20)
    val areaSizes = Array.tabulate(n)(c => if (kind == Str) 4 * sizes(c) + used(c) else used(c))
    val chunksLength = headerSizes.sum
    val buf = ByteBuffer.allocate(4 + 13 + 4 * n + chunksLength + areaSizes.sum)
    buf.putInt(13).put(Version.toByte).putInt(n).putInt(4 * n).putInt(chunksLength)
    var offset = 0
    for (c <- 0 until n) { buf.putInt(offset); offset += headerSizes(c) }
    var keysOffset = 0
    for (c <- 0 until n) {
      buf.put(Version.toByte)
      putKey(buf, kind, keys(heads(c)))
      buf.putInt(heads(c)).putInt(keysOffset).putInt(sizes(c))
      if (kind == Str) buf.putInt(4 * sizes(c)).putInt(used(c)) else buf.putInt(used(c)).putInt(kind.width)
      keysOffset += areaSizes(c)
    }
    for (c <- 0 until n) {
      val first = heads(c) + 1
      if (kind == Str) {
        var rel = 0
        for (k <- first until first + sizes(c)) { buf.putInt(rel); rel += keySize(kind, keys(k)) }
      }
      for (k <- first until first + sizes(c)) putKey(buf, kind, keys(k))
    }
    buf.array()
  }

  /** `BitSliceIndexBitmap.Appender` over each row's code (-1 = null). */
  def bsiBytes(codes: Array[Int], cardinality: Int): Array[Byte] = {
    val count = sliceCount(cardinality)
    val ebm = RoaringBitmapWriter.writer().get()
    val slices = Array.fill(count)(RoaringBitmapWriter.writer().get())
    for (r <- codes.indices if codes(r) >= 0) {
      ebm.add(r)
      var bits = codes(r)
      while (bits != 0) {
        slices(Integer.numberOfTrailingZeros(bits)).add(r)
        bits &= bits - 1
      }
    }
    val ebmBytes = Roaring32.serialize(ebm.get())
    val sliceBytes = slices.map(s => Roaring32.serialize(s.get()))
    val buf = ByteBuffer.allocate(4 + 10 + 8 * count + ebmBytes.length + sliceBytes.map(_.length).sum)
    buf.putInt(10 + 8 * count).put(Version.toByte).put(count.toByte).putInt(ebmBytes.length).putInt(8 * count)
    var offset = 0
    for (s <- sliceBytes) { buf.putInt(offset).putInt(s.length); offset += s.length }
    buf.put(ebmBytes)
    sliceBytes.foreach(buf.put)
    buf.array()
  }

  // -- reader -----------------------------------------------------------------------------------

  /** `i32 header_length`, then that many header bytes starting with the (signed) version byte,
    * which must be <= 1: a reader over the rest of the header, its length and the version. */
  private def framedHeader(in: ByteReader, minimum: Int, what: String): (ByteReader, Int, Int) = {
    val at = in.pos
    val length = in.i32BE(s"$what header_length")
    if (length < minimum || length > in.remaining) in.fail(s"a $what header_length in $minimum..${in.remaining}, found $length", at.toLong)
    val header = in.sub(length, s"$what header")
    val version = header.u8(s"$what version").toByte
    if (version > Version) header.fail(s"$what version <= $Version, found $version", header.pos - 1L)
    (header, length, version.toInt)
  }

  /** One chunk header (offsets absolute; `fixedLength` -1 for strings, `offsetsLength` -1 for fixed keys). */
  final case class Chunk(chunkOffset: Int, version: Int, head: Any, headCode: Int, keysOffset: Int, size: Int,
                         keysLength: Int, fixedLength: Int, offsetsLength: Int, areaStart: Int)

  /** A dictionary in `bytes(start until end)`; chunk headers are parsed and checked when needed. */
  final class Dictionary private[RangeBitmapIndex] (bytes: Array[Byte], source: String, start: Int, end: Int, val kind: KeyKind) {
    private val in = new ByteReader(bytes, source, start, end)
    private val (header, headerLength0, version0) = framedHeader(in, 13, "dictionary")
    val headerLength: Int = headerLength0
    val version: Int = version0
    val chunkCount: Int = header.i32BE("dictionary chunk_count")
    val offsetsLength: Int = header.i32BE("dictionary offsets_length")
    val chunksLength: Int = header.i32BE("dictionary chunks_length")
    if (chunkCount < 0 || offsetsLength.toLong != 4L * chunkCount || offsetsLength > in.remaining)
      header.fail(s"a chunk_count >= 0 with offsets_length 4 x chunk_count within the dictionary, found $chunkCount and $offsetsLength", header.pos - 12L)
    if (chunksLength < 0 || chunksLength > in.remaining - offsetsLength)
      header.fail(s"a chunks_length within the ${in.remaining - offsetsLength} dictionary bytes left, found $chunksLength", header.pos - 4L)
    private val offsetsAt = in.pos
    private val offsets = Array.tabulate(chunkCount)(_ => in.i32BE("chunk offset"))
    for (i <- 0 until chunkCount) {
      val next = if (i + 1 < chunkCount) offsets(i + 1) else chunksLength
      if (offsets(i) < 0 || offsets(i) > next) in.fail(s"ascending chunk offsets within the $chunksLength chunk bytes, found ${offsets(i)} for chunk $i", offsetsAt + 4L * i)
    }
    private val chunksStart = in.pos
    private val keysStart = chunksStart + chunksLength
    /** The bytes of all key areas. */
    val keysLength: Int = end - keysStart
    private val chunks = new Array[Chunk](chunkCount)
    private val areas = new Array[Array[Any]](chunkCount)

    def chunk(i: Int): Chunk = {
      if (chunks(i) == null) {
        val r = new ByteReader(bytes, source, chunksStart + offsets(i), chunksStart + (if (i + 1 < chunkCount) offsets(i + 1) else chunksLength))
        val v = r.u8("chunk version").toByte
        if (v > Version) r.fail(s"chunk version <= $Version, found $v", r.pos - 1L)
        val head = readKey(r, kind, "chunk head key")
        val at = r.pos
        val fields = Array.fill(5)(r.i32BE("chunk header"))
        val Array(headCode, offset, count, x, y) = fields
        val (keysLen, fixed, offsetsLen, area) =
          if (kind == Str) {
            if (count < 0 || x.toLong != 4L * count || y < 4L * count)
              r.fail(s"a chunk size >= 0 with offsets_length 4 x size and keys_length >= 4 x size, found $count, $x, $y", at + 8L)
            (y, -1, x, x.toLong + y)
          } else {
            if (y != kind.width || count < 0 || x.toLong != count.toLong * kind.width)
              r.fail(s"fixed_length ${kind.width} and keys_length = size x ${kind.width}, found $y, $x for size $count", at + 8L)
            (x, y, -1, x.toLong)
          }
        if (offset < 0 || offset + area > keysLength)
          r.fail(s"a key area within the $keysLength key bytes, found offset $offset length $area", at + 4L)
        chunks(i) = Chunk(offsets(i), v, head, headCode, offset, count, keysLen, fixed, offsetsLen, keysStart + offset)
      }
      chunks(i)
    }

    def allChunks: Seq[Chunk] = (0 until chunkCount).map(chunk)

    /** The keys of chunk `i`'s key area, in code order. */
    def chunkKeys(i: Int): Array[Any] = {
      if (areas(i) == null) {
        val c = chunk(i)
        areas(i) =
          if (kind == Str) {
            val r = new ByteReader(bytes, source, c.areaStart, c.areaStart + c.offsetsLength + c.keysLength)
            val rel = Array.fill(c.size)(r.i32BE("chunk key offset"))
            val base = r.pos
            rel.zipWithIndex.map { case (o, j) =>
              if (o < 0 || o > c.keysLength - 4) r.fail(s"a key offset within the chunk's ${c.keysLength} key bytes, found $o", c.areaStart + 4L * j)
              val k = new ByteReader(bytes, source, base + o, base + c.keysLength)
              readKey(k, kind, "chunk key")
            }
          } else Array.tabulate[Any](c.size)(j => fixedKey(kind, bytes, c.areaStart + j * kind.width))
      }
      areas(i)
    }

    /** The code of `key`, else `-(insertion point) - 1`. */
    def find(key: Any): Int = {
      var low = 0
      var high = chunkCount - 1
      while (low <= high) {
        val mid = (low + high) >>> 1
        val c = chunk(mid)
        val cmp = compareKeys(kind, c.head, key)
        if (cmp > 0) high = mid - 1
        else if (cmp < 0) low = mid + 1
        else return c.headCode
      }
      if (low == 0) -1
      else {
        val c = chunk(low - 1)
        // fixed keys are read in place (a chunk holds up to chunk-size / width of them), strings once per chunk
        val strings = if (kind == Str) chunkKeys(low - 1) else null
        val target = if (kind == Str) 0L else orderOf(kind, key.asInstanceOf[Long])
        var lo = 0
        var hi = c.size - 1
        while (lo <= hi) {
          val mid = (lo + hi) >>> 1
          val cmp =
            if (kind == Str) compareKeys(kind, strings(mid), key)
            else java.lang.Long.compare(orderOf(kind, fixedKey(kind, bytes, c.areaStart + mid * kind.width)), target)
          if (cmp > 0) hi = mid - 1
          else if (cmp < 0) lo = mid + 1
          else return c.headCode + 1 + mid
        }
        -(c.headCode + 1 + lo + 1)
      }
    }

    /** `find(code)`: the key with a code. */
    def keyOf(code: Int): Any = {
      if (code < 0) throw new IndexOutOfBoundsException(s"invalid code: $code")
      var low = 0
      var high = chunkCount - 1
      while (low <= high) {
        val mid = (low + high) >>> 1
        val c = chunk(mid)
        if (c.headCode > code) high = mid - 1
        else if (c.headCode < code) low = mid + 1
        else return c.head
      }
      if (low == 0) throw new IndexOutOfBoundsException(s"invalid code: $code")
      val c = chunk(low - 1)
      val index = code - c.headCode - 1
      if (index < 0 || index >= c.size) throw new IndexOutOfBoundsException(s"invalid code: $code")
      chunkKeys(low - 1)(index)
    }
  }

  /** A BSI in `bytes(start until end)`: header checked on open, bitmaps read when first needed. */
  final class BitSlices private[RangeBitmapIndex] (bytes: Array[Byte], source: String, val start: Int, val end: Int, rowCount: Int) {
    private val in = new ByteReader(bytes, source, start, end)
    private val (header, headerLength0, version0) = framedHeader(in, 10, "bsi")
    val headerLength: Int = headerLength0
    val version: Int = version0
    val count: Int = header.u8("bsi slice count").toByte
    if (count < 1 || count > 64) header.fail(s"a bsi slice count in 1..64, found $count", header.pos - 1L)
    val ebmLength: Int = header.i32BE("bsi ebm_length")
    val indexesLength: Int = header.i32BE("bsi indexes_length")
    if (indexesLength != 8 * count) header.fail(s"bsi indexes_length ${8 * count} (8 x slice count), found $indexesLength", header.pos - 4L)
    val sliceIndex: Array[Int] = Array.fill(2 * count)(header.i32BE("bsi slice index"))
    if (ebmLength < 0 || ebmLength > in.remaining) in.fail(s"a bsi ebm_length within the ${in.remaining} bytes left, found $ebmLength", start + 6L)
    private val ebmStart = in.pos
    private val slicesStart = ebmStart + ebmLength
    for (i <- 0 until count) {
      val (o, l) = (sliceIndex(2 * i), sliceIndex(2 * i + 1))
      if (o < 0 || l < 0 || o.toLong + l > end - slicesStart)
        in.fail(s"slice $i within the ${end - slicesStart} bytes after the ebm, found offset $o length $l", start + 14L + 8 * i)
    }
    private var ebmBitmap: RoaringBitmap = _
    private val slices = new Array[RoaringBitmap](count)

    private def bitmap(at: Int, length: Int, what: String): RoaringBitmap = {
      val r = new ByteReader(bytes, source, at, at + length)
      val bm = Roaring32.read(r)
      if (r.remaining != 0) r.fail(s"$what: a roaring bitmap of exactly $length bytes, found ${r.pos - at}", at.toLong)
      bm
    }

    /** The rows with a value (shared: callers clone before changing it). */
    def ebm: RoaringBitmap = {
      if (ebmBitmap == null) {
        val bm = bitmap(ebmStart, ebmLength, "bsi ebm")
        if (!bm.isEmpty && (bm.last() & 0xffffffffL) >= rowCount)
          throw new IndexFormatException(source, ebmStart.toLong, s"existence bitmap rows below row_count $rowCount, found ${bm.last() & 0xffffffffL}")
        ebmBitmap = bm
      }
      ebmBitmap
    }

    def slice(i: Int): RoaringBitmap = {
      if (slices(i) == null) slices(i) = bitmap(slicesStart + sliceIndex(2 * i), sliceIndex(2 * i + 1), s"bsi slice $i")
      slices(i)
    }

    /** The code of a row (`get(row)`), None for a null row. */
    def codeOf(row: Int): Option[Int] =
      if (!ebm.contains(row)) None else Some((0 until count).foldLeft(0)((c, i) => if (slice(i).contains(row)) c | (1 << i) else c))

    def eq(code: Int): RoaringBitmap =
      if (ebm.isEmpty) new RoaringBitmap
      else {
        // the first step from the ebm itself (no copy of it); an empty state stays empty
        val state = if ((code & 1) == 1) RoaringBitmap.and(ebm, slice(0)) else RoaringBitmap.andNot(ebm, slice(0))
        var i = 1
        while (i < count && !state.isEmpty) {
          if (((code >> i) & 1) == 1) state.and(slice(i)) else state.andNot(slice(i))
          i += 1
        }
        state
      }

    /** Rows whose code is above `code`; unless `masked`, also rows outside the ebm may be in it
      * (for complements within the ebm, which drop them anyway). */
    def gt(code: Int, masked: Boolean = true): RoaringBitmap =
      if (code < 0) ebm.clone()
      else if (ebm.isEmpty) new RoaringBitmap
      else {
        val start = java.lang.Long.numberOfTrailingZeros(~code.toLong)
        if (start >= count) new RoaringBitmap
        else {
          val state = slice(start).clone()
          var i = start + 1
          while (i < count) {
            if (((code >> i) & 1) == 1) state.and(slice(i)) else state.or(slice(i))
            i += 1
          }
          if (masked) state.and(ebm)
          state
        }
      }

    def gte(code: Int, masked: Boolean = true): RoaringBitmap = gt(code - 1, masked)

    /** O'Neil's top-k (largest codes), or bottom-k with `bottom`; with `strict` the ties at the
      * boundary are trimmed smallest row ids first. */
    def topK(k: Int, found: RoaringBitmap, strict: Boolean, bottom: Boolean): RoaringBitmap = {
      if (k == 0 || (found != null && found.isEmpty)) return new RoaringBitmap
      if (k < 0) throw new IllegalArgumentException(s"the k param can not be negative in ${if (bottom) "bottomK" else "topK"}, k=$k")
      var g = new RoaringBitmap
      var e = if (found == null) ebm.clone() else RoaringBitmap.and(ebm, found)
      if (e.getLongCardinality <= k) return e
      var i = count - 1
      var done = false
      while (i >= 0 && !done) {
        val s = slice(i)
        val picked = if (bottom) RoaringBitmap.andNot(e, s) else RoaringBitmap.and(e, s)
        val x = RoaringBitmap.or(g, picked)
        val n = x.getLongCardinality
        if (n > k) e = picked
        else if (n < k) { g = x; e = if (bottom) RoaringBitmap.and(e, s) else RoaringBitmap.andNot(e, s) }
        else { e = picked; done = true }
        i -= 1
      }
      val f = RoaringBitmap.or(g, e)
      var extra = f.getLongCardinality - k
      if (strict && extra > 0) {
        val it = e.getIntIterator
        while (it.hasNext && extra > 0) { f.remove(it.next()); extra -= 1 }
      }
      f
    }
  }

  /** Parses a payload at `bytes(offset until offset + length)` (the whole array by default). */
  def read(t: KeyType, bytes: Array[Byte], source: String, offset: Int = 0, length: Int = -1): Reader = {
    val kind = keyKind(t)
    val end = if (length < 0) bytes.length else offset + length
    val in = new ByteReader(bytes, source, offset, end)
    val (header, headerLength, version) = framedHeader(in, 9, "range-bitmap")
    val rowCount = header.i32BE("row_count")
    val cardinality = header.i32BE("cardinality")
    if (rowCount < 0 || cardinality < 0 || cardinality > rowCount)
      header.fail(s"a row_count >= 0 and a cardinality in 0..row_count, found $rowCount and $cardinality", header.pos - 8L)
    val min = if (cardinality > 0) readKey(header, kind, "min key") else null
    val max = if (cardinality > 0) readKey(header, kind, "max key") else null
    val dictionaryLength = header.i32BE("dictionary_length")
    if (dictionaryLength < 0 || dictionaryLength > in.remaining)
      header.fail(s"a dictionary_length within the ${in.remaining} bytes left, found $dictionaryLength", header.pos - 4L)
    val dictionaryStart = in.pos
    val dictionary = new Dictionary(bytes, source, dictionaryStart, dictionaryStart + dictionaryLength, kind)
    if ((dictionary.chunkCount > 0) != (cardinality > 0))
      throw new IndexFormatException(source, dictionaryStart + 5L, s"dictionary chunks exactly when cardinality > 0, found ${dictionary.chunkCount} chunks for cardinality $cardinality")
    val bsi = new BitSlices(bytes, source, dictionaryStart + dictionaryLength, end, rowCount)
    new Reader(t, kind, version, headerLength, rowCount, cardinality, min, max, dictionaryLength, dictionaryStart - offset, dictionary, bsi)
  }

  /** A parsed payload: the reader's predicates (`RangeBitmap`) and top-N. */
  final class Reader private[RangeBitmapIndex] (
      t: KeyType,
      val kind: KeyKind,
      val version: Int,
      val headerLength: Int,
      val rowCount: Int,
      val cardinality: Int,
      val min: Any,
      val max: Any,
      val dictionaryLength: Int,
      /** Offsets from the payload's start. */
      val dictionaryOffset: Int,
      val dictionary: Dictionary,
      val bsi: BitSlices
  ) extends FileIndexReader with TopNReader {

    def bsiOffset: Int = dictionaryOffset + dictionaryLength

    def keyOf(value: Any): Any = RangeBitmapIndex.keyOf(t, kind, value)

    private def cmp(a: Any, b: Any): Int = compareKeys(kind, a, b)

    def isNotNull: RoaringBitmap = if (cardinality <= 0) new RoaringBitmap else bsi.ebm.clone()

    def isNull(found: RoaringBitmap = null): RoaringBitmap =
      if (cardinality <= 0) twoRows
      else if (found != null && found.isEmpty) new RoaringBitmap
      else {
        val rows = bsi.ebm.clone()
        rows.flip(0L, rowCount.toLong)
        if (found != null) rows.and(found)
        rows
      }

    /** Paimon's answer without non-null values: `{0, row_count - 1}`. */
    private def twoRows: RoaringBitmap = if (rowCount > 0) RoaringBitmap.bitmapOf(0, rowCount - 1) else new RoaringBitmap

    /** The non-null rows not in `rows`, a fresh bitmap changed in place: flipped within the row
      * count, then ANDed with the ebm (as Paimon, without its copy of the ebm). */
    private def not(rows: RoaringBitmap): RoaringBitmap = {
      rows.flip(0L, rowCount.toLong)
      rows.and(bsi.ebm)
      rows
    }

    def eq(key: Any): RoaringBitmap =
      if (cardinality <= 0) new RoaringBitmap
      else {
        val (lo, hi) = (cmp(key, min), cmp(key, max))
        if (lo == 0 && hi == 0) isNotNull
        else if (lo < 0 || hi > 0) new RoaringBitmap
        else {
          val code = dictionary.find(key)
          if (code < 0) new RoaringBitmap else bsi.eq(code)
        }
      }

    def neq(key: Any): RoaringBitmap = if (cardinality <= 0) new RoaringBitmap else not(eq(key))

    def in(keys: Seq[Any]): RoaringBitmap = {
      val out = new RoaringBitmap
      if (cardinality > 0) keys.foreach(k => out.or(eq(k)))
      out
    }

    def notIn(keys: Seq[Any]): RoaringBitmap = if (cardinality <= 0) new RoaringBitmap else not(in(keys))

    def lt(key: Any): RoaringBitmap =
      if (cardinality <= 0) new RoaringBitmap
      else if (cmp(key, max) > 0) isNotNull
      else if (cmp(key, min) <= 0) new RoaringBitmap
      else not(gte(key, masked = false))

    def lte(key: Any): RoaringBitmap =
      if (cardinality <= 0) new RoaringBitmap
      else if (cmp(key, max) >= 0) isNotNull
      else if (cmp(key, min) < 0) new RoaringBitmap
      else not(gt(key, masked = false))

    def gt(key: Any): RoaringBitmap = gt(key, masked = true)

    def gte(key: Any): RoaringBitmap = gte(key, masked = true)

    private def gt(key: Any, masked: Boolean): RoaringBitmap =
      if (cardinality <= 0) new RoaringBitmap
      else if (cmp(key, min) < 0) isNotNull
      else if (cmp(key, max) >= 0) new RoaringBitmap
      else {
        val code = dictionary.find(key)
        if (code < 0) bsi.gte(-code - 1, masked) else bsi.gt(code, masked)
      }

    private def gte(key: Any, masked: Boolean): RoaringBitmap =
      if (cardinality <= 0) new RoaringBitmap
      else if (cmp(key, min) <= 0) isNotNull
      else if (cmp(key, max) > 0) new RoaringBitmap
      else {
        val code = dictionary.find(key)
        bsi.gte(if (code < 0) -code - 1 else code, masked)
      }

    /** A null or unconvertible literal answers REMAIN (Paimon's reader throws; its planner never asks). */
    def evaluate(op: Op, literals: Seq[Any]): FileIndexResult = op match {
      case Op.IsNull    => FileIndexResult.Rows(isNull())
      case Op.IsNotNull => FileIndexResult.Rows(isNotNull)
      case _ if literals.contains(null) => FileIndexResult.Remain
      case _ =>
        scala.util.Try(literals.map(keyOf)).toOption match {
          case None => FileIndexResult.Remain
          case Some(keys) =>
            FileIndexResult.Rows(op match {
              case Op.Equal          => eq(keys.head)
              case Op.NotEqual       => neq(keys.head)
              case Op.In             => in(keys)
              case Op.NotIn          => notIn(keys)
              case Op.LessThan       => lt(keys.head)
              case Op.LessOrEqual    => lte(keys.head)
              case Op.GreaterThan    => gt(keys.head)
              case Op.GreaterOrEqual => gte(keys.head)
              case Op.Between        => RoaringBitmap.and(gte(keys(0)), lte(keys(1)))
              case _                 => throw new IllegalStateException(op.name)
            })
        }
    }

    /** `topK`/`bottomK` with the nulls placed first or last; `found` restricts the rows (null: all). */
    def topN(limit: Int, descending: Boolean, nullsFirst: Boolean, found: RoaringBitmap, strict: Boolean): RoaringBitmap =
      if (cardinality <= 0) twoRows
      else if (!nullsFirst) {
        val rows = bsi.topK(limit, found, strict, bottom = !descending)
        val n = rows.getLongCardinality
        if (n < limit) rows.or(isNull(found).limit((limit - n).toInt))
        rows
      } else {
        val rows = isNull(found)
        val n = rows.getLongCardinality
        if (n >= limit) rows.limit(limit)
        else { rows.or(bsi.topK((limit - n).toInt, found, strict, bottom = !descending)); rows }
      }

    def visitTopN(request: TopN, result: FileIndexResult): FileIndexResult = {
      val found = result match {
        case FileIndexResult.Rows(rows) => rows
        case _                          => null
      }
      val first = request.orders.head
      FileIndexResult.Rows(topN(request.limit, first.descending, first.nullsFirst, found, strict = request.orders.length == 1))
    }
  }
}
