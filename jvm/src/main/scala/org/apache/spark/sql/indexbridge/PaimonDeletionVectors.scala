package org.apache.spark.sql.indexbridge

import java.nio.file.Paths

import io.indexbridge.paimon.DeletionVector
import io.indexbridge.paimon.table.DeletionFile
import org.apache.spark.sql.Column
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BinaryExpression, Expression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.classic.ExpressionUtils
import org.apache.spark.sql.types.{BooleanType, DataType}
import org.apache.spark.unsafe.types.UTF8String

/** Where the deletion vector of a data file of `rowCount` rows sits: a range of a
  * deletion-vector index file. */
final case class DeletionVectorRef(indexFile: String, offset: Int, length: Int, cardinality: Long, rowCount: Long)

/** The deletion vectors of a read, loaded lazily on the executor: the vector of the file a row
  * comes from is decoded when the file changes (rows arrive file by file), each index file read
  * once per task while consecutive files share it. */
final class LiveRows(vectors: Map[String, DeletionVectorRef]) extends Serializable {
  @transient private var lastFile: UTF8String = _
  @transient private var lastVector: DeletionVector = _
  @transient private var lastIndexFile: String = _
  @transient private var lastIndexBytes: Array[Byte] = _

  /** False when the deletion vector of `file` deletes `position`. */
  def isLive(file: UTF8String, position: Long): Boolean = {
    if (lastFile == null || !lastFile.equals(file)) {
      val name = file.toString
      lastVector = vectors.get(name).map { ref =>
        if (ref.indexFile != lastIndexFile) {
          lastIndexBytes = DeletionFile.readIndexFile(ref.indexFile)
          lastIndexFile = ref.indexFile
        }
        DeletionFile(Paths.get(ref.indexFile), ref.offset, ref.length, ref.cardinality).load(name, ref.rowCount, lastIndexBytes)
      }.orNull
      lastFile = file.clone()
    }
    lastVector == null || !lastVector.isDeleted(position)
  }
}

/** A row of a Paimon data file is live: its position (`_metadata.row_index`) is not in the
  * deletion vector of its file (`_metadata.file_name`), Paimon's `ApplyDeletionVectorReader`.
  * The map from data file names to vector ranges is small and travels with the plan; the vectors
  * themselves are read on the executors. */
case class PaimonRowLive(fileName: Expression, rowIndex: Expression, vectors: Map[String, DeletionVectorRef])
    extends BinaryExpression {
  @transient private lazy val rows = new LiveRows(vectors)

  override def left: Expression = fileName
  override def right: Expression = rowIndex
  override def dataType: DataType = BooleanType
  override def nullable: Boolean = false
  override def prettyName: String = "ib_paimon_row_live"
  override def toString: String = s"$prettyName($fileName, $rowIndex, ${vectors.size} deletion vectors)"
  override def sql: String = s"$prettyName(${fileName.sql}, ${rowIndex.sql})"

  override def eval(input: InternalRow): Any =
    rows.isLive(fileName.eval(input).asInstanceOf[UTF8String], rowIndex.eval(input).asInstanceOf[Long])

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val live = ctx.addReferenceObj("liveRows", new LiveRows(vectors), classOf[LiveRows].getName)
    val file = fileName.genCode(ctx)
    val position = rowIndex.genCode(ctx)
    ev.copy(code = code"""
      ${file.code}
      ${position.code}
      boolean ${ev.value} = $live.isLive(${file.value}, ${position.value});""", isNull = FalseLiteral)
  }

  override protected def withNewChildrenInternal(newLeft: Expression, newRight: Expression): PaimonRowLive =
    copy(fileName = newLeft, rowIndex = newRight)
}

object PaimonRowLive {

  /** The filter over a file scan's `_metadata.file_name` and `_metadata.row_index`. */
  def column(fileName: Column, rowIndex: Column, vectors: Map[String, DeletionVectorRef]): Column =
    ExpressionUtils.column(PaimonRowLive(ExpressionUtils.expression(fileName), ExpressionUtils.expression(rowIndex), vectors))
}
