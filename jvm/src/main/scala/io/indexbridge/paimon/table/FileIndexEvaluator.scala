package io.indexbridge.paimon.table

import java.nio.file.{Files, NoSuchFileException, Paths}

import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.fileindex.{FileIndexContainer, FileIndexPredicate, Predicate, DataField => IndexField}

/** One data file's file index and the filter Paimon's raw reader asks it (`FileIndexEvaluator`):
  * everything a Spark task needs to decide whether the reader opens the file, without the table. */
final case class FileIndexCheck(dataFile: String, embedded: Option[Array[Byte]], indexFile: Option[String],
    filter: Option[Predicate], fields: Seq[IndexField]) {

  /** The container, from the manifest or read from the `.index` file. */
  def container: FileIndexContainer = embedded match {
    case Some(bytes) => FileIndexContainer.read(bytes, s"embedded file index of $dataFile")
    case None =>
      val p = Paths.get(indexFile.get)
      val bytes =
        try Files.readAllBytes(p)
        catch { case _: NoSuchFileException => throw new IndexFormatException(p.toString, 0, s"the file index of $dataFile to exist") }
      FileIndexContainer.read(bytes, p.toString)
  }

  /** `FileIndexPredicate.evaluate(filter).remain()`; REMAIN without a filter. */
  def remain: Boolean = filter.forall(p => new FileIndexPredicate(container, fields).evaluate(p).remain)
}

/** Data files' file indexes evaluated as Paimon's raw reader does (`FileIndexEvaluator`).
  *
  * {{{
  * index     the container embedded in the manifest (_EMBEDDED_FILE_INDEX), else the one `.index`
  *           extra file beside the data file (more than one is an error, as in Paimon)
  * filter    the read's predicate split on AND, each conjunct devolved to the file's schema
  *           (renamed by field id; dropped on a type change), conjuncts naming a partition
  *           column left out (FormatReaderMapping.readFilters)
  * verdict   FileIndexPredicate.evaluate(filter).remain(); no filter or no index: REMAIN
  * opened    every file of a split Paimon merges; of a raw split, when file-index.read.enabled,
  *           only the files whose verdict is REMAIN
  * }}}
  */
object FileIndexEvaluator {

  /** The check of a data file with a file index (None without one) for `predicate`: its
    * conjuncts that name no partition column, devolved to the file's schema. */
  def check(table: FileStoreTable, predicate: Option[Predicate], file: DataFileEntry): Option[FileIndexCheck] = {
    val indexFiles = file.meta.extraFiles.filter(_.endsWith(".index"))
    if (file.meta.embeddedIndex.isEmpty && indexFiles.size > 1)
      throw new IndexFormatException(file.path.toString, 0, s"at most one file index per data file, found ${indexFiles.mkString(" and ")}")
    if (file.meta.embeddedIndex.isEmpty && file.indexFile.isEmpty) None
    else {
      val fileSchema = table.schemas.schema(file.meta.schemaId)
      Some(FileIndexCheck(file.name, file.meta.embeddedIndex, file.indexFile.map(_.toString),
        predicate.flatMap(readFilter(_, table, fileSchema)), fields(fileSchema)))
    }
  }

  def check(plan: Plan, file: DataFileEntry): Option[FileIndexCheck] = check(plan.table, plan.predicate, file)

  /** Whether Paimon's reader opens the file: every file of a split it merges, and of a raw split
    * those whose file index does not rule them out (when `file-index.read.enabled`). */
  def opened(plan: Plan, split: DataSplit, file: DataFileEntry): Boolean =
    !split.rawRead(plan.table.primaryKeyTable) || !plan.table.options.fileIndexReadEnabled || check(plan, file).forall(_.remain)

  /** The conjuncts of `predicate` that name no partition column, devolved to the file's schema
    * (`FormatReaderMapping.readFilters`). */
  def readFilter(predicate: Predicate, table: FileStoreTable, fileSchema: TableSchema): Option[Predicate] = {
    val partitionKeys = fileSchema.partitionKeys.toSet
    val devolved = Predicates.splitAnd(predicate).flatMap { c =>
      if (fileSchema.id == table.schema.id) Some(c) else Predicates.devolve(c, table.schema, fileSchema, keepNewField = false)
    }
    devolved.filterNot(c => Predicates.columns(c).exists(partitionKeys.contains)) match {
      case Seq() => None
      case ps    => Some(Predicates.and(ps, fileSchema.keyTypeOf))
    }
  }

  /** `SimpleStatsEvolutions.tryDevolveFilter`: the conjuncts that devolve to the file's schema. */
  def devolved(predicate: Predicate, table: FileStoreTable, fileSchema: TableSchema): Option[Predicate] =
    if (fileSchema.id == table.schema.id) Some(predicate)
    else Predicates.splitAnd(predicate).flatMap(Predicates.devolve(_, table.schema, fileSchema, keepNewField = false)) match {
      case Seq() => None
      case ps    => Some(Predicates.and(ps, fileSchema.keyTypeOf))
    }

  /** The data file's atomic columns, as the file-index codecs type them. */
  def fields(fileSchema: TableSchema): Seq[IndexField] =
    fileSchema.fields.collect { case DataField(_, name, DataType.Atomic(t, _), _) => IndexField(name, t) }
}
