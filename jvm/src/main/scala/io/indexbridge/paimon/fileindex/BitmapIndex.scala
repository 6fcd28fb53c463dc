package io.indexbridge.paimon.fileindex

import io.indexbridge.bytes.{ByteReader, ByteSink}
import io.indexbridge.paimon.{JavaOrder, KeyType}
import io.indexbridge.paimon.KeyType._
import io.indexbridge.roaring.Roaring32
import org.roaringbitmap.RoaringBitmap

import scala.jdk.CollectionConverters._

/** Paimon's bitmap file index (`BitmapFileIndex`, meta v1 `BitmapFileIndexMeta` and v2
  * `BitmapFileIndexMetaV2`, spec §6): one roaring bitmap of rows per distinct key.
  *
  * {{{
  * v1                                            v2
  * u8      version = 1                           u8      version = 2
  * i32 BE  rowCount (nulls included)             i32 BE  rowCount
  * i32 BE  nonNullBitmapNumber (distinct keys)   i32 BE  nonNullBitmapNumber
  * bool8   hasNull                               bool8   hasNull
  * [i32 BE nullOffset]          if hasNull       [i32 BE nullOffset, i32 BE nullBitmapLength]  if hasNull
  * per key, in HashMap order O:                  i32 BE  blockCount
  *   key bytes, i32 BE offset                    per block: first key bytes, i32 BE blockOffset
  * BODY                                          i32 BE  bitmapBodyOffset (= size of all blocks)
  *                                               INDEX BLOCKS (keys sorted, split at index-block-size):
  *                                                 i32 BE entryCount, per entry: key bytes,
  *                                                 i32 BE offset, i32 BE length (-1 for a single row)
  *                                               BODY
  *
  * BODY     roaring32(null rows) if >= 2 nulls, then roaring32(rows of k) of every key k with
  *          >= 2 rows, in order O; offsets are relative to BODY
  * offset   ~row for a key (or the null bitmap) with exactly one row, else its body offset
  *          (the null bitmap's offset is 0 also when there are no nulls)
  * order O  iteration order of Paimon's HashMap filled by computeIfAbsent per non-null row
  * key      IndexValue's key bytes: 1/2/4/8 bytes BE, or i32 BE length + UTF-8 for strings
  * }}}
  *
  * Readers answer `equal`/`in` with the rows of the keys, `not_equal`/`not_in`/`is_not_null`
  * with their complement in [0, rowCount) (so null rows are included), `is_null` with the null
  * rows; anything else is REMAIN.
  */
object BitmapIndex {
  val Identifier = "bitmap"
  val DefaultVersion = 2
  val DefaultIndexBlockSize = 16 * 1024

  def supports(t: KeyType): Boolean = t match {
    case BinaryType(_) | VarBinaryType(_) | DecimalType(_, _) => false
    case _                                                    => true
  }

  private def checkSupported(t: KeyType): Unit =
    if (!supports(t)) throw new UnsupportedOperationException(s"the bitmap index does not support $t")

  /** Options `version` (1 or 2) and `index-block-size` (a MemorySize such as `16kb`). */
  def writer(t: KeyType, options: Map[String, String] = Map.empty): Writer = {
    val version = options.get("version").map(_.trim.toInt).getOrElse(DefaultVersion)
    val blockSize = options.get("index-block-size").map(memorySize).getOrElse(DefaultIndexBlockSize.toLong)
    new Writer(t, version, math.min(blockSize, Int.MaxValue.toLong).toInt)
  }

  def write(t: KeyType, values: Iterable[Any], options: Map[String, String] = Map.empty): Array[Byte] = {
    val w = writer(t, options)
    values.foreach(w.write)
    w.serialize()
  }

  /** Paimon's `MemorySize.parse`: a number of bytes with an optional unit (b, k/kb, m/mb, g/gb, t/tb). */
  def memorySize(text: String): Long = {
    val s = text.trim.toLowerCase(java.util.Locale.ROOT)
    val digits = s.takeWhile(Character.isDigit)
    val unit = s.drop(digits.length).trim
    if (digits.isEmpty) throw new IllegalArgumentException(s"'$text' is not a memory size")
    val multiplier = unit match {
      case "" | "b" | "bytes"        => 1L
      case "k" | "kb" | "kibibytes"  => 1L << 10
      case "m" | "mb" | "mebibytes"  => 1L << 20
      case "g" | "gb" | "gibibytes"  => 1L << 30
      case "t" | "tb" | "tebibytes"  => 1L << 40
      case _                         => throw new IllegalArgumentException(s"'$text': unknown memory unit '$unit'")
    }
    Math.multiplyExact(digits.toLong, multiplier)
  }

