package io.indexbridge.bleve

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.{Executors, TimeUnit}

import scala.jdk.CollectionConverters._
import scala.util.Random

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import io.indexbridge.IndexFormatException
import io.indexbridge.bleve.Bolt.{Bucket, Node, Value}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/** Bolt against real bbolt v1.3.5 (integration/boltgo, built here with Go): generated trees
  * (nested, inline and empty buckets, sequences, overflow values, branch pages, big keys, page
  * sizes 512 to 16 KiB) written by bbolt read back exactly; written by us, they equal bbolt's
  * bytes (bbolt rewrites each until its random spill order is the key order) and bbolt reads
  * them and passes `tx.Check()`. Files bbolt wrote over several transactions and bleve's own
  * scorch `root.bolt` read as bbolt dumps them. Flipped bytes and truncations give a result
  * or IndexFormatException, nothing else. (tests/test_bleve_bolt.py holds Python to the same
  * files and to this writer's bytes through py4j.) */
class BoltSpec extends AnyFunSuite with BeforeAndAfterAll {
  private val mapper = new ObjectMapper
  private val tmp = Files.createTempDirectory("bolt-spec")

  override def afterAll(): Unit = {
    val paths = Files.walk(tmp)
    try paths.sorted(java.util.Comparator.reverseOrder[Path]()).forEach(p => Files.deleteIfExists(p))
    finally paths.close()
  }

  private val go = new BoltGo(tmp)

  private def bytes(s: String): Array[Byte] = s.getBytes(UTF_8)

  // -- generated trees ------------------------------------------------------------------------

  private def key(rng: Random): Array[Byte] = rng.nextInt(10) match {
    case n if n < 6 => Array.fill(1 + rng.nextInt(12))(rng.nextInt(256).toByte)
    case n if n < 8 => bytes(f"k${rng.nextInt(1000000)}%06d")
    case _          => Array.fill(1 + rng.nextInt(40))(Seq(0, 1, 0x7f, 0x80, 0xff)(rng.nextInt(5)).toByte)
  }

  private def randomBytes(rng: Random, n: Int): Array[Byte] = Array.fill(n)(rng.nextInt(256).toByte)

  private def value(rng: Random, pageSize: Int): Array[Byte] = rng.nextInt(20) match {
    case 0          => Array.emptyByteArray
    case n if n < 17 => randomBytes(rng, 1 + rng.nextInt(60))
    case n if n < 19 => randomBytes(rng, 60 + rng.nextInt(pageSize / 2))
    case _          => Array.fill(pageSize + rng.nextInt(2 * pageSize))(rng.nextInt(256).toByte) // overflow pages
  }

  private def isInline(b: Bucket, pageSize: Int): Boolean =
    b.entries.forall(_._2.isInstanceOf[Value]) && b.entries.map(e => 16 + e._1.length + e._2.asInstanceOf[Value].bytes.length).sum + 16 <= pageSize / 4

  private def randomBucket(rng: Random, pageSize: Int, depth: Int = 0): Bucket = {
    val items = scala.collection.mutable.LinkedHashMap[java.nio.ByteBuffer, Node]()
    def put(k: Array[Byte], n: Node): Unit = items(java.nio.ByteBuffer.wrap(k)) = n
    rng.nextInt(6) match {
      case 0 | 1 => for (_ <- 0 until 1 + rng.nextInt(8)) put(key(rng), Value(randomBytes(rng, rng.nextInt(20))))
      case 2     => for (_ <- 0 until 50 + rng.nextInt(1500)) put(key(rng), Value(value(rng, pageSize)))
      case 3 =>
        for (_ <- 0 until 1 + rng.nextInt(30)) put(key(rng), Value(value(rng, pageSize)))
        put(key(rng), Value(randomBytes(rng, pageSize + rng.nextInt(2 * pageSize))))
      case 4 =>
        for (_ <- 0 until 5 + rng.nextInt(if (pageSize <= 4096) 35 else 8))
          put(randomBytes(rng, pageSize / 4 + rng.nextInt(math.min(32768, 2 * pageSize) - pageSize / 4)), Value(randomBytes(rng, rng.nextInt(10))))
      case _ =>
    }
    if (depth < 3) for (_ <- 0 until (if (depth == 0) 1 + rng.nextInt(4) else Seq(0, 0, 1, 2, 4)(rng.nextInt(5))))
      put(key(rng), randomBucket(rng, pageSize, depth + 1))
    val paged = items.collect { case (k, b: Bucket) if !isInline(b, pageSize) => k }.drop(3)
    paged.foreach(items.remove)
    val sequence = if (depth == 0) 0L else Seq(0L, 0L, 0L, 1L, rng.nextLong())(rng.nextInt(5))
    Bucket.of(items.map { case (k, n) => k.array -> n }, sequence)
  }

