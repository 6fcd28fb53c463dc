package io.indexbridge.spark

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths}
import java.security.MessageDigest

import io.indexbridge.paimon.DeletionVector
import io.indexbridge.zap.{Merge, SegmentReader}
import org.apache.spark.sql.{DataFrame, Encoders, Row, SparkSession}
import org.apache.spark.sql.functions.{col, collect_list, struct}
import org.apache.spark.sql.types._
import org.roaringbitmap.RoaringBitmap

/** bleve zap v11 segments as DataFrames (the JVM path; Python's Arrow kernels in
  * `indexbridge.spark.zap_arrow` return the same rows).
  *
  * Segments are named by path: a DataFrame with a string column `path` (one or a few per
  * partition; [[segmentPaths]] makes one from a list), and each task memory-maps its own
  * segments with [[SegmentReader]]. Nothing but paths crosses to the executors.
  * {{{
  * documents(segments)            segment, doc, _id, field, type, value, array_positions   (stored values, _id first)
  * ids(segments)                  segment, doc, _id
  * terms(segments)                segment, field, term, doc_freq
  * postings(segments)             segment, doc, field, term, freq, positions   (positions null without locations)
  * termSearch / prefixSearch      segment, doc, _id   (docs with the term / a term with the prefix in the field)
  * merge(segments, dir, ...)      path, docs, size, fields, sources, new_docs   (one merged segment per group)
  * }}}
  * Terms are the dictionary's bytes (binary); `_id`, field names and types are strings.
  */
object ZapSegments {
  /** A schema of nullable columns (as Spark reads the Python path's Arrow batches). */
  private def schema(columns: (String, DataType)*): StructType =
    StructType(columns.map { case (name, dataType) => StructField(name, dataType) })

  private val Longs = ArrayType(LongType)

  val DocumentSchema: StructType = schema("segment" -> StringType, "doc" -> IntegerType, "_id" -> StringType,
    "field" -> StringType, "type" -> StringType, "value" -> BinaryType, "array_positions" -> Longs)

  val HitSchema: StructType = schema("segment" -> StringType, "doc" -> IntegerType, "_id" -> StringType)

  val TermSchema: StructType = schema("segment" -> StringType, "field" -> StringType, "term" -> BinaryType, "doc_freq" -> LongType)

  val PostingSchema: StructType = schema("segment" -> StringType, "doc" -> IntegerType, "field" -> StringType,
    "term" -> BinaryType, "freq" -> IntegerType, "positions" -> Longs)

  /** A segment written by a task: where, how many docs, bytes, field names. */
  val SegmentFileSchema: StructType =
    schema("path" -> StringType, "docs" -> LongType, "size" -> LongType, "fields" -> ArrayType(StringType))

  /** A merged segment, its inputs in order and, per input, the new doc number of each old doc (-1 = dropped). */
  val MergedSchema: StructType =
    StructType(SegmentFileSchema.fields ++ schema("sources" -> ArrayType(StringType), "new_docs" -> ArrayType(Longs)).fields)

  /** A DataFrame of `paths` (column `path`) with `segmentsPerTask` consecutive paths per partition. */
  def segmentPaths(spark: SparkSession, paths: Seq[String], segmentsPerTask: Int = 1): DataFrame = {
    require(segmentsPerTask > 0, s"segmentsPerTask must be positive, got $segmentsPerTask")
    val slices = math.max(1, (paths.length + segmentsPerTask - 1) / segmentsPerTask)
    val rdd = spark.sparkContext.parallelize(paths.map(Row(_)), slices)
    spark.createDataFrame(rdd, schema("path" -> StringType))
  }

  private def perSegment(segments: DataFrame, schema: StructType)(rows: (String, SegmentReader) => Iterator[Row]): DataFrame =
    segments.select(col("path")).mapPartitions { it =>
      it.flatMap { r =>
        val path = r.getString(0)
        rows(path, SegmentReader.open(Paths.get(path)))
      }
    }(Encoders.row(schema))

  private def idString(seg: SegmentReader, doc: Int): String = new String(seg.docId(doc), UTF_8)

  def documents(segments: DataFrame): DataFrame = perSegment(segments, DocumentSchema) { (path, seg) =>
    Iterator.range(0, seg.numDocs).flatMap { doc =>
      val stored = seg.document(doc)
      val id = new String(stored.id, UTF_8)
      Iterator.single(Row(path, doc, id, "_id", "t", stored.id, Array.emptyLongArray)) ++
        stored.values.iterator.map { v =>
          Row(path, doc, id, seg.fields(v.fieldId).name, v.fieldType.toChar.toString, v.value, v.arrayPositions)
        }
    }
  }

