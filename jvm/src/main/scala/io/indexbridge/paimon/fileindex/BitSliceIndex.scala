package io.indexbridge.paimon.fileindex

import java.io.{ByteArrayOutputStream, DataOutputStream}

import io.indexbridge.bytes.ByteReader
import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.KeyType._
import io.indexbridge.roaring.Roaring32
import org.roaringbitmap.{RoaringBitmap, RoaringBitmapWriter}

/** Paimon's bit-sliced index (`BitSliceIndexBitmapFileIndex` over `BitSliceIndexRoaringBitmap`,
  * spec §7): values >= 0 in a positive BSI, values < 0 as their absolute value in a negative one.
  *
  * {{{
  * u8      version = 1
  * i32 BE  rowCount (nulls included)
  * bool8   hasPositive     [BSI]
  * bool8   hasNegative     [BSI]
  *
  * BSI     u8 version = 1
  *         i64 BE min                  always 0: the writer's running minimum starts at 0
  *         i64 BE max
  *         roaring32(ebm)              rows with a value on this side
  *         i32 BE sliceCount           bit length of max - min
  *         roaring32(slice[i])…        rows whose (value - min) has bit i set, bit 0 first
  * }}}
  *
  * The value of a row is IndexValue's `Long` key (integers, DATE, TIME, timestamps as millis or
  * micros, DECIMAL as its unscaled long). `Long.MIN_VALUE` cannot be written. Answers are row
  * sets of non-null rows (exact comparisons), `is_null` excepted; a null literal answers REMAIN.
  */
object BitSliceIndex {
  val Identifier = "bsi"
  private val Version = 1

  def supports(t: KeyType): Boolean = t match {
    case TinyIntType | SmallIntType | IntType | BigIntType | DateType | TimeType(_) | TimestampType(_) |
        LocalZonedTimestampType(_) | DecimalType(_, _) => true
    case _ => false
  }

  private def checkSupported(t: KeyType): Unit =
    if (!supports(t)) throw new UnsupportedOperationException(s"the bsi index does not support $t")

  def writer(t: KeyType): Writer = new Writer(t)

  def write(t: KeyType, values: Iterable[Any]): Array[Byte] = {
    val w = writer(t)
    values.foreach(w.write)
    w.serialize()
  }

  final class Writer(t: KeyType) extends FileIndexWriter {
    checkSupported(t)
    private var values = new Array[Long](1024)
    private var nulls = new java.util.BitSet
    private var rowCount = 0

    def write(value: Any): Unit = if (value == null) writeNull() else writeValue(IndexValue.toLong(t, value))

    def writeNull(): Unit = {
      nulls.set(rowCount)
      next(0L)
    }

    /** A non-null row by its `Long` value ([[IndexValue.toLong]]). */
    def writeValue(v: Long): Unit = {
      if (v == Long.MinValue) throw new IllegalArgumentException("the bsi index cannot hold Long.MIN_VALUE")
      next(v)
    }

    private def next(v: Long): Unit = {
      if (rowCount == values.length) values = java.util.Arrays.copyOf(values, rowCount * 2)
      values(rowCount) = v
      rowCount += 1
    }

    def serialize(): Array[Byte] = {
      var positiveMax, negativeMax = 0L
      var positives, negatives = 0
      for (r <- 0 until rowCount if !nulls.get(r)) {
        val v = values(r)
        if (v >= 0) { positives += 1; positiveMax = math.max(positiveMax, v) }
        else { negatives += 1; negativeMax = math.max(negativeMax, -v) }
      }
      val file = new ByteArrayOutputStream
      val out = new DataOutputStream(file)
      out.writeByte(Version)
      out.writeInt(rowCount)
      for ((count, max, negative) <- Seq((positives, positiveMax, false), (negatives, negativeMax, true))) {
        out.writeBoolean(count > 0)
        if (count > 0) writeSide(out, max, negative)
      }
      out.flush()
      file.toByteArray
    }

