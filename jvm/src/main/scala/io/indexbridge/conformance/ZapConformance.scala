package io.indexbridge.conformance

import java.io.InputStream
import java.nio.ByteBuffer
import java.nio.charset.{CodingErrorAction, StandardCharsets}
import java.nio.file.{Files, Path}
import java.util.HexFormat
import java.util.zip.GZIPInputStream

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.JsonNodeFactory
import io.indexbridge.zap._
import org.roaringbitmap.RoaringBitmap

/** Runs the zap golden vectors (`vectors/zap`, README there) against the Scala codecs.
  *
  * {{{
  * manifest   {"format": "zap", "cases": [{case, kind, json (.json or .json.gz), zap, merge_inputs}]}
  * build      decode <case>.zap and compare with `segment`; encode from `input` and compare bytes
  * merge      decode and compare; open merge.inputs (each also decoded and compared), apply
  *            merge.drops, merge at `chunk_factor`, compare bytes and merge.new_doc_nums
  * }}}
  * A reader's report is rebuilt as JSON in the `segment` schema and compared node by node.
  */
object ZapConformance {
  private val mapper = new ObjectMapper
  private val nodes = JsonNodeFactory.instance
  private val hex = HexFormat.of()
  private final val MaxFailures = 20

  /** Failure messages of one manifest case (empty = pass). */
  def checkCase(dir: Path, entry: JsonNode, outDir: Option[Path]): Seq[String] = {
    val failures = ArrayBuffer.empty[String]
    def fail(m: String): Unit = if (failures.length < MaxFailures) failures += m
    def attempt[T](what: String)(body: => T): Option[T] =
      try Some(body)
      catch { case NonFatal(e) => fail(s"$what: ${e.getClass.getSimpleName}: ${e.getMessage}"); None }

    attempt("case") {
      val json = readJson(dir.resolve(entry.path("json").asText))
      val zapName = entry.path("zap").asText
      val reference = Files.readAllBytes(dir.resolve(zapName))
      val chunkFactor = json.path("chunk_factor").asInt(SegmentWriter.DefaultChunkFactor)
      attempt("decode")(checkSegment(SegmentReader(reference, zapName), reference.length, json.path("segment"), s"$zapName: ", fail))

      def compareBytes(bytes: Array[Byte]): Unit = {
        if (!java.util.Arrays.equals(bytes, reference))
          fail(s"encoded bytes: ${bytes.length} bytes differ from the reference's ${reference.length} at offset ${java.util.Arrays.mismatch(bytes, reference)}")
        outDir.foreach { o =>
          val target = o.resolve(zapName)
          Option(target.getParent).foreach(Files.createDirectories(_))
          Files.write(target, bytes)
        }
      }

      json.path("kind").asText match {
        case "build" =>
          attempt("encode")(SegmentWriter.build(documents(json.path("input")), chunkFactor)).foreach(compareBytes)
        case "merge" =>
          val m = json.path("merge")
          val inputs = m.path("inputs").asScala.map(_.asText).toIndexedSeq
          val segments = inputs.map { name =>
            val bytes = Files.readAllBytes(dir.resolve(s"$name.zap"))
            val seg = SegmentReader(bytes, s"$name.zap")
            attempt(s"decode $name")(checkSegment(seg, bytes.length, readJson(jsonOf(dir, name)).path("segment"), s"$name.zap: ", fail))
            seg
          }
          val drops = m.path("drops").asScala.map { d =>
            if (d.isNull) null else RoaringBitmap.bitmapOf(d.asScala.map(_.asInt).toSeq: _*)
          }.toIndexedSeq
          attempt("merge")(Merge.merge(segments, drops, chunkFactor)).foreach { r =>
            compareBytes(r.bytes)
            val expected = m.path("new_doc_nums")
            val actual: JsonNode =
              if (r.newDocNums.forall(_.isEmpty) && expected.isNull) nodes.nullNode()
              else {
                val a = nodes.arrayNode()
                r.newDocNums.foreach(ns => ns.foldLeft(a.addArray())((x, v) => x.add(v)))
                a
              }
            diff("new_doc_nums", expected, actual, fail)
          }
        case other => fail(s"kind $other not supported by engine jvm")
      }
    }
    failures.toList
  }