  private def job(path: Path, pageSize: Int, txs: Seq[Bucket], canonical: Boolean): String =
    s"""{"path":"$path","page_size":$pageSize,"canonical":$canonical,"attempts":400,"txs":[${txs.map(Bolt.toJson).mkString(",")}]}"""

  private def goWrite(jobs: Seq[String]): Unit = {
    val file = Files.createTempFile(tmp, "jobs", ".json")
    Files.writeString(file, jobs.mkString("[", ",", "]"))
    for (result <- go("write", file.toString).asScala) assert(!result.has("error"), result.toString)
  }

  private def dumps(paths: Seq[Path]): Map[String, JsonNode] =
    go(("dump" +: paths.map(_.toString)): _*).asScala.map(d => d.get("path").asText -> d).toMap

  private def assertCleanDump(dump: JsonNode, tree: Bucket): Unit = {
    assert(!dump.has("error"), String.valueOf(dump.get("error")))
    assert(dump.get("check").isNull, dump.get("check").toString)
    assert(dump.get("tree") == mapper.readTree(Bolt.toJson(tree)))
  }

  test("bbolt's files read as their trees; ours equal bbolt's bytes; bbolt reads ours and its check passes") {
    val cases = (0 until 16).map { seed =>
      val rng = new Random(seed)
      val pageSize = Seq(4096, 4096, 4096, 512, 1024, 8192, 16384)(rng.nextInt(7))
      (seed, pageSize, randomBucket(rng, pageSize))
    }
    goWrite(cases.map { case (seed, ps, tree) => job(tmp.resolve(s"go$seed.bolt"), ps, Seq(tree), canonical = true) })
    for ((seed, ps, tree) <- cases) Bolt.writeFile(tmp.resolve(s"scala$seed.bolt"), tree, ps)
    val dumped = dumps(cases.flatMap { case (seed, _, _) => Seq(tmp.resolve(s"go$seed.bolt"), tmp.resolve(s"scala$seed.bolt")) })
    for ((seed, ps, tree) <- cases) {
      val goFile = tmp.resolve(s"go$seed.bolt")
      val ours = Bolt.readFile(goFile)
      assert(ours.root == tree, s"seed $seed")
      assert(ours.pageSize == ps && ours.meta.txid == 2)
      assertCleanDump(dumped(goFile.toString), tree)
      val scalaFile = tmp.resolve(s"scala$seed.bolt")
      assert(java.util.Arrays.equals(Files.readAllBytes(scalaFile), Files.readAllBytes(goFile)), s"seed $seed: bytes differ from bbolt's")
      assertCleanDump(dumped(scalaFile.toString), tree)
    }
  }

  private def mutate(rng: Random, tree: Bucket, pageSize: Int): Bucket = {
    val kept = tree.entries.filter(_ => rng.nextInt(6) != 0).map {
      case (k, b: Bucket) if rng.nextBoolean() => k -> randomBucket(rng, pageSize, 2)
      case other                              => other
    }
    val added = (0 until rng.nextInt(3)).map(_ => key(rng) -> randomBucket(rng, pageSize, 2))
    val merged = (kept ++ added).groupBy(e => java.nio.ByteBuffer.wrap(e._1)).values.map(_.last)
    Bucket.of(if (merged.isEmpty) Seq(bytes("x") -> Bucket.empty) else merged)
  }