  /** Collects rows per distinct key without boxing per row: keys get dense slot numbers in order
    * of first appearance (an open-addressing table for `Long` keys), every row remembers its slot
    * (-1 for null), and the roaring bitmaps are only built in [[serialize]]. */
  final class Writer(t: KeyType, version: Int, indexBlockSize: Int) extends FileIndexWriter {
    checkSupported(t)
    require(version == 1 || version == 2, s"bitmap index version must be 1 or 2, got $version")

    private val bytesKeys = IndexValue.isBytes(t)
    private var rowSlots = new Array[Int](1024)
    private var rowCount = 0
    private var nonNullRows = 0
    private var callOfLastNewKey = -1

    private var slotCount = 0
    private var longKeys = new Array[Long](16)
    private var table = Array.fill(32)(-1) // slot per bucket (Long keys)
    private val byteSlots = new java.util.HashMap[BytesKey, Integer]
    private val byteKeys = scala.collection.mutable.ArrayBuffer.empty[Array[Byte]]

    def write(value: Any): Unit =
      if (value == null) writeNull()
      else if (bytesKeys) writeBytes(IndexValue.toBytes(t, value))
      else writeKey(IndexValue.toLong(t, value))

    def writeNull(): Unit = addRow(-1)

    /** A non-null value by its `Long` key ([[IndexValue.toLong]]). */
    def writeKey(key: Long): Unit = {
      val mask = table.length - 1
      var i = mix(key) & mask
      while (table(i) >= 0 && longKeys(table(i)) != key) i = (i + 1) & mask
      val slot =
        if (table(i) >= 0) table(i)
        else {
          if (slotCount == longKeys.length) longKeys = java.util.Arrays.copyOf(longKeys, slotCount * 2)
          longKeys(slotCount) = key
          table(i) = slotCount
          newSlot()
        }
      addNonNull(slot)
      if (slotCount * 2 > table.length) rehash()
    }

    /** A non-null string or binary value by its bytes (not copied). */
    def writeBytes(bytes: Array[Byte]): Unit = {
      val key = new BytesKey(bytes)
      val existing = byteSlots.get(key)
      val slot =
        if (existing != null) existing.intValue
        else {
          byteKeys += bytes
          byteSlots.put(key, slotCount)
          newSlot()
        }
      addNonNull(slot)
    }

    private def newSlot(): Int = {
      callOfLastNewKey = nonNullRows
      slotCount += 1
      slotCount - 1
    }

    private def addNonNull(slot: Int): Unit = {
      nonNullRows += 1
      addRow(slot)
    }

    private def addRow(slot: Int): Unit = {
      if (rowCount == rowSlots.length) rowSlots = java.util.Arrays.copyOf(rowSlots, rowCount * 2)
      rowSlots(rowCount) = slot
      rowCount += 1
    }

    private def rehash(): Unit = {
      table = Array.fill(table.length * 2)(-1)
      val mask = table.length - 1
      for (slot <- 0 until slotCount) {
        var i = mix(longKeys(slot)) & mask
        while (table(i) >= 0) i = (i + 1) & mask
        table(i) = slot
      }
    }

    private def keyHash(slot: Int): Int =
      if (bytesKeys) IndexValue.bytesHashCode(byteKeys(slot)) else IndexValue.javaHashCode(t, longKeys(slot))

    private def writeKeyBytes(out: ByteSink, slot: Int): Unit =
      if (bytesKeys) {
        out.u32BE(byteKeys(slot).length)
        out.bytes(byteKeys(slot))
      } else
        IndexValue.keyWidth(t) match {
          case 1 => out.u8(longKeys(slot).toInt)
          case 2 => out.u8(longKeys(slot).toInt >>> 8); out.u8(longKeys(slot).toInt)
          case 4 => out.u32BE(longKeys(slot).toInt)
          case _ => out.u64BE(longKeys(slot))
        }

    private def keySize(slot: Int): Int = if (bytesKeys) 4 + byteKeys(slot).length else IndexValue.keyWidth(t)

    /** The slot of a `Long` key that was written. */
    private def slotOfKey(key: Long): Int = {
      val mask = table.length - 1
      var i = mix(key) & mask
      while (longKeys(table(i)) != key) i = (i + 1) & mask
      table(i)
    }

