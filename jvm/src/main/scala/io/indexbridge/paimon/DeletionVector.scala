package io.indexbridge.paimon

import java.nio.{ByteBuffer, ByteOrder}
import java.util.zip.CRC32

import io.indexbridge.bytes.ByteReader
import io.indexbridge.roaring.Roaring32
import org.roaringbitmap.{ImmutableBitmapDataProvider, RoaringBitmap}

/** A Paimon deletion vector: the deleted row positions of one data file (spec/paimon.md §2.1–2.3).
  *
  * {{{
  * frame    i32 BE size            length of DATA
  *          DATA (size bytes)
  *          i32 BE crc             CRC-32 of DATA
  *
  * 32-bit   DATA = i32 BE magic 1581511376 (5e 43 f2 d0) ‖ roaring32(positions)
  * (BitmapDeletionVector)           positions 0 … 2^31-1
  *
  * 64-bit   DATA = i32 LE magic 1681511377 (d1 d3 39 64)
  * (Bitmap64DeletionVector)     ‖ i64 LE count
  *                              ‖ count × (i32 LE key ‖ roaring32(low 32 bits of the positions p with p >> 32 == key))
  *                              positions 0 … 0x7FFFFFFE_80000000; keys ascending, 0 … 2^31-2
  *
  * length recorded in the index manifest: size (32-bit), 4 + size + 4 (64-bit)
  * }}}
  *
  * Mutable, like Paimon's classes. Positions live in one 32-bit RoaringBitmap per high half
  * ("key"), held sparsely: the 64-bit writer emits the dense key list 0 … keyCount-1 as Paimon's
  * `OptimizedRoaringBitmap64` does (absent keys as empty bitmaps), the reader accepts sparse lists
  * without allocating the gaps. Bitmaps are run-optimised before every serialization, as Paimon
  * does, so the bytes follow the same history as Paimon's.
  *
  * A deserialized DV holds immutable RoaringBitmap views over the bytes it was read from (no copy
  * of the containers: decoding costs O(containers)); a bitmap becomes a mutable RoaringBitmap
  * (a copy) when it is first changed, run-optimised or merged.
  */
