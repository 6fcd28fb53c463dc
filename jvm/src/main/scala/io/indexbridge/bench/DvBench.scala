package io.indexbridge.bench

import com.fasterxml.jackson.databind.ObjectMapper
import io.indexbridge.paimon.DeletionVector
import org.roaringbitmap.RoaringBitmap

import java.nio.{ByteBuffer, ByteOrder}

/** The Scala half of `indexbridge bench dv`: the 32-bit DV codec against raw RoaringBitmap and
  * against Paimon's own `BitmapDeletionVector`, on the same position sets, best of `rounds`.
  *
  * Paimon is reached by reflection because its jar is a benchmark baseline, not a dependency
  * of the library: put paimon-bundle on the driver classpath to get those rows. */
object DvBench {
  private final case class Row(label: String, ours: Double, baselineLabel: String, baseline: Double, goal: String)

  /** Best of `rounds` timed runs of each body after one untimed run, so that neither side of a
    * ratio pays for the JIT compiling it (the first-measured side used to: ratios moved by 2x
    * between repeated runs in one JVM). The bodies' timed runs alternate, so that a change in
    * machine load (the bench shares its cores) hits every side of a ratio alike. */
  private def best(rounds: Int)(bodies: (() => Unit)*): Seq[Double] = {
    def timed(body: () => Unit): Double = { val t0 = System.nanoTime(); body(); (System.nanoTime() - t0) / 1e9 }
    bodies.foreach(_())
    val times = (1 to rounds).map(_ => bodies.map(timed))
    bodies.indices.map(i => times.map(_(i)).min)
  }

  /** Sorted distinct positions per data file: half dense runs, half scattered (as the Python half). */
  private def fileSets(files: Int, perFile: Int): Array[Array[Int]] = {
    val rnd = new java.util.Random(7)
    Array.tabulate(files) { i =>
      if (i % 2 == 1) { val start = rnd.nextInt(1000000); Array.range(start, start + perFile) }
      else Array.fill(perFile)(rnd.nextInt(4 * perFile)).distinct.sorted
    }
  }

  private def rawSerialize(bm: RoaringBitmap): Array[Byte] = {
    bm.runOptimize()
    val buffer = ByteBuffer.allocate(bm.serializedSizeInBytes()).order(ByteOrder.LITTLE_ENDIAN)
    bm.serialize(buffer)
    buffer.array()
  }

  /** Raw RoaringBitmap's build+serialize from the input a DV takes: row positions are longs
    * (`DeletionVector.delete(long)` in Paimon), which a RoaringBitmap must get as ints. */
  private def rawSerialize(positions: Array[Long]): Array[Byte] = {
    val ints = new Array[Int](positions.length)
    var i = 0
    while (i < ints.length) { ints(i) = positions(i).toInt; i += 1 }
    rawSerialize(RoaringBitmap.bitmapOf(ints: _*))
  }

  def run(files: Int, perFile: Int, rounds: Int): String = {
    val sets = fileSets(files, perFile)
    val longs = sets.map(_.map(_.toLong))
    val rawBytes = sets.map(s => rawSerialize(RoaringBitmap.bitmapOf(s: _*)))
    val ours = longs.map(DeletionVector.fromPositions(_, bitmap64 = false))
    val ourBytes = ours.map(_.serialize())

    val rows = Seq.newBuilder[Row]
    val Seq(build, rawBuild, rawBuildInts) = best(rounds)(
      () => longs.foreach(DeletionVector.fromPositions(_, false).serialize()),
      () => longs.foreach(rawSerialize),
      () => sets.foreach(s => rawSerialize(RoaringBitmap.bitmapOf(s: _*)))
    )
    rows += Row("build+serialize DeletionVector", build, "raw RoaringBitmap, same long[]", rawBuild, "<= 1.10")
    // informational: what reading 8-byte positions and narrowing them costs
    rows += Row("build+serialize DeletionVector", build, "raw RoaringBitmap, int[] given", rawBuildInts, "")
    val Seq(deserialize, deserializeNoCrc, rawDeserialize) = best(rounds)(
      () => ourBytes.foreach(DeletionVector.deserialize(_)),
      () => ourBytes.foreach(DeletionVector.deserialize(_, verifyCrc = false)),
      () => rawBytes.foreach(b => new RoaringBitmap().deserialize(ByteBuffer.wrap(b)))
    )
    rows += Row("deserialize DeletionVector, CRC checked", deserialize, "raw RoaringBitmap", rawDeserialize, "<= 1.10")
    rows += Row("deserialize DeletionVector, no CRC", deserializeNoCrc, "raw RoaringBitmap", rawDeserialize, "<= 1.10")

    paimon.foreach { p =>
      val theirs = sets.map(s => p.build(s))
      val theirBytes = theirs.map(p.serialize)
      val Seq(serialize, theirSerialize, ourDeserialize, theirDeserialize) = best(rounds)(
        () => ours.foreach(_.serialize()),
        () => theirs.foreach(p.serialize),
        () => ourBytes.foreach(DeletionVector.deserialize(_)),
        () => theirBytes.foreach(p.deserialize)
      )
      rows += Row("serialize DeletionVector", serialize, "Paimon BitmapDeletionVector", theirSerialize, "< 1.00")
      rows += Row("deserialize DeletionVector", ourDeserialize, "Paimon BitmapDeletionVector", theirDeserialize, "")
    }

    val mapper = new ObjectMapper()
    val out = mapper.createArrayNode()
    rows.result().foreach { r =>
      out.addObject().put("label", r.label).put("ours_s", r.ours).put("baseline_label", r.baselineLabel)
        .put("baseline_s", r.baseline).put("goal", r.goal)
    }
    if (paimon.isEmpty)
      out.addObject().put("label", "Paimon baseline unavailable (paimon-bundle not on the classpath)")
        .put("ours_s", 0.0).put("baseline_label", "-").put("baseline_s", 1.0).put("goal", "")
    mapper.writeValueAsString(out)
  }

  /** Paimon's BitmapDeletionVector through reflection. */
  private final class Paimon(loader: ClassLoader) {
    private val dvInterface = Class.forName("org.apache.paimon.deletionvectors.DeletionVector", true, loader)
    private val bitmapDv = Class.forName("org.apache.paimon.deletionvectors.BitmapDeletionVector", true, loader)
    private val delete = bitmapDv.getMethod("delete", java.lang.Long.TYPE)
    private val toBytes = dvInterface.getMethod("serializeToBytes", dvInterface)
    private val fromBytes = dvInterface.getMethod("deserializeFromBytes", classOf[Array[Byte]])

    def build(positions: Array[Int]): AnyRef = {
      val dv = bitmapDv.getConstructor().newInstance().asInstanceOf[AnyRef]
      positions.foreach(p => delete.invoke(dv, java.lang.Long.valueOf(p.toLong)))
      dv
    }
    def serialize(dv: AnyRef): Array[Byte] = toBytes.invoke(null, dv).asInstanceOf[Array[Byte]]
    def deserialize(bytes: Array[Byte]): AnyRef = fromBytes.invoke(null, bytes)
  }

  private lazy val paimon: Option[Paimon] =
    try Some(new Paimon(Thread.currentThread().getContextClassLoader))
    catch { case _: ClassNotFoundException => None }
}
