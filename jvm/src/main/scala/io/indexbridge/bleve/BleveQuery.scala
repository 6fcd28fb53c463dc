package io.indexbridge.bleve

import java.nio.charset.StandardCharsets.UTF_8
import java.util.Arrays.compareUnsigned

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.core.JsonProcessingException
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import io.indexbridge.IndexFormatException
import io.indexbridge.zap.{Analysis, Analyzer, SegmentReader}
import org.roaringbitmap.RoaringBitmap

/** bleve v1.0.14's query JSON searched as bleve searches a scorch index, with its TF-IDF scores
  * (the twin of Python's `indexbridge.bleve.query`, which states the rules).
  *
  * {{{
  * term        {"term", "field", "boost"}        match  {"match", "field", "analyzer", "operator", "boost"}
  * match_phrase {"match_phrase", "field", "analyzer", "boost"}   prefix {"prefix", "field", "boost"}
  * numeric range {"min", "max", "inclusive_min", "inclusive_max", "field", "boost"}
  * {"conjuncts": [...]}  {"disjuncts": [...], "min"}  {"match_all": {}}  {"match_none": {}}
  *
  * term score = sqrt(freq) * norm * idf [* boost * idf * queryNorm],  idf = 1 + ln(docCount / (docFreq + 1))
  * conjunction: sum (children by docFreq ascending); disjunction: sum * matched / children
  * (children by docFreq descending, more than 10 as given); phrase: the conjunction where the
  * terms follow one another; match_all: 1 [* boost * queryNorm]; queryNorm = 1/sqrt(sum of the
  * top composite's squared leaf weights)
  * }}}
  *
  * [[BleveQuery.plan]] builds the searcher tree with the index-wide numbers (a serializable
  * value: Spark tasks evaluate it per segment with [[BleveQuery.evaluate]]); hits are ordered by
  * score, then by segment and document number, as bleve's collector orders them.
  */
object BleveQuery {
  sealed trait Query
  final case class TermQuery(term: String, field: String, boost: Option[Double]) extends Query
  final case class MatchQuery(text: String, field: String, analyzer: String, and: Boolean, boost: Option[Double]) extends Query
  final case class MatchPhraseQuery(text: String, field: String, analyzer: String, boost: Option[Double]) extends Query
  final case class PrefixQuery(prefix: String, field: String, boost: Option[Double]) extends Query
  final case class NumericRangeQuery(min: Option[Double], max: Option[Double], inclusiveMin: Option[Boolean], inclusiveMax: Option[Boolean],
                                     field: String, boost: Option[Double]) extends Query
  final case class ConjunctionQuery(conjuncts: Seq[Query]) extends Query
  final case class DisjunctionQuery(disjuncts: Seq[Query], min: Double) extends Query
  final case class MatchAllQuery(boost: Option[Double]) extends Query
  case object MatchNoneQuery extends Query

  val Source = "query"
  private val mapper = new ObjectMapper()

  private def fail(expected: String, source: String = Source) = new IndexFormatException(source, 0L, expected)

  /** bleve's `query.ParseQuery` for the supported kinds; an [[IndexFormatException]] otherwise. */
  def parse(json: String, source: String = Source): Query = {
    val node = try mapper.readTree(json) catch {
      case e: JsonProcessingException =>
        throw new IndexFormatException(source, Option(e.getLocation).map(_.getCharOffset).filter(_ >= 0).getOrElse(0L),
          s"a bleve query in JSON: ${e.getOriginalMessage}")
    }
    try parseNode(node) catch {
      case e: IndexFormatException if source != Source => throw new IndexFormatException(source, e.offset, e.expected)
    }
  }

  /** Go's struct field lookup: the exact key, else the last case-insensitive match. */
  private def field(obj: JsonNode, key: String): Option[JsonNode] =
    Option(obj.get(key)).orElse(obj.fields().asScala.filter(_.getKey.toLowerCase == key).map(_.getValue).toSeq.lastOption).filterNot(_.isNull)

  private def describe(n: JsonNode): String = n.toString.take(40)