final class DeletionVector private (
    val bitmap64: Boolean,
    private var keys: Array[Int],
    private var bitmaps: Array[ImmutableBitmapDataProvider],
    private var keyCount: Int
) {
  import DeletionVector._

  /** False once positions were added after the last run-optimisation. */
  private var optimized = false

  /** Marks `position` deleted. IllegalArgumentException outside 0 … 2^31-1 (32-bit) or
    * 0 … 0x7FFFFFFE_80000000 (64-bit). */
  def delete(position: Long): Unit = {
    checkPosition(position)
    val key = (position >>> 32).toInt
    bitmapAt(key).add(position.toInt)
    optimized = false
  }

  /** Bulk [[delete]]: each run of positions sharing a 32-bit key goes to its bitmap at once
    * ([[addLows]]), as fast as building a RoaringBitmap from an int array. */
  def deleteAll(positions: Array[Long]): Unit = deleteAll(positions, positions.length)

  /** [[deleteAll]] of `positions(0 until count)`. */
  def deleteAll(positions: Array[Long], count: Int): Unit = {
    val lows = new Array[Int](math.min(count, LowsChunk))
    if (!bitmap64) {
      // The positions are narrowed a cache-sized chunk at a time. Every 32-bit position has its
      // top 33 bits clear, so one OR over a chunk checks them all, and the loop stays simple
      // enough for the JIT to unroll (checking each position was a quarter of the time of
      // building a DV).
      val bm = bitmapAt(0)
      var start = 0
      while (start < count) {
        val n = math.min(count - start, lows.length)
        var all = 0L
        var descents = 0L
        var last = 0L
        var i = 0
        while (i < n) {
          val p = positions(start + i)
          all |= p
          descents |= p - last // negative once a position is below the one before
          last = p
          lows(i) = p.toInt
          i += 1
        }
        if ((all >>> 31) != 0) (start until start + n).foreach(i => checkPosition(positions(i)))
        addLows(bm, lows, n, ascending = descents >= 0)
        start += n
      }
    } else {
      var i = 0
      while (i < count) {
        val key = positions(i) >>> 32
        var n = 0
        var ascending = true
        while (i < count && n < lows.length && (positions(i) >>> 32) == key) {
          checkPosition(positions(i))
          lows(n) = positions(i).toInt
          if (n > 0 && positions(i) < positions(i - 1)) ascending = false
          n += 1
          i += 1
        }
        addLows(bitmapAt(key.toInt), lows, n, ascending)
      }
    }
    optimized = false
  }

  /** [[deleteAll]] of a 32-bit DV's positions given as ints, `lows(0 until count)`, which it
    * reorders. IllegalArgumentException if the DV is 64-bit or a position is negative (beyond
    * 2^31-1 as a long). */
  def deleteAll32(lows: Array[Int], count: Int): Unit = {
    require(!bitmap64, "deleteAll32 takes the positions of a 32-bit deletion vector")
    var all = 0
    var descents = 0
    var last = 0
    var i = 0
    while (i < count) {
      all |= lows(i)
      descents |= lows(i) - last // (no overflow once all are non-negative)
      last = lows(i)
      i += 1
    }
    if (all < 0) (0 until count).foreach(i => checkPosition(lows(i).toLong))
    addLows(bitmapAt(0), lows, count, ascending = descents >= 0)
    optimized = false
  }

  def isDeleted(position: Long): Boolean = {
    checkPosition(position)
    val i = indexOf((position >>> 32).toInt)
    i >= 0 && bitmaps(i).contains(position.toInt)
  }

  /** Number of deleted positions. */
  def cardinality: Long = bitmaps.iterator.map(_.getLongCardinality).sum

  /** The bitmaps' memory as RoaringBitmap estimates it (O(containers); for memory accounting). */
  def heapBytes: Long = {
    var bytes = 0L
    var i = 0
    while (i < bitmaps.length) { bytes += bitmaps(i).getLongSizeInBytes; i += 1 }
    bytes
  }

  /** Adds every position of `other` (set union); both must have the same width. */
  def merge(other: DeletionVector): Unit = {
    require(
      other.bitmap64 == bitmap64,
      s"cannot merge a ${width(other.bitmap64)} deletion vector into a ${width(bitmap64)} one"
    )
    val (otherKeys, otherBitmaps) = (other.keys, other.bitmaps)
    for (i <- otherKeys.indices) bitmapAt(otherKeys(i)).or(mutable(otherBitmaps(i)))
    keyCount = math.max(keyCount, other.keyCount)
    optimized = false
  }

  /** The deleted positions, ascending. */
  def positions: Array[Long] = {
    val n = cardinality
    require(n <= Int.MaxValue - 8, s"$n positions do not fit in an array")
    val out = new scala.collection.mutable.ArrayBuilder.ofLong
    out.sizeHint(n.toInt)
    foreachPosition(out += _)
    out.result()
  }

  /** Calls `f` on each deleted position, ascending. (Iterates with `getIntIterator`:
    * `RoaringBitmap.forEach` of RoaringBitmap 1.3.0 skips a run that starts within its length
    * above 2^31, which 64-bit DVs can hold.) */
  def foreachPosition(f: Long => Unit): Unit =
    for (i <- keys.indices) {
      val high = keys(i).toLong << 32
      val lows = bitmaps(i).getIntIterator
      while (lows.hasNext) f(high | (lows.next() & 0xffffffffL))
    }

  /** The whole frame: i32 BE size, DATA, i32 BE CRC (what `DeletionVector.serializeToBytes` returns). */
  def serialize(): Array[Byte] = {
    val out = new Array[Byte](serializedSize)
    writeFrame(out, 0)
    out
  }

  /** Length of the frame [[serialize]] returns. Run-optimises first, as serialization does. */
  def serializedSize: Int = {
    if (!optimized) {
      for (i <- bitmaps.indices) mutableAt(i).runOptimize()
      optimized = true
    }
    val roaring =
      if (!bitmap64) bitmaps(0).serializedSizeInBytes.toLong
      else 8L + 12L * keyCount + bitmaps.iterator.map(_.serializedSizeInBytes - EmptyRoaringSize.toLong).sum
    val frame = 4L + 4L + roaring + 4L
    if (frame > Int.MaxValue)
      throw new IllegalStateException(s"a deletion vector frame of $frame bytes exceeds 2 GiB (Paimon's limit too)")
    frame.toInt
  }

  /** The DV `length` Paimon records in the index manifest (§2.5): size for 32-bit, the whole
    * frame for 64-bit. */
  def indexMetaLength: Int = if (bitmap64) serializedSize else serializedSize - 8

  /** Writes the frame at `out(offset)`; returns its length. */
  private[paimon] def writeFrame(out: Array[Byte], offset: Int): Int = {
    val frame = serializedSize
    val dataLength = frame - 8
    val be = ByteBuffer.wrap(out)
    be.putInt(offset, dataLength)
    if (!bitmap64) {
      be.putInt(offset + 4, Magic32)
      Roaring32.writeTo(mutableAt(0), out, offset + 8)
    } else {
      val le = ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN)
      le.putInt(offset + 4, Magic64)
      le.putLong(offset + 8, keyCount.toLong)
      var p = offset + 16
      var i = 0
      for (key <- 0 until keyCount) {
        le.putInt(p, key)
        val bm = if (i < keys.length && keys(i) == key) { i += 1; mutableAt(i - 1) } else Empty
        p += 4 + Roaring32.writeTo(bm, out, p + 4)
      }
    }
    val crc = new CRC32
    crc.update(out, offset + 4, dataLength)
    be.putInt(offset + 4 + dataLength, crc.getValue.toInt)
    frame
  }

  /** Same width and same positions (however the bitmaps are laid out). */
  override def equals(other: Any): Boolean = other match {
    case that: DeletionVector =>
      val (mine, theirs) = (nonEmptyIndices, that.nonEmptyIndices)
      that.bitmap64 == bitmap64 && mine.length == theirs.length && mine.zip(theirs).forall { case (i, j) =>
        val (a, b) = (mutable(bitmaps(i)), mutable(that.bitmaps(j)))
        keys(i) == that.keys(j) && a.getCardinality == b.getCardinality &&
        RoaringBitmap.andCardinality(a, b) == a.getCardinality
      }
    case _ => false
  }

  override def hashCode: Int = {
    val nonEmpty = nonEmptyIndices
    if (nonEmpty.isEmpty) bitmap64.##
    else {
      val (f, l) = (nonEmpty.head, nonEmpty.last)
      val first = keys(f).toLong << 32 | (bitmaps(f).first() & 0xffffffffL)
      val last = keys(l).toLong << 32 | (bitmaps(l).last() & 0xffffffffL)
      (bitmap64, cardinality, first, last).##
    }
  }

  override def toString: String = {
    val n = cardinality
    val shown = keys.indices.iterator
      .flatMap { i =>
        val it = bitmaps(i).getIntIterator
        Iterator.continually(it).takeWhile(_.hasNext).map(it => keys(i).toLong << 32 | (it.next() & 0xffffffffL))
      }
      .take(10)
      .mkString(", ")
    s"DeletionVector(${width(bitmap64)}, cardinality=$n, positions=[$shown${if (n > 10) ", …" else ""}])"
  }

  private def nonEmptyIndices: IndexedSeq[Int] = keys.indices.filter(i => !bitmaps(i).isEmpty)

  /** IllegalArgumentException unless [[delete]] accepts `position`. */
  def checkPosition(position: Long): Unit = {
    val max = if (bitmap64) MaxPosition64 else MaxPosition32
    if (position < 0 || position > max)
      throw new IllegalArgumentException(
        s"position $position is outside 0..$max, the range of a ${width(bitmap64)} deletion vector" +
          (if (bitmap64) "" else " (larger files need deletion-vectors.bitmap64 = true)")
      )
  }

  /** Adds `lows(0 until n)`, the low halves of positions of one key (unsigned; ascending if
    * `ascending`), to its bitmap `bm`, reordering them.
    *
    * Why not `addN` alone: it adds value by value, and into an array container (a 64K range of
    * up to 4096 values) each value below the container's last is a binary search and a shift of
    * the values above it: `ib_dv_agg` over positions in no order spent most of its time there.
    * When the bitmap has array containers and no run containers, a batch not in ascending order
    * is sorted and OR'ed in as a bitmap of its own (built by appending): one merge per container
    * (and a walk over the bitmap's containers, as the OR makes). Its containers are then the ones
    * `add` of each value leaves (an array up to 4096 values, a bitmap above), so the bytes are the
    * same. Otherwise `addN`: an ascending batch mostly appends, into bitmap containers it is
    * cheapest, and run containers stay the ones Paimon's `add` leaves. */
  private def addLows(bm: RoaringBitmap, lows: Array[Int], n: Int, ascending: Boolean): Unit =
    if (n <= 1 || ascending || !mergesArrays(bm)) bm.addN(lows, 0, n)
    else {
      sortUnsigned(lows, n)
      val batch = new RoaringBitmap
      batch.addN(lows, 0, n)
      bm.or(batch)
    }

  private def indexOf(key: Int): Int =
    if (keys.length == 1 && keys(0) == key) 0 else java.util.Arrays.binarySearch(keys, key)

  /** Bitmap `i`, turned into a mutable RoaringBitmap (a copy) if it is a view. */
  private def mutableAt(i: Int): RoaringBitmap = bitmaps(i) match {
    case bm: RoaringBitmap => bm
    case view =>
      val bm = mutable(view)
      bitmaps(i) = bm
      bm
  }

  /** The bitmap of `key`, mutable, created (and the dense key count grown) if absent. */
  private def bitmapAt(key: Int): RoaringBitmap = {
    val i = indexOf(key)
    if (i >= 0) mutableAt(i)
    else {
      val at = -i - 1
      val bm = new RoaringBitmap
      keys = (keys.take(at) :+ key) ++ keys.drop(at)
      bitmaps = (bitmaps.take(at) :+ bm) ++ bitmaps.drop(at)
      keyCount = math.max(keyCount, key + 1)
      bm
    }
  }
}

