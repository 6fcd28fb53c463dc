package io.indexbridge.reference

import java.nio.file.{Files, Paths}
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._
import scala.util.Random

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode
import io.indexbridge.paimon.KeyType
import io.indexbridge.paimon.fileindex.{Condition, Op, Predicate => Tree}
import org.apache.paimon.data.{BinaryString, Decimal, InternalRow, Timestamp}
import org.apache.paimon.fileindex.FileIndexPredicate
import org.apache.paimon.fs.{Path => PaimonPath, SeekableInputStream}
import org.apache.paimon.fs.local.LocalFileIO
import org.apache.paimon.predicate.{Predicate, PredicateBuilder}
import org.apache.paimon.table.{FileStoreTable, FileStoreTableFactory}
import org.apache.paimon.table.source.DataSplit
import org.apache.paimon.types.{DataField, RowType}

/** Paimon's own answers about a table, from Paimon 1.4.2's reader: what the table layer must
  * reproduce. For one read (a snapshot, an optional condition in the language of
  * [[io.indexbridge.paimon.fileindex.Condition]]):
  *
  *  - `plan`: the splits of `ReadBuilder.withFilter(…).newScan().plan()` (partition, bucket,
  *    whether raw-convertible, each file with level, row count and deletion file);
  *  - `files_read`: the data files Paimon's reader opened for those splits (observed through
  *    the table's FileIO), so after the `.index` files and deletion vectors had their say;
  *  - `index_results`: per data file with a file index, `FileIndexPredicate`'s verdict;
  *  - `rows`: the rows Paimon's reader returns, kept when `Predicate.test` holds ([[Canonical]] JSON).
  *
  * `main` makes a whole suite in one JVM: `suite SPEC.json OUT.json` creates the tables of the
  * spec ([[PaimonTables]]) and answers, for each, unfiltered reads of the latest and an earlier
  * snapshot and seeded conditions over the values the table holds; `orders` makes the demo's and
  * the bench's table ([[PaimonTables.orders]]) and answers the given conditions (the rows of an
  * unfiltered read only up to a million: `row_count` always). */
object PaimonAnswers {
  private val mapper = new ObjectMapper()

  /** A local FileIO that remembers which data files were opened. */
  private final class RecordingFileIO extends LocalFileIO {
    val opened = new ConcurrentLinkedQueue[String]()
    override def newInputStream(path: PaimonPath): SeekableInputStream = {
      if (path.getName.startsWith("data-") && !path.getName.endsWith(".index")) opened.add(path.getName)
      super.newInputStream(path)
    }
  }

  def keyType(t: org.apache.paimon.types.DataType): Option[KeyType] =
    scala.util.Try(KeyType.parse(t.copy(true).asSQLString())).toOption

  /** A condition as Paimon's predicate over `rowType`; every leaf must bind exactly. */
  def paimonPredicate(where: String, rowType: RowType): Predicate = {
    val fields = rowType.getFields.asScala
    def field(name: String): DataField =
      fields.find(_.name == name).getOrElse(throw new IllegalArgumentException(s"no column '$name' in $rowType"))
    val bound = Condition.bind(Condition.parse(where), name => fields.find(_.name == name).flatMap(f => keyType(f.`type`)))
    val builder = new PredicateBuilder(rowType)
    def literal(f: DataField, v: Any): AnyRef = (v, keyType(f.`type`).get) match {
      case (s: String, _)                                        => BinaryString.fromString(s)
      case (d: java.math.BigDecimal, KeyType.DecimalType(p, s))  => Decimal.fromBigDecimal(d, p, s)
      case ((millis: Long, nanos: Int), _)                       => Timestamp.fromEpochMillis(millis, nanos)
      case (other, _)                                            => other.asInstanceOf[AnyRef]
    }
    def convert(t: Tree): Predicate = t match {
      case Tree.And(Nil) => throw new IllegalArgumentException(s"'$where' has a comparison no value of its column's type satisfies exactly")
      case Tree.And(cs)  => PredicateBuilder.and(cs.map(convert).asJava)
      case Tree.Or(cs)   => PredicateBuilder.or(cs.map(convert).asJava)
      case Tree.Leaf(op, column, lits) =>
        val f = field(column)
        leaf(builder, op, rowType.getFieldIndex(column), lits.map(literal(f, _)))
    }
    convert(bound)
  }