    /** The slots in key order: integral keys (signed `Long` order) by a primitive sort of the keys,
      * the others (floating point, bytes) by their comparator. */
    private def sortedSlots(order: Array[Int]): Array[Int] =
      if (bytesKeys || t == FloatType || t == DoubleType) order.sortWith((a, b) => compareSlots(a, b) < 0)
      else {
        val keys = java.util.Arrays.copyOf(longKeys, slotCount)
        java.util.Arrays.sort(keys)
        keys.map(slotOfKey)
      }

    def serialize(): Array[Byte] = {
      // rows of every slot, ascending, by a counting sort over rowSlots
      val starts = new Array[Int](slotCount + 1)
      var nulls = 0
      var r = 0
      while (r < rowCount) { val s = rowSlots(r); if (s < 0) nulls += 1 else starts(s + 1) += 1; r += 1 }
      var s = 0
      while (s < slotCount) { starts(s + 1) += starts(s); s += 1 }
      val rows = new Array[Int](nonNullRows)
      val nullRows = new Array[Int](nulls)
      val fill = java.util.Arrays.copyOf(starts, slotCount)
      var n = 0
      r = 0
      while (r < rowCount) {
        val s = rowSlots(r)
        if (s < 0) { nullRows(n) = r; n += 1 }
        else { rows(fill(s)) = r; fill(s) += 1 }
        r += 1
      }

      // computeIfAbsent per non-null row: only new keys change the table, plus the resize a
      // later call (a repeated key) performs at its start
      val calls = (0 until slotCount) ++ (if (nonNullRows > callOfLastNewKey + 1 && slotCount > 0) Seq(0) else Nil)
      // tree bins order colliding keys by the key type's compareTo
      val order = JavaOrder.afterComputeIfAbsent(calls)(keyHash, Some(Ordering.fromLessThan[Int](compareSlots(_, _) < 0))).toArray

      val nullBitmap = new RoaringBitmap
      nullBitmap.addN(nullRows, 0, nulls)
      val nullBytes = Roaring32.serialize(nullBitmap)
      val offsets = new Array[Int](slotCount)
      val lengths = new Array[Int](slotCount)
      val body = new ByteSink
      if (nulls >= 2) body.bytes(nullBytes)
      for (s <- order) {
        val count = starts(s + 1) - starts(s)
        if (count == 1) {
          offsets(s) = ~rows(starts(s))
          lengths(s) = -1
        } else {
          val bm = new RoaringBitmap
          bm.addN(rows, starts(s), count)
          val bytes = Roaring32.serialize(bm)
          offsets(s) = body.size
          lengths(s) = bytes.length
          body.bytes(bytes)
        }
      }
      val nullOffset = if (nulls == 1) ~nullRows(0) else 0

      val out = new ByteSink(64 + body.size + slotCount * (8 + (if (bytesKeys) 16 else IndexValue.keyWidth(t))))
      out.u8(version)
      out.u32BE(rowCount)
      out.u32BE(slotCount)
      out.u8(if (nulls > 0) 1 else 0)
      if (nulls > 0) out.u32BE(nullOffset)
      if (version == 1) {
        for (s <- order) { writeKeyBytes(out, s); out.u32BE(offsets(s)) }
      } else {
        if (nulls > 0) out.u32BE(nullBytes.length)
        val sorted = sortedSlots(order)
        // blocks: first entry, entry count, size
        val firsts, counts, sizes = scala.collection.mutable.ArrayBuilder.make[Int]
        var (first, entries, size) = (0, 0, 0)
        var i = 0
        while (i < sorted.length) {
          val e = 8 + keySize(sorted(i))
          if (4 + e > indexBlockSize)
            throw new IllegalArgumentException(s"index fail: a bitmap index entry of $e bytes does not fit index-block-size $indexBlockSize")
          if (entries == 0 || size + e > indexBlockSize) {
            if (entries > 0) { firsts += first; counts += entries; sizes += size }
            first = i; entries = 0; size = 4
          }
          entries += 1; size += e
          i += 1
        }
        if (entries > 0) { firsts += first; counts += entries; sizes += size }
        val (blockFirsts, blockCounts, blockSizes) = (firsts.result(), counts.result(), sizes.result())
        out.u32BE(blockFirsts.length)
        var blockOffset = 0
        for (b <- blockFirsts.indices) {
          writeKeyBytes(out, sorted(blockFirsts(b)))
          out.u32BE(blockOffset)
          blockOffset += blockSizes(b)
        }
        out.u32BE(blockOffset)
        for (b <- blockFirsts.indices) {
          out.u32BE(blockCounts(b))
          var k = blockFirsts(b)
          while (k < blockFirsts(b) + blockCounts(b)) {
            val s = sorted(k)
            writeKeyBytes(out, s)
            out.u32BE(offsets(s))
            out.u32BE(lengths(s))
            k += 1
          }
        }
      }
      out.bytes(body)
      out.toArray
    }

