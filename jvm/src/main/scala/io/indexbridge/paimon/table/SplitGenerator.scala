package io.indexbridge.paimon.table

import scala.jdk.CollectionConverters._

/** How Paimon cuts a bucket's files into splits for a batch read (`SplitGenerator`).
  *
  * {{{
  * append      files sorted by _MIN_SEQUENCE_NUMBER, packed in order; every split raw
  * primary key rawConvertible = every file at level > 0 without retract rows (_DELETE_ROW_COUNT 0 or null)
  *             rawConvertible and (deletion vectors, first-row or one level): files packed in
  *             order, every split raw
  *             otherwise IntervalPartition: files sorted by (min key, max key), cut into sections
  *             of overlapping key ranges, each section's sorted runs taken from a priority queue
  *             by their last max key; sections packed in order; a split of one file without
  *             retract rows is raw, every other one merges
  * packing     BinPacking.packForOrdered: a bin is closed before an item that would take it past
  *             source.split.target-size; weight = max(size, source.split.open-file-cost)
  * }}}
  *
  * Hand-written to reproduce Paimon's splits (and so which files a raw read opens) exactly; the
  * sorted runs come from a `java.util.PriorityQueue` iterated as Paimon's `queue.stream()` does.
  */
object SplitGenerator {

  /** The files of one split and whether Paimon reads them raw (without merging). */
  final case class SplitGroup(files: Seq[DataFileMeta], rawConvertible: Boolean)

  private def packForOrdered[T](items: Seq[T], weight: T => Long, target: Long): Seq[Seq[T]] = {
    val packed = Seq.newBuilder[Seq[T]]
    var bin = Vector.empty[T]
    var binWeight = 0L
    for (item <- items) {
      val w = weight(item)
      if (binWeight + w > target && bin.nonEmpty) {
        packed += bin
        bin = Vector.empty
        binWeight = 0L
      }
      binWeight += w
      bin :+= item
    }
    if (bin.nonEmpty) packed += bin
    packed.result()
  }

  /** `AppendOnlySplitGenerator.splitForBatch`. */
  def append(files: Seq[DataFileMeta], options: CoreOptions): Seq[SplitGroup] =
    packForOrdered(files.sortBy(_.minSequenceNumber), (f: DataFileMeta) => math.max(f.fileSize, options.splitOpenFileCost),
      options.splitTargetSize).map(SplitGroup(_, rawConvertible = true))

  private def withoutDeleteRow(f: DataFileMeta): Boolean = f.deleteRowCount.forall(_ == 0L)

  /** `MergeTreeSplitGenerator.splitForBatch`; `keyOrder` orders the files' serialized min/max keys. */
  def mergeTree(files: Seq[DataFileMeta], options: CoreOptions, keyOrder: Ordering[Array[Byte]]): Seq[SplitGroup] = {
    val rawConvertible = files.forall(f => f.level != 0 && withoutDeleteRow(f))
    val oneLevel = files.map(_.level).distinct.size == 1
    if (rawConvertible && (options.deletionVectorsEnabled || options.firstRow || oneLevel))
      packForOrdered(files, (f: DataFileMeta) => math.max(f.fileSize, options.splitOpenFileCost), options.splitTargetSize)
        .map(SplitGroup(_, rawConvertible = true))
    else {
      val sections = intervalPartition(files, keyOrder)
      packForOrdered(sections, (s: Seq[DataFileMeta]) => math.max(s.map(_.fileSize).sum, options.splitOpenFileCost), options.splitTargetSize)
        .map(_.flatten)
        .map(group => SplitGroup(group, group.size == 1 && withoutDeleteRow(group.head)))
    }
  }

  /** `IntervalPartition.partition()`, each section's sorted runs flattened in queue order. */
  private def intervalPartition(input: Seq[DataFileMeta], keyOrder: Ordering[Array[Byte]]): Seq[Seq[DataFileMeta]] = {
    val files = input.sortWith { (a, b) =>
      val c = keyOrder.compare(a.minKey, b.minKey)
      (if (c == 0) keyOrder.compare(a.maxKey, b.maxKey) else c) < 0
    }
    val sections = Seq.newBuilder[Seq[DataFileMeta]]
    var section = Vector.empty[DataFileMeta]
    var bound: Array[Byte] = null
    for (meta <- files) {
      if (section.nonEmpty && keyOrder.compare(meta.minKey, bound) > 0) {
        sections += sortedRuns(section, keyOrder)
        section = Vector.empty
        bound = null
      }
      section :+= meta
      if (bound == null || keyOrder.compare(meta.maxKey, bound) > 0) bound = meta.maxKey
    }
    if (section.nonEmpty) sections += sortedRuns(section, keyOrder)
    sections.result()
  }

  private def sortedRuns(metas: Seq[DataFileMeta], keyOrder: Ordering[Array[Byte]]): Seq[DataFileMeta] = {
    type Run = java.util.ArrayList[DataFileMeta]
    def last(run: Run): DataFileMeta = run.get(run.size - 1)
    val queue = new java.util.PriorityQueue[Run]((a: Run, b: Run) => keyOrder.compare(last(a).maxKey, last(b).maxKey))
    val first = new Run
    first.add(metas.head)
    queue.add(first)
    for (meta <- metas.tail) {
      val top = queue.poll()
      if (keyOrder.compare(meta.minKey, last(top).maxKey) > 0) top.add(meta)
      else {
        val run = new Run
        run.add(meta)
        queue.add(run)
      }
      queue.add(top)
    }
    queue.iterator.asScala.flatMap(_.asScala).toSeq
  }
}