  /** One leaf as `PredicateBuilder` builds it, its literals already Paimon's internal values. */
  def leaf(builder: PredicateBuilder, op: Op, i: Int, ls: Seq[AnyRef]): Predicate = op match {
    case Op.Equal          => builder.equal(i, ls.head)
    case Op.NotEqual       => builder.notEqual(i, ls.head)
    case Op.LessThan       => builder.lessThan(i, ls.head)
    case Op.LessOrEqual    => builder.lessOrEqual(i, ls.head)
    case Op.GreaterThan    => builder.greaterThan(i, ls.head)
    case Op.GreaterOrEqual => builder.greaterOrEqual(i, ls.head)
    case Op.IsNull         => builder.isNull(i)
    case Op.IsNotNull      => builder.isNotNull(i)
    case Op.In             => builder.in(i, ls.asJava)
    case Op.NotIn          => builder.notIn(i, ls.asJava)
    case Op.Between        => builder.between(i, ls(0), ls(1))
  }

  private def open(tablePath: String, snapshot: Option[Long]): (FileStoreTable, RecordingFileIO) = {
    val io = new RecordingFileIO
    val table = FileStoreTableFactory.create(io, new PaimonPath(tablePath))
    (snapshot.fold(table)(id => table.copy(Map("scan.snapshot-id" -> id.toString).asJava)), io)
  }

  /** Paimon's answers for one read (see the object comment). */
  def answer(tablePath: String, snapshot: Option[Long], where: Option[String], keepRows: Boolean = true): ObjectNode = {
    val (table, io) = open(tablePath, snapshot)
    val rowType = table.rowType()
    val predicate = where.map(paimonPredicate(_, rowType))
    val readBuilder = predicate.fold(table.newReadBuilder())(p => table.newReadBuilder().withFilter(p))
    val splits = readBuilder.newScan().plan().splits().asScala.map(_.asInstanceOf[DataSplit]).toSeq
    val out = mapper.createObjectNode()
    out.put("snapshot", splits.headOption.map(_.snapshotId()).getOrElse(
      snapshot.getOrElse(Option(table.snapshotManager().latestSnapshotId()).map(_.longValue).getOrElse(0L))))
    where.foreach(out.put("where", _))
    val partitionType = table.schema().logicalPartitionType()
    val plan = out.putArray("plan")
    splits.foreach { s =>
      val split = plan.addObject()
      split.set[JsonNode]("partition", Canonical.row(partitionType, s.partition()))
      split.put("bucket", s.bucket()).put("raw_convertible", s.rawConvertible())
      val dvs = s.deletionFiles().orElse(null)
      val files = split.putArray("files")
      s.dataFiles().asScala.zipWithIndex.foreach { case (f, i) =>
        val file = files.addObject().put("file", f.fileName()).put("level", f.level()).put("row_count", f.rowCount())
        val dv = if (dvs == null) null else dvs.get(i)
        if (dv == null) file.putNull("deletion_file")
        else file.putObject("deletion_file").put("index_file", new PaimonPath(dv.path()).getName)
          .put("offset", dv.offset()).put("length", dv.length()).put("cardinality", dv.cardinality())
      }
    }
    val results = out.putObject("index_results")
    predicate.foreach { p =>
      splits.foreach { s =>
        val pathFactory = table.store().pathFactory().createDataFilePathFactory(s.partition(), s.bucket())
        s.dataFiles().asScala.foreach { f =>
          val fileRowType = table.schemaManager().schema(f.schemaId()).logicalRowType()
          val indexFile = f.extraFiles().asScala.find(_.endsWith(".index"))
          val index =
            if (f.embeddedIndex() != null) Some(new FileIndexPredicate(f.embeddedIndex(), fileRowType))
            else indexFile.map(n => new FileIndexPredicate(pathFactory.toAlignedPath(n, f), io, fileRowType))
          index.foreach { ip =>
            // by column name: the table's predicate (the generator only ever adds columns)
            try results.put(f.fileName(), if (ip.evaluate(p).remain()) "remain" else "skip")
            finally ip.close()
          }
        }
      }
    }
    io.opened.clear()
    val rows = out.arrayNode()
    var count = 0L
    val reader = readBuilder.newRead().createReader(splits.map(s => s: org.apache.paimon.table.source.Split).asJava)
    try reader.forEachRemaining { (row: InternalRow) =>
        if (predicate.forall(_.test(row))) {
          count += 1
          if (keepRows) rows.add(Canonical.row(rowType, row))
        }
      }
    finally reader.close()
    out.put("row_count", count)
    if (keepRows) out.set[JsonNode]("rows", rows)
    val read = out.putArray("files_read")
    io.opened.asScala.toSeq.distinct.sorted.foreach(read.add)
    out
  }

