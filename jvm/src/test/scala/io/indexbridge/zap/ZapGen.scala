package io.indexbridge.zap

import java.nio.charset.StandardCharsets.{ISO_8859_1, UTF_8}

import scala.collection.mutable

import org.scalacheck.Gen

/** Generated analysed corpora for the zap reader and merge properties, and the brute-force index
  * a reader must report for them, computed directly from the documents (spec/zap.md §15.2).
  *
  * Corpora mix field names (non-ASCII too), repeated instances, array positions, term vectors
  * on/off, docvalues, stored/unstored and unindexed fields, empty documents (only `_id`), an
  * `_all` composite whose locations name their source fields, and unicode, empty and non-UTF-8
  * terms. Byte strings are keyed as ISO-8859-1 strings: one char per byte, so String order is
  * unsigned byte order (the FST's) and `startsWith` is a byte prefix. */
object ZapGen {
  val vocabulary: Vector[Array[Byte]] =
    Vector("", "a", "ab", "abc", "b", "ba", "café", "zz", "the", "t", "te", "日本").map(_.getBytes(UTF_8)) ++
      Vector(Array[Byte](-1, 0), Array[Byte](0))
  val fieldNames: Vector[String] = Vector("body", "title", "A", "tag", "été")
  val chunkFactors: Vector[Int] = Vector(1, 2, 3, 7, 1024)

  def key(bytes: Array[Byte]): String = new String(bytes, ISO_8859_1)
  def bytesOf(key: String): Array[Byte] = key.getBytes(ISO_8859_1)

  private val allOptions = FieldOptions(index = true, store = false, termVectors = true, docValues = false)

  private def longs(maxCount: Int, bound: Long): Gen[Array[Long]] =
    Gen.choose(0, maxCount).flatMap(n => Gen.listOfN(n, Gen.choose(0L, bound))).map(_.toArray)

  private def field(name: String, docValues: Boolean): Gen[DocField] = for {
    index <- if (docValues) Gen.const(true) else Gen.frequency(4 -> true, 1 -> false)
    termVectors <- Gen.oneOf(true, false)
    length <- if (index) Gen.choose(if (docValues) 1 else 0, 5) else Gen.const(0)
    occurrences <- Gen.listOfN(length, Gen.zip(Gen.oneOf(vocabulary), longs(2, 299)))
    fieldType <- Gen.oneOf("tndbg")
    value <- Gen.choose(0, 29).flatMap(n => Gen.listOfN(n, Gen.choose(-128, 127).map(_.toByte))).map(_.toArray)
    arrayPositions <- longs(1, 4)
    store <- Gen.frequency(7 -> true, 3 -> false)
  } yield {
    // position i+1 holds occurrences(i); tokens sorted by term, locations in position order
    val tokens = occurrences.zipWithIndex.groupBy(o => key(o._1._1)).toVector.sortBy(_._1).map { case (_, occ) =>
      val term = occ.head._1._1
      val locations =
        if (!termVectors) IndexedSeq.empty
        else occ.map { case ((t, aps), i) => Location("", i + 1L, 3L * (i + 1), 3L * (i + 1) + t.length, aps) }.toIndexedSeq
      Token(term, occ.length, locations)
    }
    DocField(name, fieldType.toByte, value, arrayPositions, FieldOptions(index, store, termVectors, docValues), length, tokens)
  }

  private def document(id: String, names: Seq[String], dvNames: Set[String]): Gen[Document] = for {
    n <- Gen.choose(0, 4)
    fields <- Gen.listOfN(n, Gen.oneOf(names).flatMap(name => field(name, dvNames(name))))
    all <- Gen.frequency(2 -> true, 3 -> false)
  } yield {
    val composites =
      if (!all) IndexedSeq.empty
      else {
        val sources = fields.flatMap(f => f.tokens.map(t => (f.name, t)))
        val tokens = sources.groupBy(s => key(s._2.term)).toVector.sortBy(_._1).map { case (_, ts) =>
          Token(ts.head._2.term, ts.map(_._2.freq).sum, ts.flatMap { case (name, t) => t.locations.map(_.copy(field = name)) }.toIndexedSeq)
        }
        IndexedSeq(CompositeField("_all", allOptions, fields.map(_.length).sum, tokens))
      }
    Document(id, fields.toIndexedSeq :+ Document.idField(id.getBytes(UTF_8)), composites)
  }

  /** `size` documents with ids `doc<firstId>`... over `names` (default: a random non-empty subset of [[fieldNames]]). */
  def corpus(firstId: Int, size: Int, names: Option[Seq[String]] = None): Gen[IndexedSeq[Document]] = for {
    chosen <- names.fold(Gen.atLeastOne(fieldNames).map(_.toSeq))(Gen.const)
    dvNames <- Gen.someOf(chosen).map(_.toSet)
    docs <- Gen.sequence[Vector[Document], Document]((0 until size).map(i => document(f"doc${firstId + i}%05d", chosen, dvNames)))
  } yield docs

  /** Each of `0 until n` with probability 3/10. */
  def subset(n: Int): Gen[Set[Int]] =
    Gen.listOfN(n, Gen.frequency(3 -> true, 7 -> false)).map(_.zipWithIndex.collect { case (true, i) => i }.toSet)

