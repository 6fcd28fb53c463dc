package io.indexbridge.zap

import java.nio.charset.StandardCharsets.UTF_8
import java.time.Instant

import scala.collection.immutable.ArraySeq
import scala.collection.mutable
import scala.reflect.ClassTag
import scala.io.Source
import scala.jdk.CollectionConverters._

/** bleve v1.0.14's analyzers and document mapping: raw values to the writer's input ([[Document]]).
  *
  * {{{
  * keyword    single token: the whole value                   (tokenizer/single)
  * simple     runs of unicode.IsLetter, lower-cased           (tokenizer/letter + to_lower)
  * standard   UAX#29 words, lower-cased, English stop words   (tokenizer/unicode + to_lower + stop_en)
  * }}}
  *
  * A token is (term bytes, byte start, byte end, position); positions count the tokenizer's
  * tokens from 1, so a removed stop word leaves a gap.
  *
  * Hand-written (as python/indexbridge/zap/analyzers.py, whose module comment has the details)
  * because each analyzer must reproduce the Go code's exact boundaries, not Unicode's current
  * rules (ICU4J's word iterator follows Unicode 13+ and segments CJK by dictionary). The tables
  * are the ones the Python module reads, extracted from the Go sources: `word_break_u8.txt`
  * (blevesearch/segment v0.9.0's Unicode 8.0.0 word-break classes and scripts), `to_lower.txt`
  * and `letters.txt` (Go's unicode.ToLower / unicode.IsLetter), `stop_en.txt`. The scanner takes
  * the longest match of its rules at each position; [[Analyzer.wordEnd]] is its word rules as a
  * DFA over word-break classes. Inputs where this differs from Go: none known
  * (tests/data/zap_analyzer_cases.json and integration/test_zap_go.py hold it to bleve; the
  * lower-case and letter tables are those of Go 1.26, Unicode 15.0).
  *
  * [[Analysis.analyzeDocument]] maps `field -> value` pairs in document order as bleve's mapping
  * and scorch do: one field instance per array element, `_id` last, and the `_all` composite
  * from every indexed field mapped `includeInAll` (composing stamps the source field's name on
  * that field's own locations, as bleve's shared location objects do).
  */
final case class AnalyzedToken(term: Array[Byte], start: Int, end: Int, position: Int)

object Analyzer {
  val Names: Seq[String] = Seq("keyword", "simple", "standard")

  private def tableLines(name: String): Iterator[Array[String]] = {
    val in = getClass.getResourceAsStream(s"/io/indexbridge/zap/$name")
    require(in != null, s"analysis table $name is missing from the jar")
    val src = Source.fromInputStream(in, "UTF-8")
    try src.getLines().filter(l => l.nonEmpty && !l.startsWith("#")).map(_.split(' ')).toVector.iterator
    finally src.close()
  }

  // Word-break classes (one per property/script pair the scanner distinguishes).
  private final val Other = 0
  private final val ALetter = 1; private final val Hebrew = 2; private final val Numeric = 3
  private final val Katakana = 4; private final val ExtendNumLet = 5; private final val MidLetter = 6
  private final val MidNum = 7; private final val MidNumLet = 8; private final val SingleQuote = 9
  private final val DoubleQuote = 10; private final val Extend = 11; private final val Format = 12
  private final val ALetterHangul = 13; private final val ALetterHan = 14; private final val ExtendHangul = 15
  private final val Hangul = 16; private final val Han = 17; private final val Hiragana = 18
  private final val NumClasses = 19

  private val wordBreakClass = Map(
    "ALetter" -> ALetter, "Hebrew_Letter" -> Hebrew, "Numeric" -> Numeric, "Katakana" -> Katakana,
    "ExtendNumLet" -> ExtendNumLet, "MidLetter" -> MidLetter, "MidNum" -> MidNum, "MidNumLet" -> MidNumLet,
    "Single_Quote" -> SingleQuote, "Double_Quote" -> DoubleQuote, "Extend" -> Extend, "Format" -> Format)
  private val scriptClass = Map(
    ("ALetter", "Hangul") -> ALetterHangul, ("ALetter", "Han") -> ALetterHan, ("Extend", "Hangul") -> ExtendHangul,
    ("-", "Hangul") -> Hangul, ("-", "Han") -> Han, ("-", "Hiragana") -> Hiragana)