  def ids(segments: DataFrame): DataFrame = perSegment(segments, HitSchema) { (path, seg) =>
    Iterator.range(0, seg.numDocs).map(doc => Row(path, doc, idString(seg, doc)))
  }

  def terms(segments: DataFrame): DataFrame = perSegment(segments, TermSchema) { (path, seg) =>
    seg.fields.iterator.flatMap { f =>
      seg.dictionary(f.id).terms().map { case (term, value) => Row(path, f.name, term, seg.postingsAt(value).size.toLong) }
    }
  }

  def postings(segments: DataFrame): DataFrame = perSegment(segments, PostingSchema) { (path, seg) =>
    seg.fields.iterator.flatMap { f =>
      seg.dictionary(f.id).terms().flatMap { case (term, value) =>
        val hits = seg.postingsAt(value)
        Iterator.range(0, hits.size).map { i =>
          val positions = if (hits.hasLocations(i)) hits.locations(i).map(_.pos).toArray else null
          Row(path, hits.docs(i), f.name, term, hits.freqs(i), positions)
        }
      }
    }
  }

  /** Docs whose `field` holds `term`. */
  def termSearch(segments: DataFrame, field: String, term: Array[Byte]): DataFrame =
    perSegment(segments, HitSchema) { (path, seg) =>
      val docs = seg.postings(field, term).map(_.docs).getOrElse(Array.emptyIntArray)
      docs.iterator.map(doc => Row(path, doc, idString(seg, doc)))
    }

  /** Docs whose `field` holds a term starting with `prefix`, each once, ascending. */
  def prefixSearch(segments: DataFrame, field: String, prefix: Array[Byte]): DataFrame =
    perSegment(segments, HitSchema) { (path, seg) =>
      val docs = new RoaringBitmap
      seg.dictionary(field).foreach(_.termsWithPrefix(prefix).foreach { case (_, value) =>
        docs.add(seg.postingsAt(value).docs: _*)
      })
      docs.toArray.iterator.map(doc => Row(path, doc, idString(seg, doc)))
    }

  /** The merge tasks: the segments in order (sorted by path), `groupSize` consecutive ones per
    * group, each with its deleted docs from `deletes` — (segment, doc) or (segment, _id) rows,
    * null for none — as a deletion-vector frame (`ib_dv_agg`). One row per group. */
  def mergeTasks(segments: DataFrame, deletes: DataFrame, groupSize: Int): DataFrame = {
    require(groupSize > 0, s"groupSize must be positive, got $groupSize")
    val spark = segments.sparkSession
    val paths = segments.select(col("path")).distinct().collect().map(_.getString(0)).sorted.toIndexedSeq // one small row per segment
    val members = spark.createDataFrame(
      spark.sparkContext.parallelize(
        paths.zipWithIndex.map { case (p, i) => Row(i / groupSize, i % groupSize, p) }, 1),
      schema("group" -> IntegerType, "position" -> IntegerType, "path" -> StringType))
    val withDvs =
      if (deletes == null) members.withColumn("dv", org.apache.spark.sql.functions.lit(null).cast(BinaryType))
      else {
        val docs =
          if (deletes.columns.contains("doc")) checkedDocs(deletes.select(col("segment"), col("doc")), paths)
          else if (deletes.columns.contains("_id")) checkedIds(deletes.select(col("segment"), col("_id")), paths)
          else throw new IllegalArgumentException(
            s"deletes need columns (segment, doc) or (segment, _id), found ${deletes.columns.mkString(", ")}")
        val dvs = docs.groupBy(col("segment").as("path")).agg(functions.dvAgg(col("doc")).as("dv"))
        members.join(dvs, Seq("path"), "left")
      }
    val groups = (paths.length + groupSize - 1) / groupSize
    withDvs.groupBy(col("group"))
      .agg(collect_list(struct(col("position"), col("path"), col("dv"))).as("members"))
      .repartition(math.max(1, groups), col("group"))
  }

  private val Shown = 5 // offending deletes named in an error

  private def unknownSegment(segment: String): String =
    s"deletes name segment $segment, which is not among the segments merged"

