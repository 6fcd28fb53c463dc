package io.indexbridge.spark

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}

import scala.collection.mutable

import io.indexbridge.bleve.{BleveIndex, BleveQuery, GoJson, IndexMapping, SegmentEntry}
import io.indexbridge.zap.{SegmentReader, SegmentWriter}
import org.apache.spark.TaskContext
import org.apache.spark.sql.{DataFrame, Encoders, Row, SparkSession}
import org.apache.spark.sql.functions.{col, count, desc, lit}
import org.apache.spark.sql.types._

/** Whole bleve index directories from Spark (the JVM path; `indexbridge.spark.bleve` wraps it
  * in Python and has the Arrow path, which writes and returns the same).
  *
  * {{{
  * write(df, path, mappingJson, idCol, rowsPerSegment)   file, docs, size   (the index's segments, in order)
  * read(spark, path [, fields])                         _id, then one column per stored field
  * search(spark, path, queryJson [, size])              _id, score          (ordered as bleve orders hits)
  * }}}
  *
  * write: every row is a document (all its columns, the id column included: structs and string-
  * keyed maps are objects, arrays are arrays, timestamps and dates times) with `_id` = the id
  * column as a string (unique; checked first by an aggregation unless told not to). Tasks map and
  * analyse their rows and write `store/build-ppppp-nnnnn.zap` (a segment per `rowsPerSegment`
  * rows, in row order, through a temporary file); the driver then renames them in partition
  * order to `%012x.zap` and writes `root.bolt` and `index_meta.json` last ([[BleveIndex.publish]]):
  * until then bleve refuses the directory.
  *
  * read: one task per segment; each reads the snapshot (`root.bolt`) itself and checks that its
  * epoch is the one the driver planned with, so a directory a bleve service changed meanwhile is
  * an error, not a mix. Column types come from a first pass over the stored fields: text string,
  * number double, datetime timestamp, boolean boolean; a field holding several kinds is a string
  * (numbers as Go prints them, datetimes as RFC 3339); one holding several values in a document an
  * array. search: the driver plans the query with the index-wide numbers ([[BleveQuery.plan]]),
  * each task evaluates the plan over its segment, and the hits are sorted by score, then index order.
  */
object BleveIndexes {
  val SegmentsSchema: StructType = StructType(Seq(StructField("file", StringType), StructField("docs", LongType), StructField("size", LongType)))
  val HitsSchema: StructType = StructType(Seq(StructField("_id", StringType), StructField("score", DoubleType)))

  def buildName(partition: Int, n: Int): String = f"build-$partition%05d-$n%05d.zap"

  // -- write ---------------------------------------------------------------------------------------

  /** A Spark value as the JSON-like value [[IndexMapping.mapDocument]] takes. */
  private def jsonValue(v: Any, dataType: DataType): Any = (v, dataType) match {
    case (null, _) => null
    case (r: Row, s: StructType) =>
      val m = mutable.LinkedHashMap.empty[String, Any]
      s.fields.zipWithIndex.foreach { case (f, i) => m.put(f.name, jsonValue(r.get(i), f.dataType)) }
      m
    case (m: scala.collection.Map[_, _], MapType(StringType, vt, _)) =>
      val out = mutable.LinkedHashMap.empty[String, Any]
      m.foreach { case (k, x) => out.put(k.toString, jsonValue(x, vt)) }
      out
    case (_: scala.collection.Map[_, _], t) => throw new IllegalArgumentException(s"a map with string keys, found $t")
    case (s: scala.collection.Seq[_], ArrayType(et, _)) => s.map(jsonValue(_, et)).toVector
    case (_: Array[Byte], _) => throw new IllegalArgumentException("binary columns have no bleve mapping")
    case (other, _) => other
  }