  /** Class per BMP code point; supplementary ones by binary search over (first, last, class) ranges. */
  private val (bmpClass, suppFirst, suppLast, suppClass) = {
    val bmp = new Array[Byte](0x10000)
    val first, last, cls = mutable.ArrayBuilder.make[Int]
    for (Array(f, l, wb, script) <- tableLines("word_break_u8.txt")) {
      val c = scriptClass.getOrElse((wb, script), wordBreakClass.getOrElse(wb, Other))
      val lo = Integer.parseInt(f, 16); val hi = Integer.parseInt(l, 16)
      if (c != Other) {
        for (cp <- lo to math.min(hi, 0xffff)) bmp(cp) = c.toByte
        if (hi > 0xffff) { first += math.max(lo, 0x10000); last += hi; cls += c }
      }
    }
    (bmp, first.result(), last.result(), cls.result())
  }

  private def classOf(cp: Int): Int =
    if (cp < 0x10000) bmpClass(cp)
    else {
      val k = java.util.Arrays.binarySearch(suppFirst, cp)
      val i = if (k >= 0) k else -k - 2
      if (i >= 0 && cp <= suppLast(i)) suppClass(i) else Other
    }

  private def isExtend(c: Int): Boolean = c == Extend || c == Format || c == ExtendHangul
  private def isHangul(c: Int): Boolean = c == ALetterHangul || c == ExtendHangul || c == Hangul

  // The word rules of segment_words.rl as a DFA (see analyzers.py): A letter, H Hebrew letter,
  // P the HL closing HL " HL, S HL + ', N number, U ExtendNumLet, K Katakana are accepting;
  // L letter + mid-letter, M number + mid-number, D HL + " are pending.
  private final val Dead = -1
  private final val Start = 0; private final val SA = 1; private final val SH = 2; private final val SP = 3
  private final val SS = 4; private final val SN = 5; private final val SU = 6; private final val SK = 7
  private final val SL = 8; private final val SM = 9; private final val SD = 10
  private val accepting = Array(false, true, true, true, true, true, true, true, false, false, false)

  private val dfa: Array[Array[Int]] = {
    val t = Array.fill(11, NumClasses)(Dead)
    def letters(s: Int): Unit = {
      for (c <- Seq(ALetter, ALetterHangul, ALetterHan)) t(s)(c) = SA
      t(s)(Hebrew) = SH; t(s)(Numeric) = SN; t(s)(ExtendNumLet) = SU
    }
    Seq(Start, SA, SH, SP, SS, SN, SU).foreach(letters)
    t(Start)(Katakana) = SK; t(SU)(Katakana) = SK
    for (c <- Seq(MidLetter, MidNumLet, SingleQuote)) t(SA)(c) = SL
    for (c <- Seq(MidLetter, MidNumLet)) t(SH)(c) = SL
    t(SH)(SingleQuote) = SS; t(SH)(DoubleQuote) = SD
    for (c <- Seq(MidNum, MidNumLet, SingleQuote)) t(SN)(c) = SM
    t(SK)(Katakana) = SK; t(SK)(ExtendNumLet) = SU
    for (c <- Seq(ALetter, ALetterHangul, ALetterHan, Hebrew)) t(SL)(c) = SA
    t(SM)(Numeric) = SN
    t(SD)(Hebrew) = SP
    t
  }

  private def skipExtend(classes: Array[Int], from: Int): Int = {
    var i = from
    while (i < classes.length && isExtend(classes(i))) i += 1
    i
  }

  /** End of the longest word rule match at `i` (`i` when only the none rules match there). */
  private[zap] def wordEnd(classes: Array[Int], i: Int): Int = {
    var best = i
    val c = classes(i)
    if (isHangul(c)) {
      var j = i
      while (j < classes.length && isHangul(classes(j))) j = skipExtend(classes, j + 1)
      best = j
    } else if (c == ALetterHan || c == Han || c == Hiragana) best = skipExtend(classes, i + 1)
    var state = Start
    var j = i
    while (j < classes.length && state != Dead) {
      state = dfa(state)(classes(j))
      if (state != Dead) {
        j = skipExtend(classes, j + 1)
        if (accepting(state) && j > best) best = j
      }
    }
    best
  }

  /** Code point spans (over `cps`) of the segments blevesearch/segment types as words: start, end pairs. */
  private def wordSpans(cps: Array[Int]): mutable.ArrayBuilder.ofInt = {
    val classes = new Array[Int](cps.length)
    var c = 0
    while (c < cps.length) { classes(c) = classOf(cps(c)); c += 1 }
    val spans = new mutable.ArrayBuilder.ofInt
    var i = 0
    while (i < classes.length) {
      val end = wordEnd(classes, i)
      if (end > i) { spans += i; spans += end; i = end }
      else i += 1
    }
    spans
  }

