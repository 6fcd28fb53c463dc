package org.apache.spark.sql.indexbridge

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateMode, Complete, Final, Partial}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{ProjectExec, SparkPlan}
import org.apache.spark.sql.execution.aggregate.{ObjectHashAggregateExec, SortAggregateExec}

/** Bounds the memory of a grouped aggregation of file-index buffers (`ib_bloom_filter_agg`,
  * `ib_bitmap_index_agg`, `ib_bsi_agg`, `ib_range_bitmap_agg`, `ib_file_index_agg`).
  *
  * Their buffer ([[PositionedValues]]) is the data file's rows themselves: Spark's partial
  * aggregate in the map tasks reduces nothing, and like the final one it keeps every group its
  * task sees until its input ends (`configure` lets it keep 65536 before it sorts), so a task
  * holds the rows of up to that many data files. This rule (applied by
  * [[IndexBridgeAggregationStrategy]] as the aggregation is planned, with AQE or without) plans
  * the aggregation without its partial half, as Spark plans aggregates that cannot be partial:
  *
  * {{{
  *   Final ObjectHashAggregate(Partial ObjectHashAggregate(child))
  *     -> Complete SortAggregate([Project of the grouping aliases](child))
  * }}}
  *
  * Spark then shuffles the rows by group and sorts them (its sorter spills to disk), and the
  * aggregate builds one group's index at a time: a task holds one data file's rows, those the
  * largest file's index is built from. The payloads are the bytes of Spark's plan (a group's
  * rows are ordered by position before the index is built). `spark.indexbridge.fileIndexAgg.sorted=false`
  * keeps Spark's plan.
  */
object SortedFileIndexAggregation {
  val SortedKey = "spark.indexbridge.fileIndexAgg.sorted"

  def rule(session: SparkSession): Rule[SparkPlan] = new Rule[SparkPlan] {
    override def apply(plan: SparkPlan): SparkPlan = plan.transformUp {
      case f: ObjectHashAggregateExec if holdsIndexes(f, Final) && session.conf.get(SortedKey, "true").toBoolean =>
        f.child match {
          case p: ObjectHashAggregateExec if holdsIndexes(p, Partial) && p.groupingExpressions.nonEmpty && !p.isStreaming =>
            val aliases = p.groupingExpressions.filterNot(_.isInstanceOf[Attribute])
            val input = if (aliases.isEmpty) p.child else ProjectExec(p.child.output ++ aliases, p.child)
            val grouping = p.groupingExpressions.map(_.toAttribute)
            SortAggregateExec(Some(grouping), isStreaming = false, None, grouping, p.aggregateExpressions.map(_.copy(mode = Complete)),
              f.aggregateAttributes, 0, f.resultExpressions, input)
          case _ => f
        }
    }
  }

  private def holdsIndexes(agg: ObjectHashAggregateExec, mode: AggregateMode): Boolean =
    agg.aggregateExpressions.nonEmpty &&
      agg.aggregateExpressions.forall(e => e.mode == mode && !e.isDistinct && e.aggregateFunction.isInstanceOf[FileIndexAgg])
}
