package io.indexbridge.paimon.table

import java.nio.file.{Files, StandardOpenOption}

import scala.jdk.CollectionConverters._
import scala.util.chaining._

import com.fasterxml.jackson.databind.node.ObjectNode
import io.indexbridge.IndexFormatException
import io.indexbridge.reference.PaimonTables
import org.apache.paimon.fs.{Path => PaimonPath}
import org.apache.paimon.fs.local.LocalFileIO
import org.apache.paimon.table.{FileStoreTableFactory, FileStoreTable => PaimonFileStoreTable}
import org.scalatest.funsuite.AnyFunSuite

/** The table layer against Paimon 1.4.2 itself: for generated tables of every kind and Paimon's
  * answers to their reads ([[ReferenceTables]]), our plan has Paimon's splits (partition, bucket,
  * raw-convertible, files with level, row count and deletion file), our read-time pruning opens
  * the files Paimon's reader opened, our file-index verdicts are `FileIndexPredicate`'s; the
  * metadata readers agree with Paimon's; damaged tables fail with the library error naming the
  * file. */
class PaimonTableSpec extends AnyFunSuite {
  import ReferenceTables._

  private def paimonTable(path: String): PaimonFileStoreTable = FileStoreTableFactory.create(LocalFileIO.create(), new PaimonPath(path))

  private def ourPlan(t: Table, read: Read): Plan = {
    val table = FileStoreTable.open(t.path, read.snapshot)
    table.plan(read.where.map(table.predicate))
  }

  for (kind <- PaimonTables.Kinds) {
    test(s"$kind: plans, files read and file-index verdicts equal Paimon's") {
      val ofKind = tables.filter(_.kind == kind)
      assert(ofKind.size == seedsPerKind)
      info(s"${ofKind.map(_.seed).mkString(", ")}: ${io.indexbridge.Depth.describe}")
      var filtered = 0
      for (t <- ofKind; read <- t.reads) {
        val clue = s"${t.name} (seed ${t.seed}) snapshot ${read.answer.get("snapshot")} where ${read.where.getOrElse("-")}"
        withClue(clue) {
          val plan = ourPlan(t, read)
          assert(planJson(plan) == read.answer.get("plan"))
          val opened = plan.splits.flatMap(s => s.files.filter(FileIndexEvaluator.opened(plan, s, _)).map(_.name)).distinct.sorted
          assert(opened == read.answer.get("files_read").elements().asScala.map(_.asText).toList)
          val verdicts = if (read.where.isEmpty) Map.empty[String, String] else plan.files.flatMap { f =>
            FileIndexEvaluator.check(plan, f).map(c => f.name -> (if (c.remain) "remain" else "skip"))
          }.toMap
          assert(verdicts == read.answer.get("index_results").fields().asScala.map(e => e.getKey -> e.getValue.asText).toMap)
          if (read.where.isDefined && plan.files.size < planFileCount(t)) filtered += 1
        }
      }
      info(s"${ofKind.size} tables, ${ofKind.map(_.reads.size).sum} reads, $filtered of them pruned files; " +
        s"recipes Paimon could not make: ${refused.filter(_._1 == kind).map(r => s"${r._2} (${r._3})").mkString(", ")}")
    }
  }

  private def planFileCount(t: Table): Int = ourPlan(t, t.reads.head).files.size

