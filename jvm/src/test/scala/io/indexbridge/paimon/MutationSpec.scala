package io.indexbridge.paimon

import java.lang.management.ManagementFactory
import java.nio.{ByteBuffer, ByteOrder}

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._
import scala.util.Random

import io.indexbridge.IndexFormatException
import org.apache.paimon.deletionvectors.{DeletionVector => PaimonDeletionVector}
import org.scalatest.funsuite.AnyFunSuite

/** Every field of every dv32 / dv64 / hash vector binary (of a long header: the first 16, the
  * last and a seeded sample of the rest, see [[MutationSpec.mutations]]), mutated: a decoder may
  * succeed (and then report a consistent DV, the one Paimon reads) or throw IndexFormatException
  * — nothing else, and never allocate more than the input justifies. */
class MutationSpec extends AnyFunSuite {
  import MutationSpec._

  /** A decoded DV must be consistent, and equal to what Paimon reads from the same frame. */
  private def consistent(what: String, dv: DeletionVector, frame: Option[Array[Byte]]): Unit = {
    val cardinality = dv.cardinality
    if (cardinality <= 2000000) {
      val positions = dv.positions
      assert(positions.length == cardinality, what)
      assert(positions.indices.drop(1).forall(i => positions(i - 1) < positions(i)), s"$what: positions not ascending")
      positions.take(20).foreach(p => assert(dv.isDeleted(p), what))
      for (bytes <- frame if positions.isEmpty || (positions.last >>> 32) < 1000) {
        val theirs = PaimonDeletionVector.deserializeFromBytes(bytes)
        assert(theirs.getCardinality == cardinality, s"$what: Paimon reads ${theirs.getCardinality} positions, we read $cardinality")
        positions.take(1000).foreach(p => assert(theirs.isDeleted(p), s"$what: Paimon lacks $p"))
      }
    }
  }

  private var decodes = 0L

  for (entry <- PaimonVectors.cases("dv32", "dv64", "hash"); (binName, original) <- PaimonVectors.binaries(entry)) {
    val json = PaimonVectors.json(entry)
    test(s"mutations of $binName") {
      val isDeletionFile = json.path("kind").asText == "deletion_file"
      val fields: Seq[Field] = entry.path("format").asText match {
        case "hash"                => (0 until original.length / 4).map(i => Field(4 * i, 4, s"hash #$i", numeric = false))
        case _ if isDeletionFile    => deletionFileFields(original)
        case _                      => frameFields(original, 0)._1
      }
      val ranges = json.path("index_files").asScala
        .find(f => binName.endsWith("/" + f.path("bin").asText))
        .toSeq
        .flatMap(_.path("dv_ranges").asScala)
        .map(r => DeletionVectorRange(r.path("data_file").asText, r.path("offset").asInt, r.path("length").asInt, r.path("cardinality").asLong))

      def decodeAll(what: String, bytes: Array[Byte], rs: Seq[DeletionVectorRange] = ranges): Unit =
        entry.path("format").asText match {
          case "hash" =>
            decodes += 1
            val hashes = guarded(what, bytes)(HashIndex.decode(bytes, "m"))
            assert(hashes.exists(_.length == bytes.length / 4), what)
          case _ =>
            for (verifyCrc <- Seq(true, false)) {
              decodes += 2
              if (isDeletionFile) {
                guarded(s"$what (read, crc=$verifyCrc)", bytes)(DeletionFile.read(bytes, rs, "m", verifyCrc))
                  .foreach(_.foreach { case (name, dv) => consistent(s"$what: $name", dv, None) })
                guarded(s"$what (scan, crc=$verifyCrc)", bytes)(DeletionFile.scan(bytes, "m", verifyCrc))
                  .foreach(_.foreach { case (at, dv) => consistent(s"$what: frame at $at", dv, None) })
              } else
                guarded(s"$what (crc=$verifyCrc)", bytes)(DeletionVector.deserialize(bytes, "m", 0, -1, verifyCrc))
                  .foreach(dv => consistent(what, dv, Some(bytes)))
            }
        }

      decodeAll("original", original)
      for ((what, bytes) <- mutations(binName, original, fields)) decodeAll(what, bytes)
      // the manifest side lies: offsets and lengths out of range or off by one
      for ((range, k) <- ranges.zipWithIndex; bad <- Seq(
             range.copy(offset = -1), range.copy(offset = 0), range.copy(offset = range.offset + 1),
             range.copy(offset = original.length), range.copy(offset = Int.MaxValue),
             range.copy(length = -1), range.copy(length = 0), range.copy(length = range.length + 1), range.copy(length = Int.MaxValue)
           ))
        decodeAll(s"range $k: $bad", original, ranges.updated(k, bad))
      info(s"${fields.length} fields")
    }
  }
}

