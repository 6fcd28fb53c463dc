package io.indexbridge.lakehouse

import io.indexbridge.paimon.{DeletionVector, DvGen}
import org.scalacheck.Gen
import org.scalacheck.rng.Seed

/** Seeded DVs of several data files for the lakehouse specs: [[DvGen]]'s 64-bit position sets
  * (arrays, bitmaps, runs, positions >= 2^32, empty keys below the largest), some empty. */
object LakehouseGen {
  def positions(seed: Long, size: Int = 40): Array[Long] =
    DvGen.positions(bitmap64 = true).pureApply(Gen.Parameters.default.withSize(size), Seed(seed)).toArray.sorted

  /** `n` data files (paths as Iceberg/Delta would record them) with non-empty DVs. */
  def dvs(seed: Long, n: Int, size: Int = 40): Seq[(String, DeletionVector)] = {
    val random = new scala.util.Random(seed)
    (0 until n).map { i =>
      val ps = positions(seed * 1000 + i, size) match {
        case empty if empty.isEmpty => Array(random.nextLong(1L << 34))
        case ps                     => ps
      }
      f"/warehouse/db/t/data/${random.nextInt(100)}%02d/part-$i%05d-${random.nextLong()}%016x.parquet" ->
        DeletionVector.fromPositions(ps, bitmap64 = true)
    }
  }
}
