package io.indexbridge.spark

import org.apache.spark.sql.Column
import org.apache.spark.sql.functions.{call_function, lit, map}

/** The Column API over the `ib_` SQL functions (the session needs [[IndexBridgeExtensions]]). */
object functions {
  def dvAgg(position: Column, bitmap64: Boolean = false): Column = call_function("ib_dv_agg", position, lit(bitmap64))
  def dvCardinality(dv: Column): Column = call_function("ib_dv_cardinality", dv)
  def dvContains(dv: Column, position: Column): Column = call_function("ib_dv_contains", dv, position)
  def dvPositions(dv: Column): Column = call_function("ib_dv_positions", dv)
  def keyHash(columns: Column*): Column = call_function("ib_key_hash", columns: _*)

  /** A `map<string, string>` of options in the given order. */
  private def options(kvs: Seq[(String, String)]): Column = map(kvs.flatMap { case (k, v) => Seq(lit(k), lit(v)) }: _*)
  private def withOptions(name: String, args: Seq[Column], kvs: Seq[(String, String)]): Column =
    call_function(name, (if (kvs.isEmpty) args else args :+ options(kvs)): _*)

  /** Paimon's bloom-filter index payload of a data file's values (options `items`, `fpp`). */
  def bloomFilterAgg(value: Column, options: Seq[(String, String)] = Nil): Column =
    withOptions("ib_bloom_filter_agg", Seq(value), options)
  /** Paimon's bitmap index payload of a data file's (position, value) rows (options `version`, `index-block-size`). */
  def bitmapIndexAgg(position: Column, value: Column, options: Seq[(String, String)] = Nil): Column =
    withOptions("ib_bitmap_index_agg", Seq(position, value), options)
  /** Paimon's bit-slice index payload of a data file's (position, value) rows. */
  def bsiAgg(position: Column, value: Column): Column = call_function("ib_bsi_agg", position, value)
  /** Paimon's range-bitmap index payload of a data file's (position, value) rows (option `chunk-size`). */
  def rangeBitmapAgg(position: Column, value: Column, options: Seq[(String, String)] = Nil): Column =
    withOptions("ib_range_bitmap_agg", Seq(position, value), options)
  /** Paimon's file index container of a data file's (position, struct of columns) rows, from the
    * table's `file-index.*` options (in the order Paimon is handed them). */
  def fileIndexAgg(position: Column, columns: Column, tableOptions: Seq[(String, String)]): Column =
    call_function("ib_file_index_agg", position, columns, options(tableOptions))
  /** Whether a candidate row set (null: every row) holds the position. */
  def rowSetContains(rows: Column, position: Column): Column = call_function("ib_row_set_contains", rows, position)
}
