package io.indexbridge.zap

import java.lang.management.ManagementFactory
import java.util.concurrent.{Executors, TimeUnit, TimeoutException}

import scala.util.Random

import io.indexbridge.{Depth, IndexFormatException}
import org.scalatest.funsuite.AnyFunSuite

/** Every zap vector segment, mutated (footer, fields index, field records, docvalue index,
  * dictionaries/FST, postings, stored records; flipped, set, inflated by an inserted byte,
  * truncated): reading everything either works or ends in IndexFormatException — never another
  * exception, a hang or an allocation out of proportion to the input. The big segments get a
  * sample of offsets. With the CRC check on, every mutation is caught at open. The default run
  * takes a third of the mutations, the day's draw ([[Depth]]). */
class ZapMutationSpec extends AnyFunSuite {
  private val threads = ManagementFactory.getThreadMXBean.asInstanceOf[com.sun.management.ThreadMXBean]
  private val pool = Executors.newSingleThreadExecutor(r => { val t = new Thread(r, "zap-mutation"); t.setDaemon(true); t })

  /** Reads everything a reader can report. */
  private def decodeAll(bytes: Array[Byte]): Unit = {
    val seg = SegmentReader(bytes, "mutant", verifyCrc = false)
    for (f <- seg.fields) {
      val dict = seg.dictionary(f.id)
      dict.fstLength
      var n = 0
      for ((term, value) <- dict.terms()) {
        val pl = seg.postingsAt(value)
        for (h <- 0 until pl.size) pl.locations(h)
        if (n < 3) { dict.value(term); dict.termsWithPrefix(term.take(1)).take(3).foreach(_ => ()) }
        n += 1
      }
      for (section <- seg.docValues(f.id)) {
        section.foreach((_, _) => ())
        if (seg.numDocs > 0) section.terms(seg.numDocs - 1)
      }
    }
    for (d <- 0 until seg.numDocs) {
      val id = seg.docId(d) // the record's head only: what document() reads first
      assert(java.util.Arrays.equals(seg.document(d).id, id))
    }
  }

  /** Runs decodeAll on a worker with a time limit; None = IndexFormatException. */
  private def attempt(what: String, bytes: Array[Byte]): Unit = {
    val task = pool.submit[Either[Throwable, Long]] { () =>
      val before = threads.getThreadAllocatedBytes(Thread.currentThread.getId)
      val r =
        try { decodeAll(bytes); Right(0L) }
        catch {
          case _: IndexFormatException => Right(0L)
          case e: Throwable            => Left(e)
        }
      r.map(_ => threads.getThreadAllocatedBytes(Thread.currentThread.getId) - before)
    }
    val result =
      try task.get(60, TimeUnit.SECONDS)
      catch { case _: TimeoutException => task.cancel(true); fail(s"$what: no result within 60 s") }
    result match {
      case Left(e) => fail(s"$what: ${e.getClass.getName}: ${e.getMessage}", e)
      case Right(used) =>
        assert(used <= 64L * bytes.length + (8L << 20), s"$what: allocated $used bytes for ${bytes.length} input bytes")
    }
  }

  /** Offsets of the structures a mutation should hit first. */
  private def structural(bytes: Array[Byte]): Seq[Int] = {
    val seg = SegmentReader(bytes, "vector")
    val size = bytes.length
    val footer = (size - 44 until size)
    val fieldsIndex = (seg.footer.fieldsIndexOffset.toInt until size - 44)
    val records = seg.fields.flatMap(f => f.recordOffset.toInt until f.recordOffset.toInt + 4)
    val dicts = seg.fields.filter(_.dictOffset > 0).flatMap { f =>
      val d = f.dictOffset.toInt
      val len = seg.dictionary(f.id).fstLength.get
      (d until d + 20) ++ (d + len - 18 until d + len + 2) // length prefix, FST header, last nodes, trailer
    }
    val postings = seg.fields.flatMap { f =>
      seg.dictionary(f.id).terms().take(2).flatMap { case (_, v) =>
        val pl = seg.postingsAt(v)
        if (pl.oneHitValue) Nil else (pl.freqBlockOffset.toInt until pl.freqBlockOffset.toInt + 4) ++ (pl.locBlockOffset.toInt until pl.locBlockOffset.toInt + 3)
      }
    }
    val stored = if (seg.numDocs > 0) (seg.footer.storedIndexOffset.toInt until seg.footer.storedIndexOffset.toInt + 8) ++ (0 until 8) else Nil
    val dv = seg.fields.flatMap(_.docValues.toSeq.flatMap { case (s, e) => (s.toInt until s.toInt + 4) ++ (e.toInt - 20 until e.toInt) })
    (footer ++ fieldsIndex ++ records ++ dicts ++ postings ++ stored ++ dv).filter(i => i >= 0 && i < size).distinct
  }

  private val ops: Seq[(String, (Array[Byte], Int) => Array[Byte])] = Seq(
    "flip" -> ((b, i) => { val c = b.clone(); c(i) = (c(i) ^ 0xff).toByte; c }),
    "set 0x80" -> ((b, i) => { val c = b.clone(); c(i) = 0x80.toByte; c }),
    "set 0x00" -> ((b, i) => { val c = b.clone(); c(i) = 0; c }),
    "+1" -> ((b, i) => { val c = b.clone(); c(i) = (c(i) + 1).toByte; c }),
    "inflate" -> ((b, i) => { val c = new Array[Byte](b.length + 1); System.arraycopy(b, 0, c, 0, i); c(i) = 0x80.toByte; System.arraycopy(b, i, c, i + 1, b.length - i); c }),
    "truncate" -> ((b, i) => java.util.Arrays.copyOf(b, i))
  )

  for (name <- ZapVectors.segmentNames) test(s"mutations of $name.zap") {
    val original = ZapVectors.zap(name)
    val rnd = new Random(if (Depth.deep) name.hashCode.toLong else s"${Depth.seed}/$name".hashCode.toLong)
    val budget = math.max(40, math.min(1500, (30000000L / original.length).toInt)) / (if (Depth.deep) 1 else 3)
    val targets = structural(original)
    val mutations =
      (if (targets.length * ops.length <= budget) for (i <- targets; op <- ops) yield (i, op)
       else Seq.fill(budget * 2 / 3)((targets(rnd.nextInt(targets.length)), ops(rnd.nextInt(ops.length))))) ++
        Seq.fill(budget / 3)((rnd.nextInt(original.length), ops(rnd.nextInt(ops.length))))
    var crcCaught = 0
    for ((i, (opName, op)) <- mutations) {
      val mutant = op(original, i)
      attempt(s"$opName at $i", mutant)
      if (!java.util.Arrays.equals(mutant, original)) {
        val caught = try { SegmentReader(mutant, "mutant"); false } catch { case _: IndexFormatException => true }
        assert(caught, s"$opName at $i: the CRC check let the mutant through")
        crcCaught += 1
      }
    }
    info(s"${mutations.length} mutations, ${targets.length} structural offsets, $crcCaught caught by the CRC")
  }
}
