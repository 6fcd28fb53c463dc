package io.indexbridge.bleve

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.{Files, Path, Paths}
import java.util.{Arrays, BitSet}

import scala.collection.mutable.ArrayBuffer

import io.indexbridge.{IndexFormatException, Storage}

/** BoltDB files as go.etcd.io/bbolt v1.3.5 writes them (bleve v1.0.14 scorch's `store/root.bolt`);
  * the twin of Python's `indexbridge.bleve.bolt`.
  *
  * A bolt file is an array of pages of `pageSize` bytes (the writer's OS page size, 4096 here;
  * recorded in the meta pages). Integers are little-endian (bbolt writes its structs in machine
  * order; every platform bleve ships on is little-endian). Page `n` starts at `n * pageSize`; a
  * page with `overflow = k` spans `k + 1` pages:
  * {{{
  * page header (16 bytes, every page)
  *     u64 id          the page's own number
  *     u16 flags       0x01 branch, 0x02 leaf, 0x04 meta, 0x10 freelist
  *     u16 count       elements (branch, leaf) or free ids (freelist; 0xFFFF: see below)
  *     u32 overflow    extra pages that follow this one
  *
  * meta pages 0 and 1 (header, then 64 bytes)
  *     u32 magic 0xED0CDAED | u32 version 2 | u32 page_size | u32 flags
  *     u64 root        root bucket's root page  | u64 sequence of the root bucket
  *     u64 freelist    freelist page (0xFFFFFFFFFFFFFFFF: none, NoFreelistSync)
  *     u64 pgid        high-water mark: pages 0 .. pgid-1 exist
  *     u64 txid        transaction that wrote it; meta page txid % 2
  *     u64 checksum    FNV-64a of the 56 bytes before it
  *   The valid meta page (magic, version, checksum) with the higher txid is the database.
  *
  * freelist page (flags 0x10)
  *     count < 0xFFFF: count x u64 free page ids
  *     count = 0xFFFF: u64 n, then n x u64 free page ids
  *
  * branch page (flags 0x01)                leaf page (flags 0x02)
  *     count x element (16 bytes):             count x element (16 bytes):
  *         u32 pos   key at element + pos          u32 flags  0, or 0x01: the value is a bucket
  *         u32 ksize                               u32 pos    key at element + pos, value after it
  *         u64 pgid  child page                    u32 ksize
  *     keys, in element order                      u32 vsize
  *                                             keys and values, in element order
  *
  * bucket value (a leaf element with flags 0x01)
  *     u64 root        the bucket's root page, or 0: an inline bucket
  *     u64 sequence    NextSequence's counter
  *     inline bucket: a leaf page follows in the value itself (header id 0, no nested buckets)
  * }}}
  *
  * Keys are non-empty and ascend bytewise (unsigned) through a bucket's leaves; a branch
  * element's key is its child's first key. The writer does what one bbolt transaction does on a
  * new database (`Open` writes meta pages 0/1 with txid 0/1, an empty freelist page 2 and an
  * empty leaf page 3; the transaction, txid 2, adds every bucket and key): child buckets that fit
  * in a quarter page and hold no buckets are inlined, the others spill first (in key order), then
  * the bucket's own node, split into pages filled to half a page, branch levels above; new pages
  * are numbered from 4; the freelist lists pages 2 and 3 (freed by the transaction), meta page 0
  * gets txid 2, meta page 1 keeps txid 1, and the file is padded to bbolt's mmap size (32 KiB,
  * 64 KiB, ... 1 GiB). bbolt spills sibling buckets in Go's random map order, so its pages for a
  * bucket with two or more non-inline child buckets come in any order; this writer's layout is
  * the one that spills them in key order.
  *
  * The reader checks every page id against the high-water mark and the file, every element
  * against its page, that no page is reached twice (cycles, shared pages), that keys ascend and
  * that no page in use is also free; it walks with explicit stacks, so depth costs no recursion.
  */
