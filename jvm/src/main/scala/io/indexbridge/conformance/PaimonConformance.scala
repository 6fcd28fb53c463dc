package io.indexbridge.conformance

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}
import java.util.HexFormat

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import io.indexbridge.IndexFormatException
import io.indexbridge.bytes.ByteReader
import io.indexbridge.paimon.fileindex.FastHash
import io.indexbridge.paimon._

/** Runs the Paimon golden vectors (`vectors/paimon`, README there) against the Scala codecs:
  * decode each reference binary and compare everything the case's JSON says a reader must
  * report, then encode from the JSON input and compare bytes.
  *
  * {{{
  * manifest entry  {format, case, json, bin?, extra_bins?}   paths relative to the vectors dir
  * dv32 / dv64     single DV frame, or "kind": "deletion_file" (index_files, rolling or not)
  * hash            HASH index file (+ keys: BinaryRow bytes and hash of typed keys)
  * hashes          reference values of the hash functions
  * }}}
  */
object PaimonConformance {
  val formats: Set[String] = Set("dv32", "dv64", "hash", "hashes")

  private val hex = HexFormat.of()

  /** Failure messages of one manifest case (empty = pass). With `outDir`, every encoded file is
    * written to `outDir` under the reference binary's relative path. */
  def checkCase(vectorsDir: java.nio.file.Path, entry: JsonNode, outDir: Option[java.nio.file.Path]): Seq[String] = {
    Report.of(vectorsDir, entry) { (json, caseDir, report) =>
      val c = new Case(vectorsDir, caseDir, entry, json, outDir, report)
      entry.path("format").asText match {
        case "dv32" | "dv64" if json.path("kind").asText == "deletion_file" => c.deletionFile()
        case "dv32" | "dv64"                                               => c.deletionVector()
        case "hash"                                                        => c.hashIndex()
        case "hashes"                                                      => c.hashFunctions()
        case other                                                         => report.fail(s"format $other not supported by engine jvm")
      }
    }
  }

