package io.indexbridge.paimon.fileindex

import java.nio.file.Paths

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import io.indexbridge.IndexFormatException
import io.indexbridge.paimon.KeyType
import org.apache.spark.sql.catalyst.parser.CatalystSqlParser
import org.scalatest.funsuite.AnyFunSuite

import scala.util.Try

/** The shared table of conditions (tests/conditions.json, also run by tests/test_condition.py):
  * the Scala parser and binder make the trees and errors the Python ones make, and they fail
  * with a syntax, literal or type error exactly where Spark's own parser does. */
class ConditionSpec extends AnyFunSuite {
  private val mapper = new ObjectMapper
  private val table = mapper.readTree(Paths.get("tests", "conditions.json").toFile)
  private val types: Map[String, KeyType] =
    table.path("types").fields.asScala.map(e => e.getKey -> KeyType.parse(e.getValue.asText)).toMap

  private def json(node: JsonNode): String = mapper.writeValueAsString(node)

  test("the table is where the tests expect it") {
    assert(table.path("cases").size > 100)
  }

  for (c <- table.path("cases").asScala) {
    val condition = c.path("condition").asText
    test(s"condition [$condition]") {
      if (c.has("error")) {
        val e = intercept[IndexFormatException](Condition.parse(condition, "q"))
        assert((e.source, e.offset, e.expected) == (("q", c.path("error").path("offset").asLong, c.path("error").path("message").asText)))
      } else {
        val parsed = Condition.parse(condition)
        assert(json(Condition.predicateJson(parsed)) == json(c.path("parsed")))
        if (c.path("bind_error").asBoolean) intercept[IllegalArgumentException](Condition.bind(parsed, types.get))
        else assert(json(Condition.predicateJson(Condition.bind(parsed, types.get))) == json(c.path("bound")))
      }
    }
  }

  test("Spark's CatalystSqlParser rejects exactly the conditions failing with a syntax, literal or type error") {
    val parseErrors = Seq("a condition in Spark SQL syntax", "a valid literal", "a type name", "a valid data type")
    for (c <- table.path("cases").asScala) {
      val condition = c.path("condition").asText
      val sparkAccepts = Try(CatalystSqlParser.parseExpression(condition)).isSuccess
      val message = c.path("error").path("message").asText
      if (!sparkAccepts) assert(parseErrors.exists(message.startsWith), condition)
      else assert(!parseErrors.filterNot(_ == "a valid literal").exists(message.startsWith), condition)
    }
  }
}
