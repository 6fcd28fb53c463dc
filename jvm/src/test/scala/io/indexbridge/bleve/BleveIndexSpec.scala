package io.indexbridge.bleve

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths, StandardCopyOption}

import scala.jdk.CollectionConverters._
import scala.util.Random

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import io.indexbridge.IndexFormatException
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/** Whole bleve indexes (IndexMapping, BleveIndex, BleveQuery) against real bleve v1.0.14
  * (integration/boltgo, built here with Go). Generated documents under generated mappings: the
  * index written here is opened by bleve, whose answers (documents, totals, hits, scores) this
  * implementation must give on the same directory; bleve builds indexes in batches with updates
  * and deletions, which this implementation reads and searches as bleve does; a one-document
  * index is the bytes of bleve's offline Builder; damaged directories fail with an
  * IndexFormatException naming the file. (tests/test_bleve_index.py runs larger workloads through
  * both languages.) */
class BleveIndexSpec extends AnyFunSuite with BeforeAndAfterAll {
  private val mapper = new ObjectMapper
  private val tmp = Files.createTempDirectory("bleve-index-spec")

  override def afterAll(): Unit = {
    val paths = Files.walk(tmp)
    try paths.sorted(java.util.Comparator.reverseOrder[Path]()).forEach(p => Files.deleteIfExists(p))
    finally paths.close()
  }

  private val go = new BoltGo(tmp)

  private def file(name: String, json: String): Path = { val p = tmp.resolve(name); Files.writeString(p, json); p }

  // -- generated workloads -------------------------------------------------------------------------

  private val words = "alpha beta gamma delta epsilon zeta eta theta Iota kappa lambda mu the and of to café Straße O'Neil's e-mail 3.14 x_y".split(' ')

  private def text(rng: Random, n: Int): String = Seq.fill(n)(words(rng.nextInt(words.length))).mkString(" ")

  private def document(rng: Random, k: Int): String = {
    val parts = Seq.newBuilder[String]
    parts += "\"id\":\"" + f"d$k%04d" + "\""
    if (rng.nextDouble() < 0.9) parts += "\"title\":" + mapper.writeValueAsString(text(rng, 1 + rng.nextInt(6)))
    if (rng.nextDouble() < 0.8) parts += "\"body\":" + mapper.writeValueAsString(text(rng, rng.nextInt(30)))
    if (rng.nextDouble() < 0.6) parts += "\"price\":" + (rng.nextInt(2000) - 1000)
    if (rng.nextDouble() < 0.3) parts += "\"rating\":" + (rng.nextInt(100) / 10.0)
    if (rng.nextDouble() < 0.5) parts += "\"active\":" + rng.nextBoolean()
    if (rng.nextDouble() < 0.5) parts += "\"when\":\"" + f"20${rng.nextInt(30)}%02d-${1 + rng.nextInt(12)}%02d-${1 + rng.nextInt(28)}%02dT10:00:00Z" + "\""
    if (rng.nextDouble() < 0.4) parts += "\"tags\":" + Seq.fill(rng.nextInt(4))(mapper.writeValueAsString(words(rng.nextInt(words.length)))).mkString("[", ",", "]")
    if (rng.nextDouble() < 0.4) parts += "\"author\":{\"name\":" + mapper.writeValueAsString(text(rng, 2)) + ",\"age\":" + (18 + rng.nextInt(60)) + "}"
    rng.shuffle(parts.result()).mkString("{", ",", "}")
  }

  private val mappings = Seq(
    "null",
    """{"default_mapping": {"properties": {"title": {"fields": [{"type": "text", "analyzer": "keyword", "index": true, "store": true},
       {"type": "text", "name": "title_words", "analyzer": "simple", "index": true, "include_term_vectors": true}]},
       "price": {"fields": [{"type": "number", "index": true, "docvalues": true}]}, "_all": {"enabled": false}}}, "default_field": "body"}""",
    """{"default_mapping": {"dynamic": false, "properties": {"body": {"fields": [{"type": "text", "index": true, "store": true,
       "include_term_vectors": true, "include_in_all": true}]}, "author": {"dynamic": true, "default_analyzer": "keyword"}}},
       "store_dynamic": false, "default_analyzer": "simple"}""")

  private def queries(rng: Random): Seq[String] = {
    def w = words(rng.nextInt(words.length)).toLowerCase
    Seq("""{"match_all": {}}""", s"""{"match": "$w $w"}""", s"""{"match": "$w $w", "operator": "and"}""", s"""{"term": "$w", "field": "body"}""",
      s"""{"term": "$w", "field": "title_words", "boost": 2}""", s"""{"match_phrase": "$w $w"}""", s"""{"match_phrase": "$w $w", "field": "body"}""",
      s"""{"prefix": "${w.take(2)}", "field": "body"}""", """{"prefix": "", "field": "title"}""", """{"min": -100, "max": 250, "field": "price"}""",
      """{"min": 2.5, "inclusive_min": false, "field": "rating"}""", """{"max": 40, "inclusive_max": true, "field": "author.age"}""",
      s"""{"conjuncts": [{"match": "$w"}, {"min": 0, "field": "price"}]}""", s"""{"disjuncts": [{"match": "$w"}, {"term": "$w", "field": "tags"}, {"match": "the"}], "min": 1}""",
      s"""{"match": "$w", "field": "author.name", "boost": 0.5}""", """{"match": "the of and"}""")
  }

