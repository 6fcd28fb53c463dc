// Spark's expression API (AbstractDataType, ExpectsInputTypes, ...) is private[sql], so the
// expressions live under org.apache.spark.sql, as Delta's and Sedona's do.
package org.apache.spark.sql.indexbridge

import io.indexbridge.paimon.DeletionVector
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BinaryExpression, Expression, ExpectsInputTypes, Generator, ImplicitCastInputTypes, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.catalyst.trees.UnaryLike
import org.apache.spark.sql.types._

/** `ib_dv_agg(position [, bitmap64])`: the serialized Paimon deletion vector (the whole frame, as
  * `DeletionVector.serializeToBytes` writes it) of the non-null positions of each group. The
  * aggregation buffer is a [[DvAggBuffer]] (the mutable [[DeletionVector]] and the positions not
  * yet added to it); partial buffers travel as DV frames. */
case class DvAgg(
    child: Expression,
    bitmap64: Boolean,
    mutableAggBufferOffset: Int = 0,
    inputAggBufferOffset: Int = 0)
    extends TypedImperativeAggregate[DvAggBuffer]
    with ImplicitCastInputTypes
    with UnaryLike[Expression] {

  override def inputTypes: Seq[AbstractDataType] = Seq(LongType)
  override def dataType: DataType = BinaryType
  override def nullable: Boolean = false
  override def prettyName: String = "ib_dv_agg"

  override def createAggregationBuffer(): DvAggBuffer = new DvAggBuffer(DeletionVector.empty(bitmap64))

  override def update(buffer: DvAggBuffer, input: InternalRow): DvAggBuffer = {
    val position = child.eval(input)
    if (position != null) buffer.delete(position.asInstanceOf[Long])
    buffer
  }

  override def merge(buffer: DvAggBuffer, input: DvAggBuffer): DvAggBuffer = {
    buffer.merge(input)
    buffer
  }

  override def eval(buffer: DvAggBuffer): Any = buffer.serialize()
  override def serialize(buffer: DvAggBuffer): Array[Byte] = buffer.serialize()
  override def deserialize(bytes: Array[Byte]): DvAggBuffer =
    new DvAggBuffer(DeletionVector.deserialize(bytes, source = "<ib_dv_agg buffer>", verifyCrc = false))

  override def withNewMutableAggBufferOffset(offset: Int): DvAgg = copy(mutableAggBufferOffset = offset)
  override def withNewInputAggBufferOffset(offset: Int): DvAgg = copy(inputAggBufferOffset = offset)
  override protected def withNewChildInternal(newChild: Expression): DvAgg = copy(child = newChild)
}

/** One group's [[DvAgg]] state: the DV and up to [[DvAggBuffer.MaxPending]] positions not yet
  * added to it. A task's groups interleave row by row, so adding each position straight to its
  * RoaringBitmap chased ~8 dependent pointers into a different group's containers every row (a
  * cache miss each: 36% of the aggregate's samples in JFR over 1000 files); appending to a
  * small array and adding a batch with `addN` touches one group's containers once per batch.
  * The array starts at 8 and doubles up to MaxPending (64), so a group costs at most 512 bytes
  * more than its DV: over 1000 files (`bench dv`, 20M positions), 64 took 1000-1015 ms where
  * 128 took 1026-1070, 32 1055-1083 and 1024 1307 (the arrays of a task's groups stop fitting
  * in the core's cache).
  *
  * Inside a [[BoundedPartialAggregateExec]] chunk, the buffer keeps what it holds added to the
  * chunk's [[HeldBytes]]: [[GroupBytes]], the pending array and the DV's bitmaps, updated when
  * created, when the array grows and after each flush. */
final class DvAggBuffer(dv: DeletionVector) {
  import DvAggBuffer._

  // a 32-bit DV's pending positions as ints, narrowed as they are checked (adding them is then
  // one addN; a flush that narrowed a long array, into an int array it allocated, was a quarter
  // of the aggregate's samples), a 64-bit DV's as longs
  private val narrow = !dv.bitmap64
  private val maxPosition = if (narrow) DeletionVector.MaxPosition32 else DeletionVector.MaxPosition64
  private var pending = if (narrow) null else new Array[Long](InitialPending)
  private var pendingLows = if (narrow) new Array[Int](InitialPending) else null
  private var capacity = InitialPending
  private var count = 0
  private val held = HeldBytes.current.get
  private var accounted = 0L
  if (held != null) held.groups += 1
  account()

  private def account(): Unit = if (held != null) {
    val bytes = GroupBytes + (if (narrow) 4L else 8L) * capacity + dv.heapBytes
    held.bytes += bytes - accounted
    accounted = bytes
  }