object Bolt {
  val Magic: Int = 0xed0cdaed
  val Version = 2
  val DefaultPageSize = 4096
  val PageHeaderSize = 16
  val ElementSize = 16 // branch and leaf elements alike
  val MetaSize = 64
  val BucketHeaderSize = 16
  val BranchPage = 0x01
  val LeafPage = 0x02
  val MetaPage = 0x04
  val FreelistPage = 0x10
  val BucketLeafFlag = 0x01
  val NoFreelist: Long = -1L // 0xFFFFFFFFFFFFFFFF
  val MaxKeySize = 32768
  val MaxValueSize: Long = (1L << 31) - 2
  val MinPageSize: Int = PageHeaderSize + MetaSize
  val FreelistCountOverflow = 0xffff
  private val MinKeysPerPage = 2
  private val FillPercent = 0.5 // bbolt's DefaultFillPercent
  private val AllocSize = 16L << 20 // DB.AllocSize: how far the file grows past 16 MiB of mmap
  private val MaxMmapStep = 1L << 30
  private val MaxMapSize = 0xffffffffffffL // amd64

  /** A value or a nested bucket. */
  sealed trait Node

  /** A key's value. */
  final class Value(val bytes: Array[Byte]) extends Node {
    override def equals(other: Any): Boolean = other match {
      case v: Value => Arrays.equals(bytes, v.bytes)
      case _        => false
    }
    override def hashCode: Int = Arrays.hashCode(bytes)
    override def toString: String = s"Value(${hex(bytes)})"
  }

  object Value {
    def apply(bytes: Array[Byte]): Value = new Value(bytes)
  }

  /** A bucket: keys to values and nested buckets (in key order when read), and its sequence.
    * Two buckets are equal when their sequences and their items, in key order, are. */
  final class Bucket private[bleve] (val entries: scala.collection.IndexedSeq[(Array[Byte], Node)], val sequence: Long) extends Node {
    private lazy val index: Map[ByteBuffer, Node] = entries.iterator.map { case (k, n) => ByteBuffer.wrap(k) -> n }.toMap

    def get(key: Array[Byte]): Option[Node] = index.get(ByteBuffer.wrap(key))
    def value(key: Array[Byte]): Option[Array[Byte]] = get(key).collect { case v: Value => v.bytes }
    def bucket(key: Array[Byte]): Option[Bucket] = get(key).collect { case b: Bucket => b }

    /** The value or bucket at a key path, e.g. `at("s".getBytes, epoch, "m".getBytes)`. */
    def at(path: Array[Byte]*): Option[Node] =
      path.foldLeft(Option[Node](this)) {
        case (Some(b: Bucket), key) => b.get(key)
        case _                      => None
      }

    def keys: scala.collection.IndexedSeq[Array[Byte]] = entries.map(_._1)
    def size: Int = entries.size

    private[bleve] def sorted: scala.collection.IndexedSeq[(Array[Byte], Node)] = entries.sortWith((a, b) => Arrays.compareUnsigned(a._1, b._1) < 0)

    override def equals(other: Any): Boolean = other match {
      case b: Bucket =>
        sequence == b.sequence && entries.size == b.entries.size &&
        sorted.zip(b.sorted).forall { case ((k1, n1), (k2, n2)) => Arrays.equals(k1, k2) && n1 == n2 }
      case _ => false
    }
    override def hashCode: Int = sorted.foldLeft(sequence.hashCode)((h, e) => h * 31 + Arrays.hashCode(e._1) * 17 + e._2.hashCode)
    override def toString: String = s"Bucket(${entries.map { case (k, n) => s"${hex(k)} -> $n" }.mkString(", ")}; sequence $sequence)"
  }

  object Bucket {
    def apply(entries: (Array[Byte], Node)*): Bucket = new Bucket(entries.toVector, 0L)
    def withSequence(sequence: Long)(entries: (Array[Byte], Node)*): Bucket = new Bucket(entries.toVector, sequence)
    def of(entries: Iterable[(Array[Byte], Node)], sequence: Long = 0L): Bucket = new Bucket(entries.toVector, sequence)
    val empty: Bucket = apply()
  }

  /** One meta page: where the root bucket and the freelist are, the high-water mark, the txid. */
  final case class Meta(page: Int, pageSize: Int, flags: Int, root: Long, sequence: Long, freelist: Long, pgid: Long, txid: Long, checksum: Long)

  /** A bolt file, decoded whole and checked: the current meta page, the free pages (sorted;
    * None without a freelist) and the tree of buckets. */
  final class BoltFile(val meta: Meta, val freePages: Option[IndexedSeq[Long]], val root: Bucket) {
    def pageSize: Int = meta.pageSize
    def get(path: Array[Byte]*): Option[Node] = root.at(path: _*)
  }