  /** `_id` first, then the other names by their UTF-8 bytes (spec §15.2). */
  def fieldOrder(names: Iterable[String]): Vector[String] =
    "_id" +: (names.toSet - "_id").toVector.sortBy(n => key(n.getBytes(UTF_8)))

  type Loc = (String, Long, Long, Long, Seq[Long])
  final case class Hit(doc: Int, freq: Int, normBits: Int, locations: Seq[Loc])
  type StoredValue = (String, Char, String, Seq[Long])

  /** What a reader reports: field names by id, per field its terms in order with their hits,
    * per doc its stored values (`_id` first), per docvalue field its (doc, terms) in doc order. */
  final case class Index(
      fields: Seq[String],
      postings: Map[String, Seq[(String, Seq[Hit])]],
      stored: Seq[Seq[StoredValue]],
      docValues: Map[String, Seq[(Int, Seq[String])]]
  )

  /** The index of `docs`, field ids from `order` (default: the fields of `docs`). */
  def bruteForce(docs: Seq[Document], order: Option[Seq[String]] = None): Index = {
    val fields = order.getOrElse(fieldOrder(docs.flatMap(d => d.fields.map(_.name) ++ d.composites.map(_.name))))
    val ids = fields.zipWithIndex.toMap
    val postings = mutable.Map.empty[(String, String), Vector[Hit]]
    val docValues = mutable.LinkedHashMap.empty[String, Vector[(Int, Seq[String])]]
    val dvFields = docs.flatMap(_.fields.filter(_.options.docValues).map(_.name)).toSet
    val stored = for ((doc, num) <- docs.zipWithIndex) yield {
      // composites first, then regular fields in document order (§15.2)
      val instances = doc.composites.map(c => (c.name, c.length, c.tokens)) ++ doc.fields.map(f => (f.name, f.length, f.tokens))
      for (name <- instances.map(_._1).distinct) {
        val same = instances.filter(_._1 == name)
        val normBits = java.lang.Float.floatToRawIntBits((1.0 / math.sqrt(same.map(_._2).sum.toDouble)).toFloat)
        val terms = mutable.LinkedHashMap.empty[String, (Int, Vector[Loc])]
        for ((_, _, tokens) <- same; t <- tokens) {
          val (freq, locs) = terms.getOrElse(key(t.term), (0, Vector.empty))
          terms(key(t.term)) = (freq + t.freq, locs ++ t.locations.map(l => (if (l.field.isEmpty) name else l.field, l.pos, l.start, l.end, l.arrayPositions.toSeq)))
        }
        for ((term, (freq, locs)) <- terms) postings((name, term)) = postings.getOrElse((name, term), Vector.empty) :+ Hit(num, freq, normBits, locs)
        if (dvFields(name) && terms.nonEmpty) {
          // terms joined by 0xFF and split on 0xFF: a term holding 0xFF splits (a format limitation, §7.1)
          val joined = terms.keys.toVector.sorted.map(_ + "\u00ff").mkString
          docValues(name) = docValues.getOrElse(name, Vector.empty) :+ (num -> joined.split("\u00ff", -1).toSeq.dropRight(1))
        }
      }
      val values = doc.fields.filter(f => f.options.store && f.name != "_id").sortBy(f => ids(f.name))
      ("_id", 't', key(doc.fields.last.value), Seq.empty[Long]) +: values.map(f => (f.name, (f.fieldType & 0xff).toChar, key(f.value), f.arrayPositions.toSeq))
    }
    val byField = fields.map(f => f -> postings.toVector.collect { case ((`f`, term), hits) => term -> hits }.sortBy(_._1)).toMap
    Index(fields, byField, stored, docValues.toMap)
  }

  /** The same picture through the reader. */
  def readBack(seg: SegmentReader): Index = {
    val fields = seg.fields.map(_.name)
    val postings = seg.fields.map { f =>
      f.name -> seg.dictionary(f.id).terms().map { case (term, value) =>
        val pl = seg.postingsAt(value)
        key(term) -> (0 until pl.size).map { i =>
          Hit(pl.docs(i), pl.freqs(i), pl.normBits(i), pl.locations(i).map(l => (fields(l.fieldId), l.pos, l.start, l.end, l.arrayPositions.toSeq)))
        }
      }.toVector
    }.toMap
    val stored = (0 until seg.numDocs).map { d =>
      val doc = seg.document(d)
      ("_id", 't', key(doc.id), Seq.empty[Long]) +: doc.values.map(v => (fields(v.fieldId), (v.fieldType & 0xff).toChar, key(v.value), v.arrayPositions.toSeq))
    }
    val docValues = seg.fields.flatMap { f =>
      seg.docValues(f.id).map { section =>
        val values = Vector.newBuilder[(Int, Seq[String])]
        section.foreach((doc, value) => values += (doc -> DocValuesSection.split(value).map(key)))
        f.name -> values.result()
      }
    }.filter(_._2.nonEmpty).toMap
    Index(fields, postings, stored, docValues)
  }
}
