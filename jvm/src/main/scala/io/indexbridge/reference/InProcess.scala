package io.indexbridge.reference

import java.io.{PrintWriter, StringWriter}
import java.lang.reflect.InvocationTargetException

import scala.jdk.CollectionConverters._

/** The reference programs' `main`s (`PaimonAnswers`, `PaimonWriteReference`, ...) called one after
  * another in a JVM that stays up (the Python side's private py4j gateway, `indexbridge.jvm.run_reference`),
  * in place of a `java` process apiece: each of those spent 4-6 CPU-seconds starting and loading
  * Paimon's classes, and a test file runs a dozen. Every input and output of a `main` is a file,
  * so nothing but the arguments and a failure's stack trace crosses py4j.
  */
object InProcess {

  /** Runs `io.indexbridge.reference.<main>.main(args)`; null when it returned, else the stack
    * trace of what it threw (returned, not thrown, so that the caller's py4j error handling, which
    * may be PySpark's and tied to another JVM, never sees a Java exception of this one).
    */
  def run(main: String, args: java.util.List[String]): String = {
    val entry = Class.forName(s"io.indexbridge.reference.$main").getMethod("main", classOf[Array[String]])
    try {
      entry.invoke(null, args.asScala.toArray)
      null
    } catch {
      case e: InvocationTargetException =>
        val trace = new StringWriter()
        e.getCause.printStackTrace(new PrintWriter(trace))
        trace.toString
    }
  }
}
