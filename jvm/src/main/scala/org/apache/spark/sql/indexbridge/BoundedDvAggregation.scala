package org.apache.spark.sql.indexbridge

import java.nio.ByteOrder

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BindReferences, BoundReference, Expression, GenericInternalRow, JoinedRow, MutableProjection, NamedExpression, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Final, Partial}
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{ColumnarToRowExec, SparkPlan, UnaryExecNode, WholeStageCodegenExec}
import org.apache.spark.sql.execution.aggregate.{ObjectAggregationIterator, ObjectHashAggregateExec}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.types.{DateType, IntegerType, LongType, StringType}
import org.apache.spark.sql.vectorized.{ColumnarBatch, ColumnVector}
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

/** Bounds the memory of a grouped aggregation holding `ib_dv_agg` buffers.
  *
  * Spark plans such an aggregation as a partial ObjectHashAggregate in each map task, a shuffle,
  * and a final ObjectHashAggregate; each of the two keeps every group its task sees (one DV per
  * data file) until its input ends, so a task holds the DVs of all its files at once. Spark's
  * own bound, `spark.sql.objectHashAggregate.sortBased.fallbackThreshold`, sorts every remaining
  * input row once a task has that many groups: measured 2.9x slower than the hash aggregate over
  * 20M positions / 1000 files. This rule (applied by [[IndexBridgeAggregationStrategy]] as the
  * aggregation is planned, with AQE or without) rewrites the pair instead:
  *
  *  - the partial aggregate becomes [[BoundedPartialAggregateExec]]: hash aggregation over
  *    consecutive chunks of the task's rows ([[DvChunk]] when every aggregate is `ib_dv_agg`,
  *    Spark's ObjectAggregationIterator otherwise), a chunk ending once its DV buffers hold about
  *    `spark.indexbridge.dvAgg.partialBytes` (default 64 MiB; 0 keeps Spark's plan). A file's
  *    partial DV may then leave the task in several rows; the final aggregate merges them;
  *  - the final aggregate becomes a SortAggregate: Spark sorts the partial rows by group (its
  *    sorter spills to disk) and merges one group's DV at a time.
  *
  * A task then holds at most the chunk's buffers or the largest single DV. Merging partial DVs is
  * a set union, so the DVs are the bytes the unbounded plan writes.
  */
object BoundedDvAggregation {
  val PartialBytesKey = "spark.indexbridge.dvAgg.partialBytes"
  val DefaultPartialBytes: Long = 64L << 20

  def rule(session: SparkSession): Rule[SparkPlan] = new Rule[SparkPlan] {
    override def apply(plan: SparkPlan): SparkPlan = {
      // read when a plan has a DV aggregate: a bad value fails those queries only
      lazy val budget = {
        val bytes = session.conf.get(PartialBytesKey, DefaultPartialBytes.toString).toLong
        require(bytes >= 0, s"$PartialBytesKey must be 0 (Spark's plan) or positive, got $bytes")
        bytes
      }
      plan.transformUp {
        case p: ObjectHashAggregateExec if holdsDvs(p, Partial) && p.groupingExpressions.nonEmpty && !p.isStreaming && budget > 0 =>
          BoundedPartialAggregateExec(p.groupingExpressions, p.aggregateExpressions, p.aggregateAttributes,
            p.initialInputBufferOffset, p.resultExpressions, budget, p.child)
        case f: ObjectHashAggregateExec if holdsDvs(f, Final) && f.child.isInstanceOf[BoundedPartialAggregateExec] =>
          f.toSortAggregate
      }
    }
  }

  private def holdsDvs(agg: ObjectHashAggregateExec, mode: org.apache.spark.sql.catalyst.expressions.aggregate.AggregateMode): Boolean =
    agg.aggregateExpressions.forall(e => e.mode == mode && !e.isDistinct) &&
      agg.aggregateExpressions.exists(_.aggregateFunction.isInstanceOf[DvAgg])
}

private object BoundedPartialAggregateExec {
  val MinRowsPerGroup = 8
}