object DeletionVector {
  val Magic32: Int = 1581511376
  val Magic64: Int = 1681511377
  val MaxPosition32: Long = Int.MaxValue.toLong
  val MaxPosition64: Long = 0x7ffffffe80000000L

  private val Empty = new RoaringBitmap

  /** Positions [[DeletionVector.deleteAll]] narrows to ints at a time (16 KiB: stays in L1). */
  private val LowsChunk = 4096
  private val EmptyRoaringSize = Empty.serializedSizeInBytes

  private def width(bitmap64: Boolean) = if (bitmap64) "64-bit" else "32-bit"

  /** Whether `bm` (empty, or with an array container) has no run containers. */
  private def mergesArrays(bm: RoaringBitmap): Boolean = {
    var arrays = bm.isEmpty
    val containers = bm.getContainerPointer
    while (containers.getContainer != null) {
      if (containers.isRunContainer) return false
      arrays ||= !containers.isBitmapContainer
      containers.advance()
    }
    arrays
  }

  /** Sorts `lows(0 until n)` as unsigned ints. */
  private def sortUnsigned(lows: Array[Int], n: Int): Unit = {
    var negative = false
    var i = 0
    while (i < n) { negative |= lows(i) < 0; i += 1 }
    if (!negative) java.util.Arrays.sort(lows, 0, n)
    else {
      for (i <- 0 until n) lows(i) ^= Int.MinValue
      java.util.Arrays.sort(lows, 0, n)
      for (i <- 0 until n) lows(i) ^= Int.MinValue
    }
  }

