// Spark's expression API (AbstractDataType, ExpectsInputTypes, ...) is private[sql], so the
// expressions live under org.apache.spark.sql, as Delta's and Sedona's do.
package org.apache.spark.sql.indexbridge

import io.indexbridge.paimon.BinaryRowBuilder
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/** `ib_key_hash(col, ...)`: Paimon's dynamic-bucket key hash, `BinaryRow.hashCode()` of the
  * columns written as a Paimon `BinaryRow` (spec §3, App. A.3).
  *
  * Spark types map to the Paimon types Paimon's Spark integration uses: TIMESTAMP is
  * TIMESTAMP_LTZ(6) and TIMESTAMP_NTZ is TIMESTAMP(6) (microseconds split into Paimon's
  * millisecond + nano-of-millisecond), DATE is days, DECIMAL(p,s) is the unscaled value. */
case class BucketKeyHash(children: Seq[Expression]) extends Expression with CodegenFallback {
  override def dataType: DataType = IntegerType
  override def nullable: Boolean = false
  override def prettyName: String = "ib_key_hash"

  override def checkInputDataTypes(): TypeCheckResult = {
    val unsupported = children.map(_.dataType).filterNot(BucketKeyHash.supported)
    if (children.isEmpty) TypeCheckResult.TypeCheckFailure("ib_key_hash needs at least one column")
    else if (unsupported.nonEmpty)
      TypeCheckResult.TypeCheckFailure(
        s"ib_key_hash cannot hash ${unsupported.map(_.simpleString).mkString(", ")}: Paimon key columns are " +
          "boolean, integral, float, double, decimal, date, timestamp, string or binary")
    else TypeCheckResult.TypeCheckSuccess
  }

  @transient private lazy val row = new BinaryRowBuilder(children.length)
  @transient private lazy val types = children.map(_.dataType).toArray

  override def eval(input: InternalRow): Any = {
    row.reset()
    var i = 0
    while (i < types.length) {
      val value = children(i).eval(input)
      if (value == null) row.setNullAt(i)
      else
        types(i) match {
          case BooleanType => row.writeBoolean(i, value.asInstanceOf[Boolean])
          case ByteType => row.writeByte(i, value.asInstanceOf[Byte])
          case ShortType => row.writeShort(i, value.asInstanceOf[Short])
          case IntegerType | DateType => row.writeInt(i, value.asInstanceOf[Int])
          case LongType => row.writeLong(i, value.asInstanceOf[Long])
          case FloatType => row.writeFloat(i, value.asInstanceOf[Float])
          case DoubleType => row.writeDouble(i, value.asInstanceOf[Double])
          case _: StringType => row.writeString(i, value.asInstanceOf[UTF8String].getBytes)
          case BinaryType => row.writeBinary(i, value.asInstanceOf[Array[Byte]])
          case d: DecimalType =>
            row.writeDecimal(i, value.asInstanceOf[Decimal].toJavaBigDecimal.unscaledValue, d.precision)
          case TimestampType | TimestampNTZType =>
            val micros = value.asInstanceOf[Long]
            row.writeTimestamp(i, Math.floorDiv(micros, 1000L), Math.floorMod(micros, 1000L).toInt * 1000, 6)
          case other => throw new IllegalStateException(s"unsupported key type $other")
        }
      i += 1
    }
    row.hashCode
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): BucketKeyHash =
    copy(children = newChildren)
}

object BucketKeyHash {
  def supported(t: DataType): Boolean = t match {
    case BooleanType | ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType | DateType |
        BinaryType | TimestampType | TimestampNTZType =>
      true
    case _: StringType | _: DecimalType => true
    case _ => false
  }
}