  private def str(obj: JsonNode, key: String, kind: String): String = field(obj, key) match {
    case None => ""
    case Some(n) if n.isTextual => GoJson.sanitize(n.textValue)
    case Some(n) => throw fail(s"a $kind query: $key must be a JSON string, found ${describe(n)}")
  }

  private def num(obj: JsonNode, key: String, kind: String): Option[Double] = field(obj, key) match {
    case None => None
    case Some(n) if n.isNumber => Some(n.doubleValue)
    case Some(n) => throw fail(s"a $kind query: $key must be a JSON number, found ${describe(n)}")
  }

  private def bool(obj: JsonNode, key: String, kind: String): Option[Boolean] = field(obj, key) match {
    case None => None
    case Some(n) if n.isBoolean => Some(n.booleanValue)
    case Some(n) => throw fail(s"a $kind query: $key must be true or false, found ${describe(n)}")
  }

  private def parseNode(obj: JsonNode): Query = {
    if (obj == null || !obj.isObject) throw fail(s"a bleve query: a JSON object, found ${if (obj == null) "nothing" else describe(obj)}")
    def has(k: String) = obj.has(k)
    if (has("fuzziness") && !has("match")) throw fail("a supported query: fuzzy queries are not supported")
    val boost = num(obj, "boost", "query")
    if (has("term")) return TermQuery(str(obj, "term", "term"), str(obj, "field", "term"), boost)
    if (has("match")) {
      field(obj, "fuzziness").foreach(f => if (!(f.isNumber && f.doubleValue == 0)) throw fail("a supported query: match queries with fuzziness are not supported"))
      val op = field(obj, "operator").map(n => if (n.isTextual) n.textValue else n.toString).getOrElse("or")
      if (op != "or" && op != "and") throw fail(s"a match query: operator 'or' or 'and', found $op")
      return MatchQuery(str(obj, "match", "match"), str(obj, "field", "match"), str(obj, "analyzer", "match"), op == "and", boost)
    }
    if (has("match_phrase"))
      return MatchPhraseQuery(str(obj, "match_phrase", "match_phrase"), str(obj, "field", "match_phrase"), str(obj, "analyzer", "match_phrase"), boost)
    for ((k, kind) <- Seq("must" -> "boolean", "should" -> "boolean", "must_not" -> "boolean", "terms" -> "phrase", "query" -> "query string"))
      if (has(k)) throw fail(s"a supported query: $kind queries are not supported")
    if (has("conjuncts")) {
      val items = field(obj, "conjuncts").filter(_.isArray).getOrElse(throw fail("a conjunction query: conjuncts must be a JSON array"))
      return ConjunctionQuery(items.elements().asScala.map(parseNode).toVector)
    }
    if (has("disjuncts")) {
      val items = field(obj, "disjuncts").filter(_.isArray).getOrElse(throw fail("a disjunction query: disjuncts must be a JSON array"))
      return DisjunctionQuery(items.elements().asScala.map(parseNode).toVector, num(obj, "min", "disjunction").getOrElse(0.0))
    }
    val (minN, maxN) = (obj.get("min"), obj.get("max"))
    def isNum(n: JsonNode) = n != null && n.isNumber
    if (isNum(minN) || isNum(maxN))
      return NumericRangeQuery(num(obj, "min", "numeric range"), num(obj, "max", "numeric range"), bool(obj, "inclusive_min", "numeric range"),
        bool(obj, "inclusive_max", "numeric range"), str(obj, "field", "numeric range"), boost)
    if ((minN != null && minN.isTextual) || (maxN != null && maxN.isTextual)) throw fail("a supported query: term range queries are not supported")
    if (has("start") || has("end")) throw fail("a supported query: date range queries are not supported")
    if (has("prefix")) return PrefixQuery(str(obj, "prefix", "prefix"), str(obj, "field", "prefix"), boost)
    for ((k, kind) <- Seq("regexp" -> "regexp", "wildcard" -> "wildcard")) if (has(k)) throw fail(s"a supported query: $kind queries are not supported")
    if (has("match_all")) return MatchAllQuery(boost)
    if (has("match_none")) return MatchNoneQuery
    for ((k, kind) <- Seq("ids" -> "doc id", "bool" -> "bool field", "top_left" -> "geo", "distance" -> "geo", "polygon_points" -> "geo"))
      if (has(k)) throw fail(s"a supported query: $kind queries are not supported")
    throw fail(s"a bleve query: unknown query type ${describe(obj)}")
  }

