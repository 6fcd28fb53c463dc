package io.indexbridge.paimon.table

import java.nio.file.{Files, Path}

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.{JavaHashMapOrder, JavaOrder, KeyType}
import io.indexbridge.paimon.fileindex.{BitmapIndex, DataFileIndex, FileIndexContainer, FileIndexWriter, DataField => IndexField}

/** Rewriting the file indexes of a snapshot's data files, as Paimon 1.4.2's `rewrite_file_index`
  * procedure does (`FileIndexProcessor.process` per data file, one COMPACT commit).
  *
  * {{{
  * files     every live data file of the snapshot (all levels), or those of the partitions a
  *           partition filter keeps; `onlyMissing` keeps the files without every index the
  *           options ask for
  * options   the table's file-index.* options (the latest schema's, in its JSON order) with the
  *           caller's overrides; for a file written under an older schema the columns are
  *           renamed to the file's names by field id, columns it lacks are skipped
  * build     every row of the data file (deletion vectors not applied), DataFileIndexWriter's
  *           maintainers; the container in FileIndexProcessor's order: columns as
  *           serializeMaintainers, each column's index types as the HashMap `putAll` leaves
  *           them; an existing `.index` file is loaded first and the new indexes put over it
  *           (its columns no longer configured dropped); an embedded index is never loaded
  * placement size > file-index.in-manifest-threshold: a new index file <data>.index, or after an
  *           existing one <data>-1.index, <data>-2.index ... (the old one leaves _EXTRA_FILES,
  *           the embedded index stays); size 0: no index (extra .index files dropped);
  *           otherwise embedded (_EXTRA_FILES unchanged)
  * commit    per file DELETE of the old entry, ADD of the new one (same file, level, bucket)
  * }}}
  */
object FileIndexRewrite {
  private val Prefix = "file-index."
  private val ColumnsSuffix = ".columns"

  /** One data file to re-index; `columns` are the file's columns the indexes read (as the file
    * names them), `options` the file-index options with those names. */
  final case class Task(
      entry: ManifestEntry,
      dataPath: String,
      existingIndex: Option[String],
      newIndexPath: String,
      fields: Seq[IndexField],
      columns: Seq[(String, DataType)],
      options: Seq[(String, String)],
      keptNames: Set[String],
      threshold: Long)

  /** What a task produced: the new meta of the data file, and the index file it wrote. */
  final case class Result(file: DataFileMeta, indexFile: Option[String], indexSize: Long)

  /** The options of schema `schemaId` in the order of its JSON document. */
  def orderedOptions(tablePath: Path, schemaId: Long): Seq[(String, String)] = {
    val file = tablePath.resolve("schema").resolve(s"schema-$schemaId")
    val doc = new ObjectMapper().readTree(Files.readAllBytes(file))
    Option(doc.get("options")).filter(_.isObject).fold(Seq.empty[(String, String)])(_.fields().asScala.map(e => e.getKey -> e.getValue.asText).toSeq)
  }

  /** `options` with `overrides` put over them (a new key goes last, as `Options.set` does). */
  def withOverrides(options: Seq[(String, String)], overrides: Seq[(String, String)]): Seq[(String, String)] =
    overrides.foldLeft(options) { case (acc, (k, v)) =>
      if (acc.exists(_._1 == k)) acc.map { case (k2, v2) => if (k2 == k) k -> v else k2 -> v2 } else acc :+ (k -> v)
    }

  private def parseColumn(text: String): (String, Option[String]) = {
    val open = text.indexOf('[')
    if (open > 0 && text.endsWith("]")) (text.substring(0, open), Some(text.substring(open + 1, text.length - 1))) else (text, None)
  }

  /** The index columns the options name, `(column, nested key)`. */
  def indexColumns(options: Seq[(String, String)]): Seq[(String, Option[String])] =
    options.collect { case (k, v) if k.startsWith(Prefix) && k.endsWith(ColumnsSuffix) && k.length > Prefix.length + ColumnsSuffix.length =>
      v.split(",").map(_.trim).filter(_.nonEmpty).map(parseColumn).toSeq
    }.flatten.distinct

  /** The (column, index types) the options ask for, with `m[k]` for map keys. */
  def wanted(options: Seq[(String, String)]): Seq[(String, Seq[String])] = DataFileIndex.layout(options)