    private def compareSlots(a: Int, b: Int): Int =
      if (bytesKeys) IndexValue.compareBytes(byteKeys(a), byteKeys(b)) else IndexValue.compareKeys(t, longKeys(a), longKeys(b))
  }

  /** murmur3's fmix64, to spread `Long` keys over the open-addressing table. */
  private def mix(key: Long): Int = {
    var h = key
    h ^= h >>> 33
    h *= 0xff51afd7ed558ccdL
    h ^= h >>> 33
    h *= 0xc4ceb9fe1a85ec53L
    (h ^ (h >>> 33)).toInt
  }

  /** A byte-string key with value equality (the bitmap writer's and v1 reader's map keys). */
  private final class BytesKey(val bytes: Array[Byte]) {
    override val hashCode: Int = java.util.Arrays.hashCode(bytes)
    override def equals(o: Any): Boolean = o match {
      case k: BytesKey => java.util.Arrays.equals(bytes, k.bytes)
      case _           => false
    }
  }

  /** Reads a payload in `bytes(offset until offset + length)` (not copied). */
  def read(t: KeyType, bytes: Array[Byte], source: String, offset: Int = 0, length: Int = -1): Reader = {
    checkSupported(t)
    new Reader(t, new ByteReader(bytes, source, offset, if (length < 0) bytes.length else offset + length))
  }

  /** A parsed bitmap index. v1 metas are read whole; v2 index blocks are read when first needed. */
  final class Reader private[BitmapIndex] (t: KeyType, in: ByteReader) extends FileIndexReader {
    private val bytesKeys = IndexValue.isBytes(t)
    private val minKeySize = if (bytesKeys) 4 else IndexValue.keyWidth(t)
    private val start = in.pos

    val version: Int = in.u8("bitmap index version")
    if (version != 1 && version != 2) in.fail(s"bitmap index version 1 or 2, found $version", start.toLong)
    val rowCount: Int = in.i32BE("bitmap rowCount")
    if (rowCount < 0) in.fail(s"a bitmap rowCount >= 0, found $rowCount", in.pos - 4L)
    private val keyCount = in.i32BE("bitmap nonNullBitmapNumber")
    private val hasNull = in.u8("bitmap hasNull") != 0
    private val nullOffset = if (hasNull) in.i32BE("bitmap nullOffset") else 0
    private val nullLength = if (hasNull && version == 2) in.i32BE("bitmap nullBitmapLength") else -1

    /** One index entry: key (`Long` or bytes), offset (< 0: the single row ~offset), length (v2). */
    private final class Entry(val longKey: Long, val bytesKey: Array[Byte], val offset: Int, val length: Int)

    private def readKey(r: ByteReader, what: String): (Long, Array[Byte]) =
      if (bytesKeys) {
        val n = r.i32BE(s"$what length")
        if (n < 0) r.fail(s"$what: a string key length >= 0, found $n", r.pos - 4L)
        (0L, r.take(n, what))
      } else {
        val width = IndexValue.keyWidth(t)
        r.require(width, what)
        var v = 0L
        for (_ <- 0 until width) v = (v << 8) | r.u8(what)
        (if (width == 8) v else (v << (64 - 8 * width)) >> (64 - 8 * width), null)
      }

    private def readEntry(r: ByteReader, withLength: Boolean): Entry = {
      val (l, b) = readKey(r, "bitmap key")
      val offset = r.i32BE("bitmap offset")
      new Entry(l, b, offset, if (withLength) r.i32BE("bitmap length") else -1)
    }

    private def checkCount(count: Int, entrySize: Int, what: String, r: ByteReader): Unit =
      if (count < 0 || count.toLong * entrySize > r.remaining)
        r.fail(s"a $what that fits the ${r.remaining} bytes left (>= $entrySize bytes each), found $count", r.pos - 4L)