  private val (letterFirst, letterLast) = {
    val rows = tableLines("letters.txt").toArray
    (rows.map(r => Integer.parseInt(r(0), 16)), rows.map(r => Integer.parseInt(r(1), 16)))
  }

  private def isLetterRange(cp: Int): Boolean = {
    val k = java.util.Arrays.binarySearch(letterFirst, cp)
    val i = if (k >= 0) k else -k - 2
    i >= 0 && cp <= letterLast(i)
  }

  /** The BMP answers of [[isLetterRange]], looked up per code point instead of searched. */
  private val bmpLetter: java.util.BitSet = {
    val bits = new java.util.BitSet(0x10000)
    for (i <- letterFirst.indices if letterFirst(i) < 0x10000) bits.set(letterFirst(i), math.min(letterLast(i), 0xffff) + 1)
    bits
  }

  private def isLetter(cp: Int): Boolean = if (cp < 0x10000) bmpLetter.get(cp) else isLetterRange(cp)

  /** tokenizer/character with unicode.IsLetter; it stops at U+FFFD (Go's utf8.RuneError). */
  private def letterSpans(cps: Array[Int]): mutable.ArrayBuilder.ofInt = {
    val spans = new mutable.ArrayBuilder.ofInt
    var start = -1
    var i = 0
    while (i < cps.length && cps(i) != 0xfffd) {
      if (isLetter(cps(i))) { if (start < 0) start = i }
      else if (start >= 0) { spans += start; spans += i; start = -1 }
      i += 1
    }
    if (start >= 0) { spans += start; spans += i }
    spans
  }

  private def utf8Len(cp: Int): Int = if (cp < 0x80) 1 else if (cp < 0x800) 2 else if (cp < 0x10000) 3 else 4

  /** Go's unicode.ToLower: a table for the BMP, a map above it; `resized` marks runes whose lower case has another UTF-8 width. */
  private val (bmpLower, suppLower, resized) = {
    val bmp = Array.tabulate(0x10000)(identity)
    val supp = mutable.HashMap.empty[Int, Int]
    val resized = new java.util.BitSet
    for (Array(r, l) <- tableLines("to_lower.txt")) {
      val cp = Integer.parseInt(r, 16); val lower = Integer.parseInt(l, 16)
      if (cp < 0x10000) bmp(cp) = lower else supp(cp) = lower
      if (utf8Len(lower) != utf8Len(cp)) resized.set(cp)
    }
    (bmp, supp, resized)
  }

  private def lowerOf(cp: Int): Int = if (cp < 0x10000) bmpLower(cp) else suppLower.getOrElse(cp, cp)

  private def putUtf8(out: Array[Byte], at: Int, cp: Int): Int =
    if (cp < 0x80) { out(at) = cp.toByte; at + 1 }
    else if (cp < 0x800) { out(at) = (0xc0 | cp >> 6).toByte; out(at + 1) = (0x80 | cp & 0x3f).toByte; at + 2 }
    else if (cp < 0x10000) {
      out(at) = (0xe0 | cp >> 12).toByte; out(at + 1) = (0x80 | cp >> 6 & 0x3f).toByte; out(at + 2) = (0x80 | cp & 0x3f).toByte; at + 3
    } else {
      out(at) = (0xf0 | cp >> 18).toByte; out(at + 1) = (0x80 | cp >> 12 & 0x3f).toByte
      out(at + 2) = (0x80 | cp >> 6 & 0x3f).toByte; out(at + 3) = (0x80 | cp & 0x3f).toByte; at + 4
    }