  /** The tasks of a rewrite of the snapshot's live data files (see the object comment). */
  def plan(table: FileStoreTable, overrides: Seq[(String, String)], keepPartition: IndexedSeq[Any] => Boolean,
      onlyMissing: Boolean): Seq[Task] = {
    val snapshot = table.snapshot.getOrElse(return Nil)
    val latest = table.schema
    val options = withOverrides(orderedOptions(table.path, latest.id), overrides)
    val threshold = options.reverse.collectFirst { case ("file-index.in-manifest-threshold", v) => BitmapIndex.memorySize(v) }
      .getOrElse(FileIndexContainer.DefaultInManifestThreshold)
    val indexOptions = options.filter(_._1.startsWith(Prefix))
    val manifestDir = table.path.resolve("manifest")
    val live = TableCommit.liveEntries(table.path, snapshot)
    val perSchema = mutable.HashMap.empty[Long, (Seq[(String, String)], Seq[IndexField], Seq[(String, DataType)], Set[String])]
    live.flatMap { e =>
      val partition = table.partition(e.partition, manifestDir.resolve(snapshot.deltaManifestList).toString)
      if (!keepPartition(partition)) None
      else {
        val (fileOptions, fields, columns, kept) = perSchema.getOrElseUpdate(e.file.schemaId,
          forSchema(indexOptions, latest, table.schemas.schema(e.file.schemaId)))
        val dataPath = table.paths.dataFile(partition, e.bucket, e.file)
        val existing = e.file.indexFile.map(n => table.paths.extraFile(partition, e.bucket, e.file, n))
        val newPath = existing.fold(dataPath.resolveSibling(e.file.fileName + ".index"))(p => p.resolveSibling(nextIndexName(p.getFileName.toString)))
        val task = Task(e, dataPath.toString, existing.map(_.toString), newPath.toString, fields, columns, fileOptions, kept, threshold)
        if (onlyMissing && !missing(task, table, partition)) None else Some(task)
      }
    }
  }

  /** Whether the file lacks one of the wanted (column, index type) pairs. */
  private def missing(task: Task, table: FileStoreTable, partition: IndexedSeq[Any]): Boolean = {
    val container = task.entry.file.embeddedIndex.map(b => FileIndexContainer.read(b, task.entry.file.fileName))
      .orElse(task.existingIndex.filter(p => Files.exists(java.nio.file.Paths.get(p))).map(p => FileIndexContainer.read(Files.readAllBytes(java.nio.file.Paths.get(p)), p)))
    wanted(task.options).exists { case (name, types) => types.exists(t => container.forall(_.entry(name, t).isEmpty)) }
  }

  /** The index fields and columns a data file written now under `schema` is indexed over
    * (DataFileIndexWriter over the value row); nothing without file-index options. */
  def writeInputs(options: Seq[(String, String)], schema: TableSchema): (Seq[IndexField], Seq[(String, DataType)]) = {
    val indexOptions = options.filter(_._1.startsWith(Prefix))
    if (indexColumns(indexOptions).isEmpty) (Nil, Nil)
    else { val (_, fields, columns, _) = forSchema(indexOptions, schema, schema); (fields, columns) }
  }