    private def compare(e: Entry, longKey: Long, bytesKey: Array[Byte]): Int =
      if (bytesKeys) IndexValue.compareBytes(e.bytesKey, bytesKey) else IndexValue.compareKeys(t, e.longKey, longKey)

    // v1: every entry; v2: the block directory, and each block once read
    private var v1Entries: Map[Any, Entry] = Map.empty
    private var directory: Array[Entry] = Array.empty
    private var blockEnds: Array[Int] = Array.empty
    private var blocks: Array[Array[Entry]] = Array.empty
    private var blocksStart = 0
    private var bodyStart = 0

    if (version == 1) {
      checkCount(keyCount, minKeySize + 4, "bitmap key count", in)
      val entries = Array.fill(keyCount)(readEntry(in, withLength = false))
      v1Entries = entries.iterator.map(e => (if (bytesKeys) new BytesKey(e.bytesKey) else e.longKey) -> e).toMap
      bodyStart = in.pos
    } else {
      if (keyCount < 0) in.fail(s"a bitmap key count >= 0, found $keyCount", start + 5L)
      val blockCount = in.i32BE("bitmap blockCount")
      checkCount(blockCount, minKeySize + 4, "bitmap block count", in)
      directory = Array.fill(blockCount)(readEntry(in, withLength = false))
      val blocksSize = in.i32BE("bitmap bitmapBodyOffset")
      blocksStart = in.pos
      in.require(blocksSize.toLong, "bitmap index blocks")
      bodyStart = blocksStart + blocksSize
      blockEnds = new Array[Int](blockCount)
      for (i <- 0 until blockCount) {
        val at = directory(i).offset
        val end = if (i + 1 < blockCount) directory(i + 1).offset else blocksSize
        if (at < 0 || at > end || end > blocksSize)
          in.fail(s"bitmap block offsets ascending inside the $blocksSize bytes of index blocks, found $at..$end for block $i", blocksStart.toLong)
        blockEnds(i) = end
      }
      blocks = new Array(blockCount)
    }

    private def block(i: Int): Array[Entry] = {
      if (blocks(i) == null) {
        val r = new ByteReader(in.bytes, in.source, blocksStart + directory(i).offset, blocksStart + blockEnds(i))
        val n = r.i32BE("bitmap block entryCount")
        checkCount(n, minKeySize + 8, "bitmap block entry count", r)
        blocks(i) = Array.fill(n)(readEntry(r, withLength = true))
      }
      blocks(i)
    }

    private def find(longKey: Long, bytesKey: Array[Byte]): Entry =
      if (version == 1) v1Entries.getOrElse(if (bytesKeys) new BytesKey(bytesKey) else longKey, null)
      else {
        // the last block whose first key is <= the key, then the entry in it
        var lo = 0
        var hi = directory.length - 1
        var found = -1
        while (lo <= hi) {
          val mid = (lo + hi) >>> 1
          if (compare(directory(mid), longKey, bytesKey) <= 0) { found = mid; lo = mid + 1 }
          else hi = mid - 1
        }
        if (found < 0) null else findInBlock(found, longKey, bytesKey)
      }

    /** The entry of a key in v2 block `i`, searched in place (a lookup does not parse the whole
      * block): by bisection over fixed-width entries, by a scan of the sorted string entries. */
    private def findInBlock(i: Int, longKey: Long, bytesKey: Array[Byte]): Entry = {
      val bytes = in.bytes
      val r = new ByteReader(bytes, in.source, blocksStart + directory(i).offset, blocksStart + blockEnds(i))
      val n = r.i32BE("bitmap block entryCount")
      checkCount(n, minKeySize + 8, "bitmap block entry count", r)
      val first = r.pos
      if (!bytesKeys) {
        val width = IndexValue.keyWidth(t)
        val size = width + 8
        var (l, h) = (0, n - 1)
        while (l <= h) {
          val mid = (l + h) >>> 1
          val at = first + mid * size
          var v = 0L
          var k = 0
          while (k < width) { v = (v << 8) | (bytes(at + k) & 0xff); k += 1 }
          if (width < 8) v = (v << (64 - 8 * width)) >> (64 - 8 * width)
          val c = IndexValue.compareKeys(t, v, longKey)
          if (c == 0) return new Entry(v, null, ByteReader.i32BE(bytes, at + width), ByteReader.i32BE(bytes, at + width + 4))
          if (c < 0) l = mid + 1 else h = mid - 1
        }
        null
      } else {
        var k = 0
        while (k < n) {
          val at = r.pos
          val len = r.i32BE("bitmap key length")
          if (len < 0) r.fail(s"bitmap key: a string key length >= 0, found $len", at.toLong)
          r.require(len + 8L, "bitmap key and its offset and length")
          val c = java.util.Arrays.compareUnsigned(bytes, r.pos, r.pos + len, bytesKey, 0, bytesKey.length)
          if (c == 0) return new Entry(0L, bytesKey, ByteReader.i32BE(bytes, r.pos + len), ByteReader.i32BE(bytes, r.pos + len + 4))
          if (c > 0) return null
          r.skip(len + 8, "bitmap entry")
          k += 1
        }
        null
      }
    }