/** The partial half of a grouped aggregation with `ib_dv_agg` buffers, in bounded memory: a
  * [[DvChunk]] (every aggregate `ib_dv_agg`) or Spark's [[ObjectAggregationIterator]] (other
  * aggregates beside it) over consecutive chunks of each task's rows, a chunk ending once
  * the DV buffers it created report holding `partialBytes` ([[HeldBytes]]). Its output rows are
  * those of ObjectHashAggregateExec in Partial mode, a group appearing once per chunk that saw it.
  * When the groups' own objects fill the budget (a chunk ends with fewer than MinRowsPerGroup rows
  * per group), the rest of the task goes to one iterator that falls back to Spark's sort-based
  * aggregation once it holds that chunk's number of groups. */
case class BoundedPartialAggregateExec(
    groupingExpressions: Seq[NamedExpression],
    aggregateExpressions: Seq[AggregateExpression],
    aggregateAttributes: Seq[Attribute],
    initialInputBufferOffset: Int,
    resultExpressions: Seq[NamedExpression],
    partialBytes: Long,
    child: SparkPlan)
    extends UnaryExecNode {

  import BoundedPartialAggregateExec.MinRowsPerGroup

  override def output: Seq[Attribute] = resultExpressions.map(_.toAttribute)
  override def outputPartitioning: Partitioning = child.outputPartitioning
  override def producedAttributes = org.apache.spark.sql.catalyst.expressions.AttributeSet(aggregateAttributes) ++
    org.apache.spark.sql.catalyst.expressions.AttributeSet(resultExpressions.diff(groupingExpressions).map(_.toAttribute))

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows"),
    "chunks" -> SQLMetrics.createMetric(sparkContext, "number of chunks"),
    "spillSize" -> SQLMetrics.createSizeMetric(sparkContext, "spill size"),
    "numTasksFallBacked" -> SQLMetrics.createMetric(sparkContext, "number of sort fallback tasks"))

  protected override def doExecute(): RDD[InternalRow] = {
    val (numOutputRows, chunks) = (longMetric("numOutputRows"), longMetric("chunks"))
    val (spillSize, fallBacks) = (longMetric("spillSize"), longMetric("numTasksFallBacked"))
    val dvAggs = aggregateExpressions.map(_.aggregateFunction).collect { case d: DvAgg => d }
    val transition = columnarTransition
    val rows = transition match {
      case Some(c) =>
        val (batches, batchRows) = (c.longMetric("numInputBatches"), c.longMetric("numOutputRows"))
        c.child.executeColumnar().mapPartitionsInternal(new BatchRows(_, batches, batchRows))
      case None => child.execute()
    }
    rows.mapPartitionsWithIndexInternal { (partIndex, input) =>
      // Spark's ObjectAggregationIterator takes UnsafeRows (its sort-based fallback stores them)
      lazy val unsafe = UnsafeProjection.create(child.output, child.output)
      val held = new HeldBytes
      val chunk = new ChunkRows(input, held, partialBytes)
      def aggregate(): Iterator[InternalRow] = {
        // Spark's sort-based aggregation for the rest of the task, after a chunk that ended with
        // fewer than MinRowsPerGroup rows per group: the groups' own objects fill the budget, and
        // chunking would pass nearly every row on as a DV of its own (measured 7.6x slower than
        // one hash map over 40k files per task at 16 MiB)
        if (held.groups > 0 && chunk.rows < MinRowsPerGroup * held.groups) chunk.unbounded = true
        val sortGroups = if (chunk.unbounded) held.groups.toInt else 0
        held.bytes = 0
        held.groups = 0
        chunk.rows = 0
        chunks += 1
        HeldBytes.current.set(held) // both consume their chunk while being constructed
        try {
          if (sortGroups == 0 && dvAggs.length == aggregateExpressions.length)
            new DvChunk(groupingExpressions, dvAggs, child.output, chunk, numOutputRows).output
          else
            new ObjectAggregationIterator(partIndex, child.output, groupingExpressions, aggregateExpressions, aggregateAttributes,
              initialInputBufferOffset, resultExpressions, (exprs, schema) => MutableProjection.create(exprs, schema), child.output,
              if (transition.isEmpty) chunk else chunk.map(unsafe), if (sortGroups > 0) sortGroups else Int.MaxValue, numOutputRows,
              spillSize, fallBacks)
        } finally HeldBytes.current.remove()
      }
      Iterator.continually(input.hasNext).takeWhile(identity).flatMap(_ => aggregate())
    }
  }

  /** The transition Spark put above a columnar child (a Parquet or ORC scan), alone or as a
    * generated stage: the child's batches are then read in place ([[BatchRows]]), where the
    * transition copies every row into an UnsafeRow first (Spark's own aggregates skip that copy by
    * fusing the transition into their generated code). 20M positions of 1000 files read from
    * Parquet in no order, three alternated pairs: 2.68-3.06 s, against 2.98-3.75 s through the
    * transition. */
  def columnarTransition: Option[ColumnarToRowExec] = child match {
    case c: ColumnarToRowExec                        => Some(c)
    case WholeStageCodegenExec(c: ColumnarToRowExec) => Some(c)
    case _                                           => None
  }

  override protected def withNewChildInternal(newChild: SparkPlan): BoundedPartialAggregateExec = copy(child = newChild)
}

