import io.indexbridge.bench.ZapCorpus
import io.indexbridge.zap.{SegmentReader, SegmentWriter}
object Scratch {
  def main(args: Array[String]): Unit = {
    val corpus = ZapCorpus.read(args(0))
    val docs = corpus.documents()
    val seg = SegmentReader(SegmentWriter.build(docs))
    val terms = (for (f <- seg.fields; d = seg.dictionary(f.id); (t, _) <- d.terms()) yield (d, t)).toIndexedSeq
    for (round <- 1 to args(1).toInt) {
      var best = Double.MaxValue
      for (_ <- 1 to 20) {
        val t0 = System.nanoTime()
        terms.foreach { case (d, t) => require(d.value(t).isDefined) }
        best = math.min(best, (System.nanoTime() - t0) / 1e6)
      }
      println(f"round $round best $best%.2f ms")
    }
  }
}