  /** Go's `hash/fnv` New64a over `bytes(from until until)`: the meta page checksum. */
  def fnv64a(bytes: Array[Byte], from: Int, until: Int): Long = {
    var h = 0xcbf29ce484222325L
    var i = from
    while (i < until) { h = (h ^ (bytes(i) & 0xff)) * 0x100000001b3L; i += 1 }
    h
  }

  def read(bytes: Array[Byte], source: String = "<bytes>"): BoltFile = new Reader(bytes, source).file

  def readFile(path: Path): BoltFile = {
    val size = Files.size(path)
    if (size > Int.MaxValue - 8) throw new IndexFormatException(path.toString, 0L, s"a bolt file below 2 GiB, found $size bytes")
    read(Files.readAllBytes(path), path.toString)
  }

  /** The whole tree of a bolt file. */
  def readTree(bytes: Array[Byte], source: String = "<bytes>"): Bucket = read(bytes, source).root

  /** The bolt file one bbolt v1.3.5 transaction writes for `root` on a new database: `root`'s
    * items are the top-level buckets (bbolt keeps no sequence for the root bucket). */
  def write(root: Bucket, pageSize: Int = DefaultPageSize): Array[Byte] = new Writer(pageSize).write(root)

  /** [[write]] into `path`, atomically (temporary name, then rename). */
  def writeFile(path: Path, root: Bucket, pageSize: Int = DefaultPageSize): Unit = Storage.writeAtomically(path, write(root, pageSize))

  /** Reads `in` and writes its tree to `out` at the same page size (the cross-language tests). */
  def rewrite(in: String, out: String): Unit = {
    val file = readFile(Paths.get(in))
    writeFile(Paths.get(out), file.root, file.pageSize)
  }

  /** The tree of the bolt file at `path` as JSON: `{"seq": n, "items": [[key hex, value hex |
    * bucket], ...]}` (the form of integration/boltgo's dump). */
  def treeJson(path: String): String = toJson(readFile(Paths.get(path)).root)

  def toJson(bucket: Bucket): String = {
    val out = new java.lang.StringBuilder
    def open(b: Bucket): Unit = out.append("{\"seq\":").append(java.lang.Long.toUnsignedString(b.sequence)).append(",\"items\":[")
    // an explicit stack of (a bucket's items, the next one): deep trees cost no recursion
    val stack = scala.collection.mutable.Stack[(scala.collection.IndexedSeq[(Array[Byte], Node)], Int)]((bucket.sorted, 0))
    open(bucket)
    while (stack.nonEmpty) {
      val (items, i) = stack.pop()
      if (i == items.size) {
        out.append("]}")
        if (stack.nonEmpty) out.append(']') // closes the [key, bucket] pair
      } else {
        if (i > 0) out.append(',')
        val (key, node) = items(i)
        out.append("[\"").append(hex(key)).append("\",")
        stack.push((items, i + 1))
        node match {
          case v: Value  => out.append('"').append(hex(v.bytes)).append("\"]")
          case c: Bucket => open(c); stack.push((c.sorted, 0))
        }
      }
    }
    out.toString
  }

  private def hex(bytes: Array[Byte]): String = java.util.HexFormat.of().formatHex(bytes)

  // -- reader --------------------------------------------------------------------------------

  private final class Reader(data: Array[Byte], source: String) {
    private val buf = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN)
    private def fail(at: Long, expected: String): Nothing = throw new IndexFormatException(source, at, expected)
    private def u16(at: Int): Int = buf.getShort(at) & 0xffff
    private def u32(at: Int): Long = buf.getInt(at) & 0xffffffffL
    private def u64(at: Int): Long = buf.getLong(at)

    val meta: Meta = selectMeta()
    private val pageSize = meta.pageSize
    private val highWater = meta.pgid.toInt
    private val inUse = new BitSet(highWater)
    inUse.set(0, 2)
    private val free = readFreelist()
    private val root = readTree()
    for (ids <- free; pgid <- ids if inUse.get(pgid.toInt))
      fail(pgid * pageSize, s"page $pgid is in use but listed as free")
    val file = new BoltFile(meta, free, root)