    private def writeSide(out: DataOutputStream, max: Long, negative: Boolean): Unit = {
      val sliceCount = 64 - java.lang.Long.numberOfLeadingZeros(max)
      val ebm = RoaringBitmapWriter.writer().get()
      val slices = Array.fill(sliceCount)(RoaringBitmapWriter.writer().get())
      for (r <- 0 until rowCount if !nulls.get(r) && (values(r) < 0) == negative) {
        val x = if (negative) -values(r) else values(r)
        ebm.add(r)
        var bits = x
        while (bits != 0) {
          val i = java.lang.Long.numberOfTrailingZeros(bits)
          slices(i).add(r)
          bits &= bits - 1
        }
      }
      out.writeByte(Version)
      out.writeLong(0L)
      out.writeLong(max)
      out.write(Roaring32.serialize(ebm.get()))
      out.writeInt(sliceCount)
      slices.foreach(s => out.write(Roaring32.serialize(s.get())))
    }
  }

  /** One side of the index: rows (`ebm`) and the bit slices of `value - min`. */
  final class Slices private[BitSliceIndex] (val min: Long, val max: Long, val ebm: RoaringBitmap, slices: Array[RoaringBitmap]) {

    def sliceCount: Int = slices.length

    /** The smallest value on this side (`min` is only a bound: Paimon's writer stores 0), found
      * bit by bit from the top slice. */
    def smallest: Long = {
      var rows = ebm
      var value = 0L
      for (i <- slices.indices.reverse) {
        val without = RoaringBitmap.andNot(rows, slices(i))
        if (!without.isEmpty) rows = without else value |= 1L << i
      }
      min + value
    }

    /** O'Neil's comparison with the stored min/max shortcut (spec §7.4); rows inside `ebm`. */
    def compare(op: Op, x: Long): RoaringBitmap = {
      val (all, none) = op match {
        case Op.Equal          => (min == max && max == x, x < min || x > max)
        case Op.GreaterThan    => (x < min, x >= max)
        case Op.GreaterOrEqual => (x <= min, x > max)
        case Op.LessThan       => (x > max, x <= min)
        case Op.LessOrEqual    => (x >= max, x < min)
        case _                 => throw new IllegalArgumentException(s"$op is not a comparison")
      }
      if (all) ebm.clone()
      else if (none) new RoaringBitmap
      else {
        val y = x - min
        val gt, lt = new RoaringBitmap
        val eq = ebm.clone()
        // equality needs only eq (gt and lt stay unused), which once empty stays empty
        val ranges = op != Op.Equal
        var i = slices.length - 1
        while (i >= 0 && (ranges || !eq.isEmpty)) {
          if (((y >>> i) & 1) == 1) {
            if (ranges) lt.or(RoaringBitmap.andNot(eq, slices(i)))
            eq.and(slices(i))
          } else {
            if (ranges) gt.or(RoaringBitmap.and(eq, slices(i)))
            eq.andNot(slices(i))
          }
          i -= 1
        }
        val result = op match {
          case Op.Equal          => eq
          case Op.GreaterThan    => gt
          case Op.LessThan       => lt
          case Op.LessOrEqual    => RoaringBitmap.or(lt, eq)
          case _                 => RoaringBitmap.or(gt, eq)
        }
        result.and(ebm)
        result
      }
    }
  }

  private val NoSlices = new Slices(0L, 0L, new RoaringBitmap, Array.empty)

  def read(t: KeyType, bytes: Array[Byte], source: String, offset: Int = 0, length: Int = -1): Reader = {
    checkSupported(t)
    val in = new ByteReader(bytes, source, offset, if (length < 0) bytes.length else offset + length)
    readVersion(in, "bsi version")
    val rowCount = in.i32BE("bsi rowCount")
    if (rowCount < 0) in.fail(s"a bsi rowCount >= 0, found $rowCount", in.pos - 4L)
    val positive = if (in.u8("bsi hasPositive") != 0) readSlices(in, "positive") else NoSlices
    val negative = if (in.u8("bsi hasNegative") != 0) readSlices(in, "negative") else NoSlices
    new Reader(t, rowCount, positive, negative)
  }