  private final class Case(
      vectorsDir: Path,
      caseDir: Path,
      entry: JsonNode,
      json: JsonNode,
      outDir: Option[Path],
      report: Report
  ) {
    import report._

    private val files = new CaseFiles(vectorsDir, outDir, report)
    import files._

    def deletionVector(): Unit = {
      val binPath = Paths.get(entry.path("bin").asText)
      val (bin, source) = read(binPath)
      val bitmap64 = json.path("bitmap64").asBoolean

      attempt("decode")(DeletionVector.deserialize(bin, source)).foreach { dv =>
        expect("bitmap64", bitmap64, dv.bitmap64)
        expectPositions("positions", json.path("positions"), dv)
        expect("cardinality", json.path("cardinality").asLong, dv.cardinality)
        expect("index_meta_length", json.path("index_meta_length").asInt, dv.indexMetaLength)
        attempt("frame header") {
          val frame = ByteReader(bin, source)
          val size = frame.i32BE("size field")
          expect("size_field", json.path("size_field").asInt, size)
          expect("magic_bytes_hex", json.path("magic_bytes_hex").asText, hex.formatHex(frame.take(4, "magic")))
          frame.skip(size - 4, "bitmap")
          expect("crc32", java.lang.Long.parseLong(json.path("crc32").asText.stripPrefix("0x"), 16).toInt, frame.i32BE("crc"))
        }
        for (check <- json.path("checks").asScala) {
          val position = check.path("position").asLong
          expect(s"isDeleted($position)", check.path("deleted").asBoolean, dv.isDeleted(position))
        }
      }

      attempt("encode")(DeletionVector.fromPositions(positionsOf(json.path("positions")), bitmap64)).foreach { dv =>
        val bytes = dv.serialize()
        expectBytes("encoded bytes", bin, bytes)
        expect("serializedSize", bytes.length, dv.serializedSize)
        output(binPath, bytes)
      }
    }

    def deletionFile(): Unit = {
      val bitmap64 = json.path("bitmap64").asBoolean
      val dataFiles = json.path("data_files").fields.asScala.map(e => e.getKey -> e.getValue).toList
      val expectedByName = dataFiles.toMap
      val indexFiles = json.path("index_files").asScala.toList

      for (file <- indexFiles) {
        val name = file.path("bin").asText
        val (bin, source) = read(caseDir.resolve(name))
        val ranges = rangesOf(file)
        expect(s"$name: file_size", file.path("file_size").asLong, bin.length.toLong)
        expect(s"$name: row_count", file.path("row_count").asInt, ranges.length)
        attempt(s"$name: read")(DeletionFile.read(bin, ranges, source)).foreach { dvs =>
          for ((dataFile, dv) <- dvs) {
            expect(s"$name: $dataFile: bitmap64", bitmap64, dv.bitmap64)
            expectPositions(s"$name: $dataFile: positions", expectedByName(dataFile).path("positions"), dv)
            expect(s"$name: $dataFile: cardinality", expectedByName(dataFile).path("cardinality").asLong, dv.cardinality)
          }
        }
        expectSeq(s"$name: frame offsets", ranges.map(_.offset), DeletionFile.scan(bin, source).map(_._1))
      }

      val givenOrder = json.path("input_iteration_order").asScala.map(_.asText).toList
      val hashMapOrder = json.path("input_map").asText.startsWith("java.util.HashMap")
      if (hashMapOrder) expectSeq("HashMap order of data_files", givenOrder, DeletionFile.order(dataFiles.map(_._1)))
      val inputs = attempt("build deletion vectors") {
        val dvs = dataFiles.map { case (name, node) => name -> DeletionVector.fromPositions(positionsOf(node.path("positions")), bitmap64) }
        if (hashMapOrder) dvs else givenOrder.map(name => name -> dvs.toMap.apply(name))
      }
      val targetSize =
        if (json.path("writer").asText == "writeWithRolling") json.path("rolling_target_size_bytes").asLong else -1L
      for (dvs <- inputs; files <- attempt("encode")(DeletionFile.encode(dvs, targetSize, hashMapOrder))) {
        expect("number of files", indexFiles.length, files.length)
        for (((bytes, ranges), i) <- files.zipWithIndex) {
          val name = indexFiles.lift(i).map(_.path("bin").asText).getOrElse(s"${entry.path("case").asText}-$i.bin")
          indexFiles.lift(i).foreach { file =>
            expectBytes(s"$name: encoded bytes", Files.readAllBytes(vectorsDir.resolve(caseDir.resolve(name))), bytes)
            expectSeq(s"$name: encoded ranges", rangesOf(file), ranges)
            expect(s"$name: encoded file_size", file.path("file_size").asLong, bytes.length.toLong)
            expect(s"$name: encoded row_count", file.path("row_count").asInt, ranges.length)
          }
          output(caseDir.resolve(name), bytes)
        }
      }
    }

    def hashIndex(): Unit = {
      val binPath = Paths.get(entry.path("bin").asText)
      val (bin, source) = read(binPath)
      val hashes = json.path("hashes").asScala.map(_.asInt).toArray
      expect("file_size", json.path("file_size").asLong, bin.length.toLong)
      attempt("decode")(HashIndex.decode(bin, source)).foreach { decoded =>
        expectSeq("hashes", hashes.toSeq, decoded.toSeq)
        expect("row_count", json.path("row_count").asInt, decoded.length)
      }
      if (json.has("keys")) {
        val typeNodes = json.path("key_type").asScala.toList
        attempt("key_type")(typeNodes.map(t => KeyType.parse(t.path("sql").asText))).foreach { types =>
          for ((key, i) <- json.path("keys").asScala.zipWithIndex) {
            attempt(s"keys[$i]")(key.path("key").asScala.toList.zip(types).map { case (v, t) => typedValue(v, t) }).foreach {
              values =>
                expect(s"keys[$i]: binary_row_hex", key.path("binary_row_hex").asText, hex.formatHex(KeyHash.binaryRow(values, types)))
                expect(s"keys[$i]: hash", key.path("hash").asInt, KeyHash.hash(values, types))
            }
          }
        }
      }
      attempt("encode")(HashIndex.encode(hashes)).foreach { bytes =>
        expectBytes("encoded bytes", bin, bytes)
        output(binPath, bytes)
      }
    }

    def hashFunctions(): Unit = {
      for (e <- json.path("binary_string_hash_code").asScala) {
        val utf8 = e.path("utf8").asText
        val bytes = hex.parseHex(e.path("utf8_hex").asText)
        expect(s"utf8_hex of '$utf8'", e.path("utf8_hex").asText, hex.formatHex(utf8.getBytes(StandardCharsets.UTF_8)))
        expect(s"binary_string_hash_code('$utf8')", e.path("hash_code").asInt, PaimonHash.murmurBytes(bytes, 0, bytes.length))
      }
      for (e <- json.path("java_string_hash_code").asScala) {
        val s = e.path("string").asText
        expect(s"java_string_hash_code('$s')", e.path("hash_code").asInt, JavaOrder.javaStringHash(s))
      }
      for (e <- json.path("xxh64_seed0").asScala) {
        val input = e.path("input_hex").asText
        expect(s"xxh64($input)", e.path("xxh64").asText.toLong, FastHash.xxh64(hex.parseHex(input)))
      }
      for (e <- json.path("fasthash").asScala) {
        val (t, v) = (e.path("type"), e.path("value"))
        val hash = t.path("root").asText match {
          case "CHAR" | "VARCHAR" => FastHash.hashString(v.asText)
          case "BINARY" | "VARBINARY" => FastHash.xxh64(hex.parseHex(v.asText))
          case "FLOAT" => FastHash.hashFloat(java.lang.Float.intBitsToFloat(java.lang.Long.parseLong(v.asText.drop(2), 16).toInt))
          case "DOUBLE" => FastHash.hashDouble(java.lang.Double.longBitsToDouble(java.lang.Long.parseUnsignedLong(v.asText.drop(2), 16)))
          case root if root.startsWith("TIMESTAMP") =>
            FastHash.hashTimestamp(v.path("millis").asLong, v.path("nanos").asInt, t.path("precision").asInt)
          case _ => FastHash.hashIntegral(v.asText.toLong)
        }
        expect(s"FastHash(${t.path("sql").asText} $v)", e.path("hash64").asText.toLong, hash)
      }
    }

    private def rangesOf(indexFile: JsonNode): Seq[DeletionVectorRange] =
      indexFile.path("dv_ranges").asScala.toList.map { r =>
        DeletionVectorRange(r.path("data_file").asText, r.path("offset").asInt, r.path("length").asInt, r.path("cardinality").asLong)
      }

    private def expectPositions(what: String, rowSet: JsonNode, dv: DeletionVector): Unit = {
      expect(s"$what: cardinality", rowSet.path("cardinality").asLong, dv.cardinality)
      val expected = rowSet.path("ranges").asScala.toList.map(r => (r.get(0).asLong, r.get(1).asLong))
      expectSeq(s"$what: ranges", expected, halfOpenRanges(dv.foreachPosition))
    }
  }