  test("key filters projected out of ORs and ANDs that name other columns, as Paimon 1.4 picks them: Paimon's plans") {
    // `(v AND k >= a) OR k <= b` prunes files by key stats with `k >= a OR k <= b`
    // (PredicateProjectionConverter); the generated conditions seldom take this shape
    var pruned = 0
    for (t <- tables.filter(_.kind != "append")) withClue(s"${t.name} (seed ${t.seed}): ") {
      val paimon = paimonTable(t.path)
      val rows = PaimonWriteFixtures.internalRows(t.path)
      val fields = paimon.rowType().getFields.asScala.toIndexedSeq
      val key = paimon.schema().trimmedPrimaryKeys().asScala.head
      val k = fields.indexWhere(_.name == key)
      val others = fields.indices.filter(i => i != k && io.indexbridge.reference.PaimonAnswers.keyType(fields(i).`type`).isDefined &&
        fields(i).`type`.getTypeRoot.name != "TIME_WITHOUT_TIME_ZONE")
      val rnd = new scala.util.Random(t.seed)
      def values(i: Int): Seq[AnyRef] = {
        val getter = org.apache.paimon.data.InternalRow.createFieldGetter(fields(i).`type`, i)
        rows.flatMap(r => Option(getter.getFieldOrNull(r)))
      }
      def lit(i: Int): String = values(i).pipe(vs => PaimonTables.sqlLiteral(fields(i).`type`, vs(rnd.nextInt(vs.size))))
      def other(): String = {
        val i = others(rnd.nextInt(others.size))
        if (rnd.nextBoolean() || values(i).isEmpty) s"`${fields(i).name}` IS NOT NULL" else s"`${fields(i).name}` <> ${lit(i)}"
      }
      val kc = s"`$key`"
      val wheres = Seq(
        s"(${other()} AND $kc >= ${lit(k)}) OR $kc <= ${lit(k)}",
        s"($kc >= ${lit(k)} AND ${other()}) OR ($kc < ${lit(k)} AND ${other()})",
        s"$kc = ${lit(k)} OR ($kc = ${lit(k)} AND ${other()}) OR $kc = ${lit(k)}",
        s"(${other()} AND $kc > ${lit(k)}) OR (${other()} OR $kc < ${lit(k)})") // the second OR needs every child: no key filter
      for (where <- wheres) withClue(where) {
        val table = FileStoreTable.open(t.path)
        val plan = table.plan(Some(table.predicate(where)))
        assert(planJson(plan) == PaimonWriteFixtures.answer(t.path, Some(where)).get("plan"))
        if (plan.files.size < planFileCount(t)) pruned += 1
      }
    }
    assert(pruned > 0, "no condition pruned a file")
  }

  test("snapshots, schemas and index manifests read as Paimon reads them") {
    for (t <- tables) withClue(t.name) {
      val paimon = paimonTable(t.path)
      val table = FileStoreTable.open(t.path)
      val snapshot = table.snapshot.get
      val theirs = paimon.snapshotManager().latestSnapshot()
      assert(snapshot.id == theirs.id && snapshot.schemaId == theirs.schemaId)
      assert(snapshot.baseManifestList == theirs.baseManifestList && snapshot.deltaManifestList == theirs.deltaManifestList)
      assert(snapshot.indexManifest == Option(theirs.indexManifest) && snapshot.commitKind == theirs.commitKind.name)
      assert(new SnapshotManager(table.path).earliestSnapshotId.contains(paimon.snapshotManager().earliestSnapshotId().longValue))
      val schema = paimon.schema()
      assert(table.schema.id == schema.id)
      assert(table.schema.fields.map(f => (f.id, f.name)) == schema.fields.asScala.map(f => (f.id, f.name)).toList)
      assert(table.schema.fields.map(_.dataType.nullable) == schema.fields.asScala.map(_.`type`.isNullable).toList)
      assert(table.schema.fields.map(f => table.schema.keyTypeOf(f.name)) ==
        schema.fields.asScala.map(f => io.indexbridge.reference.PaimonAnswers.keyType(f.`type`)).toList)
      assert(table.schema.primaryKeys == schema.primaryKeys.asScala && table.schema.partitionKeys == schema.partitionKeys.asScala)
      assert(table.schema.options == schema.options.asScala.toMap - "path") // Paimon adds the table's path
      val ours = table.indexFiles(snapshot).map(f => (f.bucket, f.indexType, f.fileName, f.rowCount, f.dvRanges.map(_.size))).toSet
      val paimonIndex = Option(theirs.indexManifest).toSeq.flatMap(paimon.store().indexManifestFileFactory().create().read(_).asScala)
        .map(e => (e.bucket, e.indexFile.indexType, e.indexFile.fileName, e.indexFile.rowCount,
          Option(e.indexFile.dvRanges).map(_.size))).toSet
      assert(ours == paimonIndex)
      if (t.kind == "dynamic") assert(ours.exists(_._2 == "HASH"))
    }
  }