  private def assertAnswers(index: Path, answer: JsonNode, qs: Seq[String], what: String): Unit = {
    val ix = BleveIndex.open(index)
    val docs = ix.documents.map(d => d("_id").asInstanceOf[String] -> d).toMap
    assert(ix.docCount == answer.get("doc_count").asLong, what)
    assert(docs.keySet == answer.get("docs").fieldNames().asScala.toSet, what)
    for ((id, fields) <- docs) {
      val expected = answer.get("docs").get(id)
      assert(fields.size - 1 == expected.size, s"$what: $id: $fields vs $expected")
      for ((k, v) <- fields if k != "_id") assert(same(v, expected.get(k)), s"$what: $id.$k: $v vs ${expected.get(k)}")
    }
    for ((q, a) <- qs.zip(answer.get("answers").elements().asScala)) {
      if (a.has("error")) assertThrows[IndexFormatException](BleveQuery.search(ix, q))
      else {
        val r = BleveQuery.search(ix, q)
        assert(r.total == a.get("total").asLong, s"$what: $q")
        val expected = a.get("hits").elements().asScala.map(h => (h.get(0).textValue, h.get(1).doubleValue)).toIndexedSeq
        // bleve sums the matches of a disjunction over more than ten terms in its heap's order:
        // scores may differ in the last bits, so hits equal to 1e-12 may come in either order
        assert(groups(r.hits) == groups(expected), s"$what: $q")
        val byId = expected.toMap
        for ((id, s1) <- r.hits) assert(math.abs(s1 - byId(id)) <= 1e-9, s"$what: $q: $id $s1 vs ${byId(id)}")
      }
    }
  }

  private def groups(hits: IndexedSeq[(String, Double)]): Seq[Set[String]] = {
    val out = scala.collection.mutable.ArrayBuffer.empty[(Double, Set[String])]
    for ((id, s) <- hits)
      if (out.nonEmpty && math.abs(out.last._1 - s) <= 1e-12 * math.max(1.0, math.abs(s))) out(out.length - 1) = (out.last._1, out.last._2 + id)
      else out += ((s, Set(id)))
    out.map(_._2).toSeq
  }

  private def same(v: Any, n: JsonNode): Boolean = v match {
    case s: String => n.isTextual && n.textValue == s
    case d: Double => n.isNumber && n.doubleValue == d
    case b: Boolean => n.isBoolean && n.booleanValue == b
    case vs: Seq[_] => n.isArray && n.size == vs.size && vs.zip(n.elements().asScala.toSeq).forall { case (x, y) => same(x, y) }
    case _ => false
  }

  for ((mappingJson, seed) <- mappings.zipWithIndex) test(s"bleve opens our index and answers as we do (mapping $seed)") {
    val rng = new Random(seed)
    val docs = (0 until 90).map(k => document(rng, k))
    val pairs = docs.map(d => s"""["${mapper.readTree(d).get("id").textValue}",$d]""")
    val dir = tmp.resolve(s"ours$seed")
    val mapping = IndexMapping.parse(if (mappingJson == "null") null else mappingJson)
    BleveIndex.write(dir, docs.iterator.map(d => (mapper.readTree(d).get("id").textValue, IndexMapping.parseJsonValue(d))), mapping, 35)
    assert(Files.list(dir.resolve("store")).count() == 4)
    val qs = queries(rng)
    val qFile = file(s"q$seed.json", qs.mkString("[", ",", "]"))
    assertAnswers(dir, go("bleve-answer", dir.toString, qFile.toString), qs, s"mapping $seed, ours")
    // the same documents in bleve's own batches, with an update and a deletion on the way
    val ops = s"""[{"index": [${pairs.take(40).mkString(",")}, ["ghost", {"title": "gone soon"}]]},
                  {"index": [${pairs.drop(40).mkString(",")}, ${pairs.head}], "delete": ["ghost"]}]"""
    val job = file(s"job$seed.json", s"""{"mapping": $mappingJson, "ops": $ops}""")
    val theirs = tmp.resolve(s"theirs$seed")
    go("bleve-build", theirs.toString, job.toString)
    assertAnswers(theirs, go("bleve-answer", theirs.toString, qFile.toString), qs, s"mapping $seed, bleve's")
    assert(BleveIndex.open(theirs).segments.exists(_.deletedCount > 0))
  }

