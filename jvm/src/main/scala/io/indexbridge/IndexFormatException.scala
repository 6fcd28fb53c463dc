package io.indexbridge

/** The one error type of the library: a malformed input, naming the file, the byte offset at
  * which the problem was found, and what the format expects there. */
final class IndexFormatException(val source: String, val offset: Long, val expected: String)
    extends RuntimeException(s"$source: offset $offset: $expected")