  // -- the searcher tree -------------------------------------------------------------------------

  sealed trait Node extends Serializable {
    def count: Long
    def weight: Double
    def setNorm(norm: Double): Unit
  }

  final case class TermNode(field: String, term: Array[Byte], boost: Double, count: Long, idf: Double) extends Node {
    var queryWeight = 1.0
    def weight: Double = { val s = boost * idf; s * s }
    def setNorm(norm: Double): Unit = queryWeight = boost * idf * norm
  }

  final case class ConjunctionNode(children: IndexedSeq[Node]) extends Node {
    def count: Long = children.map(_.count).sum
    def weight: Double = { var t = 0.0; children.foreach(c => t += c.weight); t }
    def setNorm(norm: Double): Unit = children.foreach(_.setNorm(norm))
  }

  final case class DisjunctionNode(children: IndexedSeq[Node], min: Int) extends Node {
    def count: Long = children.map(_.count).sum
    def weight: Double = { var t = 0.0; children.foreach(c => t += c.weight); t }
    def setNorm(norm: Double): Unit = children.foreach(_.setNorm(norm))
  }

  /** `terms`: per position the terms there (empty for a gap). */
  final case class PhraseNode(must: ConjunctionNode, terms: IndexedSeq[IndexedSeq[Array[Byte]]]) extends Node {
    def count: Long = must.count
    def weight: Double = must.weight
    def setNorm(norm: Double): Unit = must.setNorm(norm)
  }

  final case class MatchAllNode(boost: Double, count: Long) extends Node {
    var queryWeight = 1.0
    def weight: Double = boost * boost
    def setNorm(norm: Double): Unit = queryWeight = boost * norm
  }

  case object MatchNoneNode extends Node {
    def count: Long = 0
    def weight: Double = 0.0
    def setNorm(norm: Double): Unit = ()
  }

  val DisjunctionHeapTakeover = 10

  /** The index-wide numbers a plan needs, over one snapshot's (segment, deleted) pairs. */
  final class IndexStats(views: IndexedSeq[(SegmentReader, Option[RoaringBitmap])]) {
    val docCount: Long = views.map { case (s, d) => s.numDocs.toLong - d.map(_.getCardinality).getOrElse(0) }.sum
    private val counts = mutable.HashMap.empty[(String, Seq[Byte]), Long]

    def count(field: String, term: Array[Byte]): Long = counts.getOrElseUpdate((field, term.toSeq), views.map { case (seg, deleted) =>
      seg.postingsDocs(field, term).map { bm =>
        bm.getLongCardinality - deleted.map(d => RoaringBitmap.andCardinality(bm, d).toLong).getOrElse(0L)
      }.getOrElse(0L)
    }.sum)

    def contains(field: String, term: Array[Byte]): Boolean = views.exists { case (seg, _) => seg.dictionary(field).exists(_.value(term).isDefined) }

    def prefixTerms(field: String, prefix: Array[Byte]): IndexedSeq[Array[Byte]] = {
      val terms = new java.util.TreeSet[Array[Byte]]((a: Array[Byte], b: Array[Byte]) => compareUnsigned(a, b))
      views.foreach { case (seg, _) => seg.dictionary(field).foreach(_.termsWithPrefix(prefix).foreach(t => terms.add(t._1))) }
      terms.asScala.toIndexedSeq
    }
  }

  private def termNode(stats: IndexStats, field: String, term: Array[Byte], boost: Double): TermNode = {
    val count = stats.count(field, term)
    val total = stats.docCount
    val idf = 1.0 + (if (total == 0) Double.NegativeInfinity else math.log(total.toDouble / (count + 1).toDouble))
    TermNode(field, term, boost, count, idf)
  }