  /** The positions of a row set `{"cardinality", "ranges": [[start, end), …]}`. */
  private[conformance] def positionsOf(rowSet: JsonNode): Array[Long] = {
    val out = Array.newBuilder[Long]
    for (r <- rowSet.path("ranges").asScala; p <- r.get(0).asLong until r.get(1).asLong) out += p
    out.result()
  }

  /** The half-open ranges `[start, end)` of the ascending positions `each` visits (a DV's, a
    * row set's): how the vectors record them. */
  private[conformance] def halfOpenRanges(each: (Long => Unit) => Unit): Seq[(Long, Long)] = {
    val out = ArrayBuffer.empty[(Long, Long)]
    var start, end = -1L
    each { p =>
      if (p != end) {
        if (start >= 0) out += ((start, end))
        start = p
      }
      end = p + 1
    }
    if (start >= 0) out += ((start, end))
    out.toList
  }

  /** A JSON key value (vectors README, "Value encoding") as the value KeyHash takes. */
  private[conformance] def typedValue(node: JsonNode, keyType: KeyType): Any = {
    import KeyType._
    if (node.isNull) null
    else
      keyType match {
        case BooleanType                          => node.asBoolean
        case TinyIntType                          => node.asInt.toByte
        case SmallIntType                         => node.asInt.toShort
        case IntType | DateType | TimeType(_)     => node.asInt
        case BigIntType                           => node.asText.toLong
        case FloatType                            => java.lang.Float.intBitsToFloat(java.lang.Long.parseLong(node.asText.stripPrefix("0x"), 16).toInt)
        case DoubleType                           => java.lang.Double.longBitsToDouble(java.lang.Long.parseUnsignedLong(node.asText.stripPrefix("0x"), 16))
        case CharType(_) | VarCharType(_)         => node.asText
        case BinaryType(_) | VarBinaryType(_)     => hex.parseHex(node.asText)
        case DecimalType(_, _)                    => new java.math.BigDecimal(node.asText)
        case TimestampType(_) | LocalZonedTimestampType(_) => (node.path("millis").asLong, node.path("nanos").asInt)
      }
  }
}