    /** Meta page `index` at `offset`, or why it is not a valid one. */
    private def metaAt(index: Int, offset: Int): Either[String, Meta] = {
      val where = s"meta page $index at offset $offset"
      if (offset.toLong + PageHeaderSize + MetaSize > data.length)
        return Left(s"$where: ${PageHeaderSize + MetaSize} bytes, the file has ${data.length}")
      val id = u64(offset)
      val flags = u16(offset + 8)
      if (id != index || flags != MetaPage) return Left(s"$where: header id $index flags 0x04, found id $id flags 0x${flags.toHexString}")
      val m = offset + PageHeaderSize
      if (buf.getInt(m) != Magic) return Left(s"$where: magic 0xed0cdaed, found 0x${buf.getInt(m).toHexString}")
      if (buf.getInt(m + 4) != Version) return Left(s"$where: version 2, found ${u32(m + 4)}")
      val checksum = fnv64a(data, m, m + MetaSize - 8)
      if (checksum != u64(m + 56))
        return Left(s"$where: checksum 0x${java.lang.Long.toHexString(checksum)}, found 0x${java.lang.Long.toHexString(u64(m + 56))}")
      val pageSize = u32(m + 8)
      if (pageSize < MinPageSize || pageSize > Int.MaxValue || (index == 1 && pageSize != offset))
        return Left(s"$where: a page size of ${math.max(offset, MinPageSize)}, found $pageSize")
      Right(Meta(index, pageSize.toInt, buf.getInt(m + 12), u64(m + 16), u64(m + 24), u64(m + 32), u64(m + 40), u64(m + 48), u64(m + 56)))
    }

    private def selectMeta(): Meta = {
      val meta0 = metaAt(0, 0)
      val meta1 = meta0 match {
        case Right(m) => metaAt(1, m.pageSize)
        case Left(_) => // like bbolt, look for meta page 1 one OS page in; also at the other usual sizes
          Seq(4096, 512, 1024, 2048, 8192, 16384, 32768, 65536).iterator
            .map(metaAt(1, _))
            .collectFirst { case r @ Right(_) => r }
            .getOrElse(Left("meta page 1: none found at 512 .. 65536"))
      }
      val meta = (meta0, meta1) match {
        case (Left(e0), Left(e1))                    => fail(0, s"a valid meta page ($e0; $e1)")
        case (Left(_), Right(m1))                    => m1
        case (Right(m0), Right(m1)) if m1.txid > m0.txid => m1
        case (Right(m0), _)                          => m0
      }
      val at = meta.page.toLong * meta.pageSize + PageHeaderSize
      val pages = data.length / meta.pageSize
      if (meta.pgid < 2 || meta.pgid > pages) fail(at + 32, s"a high-water mark within the file's $pages pages, found ${java.lang.Long.toUnsignedString(meta.pgid)}")
      if (meta.root < 2 || meta.root >= meta.pgid) fail(at + 16, s"a root page in 2..${meta.pgid - 1}, found ${java.lang.Long.toUnsignedString(meta.root)}")
      if (meta.freelist != NoFreelist && (meta.freelist < 2 || meta.freelist >= meta.pgid))
        fail(at + 32, s"a freelist page in 2..${meta.pgid - 1}, found ${java.lang.Long.toUnsignedString(meta.freelist)}")
      meta
    }

    /** (start, end, flags, count) of page `pgid` (named at offset `ref`), marked in use. */
    private def page(pgid: Long, ref: Long, what: String): (Int, Int, Int, Int) = {
      if (pgid < 2 || pgid >= highWater) fail(ref, s"$what: a page id in 2..${highWater - 1}, found ${java.lang.Long.toUnsignedString(pgid)}")
      val start = pgid.toInt * pageSize
      val id = u64(start)
      if (id != pgid) fail(start, s"$what: the header of page $pgid, found id ${java.lang.Long.toUnsignedString(id)}")
      val overflow = u32(start + 12)
      val last = pgid + overflow
      if (last >= highWater) fail(start + 12, s"$what: page $pgid's overflow within the high-water mark $highWater, found $overflow")
      val reached = inUse.nextSetBit(pgid.toInt)
      if (reached != -1 && reached <= last) fail(ref, s"$what: page $pgid reached once, found it reached again (a cycle or a shared page)")
      inUse.set(pgid.toInt, last.toInt + 1)
      (start, (last.toInt + 1) * pageSize, u16(start + 8), u16(start + 10))
    }