  /** bleve's to_lower filter (toLowerDeferredCopy), rune by rune with Go's unicode.ToLower.
    *
    * It lower-cases in place, reading at `i` and writing at `j`; unchanged runes are skipped
    * without being copied, so once a rune shrank (İ -> i) the bytes after it are not moved and
    * the term is cut short (possibly invalid UTF-8). A rune whose lower case is wider hands the
    * rest to bytes.ToLower; a last rune lowering to σ becomes ς.
    */
  private def lower(cps: Array[Int], from: Int, until: Int, byteLength: Int): Array[Byte] = {
    var k = from
    while (k < until && !resized.get(cps(k))) k += 1
    if (k == until) { // same widths: the in-place quirks cannot show
      val out = new Array[Byte](byteLength)
      var at = 0
      k = from
      while (k < until) {
        val cp = cps(k)
        at = putUtf8(out, at, if (cp == 'Σ' && k == until - 1) 'ς' else lowerOf(cp))
        k += 1
      }
      return out
    }
    val buf = new String(cps, from, until - from).getBytes(UTF_8)
    var i = 0
    var j = 0
    k = from
    while (k < until) {
      val cp = cps(k)
      val width = utf8Len(cp)
      var l = lowerOf(cp)
      if (l == cp) { i += width; j += width }
      else {
        if (l == 'σ' && i + 2 == buf.length) l = 'ς'
        val enc = new String(Character.toChars(l)).getBytes(UTF_8)
        if (enc.length > width) {
          val rest = new String(cps.slice(k, until).map(lowerOf), 0, until - k).getBytes(UTF_8)
          return java.util.Arrays.copyOf(buf, j) ++ rest
        }
        System.arraycopy(enc, 0, buf, j, enc.length)
        i += width; j += enc.length
      }
      k += 1
    }
    if (j == buf.length) buf else java.util.Arrays.copyOf(buf, j)
  }

  // ASCII: a term is one iff its bytes are the word's
  private val stopWords: java.util.HashSet[SegmentWriter.Term] =
    new java.util.HashSet(tableLines("stop_en.txt").map(r => new SegmentWriter.Term(r(0).getBytes(UTF_8))).toSeq.asJava)
  private val longestStopWord = stopWords.asScala.map(_.bytes.length).max

  private def isStopWord(term: Array[Byte]): Boolean =
    term.length <= longestStopWord && stopWords.contains(new SegmentWriter.Term(term))

  /** The code points of `text` (String.codePoints without its stream's buffers). */
  private def codePoints(text: String): Array[Int] = {
    val cps = new Array[Int](text.length)
    var n = 0
    var i = 0
    while (i < text.length) {
      val cp = text.codePointAt(i)
      cps(n) = cp; n += 1
      i += Character.charCount(cp)
    }
    if (n == cps.length) cps else java.util.Arrays.copyOf(cps, n)
  }

  /** Tokens of `text` as bleve's analyzer `analyzer` (keyword, simple, standard) emits them. */
  def analyze(text: String, analyzer: String): IndexedSeq[AnalyzedToken] = analyzer match {
    case "keyword" =>
      val value = text.getBytes(UTF_8)
      IndexedSeq(AnalyzedToken(value, 0, value.length, 1))
    case "simple" | "standard" =>
      val cps = codePoints(text)
      val spans = (if (analyzer == "simple") letterSpans(cps) else wordSpans(cps)).result()
      val out = IndexedSeq.newBuilder[AnalyzedToken]
      var cp = 0
      var byte = 0
      var k = 0
      while (k < spans.length) {
        val start = spans(k); val end = spans(k + 1)
        while (cp < start) { byte += utf8Len(cps(cp)); cp += 1 }
        val byteStart = byte
        while (cp < end) { byte += utf8Len(cps(cp)); cp += 1 }
        val term = lower(cps, start, end, byte - byteStart)
        if (analyzer == "simple" || !isStopWord(term)) out += AnalyzedToken(term, byteStart, byte, k / 2 + 1)
        k += 2
      }
      out.result()
    case other => throw new IllegalArgumentException(s"unknown analyzer '$other'; expected one of ${Names.mkString(", ")}")
  }
}

/** mapping.FieldMapping; `termVectors = None` takes bleve's default for the type (text only). */
final case class FieldMapping(
    name: String,
    fieldType: String = "text",
    analyzer: String = "standard",
    index: Boolean = true,
    store: Boolean = true,
    termVectors: Option[Boolean] = None,
    docValues: Boolean = true,
    includeInAll: Boolean = true
) {
  require(Analysis.FieldTypes.contains(fieldType), s"field '$name': unknown type '$fieldType'; expected one of ${Analysis.FieldTypes.mkString(", ")}")
  require(Analyzer.Names.contains(analyzer), s"field '$name': unknown analyzer '$analyzer'")
  def options: FieldOptions = FieldOptions(index, store, termVectors.getOrElse(fieldType == "text"), docValues)
}

object Analysis {
  val FieldTypes: Seq[String] = Seq("text", "number", "boolean", "datetime")
  val AllFieldName = "_all"
  private final val ShiftStartInt64 = 0x20 // numeric.ShiftStartInt64
  private final val PrecisionStep = 4 // document.DefaultPrecisionStep
  private val allOptions = FieldOptions(index = true, store = false, termVectors = true, docValues = false)