  // ------------------------------------------------------------------------------------------
  // Conditions over the values a table holds

  // RANGE: `c >= a AND c <= b`, which Paimon's PredicateBuilder turns into BETWEEN
  private val leafOps = Seq("=", "<>", "<", "<=", ">", ">=", "IN", "NOT IN", "IS NULL", "IS NOT NULL", "BETWEEN", "RANGE")

  /** `n` seeded conditions over the columns of `table`, with literals taken from `rows` (its
    * rows, internal values) or drawn at random. */
  def conditions(table: FileStoreTable, rows: Seq[InternalRow], seed: Long, n: Int): Seq[String] = {
    val r = PaimonTables.random(seed, "conditions")
    // columns the condition language has literals for (no TIME, no nested types)
    val fields = table.rowType().getFields.asScala.toIndexedSeq.zipWithIndex.filter { case (f, _) =>
      keyType(f.`type`).isDefined && f.`type`.getTypeRoot.name != "TIME_WITHOUT_TIME_ZONE"
    }
    def literal(f: DataField, i: Int): String = {
      val getter = InternalRow.createFieldGetter(f.`type`, i)
      val values = rows.flatMap(row => Option(getter.getFieldOrNull(row)))
      val v = if (values.nonEmpty && r.nextInt(5) != 0) values(r.nextInt(values.size)) else PaimonTables.sample(r, f.`type`)
      PaimonTables.sqlLiteral(f.`type`, v)
    }
    def leaf(among: IndexedSeq[(DataField, Int)] = fields): String = {
      val (f, i) = among(r.nextInt(among.size))
      val ordered = !Set("BOOLEAN", "BINARY", "VARBINARY").contains(f.`type`.getTypeRoot.name)
      val ops = if (ordered) leafOps else Seq("=", "<>", "IN", "NOT IN", "IS NULL", "IS NOT NULL")
      val name = s"`${f.name}`"
      ops(r.nextInt(ops.size)) match {
        case op @ ("IS NULL" | "IS NOT NULL") => s"$name $op"
        case op @ ("IN" | "NOT IN") => s"$name $op (${Seq.fill(1 + r.nextInt(3))(literal(f, i)).mkString(", ")})"
        case "BETWEEN"              => s"$name BETWEEN ${literal(f, i)} AND ${literal(f, i)}"
        case "RANGE"                => s"$name >= ${literal(f, i)} AND $name <= ${literal(f, i)}"
        case op                     => s"$name $op ${literal(f, i)}"
      }
    }
    def tree(depth: Int): String =
      if (depth == 0 || r.nextInt(3) == 0) leaf()
      else
        r.nextInt(4) match {
          case 0 => s"NOT (${tree(depth - 1)})"
          case 1 => s"(${tree(depth - 1)}) OR (${tree(depth - 1)})"
          case _ => s"(${tree(depth - 1)}) AND (${tree(depth - 1)})"
        }
    // primary-key tables: two more of the shape whose key filter Paimon 1.4 projects out of an OR
    // (`(c AND k > 1) OR k < 0` prunes files by the key stats with `k > 1 OR k < 0`), seldom drawn above
    val keys = table.schema().trimmedPrimaryKeys().asScala.toSet
    val keyFields = fields.filter { case (f, _) => keys.contains(f.name) }
    Seq.fill(n)(tree(2)) ++ (if (keyFields.isEmpty) Nil else Seq.fill(2)(s"((${tree(1)}) AND (${leaf(keyFields)})) OR (${leaf(keyFields)})"))
  }

