package org.apache.spark.sql.indexbridge

import io.indexbridge.paimon.{BinaryRowBuilder, KeyType}
import io.indexbridge.paimon.table.BinaryRowWriter
import org.apache.spark.sql.Column
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.classic.ExpressionUtils
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/** Columns the Paimon write jobs build from expressions (no `ib_` SQL registration needed). */
object PaimonWriteExpressions {

  /** `ib_dv_agg(position, bitmap64)` as an aggregate Column. */
  def dvAgg(position: Column, bitmap64: Boolean): Column =
    ExpressionUtils.column(DvAgg(ExpressionUtils.expression(position), bitmap64).toAggregateExpression())

  /** Paimon's key hash (`BinaryRow.hashCode()`) of columns written as Paimon `types`. */
  def keyHash(columns: Seq[Column], types: Seq[KeyType]): Column =
    ExpressionUtils.column(PaimonBinaryRow(columns.map(ExpressionUtils.expression), types, serialized = false))

  /** A partition as the serialized BinaryRow manifests hold (`i32 BE arity` + row) of columns
    * written as Paimon `types`. */
  def binaryRow(columns: Seq[Column], types: Seq[KeyType]): Column =
    if (columns.isEmpty) org.apache.spark.sql.functions.lit(io.indexbridge.paimon.table.ManifestFiles.serialize(Nil, Nil))
    else ExpressionUtils.column(PaimonBinaryRow(columns.map(ExpressionUtils.expression), types, serialized = true))

  /** Writes each child's value of `input` into `row` as the Paimon type `types` gives it. */
  private[indexbridge] def fill(row: BinaryRowBuilder, children: Seq[Expression], types: Seq[KeyType], input: InternalRow): Unit = {
    row.reset()
    var i = 0
    while (i < children.length) {
      val c = children(i)
      c.eval(input) match {
        case s: UTF8String => row.writeString(i, s.getBytes)
        case v             => BinaryRowWriter.set(row, i, internal(c.dataType, types(i), v), types(i))
      }
      i += 1
    }
  }

  /** A Spark internal value of Spark type `t` as the table layer's internal value of Paimon type `k`
    * ([[io.indexbridge.paimon.BinaryRow]]'s conventions; timestamps cut to the type's precision). */
  def internal(t: DataType, k: KeyType, v: Any): Any = if (v == null) null else (t, k) match {
    case (_: StringType, _)                    => v.asInstanceOf[UTF8String].toString
    case (d: DecimalType, _)                   => v.asInstanceOf[Decimal].toJavaBigDecimal.setScale(d.scale)
    case (TimestampType | TimestampNTZType, KeyType.TimestampType(p))          => timestamp(v.asInstanceOf[Long], p)
    case (TimestampType | TimestampNTZType, KeyType.LocalZonedTimestampType(p)) => timestamp(v.asInstanceOf[Long], p)
    case _                                     => v
  }

  /** Epoch microseconds as (millis, nano-of-millisecond), truncated to `precision` digits. */
  def timestamp(micros: Long, precision: Int): (Long, Int) = {
    val unit = if (precision >= 6) 1L else math.pow(10, 6 - precision).toLong
    val cut = Math.floorDiv(micros, unit) * unit
    (Math.floorDiv(cut, 1000L), Math.floorMod(cut, 1000L).toInt * 1000)
  }
}

/** Columns written as a Paimon `BinaryRow` of `types`: its hash (`BinaryRow.hashCode()`, the key
  * hash of dynamic buckets) or, with `serialized`, its bytes as manifests hold them (`i32 BE arity`
  * + the row). */
case class PaimonBinaryRow(children: Seq[Expression], types: Seq[KeyType], serialized: Boolean) extends Expression with CodegenFallback {
  override def dataType: DataType = if (serialized) BinaryType else IntegerType
  override def nullable: Boolean = false
  override def prettyName: String = if (serialized) "ib_paimon_binary_row" else "ib_paimon_key_hash"

  @transient private lazy val row = new BinaryRowBuilder(children.length)

  override def eval(input: InternalRow): Any = {
    PaimonWriteExpressions.fill(row, children, types, input)
    if (!serialized) row.hashCode
    else {
      val out = new Array[Byte](4 + row.length)
      java.nio.ByteBuffer.wrap(out).putInt(children.length).put(row.bytes)
      out
    }
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): PaimonBinaryRow = copy(children = newChildren)
}