    private def bitmapAt(offset: Int, length: Int): RoaringBitmap =
      if (offset < 0) RoaringBitmap.bitmapOf(~offset)
      else {
        if (offset.toLong + bodyStart > in.end) in.fail(s"a bitmap offset inside the body, found $offset", bodyStart.toLong)
        val end = if (version == 2) bodyStart.toLong + offset + length else in.end.toLong
        if (version == 2 && (length < 0 || end > in.end))
          in.fail(s"a bitmap length inside the body, found $length at offset $offset", bodyStart.toLong)
        Roaring32.read(new ByteReader(in.bytes, in.source, bodyStart + offset, end.toInt))
      }

    /** The bitmap of every key asked so far (null: the null rows), read once per reader as
      * Paimon's reader keeps them; handed out as copies, combinations, or results that copy them
      * when their rows are read ([[FileIndexResult.Rows.shared]]). */
    private val asked = new java.util.HashMap[Any, RoaringBitmap]

    private def cachedRows(value: Any): RoaringBitmap =
      if (value == null) {
        var bm = asked.get(null)
        if (bm == null) { bm = if (!hasNull) new RoaringBitmap else bitmapAt(nullOffset, nullLength); asked.put(null, bm) }
        bm
      } else if (bytesKeys) {
        val key = IndexValue.toBytes(t, value)
        val boxed = new BytesKey(key)
        var bm = asked.get(boxed)
        if (bm == null) { bm = bitmapOf(find(0L, key)); asked.put(boxed, bm) }
        bm
      } else {
        val key = IndexValue.toLong(t, value)
        var bm = asked.get(key)
        if (bm == null) { bm = bitmapOf(find(key, null)); asked.put(key, bm) }
        bm
      }

    private def bitmapOf(e: Entry): RoaringBitmap = if (e == null) new RoaringBitmap else bitmapAt(e.offset, e.length)

    /** Rows whose value is `value` (a value of the column type; null: the null rows). */
    def rowsOf(value: Any): RoaringBitmap = cachedRows(value).clone()

    def nullRows: RoaringBitmap = rowsOf(null)

    /** Every distinct non-null key of the index is read when its block is: for tests and tools. */
    def keyCountInMeta: Int = keyCount

    /** The rows of every non-null key (loads every block and bitmap: validates the payload). */
    def keyRows: Iterator[RoaringBitmap] = {
      val entries = if (version == 1) v1Entries.valuesIterator else directory.indices.iterator.flatMap(i => block(i).iterator)
      entries.map(e => bitmapAt(e.offset, e.length))
    }

    private def complement(rows: RoaringBitmap): RoaringBitmap = {
      val all = new RoaringBitmap
      all.add(0L, rowCount.toLong)
      all.andNot(rows)
      all
    }

    /** The rows of any of `values`; for one value the cached bitmap itself (read only). */
    private def anyOf(values: Seq[Any]): RoaringBitmap =
      if (values.lengthCompare(1) == 0) cachedRows(values.head)
      else RoaringBitmap.or(values.iterator.map(cachedRows).asJava)

    def evaluate(op: Op, literals: Seq[Any]): FileIndexResult = op match {
      case Op.Equal | Op.In =>
        if (literals.lengthCompare(1) == 0) FileIndexResult.Rows.shared(cachedRows(literals.head)) else FileIndexResult.Rows(anyOf(literals))
      case Op.NotEqual | Op.NotIn => FileIndexResult.Rows(complement(anyOf(literals)))
      case Op.IsNull              => FileIndexResult.Rows.shared(cachedRows(null))
      case Op.IsNotNull           => FileIndexResult.Rows(complement(cachedRows(null)))
      case _                      => FileIndexResult.Remain
    }
  }
}
