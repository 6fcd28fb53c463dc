// The Scala half of indexbridge: codecs over org.roaringbitmap plus Spark functions.
// Spark and RoaringBitmap are "provided": Spark ships RoaringBitmap, and the jar is loaded
// into a Spark that already has both.
ThisBuild / organization := "io.indexbridge"
ThisBuild / version := "0.1.0"
ThisBuild / scalaVersion := "2.13.16"

val sparkVersion = "4.0.1"

lazy val root = (project in file("."))
  .settings(
    name := "indexbridge",
    Compile / scalaSource := baseDirectory.value / "jvm" / "src" / "main" / "scala",
    Compile / resourceDirectory := baseDirectory.value / "jvm" / "src" / "main" / "resources",
    Test / scalaSource := baseDirectory.value / "jvm" / "src" / "test" / "scala",
    Test / resourceDirectory := baseDirectory.value / "jvm" / "src" / "test" / "resources",
    // The analyzers' tables live once, beside the Python module that reads them too.
    Compile / resourceGenerators += Def.task {
      val src = baseDirectory.value / "python" / "indexbridge" / "zap"
      val out = (Compile / resourceManaged).value / "io" / "indexbridge" / "zap"
      Seq("word_break_u8.txt", "letters.txt", "to_lower.txt", "stop_en.txt").map { name =>
        IO.copyFile(src / name, out / name)
        out / name
      }
    }.taskValue,
    scalacOptions ++= Seq("-deprecation", "-feature", "-release", "17"),
    libraryDependencies ++= Seq(
      "org.apache.spark" %% "spark-sql" % sparkVersion % Provided,
      "org.roaringbitmap" % "RoaringBitmap" % "1.3.0" % Provided,
      // zap's snappy blocks are decoded with the snappy-java Spark 4.0.1 ships (Provided is on the Test classpath too)
      "org.xerial.snappy" % "snappy-java" % "1.1.10.7" % Provided,
      "org.scalatest" %% "scalatest" % "3.2.19" % Test,
      "org.scalacheck" %% "scalacheck" % "1.18.1" % Test,
      "org.scalatestplus" %% "scalacheck-1-18" % "3.2.19.0" % Test,
      "it.unimi.dsi" % "fastutil" % "8.5.12" % Test,
      // Paimon's own classes: the baseline of `indexbridge bench fileindex` (io.indexbridge.bench.FileIndexBench,
      // which the bench loads with the jar scripts/bootstrap.sh fetches) and of the cross-check tests; never in the jar
      "org.apache.paimon" % "paimon-bundle" % "1.4.2" % Provided,
      // Iceberg's and Delta's own readers and writers: the references of the lakehouse DV tests (Puffin,
      // Delta DV files, tables read through Spark); Iceberg's runtime jar already holds iceberg-core; never in the jar
      "org.apache.iceberg" % "iceberg-spark-runtime-4.0_2.13" % "1.11.0" % Provided intransitive (),
      "io.delta" % "delta-spark_4.0_2.13" % "4.4.0" % Provided intransitive (),
      "io.delta" % "delta-storage" % "4.4.0" % Provided intransitive ()
    ),
    Test / fork := true,
    // the C1 compiler only: the suites are many short runs (Spark sessions, Paimon's writers, a few
    // hundred cases per property), where C2's compiler threads cost more CPU than their code saves
    // (four suites: 215 -> 160 CPU-s at the same wall time on 2 cores); the parallel collector:
    // G1 ran 156 concurrent cycles in a whole run, most started by humongous allocations (the
    // suites' MB-sized arrays), which this one does not have (six suites: 271 -> 243 CPU-s, 186 ->
    // 167 s)
    Test / javaOptions ++= Seq("-Xmx2g", "-XX:TieredStopAtLevel=1", "-XX:+UseParallelGC"),
    // the tests' temporary files (tables, segments, Spark's scratch) under target/test-tmp, emptied
    // when a test run starts (test or testOnly): the last run's stay there to look at, and none
    // pile up in /tmp
    Test / javaOptions += s"-Djava.io.tmpdir=${target.value / "test-tmp"}",
    Test / testOptions += {
      val tmp = target.value / "test-tmp"
      Tests.Setup { () =>
        IO.delete(tmp)
        IO.createDirectory(tmp)
      }
    },
    // each test's duration in the log (-oD), as the pytest lanes print their slowest
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
    Test / baseDirectory := baseDirectory.value
  )
