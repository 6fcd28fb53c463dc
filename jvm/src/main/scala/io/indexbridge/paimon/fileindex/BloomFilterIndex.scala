package io.indexbridge.paimon.fileindex

import io.indexbridge.bytes.ByteReader
import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.KeyType._

/** Paimon's bloom-filter file index (`BloomFilterFileIndex` over `BloomFilter64`, spec §5).
  *
  * {{{
  * payload   i32 BE numHashes
  *           u8[numBits / 8] bits        bit i = (bits[i >> 3] >> (i & 7)) & 1
  *
  * sizing    nb        = (int) (-items · ln(fpp) / (ln 2)²)
  *           numBits   = nb + (8 - nb % 8)                   (always 1..8 bits more)
  *           numHashes = max(1, round(numBits / items · ln 2))
  * hash h    FastHash of the value: xxh64 of string/binary bytes, wang64 of the Long key
  * bits      h1 = (int) h, h2 = (int) (h >>> 32); for i in 1..numHashes:
  *           c = h1 + i·h2 (32-bit); if c < 0: c = ~c; bit c % numBits
  * }}}
  *
  * Nulls are not added. Readers answer `equal`/`in` with SKIP when a probed bit is clear and
  * REMAIN otherwise (also for a null literal); every other question is REMAIN.
  */
object BloomFilterIndex {
  val Identifier = "bloom-filter"
  val DefaultItems = 1000000
  val DefaultFpp = 0.1

  /** Types with a FastHash (App. C); BOOLEAN and DECIMAL are not among them. */
  def supports(t: KeyType): Boolean = t match {
    case BooleanType | DecimalType(_, _) => false
    case _                               => true
  }

  private def checkSupported(t: KeyType): Unit =
    if (!supports(t)) throw new UnsupportedOperationException(s"the bloom-filter index does not support $t")

  /** (numBits, numHashes) for the options, in Java double arithmetic. */
  def sizing(items: Int, fpp: Double): (Int, Int) = {
    val ln2 = Math.log(2)
    val nb = ((-items) * Math.log(fpp) / (ln2 * ln2)).toInt
    val numBits = nb + (8 - nb % 8)
    (numBits, Math.max(1, Math.round(numBits.toDouble / items * ln2).toInt))
  }

  /** FastHash of a non-null value (spec §5.3). */
  def hash(t: KeyType, value: Any): Long =
    if (IndexValue.isBytes(t)) FastHash.xxh64(IndexValue.toBytes(t, value)) else FastHash.wang64(IndexValue.toLong(t, value))


  /** Options `items` / `fpp` of Paimon's option map (`file-index.bloom-filter.<column>.*`). */
  def writer(t: KeyType, options: Map[String, String] = Map.empty): Writer = {
    val items = options.get("items").map(_.trim.toInt).getOrElse(DefaultItems)
    val fpp = options.get("fpp").map(_.trim.toDouble).getOrElse(DefaultFpp)
    new Writer(t, items, fpp)
  }

  /** Builds the payload of one column's values (`null` = SQL NULL). */
  def write(t: KeyType, values: Iterable[Any], options: Map[String, String] = Map.empty): Array[Byte] = {
    val w = writer(t, options)
    values.foreach(w.write)
    w.serialize()
  }

  private val RecentSlots = 1024

  final class Writer(t: KeyType, items: Int, fpp: Double) extends FileIndexWriter {
    checkSupported(t)
    private val (numBits, numHashes) = sizing(items, fpp)
    private val bits = new Array[Byte](numBits / 8)

    private val intKeys = t == IntType
    private val longKeys = t == BigIntType
    private val stringKeys = IndexValue.isString(t)
    private var ascii = new Array[Byte](64)

    /** The common boxed INT and BIGINT values and strings are hashed directly (the per-row path;
      * Paimon likewise picks its hash function once per writer). */
    def write(value: Any): Unit = value match {
      case null                    =>
      case i: Int if intKeys       => addLong(i.toLong)
      case l: Long if longKeys     => addLong(l)
      case s: String if stringKeys => addHash(hashString(s))
      case v                       => addHash(hash(t, v))
    }

    // A value added again sets no new bit. The last number added in each of RecentSlots slots
    // (by its low bits) is kept, and a repeat skips its hash and probes: a low-cardinality
    // column repeats a few values a million times (Paimon hashes and probes every row). Slot s
    // starts with s + 1, a number of another slot, so no number is taken as added before it is.
    private val recent = Array.tabulate[Long](RecentSlots)(_ + 1L)