  test("BinaryRow reads what Paimon's BinaryRowWriter writes, and rejects truncated rows") {
    import io.indexbridge.paimon.{BinaryRow, KeyType}
    import org.apache.paimon.data.{BinaryString, Decimal, GenericRow, Timestamp}
    import org.apache.paimon.data.serializer.InternalRowSerializer
    import org.apache.paimon.types.DataTypes
    import org.apache.paimon.utils.SerializationUtils
    val r = new scala.util.Random(7)
    val types = Seq(
      DataTypes.BOOLEAN() -> KeyType.BooleanType, DataTypes.TINYINT() -> KeyType.TinyIntType,
      DataTypes.SMALLINT() -> KeyType.SmallIntType, DataTypes.INT() -> KeyType.IntType, DataTypes.BIGINT() -> KeyType.BigIntType,
      DataTypes.FLOAT() -> KeyType.FloatType, DataTypes.DOUBLE() -> KeyType.DoubleType, DataTypes.DATE() -> KeyType.DateType,
      DataTypes.DECIMAL(10, 2) -> KeyType.DecimalType(10, 2), DataTypes.DECIMAL(30, 5) -> KeyType.DecimalType(30, 5),
      DataTypes.STRING() -> KeyType.VarCharType(Int.MaxValue), DataTypes.BYTES() -> KeyType.VarBinaryType(Int.MaxValue),
      DataTypes.TIMESTAMP(3) -> KeyType.TimestampType(3), DataTypes.TIMESTAMP(9) -> KeyType.TimestampType(9),
      DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(6) -> KeyType.LocalZonedTimestampType(6))
    for (_ <- 0 until 300) {
      val chosen = Seq.fill(1 + r.nextInt(8))(types(r.nextInt(types.size)))
      val values: Seq[Any] = chosen.map { case (_, t) =>
        if (r.nextInt(5) == 0) null
        else t match {
          case KeyType.BooleanType => r.nextBoolean()
          case KeyType.TinyIntType => r.nextInt(256).toByte
          case KeyType.SmallIntType => r.nextInt(65536).toShort
          case KeyType.IntType | KeyType.DateType => r.nextInt()
          case KeyType.BigIntType => r.nextLong()
          case KeyType.FloatType => r.nextFloat() * 1000
          case KeyType.DoubleType => r.nextDouble() * 1e6
          case KeyType.DecimalType(p, s) => java.math.BigDecimal.valueOf(r.nextLong() % math.pow(10, math.min(p, 18)).toLong, s)
          case KeyType.VarCharType(_) => r.alphanumeric.take(r.nextInt(20)).mkString + (if (r.nextBoolean()) "é€" else "")
          case KeyType.VarBinaryType(_) => Array.fill(r.nextInt(20))(r.nextInt(256).toByte)
          case KeyType.TimestampType(p) => (r.nextLong() >> 24, if (p > 3) r.nextInt(1000000) else 0)
          case KeyType.LocalZonedTimestampType(_) => (r.nextLong() >> 24, r.nextInt(1000) * 1000)
          case other => fail(s"no generator for $other")
        }
      }
      val internal = values.zip(chosen).map {
        case (null, _) => null
        case (s: String, _) => BinaryString.fromString(s)
        case (d: java.math.BigDecimal, (_, KeyType.DecimalType(p, s))) => Decimal.fromBigDecimal(d, p, s)
        case ((millis: Long, nanos: Int), _) => Timestamp.fromEpochMillis(millis, nanos)
        case (v, _) => v.asInstanceOf[AnyRef]
      }
      val row = new InternalRowSerializer(chosen.map(_._1): _*).toBinaryRow(GenericRow.of(internal: _*)).copy()
      val bytes = SerializationUtils.serializeBinaryRow(row)
      val decoded = BinaryRow.deserialize(bytes, chosen.map(_._2), "row")
      decoded.zip(values).foreach {
        case (a: Array[Byte], b: Array[Byte]) => assert(a.sameElements(b))
        case (a, b)                           => assert(a == b)
      }
      val cut = 4 + r.nextInt(bytes.length - 4)
      if (cut < 4 + BinaryRow.nullBitsSize(chosen.size) + 8 * chosen.size)
        assertThrows[IndexFormatException](BinaryRow.deserialize(bytes.take(cut), chosen.map(_._2), "row"))
    }
  }