  /** `bm` itself if it is a RoaringBitmap, else a RoaringBitmap copy of the view. */
  private def mutable(bm: ImmutableBitmapDataProvider): RoaringBitmap = bm match {
    case r: RoaringBitmap => r
    case view: org.roaringbitmap.buffer.ImmutableRoaringBitmap => view.toRoaringBitmap
  }

  def empty(bitmap64: Boolean): DeletionVector =
    if (bitmap64) new DeletionVector(true, Array.empty, Array.empty, 0)
    else new DeletionVector(false, Array(0), Array[ImmutableBitmapDataProvider](new RoaringBitmap), 1)

  def fromPositions(positions: Array[Long], bitmap64: Boolean): DeletionVector = {
    val dv = empty(bitmap64)
    dv.deleteAll(positions)
    dv
  }

  /** True when `frame` is exactly one 64-bit frame (size field, magic d1 d3 39 64; the layout of
    * an Iceberg deletion-vector-v1 blob and of a Delta DV frame). The bitmap is not decoded. */
  def isFrame64(frame: Array[Byte]): Boolean =
    frame.length >= 12 && Integer.reverseBytes(ByteReader.i32BE(frame, 4)) == Magic64 &&
      (ByteReader.i32BE(frame, 0) & 0xffffffffL) == frame.length - 8L

  /** A 32-bit DV over `bm`, which it takes ownership of (no copy). */
  def fromBitmap(bm: RoaringBitmap): DeletionVector = {
    require(bm.isEmpty || bm.last() >= 0, s"position ${bm.last() & 0xffffffffL} is outside 0..$MaxPosition32, the range of a 32-bit deletion vector")
    new DeletionVector(false, Array(0), Array[ImmutableBitmapDataProvider](bm), 1)
  }

