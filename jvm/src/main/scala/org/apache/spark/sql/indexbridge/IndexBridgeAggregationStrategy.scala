package org.apache.spark.sql.indexbridge

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, LogicalPlan}
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}

/** Plans the aggregations that [[BoundedDvAggregation]] and [[SortedFileIndexAggregation]]
  * rewrite, with AQE or without: a planner strategy of [[io.indexbridge.spark.IndexBridgeExtensions]]
  * (Spark tries injected strategies before its own) that plans an Aggregate holding `ib_dv_agg`
  * or a file-index aggregate with Spark's own Aggregation strategy, then applies the two rules
  * to that plan, where the partial and final halves are still child and parent; Spark's
  * EnsureRequirements adds the shuffle between them and the sort a SortAggregate needs.
  *
  * (As post-planner rules they bounded nothing without AQE: Spark applies those only in
  * adaptive execution, and `spark.sql.adaptive.enabled=false` left every task holding all
  * its groups.) Any other plan is left to Spark's strategies. */
final case class IndexBridgeAggregationStrategy(session: SparkSession) extends SparkStrategy {
  private lazy val rules = Seq(BoundedDvAggregation.rule(session), SortedFileIndexAggregation.rule(session))

  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case a: Aggregate if a.aggregateExpressions.exists(_.exists(isOurs)) =>
      session.sessionState.planner.Aggregation(a).map(p => rules.foldLeft(p)((planned, rule) => rule(planned)))
    case _ => Nil
  }

  private def isOurs(e: org.apache.spark.sql.catalyst.expressions.Expression): Boolean = e match {
    case a: AggregateExpression => a.aggregateFunction.isInstanceOf[DvAgg] || a.aggregateFunction.isInstanceOf[FileIndexAgg]
    case _                      => false
  }
}