  private def conjunction(children: IndexedSeq[Node]): ConjunctionNode = ConjunctionNode(children.sortBy(_.count)) // stable

  private def disjunction(children: IndexedSeq[Node], min: Double): DisjunctionNode =
    if (children.length > DisjunctionHeapTakeover) DisjunctionNode(children, min.toInt)
    else DisjunctionNode(children.sortBy(c => -c.count), min.toInt)

  private def analyzer(mapping: IndexMapping, field: String, requested: String, kind: String): String = {
    val name = if (requested.nonEmpty) requested else mapping.analyzerForPath(field)
    if (!Analyzer.Names.contains(name))
      throw fail(s"a $kind query over field '$field': analyzer '$name' is not supported (analyzers: ${Analyzer.Names.mkString(", ")})")
    name
  }

  /** bleve's `splitInt64Range` (Go's wrapping int64 arithmetic): (start, end) prefix-coded terms. */
  def splitInt64Range(minBound0: Long, maxBound0: Long, step: Int = 4): IndexedSeq[(Array[Byte], Array[Byte])] = {
    val out = IndexedSeq.newBuilder[(Array[Byte], Array[Byte])]
    if (minBound0 > maxBound0) return out.result()
    def newRange(lo: Long, hi: Long, shift: Int) =
      (Analysis.prefixCodedInt64(lo, shift), Analysis.prefixCodedInt64(hi | ((1L << shift) - 1L), shift))
    var (minBound, maxBound, shift) = (minBound0, maxBound0, 0)
    var done = false
    while (!done) {
      val diff = if (shift + step >= 64) 0L else 1L << (shift + step)
      val mask = ((1L << step) - 1L) << shift
      val hasLower = (minBound & mask) != 0L
      val hasUpper = (maxBound & mask) != mask
      val nextMin = if (hasLower) (minBound + diff) & ~mask else minBound & ~mask
      val nextMax = if (hasUpper) (maxBound - diff) & ~mask else maxBound & ~mask
      if (shift + step >= 64 || nextMin > nextMax || nextMin < minBound || nextMax > maxBound) {
        out += newRange(minBound, maxBound, shift)
        done = true
      } else {
        if (hasLower) out += newRange(minBound, minBound | mask, shift)
        if (hasUpper) out += newRange(maxBound & ~mask, maxBound, shift)
        minBound = nextMin
        maxBound = nextMax
        shift += step
      }
    }
    out.result()
  }

  private def increment(term: Array[Byte]): Array[Byte] = {
    val out = term.clone()
    var i = out.length - 1
    var carry = true
    while (carry && i >= 0) { out(i) = (out(i) + 1).toByte; carry = out(i) == 0; i -= 1 }
    out
  }

  /** `NewNumericRangeSearcher`'s terms: each range enumerated, kept if some dictionary has it. */
  def numericRangeTerms(stats: IndexStats, field: String, q: NumericRangeQuery): IndexedSeq[Array[Byte]] = {
    var minI = Analysis.float64ToInt64(q.min.getOrElse(Double.NegativeInfinity))
    var maxI = Analysis.float64ToInt64(q.max.getOrElse(Double.PositiveInfinity))
    if (!q.inclusiveMin.getOrElse(true) && minI != Long.MaxValue) minI += 1
    if (!q.inclusiveMax.getOrElse(false) && maxI != Long.MinValue) maxI -= 1
    val terms = IndexedSeq.newBuilder[Array[Byte]]
    for ((start, end) <- splitInt64Range(minI, maxI)) {
      var term = start
      while (compareUnsigned(term, end) <= 0) {
        if (stats.contains(field, term)) terms += term
        term = increment(term)
      }
    }
    terms.result()
  }

  /** bleve's searcher tree for `q`, with the index-wide numbers and the query norm set. */
  def plan(q: Query, mapping: IndexMapping, stats: IndexStats): Node = {
    val root = build(q, mapping, stats)
    root match {
      case _: ConjunctionNode | _: DisjunctionNode | _: PhraseNode =>
        val w = root.weight
        root.setNorm(if (w > 0) 1.0 / math.sqrt(w) else Double.PositiveInfinity)
      case _ =>
    }
    root
  }

