package io.indexbridge.spark

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.indexbridge.{BucketKeyHash, DvAgg, DvCardinality, DvContains, DvPositions}
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo, Literal}
import org.apache.spark.sql.types.BooleanType

/** Registers the `ib_` SQL functions: set `spark.sql.extensions=io.indexbridge.spark.IndexBridgeExtensions`
  * (Python's `indexbridge.spark.configure` does it). */
class IndexBridgeExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit =
    IndexBridgeExtensions.functions.foreach { case (name, usage, builder) =>
      val info = new ExpressionInfo(classOf[IndexBridgeExtensions].getName, null, name, usage, "", "", "", "", "", "", "")
      extensions.injectFunction((FunctionIdentifier(name), info, builder))
    }
}

object IndexBridgeExtensions {
  private type Builder = Seq[Expression] => Expression

  private def arity(name: String, args: Seq[Expression], allowed: Int*): Unit =
    if (!allowed.contains(args.length))
      throw new IllegalArgumentException(s"$name takes ${allowed.mkString(" or ")} arguments, got ${args.length}")

  private def booleanLiteral(name: String, e: Expression): Boolean = e match {
    case Literal(b: Boolean, BooleanType) => b
    case other => throw new IllegalArgumentException(s"$name: bitmap64 must be a boolean literal, got ${other.sql}")
  }

  val functions: Seq[(String, String, Builder)] = Seq(
    ("ib_dv_agg", "_FUNC_(position [, bitmap64]) - Paimon deletion vector (serialized frame) of the positions of each group",
      args => {
        arity("ib_dv_agg", args, 1, 2)
        DvAgg(args.head, bitmap64 = args.length == 2 && booleanLiteral("ib_dv_agg", args(1))).toAggregateExpression()
      }),
    ("ib_dv_cardinality", "_FUNC_(dv) - number of deleted positions of a serialized deletion vector",
      args => { arity("ib_dv_cardinality", args, 1); DvCardinality(args.head) }),
    ("ib_dv_contains", "_FUNC_(dv, position) - whether position is deleted in the serialized deletion vector",
      args => { arity("ib_dv_contains", args, 2); DvContains(args(0), args(1)) }),
    ("ib_dv_positions", "_FUNC_(dv) - generates one row per deleted position, ascending",
      args => { arity("ib_dv_positions", args, 1); DvPositions(args.head) }),
    ("ib_key_hash", "_FUNC_(col, ...) - Paimon's dynamic-bucket key hash (BinaryRow.hashCode) of the columns",
      args => BucketKeyHash(args))
  )
}
