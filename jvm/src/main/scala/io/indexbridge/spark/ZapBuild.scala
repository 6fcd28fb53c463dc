package io.indexbridge.spark

import java.nio.file.Paths

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import io.indexbridge.zap.{Analysis, FieldMapping, SegmentWriter}
import org.apache.spark.TaskContext
import org.apache.spark.sql.{DataFrame, Encoders, Row}
import org.apache.spark.sql.functions.col

/** Building zap segments from a DataFrame of documents (the JVM path; Python's
  * `indexbridge.spark.zap_arrow.build_kernel` writes the same files).
  *
  * Each task cuts its partition's rows, in order, into segments of `rowsPerSegment` documents,
  * analyses each row with [[Analysis.analyzeDocument]] (the id column as `_id`, one field per
  * mapping in mapping order, null values absent) and writes segment `n` of partition `p` as
  * `directory/segment-ppppp-nnnnn.zap` through a temporary file. Returns
  * [[ZapSegments.SegmentFileSchema]] rows (path, docs, size, fields).
  */
object ZapBuild {
  def segmentName(partition: Int, n: Int): String = f"segment-$partition%05d-$n%05d.zap"

  def build(docs: DataFrame, directory: String, idCol: String, mappings: Seq[FieldMapping], rowsPerSegment: Int,
            allField: Boolean = true, chunkFactor: Int = SegmentWriter.DefaultChunkFactor): DataFrame = {
    require(rowsPerSegment > 0, s"rowsPerSegment must be positive, got $rowsPerSegment")
    val names = mappings.map(_.name)
    docs.select(col(idCol).cast("string") +: names.map(col): _*).mapPartitions { rows =>
      val partition = TaskContext.getPartitionId()
      rows.grouped(rowsPerSegment).zipWithIndex.map { case (group, n) =>
        val documents = group.map { row =>
          if (row.isNullAt(0)) throw new IllegalArgumentException(s"a document without an id (column $idCol is null)")
          val values = names.indices.filterNot(i => row.isNullAt(i + 1)).map(i => names(i) -> value(row.get(i + 1)))
          Analysis.analyzeDocument(row.getString(0), values, mappings, allField)
        }.toIndexedSeq
        val path = Paths.get(directory).resolve(segmentName(partition, n))
        SegmentWriter.write(documents, path, chunkFactor)
        TaskFaults.failFirstAttempt("zap-build")
        Row.fromSeq(ZapSegments.describe(path))
      }
    }(Encoders.row(ZapSegments.SegmentFileSchema))
  }

  /** Spark's external values as the analyzer takes them (timestamps as instants). */
  private def value(v: Any): Any = v match {
    case t: java.sql.Timestamp => t.toInstant
    case s: scala.collection.Seq[_] => s.map(value).toSeq
    case other => other
  }

  /** For callers across py4j: the mappings as a JSON array of objects with the Python
    * `FieldMapping` fields (name, type, analyzer, index, store, term_vectors (null = the type's
    * default), doc_values, include_in_all). */
  def build(docs: DataFrame, directory: String, idCol: String, mappingsJson: String, rowsPerSegment: Int,
            allField: Boolean, chunkFactor: Int): DataFrame =
    build(docs, directory, idCol, parseMappings(mappingsJson), rowsPerSegment, allField, chunkFactor)

  def parseMappings(json: String): Seq[FieldMapping] = {
    def bool(m: JsonNode, key: String): Boolean = m.get(key).asBoolean()
    new ObjectMapper().readTree(json).elements().asScala.map { m =>
      val tv = m.get("term_vectors")
      FieldMapping(m.get("name").asText(), m.get("type").asText(), m.get("analyzer").asText(), bool(m, "index"),
        bool(m, "store"), if (tv == null || tv.isNull) None else Some(tv.asBoolean()), bool(m, "doc_values"),
        bool(m, "include_in_all"))
    }.toSeq
  }
}