/** The rows of a partition's columnar batches, read in place: row `rowId` of `batch` is next
  * (`ColumnarBatch.getRow`, one row object moved along, valid until the next row), and a reader
  * that takes the batch's columns itself moves `rowId` on. The transition's metrics count them as
  * it would. */
private final class BatchRows(batches: Iterator[ColumnarBatch], numInputBatches: SQLMetric, numOutputRows: SQLMetric)
    extends Iterator[InternalRow] {
  var batch: ColumnarBatch = null
  var rowId = 0

  override def hasNext: Boolean = (batch != null && rowId < batch.numRows) || {
    while ((batch == null || rowId >= batch.numRows) && batches.hasNext) {
      batch = batches.next()
      rowId = 0
      numInputBatches += 1
      numOutputRows += batch.numRows
    }
    batch != null && rowId < batch.numRows
  }

  override def next(): InternalRow = {
    if (!hasNext) throw new NoSuchElementException("no rows left in the partition's batches")
    rowId += 1
    batch.getRow(rowId - 1)
  }
}

/** A task's rows up to a chunk's end: while the chunk's buffers hold less than `partialBytes`
  * (`held`), or to the task's end once `unbounded`. `rows` counts those taken, by `next` or by a
  * reader of `batches` (the input's columnar batches, or null). */
private final class ChunkRows(input: Iterator[InternalRow], held: HeldBytes, partialBytes: Long) extends Iterator[InternalRow] {
  val batches: BatchRows = input match {
    case b: BatchRows => b
    case _            => null
  }
  var rows = 0L
  var unbounded = false

  /** Whether the chunk takes more rows, if there are any. */
  def open: Boolean = unbounded || held.bytes < partialBytes

  override def hasNext: Boolean = open && input.hasNext
  override def next(): InternalRow = { rows += 1; input.next() }
}

/** The bytes the aggregation buffers of a [[BoundedPartialAggregateExec]] chunk hold (an
  * estimate their owners add to). `current` is set on the task's thread while a chunk is
  * aggregated; buffers created elsewhere (final aggregates, plans without the rule) see none. */
private[indexbridge] final class HeldBytes {
  var bytes = 0L
  var groups = 0L
}

private[indexbridge] object HeldBytes {
  val current = new ThreadLocal[HeldBytes]
}

