package io.indexbridge.bench

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import com.sun.management.GarbageCollectionNotificationInfo
import io.indexbridge.spark.BleveIndexes
import io.indexbridge.spark.functions.{bitmapIndexAgg, dvAgg}
import org.apache.spark.scheduler.{SparkListener, SparkListenerJobEnd, SparkListenerJobStart, SparkListenerTaskEnd}
import org.apache.spark.sql.{Column, DataFrame, SparkSession}
import org.apache.spark.sql.functions.{col, concat_ws, element_at, format_string, hash, lit, pmod, sequence, struct, transform, typedLit}

import java.lang.management.{ManagementFactory, MemoryType}
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}
import javax.management.openmbean.CompositeData
import javax.management.{Notification, NotificationEmitter, NotificationListener}
import scala.jdk.CollectionConverters._

/** The scale lines of `indexbridge bench dv`, `bench fileindex` and `bench bleve`, each a job over
  * rows generated from `spark.range` (nothing cached):
  *
  *  - a grouped aggregation (`file = id % files`) written to the noop sink: `ib_dv_agg` of
  *    `pos = id / files`, or `ib_bitmap_index_agg` of the rows `pos = id / files` (0 until the
  *    file's row count) of a value `v` with 100 distinct values;
  *  - a bleve index written by [[BleveIndexes.write]] (ids checked unique, segments of
  *    `rowsPerSegment` documents): documents `doc0000000`... with a title of 3-10 and a body of
  *    20-60 words, 1-4 tags, a price, a flag, a date and an author (name, age), every choice a
  *    hash of the id (the shape of `bench bleve`'s documents, words from its vocabulary).
  *
  * Reports seconds, rows/s and two memory figures of the (local-mode) executor JVM:
  *
  *  - Spark's `peakExecutionMemory`, the largest over the job's tasks (memory Spark manages:
  *    sorters, shuffle buffers; the object hash aggregate's buffers are not counted there);
  *  - the heap live after a garbage collection, the largest seen while the job ran, minus the
  *    same figure just before (every GC's `memoryUsageAfterGc` summed over pools: a collection
  *    leaves the live objects, so this bounds what the job's tasks held at once);
  *  - with `fullGcEveryMillis` > 0, a thread runs `System.gc()` that often while the job runs and
  *    `peak_live_heap_full_gc` is the same figure over those full collections only: a young
  *    collection's figure also counts the garbage already promoted to the old generation, a
  *    full one only what is live (the time then includes the collections).
  */
object AggregateScale {
  def runDvAgg(spark: SparkSession, positions: Long, files: Int, fullGcEveryMillis: Int): String = {
    val rows = spark.range(positions).select((col("id") % files).as("file"), (col("id") / files).cast("long").as("pos"))
    measure(spark, positions, fullGcEveryMillis)(() => noop(rows.groupBy("file").agg(dvAgg(col("pos")).as("dv"))))
      .put("positions", positions).put("files", files).toString
  }

  def runBitmapIndexAgg(spark: SparkSession, rowCount: Long, files: Int, fullGcEveryMillis: Int): String = {
    val rows = spark.range(rowCount).select((col("id") % files).as("file"), (col("id") / files).cast("long").as("pos"),
      (col("id") * 7919 % 100).cast("int").as("v"))
    measure(spark, rowCount, fullGcEveryMillis)(() => noop(rows.groupBy("file").agg(bitmapIndexAgg(col("pos"), col("v")).as("index"))))
      .put("rows", rowCount).put("files", files).toString
  }

  def runBleveWrite(spark: SparkSession, docs: Long, rowsPerSegment: Int, path: String, mappingJson: String, wordsJson: String,
      fullGcEveryMillis: Int): String = {
    val words = new ObjectMapper().readValue(wordsJson, classOf[Array[String]])
    val vocabulary = typedLit(words.toSeq)
    // a value in 0 until n chosen by the id and a salt (several per document)
    def pick(n: Int, salt: Column*): Column = pmod(hash(col("id") +: salt: _*), lit(n))
    def word(count: Int, salt: Column*): Column = element_at(vocabulary, pick(count, salt: _*) + 1)
    def sentence(least: Int, most: Int, salt: Int): Column =
      concat_ws(" ", transform(sequence(lit(1), pick(most - least + 1, lit(salt)) + least), i => word(words.length, lit(salt), i)))
    val documents = spark.range(docs).select(
      format_string("doc%07d", col("id")).as("id"),
      sentence(3, 10, 1).as("title"),
      sentence(20, 60, 2).as("body"),
      transform(sequence(lit(1), pick(4, lit(3)) + 1), i => word(60, lit(3), i)).as("tags"),
      (pick(100000, lit(4)) / 100.0).as("price"),
      (pick(2, lit(5)) === 0).as("active"),
      format_string("20%02d-%02d-%02dT%02d:00:00Z", pick(25, lit(6)), pick(12, lit(7)) + 1, pick(28, lit(8)) + 1, pick(24, lit(9))).as("when"),
      struct(sentence(2, 2, 10).as("name"), (pick(73, lit(11)) + 18).as("age")).as("author"))
    measure(spark, docs, fullGcEveryMillis)(() => BleveIndexes.write(documents, path, mappingJson, "id", rowsPerSegment, checkUniqueIds = true))
      .put("docs", docs).put("rows_per_segment", rowsPerSegment).toString
  }

