package org.apache.spark.sql.indexbridge

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, MutableProjection, NamedExpression}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Final, Partial}
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}
import org.apache.spark.sql.execution.aggregate.{ObjectAggregationIterator, ObjectHashAggregateExec}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

/** Bounds the memory of a grouped aggregation holding `ib_dv_agg` buffers.
  *
  * Spark plans such an aggregation as a partial ObjectHashAggregate in each map task, a shuffle,
  * and a final ObjectHashAggregate; each of the two keeps every group its task sees (one DV per
  * data file) until its input ends, so a task holds the DVs of all its files at once. Spark's
  * own bound, `spark.sql.objectHashAggregate.sortBased.fallbackThreshold`, sorts every remaining
  * input row once a task has that many groups: measured 2.9x slower than the hash aggregate over
  * 20M positions / 1000 files. This rule (a post-planner rule of [[io.indexbridge.spark.IndexBridgeExtensions]])
  * rewrites the pair instead:
  *
  *  - the partial aggregate becomes [[BoundedPartialAggregateExec]]: Spark's hash aggregation over
  *    consecutive chunks of the task's rows, a chunk ending once its DV buffers hold about
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

/** The partial half of a grouped aggregation with `ib_dv_agg` buffers, in bounded memory: Spark's
  * [[ObjectAggregationIterator]] over consecutive chunks of each task's rows, a chunk ending once
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
    child.execute().mapPartitionsWithIndexInternal { (partIndex, input) =>
      val held = new HeldBytes
      var rows = 0L
      // Spark's sort-based aggregation for the rest of the task, after a chunk that ended with
      // fewer than MinRowsPerGroup rows per group: the groups' own objects fill the budget, and
      // chunking would pass nearly every row on as a DV of its own (measured 7.6x slower than
      // one hash map over 40k files per task at 16 MiB)
      var sortGroups = 0
      // rows up to the budget: the chunk's end
      val chunk = new Iterator[InternalRow] {
        override def hasNext: Boolean = (sortGroups > 0 || held.bytes < partialBytes) && input.hasNext
        override def next(): InternalRow = { rows += 1; input.next() }
      }
      def aggregate(): Iterator[InternalRow] = {
        if (held.groups > 0 && rows < MinRowsPerGroup * held.groups) sortGroups = held.groups.toInt
        held.bytes = 0
        held.groups = 0
        rows = 0
        chunks += 1
        HeldBytes.current.set(held) // the iterator consumes its chunk while being constructed
        try {
          new ObjectAggregationIterator(partIndex, child.output, groupingExpressions, aggregateExpressions, aggregateAttributes,
            initialInputBufferOffset, resultExpressions, (exprs, schema) => MutableProjection.create(exprs, schema), child.output,
            chunk, if (sortGroups > 0) sortGroups else Int.MaxValue, numOutputRows, spillSize, fallBacks)
        } finally HeldBytes.current.remove()
      }
      Iterator.continually(input.hasNext).takeWhile(identity).flatMap(_ => aggregate())
    }
  }

  override protected def withNewChildInternal(newChild: SparkPlan): BoundedPartialAggregateExec = copy(child = newChild)
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