/** One chunk of a [[BoundedPartialAggregateExec]] whose aggregates are all `ib_dv_agg`, hashed
  * without Spark's ObjectAggregationIterator: its `output` rows are the iterator's (grouping key,
  * then each DV buffer serialized), in the order the groups first appeared, and it consumes
  * `input` while being constructed, as the iterator does.
  *
  * Per row the iterator projects the key, looks it up in a `LinkedHashMap[UnsafeRow, _]` (Murmur3
  * over the key's bytes, then a node, a key and its byte array to chase), joins the row to a
  * buffer row, runs a projection of no-op merge expressions and boxes the position through
  * `TypedImperativeAggregate.update`: 60% of `ib_dv_agg`'s samples in JFR over 1000 files, where
  * Spark's own `count()` runs a generated hash map. Here the groups sit in one open-addressing
  * table probed linearly, each slot one long (the key's hash, the group's number), the keys' bytes
  * back to back in one long array, hashed and compared a word at a time (an UnsafeRow is whole
  * words), and the positions go straight to the buffers. A key of one BIGINT, INT, DATE or STRING
  * column is not projected: a number is hashed and compared as it is (each group keeps its
  * value), a string's UnsafeRow words (null bits, its offset-and-size, its bytes zero-padded to a
  * word) are written straight from the input row into a scratch array, a plain copy where the
  * generated projection was 17% of the samples (JFR, 20M positions over 1000 BIGINT files); the
  * column's null key is a group of its own, outside the table. */
private object DvChunk {
  // how the key is read: projected, or one column of these types read as it is
  val Projected = 0
  val LongKey = 1
  val IntKey = 2
  val StringKey = 3
}