    private def readFreelist(): Option[IndexedSeq[Long]] =
      if (meta.freelist == NoFreelist) None
      else {
        val ref = meta.page.toLong * pageSize + PageHeaderSize + 24
        val (start, end, flags, count0) = page(meta.freelist, ref, "freelist")
        if (flags != FreelistPage) fail(start + 8, s"a freelist page (flags 0x10), found flags 0x${flags.toHexString}")
        var at = start + PageHeaderSize
        var count = count0.toLong
        if (count0 == FreelistCountOverflow) {
          if (at + 8 > end) fail(at, s"the freelist's u64 count within its page (ends at $end)")
          count = u64(at)
          at += 8
        }
        val room = (end - at) / 8
        if (count < 0 || count > room) fail(at, s"${java.lang.Long.toUnsignedString(count)} free page ids within the freelist page (room for $room)")
        val ids = Array.tabulate(count.toInt)(i => u64(at + 8 * i))
        Arrays.sort(ids) // ids beyond 2^63 sort first as negatives and fail the range check
        for (i <- ids.indices) {
          if (ids(i) < 2 || ids(i) >= meta.pgid)
            fail(at, s"free page ids in 2..${meta.pgid - 1}, found ${java.lang.Long.toUnsignedString(ids(i))}")
          if (i > 0 && ids(i - 1) == ids(i)) fail(at, s"each free page listed once, found page ${ids(i)} twice")
        }
        Some(ids.toIndexedSeq)
      }

    /** A bucket being read: its items fill in as its pages are walked. */
    private final class Building(val sequence: Long) {
      val entries = new ArrayBuffer[(Array[Byte], Node)]
      val bucket = new Bucket(entries, sequence)
    }

    private def readTree(): Bucket = {
      val root = new Building(meta.sequence)
      val tasks = scala.collection.mutable.Queue[(Building, Long, Long, Int)]((root, meta.root, meta.page.toLong * pageSize + PageHeaderSize + 16, 0))
      while (tasks.nonEmpty) { // (bucket, root page or 0, where it was named / inline page start, inline page end)
        val (bucket, pgid, ref, inlineEnd) = tasks.dequeue()
        if (pgid != 0) readPagedBucket(bucket, pgid, ref, tasks) else readInlineBucket(bucket, ref.toInt, inlineEnd, tasks)
      }
      root.bucket
    }

    private def readInlineBucket(bucket: Building, start: Int, end: Int, tasks: scala.collection.mutable.Queue[(Building, Long, Long, Int)]): Unit = {
      if (start + PageHeaderSize > end) fail(start, s"an inline bucket's $PageHeaderSize-byte page header, found ${end - start} bytes")
      val flags = u16(start + 8)
      if (flags != LeafPage) fail(start + 8, s"an inline bucket's leaf page (flags 0x02), found flags 0x${flags.toHexString}")
      readLeaf(bucket, start, end, u16(start + 10), None, tasks, inline = true)
    }

    private def readPagedBucket(bucket: Building, root: Long, ref0: Long, tasks: scala.collection.mutable.Queue[(Building, Long, Long, Int)]): Unit = {
      val stack = scala.collection.mutable.Stack[(Long, Long)]((root, ref0))
      var lastKey: Option[Array[Byte]] = None
      while (stack.nonEmpty) {
        val (pgid, ref) = stack.pop()
        val (start, end, flags, count) = page(pgid, ref, "bucket page")
        if (flags == LeafPage) lastKey = readLeaf(bucket, start, end, count, lastKey, tasks, inline = false)
        else if (flags == BranchPage) readBranch(start, end, count).reverseIterator.foreach(stack.push)
        else fail(start + 8, s"a branch (0x01) or leaf (0x02) page, found flags 0x${flags.toHexString}")
      }
    }

    private def elementsEnd(start: Int, end: Int, count: Int): Int = {
      val tableEnd = start.toLong + PageHeaderSize + ElementSize.toLong * count
      if (tableEnd > end) fail(start + 10, s"$count elements within the page's ${end - start} bytes")
      tableEnd.toInt
    }

    private def readBranch(start: Int, end: Int, count: Int): IndexedSeq[(Long, Long)] = {
      var floor = elementsEnd(start, end, count).toLong
      (0 until count).map { i =>
        val element = start + PageHeaderSize + ElementSize * i
        val keyStart = element + u32(element)
        val ksize = u32(element + 4)
        if (ksize == 0 || keyStart < floor || keyStart + ksize > end)
          fail(element, s"branch element $i: a non-empty key in $floor..$end, found $keyStart+$ksize")
        floor = keyStart + ksize
        (u64(element + 8), (element + 8).toLong)
      }
    }