    private def addLong(v: Long): Unit = {
      val slot = (v ^ (v >>> 32)).toInt & (RecentSlots - 1)
      if (recent(slot) != v) {
        recent(slot) = v
        addHash(FastHash.wang64(v))
      }
    }

    /** xxh64 of the UTF-8 bytes of `s`: an ASCII string's bytes are its chars, copied into one
      * reused buffer instead of a new array per row (the encoding was a quarter of the build). */
    private def hashString(s: String): Long = {
      val n = s.length
      if (n > ascii.length) ascii = new Array[Byte](math.max(n, 2 * ascii.length))
      var i = 0
      while (i < n) {
        val c = s.charAt(i)
        if (c >= 0x80) return FastHash.hashString(s)
        ascii(i) = c.toByte
        i += 1
      }
      FastHash.xxh64(ascii, 0, n)
    }

    /** Adds a value by its FastHash. */
    def addHash(h: Long): Unit = {
      val h1 = h.toInt
      val h2 = (h >>> 32).toInt
      var i = 1
      while (i <= numHashes) {
        var c = h1 + i * h2
        if (c < 0) c = ~c
        val pos = c % numBits
        bits(pos >>> 3) = (bits(pos >>> 3) | (1 << (pos & 7))).toByte
        i += 1
      }
    }

    def serialize(): Array[Byte] = {
      val out = new Array[Byte](4 + bits.length)
      out(0) = (numHashes >>> 24).toByte
      out(1) = (numHashes >>> 16).toByte
      out(2) = (numHashes >>> 8).toByte
      out(3) = numHashes.toByte
      System.arraycopy(bits, 0, out, 4, bits.length)
      out
    }
  }

  /** Reads a payload (`bytes(offset until offset + length)`, a copy is not made). */
  def read(t: KeyType, bytes: Array[Byte], source: String, offset: Int = 0, length: Int = -1): Reader = {
    checkSupported(t)
    val r = new ByteReader(bytes, source, offset, if (length < 0) bytes.length else offset + length)
    r.require(4, "bloom filter numHashes")
    // Paimon adds the four signed bytes shifted into place; equal to the BE int for < 128
    val numHashes = (bytes(offset) << 24) + (bytes(offset + 1) << 16) + (bytes(offset + 2) << 8) + bytes(offset + 3)
    val numBits = 8L * (r.remaining - 4)
    if (numBits == 0) r.fail("a bloom filter with at least one byte of bits, found none", offset + 4L)
    if (numHashes < 1 || numHashes > numBits)
      r.fail(s"a bloom filter hash function count in 1..$numBits (its bit count), found $numHashes", offset.toLong)
    new Reader(t, bytes, offset + 4, numBits.toInt, numHashes)
  }

  final class Reader private[BloomFilterIndex] (t: KeyType, bytes: Array[Byte], bitsAt: Int, val numBits: Int, val numHashes: Int)
      extends FileIndexReader {

    /** False when the filter proves the value was never added. */
    def mightContainHash(h: Long): Boolean = {
      val h1 = h.toInt
      val h2 = (h >>> 32).toInt
      var i = 1
      while (i <= numHashes) {
        var c = h1 + i * h2
        if (c < 0) c = ~c
        val pos = c % numBits
        if ((bytes(bitsAt + (pos >>> 3)) & (1 << (pos & 7))) == 0) return false
        i += 1
      }
      true
    }

    def mightContain(value: Any): Boolean = value == null || mightContainHash(hash(t, value))

    /** How many of the `numBits` bits are set. */
    def bitsSet: Long = (bitsAt until bitsAt + numBits / 8).foldLeft(0L)((n, i) => n + Integer.bitCount(bytes(i) & 0xff))

    def evaluate(op: Op, literals: Seq[Any]): FileIndexResult = op match {
      case Op.Equal | Op.In =>
        if (literals.exists(mightContain)) FileIndexResult.Remain else FileIndexResult.Skip
      case _ => FileIndexResult.Remain
    }
  }
}

/** One index type's writer for one column: values in row order, then the payload. */
trait FileIndexWriter {

  /** The next row's value (`null` = SQL NULL). */
  def write(value: Any): Unit

  def serialize(): Array[Byte]
}
