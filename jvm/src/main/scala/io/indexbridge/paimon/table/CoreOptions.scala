package io.indexbridge.paimon.table

import io.indexbridge.paimon.fileindex.BitmapIndex

/** The table options a read depends on (Paimon's `CoreOptions`, the schema's `options`), with
  * Paimon's defaults, and the check that the table uses nothing the reader does not implement.
  *
  * {{{
  * bucket                      N > 0 fixed (HASH_FIXED), -1 dynamic (PK) / unaware (append), -2 postpone
  * bucket-key                  the bucket key, default the trimmed primary key
  * bucket-function.type        default (|hash % N|) or mod; hive is refused
  * merge-engine                deduplicate (default) or first-row; partial-update, aggregation refused
  * sequence.field              columns ordering a key's records (sequence.field.sort-order ascending/descending)
  * ignore-delete               retract records are dropped before merging (also deduplicate. / first-row. prefixed)
  * deletion-vectors.enabled    DVs apply, and PK batch scans skip level 0 (also for first-row)
  * file-index.read.enabled     default true
  * source.split.target-size    128 mb;  source.split.open-file-cost  4 mb
  * partition.default-name      __DEFAULT_PARTITION__;  partition.legacy-name  true
  * data-file.path-directory    optional directory of the data files under the table
  * index-file-in-data-file-dir index files beside the data files instead of <table>/index
  * }}}
  */
final case class CoreOptions(options: Map[String, String]) {
  private def get(key: String): Option[String] = options.get(key)

  private def bool(key: String, default: Boolean): Boolean =
    get(key).fold(default)(v => v.trim.equalsIgnoreCase("true"))

  def bucket: Int = get("bucket").fold(-1)(_.trim.toInt)
  def mergeEngine: String = get("merge-engine").fold("deduplicate")(_.trim.toLowerCase(java.util.Locale.ROOT))
  def firstRow: Boolean = mergeEngine == "first-row"
  def deletionVectorsEnabled: Boolean = bool("deletion-vectors.enabled", default = false)
  def fileIndexReadEnabled: Boolean = bool("file-index.read.enabled", default = true)
  def splitTargetSize: Long = get("source.split.target-size").fold(128L << 20)(BitmapIndex.memorySize)
  def splitOpenFileCost: Long = get("source.split.open-file-cost").fold(4L << 20)(BitmapIndex.memorySize)
  def partitionDefaultName: String = get("partition.default-name").getOrElse("__DEFAULT_PARTITION__")
  def legacyPartitionName: Boolean = bool("partition.legacy-name", default = true)
  def dataFilePathDirectory: Option[String] = get("data-file.path-directory").filter(_.nonEmpty)
  def indexFileInDataFileDir: Boolean = bool("index-file-in-data-file-dir", default = false)
  def bucketFunction: String = get("bucket-function.type").fold("default")(_.trim.toLowerCase(java.util.Locale.ROOT))

  /** `sequence.field`: the columns that order a key's records before `_SEQUENCE_NUMBER`. */
  def sequenceFields: Seq[String] = get("sequence.field").toSeq.flatMap(_.split(",")).map(_.trim).filter(_.nonEmpty)
  def sequenceDescending: Boolean = get("sequence.field.sort-order").exists(_.trim.equalsIgnoreCase("descending"))

  /** Whether retract records (-U, -D) are ignored by the merge (`ignore-delete` and its
    * engine-specific fallback keys). */
  def ignoreDelete: Boolean =
    Seq("ignore-delete", "deduplicate.ignore-delete", "first-row.ignore-delete", "partial-update.ignore-delete").exists(bool(_, default = false))

  /** `CoreOptions.batchScanSkipLevel0`, for primary-key tables in the default `batch-scan-mode`. */
  def batchScanSkipLevel0: Boolean =
    (deletionVectorsEnabled || firstRow) && get("batch-scan-mode").forall(_.trim.equalsIgnoreCase("none"))

  /** What this reader does not implement, one line each (empty when the table is readable). */
  def unsupported(primaryKeyTable: Boolean): Seq[String] = {
    val out = Seq.newBuilder[String]
    if (primaryKeyTable && !Set("deduplicate", "first-row").contains(mergeEngine))
      out += s"merge-engine = $mergeEngine (deduplicate and first-row are read)"
    for (key <- Seq("row-tracking.enabled", "data-evolution.enabled") if bool(key, default = false)) out += s"$key = true"
    if (bucket == -2) out += "bucket = -2 (postpone buckets)"
    if (!Set("default", "mod").contains(bucketFunction)) out += s"bucket-function.type = $bucketFunction"
    if (get("batch-scan-mode").exists(!_.trim.equalsIgnoreCase("none"))) out += s"batch-scan-mode = ${get("batch-scan-mode").get}"
    if (!legacyPartitionName) out += "partition.legacy-name = false"
    out.result()
  }
}