  private def allRows(table: FileStoreTable): Seq[InternalRow] = {
    val builder = table.newReadBuilder()
    val reader = builder.newRead().createReader(builder.newScan().plan().splits())
    val serializer = new org.apache.paimon.data.serializer.InternalRowSerializer(table.rowType())
    val out = Seq.newBuilder[InternalRow]
    try reader.forEachRemaining((row: InternalRow) => out += serializer.copy(row))
    finally reader.close()
    out.result()
  }

  /** Creates the suite's tables and answers their reads (see the object comment). Spec:
    * `{"warehouse": DIR, "tables": [{"name", "kind", "seed", "rows"?, "commits"?, "conditions"?}]}`. */
  def suite(spec: JsonNode): ObjectNode = {
    val warehouse = spec.get("warehouse").asText
    val out = mapper.createObjectNode()
    val tables = out.putArray("tables")
    spec.get("tables").elements().asScala.foreach { t =>
      val kind = t.get("kind").asText
      val seed = t.get("seed").asLong
      val recipe = PaimonTables.recipe(kind, seed, t.path("rows").asInt(240), t.path("commits").asInt(4))
      val path = PaimonTables.create(warehouse, "db", t.get("name").asText, recipe)
      val table = FileStoreTableFactory.create(LocalFileIO.create(), new PaimonPath(path))
      val latest = table.snapshotManager().latestSnapshotId().longValue
      val node = tables.addObject().put("name", t.get("name").asText).put("kind", kind).put("seed", seed).put("path", path)
      node.put("latest_snapshot", latest)
      val reads = node.putArray("reads")
      reads.add(answer(path, None, None))
      val r = PaimonTables.random(seed, "snapshot")
      if (latest > 1) reads.add(answer(path, Some(1 + r.nextInt((latest - 1).toInt).toLong), None))
      conditions(table, allRows(table), seed, t.path("conditions").asInt(8)).foreach(w => reads.add(answer(path, None, Some(w))))
    }
    out
  }

  def main(args: Array[String]): Unit = args.toList match {
    case "suite" :: specPath :: outPath :: Nil =>
      val result = suite(mapper.readTree(Files.readAllBytes(Paths.get(specPath))))
      Files.write(Paths.get(outPath), mapper.writerWithDefaultPrettyPrinter().writeValueAsBytes(result))
    case "orders" :: warehouse :: rows :: buckets :: outPath :: conditions =>
      // the demo's and the bench's table: created once, then Paimon's answers for its reads
      val path = Paths.get(warehouse, "db.db", "orders")
      if (!Files.exists(path.resolve("snapshot"))) PaimonTables.orders(warehouse, "db", "orders", rows.toInt, buckets.toInt)
      val out = mapper.createObjectNode().put("path", path.toString)
      val reads = out.putArray("reads")
      val keepRows = rows.toLong <= 1000000L
      reads.add(answer(path.toString, None, None, keepRows))
      conditions.foreach(c => reads.add(answer(path.toString, None, Some(c))))
      Files.write(Paths.get(outPath), mapper.writeValueAsBytes(out))
    case "answers" :: requestsPath :: outPath :: Nil =>
      // Paimon's answers for [{"path", "where"}, ...] (latest snapshots), in one JVM
      val out = mapper.createArrayNode()
      mapper.readTree(Files.readAllBytes(Paths.get(requestsPath))).elements().asScala
        .foreach(r => out.add(answer(r.get("path").asText, None, Some(r.get("where").asText))))
      Files.write(Paths.get(outPath), mapper.writeValueAsBytes(out))
    case "answer" :: path :: rest =>
      val snapshot = rest.sliding(2).collectFirst { case "--snapshot" :: id :: Nil => id.toLong }
      val where = rest.sliding(2).collectFirst { case "--where" :: w :: Nil => w }
      println(mapper.writerWithDefaultPrettyPrinter().writeValueAsString(answer(path, snapshot, where)))
    case _ =>
      // thrown, not sys.exit: the mains also run inside a JVM that stays up (InProcess)
      throw new IllegalArgumentException("usage: PaimonAnswers suite SPEC.json OUT.json | orders WAREHOUSE ROWS BUCKETS OUT.json [CONDITION ...]"
        + " | answers REQUESTS.json OUT.json | answer TABLE_DIR [--snapshot ID] [--where COND]")
  }
}
