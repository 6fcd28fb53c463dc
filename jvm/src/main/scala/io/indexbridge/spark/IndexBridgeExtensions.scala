package io.indexbridge.spark

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.indexbridge.{BucketKeyHash, DvAgg, DvCardinality, DvContains, DvPositions, FileIndexAgg,
  IndexBridgeAggregationStrategy, RowSetContains, SparkFileIndexTypes}
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo, Literal}
import org.apache.spark.sql.types.BooleanType

/** Registers the `ib_` SQL functions and the planner strategy ([[IndexBridgeAggregationStrategy]])
  * that bounds the memory of `ib_dv_agg` ([[org.apache.spark.sql.indexbridge.BoundedDvAggregation]]) and of the file-index
  * aggregates ([[org.apache.spark.sql.indexbridge.SortedFileIndexAggregation]]): set `spark.sql.extensions=io.indexbridge.spark.IndexBridgeExtensions`
  * (Python's `indexbridge.spark.configure` does it). */
class IndexBridgeExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    IndexBridgeExtensions.functions.foreach { case (name, usage, builder) =>
      val info = new ExpressionInfo(classOf[IndexBridgeExtensions].getName, null, name, usage, "", "", "", "", "", "", "")
      extensions.injectFunction((FunctionIdentifier(name), info, builder))
    }
    extensions.injectPlannerStrategy(IndexBridgeAggregationStrategy(_))
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

  private def indexOptions(name: String, args: Seq[Expression], at: Int): Map[String, String] =
    if (args.length > at) SparkFileIndexTypes.options(name, args(at)).toMap else Map.empty

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
      args => BucketKeyHash(args)),
    ("ib_bloom_filter_agg", "_FUNC_(value [, options]) - Paimon bloom-filter index payload of a data file's values (options map: items, fpp)",
      args => {
        arity("ib_bloom_filter_agg", args, 1, 2)
        FileIndexAgg.bloomFilter(args.head, indexOptions("ib_bloom_filter_agg", args, 1)).toAggregateExpression()
      }),
    ("ib_bitmap_index_agg", "_FUNC_(position, value [, options]) - Paimon bitmap index payload of a data file's rows (options map: version, index-block-size)",
      args => {
        arity("ib_bitmap_index_agg", args, 2, 3)
        FileIndexAgg.bitmap(args(0), args(1), indexOptions("ib_bitmap_index_agg", args, 2)).toAggregateExpression()
      }),
    ("ib_bsi_agg", "_FUNC_(position, value) - Paimon bit-slice index payload of a data file's rows",
      args => { arity("ib_bsi_agg", args, 2); FileIndexAgg.bsi(args(0), args(1)).toAggregateExpression() }),
    ("ib_range_bitmap_agg", "_FUNC_(position, value [, options]) - Paimon range-bitmap index payload of a data file's rows (options map: chunk-size)",
      args => {
        arity("ib_range_bitmap_agg", args, 2, 3)
        FileIndexAgg.rangeBitmap(args(0), args(1), indexOptions("ib_range_bitmap_agg", args, 2)).toAggregateExpression()
      }),
    ("ib_file_index_agg", "_FUNC_(position, struct(columns...), options) - Paimon file index container of a data file's rows from the table's file-index.* options",
      args => {
        arity("ib_file_index_agg", args, 3)
        FileIndexAgg.container(args(0), args(1), SparkFileIndexTypes.options("ib_file_index_agg", args(2))).toAggregateExpression()
      }),
    ("ib_row_set_contains", "_FUNC_(rows, position) - whether a candidate row set (null: every row) holds the position",
      args => { arity("ib_row_set_contains", args, 2); RowSetContains(args(0), args(1)) })
  )
}