  test("files bbolt wrote over several transactions (free pages, reused pages, no freelist) read as bbolt dumps them") {
    val cases = (0 until 8).map { seed =>
      val rng = new Random(100 + seed)
      val pageSize = Seq(512, 1024, 4096)(rng.nextInt(3))
      val txs = (0 until 2 + rng.nextInt(3)).scanLeft(randomBucket(rng, pageSize))((t, _) => mutate(rng, t, pageSize))
      (seed, pageSize, txs)
    }
    goWrite(cases.map { case (seed, ps, txs) =>
      job(tmp.resolve(s"multi$seed.bolt"), ps, txs, canonical = false).replace("\"canonical\"", s""""no_freelist_sync":${seed == 7},"canonical"""")
    })
    val dumped = dumps(cases.map { case (seed, _, _) => tmp.resolve(s"multi$seed.bolt") })
    for ((seed, _, txs) <- cases) {
      val path = tmp.resolve(s"multi$seed.bolt")
      val ours = Bolt.readFile(path)
      assert(ours.root == txs.last, s"seed $seed")
      assert(ours.meta.txid == dumped(path.toString).get("txid").asLong)
      assert(ours.freePages.isEmpty == (seed == 7))
      assertCleanDump(dumped(path.toString), txs.last)
    }
  }

  test("bleve v1.0.14's scorch root.bolt reads as bbolt dumps it, and rewritten it passes bbolt's check") {
    val index = tmp.resolve("index")
    go("scorch", index.toString, "5")
    val rootBolt = index.resolve("store").resolve("root.bolt")
    val file = Bolt.readFile(rootBolt)
    val dump = go("dump", rootBolt.toString).get(0)
    assert(dump.get("tree") == mapper.readTree(Bolt.toJson(file.root)) && dump.get("check").isNull)
    val snapshots = file.root.bucket(bytes("s")).get
    for ((_, snapshot: Bucket) <- snapshots.entries) assert(snapshot.at(bytes("m"), bytes("type")).contains(Value(bytes("zap"))))
    Bolt.writeFile(tmp.resolve("rewritten.bolt"), file.root)
    assertCleanDump(go("dump", tmp.resolve("rewritten.bolt").toString).get(0), file.root)
  }

  // -- bad input ----------------------------------------------------------------------------

  private def small: Array[Byte] = Bolt.write(
    Bucket(
      bytes("a") -> Bucket.withSequence(9)((0 until 40).map(i => bytes(f"$i%03d") -> Value(Array.fill[Byte](30)('v'))): _*),
      bytes("b") -> Bucket(
        bytes("in") -> Bucket(bytes("k") -> Value(bytes("v"))),
        bytes("out") -> Bucket(bytes("big") -> Value(Array.fill[Byte](700)('z'))),
        bytes("e") -> Bucket.empty
      )
    ),
    512
  )

  private val worker = Executors.newSingleThreadExecutor(r => { val t = new Thread(r, "bolt-mutation"); t.setDaemon(true); t })

  /** Reads every mutant on a worker, within a time limit: a result or IndexFormatException. */
  private def readAll(mutants: Iterator[Array[Byte]]): Int = {
    val task = worker.submit[Int] { () =>
      var failures = 0
      for (m <- mutants)
        try Bolt.toJson(Bolt.read(m, "mutant").root)
        catch { case e: IndexFormatException => assert(e.source == "mutant" && e.offset >= 0 && e.offset <= m.length); failures += 1 }
      failures
    }
    task.get(120, TimeUnit.SECONDS)
  }

  test("every byte flipped and random truncations: a result or IndexFormatException, nothing else") {
    val data = small
    val file = Bolt.read(data)
    val used = (file.meta.pgid * file.pageSize).toInt
    val flips = (0 until used).iterator.map { at =>
      val m = data.clone(); m(at) = (m(at) ^ Seq(0xff, 0x01, 0x80, 0x10)(at % 4)).toByte; m
    }
    assert(readAll(flips) > 100)
    val rng = new Random(3)
    val cuts = (Seq(0, 1, 15, 16, 79, 80, 511, 512, 592, used - 1) ++ Seq.fill(150)(rng.nextInt(used))).iterator.map(data.take)
    readAll(cuts)
  }

  test("clear errors: both meta pages broken, a cycle, a page past the high-water mark") {
    val tree = Bucket(bytes("a") -> Bucket.of((0 until 300).map(i => bytes(f"$i%04d") -> Value(Array.fill[Byte](40)('v')))))
    val data = Bolt.write(tree)
    val file = Bolt.read(data)
    val broken = data.clone()
    broken(40) = (broken(40) ^ 1).toByte
    assert(Bolt.readTree(broken) == Bucket.empty) // bbolt falls back to meta page 1: the empty database Open wrote
    broken(4096 + 40) = (broken(4096 + 40) ^ 1).toByte
    val e = intercept[IndexFormatException](Bolt.read(broken, "root.bolt"))
    assert(e.getMessage.startsWith("root.bolt: offset 0: a valid meta page") && e.getMessage.contains("checksum"))
    val buf = java.nio.ByteBuffer.wrap(data).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    val branch = (4 until file.meta.pgid.toInt).find(p => buf.getShort(p * 4096 + 8) == Bolt.BranchPage).get
    val cyclic = data.clone()
    java.nio.ByteBuffer.wrap(cyclic).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(branch * 4096 + 24, branch.toLong)
    assert(intercept[IndexFormatException](Bolt.read(cyclic)).expected.contains("reached again"))
    val far = data.clone()
    java.nio.ByteBuffer.wrap(far).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(branch * 4096 + 24, 1L << 40)
    val e2 = intercept[IndexFormatException](Bolt.read(far))
    assert(e2.offset == branch * 4096 + 24 && e2.expected.contains("a page id in 2.."))
    assert(intercept[IndexFormatException](Bolt.read(data.take(5 * 4096))).expected.contains("high-water mark"))
  }

  test("the writer rejects what bbolt rejects") {
    intercept[IllegalArgumentException](Bolt.write(Bucket(Array.emptyByteArray -> Bucket.empty)))
    intercept[IllegalArgumentException](Bolt.write(Bucket(bytes("a") -> Bucket(Array.fill[Byte](32769)(1) -> Value(Array.emptyByteArray)))))
    intercept[IllegalArgumentException](Bolt.write(Bucket(bytes("a") -> Bucket.empty, bytes("a") -> Bucket.empty)))
    intercept[IllegalArgumentException](Bolt.write(Bucket.withSequence(1)()))
    intercept[IllegalArgumentException](Bolt.write(Bucket.empty, 64))
  }
}