  /** Writes a bleve index of `docs` at `path`; returns the index's segments (file, docs, size). */
  def write(docs: DataFrame, path: String, mappingJson: String, idCol: String, rowsPerSegment: Int, checkUniqueIds: Boolean): DataFrame = {
    require(rowsPerSegment > 0, s"rowsPerSegment must be positive, got $rowsPerSegment")
    val spark = docs.sparkSession
    val mapping = IndexMapping.parse(mappingJson) // errors before any work
    val root = Paths.get(path).toAbsolutePath
    BleveIndex.checkNew(root)
    val idIndex = docs.schema.fieldIndex(idCol)
    if (checkUniqueIds) {
      val dup = docs.groupBy(col(idCol).cast(StringType).as("id")).agg(count(lit(1)).as("n")).where(col("n") > 1).limit(1).collect()
      if (dup.nonEmpty) throw new IllegalArgumentException(s"document id '${dup(0).get(0)}' occurs ${dup(0).get(1)} times (an index holds one document per id)")
    }
    val store = root.resolve(BleveIndex.StoreDir)
    Files.createDirectories(store)
    val storeDir = store.toString
    val schema = docs.schema
    val written = docs.rdd.mapPartitionsWithIndex { (partition, rows) =>
      val im = IndexMapping.parse(mappingJson)
      rows.grouped(rowsPerSegment).zipWithIndex.map { case (group, n) =>
        val mapped = group.map { row =>
          val id = row.get(idIndex)
          if (id == null || id.toString.isEmpty) throw new IllegalArgumentException(s"a document without an id (column $idCol is null or empty)")
          im.mapDocument(id.toString, jsonValue(row, schema))
        }.toIndexedSeq
        val target = Paths.get(storeDir).resolve(buildName(partition, n))
        SegmentWriter.write(mapped, target)
        TaskFaults.failFirstAttempt("bleve-write")
        (partition, n, target.toString, mapped.length.toLong)
      }
    }.collect().sortBy(t => (t._1, t._2))
    val names = BleveIndex.publish(root, written.map(t => Paths.get(t._3)).toSeq, mapping)
    val rows = names.zip(written).map { case (name, t) => Row(name, t._4, Files.size(store.resolve(name))) }
    spark.createDataFrame(spark.sparkContext.parallelize(rows, 1), SegmentsSchema)
  }

  // -- read ----------------------------------------------------------------------------------------

  /** The snapshot of `path` a task reads, checked against the epoch the driver planned with. */
  private def segmentAt(path: String, epoch: Option[Long], ordinal: Int): (SegmentReader, SegmentEntry) = {
    val (e, _, entries) = BleveIndex.snapshot(Paths.get(path))
    if (e != epoch) throw new IllegalStateException(s"$path: the index changed while it was read (snapshot $epoch, now $e)")
    val entry = entries(ordinal)
    (BleveIndex.openSegment(entry, Paths.get(path).resolve(BleveIndex.StoreDir).resolve(BleveIndex.RootBolt).toString), entry)
  }

  private def ordinals(spark: SparkSession, n: Int): org.apache.spark.rdd.RDD[Int] =
    spark.sparkContext.parallelize(0 until n, math.max(1, n))

  /** Per stored field: the kinds of values (t n d b) and whether a document holds several. */
  def storedFieldKinds(spark: SparkSession, path: String, fields: Option[Seq[String]] = None): Seq[(String, String, Boolean)] = {
    val (epoch, _, entries) = BleveIndex.snapshot(Paths.get(path))
    val wanted = fields.map(_.toSet)
    val found = ordinals(spark, entries.length).mapPartitions { it =>
      it.flatMap { k =>
        val (seg, entry) = segmentAt(path, epoch, k)
        val kinds = mutable.HashMap.empty[String, (mutable.Set[Char], Boolean)]
        for (doc <- 0 until seg.numDocs if !entry.deleted.exists(_.contains(doc))) {
          val counts = mutable.HashMap.empty[String, Int]
          for (v <- seg.document(doc).values) {
            val name = seg.fields(v.fieldId).name
            if (wanted.forall(_.contains(name)) && BleveIndex.storedValue(v.fieldType, v.value).isDefined) {
              counts(name) = counts.getOrElse(name, 0) + 1
              val (ks, multi) = kinds.getOrElseUpdate(name, (mutable.Set.empty[Char], false))
              ks += v.fieldType.toChar
              kinds(name) = (ks, multi)
            }
          }
          counts.foreach { case (name, c) => if (c > 1) kinds(name) = (kinds(name)._1, true) }
        }
        kinds.iterator.map { case (name, (ks, multi)) => (name, ks.toSeq.sorted.mkString, multi) }
      }
    }.collect()
    val merged = mutable.HashMap.empty[String, (Set[Char], Boolean)]
    for ((name, ks, multi) <- found) {
      val (k0, m0) = merged.getOrElse(name, (Set.empty[Char], false))
      merged(name) = (k0 ++ ks, m0 || multi)
    }
    merged.toSeq.sortWith((a, b) => java.util.Arrays.compareUnsigned(a._1.getBytes(UTF_8), b._1.getBytes(UTF_8)) < 0)
      .map { case (name, (ks, multi)) => (name, ks.toSeq.sorted.mkString, multi) }
  }

  def columnType(kinds: String): DataType = kinds match {
    case "t" => StringType
    case "n" => DoubleType
    case "d" => TimestampType
    case "b" => BooleanType
    case _ => StringType
  }

