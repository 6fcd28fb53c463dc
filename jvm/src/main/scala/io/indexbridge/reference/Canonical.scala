package io.indexbridge.reference

import java.time.{LocalDate, LocalDateTime, LocalTime, ZoneOffset}
import java.time.format.DateTimeFormatter
import java.util.Base64

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}
import org.apache.paimon.data.{Decimal, InternalArray, InternalMap, InternalRow, Timestamp}
import org.apache.paimon.types._

/** Table rows as JSON, the form `indexbridge paimon read` prints (one object per row, column ->
  * value) and the tests compare, rendered here from Paimon's own `InternalRow`s:
  *
  * {{{
  * BOOLEAN -> true/false        TINYINT .. BIGINT -> number       FLOAT, DOUBLE -> number, or "NaN", "Infinity", "-Infinity"
  * DECIMAL -> "12.30" (plain, scale digits)                        CHAR, VARCHAR -> string
  * BINARY, VARBINARY -> base64  DATE -> "2024-05-01"              TIME -> "12:34:56.789"
  * TIMESTAMP(p) -> "2024-05-01 12:34:56.123456" (6 fraction digits, 9 when p > 6)
  * TIMESTAMP_LTZ(p) -> the same in UTC, followed by "Z"
  * ARRAY -> list   MAP -> object (string keys) or list of [key, value]   MULTISET -> the same, element -> count   ROW -> object
  * }}}
  */
object Canonical {
  private val nodes = JsonNodeFactory.instance
  private val micros = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSS")
  private val nanos = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSSSSS")

  def timestamp(ts: Timestamp, precision: Int = 6): String =
    LocalDateTime.ofEpochSecond(Math.floorDiv(ts.getMillisecond, 1000L),
      (Math.floorMod(ts.getMillisecond, 1000L) * 1000000L + ts.getNanoOfMillisecond).toInt, ZoneOffset.UTC)
      .format(if (precision > 6) nanos else micros)

  private def floating(d: Double): JsonNode =
    if (d.isNaN) nodes.textNode("NaN")
    else if (d.isInfinite) nodes.textNode(if (d > 0) "Infinity" else "-Infinity")
    else nodes.numberNode(d)

  def value(t: DataType, v: Any): JsonNode = if (v == null) nodes.nullNode() else t match {
    case _: BooleanType     => nodes.booleanNode(v.asInstanceOf[Boolean])
    case _: TinyIntType     => nodes.numberNode(v.asInstanceOf[Byte].toInt)
    case _: SmallIntType    => nodes.numberNode(v.asInstanceOf[Short].toInt)
    case _: IntType         => nodes.numberNode(v.asInstanceOf[Int])
    case _: BigIntType      => nodes.numberNode(v.asInstanceOf[Long])
    case _: FloatType       =>
      val f = v.asInstanceOf[Float]
      if (f.isNaN || f.isInfinite) floating(f.toDouble) else nodes.numberNode(f)
    case _: DoubleType      => floating(v.asInstanceOf[Double])
    case _: DecimalType     => nodes.textNode(v.asInstanceOf[Decimal].toBigDecimal.toPlainString)
    case _: CharType | _: VarCharType => nodes.textNode(v.toString)
    case _: BinaryType | _: VarBinaryType => nodes.textNode(Base64.getEncoder.encodeToString(v.asInstanceOf[Array[Byte]]))
    case _: DateType        => nodes.textNode(LocalDate.ofEpochDay(v.asInstanceOf[Int].toLong).toString)
    case _: TimeType        =>
      nodes.textNode(LocalTime.ofNanoOfDay(v.asInstanceOf[Int].toLong * 1000000L).format(DateTimeFormatter.ofPattern("HH:mm:ss.SSS")))
    case t: TimestampType   => nodes.textNode(timestamp(v.asInstanceOf[Timestamp], t.getPrecision))
    case t: LocalZonedTimestampType => nodes.textNode(timestamp(v.asInstanceOf[Timestamp], t.getPrecision) + "Z")
    case a: ArrayType =>
      val array = v.asInstanceOf[InternalArray]
      val getter = InternalArray.createElementGetter(a.getElementType)
      val out = nodes.arrayNode()
      (0 until array.size).foreach(i => out.add(value(a.getElementType, getter.getElementOrNull(array, i))))
      out
    case m: MapType      => map(m.getKeyType, m.getValueType, v.asInstanceOf[InternalMap])
    case m: MultisetType => map(m.getElementType, new IntType(false), v.asInstanceOf[InternalMap]) // element -> count
    case r: RowType => row(r, v.asInstanceOf[InternalRow])
    case other      => throw new IllegalArgumentException(s"no JSON form for $other")
  }

  private def map(keyType: DataType, valueType: DataType, map: InternalMap): JsonNode = {
    val keys = InternalArray.createElementGetter(keyType)
    val values = InternalArray.createElementGetter(valueType)
    val entries = (0 until map.size).map(i => (keys.getElementOrNull(map.keyArray, i), values.getElementOrNull(map.valueArray, i)))
    keyType match {
      case _: CharType | _: VarCharType =>
        val out = nodes.objectNode()
        entries.foreach { case (k, x) => out.set[JsonNode](k.toString, value(valueType, x)) }
        out
      case _ =>
        val out = nodes.arrayNode()
        entries.foreach { case (k, x) => out.addArray().add(value(keyType, k)).add(value(valueType, x)) }
        out
    }
  }

  def row(rowType: RowType, row: InternalRow): ObjectNode = {
    val out = nodes.objectNode()
    rowType.getFields.asScala.zipWithIndex.foreach { case (f, i) =>
      out.set[JsonNode](f.name, value(f.`type`, InternalRow.createFieldGetter(f.`type`, i).getFieldOrNull(row)))
    }
    out
  }
}