  /** numeric.NewPrefixCodedInt64: shift byte, then the sign-flipped value >>> shift in 7-bit groups. */
  def prefixCodedInt64(value: Long, shift: Int): Array[Byte] = {
    val nChars = (63 - shift) / 7 + 1
    val out = new Array[Byte](nChars + 1)
    out(0) = (ShiftStartInt64 + shift).toByte
    var sortable = (value ^ Long.MinValue) >>> shift
    var k = nChars
    while (k >= 1) { out(k) = (sortable & 0x7f).toByte; sortable >>>= 7; k -= 1 }
    out
  }

  /** numeric.Float64ToInt64: the IEEE bits, magnitude bits flipped for negatives (sortable). */
  def float64ToInt64(value: Double): Long = {
    val bits = java.lang.Double.doubleToRawLongBits(value)
    if (bits < 0) bits ^ Long.MaxValue else bits
  }

  private def numericTokens(value: Long): IndexedSeq[AnalyzedToken] = {
    val tokens = new Array[AnalyzedToken](64 / PrecisionStep)
    for (k <- tokens.indices) {
      val term = prefixCodedInt64(value, k * PrecisionStep)
      tokens(k) = AnalyzedToken(term, 0, term.length, 1)
    }
    ArraySeq.unsafeWrapArray(tokens)
  }

  private val locationTag = ClassTag[Location](classOf[Location])

  private val noLocations: IndexedSeq[Location] = ArraySeq.empty[Location]

  /** One term's count and locations; the location buffer only once a location comes. */
  private final class Frequency(val term: Array[Byte]) {
    var freq = 0
    var locations: mutable.ArrayBuffer[Location] = null
    def add(l: Location): Unit = {
      if (locations == null) locations = new mutable.ArrayBuffer[Location](1)
      locations += l
    }
    def addAll(ls: mutable.ArrayBuffer[Location]): Unit =
      if (ls != null) { if (locations == null) locations = new mutable.ArrayBuffer[Location](ls.length); locations ++= ls }
    def token: Token =
      Token(term, freq, if (locations == null) noLocations else ArraySeq.unsafeWrapArray(locations.toArray(locationTag)))
  }

  /** analysis.TokenFrequencies: term (bytes, compared byte-wise) -> frequency. */
  private final class Frequencies(expectedTerms: Int) {
    val terms = new java.util.HashMap[SegmentWriter.Term, Frequency](expectedTerms * 4 / 3 + 1) // sized: no rehashing while filled
    def entry(key: SegmentWriter.Term): Frequency = {
      var e = terms.get(key)
      if (e == null) { e = new Frequency(key.bytes); terms.put(key, e) }
      e
    }
    def entry(term: Array[Byte]): Frequency = entry(new SegmentWriter.Term(term))
    /** Adds every term of `other` (freqs add, locations append). */
    def addAll(other: Frequencies): Unit =
      other.terms.forEach { (key, o) => val e = entry(key); e.freq += o.freq; e.addAll(o.locations) }
    /** Tokens in byte order of their terms. */
    def tokens: IndexedSeq[Token] = {
      val entries = terms.values.toArray(new Array[Frequency](0))
      java.util.Arrays.sort(entries, (a: Frequency, b: Frequency) => java.util.Arrays.compareUnsigned(a.term, b.term))
      val tokens = new Array[Token](entries.length)
      for (i <- entries.indices) tokens(i) = entries(i).token
      ArraySeq.unsafeWrapArray(tokens)
    }
  }

  /** One field instance as bleve's mapping emits it (a `document.Field` before analysis):
    * `value` is a String (text), Double (number; any float64, NaN and infinities included, as
    * bleve indexes them), Boolean (boolean) or Long nanoseconds since the epoch (datetime). */
  final case class FieldValue(name: String, fieldType: String, value: Any, arrayPositions: Array[Long], analyzer: String,
                              options: FieldOptions)

