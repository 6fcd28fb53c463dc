package io.indexbridge.zap

/** The writer's input: one analysed document as bleve's `index.AnalysisResult` hands it to zap
  * (spec/zap.md §15.1; the `input` model of vectors/zap/README.md).
  *
  * {{{
  * Document(id, fields = regular fields in document order (scorch appends "_id" last),
  *              composites = composite fields such as "_all")
  * DocField(name, type byte t/n/d/b/g, value, arrayPositions, options, length, tokens)
  * Token(term, freq, locations)          locations empty when the field has no term vectors
  * Location(field, pos, start, end, arrayPositions)   field "" = the owning field
  * }}}
  */
final case class FieldOptions(index: Boolean, store: Boolean, termVectors: Boolean, docValues: Boolean)

final case class Location(field: String, pos: Long, start: Long, end: Long, arrayPositions: Array[Long])

final case class Token(term: Array[Byte], freq: Int, locations: IndexedSeq[Location])

final case class DocField(
    name: String,
    fieldType: Byte,
    value: Array[Byte],
    arrayPositions: Array[Long],
    options: FieldOptions,
    length: Int,
    tokens: IndexedSeq[Token]
)

final case class CompositeField(name: String, options: FieldOptions, length: Int, tokens: IndexedSeq[Token])

final case class Document(id: String, fields: IndexedSeq[DocField], composites: IndexedSeq[CompositeField] = IndexedSeq.empty)

object Document {
  private val keywordOptions = FieldOptions(index = true, store = true, termVectors = false, docValues = false)

  /** The `_id` field scorch appends to every document: stored, indexed as one token, no term vectors. */
  def idField(id: Array[Byte]): DocField =
    DocField("_id", 't'.toByte, id, Array.emptyLongArray, keywordOptions, 1, IndexedSeq(Token(id, 1, IndexedSeq.empty)))
}