  /** Paimon reads the version as a signed byte and accepts any value <= 1. */
  private def readVersion(in: ByteReader, what: String): Unit = {
    val v = in.u8(what).toByte
    if (v > Version) in.fail(s"$what <= $Version, found $v", in.pos - 1L)
  }

  private def readSlices(in: ByteReader, side: String): Slices = {
    readVersion(in, s"$side bsi version")
    in.require(16, s"$side bsi min and max")
    def i64(): Long = (in.i32BE().toLong << 32) | (in.i32BE().toLong & 0xffffffffL)
    val min = i64()
    val max = i64()
    val ebm = Roaring32.read(in)
    val sliceCount = in.i32BE(s"$side bsi sliceCount")
    if (sliceCount < 0 || sliceCount > 64) in.fail(s"a $side bsi sliceCount in 0..64, found $sliceCount", in.pos - 4L)
    new Slices(min, max, ebm, Array.fill(sliceCount)(Roaring32.read(in)))
  }

  final class Reader private[BitSliceIndex] (t: KeyType, val rowCount: Int, val positive: Slices, val negative: Slices)
      extends FileIndexReader {

    def nonNull: RoaringBitmap = RoaringBitmap.or(positive.ebm, negative.ebm)

    def hasPositive: Boolean = positive ne NoSlices
    def hasNegative: Boolean = negative ne NoSlices

    /** The smallest and largest indexed value (as longs), None without a side. */
    def valueRange: Option[(Long, Long)] =
      if (!hasPositive && !hasNegative) None
      else Some((if (hasNegative) -negative.max else positive.smallest, if (hasPositive) positive.max else -negative.smallest))

    private def equal(v: Long): RoaringBitmap =
      if (v == Long.MinValue) new RoaringBitmap
      else if (v < 0) negative.compare(Op.Equal, -v)
      else positive.compare(Op.Equal, v)

    private def less(v: Long, orEqual: Boolean): RoaringBitmap =
      if (v == Long.MinValue) new RoaringBitmap
      else if (v < 0) negative.compare(if (orEqual) Op.GreaterOrEqual else Op.GreaterThan, -v)
      else RoaringBitmap.or(positive.compare(if (orEqual) Op.LessOrEqual else Op.LessThan, v), negative.ebm)

    private def greater(v: Long, orEqual: Boolean): RoaringBitmap =
      if (v == Long.MinValue) nonNull
      else if (v < 0) RoaringBitmap.or(positive.ebm, negative.compare(if (orEqual) Op.LessOrEqual else Op.LessThan, -v))
      else positive.compare(if (orEqual) Op.GreaterOrEqual else Op.GreaterThan, v)

    private def in(values: Seq[Long]): RoaringBitmap =
      if (values.lengthCompare(1) == 0) equal(values.head)
      else {
        val out = new RoaringBitmap
        values.foreach(v => out.or(equal(v)))
        out
      }

    def evaluate(op: Op, literals: Seq[Any]): FileIndexResult =
      if (literals.contains(null)) FileIndexResult.Remain
      else {
        lazy val vs = literals.map(IndexValue.toLong(t, _))
        val rows: RoaringBitmap = op match {
          case Op.Equal | Op.In       => in(vs)
          case Op.NotEqual | Op.NotIn => RoaringBitmap.andNot(nonNull, in(vs))
          case Op.LessThan            => less(vs.head, orEqual = false)
          case Op.LessOrEqual         => less(vs.head, orEqual = true)
          case Op.GreaterThan         => greater(vs.head, orEqual = false)
          case Op.GreaterOrEqual      => greater(vs.head, orEqual = true)
          case Op.Between             => RoaringBitmap.and(greater(vs(0), orEqual = true), less(vs(1), orEqual = true))
          case Op.IsNotNull           => nonNull
          case Op.IsNull =>
            val all = new RoaringBitmap
            all.add(0L, rowCount.toLong)
            all.andNot(nonNull)
            all
        }
        FileIndexResult.Rows(rows)
      }
  }
}