/** Collects failures; a check that throws becomes a failure instead of ending the case. */
private[conformance] final class Report {
  val failures = ArrayBuffer.empty[String]

  def fail(message: String): Unit = failures += message

  def attempt[T](what: String)(body: => T): Option[T] =
    try Some(body)
    catch {
      case e: IndexFormatException => fail(s"$what: ${e.getMessage}"); None
      case NonFatal(e)             => fail(s"$what: ${e.getClass.getSimpleName}: ${e.getMessage}"); None
    }

  def expect[T](what: String, expected: T, actual: => T): Unit =
    attempt(what)(actual).foreach(a => if (a != expected) fail(s"$what: expected $expected, got $a"))

  def expectSeq[T](what: String, expected: Seq[T], actual: => Seq[T]): Unit =
    attempt(what)(actual).foreach { a =>
      if (a != expected) {
        val i = expected.zip(a).indexWhere { case (x, y) => x != y }
        val where =
          if (i >= 0) s"first difference at #$i: expected ${expected(i)}, got ${a(i)}"
          else s"expected ${expected.length} items, got ${a.length}"
        fail(s"$what: $where")
      }
    }

  def expectBytes(what: String, expected: Array[Byte], actual: => Array[Byte]): Unit =
    attempt(what)(actual).foreach { a =>
      if (!java.util.Arrays.equals(a, expected)) {
        val i = java.util.Arrays.mismatch(a, expected)
        fail(s"$what: ${a.length} bytes differ from the reference's ${expected.length} at offset $i")
      }
    }
}

private[conformance] object Report {
  private val mapper = new ObjectMapper

  /** Failure messages of one manifest case (empty = pass): `check` gets the case's JSON, the
    * directory of its files (relative to the vectors dir) and the report to fill. */
  def of(vectorsDir: Path, entry: JsonNode)(check: (JsonNode, Path, Report) => Unit): Seq[String] = {
    val report = new Report
    report.attempt("case") {
      val jsonPath = Paths.get(entry.path("json").asText)
      val json = mapper.readTree(vectorsDir.resolve(jsonPath).toFile)
      check(json, Option(jsonPath.getParent).getOrElse(Paths.get("")), report)
    }
    report.failures.toList
  }
}

/** The files of one case: reference binaries read from the vectors directory, encoded files
  * written under `outDir` (the `--out` option) at the reference binary's relative path. */
private[conformance] final class CaseFiles(vectorsDir: Path, outDir: Option[Path], report: Report) {
  import report._

  def read(relative: Path): (Array[Byte], String) = {
    val path = vectorsDir.resolve(relative)
    (Files.readAllBytes(path), path.toString)
  }

  def output(relative: Path, bytes: Array[Byte]): Unit =
    outDir.foreach { dir =>
      attempt(s"write $relative") {
        val target = dir.resolve(relative)
        Option(target.getParent).foreach(Files.createDirectories(_))
        Files.write(target, bytes)
      }
    }
}

/** The conformance entry point the Python CLI calls through py4j (only paths and JSON cross). */
object Conformance {
  private val mapper = new ObjectMapper

  private val checkers: Map[String, (Path, JsonNode, Option[Path]) => Seq[String]] =
    PaimonConformance.formats.iterator.map(f => f -> (PaimonConformance.checkCase _)).toMap ++
      FileIndexConformance.formats.iterator.map(f => f -> (FileIndexConformance.checkCase _))

  /** Runs every case of `vectorsDir/manifest.json` whose format is in `only` (comma-separated;
    * empty = all), writing encoded files under `outDir` unless it is empty. Returns a JSON array
    * `[{"format", "case", "failures": [...]}]`, one element per case. */
  def run(vectorsDir: String, only: String, outDir: String): String = {
    val dir = Paths.get(vectorsDir)
    val manifest = mapper.readTree(dir.resolve("manifest.json").toFile)
    val selected = only.split(',').map(_.trim).filter(_.nonEmpty).toSet
    val out = Option(outDir).filter(_.nonEmpty).map(Paths.get(_))
    val results = mapper.createArrayNode()
    // a zap manifest names its format once, at the top level
    val manifestFormat = Option(manifest.get("format")).map(_.asText)
    for (entry <- manifest.path("cases").asScala) {
      val format = Option(entry.get("format")).map(_.asText).orElse(manifestFormat).getOrElse("")
      if (selected.isEmpty || selected(format)) {
        val failures = (if (format == "zap") Some(ZapConformance.checkCase _) else checkers.get(format)) match {
          case Some(check) => check(dir, entry, out)
          case None        => Seq(s"format $format not supported by engine jvm")
        }
        val result = results.addObject()
        result.put("format", format)
        result.put("case", entry.path("case").asText)
        val list = result.putArray("failures")
        failures.foreach(list.add)
      }
    }
    mapper.writeValueAsString(results)
  }
}