  /** The file-index options, fields and columns for files of `file` (see the object comment);
    * also the names an old `.index` file keeps (`projectedColFullNames`). */
  private def forSchema(options: Seq[(String, String)], latest: TableSchema, file: TableSchema)
      : (Seq[(String, String)], Seq[IndexField], Seq[(String, DataType)], Set[String]) = {
    val rename: String => Option[String] =
      if (file.id == latest.id) name => Some(name).filter(n => latest.fields.exists(_.name == n))
      else name => latest.fields.find(_.name == name).flatMap(f => file.fields.find(_.id == f.id)).map(_.name)
    val mapped = options.flatMap { case (k, v) =>
      if (k.endsWith(ColumnsSuffix) && k != "file-index.in-manifest-threshold") {
        val cols = v.split(",").map(_.trim).filter(_.nonEmpty).flatMap { c =>
          val (name, nested) = parseColumn(c)
          rename(name).map(n => nested.fold(n)(key => s"$n[$key]"))
        }
        if (file.id != latest.id && cols.isEmpty) None else Some(k -> cols.mkString(","))
      } else if (file.id == latest.id) Some(k -> v)
      else {
        // per-column options file-index.<type>.<column>.<option> follow the column's file name
        val rest = k.stripPrefix(Prefix)
        val dot = rest.indexOf('.')
        if (dot < 0) Some(k -> v)
        else {
          val (t, tail) = (rest.substring(0, dot), rest.substring(dot + 1))
          latest.fields.map(_.name).sortBy(-_.length).find(n => tail.startsWith(n + ".") || tail.startsWith(n + "[")).flatMap { n =>
            rename(n).map(fn => s"$Prefix$t.$fn${tail.substring(n.length)}" -> v)
          }.orElse(Some(k -> v))
        }
      }
    }
    val names = indexColumns(mapped).map(_._1).distinct
    val columns = names.map { n =>
      val f = file.fields.find(_.name == n).getOrElse(throw new IndexFormatException(s"schema-${file.id}", 0, s"index column '$n' among the fields"))
      n -> f.dataType
    }
    val fields = columns.map { case (n, t) =>
      t match {
        case DataType.Atomic(k, _)                                                    => IndexField(n, k)
        case DataType.Map(DataType.Atomic(_: KeyType.VarCharType | _: KeyType.CharType, _), DataType.Atomic(v, _), _) => IndexField(n, v, isMap = true)
        case other => throw new IndexFormatException(s"schema-${file.id}", 0, s"an indexable column type for '$n', found $other")
      }
    }
    // FileIndexProcessor keeps the old indexes of the configured columns, under their current names
    val kept = indexColumns(options).flatMap { case (name, nested) =>
      if (rename(name).isEmpty) None else Some(nested.fold(name)(k => s"${rename(name).get}[$k]"))
    }.toSet
    (mapped, fields, columns, kept)
  }

  /** `DataFilePathFactory.createNewFileIndexFilePath`. */
  def nextIndexName(name: String): String = {
    val dot = name.lastIndexOf('.')
    val dash = name.lastIndexOf('-')
    if (dash != -1 && dot > dash) {
      val num = name.substring(dash + 1, dot)
      if (num.nonEmpty && num.forall(_.isDigit)) return name.substring(0, dash + 1) + (num.toInt + 1) + ".index"
    }
    name.substring(0, dot) + "-1.index"
  }

  // ------------------------------------------------------------------------------------------
  // Building

  /** DataFileIndexWriter's maintainers fed row by row: `write` takes each row's values of
    * [[Task.columns]] in order (map columns as `scala.collection.Map[String, Any]`). */
  final class Builder(options: Seq[(String, String)], fields: Seq[IndexField], columnNames: Seq[String]) {
    private val layout = DataFileIndex.layout(options)
    private val byName = fields.map(f => f.name -> f).toMap
    private val slots: Seq[(String, Option[String], Int, Seq[(String, FileIndexWriter)])] = layout.map { case (name, types) =>
      val (column, nested) = parseColumn(name)
      val field = byName.getOrElse(column, throw new IllegalArgumentException(s"$column does not exist in column fields"))
      if (nested.isDefined != field.isMap)
        throw new IllegalArgumentException(s"column $column: nested index names need a map column and map columns need a key")
      (name, nested, columnNames.indexOf(column),
        types.map(t => t -> FileIndexContainer.writer(t, field.valueType, DataFileIndex.indexOptions(options, t, name))))
    }
    private var rows = 0L

    def write(values: IndexedSeq[Any]): Unit = {
      rows += 1
      slots.foreach { case (_, nested, i, writers) =>
        val v = values(i)
        val value = nested match {
          case None      => v
          case Some(key) => if (v == null) null else v.asInstanceOf[scala.collection.Map[String, Any]].getOrElse(key, null)
        }
        writers.foreach(_._2.write(value))
      }
    }

    /** Every maintainer's payload (`serializeMaintainers`, in DataFileIndexWriter's order). */
    def maintainers: Seq[(String, Seq[(String, Array[Byte])])] =
      slots.map { case (name, nested, _, writers) =>
        name -> writers.map { case (t, w) => t -> (if (nested.isDefined && rows == 0) null else w.serialize()) }
      }
  }