  test("a one-document index is the bytes of bleve's offline Builder") {
    val doc = """{"title": "Offline builders and zap segments"}"""
    val job = file("builder.json", s"""{"mapping": null, "builder": true, "ops": [{"index": [["only", $doc]]}]}""")
    go("bleve-build", tmp.resolve("builder").toString, job.toString)
    BleveIndex.write(tmp.resolve("one"), Iterator(("only", IndexMapping.parseJsonValue(doc))), IndexMapping.parse(null))
    for (name <- Seq("index_meta.json", "store/root.bolt", "store/000000000002.zap"))
      assert(Files.readAllBytes(tmp.resolve("one").resolve(name)).sameElements(Files.readAllBytes(tmp.resolve("builder").resolve(name))), name)
  }

  private def copyOf(src: Path, name: String): Path = {
    val dst = tmp.resolve(name)
    Files.walk(src).iterator().asScala.foreach { p =>
      val t = dst.resolve(src.relativize(p).toString)
      if (Files.isDirectory(p)) Files.createDirectories(t) else Files.copy(p, t, StandardCopyOption.REPLACE_EXISTING)
    }
    dst
  }

  test("damaged directories, unsupported versions and mappings fail naming the file") {
    val dir = tmp.resolve("small")
    BleveIndex.write(dir, (0 until 20).iterator.map(k => (s"d$k", IndexMapping.parseJsonValue(s"""{"text": "alpha $k"}"""))), IndexMapping.parse(null), 8)
    val missing = copyOf(dir, "missing")
    Files.delete(missing.resolve("store/000000000003.zap"))
    assert(intercept[IndexFormatException](BleveIndex.open(missing)).getMessage.matches("(?s).*000000000003\\.zap.*missing.*"))
    val truncated = copyOf(dir, "truncated")
    val bolt = Files.readAllBytes(dir.resolve("store/root.bolt"))
    for (cut <- Seq(0, 100, 5000, 16390)) {
      Files.write(truncated.resolve("store/root.bolt"), bolt.take(cut))
      assert(intercept[IndexFormatException](BleveIndex.open(truncated)).getMessage.contains("root.bolt"))
    }
    val rng = new Random(3)
    for (_ <- 0 until 200) {
      val damaged = bolt.clone()
      val at = rng.nextInt(6 * 4096)
      damaged(at) = (damaged(at) ^ (1 << rng.nextInt(8))).toByte
      Files.write(truncated.resolve("store/root.bolt"), damaged)
      try BleveIndex.open(truncated).documents.size
      catch { case e: IndexFormatException => assert(e.getMessage.contains(truncated.toString)) }
    }
    val footer = copyOf(dir, "footer")
    val seg = Files.readAllBytes(dir.resolve("store/000000000002.zap"))
    seg(seg.length - 8 + 3) = 16
    Files.write(footer.resolve("store/000000000002.zap"), seg)
    assert(intercept[IndexFormatException](BleveIndex.open(footer)).getMessage.matches("(?s).*unsupported zap version 16 in .*000000000002\\.zap.*"))
    val crc = copyOf(dir, "crc")
    val seg2 = Files.readAllBytes(dir.resolve("store/000000000002.zap"))
    seg2(seg2.length - 30) = (seg2(seg2.length - 30) ^ 0xff).toByte
    Files.write(crc.resolve("store/000000000002.zap"), seg2)
    assert(intercept[IndexFormatException](BleveIndex.open(crc)).getMessage.contains("000000000002.zap"))
    val meta = copyOf(dir, "meta")
    Files.writeString(meta.resolve("index_meta.json"), """{"storage":"boltdb","index_type":"upside_down"}""")
    assert(intercept[IndexFormatException](BleveIndex.open(meta)).getMessage.contains("upside_down"))
    Files.writeString(meta.resolve("index_meta.json"), """{"storage":""")
    assert(intercept[IndexFormatException](BleveIndex.open(meta)).getMessage.contains("index_meta.json"))
    for ((json, expected) <- Seq("""{"default_analyzer": "en"}""" -> "default_analyzer 'en'",
      """{"analysis": {"analyzers": {"a": {"type": "custom"}}}}""" -> "custom analysis",
      """{"default_mapping": {"properties": {"n": {"fields": [{"type": "integer"}]}}}}""" -> "unknown field type",
      """{"default_mapping": {"enabled": "yes"}}""" -> "enabled must be a JSON boolean", """{"default_mapping": """ -> "JSON"))
      assert(intercept[IndexFormatException](IndexMapping.parse(json, "m.json")).getMessage.contains(expected), json)
    for ((json, expected) <- Seq("""{"fuzziness": 1, "term": "x"}""" -> "fuzzy", """{"query": "a"}""" -> "query string",
      """{"whatever": 1}""" -> "unknown query type", """{"term": 5}""" -> "term must be a JSON string", "{" -> "JSON"))
      assert(intercept[IndexFormatException](BleveQuery.parse(json)).getMessage.contains(expected), json)
  }
}