  private def noop(aggregated: DataFrame): Unit = aggregated.write.format("noop").mode("overwrite").save()

  private def measure(spark: SparkSession, rowCount: Long, fullGcEveryMillis: Int)(job: () => Unit): ObjectNode = {
    val peakTask = new AtomicLong
    val (started, ended) = (new AtomicInteger, new AtomicInteger)
    val listener = new SparkListener {
      override def onJobStart(start: SparkListenerJobStart): Unit = started.incrementAndGet()
      override def onJobEnd(end: SparkListenerJobEnd): Unit = ended.incrementAndGet()
      override def onTaskEnd(end: SparkListenerTaskEnd): Unit =
        if (end.taskMetrics != null) peakTask.accumulateAndGet(end.taskMetrics.peakExecutionMemory, math.max)
    }
    System.gc()
    val before = liveHeap()
    val heap = new LiveHeapPeak
    val collector = new Thread(() =>
      try while (true) { Thread.sleep(fullGcEveryMillis.toLong); System.gc() }
      catch { case _: InterruptedException => () })
    spark.sparkContext.addSparkListener(listener)
    val t0 = System.nanoTime()
    if (fullGcEveryMillis > 0) collector.start()
    try job()
    finally {
      collector.interrupt()
      collector.join()
      heap.close()
    }
    // the bus delivers a job's task ends before its job end: once every job seen has ended, every task was counted
    val deadline = System.nanoTime() + 10_000_000_000L
    while ((started.get == 0 || ended.get < started.get) && System.nanoTime() < deadline) Thread.sleep(10)
    spark.sparkContext.removeSparkListener(listener)
    val seconds = (heap.closedAt - t0) / 1e9
    new ObjectMapper().createObjectNode()
      .put("seconds", seconds).put("rows_per_s", rowCount / seconds)
      .put("peak_execution_memory", peakTask.get).put("peak_live_heap", math.max(0L, heap.peak - before))
      .put("gcs", heap.collections).put("peak_live_heap_full_gc", math.max(0L, heap.fullPeak - before))
      .put("full_gcs", heap.fullCollections)
  }

  private def heapPools: Set[String] =
    ManagementFactory.getMemoryPoolMXBeans.asScala.filter(_.getType == MemoryType.HEAP).map(_.getName).toSet

  private def liveHeap(): Long = ManagementFactory.getMemoryMXBean.getHeapMemoryUsage.getUsed

  /** The largest heap occupancy after any garbage collection while open (an upper bound on the
    * live objects: a young collection leaves promoted garbage in the old generation). */
  private final class LiveHeapPeak extends NotificationListener with AutoCloseable {
    private val emitters = ManagementFactory.getGarbageCollectorMXBeans.asScala.collect { case e: NotificationEmitter => e }
    private val heap = heapPools
    @volatile var peak, fullPeak = 0L
    @volatile var collections, fullCollections = 0
    @volatile var closedAt = 0L
    emitters.foreach(_.addNotificationListener(this, null, null))

    override def handleNotification(n: Notification, handback: AnyRef): Unit =
      if (n.getType == GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION) {
        val gc = GarbageCollectionNotificationInfo.from(n.getUserData.asInstanceOf[CompositeData])
        val after = gc.getGcInfo.getMemoryUsageAfterGc.asScala.collect { case (pool, usage) if heap(pool) => usage.getUsed }.sum
        synchronized {
          peak = math.max(peak, after)
          collections += 1
          if (gc.getGcCause == "System.gc()") { fullPeak = math.max(fullPeak, after); fullCollections += 1 }
        }
      }

    override def close(): Unit = {
      closedAt = System.nanoTime()
      emitters.foreach(_.removeNotificationListener(this))
    }
  }
}