  /** The live documents of the index at `path`: `_id`, then one column per stored field (or per
    * field of `fields`), typed as the class comment says. */
  def read(spark: SparkSession, path: String, fields: Seq[String]): DataFrame = {
    val kinds = storedFieldKinds(spark, path, if (fields.isEmpty) None else Some(fields))
    val columns = kinds.map { case (name, ks, multi) => (name, ks, multi, if (multi) ArrayType(columnType(ks)) else columnType(ks)) }
    val schema = StructType(StructField("_id", StringType) +: columns.map(c => StructField(c._1, c._4)))
    val (epoch, _, entries) = BleveIndex.snapshot(Paths.get(path))
    val wanted = columns.map(_._1).toSet
    val rows = ordinals(spark, entries.length).mapPartitions { it =>
      it.flatMap { k =>
        val (seg, entry) = segmentAt(path, epoch, k)
        readRows(seg, entry, columns, wanted)
      }
    }
    spark.createDataFrame(rows, schema)
  }

  private def readRows(seg: SegmentReader, entry: SegmentEntry, columns: Seq[(String, String, Boolean, DataType)], wanted: Set[String]): Iterator[Row] = {
    val index = columns.map(_._1).zipWithIndex.toMap
    (0 until seg.numDocs).iterator.filterNot(d => entry.deleted.exists(_.contains(d))).map { doc =>
      val stored = seg.document(doc)
      val values = Array.fill[mutable.ArrayBuffer[Any]](columns.length)(null)
      for (v <- stored.values) {
        val name = seg.fields(v.fieldId).name
        if (wanted.contains(name)) {
          val i = index(name)
          cell(v.fieldType, v.value, columns(i)._2).foreach { x =>
            if (values(i) == null) values(i) = mutable.ArrayBuffer.empty
            values(i) += x
          }
        }
      }
      val cells = columns.indices.map { i =>
        val vs = values(i)
        if (vs == null) null else if (columns(i)._3) vs.toSeq else vs.head
      }
      Row.fromSeq(new String(stored.id, UTF_8) +: cells)
    }
  }

  /** One stored value in its column's type (kinds: the column's kinds). */
  private def cell(kind: Byte, raw: Array[Byte], kinds: String): Option[Any] =
    BleveIndex.storedValue(kind, raw).map { v =>
      if (kinds.length == 1) kind match {
        case 'd' => java.sql.Timestamp.from(nanosInstant(BleveIndex.prefixCodedInt64(raw).get))
        case _ => v
      }
      else v match {
        case d: Double => GoJson.float(d)
        case b: Boolean => b.toString
        case other => other.toString
      }
    }

  private def nanosInstant(nanos: Long): java.time.Instant =
    java.time.Instant.ofEpochSecond(Math.floorDiv(nanos, 1000000000L), Math.floorMod(nanos, 1000000000L))

  // -- search --------------------------------------------------------------------------------------

  /** Every hit of `queryJson` (bleve's query JSON) over the index at `path` (the first `size`
    * when size >= 0): `_id`, `score`, in bleve's order. */
  def search(spark: SparkSession, path: String, queryJson: String, size: Int): DataFrame = {
    val index = BleveIndex.open(Paths.get(path))
    val plan = BleveQuery.plan(BleveQuery.parse(queryJson), index.mapping, new BleveQuery.IndexStats(index.views))
    val epoch = index.epoch
    val hits = ordinals(spark, index.segments.length).mapPartitions { it =>
      it.flatMap { k =>
        val (seg, entry) = segmentAt(path, epoch, k)
        val h = BleveQuery.evaluate(plan, seg, entry.deleted)
        h.docs.indices.iterator.map(i => Row(new String(seg.docId(h.docs(i)), UTF_8), h.scores(i), k, h.docs(i)))
      }
    }
    val schema = StructType(HitsSchema.fields ++ Seq(StructField("segment", IntegerType), StructField("doc", IntegerType)))
    val sorted = spark.createDataFrame(hits, schema).orderBy(desc("score"), col("segment"), col("doc"))
    (if (size >= 0) sorted.limit(size) else sorted).select("_id", "score")
  }

  /** For callers across py4j: `fields` as a JSON array (or null: every stored field). */
  def readFields(spark: SparkSession, path: String, fieldsJson: String): DataFrame =
    read(spark, path, if (fieldsJson == null) Seq.empty else IndexMapping.parseJsonValue(fieldsJson).asInstanceOf[Seq[Any]].map(_.toString))
}
