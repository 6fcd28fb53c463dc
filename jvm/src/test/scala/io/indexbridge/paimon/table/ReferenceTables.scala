package io.indexbridge.paimon.table

import java.nio.file.{Files, Path}
import java.time.{LocalDate, LocalDateTime, ZoneOffset}
import java.util.Base64

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.JsonNodeFactory
import io.indexbridge.paimon.KeyType
import io.indexbridge.reference.PaimonAnswers

/** Real Paimon tables of every kind over generated seeds, made once per test JVM by Paimon's own
  * Java API, with Paimon's answers for their reads ([[PaimonAnswers.suite]]): unfiltered reads of
  * the latest and an older snapshot, and generated conditions. */
object ReferenceTables {
  val mapper = new ObjectMapper()
  private val nodes = JsonNodeFactory.instance

  /** One read Paimon answered: the snapshot to open (None = latest), the condition, the answer. */
  final case class Read(snapshot: Option[Long], where: Option[String], answer: JsonNode)
  final case class Table(name: String, kind: String, seed: Long, path: String, latest: Long, reads: Seq[Read])

  /** Tables per kind (2 in the default run, 5 deep); seeds drawn from the run's seed
    * ([[io.indexbridge.Depth]]: the day's, so a failure reproduces with INDEXBRIDGE_TEST_SEED). A
    * recipe Paimon itself cannot make (its schema validation rejects first-row with deletion
    * vectors; its lookup compaction cannot name a local file after a partition value holding '/')
    * is replaced by the next seed. The first table of each kind is Parquet (a recipe draws ORC
    * one time in six, and Spark's reader reads Parquet only), so every kind has one that the
    * Spark tests compare row for row. */
  val seedsPerKind: Int = if (io.indexbridge.Depth.deep) 5 else 2
  private val seeds = new scala.util.Random(io.indexbridge.Depth.seed)

  lazy val warehouse: Path = Files.createTempDirectory("indexbridge-paimon-tables")

  /** Recipes Paimon could not make or answer, as (kind, seed, why). */
  val refused = scala.collection.mutable.ArrayBuffer.empty[(String, Long, String)]

  private def rootCause(e: Throwable): Throwable = if (e.getCause == null || e.getCause == e) e else rootCause(e.getCause)

  private def answered(kind: String, seed: Long, name: String): Option[JsonNode] = {
    val spec = mapper.createObjectNode().put("warehouse", warehouse.toString)
    spec.putArray("tables").addObject().put("name", name).put("kind", kind).put("seed", seed).put("rows", 200)
      .put("commits", 5).put("conditions", 10)
    try Some(mapper.readTree(mapper.writeValueAsString(PaimonAnswers.suite(spec))).get("tables").get(0)) // numbers normalised
    catch {
      case e: Exception => // Paimon's own failure: nothing to compare with
        refused += ((kind, seed, s"${rootCause(e).getClass.getSimpleName}: ${rootCause(e).getMessage}"))
        None
    }
  }

  lazy val tables: Seq[Table] =
    for {
      kind <- io.indexbridge.reference.PaimonTables.Kinds
      i <- 0 until seedsPerKind
    } yield {
      def parquet(seed: Long) = !io.indexbridge.reference.PaimonTables.recipe(kind, seed).options.get("file.format").contains("orc")
      val drawn = Iterator.continually(seeds.nextInt(1000000).toLong).filter(seed => i > 0 || parquet(seed))
      val t = Iterator.from(0).map(attempt => answered(kind, drawn.next(), s"${kind.replace('-', '_')}_${i}_$attempt"))
        .collectFirst { case Some(t) => t }.get
      val latest = t.get("latest_snapshot").asLong
      val reads = t.get("reads").elements().asScala.map { r =>
        val snapshot = r.get("snapshot").asLong
        Read(if (snapshot == latest) None else Some(snapshot), Option(r.get("where")).map(_.asText), r)
      }.toList
      Table(t.get("name").asText, t.get("kind").asText, t.get("seed").asLong, t.get("path").asText, latest, reads)
    }

  /** A value of a table column as [[io.indexbridge.reference.Canonical]] renders it. */
  def canonical(t: KeyType, v: Any): JsonNode = (t, v) match {
    case (_, null)                                 => nodes.nullNode()
    case (_, b: Boolean)                           => nodes.booleanNode(b)
    case (KeyType.DateType, d: Int)                => nodes.textNode(LocalDate.ofEpochDay(d.toLong).toString)
    case (_, n: Byte)                              => nodes.numberNode(n.toInt)
    case (_, n: Short)                             => nodes.numberNode(n.toInt)
    case (_, n: Int)                               => nodes.numberNode(n)
    case (_, n: Long)                              => nodes.numberNode(n)
    case (_, f: Float)                             => nodes.numberNode(f)
    case (_, d: Double)                            => nodes.numberNode(d)
    case (_, d: java.math.BigDecimal)              => nodes.textNode(d.toPlainString)
    case (_, s: String)                            => nodes.textNode(s)
    case (_, b: Array[Byte])                       => nodes.textNode(Base64.getEncoder.encodeToString(b))
    case (_, (millis: Long, nanos: Int)) =>
      val text = LocalDateTime.ofEpochSecond(Math.floorDiv(millis, 1000L), (Math.floorMod(millis, 1000L) * 1000000L + nanos).toInt,
        ZoneOffset.UTC).format(java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSS"))
      nodes.textNode(if (t.isInstanceOf[KeyType.LocalZonedTimestampType]) text + "Z" else text)
    case other => throw new IllegalArgumentException(s"no canonical form for $other")
  }

  /** Our plan in the form of Paimon's answer (`plan`). */
  def planJson(plan: Plan): JsonNode = {
    val schema = plan.table.schema
    val out = nodes.arrayNode()
    plan.splits.foreach { s =>
      val split = out.addObject()
      val partition = split.putObject("partition")
      schema.partitionKeys.zip(s.partition).foreach { case (k, v) => partition.set[JsonNode](k, canonical(schema.keyTypeOf(k).get, v)) }
      split.put("bucket", s.bucket).put("raw_convertible", s.rawConvertible)
      val files = split.putArray("files")
      s.files.foreach { f =>
        val file = files.addObject().put("file", f.name).put("level", f.meta.level).put("row_count", f.meta.rowCount)
        f.deletionFile match {
          case None     => file.putNull("deletion_file")
          case Some(dv) => file.putObject("deletion_file").put("index_file", dv.path.getFileName.toString)
            .put("offset", dv.offset).put("length", dv.length).put("cardinality", dv.cardinality)
        }
      }
    }
    mapper.readTree(mapper.writeValueAsString(out))
  }

  /** Copies a table directory (for damaging it). */
  def copy(path: String): Path = {
    val target = Files.createTempDirectory("indexbridge-damaged").resolve("t")
    val source = java.nio.file.Paths.get(path)
    Files.walk(source).iterator.asScala.foreach(p => Files.copy(p, target.resolve(source.relativize(p).toString)))
    target
  }
}