  def delete(position: Long): Unit = {
    // fail on the row that carries it, not at the next flush; without reading the DV (another
    // object per row, a cache miss each: 10% of the samples over positions in no order)
    if (position < 0 || position > maxPosition) dv.checkPosition(position)
    if (count == capacity) {
      if (count < MaxPending) {
        capacity = count * 2
        if (narrow) pendingLows = java.util.Arrays.copyOf(pendingLows, capacity) else pending = java.util.Arrays.copyOf(pending, capacity)
        account()
      } else flush()
    }
    if (narrow) pendingLows(count) = position.toInt else pending(count) = position
    count += 1
  }

  def merge(other: DvAggBuffer): Unit = dv.merge(other.flushed)

  def serialize(): Array[Byte] = flushed.serialize()

  private def flushed: DeletionVector = {
    flush()
    dv
  }

  private def flush(): Unit = if (count > 0) {
    if (narrow) dv.deleteAll32(pendingLows, count) else dv.deleteAll(pending, count)
    count = 0
    account()
  }
}

object DvAggBuffer {
  private val InitialPending = 8
  private val MaxPending = 64

  /** A group's objects besides its pending array and bitmaps: the hash map's entry, key and
    * buffer row, this buffer, the DV and its arrays (an estimate from their layouts). */
  private val GroupBytes = 512L
}

/** Decodes a binary column once per distinct value in a row stream: consecutive rows usually
  * carry the same value (a DV or a row set per data file), so the last decoded one is kept. */
private[indexbridge] final class LastDecoded[T <: AnyRef](decode: Array[Byte] => T) extends Serializable {
  @transient private var lastBytes: Array[Byte] = _
  @transient private var last: T = _

  def apply(bytes: Array[Byte]): T = {
    if (lastBytes == null || !java.util.Arrays.equals(lastBytes, bytes)) {
      last = decode(bytes)
      lastBytes = bytes
    }
    last
  }
}

private[indexbridge] object LastDecoded {
  def deletionVector: LastDecoded[DeletionVector] =
    new LastDecoded(DeletionVector.deserialize(_, source = "<deletion vector column>"))
}

/** `ib_dv_cardinality(dv)`: the number of deleted positions of a serialized DV. */
case class DvCardinality(child: Expression) extends UnaryExpression with ExpectsInputTypes with CodegenFallback {
  private val decode = LastDecoded.deletionVector
  override def inputTypes: Seq[AbstractDataType] = Seq(BinaryType)
  override def dataType: DataType = LongType
  override def prettyName: String = "ib_dv_cardinality"
  override protected def nullSafeEval(dv: Any): Any = decode(dv.asInstanceOf[Array[Byte]]).cardinality
  override protected def withNewChildInternal(newChild: Expression): DvCardinality = copy(child = newChild)
}

/** `ib_dv_contains(dv, position)`: whether the position is deleted (Paimon's `isDeleted`). */
case class DvContains(left: Expression, right: Expression)
    extends BinaryExpression
    with ImplicitCastInputTypes
    with CodegenFallback {
  private val decode = LastDecoded.deletionVector
  override def inputTypes: Seq[AbstractDataType] = Seq(BinaryType, LongType)
  override def dataType: DataType = BooleanType
  override def prettyName: String = "ib_dv_contains"
  override protected def nullSafeEval(dv: Any, position: Any): Any =
    decode(dv.asInstanceOf[Array[Byte]]).isDeleted(position.asInstanceOf[Long])
  override protected def withNewChildrenInternal(newLeft: Expression, newRight: Expression): DvContains =
    copy(left = newLeft, right = newRight)
}

/** `ib_dv_positions(dv)`: a generator with one row `pos` per deleted position, ascending. */
case class DvPositions(child: Expression)
    extends Generator
    with ExpectsInputTypes
    with CodegenFallback
    with UnaryLike[Expression] {
  override def inputTypes: Seq[AbstractDataType] = Seq(BinaryType)
  override def elementSchema: StructType = StructType(Seq(StructField("pos", LongType, nullable = false)))
  override def prettyName: String = "ib_dv_positions"

  override def eval(input: InternalRow): IterableOnce[InternalRow] = {
    val dv = child.eval(input)
    if (dv == null) Iterator.empty
    else {
      DeletionVector
        .deserialize(dv.asInstanceOf[Array[Byte]], source = "<ib_dv_positions input>")
        .positions
        .iterator
        .map(p => InternalRow(p))
    }
  }

  override protected def withNewChildInternal(newChild: Expression): DvPositions = copy(child = newChild)
}