  /** Reads the frame at `bytes(offset)` (§2.3): the magic decides the width; `expectedLength`
    * (if ≥ 0) must equal the length the index manifest records for this frame; the CRC is
    * checked unless `verifyCrc` is false (Paimon never checks it). The bitmap must fill DATA
    * exactly. Any violation is an [[io.indexbridge.IndexFormatException]].
    *
    * Roaring structure is always validated (Roaring32.read); the O(values) content checks
    * (array order, bitmap population) run only when the CRC is not verified — a matching CRC
    * already vouches for the bytes, and those passes would cost more than the decoding. */
  def deserialize(
      bytes: Array[Byte],
      source: String = "<bytes>",
      offset: Int = 0,
      expectedLength: Int = -1,
      verifyCrc: Boolean = true
  ): DeletionVector = readFrame(ByteReader(bytes, source, offset), expectedLength, verifyCrc)

  /** Reads one frame at the reader's position and moves past it. */
  private[paimon] def readFrame(reader: ByteReader, expectedLength: Int, verifyCrc: Boolean): DeletionVector = {
    val frameAt = reader.pos.toLong
    val size = reader.i32BE("deletion vector size")
    if (size < 4) reader.fail(s"a deletion vector size >= 4 (the magic number), found $size", frameAt)
    reader.require(size.toLong + 4, s"deletion vector of $size bytes and its CRC")
    val data = reader.sub(size, "deletion vector")
    val crcAt = reader.pos.toLong
    val storedCrc = reader.i32BE("deletion vector CRC")

    val magic = data.i32BE("deletion vector magic")
    val bitmap64 =
      if (magic == Magic32) false
      else if (Integer.reverseBytes(magic) == Magic64) true
      else reader.fail(f"a deletion vector magic number (5e43f2d0 or d1d33964), found $magic%08x", frameAt + 4)

    val recordedLength = if (bitmap64) size.toLong + 8 else size.toLong
    if (expectedLength >= 0 && expectedLength != recordedLength)
      reader.fail(s"a ${width(bitmap64)} deletion vector of length $expectedLength (index manifest), frame has $recordedLength", frameAt)

    if (verifyCrc) {
      val crc = new CRC32
      crc.update(reader.bytes, frameAt.toInt + 4, size)
      if (crc.getValue.toInt != storedCrc)
        reader.fail(f"CRC-32 ${crc.getValue}%08x of the deletion vector data, found $storedCrc%08x", crcAt)
    }

    val dv = if (bitmap64) read64(data, !verifyCrc) else read32(data, !verifyCrc)
    if (data.remaining != 0)
      data.fail(s"end of the deletion vector data (${data.remaining} bytes after the bitmap)")
    dv
  }

  private def read32(data: ByteReader, checkContents: Boolean): DeletionVector = {
    val at = data.pos.toLong
    val bm = Roaring32.view(data, checkContents)
    if (!bm.isEmpty && bm.last() < 0)
      data.fail(s"32-bit deletion vector positions <= $MaxPosition32, found ${bm.last() & 0xffffffffL}", at)
    new DeletionVector(false, Array(0), Array[ImmutableBitmapDataProvider](bm), 1)
  }

  private def read64(data: ByteReader, checkContents: Boolean): DeletionVector = {
    val countAt = data.pos.toLong
    val count = data.i64LE("bitmap count")
    if (count < 0 || count > Int.MaxValue) data.fail(s"a bitmap count in 0..${Int.MaxValue}, found $count", countAt)
    // each bitmap takes at least a 4-byte key and an 8-byte empty roaring bitmap
    data.require(12L * count, s"$count bitmaps")
    val keys = new Array[Int](count.toInt)
    val bitmaps = new Array[ImmutableBitmapDataProvider](count.toInt)
    var lastKey = -1
    for (i <- 0 until count.toInt) {
      val keyAt = data.pos.toLong
      val key = data.i32LE("bitmap key")
      if (key < 0 || key > Int.MaxValue - 1 || key <= lastKey)
        data.fail(s"bitmap keys ascending in 0..${Int.MaxValue - 1}, found ${key & 0xffffffffL} after $lastKey", keyAt)
      val bm = Roaring32.view(data, checkContents)
      if (key == Int.MaxValue - 1 && !bm.isEmpty && Integer.compareUnsigned(bm.last(), MaxPosition64.toInt) > 0)
        data.fail(s"64-bit deletion vector positions <= $MaxPosition64", keyAt)
      keys(i) = key
      bitmaps(i) = bm
      lastKey = key
    }
    new DeletionVector(true, keys, bitmaps, lastKey + 1)
  }
}