private final class DvChunk(
    groupingExpressions: Seq[NamedExpression],
    aggregates: Seq[DvAgg],
    inputAttributes: Seq[Attribute],
    input: ChunkRows,
    numOutputRows: SQLMetric) {
  import DvChunk._

  private val width = aggregates.length
  private val keyOf = UnsafeProjection.create(groupingExpressions, inputAttributes)
  private val positions = aggregates.map(a => BindReferences.bindReference(a.child, inputAttributes))
  // a column read as it is, other expressions through one generated projection (no boxing)
  private val (project, ordinals) = positions.collect { case b: BoundReference => b.ordinal } match {
    case direct if direct.length == width => (null, direct.toArray)
    case _ => (UnsafeProjection.create(positions), Array.range(0, width))
  }

  // the key column read as it is (its kind below), or -1: the key is projected
  private val (column, columnKind) = groupingExpressions match {
    case Seq(e) if ByteOrder.nativeOrder == ByteOrder.LITTLE_ENDIAN =>
      BindReferences.bindReference(e: Expression, inputAttributes) match {
        case b: BoundReference => b.dataType match {
          case LongType                                => (b.ordinal, LongKey)
          case IntegerType | DateType                  => (b.ordinal, IntKey)
          case t: StringType if t.supportsBinaryEquality => (b.ordinal, StringKey)
          case _                                       => (-1, Projected)
        }
        case _ => (-1, Projected)
      }
    case _ => (-1, Projected)
  }
  // the key's UnsafeRow words when the column is read as it is
  private var scratch = new Array[Long](4)

  private var groups = 0
  private var buffers = new Array[DvAggBuffer](64 * width)
  // group g's key is words(keyStart(g) until keyStart(g + 1))
  private var keyStart = new Array[Int](65)
  // a BIGINT, INT or DATE key column: group g's value (zero-extended for INT and DATE)
  private var numbers = new Array[Long](64)
  // a key column read as it is: the group of its null key, -1 until one is seen (kept out of the
  // table, which then holds only values of the column)
  private var nullGroup = -1
  private var words = new Array[Long](128)
  // hash << 32 | (group + 1), 0 for an empty slot; at most half full
  private var slots = new Array[Long](128)

  if (input.batches != null && project == null && columnKind != Projected) takeBatches()
  else while (input.hasNext) {
    val row = input.next()
    val group = groupOf(row)
    val in = if (project == null) row else project(row)
    var i = 0
    while (i < width) {
      if (!in.isNullAt(ordinals(i))) buffers(group * width + i).delete(in.getLong(ordinals(i)))
      i += 1
    }
  }

  /** The chunk's rows from the input's columnar batches, each batch's key and position columns
    * read in one loop (as Spark's generated aggregates read them), not a row at a time through
    * the batch's row object and two iterators: 5-10% less time over 20M positions of 1000 files
    * read from Parquet in no order. */
  private def takeBatches(): Unit = {
    val cursor = input.batches
    val columns = new Array[ColumnVector](width)
    while (input.hasNext) { // (a batch with rows left)
      val batch = cursor.batch
      val (start, end) = (cursor.rowId, batch.numRows)
      val keys = batch.column(column)
      var i = 0
      while (i < width) { columns(i) = batch.column(ordinals(i)); i += 1 }
      var r = start
      while (r < end && input.open) {
        val group =
          if (keys.isNullAt(r)) groupOf(batch.getRow(r))
          else if (columnKind == LongKey) groupOf(keys.getLong(r))
          else if (columnKind == IntKey) groupOf(keys.getInt(r) & 0xFFFFFFFFL)
          else groupOf(keys.getUTF8String(r))
        i = 0
        while (i < width) {
          val c = columns(i)
          if (!c.isNullAt(r)) buffers(group * width + i).delete(c.getLong(r))
          i += 1
        }
        r += 1
      }
      cursor.rowId = r
      input.rows += r - start
    }
  }

  /** Each group's row, its buffers released as it goes. */
  def output: Iterator[InternalRow] = {
    val bufferAttributes = aggregates.flatMap(_.aggBufferAttributes)
    val groupingAttributes = groupingExpressions.map(_.toAttribute)
    val result = UnsafeProjection.create(groupingAttributes ++ bufferAttributes, groupingAttributes ++ bufferAttributes)
    val (key, joined, serialized) = (new UnsafeRow(groupingExpressions.length), new JoinedRow, new GenericInternalRow(width))
    Iterator.range(0, groups).map { g =>
      for (i <- 0 until width) {
        serialized.update(i, buffers(g * width + i).serialize())
        buffers(g * width + i) = null
      }
      numOutputRows += 1
      key.pointTo(words, Platform.LONG_ARRAY_OFFSET + 8L * keyStart(g), 8 * (keyStart(g + 1) - keyStart(g)))
      result(joined(key, serialized))
    }
  }

  /** The group of the row's key, a new one (with fresh buffers) if the key is new. */
  private def groupOf(row: InternalRow): Int =
    if (column < 0) {
      val key = keyOf(row)
      groupOf(key.getBaseObject, key.getBaseOffset, key.getSizeInBytes)
    } else if (row.isNullAt(column)) {
      if (nullGroup < 0) {
        val key = keyOf(row)
        nullGroup = addGroup(key.getBaseObject, key.getBaseOffset, key.getSizeInBytes)
      }
      nullGroup
    } else if (columnKind == LongKey) groupOf(row.getLong(column))
    else if (columnKind == IntKey) groupOf(row.getInt(column) & 0xFFFFFFFFL) // as UnsafeRowWriter writes it: the word zeroed, then the int
    else groupOf(row.getUTF8String(column))

  /** The group of a STRING key column's (non-null) value. */
  private def groupOf(string: UTF8String): Int = {
    val n = stringKeyWords(string) // (may grow scratch: first)
    groupOf(scratch, Platform.LONG_ARRAY_OFFSET, 8 * n)
  }

  /** The group of a BIGINT, INT or DATE key column's (non-null) value: the value's own hash, and
    * one compare of each group met, where the key's UnsafeRow words took a hash of two words and
    * two arrays to chase (the probe and the key compare were a third of the samples). */
  private def groupOf(value: Long): Int = {
    val x = value * 0x9e3779b97f4a7c15L
    val h = (x ^ (x >>> 29) ^ (x >>> 43)).toInt
    val mask = slots.length - 1
    var s = h & mask
    var slot = slots(s)
    while (slot != 0) {
      val g = slot.toInt - 1
      if (numbers(g) == value) return g
      s = (s + 1) & mask
      slot = slots(s)
    }
    scratch(0) = 0L // null bits
    scratch(1) = value
    val g = newGroup(scratch, Platform.LONG_ARRAY_OFFSET, 16, h, s)
    numbers(g) = value
    g
  }

  /** Writes the words of a STRING key's UnsafeRow to `scratch`: how many. */
  private def stringKeyWords(string: UTF8String): Int = {
    val n = string.numBytes
    val count = 2 + (n + 7) / 8
    if (count > scratch.length) scratch = new Array[Long](math.max(count, 2 * scratch.length))
    scratch(0) = 0L // null bits
    scratch(count - 1) = 0L // padding (when the bytes end inside a word)
    scratch(1) = 16L << 32 | n // offset (after the null bits and this word) and size
    Platform.copyMemory(string.getBaseObject, string.getBaseOffset, scratch, Platform.LONG_ARRAY_OFFSET + 16, n)
    count
  }

  /** The group of the key whose UnsafeRow is `size` bytes at (`base`, `offset`). */
  private def groupOf(base: AnyRef, offset: Long, size: Int): Int = {
    val h = hash(base, offset, size)
    val mask = slots.length - 1
    var s = h & mask
    var slot = slots(s)
    while (slot != 0) {
      val g = slot.toInt - 1
      if ((slot >>> 32).toInt == h && sameKey(g, base, offset, size)) return g
      s = (s + 1) & mask
      slot = slots(s)
    }
    newGroup(base, offset, size, h, s)
  }

  private def sameKey(g: Int, base: AnyRef, offset: Long, size: Int): Boolean = {
    val start = keyStart(g)
    val n = size >> 3
    if (keyStart(g + 1) - start != n) return false
    var i = 0
    while (i < n && words(start + i) == Platform.getLong(base, offset + 8L * i)) i += 1
    i == n
  }

  /** A new group of the key at (`base`, `offset`), in slot `s` of the table under hash `h`. */
  private def newGroup(base: AnyRef, offset: Long, size: Int, h: Int, s: Int): Int = {
    val g = addGroup(base, offset, size)
    slots(s) = h.toLong << 32 | (g + 1)
    if (2 * groups > slots.length) rehash()
    g
  }

  /** A new group (its key's words, fresh buffers), not yet in the table. */
  private def addGroup(base: AnyRef, offset: Long, size: Int): Int = {
    val g = groups
    if (g * width == buffers.length) {
      buffers = java.util.Arrays.copyOf(buffers, 2 * buffers.length)
      keyStart = java.util.Arrays.copyOf(keyStart, 2 * g + 1)
      numbers = java.util.Arrays.copyOf(numbers, 2 * g)
    }
    val (start, n) = (keyStart(g), size >> 3)
    if (start + n > words.length) words = java.util.Arrays.copyOf(words, math.max(2 * words.length, start + n))
    Platform.copyMemory(base, offset, words, Platform.LONG_ARRAY_OFFSET + 8L * start, 8L * n)
    keyStart(g + 1) = start + n
    for (i <- 0 until width) buffers(g * width + i) = aggregates(i).createAggregationBuffer()
    groups += 1
    g
  }

  private def rehash(): Unit = {
    val old = slots
    slots = new Array[Long](2 * old.length)
    val mask = slots.length - 1
    for (slot <- old if slot != 0) {
      var s = (slot >>> 32).toInt & mask
      while (slots(s) != 0) s = (s + 1) & mask
      slots(s) = slot
    }
  }

  /** A multiplicative hash of the key's words, its high bits folded down for the mask. */
  private def hash(base: AnyRef, offset: Long, size: Int): Int = {
    // (no tuples on this path: their fields would be boxed every row)
    var h = size.toLong
    var i = 0
    while (i < size) {
      h = (h ^ Platform.getLong(base, offset + i)) * 0x9e3779b97f4a7c15L
      i += 8
    }
    (h ^ (h >>> 29) ^ (h >>> 43)).toInt
  }
}
