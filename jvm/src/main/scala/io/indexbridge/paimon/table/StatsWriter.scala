package io.indexbridge.paimon.table

import io.indexbridge.paimon.KeyType

/** One column's statistics as a format extractor gives them (`SimpleColStats`: internal values,
  * null = unknown). */
final case class ColumnStatistics(min: Any, max: Any, nullCount: Option[Long]) {
  def isNone: Boolean = min == null && max == null && nullCount.isEmpty
}

/** The statistics Paimon records for a data file (`StatsCollectorFactories`,
  * `SimpleColStatsCollector` modes, `SimpleStatsConverter`).
  *
  * {{{
  * mode      per column: fields.<name>.stats-mode, else truncate(128) for system columns
  *           (_KEY_*, _SEQUENCE_NUMBER, _VALUE_KIND), else none past
  *           metadata.stats-keep-first-n-columns, else metadata.stats-mode (truncate(16)), or
  *           the file's level in metadata.stats-mode.per.level
  * none      (null, null, null)     counts (null, null, n)     full   exact
  * truncate  strings cut to N code points: min the prefix, max the prefix with its last code
  *           point that can be raised raised by one (none: min and max null)
  * key stats all columns (toBinaryAllMode)
  * value     metadata.stats-dense-store (true): columns whose stats are all null dropped and
  *           named in _VALUE_STATS_COLS; nothing dropped: null
  * }}}
  */
object StatsWriter {
  private val Truncate = """truncate\((\d+)\)""".r

  /** The mode of each column of `fields` (the file's physical column names, in order). */
  def modes(fields: Seq[String], options: Map[String, String], level: Int): Seq[String] = {
    val perLevel = options.get("metadata.stats-mode.per.level").toSeq.flatMap(_.split(",")).map(_.trim).filter(_.nonEmpty)
      .flatMap(s => s.split(":") match { case Array(l, m) => Some(l.trim.toInt -> m.trim); case _ => None }).toMap
    val mode = perLevel.getOrElse(level, options.getOrElse("metadata.stats-mode", "truncate(16)")).trim.toLowerCase(java.util.Locale.ROOT)
    val keepFirst = options.get("metadata.stats-keep-first-n-columns").fold(-1)(_.trim.toInt)
    var counted = 0
    fields.map { f =>
      options.get(s"fields.$f.stats-mode").map(_.trim.toLowerCase(java.util.Locale.ROOT)) match {
        case Some(m) => counted += 1; m
        case None if f.startsWith("_KEY_") || f == "_SEQUENCE_NUMBER" || f == "_VALUE_KIND" => "truncate(128)"
        case None =>
          val m = if (keepFirst >= 0 && counted >= keepFirst) "none" else mode
          counted += 1
          m
      }
    }
  }

  /** `SimpleColStatsCollector.convert` of `mode` over extracted stats. */
  def convert(s: ColumnStatistics, mode: String): ColumnStatistics = mode match {
    case "none"   => ColumnStatistics(null, null, None)
    case "counts" => ColumnStatistics(null, null, s.nullCount)
    case "full"   => s
    case Truncate(n) =>
      val max = truncateMax(s.max, n.toInt)
      if (max == null) ColumnStatistics(null, null, s.nullCount)
      else ColumnStatistics(truncateMin(s.min, n.toInt), max, s.nullCount)
    case other => throw new IllegalArgumentException(s"unknown stats mode '$other'")
  }

  private def truncateMin(v: Any, n: Int): Any = v match {
    case s: String => prefix(s, n)
    case other     => other
  }

  private def prefix(s: String, n: Int): String =
    if (s.codePointCount(0, s.length) <= n) s else s.substring(0, s.offsetByCodePoints(0, n))

  /** `TruncateSimpleColStatsCollector.truncateMax`: null when no bound can be made. */
  private def truncateMax(v: Any, n: Int): Any = v match {
    case s: String =>
      val cut = prefix(s, n)
      if (cut.length == s.length) s
      else {
        val b = new java.lang.StringBuilder(cut)
        var i = n - 1
        var out: String = null
        while (out == null && i >= 0) {
          val at = b.offsetByCodePoints(0, i)
          val next = b.codePointAt(at) + 1
          if (next != 0 && Character.isValidCodePoint(next)) {
            b.setLength(at)
            b.appendCodePoint(next)
            out = b.toString
          }
          i -= 1
        }
        out
      }
    case other => other
  }

  /** Key stats: every column (toBinaryAllMode). */
  def allMode(stats: Seq[ColumnStatistics], types: Seq[KeyType]): SimpleStats =
    SimpleStats(ManifestFiles.serialize(stats.map(_.min), types), ManifestFiles.serialize(stats.map(_.max), types),
      Some(stats.map(_.nullCount).toIndexedSeq))

  /** Value stats in dense mode: the stats and `_VALUE_STATS_COLS` (None when nothing was dropped).
    * `types` are the columns' atomic types (None for nested columns, whose stats are none). */
  def denseMode(names: Seq[String], stats: Seq[ColumnStatistics], types: Seq[Option[KeyType]], dense: Boolean): (SimpleStats, Option[Seq[String]]) = {
    val kept = names.indices.filter(i => !dense || !stats(i).isNone)
    val ts = kept.map(i => types(i).getOrElse(KeyType.IntType)) // a nested column's stats are null
    val s = kept.map(stats)
    (SimpleStats(ManifestFiles.serialize(s.map(_.min), ts), ManifestFiles.serialize(s.map(_.max), ts), Some(s.map(_.nullCount).toIndexedSeq)),
      if (kept.size == names.size) None else Some(kept.map(names)))
  }
}