  /** (segment, doc) deletes, after a job that fails with an IllegalArgumentException naming them
    * when any names a segment not among `paths` or a doc number outside 0 .. numDocs - 1 (before
    * any merge task runs, so that nothing is written). */
  private def checkedDocs(docs: DataFrame, paths: Seq[String]): DataFrame = {
    val counts = segmentPaths(docs.sparkSession, paths).mapPartitions(_.map { r =>
      val path = r.getString(0)
      (path, SegmentReader.open(Paths.get(path)).numDocs)
    })(Encoders.tuple(Encoders.STRING, Encoders.scalaInt)).toDF("_ib_path", "_ib_docs")
    val bad = docs.join(counts, col("segment") === col("_ib_path"), "left")
      .where(col("_ib_path").isNull || col("doc").isNull || col("doc") < 0 || col("doc") >= col("_ib_docs"))
      .select(col("segment"), col("doc"), col("_ib_docs")).limit(Shown).collect()
    if (bad.nonEmpty) throw new IllegalArgumentException(bad.map { r =>
      if (r.isNullAt(2)) unknownSegment(r.getString(0))
      else s"deletes name doc ${if (r.isNullAt(1)) "null" else r.get(1).toString} of segment ${r.getString(0)}, " +
        s"which has docs 0 .. ${r.getInt(2) - 1}"
    }.mkString("; "))
    docs
  }

  /** (segment, _id) deletes as (segment, doc), after a job that fails with an IllegalArgumentException
    * naming them when any names a segment not among `paths` or an `_id` the segment does not hold. */
  private def checkedIds(deletes: DataFrame, paths: Seq[String]): DataFrame = {
    val known = ids(segmentPaths(deletes.sparkSession, paths)).select(col("segment").as("_ib_segment"), col("_id").as("_ib_id"), col("doc"))
    val docs = deletes.join(known, col("segment") === col("_ib_segment") && col("_id") === col("_ib_id"), "left")
    val bad = docs.where(col("doc").isNull).select(col("segment"), col("_id")).limit(Shown).collect()
    if (bad.nonEmpty) {
      val segments = paths.toSet
      throw new IllegalArgumentException(bad.map { r =>
        if (!segments.contains(r.getString(0))) unknownSegment(r.getString(0))
        else s"deletes name _id '${r.getString(1)}', which is no document of segment ${r.getString(0)}"
      }.mkString("; "))
    }
    docs.select(col("segment"), col("doc"))
  }

  /** The file name of the merge of `sources`: a digest of their paths, so that a retried task
    * writes the same file. */
  def mergedName(sources: Seq[String]): String = {
    val digest = MessageDigest.getInstance("SHA-256").digest(sources.mkString("\n").getBytes(UTF_8))
    "merged-" + digest.take(8).map(b => f"${b & 0xff}%02x").mkString + ".zap"
  }

  /** Runs merge tasks (rows of [[mergeTasks]]: group, members = [(position, path, dv)]): one
    * merged segment per group in `directory`. */
  def mergeGroups(tasks: DataFrame, directory: String, chunkFactor: Int): DataFrame =
    tasks.mapPartitions { it =>
      it.map { task =>
        val members = task.getSeq[Row](1).sortBy(_.getInt(0))
        val sources = members.map(_.getString(1)).toIndexedSeq
        val readers = sources.map(p => SegmentReader.open(Paths.get(p)))
        val drops = members.map { m =>
          val bm = new RoaringBitmap
          if (!m.isNullAt(2))
            DeletionVector.deserialize(m.getAs[Array[Byte]](2), source = s"<deletes of ${m.getString(1)}>")
              .foreachPosition(p => bm.add(p.toInt))
          bm
        }.toIndexedSeq
        val path = Paths.get(directory).resolve(mergedName(sources))
        val newDocNums = Merge.mergeTo(readers, drops, path, chunkFactor)
        TaskFaults.failFirstAttempt("zap-merge")
        val newDocs = readers.indices.map { i =>
          if (newDocNums(i).length == readers(i).numDocs) newDocNums(i) else Array.fill(readers(i).numDocs)(-1L)
        }
        Row.fromSeq(describe(path) ++ Seq(sources, newDocs))
      }
    }(Encoders.row(MergedSchema))

  /** Merges `segments` in groups of `groupSize` (sorted by path) minus `deletes` (null = none) into `directory`. */
  def merge(segments: DataFrame, directory: String, groupSize: Int = 10, deletes: DataFrame = null,
            chunkFactor: Int = io.indexbridge.zap.SegmentWriter.DefaultChunkFactor): DataFrame =
    mergeGroups(mergeTasks(segments, deletes, groupSize), directory, chunkFactor)

  /** (path, docs, size, fields) of a written segment. */
  private[spark] def describe(path: Path): Seq[Any] = {
    val seg = SegmentReader.open(path)
    Seq(path.toString, seg.numDocs.toLong, Files.size(path), seg.fields.map(_.name))
  }

}