  private def jsonOf(dir: Path, name: String): Path = {
    val plain = dir.resolve(s"$name.json")
    if (Files.exists(plain)) plain else dir.resolve(s"$name.json.gz")
  }

  private def readJson(path: Path): JsonNode = {
    val in: InputStream = {
      val raw = Files.newInputStream(path)
      if (path.toString.endsWith(".gz")) new GZIPInputStream(raw, 1 << 16) else raw
    }
    try mapper.readTree(in)
    finally in.close()
  }

  /** Bytes of a JSON byte string: UTF-8 text, or {"hex": "…"}. */
  def bytesOf(node: JsonNode): Array[Byte] =
    if (node.isObject) hex.parseHex(node.path("hex").asText) else node.asText.getBytes(StandardCharsets.UTF_8)

  /** A byte string as the vectors write it. */
  private def byteNode(b: Array[Byte]): JsonNode = {
    val decoder = StandardCharsets.UTF_8.newDecoder.onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT)
    try nodes.textNode(decoder.decode(ByteBuffer.wrap(b)).toString)
    catch { case _: java.nio.charset.CharacterCodingException => nodes.objectNode().put("hex", hex.formatHex(b)) }
  }

  private def longs(node: JsonNode): Array[Long] = node.asScala.map(_.asLong).toArray

  private def options(node: JsonNode): FieldOptions =
    FieldOptions(node.path("index").asBoolean, node.path("store").asBoolean, node.path("term_vectors").asBoolean, node.path("doc_values").asBoolean)

  private def tokens(node: JsonNode): IndexedSeq[Token] =
    if (node.isNull || node.isMissingNode) IndexedSeq.empty
    else
      node.asScala.map { t =>
        val locs = t.get(2).asScala.map(l => Location(l.get(0).asText, l.get(1).asLong, l.get(2).asLong, l.get(3).asLong, longs(l.get(4)))).toIndexedSeq
        Token(bytesOf(t.get(0)), t.get(1).asInt, locs)
      }.toIndexedSeq

  /** The writer input of a build case. */
  def documents(input: JsonNode): IndexedSeq[Document] =
    input.asScala.map { d =>
      val fields = d.path("fields").asScala.map { f =>
        DocField(f.path("name").asText, f.path("type").asText.charAt(0).toByte, bytesOf(f.path("value")), longs(f.path("array_positions")),
          options(f.path("options")), f.path("length").asInt, tokens(f.path("tokens")))
      }.toIndexedSeq
      val composites = d.path("composite_fields").asScala.map { c =>
        CompositeField(c.path("name").asText, options(c.path("options")), c.path("length").asInt, tokens(c.path("tokens")))
      }.toIndexedSeq
      Document(d.path("id").asText, fields, composites)
    }.toIndexedSeq

  /** Compares what the reader reports about `seg` with the vector's `segment` description. */
  def checkSegment(seg: SegmentReader, fileSize: Int, expected: JsonNode, prefix: String, fail: String => Unit): Unit = {
    val ex = expected
    def cmp(path: String, e: JsonNode, a: => JsonNode): Unit =
      try diff(prefix + path, e, a, fail)
      catch { case NonFatal(t) => fail(s"$prefix$path: ${t.getClass.getSimpleName}: ${t.getMessage}") }
    cmp("file_size", ex.path("file_size"), nodes.numberNode(fileSize))
    cmp("crc_ok", ex.path("crc_ok"), nodes.booleanNode(seg.crcOk))
    cmp("footer", ex.path("footer"), {
      val f = seg.footer
      nodes.objectNode().put("num_docs", f.numDocs).put("stored_index_offset", f.storedIndexOffset)
        .put("fields_index_offset", f.fieldsIndexOffset).put("doc_value_offset", java.lang.Long.toUnsignedString(f.docValueOffset))
        .put("chunk_factor", f.chunkFactor.toLong & 0xffffffffL).put("version", f.version.toLong).put("crc", f.crc.toLong & 0xffffffffL)
    })
    cmp("fields", ex.path("fields"), {
      val a = nodes.arrayNode()
      for (f <- seg.fields) {
        val o = a.addObject().put("id", f.id).put("name", f.name).put("field_record_offset", f.recordOffset).put("dict_offset", f.dictOffset)
        f.docValues match {
          case Some((s, e)) => o.putObject("docvalues").put("start", s).put("end", e)
          case None         => o.putNull("docvalues")
        }
      }
      a
    })
    // dictionaries, one field at a time (the big vectors hold 65k terms)
    val exDicts = ex.path("dictionaries")
    cmp("dictionaries.length", nodes.numberNode(exDicts.size), nodes.numberNode(seg.fields.length))
    for ((f, i) <- seg.fields.zipWithIndex if i < exDicts.size) checkDictionary(seg, f, exDicts.get(i), s"${prefix}dictionaries[$i]", fail)
    cmp("doc_ids", ex.path("doc_ids"), {
      val a = nodes.arrayNode()
      (0 until seg.numDocs).foreach(d => a.add(byteNode(seg.docId(d))))
      a
    })
    cmp("stored", ex.path("stored"), {
      val a = nodes.arrayNode()
      for (d <- 0 until seg.numDocs) {
        val doc = seg.document(d)
        val da = a.addArray()
        da.addArray().add("_id").add("t").add(byteNode(doc.id)).addArray()
        for (v <- doc.values) {
          val va = da.addArray().add(seg.fields(v.fieldId).name).add((v.fieldType & 0xff).toChar.toString).add(byteNode(v.value))
          val ap = va.addArray()
          v.arrayPositions.foreach(p => ap.add(p))
        }
      }
      a
    })
    val dvFields = seg.fields.filter(_.docValues.isDefined)
    cmp("docvalue_fields", ex.path("docvalue_fields"), dvFields.foldLeft(nodes.arrayNode())((a, f) => a.add(f.name)))
    cmp("docvalues", ex.path("docvalues"), {
      val o = nodes.objectNode()
      for (f <- dvFields; section <- seg.docValues(f.id)) {
        val a = o.putArray(f.name)
        section.foreach { (doc, value) =>
          val e = a.addArray().add(doc)
          val t = e.addArray()
          DocValuesSection.split(value).foreach(b => t.add(byteNode(b)))
        }
      }
      o
    })
  }

  /** Compares one dictionary term by term (the actual side never holds more than one term's
    * report, so the 65k-term vectors stay cheap). */
  private def checkDictionary(seg: SegmentReader, f: FieldInfo, expected: JsonNode, path: String, fail: String => Unit): Unit =
    try {
      val dict = seg.dictionary(f.id)
      val head = nodes.objectNode().put("field", f.name)
      dict.fstLength match {
        case Some(l) => head.put("fst_bytes_len", l)
        case None    => head.putNull("fst_bytes_len")
      }
      val keys = expected.fieldNames.asScala.toSet
      if (keys != Set("field", "fst_bytes_len", "num_terms", "terms")) fail(s"$path: keys expected field,fst_bytes_len,num_terms,terms, got ${keys.toSeq.sorted.mkString(",")}")
      diff(s"$path.field", expected.path("field"), head.get("field"), fail)
      diff(s"$path.fst_bytes_len", expected.path("fst_bytes_len"), head.get("fst_bytes_len"), fail)
      val exTerms = expected.path("terms")
      var count = 0
      var reported = false
      for ((term, value) <- dict.terms()) {
        if (!reported && count < exTerms.size) {
          diff(s"$path.terms[$count]", exTerms.get(count), termNode(seg, term, value), m => { reported = true; fail(m) })
        }
        count += 1
      }
      diff(s"$path.num_terms", expected.path("num_terms"), nodes.numberNode(count), fail)
      if (count != exTerms.size) fail(s"$path.terms: expected ${exTerms.size} terms, got $count")
      dict.fst.foreach(fst => if (fst.numKeys != count) fail(s"$path: the FST trailer counts ${fst.numKeys} keys, iteration gave $count"))
    } catch { case NonFatal(t) => fail(s"$path: ${t.getClass.getSimpleName}: ${t.getMessage}") }

  /** One term of a dictionary as the vectors describe it. */
  private def termNode(seg: SegmentReader, term: Array[Byte], value: Long): JsonNode = {
    val t = nodes.objectNode()
    t.set[JsonNode]("term", byteNode(term))
    t.put("fst_value", java.lang.Long.toUnsignedString(value))
    val pl = seg.postingsAt(value)
    t.put("encoding", if (pl.oneHitValue) "1hit" else "general")
    if (!pl.oneHitValue) {
      t.put("freq_offset", pl.freqBlockOffset).put("loc_offset", pl.locBlockOffset).put("roaring_len", pl.roaringBytes.length)
      val (cookie, containers) = GoRoaring.describe(pl.roaringBytes)
      t.put("roaring_cookie", cookie)
      val ca = t.putArray("roaring_containers")
      containers.foreach { case (k, kind, card) => ca.addArray().add(k).add(kind).add(card) }
    }
    val docs = t.putArray("docs"); val freqs = t.putArray("freqs"); val norms = t.putArray("norm_bits"); val locs = t.putArray("locs")
    for (h <- 0 until pl.size) {
      docs.add(pl.docs(h)); freqs.add(pl.freqs(h)); norms.add(pl.normBits(h).toLong & 0xffffffffL)
      if (!pl.hasLocations(h)) locs.addNull()
      else {
        val la = locs.addArray()
        for (l <- pl.locations(h)) {
          val e = la.addArray().add(seg.fields(l.fieldId).name).add(l.pos).add(l.start).add(l.end)
          val ap = e.addArray()
          l.arrayPositions.foreach(p => ap.add(p))
        }
      }
    }
    t
  }

  /** Reports where `actual` differs from `expected` (numbers by value, object keys as sets). */
  private def diff(path: String, expected: JsonNode, actual: JsonNode, fail: String => Unit): Unit = {
    def short(n: JsonNode): String = { val s = String.valueOf(n); if (s.length > 120) s.take(120) + "…" else s }
    if (expected.isNumber && actual.isNumber) {
      if (expected.bigIntegerValue != actual.bigIntegerValue) fail(s"$path: expected $expected, got $actual")
    } else if (expected.isObject && actual.isObject) {
      val ek = expected.fieldNames.asScala.toSet
      val ak = actual.fieldNames.asScala.toSet
      if (ek != ak) fail(s"$path: keys expected ${ek.toSeq.sorted.mkString(",")}, got ${ak.toSeq.sorted.mkString(",")}")
      for (k <- ek.toSeq.sorted if ak(k)) diff(s"$path.$k", expected.get(k), actual.get(k), fail)
    } else if (expected.isArray && actual.isArray) {
      if (expected.size != actual.size) fail(s"$path: expected ${expected.size} items, got ${actual.size}")
      else {
        val i = (0 until expected.size).indexWhere(i => !same(expected.get(i), actual.get(i)))
        if (i >= 0) diff(s"$path[$i]", expected.get(i), actual.get(i), fail)
      }
    } else if (expected.getNodeType != actual.getNodeType || expected != actual) fail(s"$path: expected ${short(expected)}, got ${short(actual)}")
  }

  private def same(e: JsonNode, a: JsonNode): Boolean = {
    var ok = true
    diff("", e, a, _ => ok = false)
    ok
  }

}