    private def readLeaf(
        bucket: Building,
        start: Int,
        end: Int,
        count: Int,
        lastKey0: Option[Array[Byte]],
        tasks: scala.collection.mutable.Queue[(Building, Long, Long, Int)],
        inline: Boolean
    ): Option[Array[Byte]] = {
      var floor = elementsEnd(start, end, count).toLong
      var lastKey = lastKey0
      for (i <- 0 until count) {
        val element = start + PageHeaderSize + ElementSize * i
        val flags = u32(element)
        val keyStart = element + u32(element + 4)
        val ksize = u32(element + 8)
        val vsize = u32(element + 12)
        val valueStart = keyStart + ksize
        val valueEnd = valueStart + vsize
        if (ksize == 0 || keyStart < floor || valueEnd > end)
          fail(element, s"leaf element $i: a non-empty key and its value in $floor..$end, found $keyStart+$ksize+$vsize")
        floor = valueEnd
        val key = Arrays.copyOfRange(data, keyStart.toInt, valueStart.toInt)
        for (last <- lastKey if Arrays.compareUnsigned(key, last) <= 0)
          fail(keyStart, s"keys in ascending order, found ${hex(key)} after ${hex(last)}")
        lastKey = Some(key)
        if (flags == 0) bucket.entries += key -> new Value(Arrays.copyOfRange(data, valueStart.toInt, valueEnd.toInt))
        else if (flags == BucketLeafFlag) {
          if (inline) fail(element, "no nested bucket inside an inline bucket")
          if (vsize < BucketHeaderSize) fail(valueStart, s"a $BucketHeaderSize-byte bucket header, found $vsize bytes")
          val root = u64(valueStart.toInt)
          if (root != 0 && vsize != BucketHeaderSize) fail(valueStart, s"a $BucketHeaderSize-byte bucket value, found $vsize bytes")
          val child = new Building(u64(valueStart.toInt + 8))
          bucket.entries += key -> child.bucket
          if (root != 0) tasks.enqueue((child, root, valueStart, 0))
          else tasks.enqueue((child, 0L, valueStart + BucketHeaderSize, valueEnd.toInt))
        } else fail(element, s"leaf element $i: flags 0 or 0x01, found 0x${flags.toHexString}")
      }
      lastKey
    }
  }

  // -- writer --------------------------------------------------------------------------------

  /** bbolt's `DB.mmapSize`: doubling from 32 KiB to 1 GiB, then whole GiBs. */
  private def mmapSize(size: Long, pageSize: Int): Long =
    if (size <= (1L << 30)) math.max(1L << 15, java.lang.Long.highestOneBit(size - 1) << 1)
    else {
      require(size <= MaxMapSize, s"a bolt file of $size bytes is larger than bbolt can map")
      var sz = size + Math.floorMod(-size, MaxMmapStep)
      sz += Math.floorMod(-sz, pageSize.toLong)
      math.min(sz, MaxMapSize)
    }

  private final case class Inode(flags: Int, key: Array[Byte], value: Array[Byte], child: Long) {
    def size: Long = ElementSize.toLong + key.length + value.length
  }

  private def nodeSize(inodes: IndexedSeq[Inode]): Long = inodes.foldLeft(PageHeaderSize.toLong)(_ + _.size)

  /** One bbolt write transaction on a new database, page by page. */
  private final class Writer(pageSize: Int) {
    require(pageSize >= MinPageSize, s"pageSize must be at least $MinPageSize, not $pageSize")
    private val initSize = 4L * pageSize // what Open writes: meta 0, meta 1, freelist, root leaf
    private var highWater = 4L
    private var mmap = mmapSize(initSize, pageSize)
    private val pages = new ArrayBuffer[(Long, Array[Byte])]

    private def allocate(count: Long): Long = {
      val pgid = highWater
      val wanted = (pgid + count + 1) * pageSize
      if (wanted >= mmap) mmap = mmapSize(math.max(initSize, wanted), pageSize)
      highWater += count
      pgid
    }

    private def newPage(count: Long): Array[Byte] = {
      require(count * pageSize <= Int.MaxValue - 8, s"a bolt page of $count x $pageSize bytes does not fit an array")
      new Array[Byte]((count * pageSize).toInt)
    }

    /** Spills one node (the bucket's whole content) into pages; the root page id. */
    def writeNode(inodes: IndexedSeq[Inode], isLeaf: Boolean): Long = {
      val nodes = split(inodes)
      val pgids = nodes.map { node =>
        val count = (nodeSize(node) + pageSize - 1) / pageSize
        val pgid = allocate(count)
        val buf = newPage(count)
        writePage(buf, 0, node, isLeaf, pgid, count - 1)
        pages += pgid -> buf
        pgid
      }
      if (nodes.size == 1) pgids.head
      else writeNode(nodes.zip(pgids).map { case (node, pgid) => Inode(0, node.head.key, Array.emptyByteArray, pgid) }.toIndexedSeq, isLeaf = false)
    }

    /** `node.split`: cut off nodes filled to half a page while more than a page remains. */
    private def split(inodes: IndexedSeq[Inode]): Seq[IndexedSeq[Inode]] = {
      val threshold = (pageSize * FillPercent).toInt
      val nodes = new ArrayBuffer[IndexedSeq[Inode]]
      var start = 0
      while (inodes.size - start > 2 * MinKeysPerPage && !sizeLessThan(inodes, start, pageSize)) {
        var size = PageHeaderSize.toLong // node.splitIndex
        var index = start
        var i = start
        var done = false
        while (!done && i < inodes.size - MinKeysPerPage) {
          index = i
          if (i - start >= MinKeysPerPage && size + inodes(i).size > threshold) done = true
          else { size += inodes(i).size; i += 1 }
        }
        nodes += inodes.slice(start, index)
        start = index
      }
      nodes += inodes.drop(start)
      nodes.toSeq
    }

    /** `node.sizeLessThan`: whether `inodes` from `start` serialise to fewer than `limit` bytes. */
    private def sizeLessThan(inodes: IndexedSeq[Inode], start: Int, limit: Long): Boolean = {
      var size = PageHeaderSize.toLong
      var i = start
      while (i < inodes.size && size < limit) { size += inodes(i).size; i += 1 }
      size < limit
    }

    /** What the parent stores for a child bucket: inline, or spilled to pages. */
    def bucketValue(inodes: IndexedSeq[Inode], sequence: Long): Array[Byte] = {
      var size = PageHeaderSize.toLong
      val inline = inodes.forall { inode =>
        size += inode.size
        (inode.flags & BucketLeafFlag) == 0 && size <= pageSize / 4
      }
      if (inline) {
        val buf = new Array[Byte](BucketHeaderSize + nodeSize(inodes).toInt)
        ByteBuffer.wrap(buf).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 0L).putLong(8, sequence)
        writePage(buf, BucketHeaderSize, inodes, isLeaf = true, 0L, 0L)
        buf
      } else {
        val buf = new Array[Byte](BucketHeaderSize)
        ByteBuffer.wrap(buf).order(ByteOrder.LITTLE_ENDIAN).putLong(0, writeNode(inodes, isLeaf = true)).putLong(8, sequence)
        buf
      }
    }

    def write(tree: Bucket): Array[Byte] = {
      require(tree.sequence == 0, "bbolt does not keep the root bucket's sequence (Tx.Commit copies only its root page)")
      val rootInodes = spillBuckets(tree)
      val touched = rootInodes.nonEmpty // bbolt reads the root leaf (page 3) only then
      val root = if (touched) writeNode(rootInodes, isLeaf = true) else 3L
      val pending = if (touched) Array(2L, 3L) else Array(2L) // the old freelist page, the old root leaf
      val freelistSize = PageHeaderSize + 8L * (pending.length + (if (pending.length >= FreelistCountOverflow) 1 else 0))
      val freelistPages = freelistSize / pageSize + 1
      val freelist = allocate(freelistPages)
      val fl = newPage(freelistPages)
      val flb = ByteBuffer.wrap(fl).order(ByteOrder.LITTLE_ENDIAN)
      flb.putLong(0, freelist).putShort(8, FreelistPage.toShort).putShort(10, pending.length.toShort).putInt(12, (freelistPages - 1).toInt)
      for ((id, i) <- pending.zipWithIndex) flb.putLong(PageHeaderSize + 8 * i, id)
      pages += freelist -> fl
      // DB.grow after the freelist moved the high-water mark: to the mmap size (below 16 MiB)
      val fileSize = math.max(if (mmap < AllocSize) mmap else (highWater + 1) * pageSize + AllocSize, highWater * pageSize)
      require(fileSize <= Int.MaxValue - 8, s"a bolt file of $fileSize bytes does not fit an array")
      val out = new Array[Byte](fileSize.toInt)
      val ob = ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN)
      writeMeta(out, 0, root, freelist, highWater, 2L)
      writeMeta(out, pageSize, 3L, 2L, 4L, 1L)
      ob.putLong(2 * pageSize, 2L).putShort(2 * pageSize + 8, FreelistPage.toShort)
      ob.putLong(3 * pageSize, 3L).putShort(3 * pageSize + 8, LeafPage.toShort)
      for ((pgid, page) <- pages) System.arraycopy(page, 0, out, (pgid * pageSize).toInt, page.length)
      out
    }

    private def writeMeta(out: Array[Byte], at: Int, root: Long, freelist: Long, pgid: Long, txid: Long): Unit = {
      val b = ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN)
      b.putLong(at, txid % 2).putShort(at + 8, MetaPage.toShort)
      val m = at + PageHeaderSize
      b.putInt(m, Magic).putInt(m + 4, Version).putInt(m + 8, pageSize).putInt(m + 12, 0)
      b.putLong(m + 16, root).putLong(m + 24, 0L).putLong(m + 32, freelist).putLong(m + 40, pgid).putLong(m + 48, txid)
      b.putLong(m + 56, fnv64a(out, m, m + MetaSize - 8))
    }

    /** The root bucket's leaf items; child buckets spilled depth first, in key order, before
      * their parents (an explicit stack: the tree's depth costs no recursion). */
    private def spillBuckets(tree: Bucket): IndexedSeq[Inode] = {
      final class Frame(val bucket: Bucket, val key: Array[Byte]) {
        val items: scala.collection.IndexedSeq[(Array[Byte], Node)] = sortedChecked(bucket)
        var next = 0
        val inodes = new ArrayBuffer[Inode]
      }
      val stack = scala.collection.mutable.Stack(new Frame(tree, null))
      while (true) {
        val frame = stack.top
        var descended = false
        while (!descended && frame.next < frame.items.size) {
          val (key, node) = frame.items(frame.next)
          frame.next += 1
          node match {
            case child: Bucket => stack.push(new Frame(child, key)); descended = true
            case v: Value =>
              require(v.bytes.length <= MaxValueSize, s"the value of key ${hex(key)} has ${v.bytes.length} bytes, more than bbolt's $MaxValueSize")
              frame.inodes += Inode(0, key, v.bytes, 0L)
          }
        }
        if (!descended) {
          stack.pop()
          if (stack.isEmpty) return frame.inodes.toIndexedSeq
          stack.top.inodes += Inode(BucketLeafFlag, frame.key, bucketValue(frame.inodes.toIndexedSeq, frame.bucket.sequence), 0L)
        }
      }
      throw new IllegalStateException("unreachable")
    }

    private def sortedChecked(bucket: Bucket): scala.collection.IndexedSeq[(Array[Byte], Node)] = {
      val items = bucket.sorted
      for (((key, _), i) <- items.zipWithIndex) {
        require(key.length > 0 && key.length <= MaxKeySize, s"a bolt key has 1..$MaxKeySize bytes, not ${key.length}")
        require(i == 0 || !Arrays.equals(items(i - 1)._1, key), s"key ${hex(key)} given twice")
      }
      items
    }

    /** `node.write`: header, elements, then keys and values in element order. */
    private def writePage(buf: Array[Byte], at: Int, inodes: IndexedSeq[Inode], isLeaf: Boolean, pgid: Long, overflow: Long): Unit = {
      require(inodes.size < 0xffff, s"${inodes.size} elements do not fit one bolt page (page size too large)")
      val b = ByteBuffer.wrap(buf).order(ByteOrder.LITTLE_ENDIAN)
      b.putLong(at, pgid).putShort(at + 8, (if (isLeaf) LeafPage else BranchPage).toShort)
      b.putShort(at + 10, inodes.size.toShort).putInt(at + 12, overflow.toInt)
      var data = at + PageHeaderSize + ElementSize * inodes.size
      for ((inode, i) <- inodes.zipWithIndex) {
        val element = at + PageHeaderSize + ElementSize * i
        if (isLeaf) b.putInt(element, inode.flags).putInt(element + 4, data - element).putInt(element + 8, inode.key.length).putInt(element + 12, inode.value.length)
        else b.putInt(element, data - element).putInt(element + 4, inode.key.length).putLong(element + 8, inode.child)
        System.arraycopy(inode.key, 0, buf, data, inode.key.length)
        data += inode.key.length
        System.arraycopy(inode.value, 0, buf, data, inode.value.length)
        data += inode.value.length
      }
    }
  }
}
