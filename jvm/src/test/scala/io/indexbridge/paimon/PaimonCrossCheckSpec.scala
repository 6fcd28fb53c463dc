package io.indexbridge.paimon

import java.nio.file.Files

import scala.jdk.CollectionConverters._

import io.indexbridge.paimon.KeyType._
import it.unimi.dsi.fastutil.ints.IntOpenHashSet
import org.apache.paimon.data.{BinaryString, Decimal, GenericRow, Timestamp}
import org.apache.paimon.data.serializer.InternalRowSerializer
import org.apache.paimon.deletionvectors.{Bitmap64DeletionVector, BitmapDeletionVector, DeletionVectorsIndexFile}
import org.apache.paimon.deletionvectors.{DeletionVector => PaimonDeletionVector}
import org.apache.paimon.fs.{Path => PaimonPath}
import org.apache.paimon.fs.local.LocalFileIO
import org.apache.paimon.index.{HashIndexFile, IndexPathFactory}
import org.apache.paimon.memory.MemorySegment
import org.apache.paimon.options.MemorySize
import org.apache.paimon.types.{DataType, DataTypeJsonParser}
import org.apache.paimon.utils.{IntHashSet, MurmurHashUtils}
import org.scalacheck.Gen
import org.scalatest.funsuite.AnyFunSuite
import org.scalatestplus.scalacheck.ScalaCheckPropertyChecks

/** Our bytes against the real Paimon 1.4.2 classes (paimon-bundle, test scope). */
class PaimonCrossCheckSpec extends AnyFunSuite with ScalaCheckPropertyChecks {
  implicit override val generatorDrivenConfig: PropertyCheckConfiguration = PropertyCheckConfiguration(minSuccessful = io.indexbridge.Depth.checks(100))

  private def paimonDv(set: Iterable[Long], bitmap64: Boolean): PaimonDeletionVector = {
    val dv = if (bitmap64) new Bitmap64DeletionVector else new BitmapDeletionVector
    set.foreach(dv.delete)
    dv
  }

  for (bitmap64 <- Seq(false, true)) {
    val width = if (bitmap64) "64-bit" else "32-bit"

    test(s"$width DV: our frame equals DeletionVector.serializeToBytes, and each reads the other's") {
      forAll(DvGen.positions(bitmap64)) { set =>
        val ours = DeletionVector.fromPositions(set.toArray, bitmap64)
        val theirs = paimonDv(set, bitmap64)
        val bytes = PaimonDeletionVector.serializeToBytes(theirs)
        assert(ours.serialize().sameElements(bytes))
        assert(ours.indexMetaLength == theirs.serializeTo(new java.io.DataOutputStream(java.io.OutputStream.nullOutputStream())))
        assert(DeletionVector.deserialize(bytes) == ours)
        val back = PaimonDeletionVector.deserializeFromBytes(ours.serialize())
        assert(back.getCardinality == set.size && set.forall(back.isDeleted))
      }
    }

    test(s"$width DV: merging then serializing matches Paimon's merge") {
      forAll(DvGen.positions(bitmap64), DvGen.positions(bitmap64)) { (a, b) =>
        val ours = DeletionVector.fromPositions(a.toArray, bitmap64)
        ours.serialize() // run-optimised containers first, as after an earlier commit
        ours.merge(DeletionVector.fromPositions(b.toArray, bitmap64))
        val theirs = paimonDv(a, bitmap64)
        PaimonDeletionVector.serializeToBytes(theirs)
        theirs.merge(paimonDv(b, bitmap64))
        assert(ours.serialize().sameElements(PaimonDeletionVector.serializeToBytes(theirs)))
      }
    }

    test(s"$width DV: positions added in any order and in chunks serialize as Paimon's delete one by one") {
      // the containers must be the ones Paimon's `add` leaves, starting empty and from a DV Paimon
      // wrote (run containers)
      forAll(DvGen.positions(bitmap64), DvGen.positions(bitmap64), Gen.long, Gen.choose(1, 200)) { (a, b, seed, chunk) =>
        val random = new scala.util.Random(seed)
        val added = random.shuffle(b.toVector).toArray
        val theirs = paimonDv(a, bitmap64)
        val ours = DeletionVector.deserialize(PaimonDeletionVector.serializeToBytes(theirs))
        val fresh = DeletionVector.empty(bitmap64)
        for (from <- 0 until added.length by chunk) {
          val n = math.min(chunk, added.length - from)
          ours.deleteAll(added.slice(from, from + n), n)
          fresh.deleteAll(added.slice(from, from + n) ++ Array.fill(3)(-1L), n) // (only the first n count)
        }
        added.foreach(theirs.delete)
        assert(ours.serialize().sameElements(PaimonDeletionVector.serializeToBytes(theirs)))
        assert(fresh.serialize().sameElements(PaimonDeletionVector.serializeToBytes(paimonDv(added, bitmap64))))
      }
    }

    test(s"$width deletion files: writeSingleFile and writeWithRolling over a HashMap, byte for byte") {
      val names = Gen.listOf(Gen.uuid.map(u => s"data-$u-0.parquet"))
      val sets = Gen.resize(3, DvGen.positions(bitmap64))
      forAll(names.flatMap(ns => Gen.listOfN(ns.distinct.length, sets).map(ns.distinct.zip(_))), Gen.choose(-1L, 4000L)) {
        (entries, target) =>
          val dir = Files.createTempDirectory("ib-paimon-dv")
          val factory = new IndexPathFactory {
            private var n = 0
            def toPath(fileName: String) = new PaimonPath(dir.resolve(fileName).toString)
            def newPath() = { n += 1; toPath(s"index-$n") }
            def isExternalPath = false
          }
          val writer = new DeletionVectorsIndexFile(LocalFileIO.create(), factory, MemorySize.ofBytes(math.max(target, 0L)), bitmap64)
          val map = new java.util.HashMap[String, PaimonDeletionVector]()
          entries.foreach { case (name, set) => map.put(name, paimonDv(set, bitmap64)) }
          val metas = if (target < 0) List(writer.writeSingleFile(map)) else writer.writeWithRolling(map).asScala.toList

          val ours = DeletionFile.encode(entries.map { case (n, s) => n -> DeletionVector.fromPositions(s.toArray, bitmap64) }, target)
          assert(ours.length == metas.length)
          for (((bytes, ranges), meta) <- ours.zip(metas)) {
            assert(bytes.sameElements(Files.readAllBytes(dir.resolve(meta.fileName))))
            assert(meta.fileSize == bytes.length && meta.rowCount == ranges.length)
            val theirRanges = meta.dvRanges.asScala.values.toList.map(m => DeletionVectorRange(m.dataFileName, m.offset, m.length, m.cardinality))
            assert(ranges == theirRanges)
          }
      }
    }
  }