  // -- damaged tables -----------------------------------------------------------------------

  private def someTable(kind: String): Table = tables.find(t => t.kind == kind && t.latest > 2).get

  private def failsNaming(file: String)(body: => Any): IndexFormatException = {
    val e = intercept[IndexFormatException](body)
    assert(e.source.endsWith(file), s"error names ${e.source}, expected $file: ${e.getMessage}")
    e
  }

  test("a truncated manifest, a missing snapshot, a damaged schema: IndexFormatException naming the file") {
    for (kind <- PaimonTables.Kinds) withClue(kind) {
      val dir = copy(someTable(kind).path)
      val table = FileStoreTable.open(dir.toString)
      val manifestList = dir.resolve("manifest").resolve(table.snapshot.get.baseManifestList)
      val manifest = Manifest.readManifestList(manifestList).head.fileName
      val bytes = Files.readAllBytes(dir.resolve("manifest").resolve(manifest))
      withClue("truncated manifest") {
        Files.write(dir.resolve("manifest").resolve(manifest), bytes.take(bytes.length * 2 / 3))
        failsNaming(manifest)(FileStoreTable.open(dir.toString).plan(None))
      }
      withClue("missing manifest") {
        Files.delete(dir.resolve("manifest").resolve(manifest))
        failsNaming(manifest)(FileStoreTable.open(dir.toString).plan(None))
      }
      withClue("truncated manifest list") {
        val list = Files.readAllBytes(manifestList)
        Files.write(manifestList, list.take(list.length - 20))
        failsNaming(manifestList.getFileName.toString)(FileStoreTable.open(dir.toString).plan(None))
      }
      withClue("missing snapshot")(failsNaming("snapshot-999")(FileStoreTable.open(dir.toString, Some(999L))))
      withClue("damaged snapshot") {
        Files.write(dir.resolve("snapshot").resolve("snapshot-1"), "{\"id\": 1".getBytes)
        failsNaming("snapshot-1")(FileStoreTable.open(dir.toString, Some(1L)))
      }
      withClue("damaged schema") {
        Files.write(dir.resolve("schema").resolve(s"schema-${table.schema.id}"), "[]".getBytes)
        failsNaming(s"schema-${table.schema.id}")(FileStoreTable.open(dir.toString))
      }
    }
  }

  test("every manifest, manifest list and index manifest cut short anywhere: IndexFormatException naming it, or, cut where an Avro block ends, the entries before it") {
    val r = new scala.util.Random(3)
    for (kind <- PaimonTables.Kinds) withClue(kind) {
      val manifests = java.nio.file.Paths.get(someTable(kind).path).resolve("manifest")
      Files.list(manifests).iterator.asScala.toSeq.sortBy(_.toString).foreach { file =>
        val name = file.getFileName.toString
        val read: java.nio.file.Path => Seq[Any] =
          if (name.startsWith("manifest-list-")) Manifest.readManifestList
          else if (name.startsWith("index-manifest-")) Manifest.readIndexManifest
          else Manifest.readManifest
        val bytes = Files.readAllBytes(file)
        val entries = read(file)
        assert(entries.nonEmpty || name.startsWith("manifest-list-"))
        val cut = Files.createTempDirectory("cut").resolve(name)
        // A cut where an Avro block ends (the header's end, for the one block Paimon writes) leaves
        // a shorter, valid container file that no reader can tell from one written that way: those
        // cuts read the entries of the blocks before them; every other cut is an error.
        val boundaries = blockEnds(bytes)
        assert(boundaries.last == bytes.length && (boundaries.size >= 2 || entries.isEmpty))
        for (n <- boundaries.init) {
          Files.write(cut, bytes.take(n))
          // by value: the entries hold byte arrays (binary rows), which == compares by reference
          val before = read(cut)
          assert(before.map(byValue) == entries.take(before.size).map(byValue), s"$name cut at $n of ${bytes.length}: ${before.size} entries of ${entries.size}")
        }
        for (n <- (Seq(0, 3, bytes.length - 1) ++ Seq.fill(4)(r.nextInt(bytes.length))).filterNot(boundaries.contains)) {
          Files.write(cut, bytes.take(n))
          failsNaming(name)(read(cut))
        }
      }
    }
  }

