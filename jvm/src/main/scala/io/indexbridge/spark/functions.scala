package io.indexbridge.spark

import org.apache.spark.sql.Column
import org.apache.spark.sql.functions.{call_function, lit}

/** The Column API over the `ib_` SQL functions (the session needs [[IndexBridgeExtensions]]). */
object functions {
  def dvAgg(position: Column, bitmap64: Boolean = false): Column = call_function("ib_dv_agg", position, lit(bitmap64))
  def dvCardinality(dv: Column): Column = call_function("ib_dv_cardinality", dv)
  def dvContains(dv: Column, position: Column): Column = call_function("ib_dv_contains", dv, position)
  def dvPositions(dv: Column): Column = call_function("ib_dv_positions", dv)
  def keyHash(columns: Column*): Column = call_function("ib_key_hash", columns: _*)
}