object MutationSpec {
  import org.scalatest.Assertions.{assert, fail}

  private val threads = ManagementFactory.getThreadMXBean.asInstanceOf[com.sun.management.ThreadMXBean]
  private def allocated(): Long = threads.getThreadAllocatedBytes(Thread.currentThread.getId)

  /** Runs `decode`; returns its result, None for IndexFormatException; fails on anything else
    * or (with `budget`) on an allocation beyond 64 bytes per input byte (+ 1 MiB of slack). */
  def guarded[T](what: String, input: Array[Byte], budget: Boolean = true)(decode: => T): Option[T] = {
    val before = allocated()
    val result =
      try Right(Some(decode))
      catch {
        case _: IndexFormatException => Right(None)
        case e: Throwable            => Left(e)
      }
    val used = allocated() - before
    result match {
      case Left(e) => fail(s"$what: ${e.getClass.getName}: ${e.getMessage}", e)
      case Right(r) =>
        if (budget) assert(used <= 64L * input.length + (1L << 20), s"$what: allocated $used bytes for ${input.length} input bytes")
        r
    }
  }
  /** One field of a binary: where it is, what it is, and whether it holds a length or count. */
  final case class Field(offset: Int, length: Int, name: String, numeric: Boolean)

  private val AllFields = 64 // longer headers: the first 16 fields, the last one and a sample (as the Python tests)
  private val FieldSamples = 48

  /** The mutations of a binary, each with a description: every selected field flipped byte by
    * byte, filled with 0x00/0xff, set to huge values (numeric fields) and cut short around it;
    * then 30 random truncations and 200 random byte values. Seeded by `name`; the default run
    * takes about a third of them, the day's draw ([[io.indexbridge.Depth]]). */
  def mutations(name: String, original: Array[Byte], fields: Seq[Field]): Iterator[(String, Array[Byte])] = {
    val random = new Random(name.hashCode)
    val selected =
      if (fields.length <= AllFields) fields
      else fields.take(16) ++ random.shuffle(fields.slice(16, fields.length - 1)).take(FieldSamples) ++ fields.takeRight(1)
    val ofFields = selected.iterator.flatMap { field =>
      val label = s"${field.name} at ${field.offset}"
      val flips = for (i <- (field.offset until field.offset + field.length).iterator; mask <- Iterator(0xff, 0x01, 0x80))
        yield s"$label: byte $i ^ $mask" -> mutate(original)(b => b(i) = (b(i) ^ mask).toByte)
      val fills = Iterator(0x00, 0xff).map(fill =>
        s"$label: all $fill" -> mutate(original)(b => java.util.Arrays.fill(b, field.offset, field.offset + field.length, fill.toByte)))
      val huge = (if (field.numeric && field.length <= 8) hugeValues(field.length) else Nil).iterator.map { case (l, value) =>
        s"$label: $l" -> mutate(original)(b => System.arraycopy(value, 0, b, field.offset, field.length))
      }
      val cuts = Seq(field.offset, field.offset + 1, field.offset + field.length - 1, field.offset + field.length).distinct.iterator
        .map(end => s"truncated at $end ($label)" -> original.take(end))
      flips ++ fills ++ huge ++ cuts
    }
    val truncations = Iterator.fill(30)(random.nextInt(original.length + 1)).map(end => s"truncated at $end" -> original.take(end))
    val bytes = Iterator.fill(if (original.nonEmpty) 200 else 0)((random.nextInt(original.length), random.nextInt(256)))
      .map { case (i, v) => s"byte $i = $v" -> mutate(original)(b => b(i) = v.toByte) }
    io.indexbridge.Depth.thin(ofFields ++ truncations ++ bytes, 1.0 / 3, name)
  }