  private def build(q: Query, mapping: IndexMapping, stats: IndexStats): Node = {
    def fieldOf(f: String) = if (f.isEmpty) mapping.defaultField else f
    def boostOf(b: Option[Double]) = b.getOrElse(1.0)
    q match {
      case TermQuery(term, f, b) => termNode(stats, fieldOf(f), term.getBytes(UTF_8), boostOf(b))
      case MatchQuery(text, f, a, and, b) =>
        val fld = fieldOf(f)
        val tokens = Analyzer.analyze(text, analyzer(mapping, fld, a, "match"))
        if (tokens.isEmpty) MatchNoneNode
        else {
          val terms: IndexedSeq[Node] = tokens.map(t => termNode(stats, fld, t.term, boostOf(b)))
          if (and) conjunction(terms) else disjunction(terms, 1)
        }
      case MatchPhraseQuery(text, f, a, _) =>
        val fld = fieldOf(f)
        val tokens = Analyzer.analyze(text, analyzer(mapping, fld, a, "match_phrase"))
        if (tokens.isEmpty) MatchNoneNode
        else {
          val first = tokens.map(_.position).min
          val last = tokens.map(_.position).max
          val slots = Array.fill(last - first + 1)(mutable.ArrayBuffer.empty[Array[Byte]])
          tokens.foreach(t => slots(t.position - first) += t.term)
          val children = slots.toIndexedSeq.flatMap { slot =>
            if (slot.length == 1 && slot(0).nonEmpty) Some(termNode(stats, fld, slot(0), 1.0))
            else if (slot.length > 1) Some(disjunction(slot.filter(_.nonEmpty).map(t => termNode(stats, fld, t, 1.0): Node).toIndexedSeq, 1))
            else None
          }
          PhraseNode(conjunction(children), slots.map(_.toIndexedSeq).toIndexedSeq)
        }
      case PrefixQuery(prefix, f, b) =>
        val fld = fieldOf(f)
        disjunction(stats.prefixTerms(fld, prefix.getBytes(UTF_8)).map(t => termNode(stats, fld, t, boostOf(b)): Node), 0)
      case r: NumericRangeQuery =>
        if (r.min.isEmpty && r.max.isEmpty) throw fail("a numeric range query: min or max")
        val fld = fieldOf(r.field)
        disjunction(numericRangeTerms(stats, fld, r).map(t => termNode(stats, fld, t, boostOf(r.boost)): Node), 0)
      case ConjunctionQuery(cs) => if (cs.isEmpty) MatchNoneNode else conjunction(cs.map(build(_, mapping, stats)).toIndexedSeq)
      case DisjunctionQuery(ds, min) =>
        if (min.toInt > ds.length) throw fail("a disjunction query: fewer than the minimum number of clauses to satisfy")
        if (ds.isEmpty) MatchNoneNode else disjunction(ds.map(build(_, mapping, stats)).toIndexedSeq, min)
      case MatchAllQuery(b) => MatchAllNode(boostOf(b), stats.docCount)
      case MatchNoneQuery => MatchNoneNode
    }
  }

  // -- evaluation over one segment -----------------------------------------------------------------

  /** Doc numbers (ascending) and their scores. */
  final case class Hits(docs: Array[Int], scores: Array[Double])
  private val NoHits = Hits(Array.emptyIntArray, Array.emptyDoubleArray)

