package io.indexbridge.paimon

import java.nio.charset.StandardCharsets.UTF_8
import java.util.HexFormat

import io.indexbridge.paimon.KeyType._
import org.scalatest.funsuite.AnyFunSuite

class BucketIndexSpec extends AnyFunSuite {
  private val hex = HexFormat.of()

  test("KeyType parses Paimon's SQL type strings") {
    val cases = Seq(
      "INT" -> IntType, "integer" -> IntType, "BIGINT" -> BigIntType, "TINYINT" -> TinyIntType,
      "SMALLINT" -> SmallIntType, "BOOLEAN" -> BooleanType, "FLOAT" -> FloatType, "DOUBLE" -> DoubleType,
      "DATE" -> DateType, "TIME" -> TimeType(0), "TIME(0)" -> TimeType(0), "TIME(3)" -> TimeType(3),
      "STRING" -> VarCharType(Int.MaxValue), "VARCHAR(40)" -> VarCharType(40), "CHAR(3)" -> CharType(3),
      "BYTES" -> VarBinaryType(Int.MaxValue), "BINARY(5)" -> BinaryType(5), "VARBINARY(9)" -> VarBinaryType(9),
      "DECIMAL(10, 2)" -> DecimalType(10, 2), "DECIMAL(38,6)" -> DecimalType(38, 6), "DECIMAL" -> DecimalType(10, 0),
      "DECIMAL(5)" -> DecimalType(5, 0), "TIMESTAMP" -> TimestampType(6), "TIMESTAMP(6)" -> TimestampType(6),
      "TIMESTAMP(3) WITHOUT TIME ZONE" -> TimestampType(3), "TIMESTAMP(3) WITH LOCAL TIME ZONE" -> LocalZonedTimestampType(3),
      "TIMESTAMP_LTZ(9)" -> LocalZonedTimestampType(9), "  int not null " -> IntType, "BIGINT NOT NULL" -> BigIntType
    )
    for ((sql, expected) <- cases) assert(KeyType.parse(sql) == expected, sql)
    for (bad <- Seq("MAP<INT, INT>", "ARRAY<INT>", "DECIMAL(39, 0)", "DECIMAL(5, 6)", "TIMESTAMP(10)", "INT(3)", "CHAR(0)", "INT WITH LOCAL TIME ZONE", "", "VARIANT"))
      assert(intercept[IllegalArgumentException](KeyType.parse(bad)).getMessage.startsWith(s"unsupported key type '$bad'"))
  }

  test("PaimonHash.murmurBytes is BinaryString.hashCode (hash_functions.json)") {
    val json = PaimonVectors.json(PaimonVectors.cases("hashes").head)
    val entries = json.path("binary_string_hash_code")
    assert(entries.size > 10)
    entries.forEach { e =>
      val bytes = hex.parseHex(e.path("utf8_hex").asText)
      assert(PaimonHash.murmurBytes(bytes, 0, bytes.length) == e.path("hash_code").asInt, e)
    }
    intercept[IllegalArgumentException](PaimonHash.murmurWords(new Array[Byte](6), 0, 6))
  }

  test("an INT key row is 16 bytes: header word, then the value in an 8-byte slot") {
    assert(hex.formatHex(KeyHash.binaryRow(Seq(2), Seq(IntType))) == "00000000000000000200000000000000")
    assert(KeyHash.hash(Seq(0), Seq(IntType)) == -300363099) // hash_pk_int.json, key 0
  }

  test("short strings sit in their slot, long ones in the 8-byte aligned variable part") {
    val short = KeyHash.binaryRow(Seq("abc"), Seq(VarCharType(Int.MaxValue)))
    assert(hex.formatHex(short) == "0000000000000000" + "6162630000000083")
    val long = KeyHash.binaryRow(Seq("abcdefghi"), Seq(VarCharType(Int.MaxValue)))
    assert(hex.formatHex(long) == "0000000000000000" + "0900000010000000" + "6162636465666768" + "6900000000000000")
  }

  test("non-compact DECIMAL and TIMESTAMP use a variable slot, even for NULL") {
    val types = Seq(DecimalType(20, 2), TimestampType(6), IntType)
    val row = KeyHash.binaryRow(Seq(BigDecimal("-1.00"), (1000L, 123456), null), types)
    assert(hex.formatHex(row) ==
      "0004000000000000" + // null bit of field 2 (bit 10)
      "0100000020000000" + "40e2010030000000" + "0000000000000000" + // slots: decimal (1 byte at 32), timestamp (nanos, at 48), null
      "9c00000000000000" + "0000000000000000" + // unscaled -100: one big-endian byte, zero-filled to 16
      "e803000000000000") // 1000 millis
    val nulls = KeyHash.binaryRow(Seq(null, null, 7), types)
    assert(hex.formatHex(nulls) ==
      "0003000000000000" + "0000000020000000" + "0000000030000000" + "0700000000000000" +
      "0000000000000000" * 3)
  }

  test("the builder is reusable and its hashCode is the row's") {
    val builder = new BinaryRowBuilder(2)
    builder.writeString(0, "a long string value".getBytes(UTF_8))
    builder.writeLong(1, 5L)
    builder.reset()
    val utf8 = "xxshort".getBytes(UTF_8)
    builder.writeString(0, utf8, 2, 5)
    builder.writeLong(1, 7L)
    val expected = KeyHash.binaryRow(Seq("short", 7L), Seq(VarCharType(10), BigIntType))
    assert(builder.bytes.sameElements(expected) && builder.length == expected.length)
    assert(builder.hashCode == PaimonHash.murmurWords(expected, 0, expected.length))
    assert(builder.hashCode == KeyHash.hash(Seq("short", 7L), Seq(VarCharType(10), BigIntType)))
    intercept[IndexOutOfBoundsException](builder.writeInt(2, 1))
  }

  test("KeyHash says which value does not fit its type") {
    def bad(v: Any, t: KeyType) = intercept[IllegalArgumentException](KeyHash.hash(Seq(v), Seq(t))).getMessage
    assert(bad(300, TinyIntType).contains("expects a value in -128..127"))
    assert(bad("x", IntType).contains("expects an integral number"))
    assert(bad(BigDecimal("1.234"), DecimalType(10, 2)).contains("at most 2 fraction digits"))
    assert(bad(BigDecimal("123456789.1"), DecimalType(10, 2)).contains("at most 10 digits"))
    assert(bad((1L, 1000000), TimestampType(6)).contains("expects (millis"))
    intercept[IllegalArgumentException](KeyHash.hash(Seq(1, 2), Seq(IntType)))
  }

  test("HASH files are big-endian ints; a trailing partial int is end of file") {
    val hashes = Array(0, 1, -1, Int.MinValue, Int.MaxValue, 0x01020304)
    val bytes = HashIndex.encode(hashes)
    assert(hex.formatHex(bytes) == "00000000" + "00000001" + "ffffffff" + "80000000" + "7fffffff" + "01020304")
    assert(HashIndex.decode(bytes, "h").sameElements(hashes))
    assert(HashIndex.decode(bytes ++ Array[Byte](1, 2, 3), "h").sameElements(hashes))
    assert(HashIndex.decode(Array.emptyByteArray, "h").isEmpty)
    assert(HashIndex.encodePaimon(Array(5, 0, 5, 3)).sameElements(HashIndex.encode(HashIndex.paimonOrder(Array(5, 0, 5, 3)))))
    assert(HashIndex.paimonOrder(Array(5, 0, 5, 3)).sorted.sameElements(Array(0, 3, 5)))
    assert(HashIndex.paimonOrder(Array(5, 0, 5, 3)).head == 0)
  }
}