  def mutate(original: Array[Byte])(f: Array[Byte] => Unit): Array[Byte] = {
    val b = original.clone()
    f(b)
    b
  }

  /** Huge values for a numeric field, in both byte orders. */
  def hugeValues(length: Int): Seq[(String, Array[Byte])] = {
    def le(v: Long) = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array().take(length)
    def be(v: Long) = ByteBuffer.allocate(8).putLong(v << (8 * (8 - length))).array().take(length)
    val max = (1L << (8 * length - 1)) - 1 // largest positive signed value of the width
    Seq("max LE" -> le(max), "max BE" -> be(max), "min LE" -> le(max + 1), "min BE" -> be(max + 1), "65536 LE" -> le(65536), "65536 BE" -> be(65536))
  }

  private def i32BE(b: Array[Byte], p: Int) = ByteBuffer.wrap(b).getInt(p)
  private def i32LE(b: Array[Byte], p: Int) = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getInt(p)
  private def u16LE(b: Array[Byte], p: Int) = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getShort(p) & 0xffff

  def deletionFileFields(b: Array[Byte]): Seq[Field] = {
    val fields = ArrayBuffer(Field(0, 1, "version", numeric = true))
    var p = 1
    while (p < b.length) {
      val (frame, end) = frameFields(b, p)
      fields ++= frame
      p = end
    }
    fields.toList
  }

  /** The fields of the (valid) DV frame at `start`, and where the frame ends. */
  def frameFields(b: Array[Byte], start: Int): (Seq[Field], Int) = {
    val fields = ArrayBuffer(Field(start, 4, "size", numeric = true), Field(start + 4, 4, "magic", numeric = false))
    var p = start + 8
    if (i32BE(b, start + 4) == DeletionVector.Magic32) p = roaringFields(b, p, fields)
    else {
      fields += Field(p, 8, "bitmap count", numeric = true)
      val count = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getLong(p).toInt
      p += 8
      for (_ <- 0 until count) {
        fields += Field(p, 4, "bitmap key", numeric = true)
        p = roaringFields(b, p + 4, fields)
      }
    }
    fields += Field(p, 4, "crc", numeric = false)
    (fields.toList, p + 4)
  }

  /** The fields of the roaring bitmap at `start` (payload values sampled); returns its end. */
  def roaringFields(b: Array[Byte], start: Int, fields: ArrayBuffer[Field]): Int = {
    val cookie = i32LE(b, start)
    val hasRuns = (cookie & 0xffff) == 12347
    fields += Field(start, 4, "roaring cookie", numeric = true)
    var p = start + 4
    val n =
      if (hasRuns) (cookie >>> 16) + 1
      else { fields += Field(p, 4, "container count", numeric = true); p += 4; i32LE(b, p - 4) }
    val runFlags = p
    if (hasRuns) { fields += Field(p, (n + 7) / 8, "run flags", numeric = false); p += (n + 7) / 8 }
    val cards = (0 until n).map { i =>
      fields += Field(p, 2, s"key of container $i", numeric = true)
      fields += Field(p + 2, 2, s"cardinality of container $i", numeric = true)
      p += 4
      u16LE(b, p - 2) + 1
    }
    if (!hasRuns || n >= 4) for (i <- 0 until n) { fields += Field(p, 4, s"offset of container $i", numeric = true); p += 4 }
    for (i <- 0 until n) {
      if (hasRuns && (b(runFlags + i / 8) & (1 << (i % 8))) != 0) {
        val runs = u16LE(b, p)
        fields += Field(p, 2, s"run count of container $i", numeric = true)
        p += 2
        for (r <- (0 until runs).take(2) ++ (0 until runs).takeRight(1)) fields += Field(p + 4 * r, 4, s"run $r of container $i", numeric = true)
        p += 4 * runs
      } else if (cards(i) > 4096) {
        for (w <- Seq(0, 511, 1023)) fields += Field(p + 8 * w, 8, s"word $w of container $i", numeric = false)
        p += 8192
      } else {
        for (v <- (0 until cards(i)).take(3) ++ (0 until cards(i)).takeRight(1)) fields += Field(p + 2 * v, 2, s"value $v of container $i", numeric = true)
        p += 2 * cards(i)
      }
    }
    p
  }
}