  /** `new HashMap<>().putAll(m)` of a map iterated as `keys`: the table sized for them at once
    * (JDK 17 `putMapEntries`: capacity tableSizeFor((int) (n / 0.75 + 1))), no resize after. */
  private def putAllOrder(keys: Seq[String]): Seq[String] = {
    val t = (keys.size / 0.75f + 1.0f).toInt
    val cap = if (t <= 1) 1 else Integer.highestOneBit(t - 1) << 1
    def spread(h: Int) = h ^ (h >>> 16)
    keys.zipWithIndex.sortBy { case (k, i) => (spread(JavaOrder.javaStringHash(k)) & (cap - 1), i) }.map(_._1)
  }

  /** The container bytes FileIndexProcessor writes: `maintainers` of the new build put over the
    * old `.index` container (if any, its columns not in `kept` dropped). Empty when nothing is left. */
  def container(maintainers: Seq[(String, Seq[(String, Array[Byte])])], old: Option[FileIndexContainer], kept: Set[String]): Array[Byte] = {
    val strings = Some(JavaOrder.stringCompareTo)
    // per column: its index types in iteration order (a map filled by put, or by one putAll), payloads
    val inner = mutable.LinkedHashMap.empty[String, (Either[Seq[String], JavaHashMapOrder[String]], mutable.HashMap[String, Array[Byte]])]
    val outerCalls = mutable.ArrayBuffer.empty[String]
    old.foreach { c => // FileIndexFormat.Reader.readAll: computeIfAbsent(column, new HashMap).put(type, bytes)
      for (name <- c.columns if kept.contains(name)) {
        val order = new JavaHashMapOrder[String](JavaOrder.javaStringHash, strings)
        val payloads = mutable.HashMap.empty[String, Array[Byte]]
        for (e <- c.entries if e.column == name) {
          order.put(e.indexType)
          payloads(e.indexType) = c.payload(name, e.indexType).orNull
        }
        inner(name) = (Right(order), payloads)
        outerCalls += name
      }
    }
    for ((name, payloads) <- maintainers) { // maintainers.computeIfAbsent(name, new HashMap).putAll(bytes)
      inner.get(name) match {
        case Some((Right(order), values)) => payloads.foreach { case (t, b) => order.put(t); values(t) = b }
        case _ =>
          inner(name) = (Left(putAllOrder(payloads.map(_._1))), mutable.HashMap(payloads: _*))
          outerCalls += name
      }
    }
    if (inner.isEmpty) return Array.emptyByteArray
    val names = JavaOrder.afterComputeIfAbsent(outerCalls)(JavaOrder.javaStringHash, strings)
    FileIndexContainer.write(names.map { n =>
      val (order, values) = inner(n)
      n -> order.fold(identity, _.keys).map(t => t -> values(t))
    })
  }

  /** The new meta of the task's data file for container `bytes` (see the object comment): the
    * index file to write (path, bytes) when the container goes to a file. */
  def place(task: Task, bytes: Array[Byte]): (DataFileMeta, Option[Array[Byte]]) = {
    val meta = task.entry.file
    val extras = meta.extraFiles.filterNot(_.endsWith(".index"))
    if (bytes.length > task.threshold)
      (meta.copy(extraFiles = extras :+ java.nio.file.Paths.get(task.newIndexPath).getFileName.toString), Some(bytes))
    else if (bytes.isEmpty) (meta.copy(extraFiles = extras), None)
    else (meta.copy(embeddedIndex = Some(bytes)), None)
  }

  /** The commit of the results: per file DELETE of the old entry, ADD of the new one; a file whose
    * entry would not change (the same embedded index rebuilt) is left alone, since Paimon loses a
    * file deleted and added again under the same identifier. */
  def changes(results: Seq[(ManifestEntry, DataFileMeta)], ownedFiles: Seq[Path]): CommitChanges =
    CommitChanges(CommitKind.Compact, results.flatMap { case (old, meta) =>
      val added = old.copy(kind = Manifest.Add, file = meta)
      if (added.identifier == old.identifier) Nil else Seq(old.copy(kind = Manifest.Delete), added)
    }, Nil, ownedFiles)
}