  private val keyTypes: Gen[KeyType] = Gen.oneOf(
    Gen.oneOf(BooleanType, TinyIntType, SmallIntType, IntType, BigIntType, FloatType, DoubleType, DateType),
    Gen.choose(0, 9).map(TimeType(_)),
    Gen.choose(0, 9).map(TimestampType(_)),
    Gen.choose(0, 9).map(LocalZonedTimestampType(_)),
    Gen.oneOf(Gen.choose(1, 50).map(CharType(_)), Gen.choose(1, 50).map(VarCharType(_)), Gen.const(VarCharType(Int.MaxValue))),
    Gen.oneOf(Gen.choose(1, 50).map(BinaryType(_)), Gen.choose(1, 50).map(VarBinaryType(_)), Gen.const(VarBinaryType(Int.MaxValue))),
    for { p <- Gen.choose(1, 38); s <- Gen.choose(0, p) } yield DecimalType(p, s)
  )

  private def valueOf(t: KeyType): Gen[Any] = {
    val value: Gen[Any] = t match {
      case BooleanType                  => Gen.oneOf(true, false)
      case TinyIntType                  => Gen.choose(Byte.MinValue, Byte.MaxValue)
      case SmallIntType                 => Gen.choose(Short.MinValue, Short.MaxValue)
      case IntType | DateType | TimeType(_) => Gen.choose(Int.MinValue, Int.MaxValue)
      case BigIntType                   => Gen.long
      case FloatType                    => Gen.choose(Int.MinValue, Int.MaxValue).map(java.lang.Float.intBitsToFloat)
      case DoubleType                   => Gen.long.map(java.lang.Double.longBitsToDouble)
      case CharType(_) | VarCharType(_) => Gen.oneOf(Gen.alphaNumStr, Gen.stringOf(Gen.choose('\u0000', '\uffff'))).map(_.take(20))
      case BinaryType(_) | VarBinaryType(_) => Gen.choose(0, 20).flatMap(n => Gen.listOfN(n, Gen.choose(Byte.MinValue, Byte.MaxValue))).map(_.toArray)
      case DecimalType(p, s) =>
        for { digits <- Gen.choose(1, p); unscaled <- Gen.listOfN(digits, Gen.numChar); negative <- Gen.prob(0.5) }
          yield new java.math.BigDecimal(new java.math.BigInteger((if (negative) "-" else "") + unscaled.mkString), s)
      case TimestampType(_) | LocalZonedTimestampType(_) =>
        for { millis <- Gen.choose(-10000000000000L, 10000000000000L); nanos <- Gen.choose(0, 999999) } yield (millis, nanos)
    }
    Gen.frequency(1 -> Gen.const(null), 9 -> value)
  }

