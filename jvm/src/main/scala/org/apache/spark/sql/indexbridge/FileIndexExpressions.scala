// Spark's expression API (AbstractDataType, TypedImperativeAggregate, ...) is private[sql], so the
// expressions live under org.apache.spark.sql, as Delta's and Sedona's do.
package org.apache.spark.sql.indexbridge

import java.nio.ByteBuffer

import scala.collection.mutable.ArrayBuffer

import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.fileindex.{BitSliceIndex, BitmapIndex, BloomFilterIndex, DataField, DataFileIndex, FileIndexContainer, RangeBitmapIndex}
import io.indexbridge.roaring.Roaring32
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{BinaryExpression, Expression, ImplicitCastInputTypes, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.catalyst.trees.BinaryLike
import org.apache.spark.sql.catalyst.util.MapData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.roaringbitmap.RoaringBitmap

/** Spark types as the Paimon types Paimon's Spark connector maps them to (`SparkTypeUtils`), and
  * Spark internal values as [[io.indexbridge.paimon.fileindex.IndexValue]] takes them.
  *
  * {{{
  * Spark                      Paimon                     value handed to the codecs
  * BOOLEAN TINYINT SMALLINT   BOOLEAN TINYINT SMALLINT   Boolean Byte Short
  * INT BIGINT FLOAT DOUBLE    INT BIGINT FLOAT DOUBLE    Int Long Float Double
  * DATE                       DATE                       days (Int)
  * TIMESTAMP / TIMESTAMP_NTZ  TIMESTAMP_LTZ(6) / TIMESTAMP(6)   (millis, nano-of-millisecond) from micros
  * DECIMAL(p, s)              DECIMAL(p, s)              java.math.BigDecimal
  * STRING / BINARY            STRING / BYTES             UTF-8 bytes / bytes
  * MAP<STRING, T>             MAP<STRING, T>             Map[String, value of T] (an indexable field only)
  * }}}
  */
object SparkFileIndexTypes {

  /** The Paimon type of an indexable Spark column type, or None. */
  def keyType(t: DataType): Option[KeyType] = t match {
    case BooleanType         => Some(KeyType.BooleanType)
    case ByteType            => Some(KeyType.TinyIntType)
    case ShortType           => Some(KeyType.SmallIntType)
    case IntegerType         => Some(KeyType.IntType)
    case LongType            => Some(KeyType.BigIntType)
    case FloatType           => Some(KeyType.FloatType)
    case DoubleType          => Some(KeyType.DoubleType)
    case DateType            => Some(KeyType.DateType)
    case TimestampType       => Some(KeyType.LocalZonedTimestampType(6))
    case TimestampNTZType    => Some(KeyType.TimestampType(6))
    case d: DecimalType      => Some(KeyType.DecimalType(d.precision, d.scale))
    case _: StringType       => Some(KeyType.VarCharType(Int.MaxValue))
    case BinaryType          => Some(KeyType.VarBinaryType(Int.MaxValue))
    case _                   => None
  }

  /** The field of a Spark column (a plain indexable type or a map from strings to one), or None. */
  def field(f: StructField): Option[DataField] = f.dataType match {
    case MapType(_: StringType, v, _) => keyType(v).map(DataField(f.name, _, isMap = true))
    case t                            => keyType(t).map(DataField(f.name, _))
  }

  /** A non-null Spark internal value of type `t` as the codecs take it. */
  def value(t: DataType, v: Any): Any = t match {
    case _: StringType                 => v.asInstanceOf[UTF8String].getBytes
    case d: DecimalType                => v.asInstanceOf[Decimal].toJavaBigDecimal.setScale(d.scale)
    case TimestampType | TimestampNTZType =>
      val micros = v.asInstanceOf[Long]
      (Math.floorDiv(micros, 1000L), Math.floorMod(micros, 1000L).toInt * 1000)
    case MapType(_, valueType, _) =>
      val m = v.asInstanceOf[MapData]
      val keys = m.keyArray()
      val values = m.valueArray()
      (0 until m.numElements()).map { i =>
        keys.getUTF8String(i).toString -> (if (values.isNullAt(i)) null else value(valueType, values.get(i, valueType)))
      }.toMap
    case _ => v
  }

  /** `file-index.*` options given as a foldable `map<string, string>`, in the map's order. */
  def options(name: String, e: Expression): Seq[(String, String)] = {
    if (!e.foldable) throw new IllegalArgumentException(s"$name: options must be a constant map<string, string>, got ${e.sql}")
    e.dataType match {
      case MapType(_: StringType, _: StringType, _) =>
        val m = e.eval().asInstanceOf[MapData]
        if (m == null) Nil
        else (0 until m.numElements()).map(i => m.keyArray().getUTF8String(i).toString -> String.valueOf(m.valueArray().getUTF8String(i)))
      case other => throw new IllegalArgumentException(s"$name: options must be a map<string, string>, got ${other.simpleString}")
    }
  }
}

/** What an [[FileIndexAgg]] builds from one data file's values in row order. */
sealed trait FileIndexTarget {
  def name: String
  def accepts(t: DataType): Boolean
  /** Whether row order matters (everything but the bloom filter, whose bits are a set). */
  def ordered: Boolean = true
  def build(t: DataType, values: IndexedSeq[Any]): Array[Byte]
}

object FileIndexTarget {

  /** One index type over one column, with that index's own options (`items`, `fpp`, `version`,
    * `index-block-size`, `chunk-size`). */
  final case class Single(name: String, indexType: String, options: Map[String, String]) extends FileIndexTarget {
    def accepts(t: DataType): Boolean =
      SparkFileIndexTypes.keyType(t).exists(k => indexType != RangeBitmapIndex.Identifier || RangeBitmapIndex.supports(k))
    override def ordered: Boolean = indexType != BloomFilterIndex.Identifier
    def build(t: DataType, values: IndexedSeq[Any]): Array[Byte] = {
      val w = FileIndexContainer.writer(indexType, SparkFileIndexTypes.keyType(t).get, options)
      values.foreach(v => w.write(if (v == null) null else SparkFileIndexTypes.value(t, v)))
      w.serialize()
    }
  }

  /** The whole container (`DataFileIndexWriter`) over the fields of a struct, from the table's
    * `file-index.*` options in the order Paimon was given them. */
  final case class Container(name: String, tableOptions: Seq[(String, String)]) extends FileIndexTarget {
    def accepts(t: DataType): Boolean = t match {
      case s: StructType => s.fields.forall(f => SparkFileIndexTypes.field(f).isDefined)
      case _             => false
    }
    def build(t: DataType, values: IndexedSeq[Any]): Array[Byte] = {
      val struct = t.asInstanceOf[StructType]
      val fields = struct.fields.toSeq.flatMap(SparkFileIndexTypes.field)
      val columns = (name: String) => {
        val i = struct.fieldIndex(name)
        val ft = struct.fields(i).dataType
        values.view.map { row =>
          val r = row.asInstanceOf[InternalRow]
          if (r == null || r.isNullAt(i)) null else SparkFileIndexTypes.value(ft, r.get(i, ft))
        }
      }
      DataFileIndex.write(tableOptions, fields, columns, values.length)
    }
  }
}

/** The aggregation buffer: one (position, value) `UnsafeRow` per input row; partial buffers
  * travel as `[i32 length, row bytes]*`. */
final class PositionedValues(val rows: ArrayBuffer[UnsafeRow])

/** `ib_bloom_filter_agg`, `ib_bitmap_index_agg`, `ib_bsi_agg`, `ib_range_bitmap_agg`, `ib_file_index_agg`: the payload of
  * one index (or the whole container) of a data file, from its rows in any order. Rows are
  * buffered with their position and ordered by it when the group is done: the index's row ids
  * are the positions, which must be exactly 0 .. n-1 (every row of the data file once). */
case class FileIndexAgg(
    position: Expression,
    child: Expression,
    target: FileIndexTarget,
    mutableAggBufferOffset: Int = 0,
    inputAggBufferOffset: Int = 0)
    extends TypedImperativeAggregate[PositionedValues]
    with BinaryLike[Expression] {

  override def left: Expression = position
  override def right: Expression = child
  override def dataType: DataType = BinaryType
  override def nullable: Boolean = false
  override def prettyName: String = target.name

  override def checkInputDataTypes(): TypeCheckResult =
    if (!Seq(ByteType, ShortType, IntegerType, LongType).contains(position.dataType))
      TypeCheckResult.TypeCheckFailure(s"${target.name}: the position must be integral, got ${position.dataType.simpleString}")
    else if (!target.accepts(child.dataType))
      TypeCheckResult.TypeCheckFailure(
        s"${target.name} cannot index ${child.dataType.simpleString}: the values must be boolean, integral, float, " +
          "double, decimal, date, timestamp, string or binary (a struct of such columns and map<string, ...> for the container)")
    else TypeCheckResult.TypeCheckSuccess

  @transient private lazy val project = UnsafeProjection.create(Array[DataType](LongType, child.dataType))
  @transient private lazy val input = new org.apache.spark.sql.catalyst.expressions.GenericInternalRow(2)

  override def createAggregationBuffer(): PositionedValues = new PositionedValues(ArrayBuffer.empty)

  override def update(buffer: PositionedValues, row: InternalRow): PositionedValues = {
    val pos = position.eval(row)
    if (pos == null) throw new IllegalArgumentException(s"${target.name}: a row without position")
    input.update(0, pos.asInstanceOf[Number].longValue)
    input.update(1, child.eval(row))
    buffer.rows += project(input).copy()
    buffer
  }

  override def merge(buffer: PositionedValues, other: PositionedValues): PositionedValues = {
    buffer.rows ++= other.rows
    buffer
  }

  override def eval(buffer: PositionedValues): Any = {
    val rows = if (target.ordered) buffer.rows.sortBy(_.getLong(0)) else buffer.rows
    if (target.ordered)
      rows.iterator.zipWithIndex.find { case (r, i) => r.getLong(0) != i }.foreach { case (r, i) =>
        throw new IllegalArgumentException(
          s"${target.name}: positions must be 0 .. n-1, each once (every row of the data file); " +
            s"found ${r.getLong(0)} where $i was expected")
      }
    val t = child.dataType
    target.build(t, rows.map(r => if (r.isNullAt(1)) null else r.get(1, t)).toIndexedSeq)
  }

  override def serialize(buffer: PositionedValues): Array[Byte] = {
    val out = ByteBuffer.allocate(buffer.rows.iterator.map(4 + _.getSizeInBytes).sum)
    buffer.rows.foreach { r => out.putInt(r.getSizeInBytes); out.put(r.getBytes) }
    out.array()
  }

  override def deserialize(bytes: Array[Byte]): PositionedValues = {
    val rows = ArrayBuffer.empty[UnsafeRow]
    val in = ByteBuffer.wrap(bytes)
    while (in.hasRemaining) {
      val n = in.getInt
      val row = new UnsafeRow(2)
      row.pointTo(java.util.Arrays.copyOfRange(bytes, in.position(), in.position() + n), n)
      in.position(in.position() + n)
      rows += row
    }
    new PositionedValues(rows)
  }

  override def withNewMutableAggBufferOffset(offset: Int): FileIndexAgg = copy(mutableAggBufferOffset = offset)
  override def withNewInputAggBufferOffset(offset: Int): FileIndexAgg = copy(inputAggBufferOffset = offset)
  override protected def withNewChildrenInternal(newLeft: Expression, newRight: Expression): FileIndexAgg =
    copy(position = newLeft, child = newRight)
}

object FileIndexAgg {
  def bloomFilter(value: Expression, options: Map[String, String]): FileIndexAgg =
    FileIndexAgg(org.apache.spark.sql.catalyst.expressions.Literal(0L), value,
      FileIndexTarget.Single("ib_bloom_filter_agg", BloomFilterIndex.Identifier, options))
  def bitmap(position: Expression, value: Expression, options: Map[String, String]): FileIndexAgg =
    FileIndexAgg(position, value, FileIndexTarget.Single("ib_bitmap_index_agg", BitmapIndex.Identifier, options))
  def bsi(position: Expression, value: Expression): FileIndexAgg =
    FileIndexAgg(position, value, FileIndexTarget.Single("ib_bsi_agg", BitSliceIndex.Identifier, Map.empty))
  def rangeBitmap(position: Expression, value: Expression, options: Map[String, String]): FileIndexAgg =
    FileIndexAgg(position, value, FileIndexTarget.Single("ib_range_bitmap_agg", RangeBitmapIndex.Identifier, options))
  def container(position: Expression, columns: Expression, tableOptions: Seq[(String, String)]): FileIndexAgg =
    FileIndexAgg(position, columns, FileIndexTarget.Container("ib_file_index_agg", tableOptions))
}

/** `ib_row_set_contains(rows, position)`: whether a candidate row set (the portable roaring
  * bytes `ib_` pruning returns) holds the position; a null set means every row. */
case class RowSetContains(left: Expression, right: Expression)
    extends BinaryExpression
    with ImplicitCastInputTypes
    with CodegenFallback {
  private val decode = new LastDecoded(b => Roaring32.read(io.indexbridge.bytes.ByteReader(b, "<row set column>")))
  override def inputTypes: Seq[AbstractDataType] = Seq(BinaryType, LongType)
  override def dataType: DataType = BooleanType
  override def nullable: Boolean = right.nullable
  override def prettyName: String = "ib_row_set_contains"

  override def eval(input: InternalRow): Any = {
    val pos = right.eval(input)
    if (pos == null) null
    else {
      val rows = left.eval(input)
      val p = pos.asInstanceOf[Long]
      rows == null || (p >= 0 && p <= 0xffffffffL && decode(rows.asInstanceOf[Array[Byte]]).contains(p.toInt))
    }
  }

  override protected def withNewChildrenInternal(newLeft: Expression, newRight: Expression): RowSetContains =
    copy(left = newLeft, right = newRight)
}