  /** The live documents of one segment that `node` matches, by doc number, with their scores. */
  def evaluate(node: Node, seg: SegmentReader, deleted: Option[RoaringBitmap]): Hits = node match {
    case t: TermNode =>
      seg.postings(t.field, t.term) match {
        case None => NoHits
        case Some(pl) =>
          val docs = mutable.ArrayBuilder.make[Int]
          val scores = mutable.ArrayBuilder.make[Double]
          var i = 0
          while (i < pl.size) {
            val doc = pl.docs(i)
            if (!deleted.exists(_.contains(doc))) {
              var s = math.sqrt(pl.freqs(i).toDouble) * pl.norm(i).toDouble * t.idf
              if (t.queryWeight != 1.0) s = s * t.queryWeight
              docs += doc
              scores += s
            }
            i += 1
          }
          Hits(docs.result(), scores.result())
      }
    case ConjunctionNode(children) => intersect(children.map(evaluate(_, seg, deleted)))
    case d: DisjunctionNode => union(d, d.children.map(evaluate(_, seg, deleted)))
    case p: PhraseNode => phrase(p, seg, deleted)
    case m: MatchAllNode =>
      val docs = deleted match {
        case Some(d) => (0 until seg.numDocs).iterator.filter(x => !d.contains(x)).toArray
        case None => Array.range(0, seg.numDocs)
      }
      Hits(docs, Array.fill(docs.length)(if (m.queryWeight != 1.0) 1.0 * m.queryWeight else 1.0))
    case MatchNoneNode => NoHits
  }

  /** Docs in every child, the scores summed in the children's order (merge walks, no boxing). */
  private def intersect(results: IndexedSeq[Hits]): Hits = {
    if (results.isEmpty) return NoHits
    var docs = results.head.docs
    for (r <- results.tail) {
      val out = new Array[Int](math.min(docs.length, r.docs.length))
      var (i, j, n) = (0, 0, 0)
      while (i < docs.length && j < r.docs.length) {
        if (docs(i) < r.docs(j)) i += 1
        else if (docs(i) > r.docs(j)) j += 1
        else { out(n) = docs(i); n += 1; i += 1; j += 1 }
      }
      docs = java.util.Arrays.copyOf(out, n)
    }
    val total = new Array[Double](docs.length)
    for (r <- results) {
      var (i, j) = (0, 0)
      while (i < docs.length) {
        while (r.docs(j) != docs(i)) j += 1
        total(i) += r.scores(j)
        i += 1
      }
    }
    Hits(docs, total)
  }

  /** Docs in at least `min` (>= 1) children: sum * matched / children, summed in the children's order. */
  private def union(node: DisjunctionNode, results: IndexedSeq[Hits]): Hits = {
    if (results.isEmpty) return NoHits
    val all = new Array[Int](results.map(_.docs.length).sum)
    var at = 0
    for (r <- results) { System.arraycopy(r.docs, 0, all, at, r.docs.length); at += r.docs.length }
    java.util.Arrays.sort(all)
    var n = 0
    for (k <- all.indices) if (n == 0 || all(n - 1) != all(k)) { all(n) = all(k); n += 1 }
    val docs = java.util.Arrays.copyOf(all, n)
    val total = new Array[Double](n)
    val count = new Array[Int](n)
    for (r <- results) {
      var j = 0
      var i = 0
      while (i < r.docs.length) {
        while (docs(j) != r.docs(i)) j += 1
        total(j) += r.scores(i)
        count(j) += 1
        i += 1
      }
    }
    val min = math.max(node.min, 1)
    val children = node.children.length.toDouble
    var kept = 0
    for (k <- 0 until n) if (count(k) >= min) kept += 1
    val outDocs = new Array[Int](kept)
    val outScores = new Array[Double](kept)
    var o = 0
    for (k <- 0 until n) if (count(k) >= min) {
      outDocs(o) = docs(k)
      outScores(o) = total(k) * (count(k).toDouble / children)
      o += 1
    }
    Hits(outDocs, outScores)
  }

  private def leaves(node: Node): Seq[TermNode] = node match {
    case t: TermNode => Seq(t)
    case ConjunctionNode(cs) => cs.flatMap(leaves)
    case DisjunctionNode(cs, _) => cs.flatMap(leaves)
    case _ => Seq.empty
  }