  private def paimonValue(v: Any, t: KeyType): AnyRef = (v, t) match {
    case (null, _)                                          => null
    case (s: String, _)                                     => BinaryString.fromString(s)
    case (d: java.math.BigDecimal, DecimalType(p, s))       => Decimal.fromBigDecimal(d, p, s)
    case ((millis: Long, nanos: Int), _)                    => Timestamp.fromEpochMillis(millis, nanos)
    case (other: AnyRef, _)                                 => other
    case (other, _)                                         => other.asInstanceOf[AnyRef]
  }

  test("BinaryRow: our key rows and hashes equal InternalRowSerializer.toBinaryRow for every key type") {
    val arity = Gen.frequency(8 -> Gen.choose(1, 8), 1 -> Gen.choose(55, 70))
    val rows = arity.flatMap(n => Gen.listOfN(n, keyTypes)).flatMap(ts => Gen.sequence[List[Any], Any](ts.map(valueOf)).map(ts -> _))
    forAll(rows, minSuccessful(300)) { case (types, values) =>
      val sql = types.map(fileindex.FileIndexGen.sqlOf)
      assert(sql.map(KeyType.parse) == types)
      val paimonTypes: Seq[DataType] = sql.map(DataTypeJsonParser.parseAtomicTypeSQLString)
      val row = new InternalRowSerializer(paimonTypes: _*)
        .toBinaryRow(GenericRow.of(values.zip(types).map { case (v, t) => paimonValue(v, t) }: _*))
      assert(KeyHash.binaryRow(values, types).sameElements(row.toBytes), sql)
      assert(KeyHash.hash(values, types) == row.hashCode)
    }
  }

  test("Murmur: murmurBytes is BinaryString.hashCode and murmurWords is MurmurHashUtils.hashBytesByWords") {
    forAll(Gen.choose(0, 64).flatMap(n => Gen.listOfN(n, Gen.choose(Byte.MinValue, Byte.MaxValue))).map(_.toArray), Gen.choose(0, 3)) {
      (bytes, skip) =>
        val off = math.min(skip, bytes.length)
        val len = bytes.length - off
        assert(PaimonHash.murmurBytes(bytes, off, len) == BinaryString.fromBytes(bytes, off, len).hashCode)
        val words = len - len % 4
        assert(PaimonHash.murmurWords(bytes, off, words) == MurmurHashUtils.hashBytesByWords(MemorySegment.wrap(bytes), off, words))
    }
  }

  test("HASH order: paimonOrder equals Paimon's IntHashSet and fastutil's IntOpenHashSet, file bytes equal HashIndexFile's") {
    val hashes = Gen.oneOf(
      Gen.listOf(Gen.choose(Int.MinValue, Int.MaxValue)),
      Gen.listOf(Gen.choose(-50, 50)),
      Gen.choose(0, 5000).flatMap(n => Gen.listOfN(n, Gen.frequency(10 -> Gen.choose(Int.MinValue, Int.MaxValue), 1 -> Gen.const(0), 1 -> Gen.choose(-3, 3))))
    ).map(_.toArray)
    val dir = Files.createTempDirectory("ib-paimon-hash")
    val factory = new IndexPathFactory {
      private var n = 0
      def toPath(fileName: String) = new PaimonPath(dir.resolve(fileName).toString)
      def newPath() = { n += 1; toPath(s"index-$n") }
      def isExternalPath = false
    }
    val hashIndexFile = new HashIndexFile(LocalFileIO.create(), factory)
    forAll(hashes) { adds =>
      val paimon = new IntHashSet
      val fastutil = new IntOpenHashSet
      adds.foreach { h => paimon.add(h); fastutil.add(h) }
      val order = HashIndex.paimonOrder(adds)
      assert(order.sameElements(paimon.toInts))
      assert(order.sameElements(fastutil.toIntArray))
      val meta = hashIndexFile.write(paimon.toIntIterator)
      assert(HashIndex.encodePaimon(adds).sameElements(Files.readAllBytes(dir.resolve(meta.fileName))))
      assert(meta.rowCount == order.length)
    }
  }
}