  /** (stored type byte, value bytes, tokens) of one field instance. */
  private def valueTokens(f: FieldValue): (Byte, Array[Byte], IndexedSeq[AnalyzedToken]) = (f.fieldType, f.value) match {
    case ("text", s: String) => ('t'.toByte, s.getBytes(UTF_8), Analyzer.analyze(s, f.analyzer))
    case ("boolean", b: Boolean) =>
      val term = Array((if (b) 'T' else 'F').toByte)
      ('b'.toByte, term, IndexedSeq(AnalyzedToken(term, 0, 1, 1)))
    case ("number", d: Double) =>
      val tokens = numericTokens(float64ToInt64(d))
      ('n'.toByte, tokens.head.term, tokens)
    case ("datetime", n: Long) =>
      val tokens = numericTokens(n)
      ('d'.toByte, tokens.head.term, tokens)
    case _ => throw new IllegalArgumentException(s"field '${f.name}' of type ${f.fieldType} cannot hold ${f.value}")
  }

  /** The writer input scorch's `analyze` builds from a mapped document: `fields` in document
    * order, `_id` appended; `allExcluded` the names bleve's mapping excluded from `_all` (every
    * indexed field of another name is composed into it), None for a mapping with `_all` disabled. */
  def composeDocument(docId: String, fields: Seq[FieldValue], allExcluded: Option[collection.Set[String]]): Document = {
    val out = IndexedSeq.newBuilder[DocField]
    val all = new Frequencies(16)
    var allLength = 0
    for (f <- fields) {
      val (typeByte, stored, tokens) = valueTokens(f)
      val options = f.options
      if (!options.index) out += DocField(f.name, typeByte, stored, f.arrayPositions, options, 0, IndexedSeq.empty)
      else {
        val inAll = allExcluded.exists(ex => !ex.contains(f.name))
        val locationField = if (inAll) f.name else "" // bleve's _all composition renames the field's own locations
        val freqs = new Frequencies(tokens.length)
        for (t <- tokens) {
          val e = freqs.entry(t.term)
          e.freq += 1
          if (options.termVectors) e.add(Location(locationField, t.position, t.start, t.end, f.arrayPositions))
        }
        if (inAll) {
          allLength += tokens.length
          all.addAll(freqs)
        }
        out += DocField(f.name, typeByte, stored, f.arrayPositions, options, tokens.length, freqs.tokens)
      }
    }
    out += Document.idField(docId.getBytes(UTF_8))
    val composites = if (allExcluded.isDefined) IndexedSeq(CompositeField(AllFieldName, allOptions, allLength, all.tokens)) else IndexedSeq.empty
    Document(docId, out.result(), composites)
  }

  /** The writer input bleve's scorch builds for a document mapped field by field.
    *
    * `values` in document order; a `Seq` value is an array (one field instance per element,
    * array position = index). Values: String (text), Number (number), Boolean, java.time.Instant
    * (datetime). Every field needs a mapping (bleve's own mapping JSON, dynamic mapping included: `io.indexbridge.bleve.IndexMapping`).
    * `allField = false` is a mapping with `_all` disabled.
    */
  def analyzeDocument(docId: String, values: Seq[(String, Any)], mappings: Seq[FieldMapping], allField: Boolean = true): Document = {
    val byName = mappings.map(m => m.name -> m).toMap
    val fields = IndexedSeq.newBuilder[FieldValue]
    val excluded = mutable.HashSet.empty[String]
    for ((name, value) <- values) {
      val mapping = byName.getOrElse(name, throw new IllegalArgumentException(s"document '$docId': no mapping for field '$name'"))
      if (!mapping.includeInAll) excluded += name
      val elements: Seq[(Any, Array[Long])] = value match {
        case s: Seq[_] => s.zipWithIndex.map { case (v, i) => (v, Array(i.toLong)) }
        case v => Seq((v, Array.emptyLongArray))
      }
      for ((element, arrayPositions) <- elements)
        fields += FieldValue(name, mapping.fieldType, rawValue(mapping, element), arrayPositions, mapping.analyzer, mapping.options)
    }
    composeDocument(docId, fields.result(), if (allField) Some(excluded) else None)
  }

  /** A value under an explicit [[FieldMapping]] as [[FieldValue]] holds it. */
  private def rawValue(mapping: FieldMapping, value: Any): Any = (mapping.fieldType, value) match {
    case ("text", s: String) => s
    case ("boolean", b: Boolean) => b
    case ("number", n: java.lang.Number) if java.lang.Double.isFinite(n.doubleValue) => n.doubleValue
    case ("datetime", t: Instant) => Math.addExact(Math.multiplyExact(t.getEpochSecond, 1000000000L), t.getNano.toLong)
    case _ => throw new IllegalArgumentException(s"field '${mapping.name}' of type ${mapping.fieldType} cannot hold $value")
  }
}
