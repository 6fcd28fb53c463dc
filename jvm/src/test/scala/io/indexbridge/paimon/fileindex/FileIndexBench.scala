package io.indexbridge.paimon.fileindex

import scala.util.Random

import io.indexbridge.paimon.KeyType
import org.apache.paimon.data.BinaryString
import org.apache.paimon.fileindex.FileIndexer
import org.apache.paimon.fs.ByteArraySeekableStream
import org.apache.paimon.options.Options
import org.apache.paimon.predicate.FieldRef
import org.apache.paimon.types.DataTypes

/** Building and querying file indexes over a million rows: ours against Paimon 1.4.2's own
  * classes, measured in the same run (`bin/sbt "Test/runMain io.indexbridge.paimon.fileindex.FileIndexBench"`).
  * Prints the best of 5 runs of each and the ratio Paimon / ours (> 1: ours is faster). */
object FileIndexBench {
  private def best(runs: Int)(body: => Unit): Double =
    (0 until runs).map { _ => val t0 = System.nanoTime; body; (System.nanoTime - t0) / 1e6 }.min

  def main(args: Array[String]): Unit = {
    val rows = 1000000
    val random = new Random(42)
    // high cardinality: a permutation of 0 until rows (random ints would make Java's HashMap
    // turn a bin into a tree, whose order JavaOrder does not emulate yet)
    val permutation = random.shuffle((0 until rows).toVector).toArray
    for (label <- Seq("1000 distinct", "~1M distinct")) {
      val ints: Array[Int] = Array.tabulate(rows)(i => if (random.nextInt(20) == 0) Int.MinValue else if (label == "1000 distinct") random.nextInt(1000) else permutation(i))
      val boxed: Array[Any] = ints.map(v => if (v == Int.MinValue) null else Int.box(v))
      val strings: Array[Any] = ints.map(v => if (v == Int.MinValue) null else s"value-$v")
      for ((indexType, t, values, paimonValues, options) <- Seq(
             ("bloom-filter", KeyType.IntType, boxed, boxed, Map("items" -> "1000000")),
             ("bitmap", KeyType.IntType, boxed, boxed, Map.empty[String, String]),
             ("bitmap", KeyType.VarCharType(Int.MaxValue), strings, strings.map(s => if (s == null) null else BinaryString.fromString(s.asInstanceOf[String])), Map.empty[String, String]),
             ("bsi", KeyType.IntType, boxed, boxed, Map.empty[String, String])
           )) {
        val dataType = if (t == KeyType.IntType) DataTypes.INT() else DataTypes.STRING()
        val paimonOptions = new Options()
        options.foreach { case (k, v) => paimonOptions.set(k, v) }
        var bytes: Array[Byte] = null
        val theirs = best(5) {
          val w = FileIndexer.create(indexType, dataType, paimonOptions).createWriter()
          paimonValues.foreach(v => w.writeRecord(v.asInstanceOf[AnyRef]))
          bytes = w.serializedBytes()
        }
        var mine: Array[Byte] = null
        val ours = best(5) {
          val w = FileIndexContainer.writer(indexType, t, options)
          values.foreach(w.write)
          mine = w.serialize()
        }
        require(mine.sameElements(bytes), s"$indexType: different bytes")
        val literals = values.filter(_ != null).take(200)
        val ref = new FieldRef(0, "c", dataType)
        val paimonLiterals = paimonValues.filter(_ != null).take(200)
        val theirQueries = best(5) {
          val r = FileIndexer.create(indexType, dataType, new Options()).createReader(new ByteArraySeekableStream(bytes), 0, bytes.length)
          paimonLiterals.foreach(l => r.visitEqual(ref, l.asInstanceOf[AnyRef]).remain())
        }
        val ourQueries = best(5) {
          val r = FileIndexContainer.reader(ContainerEntry("c", indexType, 0, bytes.length), t, bytes, "bench")
          literals.foreach(l => r.evaluate(Op.Equal, Seq(l)).remain)
        }
        println(f"$indexType%-12s ${t.toString}%-24s $label%-13s build: Paimon $theirs%8.1f ms, ours $ours%8.1f ms (x${theirs / ours}%.2f)   " +
          f"open + 200 equal: Paimon $theirQueries%8.1f ms, ours $ourQueries%8.1f ms (x${theirQueries / ourQueries}%.2f)")
      }
    }
  }
}