  private def phrase(node: PhraseNode, seg: SegmentReader, deleted: Option[RoaringBitmap]): Hits = {
    val must = evaluate(node.must, seg, deleted)
    if (must.docs.isEmpty) return must
    val wanted = must.docs.toSet
    // doc -> location field -> term -> (pos, array positions)
    val byDoc = mutable.HashMap.empty[Int, mutable.HashMap[String, mutable.HashMap[Seq[Byte], mutable.ArrayBuffer[(Long, Seq[Long])]]]]
    val names = seg.fields.map(_.name)
    for (leaf <- leaves(node.must); pl <- seg.postings(leaf.field, leaf.term)) {
      var i = 0
      while (i < pl.size) {
        val doc = pl.docs(i)
        if (wanted.contains(doc)) for (loc <- pl.locations(i)) {
          val fields = byDoc.getOrElseUpdate(doc, mutable.HashMap.empty)
          val terms = fields.getOrElseUpdate(names(loc.fieldId), mutable.HashMap.empty)
          terms.getOrElseUpdate(leaf.term.toSeq, mutable.ArrayBuffer.empty) += ((loc.pos, loc.arrayPositions.toSeq))
        }
        i += 1
      }
    }
    val keep = must.docs.indices.filter(k => byDoc.get(must.docs(k)).exists(_.values.exists(tlm => paths(node.terms, tlm))))
    Hits(keep.map(must.docs).toArray, keep.map(must.scores).toArray)
  }

  /** Whether `findPhrasePaths` (slop 0) finds a path through one location field's terms. */
  private def paths(slots: IndexedSeq[IndexedSeq[Array[Byte]]], tlm: collection.Map[Seq[Byte], mutable.ArrayBuffer[(Long, Seq[Long])]]): Boolean = {
    def walk(i: Int, prevPos: Long, aps: Seq[Long]): Boolean = {
      if (i == slots.length) return true
      val slot = slots(i)
      if (slot.isEmpty || (slot.length == 1 && slot(0).isEmpty)) return walk(i + 1, if (prevPos != 0) prevPos + 1 else 0, aps)
      slot.exists { term =>
        tlm.getOrElse(term.toSeq, mutable.ArrayBuffer.empty).exists { case (pos, locAps) =>
          (prevPos == 0 || (locAps == aps && pos == prevPos + 1)) && walk(i + 1, pos, locAps)
        }
      }
    }
    walk(0, 0, Seq.empty)
  }

  // -- searching a whole index -----------------------------------------------------------------------

  final case class SearchResult(total: Long, hits: IndexedSeq[(String, Double)])

  /** Every hit (or the first `size`), ordered as bleve orders them. */
  def search(views: IndexedSeq[(SegmentReader, Option[RoaringBitmap])], mapping: IndexMapping, q: Query, size: Option[Int]): SearchResult = {
    val root = plan(q, mapping, new IndexStats(views))
    val all = mutable.ArrayBuffer.empty[(Int, Int, Double)]
    for (((seg, deleted), k) <- views.zipWithIndex) {
      val h = evaluate(root, seg, deleted)
      for (i <- h.docs.indices) all += ((k, h.docs(i), h.scores(i)))
    }
    val ordered = all.sortWith { (a, b) =>
      if (a._3 != b._3) a._3 > b._3 else if (a._1 != b._1) a._1 < b._1 else a._2 < b._2
    }
    val taken = size.fold(ordered)(n => ordered.take(n))
    SearchResult(all.length.toLong, taken.map { case (k, d, s) => (new String(views(k)._1.docId(d), UTF_8), s) }.toIndexedSeq)
  }

  def search(index: BleveIndex, queryJson: String, size: Option[Int] = None): SearchResult =
    search(index.views, index.mapping, parse(queryJson), size)

  /** For callers across py4j: the result as JSON `{"total", "hits": [[id, score], ...]}` (scores as
    * Java prints doubles; they read back exactly). */
  def searchJson(path: String, queryJson: String, size: Int): String = {
    val index = BleveIndex.open(path)
    val r = search(index, queryJson, if (size < 0) None else Some(size))
    val sb = new StringBuilder(s"""{"total":${r.total},"hits":[""")
    r.hits.zipWithIndex.foreach { case ((id, s), i) =>
      if (i > 0) sb.append(',')
      sb.append('[').append(GoJson.string(id)).append(',').append(if (s.isNaN || s.isInfinite) "null" else java.lang.Double.toString(s)).append(']')
    }
    sb.append("]}").toString
  }
}