  /** A manifest entry (case classes, options, sequences, byte arrays) as a value == compares. */
  private def byValue(x: Any): Any = x match {
    case a: Array[Byte] => a.toSeq
    case p: Product => p.productPrefix +: p.productIterator.map(byValue).toSeq
    case i: Iterable[_] => i.map(byValue).toSeq
    case other => other
  }

  /** The offsets where the Avro container file's header and each of its data blocks end. */
  private def blockEnds(bytes: Array[Byte]): Seq[Int] = {
    import org.apache.avro.file.{DataFileReader, SeekableByteArrayInput}
    import org.apache.avro.generic.{GenericDatumReader, GenericRecord}
    val reader = new DataFileReader[GenericRecord](new SeekableByteArrayInput(bytes), new GenericDatumReader[GenericRecord]())
    try {
      val ends = scala.collection.mutable.ArrayBuffer(reader.previousSync().toInt)
      while (reader.hasNext) {
        reader.nextBlock()
        ends += reader.previousSync().toInt
      }
      ends.toSeq
    } finally reader.close()
  }

  test("the LATEST hint: behind it falls back to listing as Paimon does; ahead of the snapshots it names the missing one") {
    val t = someTable("pk-dv")
    val dir = copy(t.path)
    val latest = dir.resolve("snapshot").resolve("LATEST")
    Files.write(latest, (t.latest - 2).toString.getBytes)
    assert(FileStoreTable.open(dir.toString).snapshot.get.id == t.latest)
    assert(planJson(FileStoreTable.open(dir.toString).plan(None)) == t.reads.head.answer.get("plan"))
    Files.delete(latest)
    assert(FileStoreTable.open(dir.toString).snapshot.get.id == t.latest)
    Files.write(latest, (t.latest + 5).toString.getBytes)
    failsNaming(s"snapshot-${t.latest + 5}")(FileStoreTable.open(dir.toString))
  }

  test("a deletion vector range past the end of its deletion file, a flipped byte: IndexFormatException naming it") {
    val withDv = FileStoreTable.open(PaimonWriteFixtures.withDeletionFile).plan(None).files.find(_.deletionFile.isDefined).get
    val dv = withDv.deletionFile.get
    assert(dv.load(withDv.name, withDv.meta.rowCount).cardinality == dv.cardinality)
    val tooFew = intercept[IndexFormatException](dv.load(withDv.name, dv.load(withDv.name, withDv.meta.rowCount).positions.last))
    assert(tooFew.expected.contains("positions below"))
    val bytes = Files.readAllBytes(dv.path)
    val name = dv.path.getFileName.toString
    val short = bytes.take(dv.offset + dv.length / 2)
    val e = failsNaming(name)(dv.load(withDv.name, withDv.meta.rowCount, short))
    info(e.getMessage)
    val flipped = bytes.clone()
    flipped(dv.offset + 6) = (flipped(dv.offset + 6) ^ 0x10).toByte
    failsNaming(name)(dv.load(withDv.name, withDv.meta.rowCount, flipped))
    val dir = copy(dv.path.getParent.getParent.toString)
    Files.write(dir.resolve("index").resolve(name), short, StandardOpenOption.TRUNCATE_EXISTING)
    failsNaming(name)(dv.copy(path = dir.resolve("index").resolve(name)).load(withDv.name, withDv.meta.rowCount))
  }

  test("tables this reader does not implement are refused with the options named") {
    val dir = copy(someTable("pk").path)
    val schemaFile = Files.list(dir.resolve("schema")).iterator.asScala.toSeq.maxBy(_.toString)
    // set in the parsed schema: a key inserted as text loses to the table's own, later in the object
    val json = mapper.readTree(Files.readAllBytes(schemaFile))
    json.get("options").asInstanceOf[ObjectNode].put("merge-engine", "aggregation").put("row-tracking.enabled", "true")
    Files.write(schemaFile, mapper.writerWithDefaultPrettyPrinter().writeValueAsBytes(json))
    val e = failsNaming(schemaFile.getFileName.toString)(FileStoreTable.open(dir.toString))
    assert(e.getMessage.contains("merge-engine = aggregation") && e.getMessage.contains("row-tracking.enabled = true"))
  }
}
