package io.indexbridge.zap

import java.nio.ByteBuffer

import io.indexbridge.IndexFormatException
import io.indexbridge.bytes.ByteSink

/** Vellum finite state transducers, binary format v1 (couchbase/vellum v1.0.2): zap's term
  * dictionaries (spec/zap.md §6, §11). Keys are byte strings, values unsigned 64-bit.
  *
  * {{{
  * u64 LE version = 1
  * u64 LE type    = 0
  * nodes …                       a node's address is the index of its LAST byte (its flag)
  * u64 LE numKeys
  * u64 LE rootAddress            0 = the implicit final state with no transitions
  *
  * node, low address → high address:
  *  A one transition, "next"   [input if code 0]  flag 0xC0|code            target = lowest byte - 1
  *  B one transition           [out, osz] delta(tsz) pack=(tsz<<4|osz) [input if code 0] flag 0x80|code
  *  C other (final/0/≥2 trans) [finalOut, osz if final] out×n (osz) delta×n (tsz) input×n
  *                             pack [count if n==0 or n>63; 1 = 256] flag (n if 1..63) | 0x40 if final
  *                             per-transition arrays are written last transition first
  *  target = start - delta (start = the node's lowest byte); delta 0 = address 0
  *  code: index+1 in COMMON (63 frequent bytes), 0 = input byte stored explicitly
  * }}}
  */
object Fst {
  /** The 63 inputs that fit in a flag byte (code = index + 1). */
  private val Common = "te/oasripcnw.hlm-du012g=:bf3y5&_4v9678k%?xCDASFIBEjPTzRNM+LOqHG".getBytes("US-ASCII")
  private[zap] val codeOf: Array[Int] = {
    val c = new Array[Int](256)
    for (i <- Common.indices) c(Common(i) & 0xff) = i + 1
    c
  }
  private[zap] val inputOf: Array[Int] = 0 +: Common.map(_ & 0xff)

  final val HeaderSize = 16
  final val TrailerSize = 16

  /** Smallest n in 1..8 with v < 2^(8n), v unsigned. */
  @inline def packedSize(v: Long): Int = math.max(1, (64 - java.lang.Long.numberOfLeadingZeros(v) + 7) >> 3)

  /** Opens the FST in `buf(start until start+len)`; errors name `source` and file offsets. */
  def open(buf: ByteBuffer, start: Int, len: Int, source: String): Fst = new Fst(buf, start, len, source)

  def open(bytes: Array[Byte]): Fst = new Fst(ByteBuffer.wrap(bytes), 0, bytes.length, "fst")

  /** The smallest key above every key starting with `prefix` (null if there is none). */
  def successor(prefix: Array[Byte]): Array[Byte] = {
    var n = prefix.length
    while (n > 0 && prefix(n - 1) == -1) n -= 1
    if (n == 0) null
    else {
      val s = java.util.Arrays.copyOf(prefix, n)
      s(n - 1) = (s(n - 1) + 1).toByte
      s
    }
  }

  /** Builds an FST from keys in strictly ascending byte order. */
  def build(keys: Iterable[(Array[Byte], Long)]): Array[Byte] = {
    val b = new FstBuilder
    keys.foreach { case (k, v) => b.insert(k, v) }
    b.finish()
  }
}

/** Vellum's streaming builder (§11.4–11.6), bounded registry included: a fully minimising
  * builder writes different bytes, so the 10000 × 2 MRU registry and its FNV hash are exact.
  * Keys must arrive in ascending byte order; [[reset]] starts a new FST (zap reuses one builder
  * per segment). */
final class FstBuilder {
  import FstBuilder._

  private val out = new ByteSink(1 << 12)
  private var stack = new Array[Unfinished](16)
  private var depth = 0
  private var numKeys = 0L
  private var lastAddr = NoneAddr
  private var last: Array[Byte] = null
  private var lastLen = 0
  private val registry = new Array[Node](RegistryBuckets * RegistryCells)

  reset()

  def reset(): Unit = {
    out.clear()
    out.u64LE(1L)
    out.u64LE(0L)
    depth = 0
    push(isFinal = false)
    numKeys = 0
    lastAddr = NoneAddr
    last = new Array[Byte](16)
    lastLen = -1
    java.util.Arrays.fill(registry.asInstanceOf[Array[AnyRef]], null)
  }

  private def push(isFinal: Boolean): Unfinished = {
    if (depth == stack.length) stack = java.util.Arrays.copyOf(stack, depth * 2)
    if (stack(depth) == null) stack(depth) = new Unfinished
    val u = stack(depth)
    u.node.clear()
    u.node.isFinal = isFinal
    u.hasPending = false
    u.pendingOut = 0
    depth += 1
    u
  }

  def insert(key: Array[Byte], value: Long): Unit = insert(key, 0, key.length, value)

  /** Inserts `key(off until off+len)`; keys must ascend strictly. */
  def insert(key: Array[Byte], off: Int, len: Int, value: Long): Unit = {
    if (lastLen >= 0 && java.util.Arrays.compareUnsigned(key, off, off + len, last, 0, lastLen) <= 0)
      throw new IllegalArgumentException("FST keys must be inserted in strictly ascending byte order")
    if (last.length < len) last = new Array[Byte](math.max(len, last.length * 2))
    System.arraycopy(key, off, last, 0, len)
    lastLen = len
    if (len == 0) {
      stack(0).node.isFinal = true
      stack(0).node.finalOutput = value
      numKeys = 1
      return
    }
    // common prefix, pushing output differences down
    var i = 0
    var o = value
    var searching = true
    while (searching && i < len && i < depth) {
      val u = stack(i)
      if (!u.hasPending || u.pendingIn != (key(off + i) & 0xff)) searching = false
      else {
        val common = if (java.lang.Long.compareUnsigned(u.pendingOut, o) < 0) u.pendingOut else o
        val add = u.pendingOut - common
        o -= common
        u.pendingOut = common
        i += 1
        if (add != 0) stack(i).addOutputPrefix(add)
      }
    }
    numKeys += 1
    compileFrom(i)
    // suffix
    val top = stack(depth - 1)
    top.hasPending = true
    top.pendingIn = key(off + i) & 0xff
    top.pendingOut = o
    var j = i + 1
    while (j < len) {
      val u = push(isFinal = false)
      u.hasPending = true
      u.pendingIn = key(off + j) & 0xff
      u.pendingOut = 0
      j += 1
    }
    push(isFinal = true)
  }

  private def compileFrom(i: Int): Unit = {
    var addr = NoneAddr
    while (depth > i + 1) {
      depth -= 1
      val u = stack(depth)
      if (addr != NoneAddr) u.freezePending(addr)
      addr = compile(u.node)
    }
    stack(depth - 1).freezePending(addr)
  }

  /** The FST bytes; the builder must be [[reset]] before the next use. */
  def finish(): Array[Byte] = {
    compileFrom(0)
    depth = 0
    val rootAddr = compile(stack(0).node)
    out.u64LE(numKeys)
    out.u64LE(rootAddr.toLong)
    out.toArray
  }

  private def compile(node: Node): Int = {
    if (node.isFinal && node.n == 0 && node.finalOutput == 0) return 0
    // registry lookup: 2 cells per bucket, most recently used first
    val cell = java.lang.Long.remainderUnsigned(node.hash, RegistryBuckets).toInt * RegistryCells
    val c0 = registry(cell)
    if (c0 != null && c0.sameAs(node)) return c0.addr
    val c1 = registry(cell + 1)
    if (c1 != null && c1.sameAs(node)) {
      registry(cell + 1) = c0
      registry(cell) = c1
      return c1.addr
    }
    val addr = encode(node)
    lastAddr = addr
    // miss: the least recently used cell takes the node and moves to the front
    val entry = if (c1 != null) c1 else new Node
    entry.copyFrom(node)
    entry.addr = addr
    registry(cell + 1) = c0
    registry(cell) = entry
    addr
  }

  private def encode(node: Node): Int = {
    val n = node.n
    if (n != 1 || node.isFinal) encodeMany(node)
    else if (node.outs(0) == 0 && node.addrs(0) == lastAddr) encodeOneFinish(node.inputs(0), 0x40)
    else {
      val start = out.size
      val o = node.outs(0)
      val osz = if (o != 0) Fst.packedSize(o) else 0
      if (osz > 0) packed(o, osz)
      val delta = deltaAddr(start, node.addrs(0))
      val tsz = Fst.packedSize(delta)
      packed(delta, tsz)
      out.u8(tsz << 4 | osz)
      encodeOneFinish(node.inputs(0), 0)
    }
  }

  private def encodeOneFinish(input: Int, next: Int): Int = {
    val code = Fst.codeOf(input)
    if (code == 0) out.u8(input)
    out.u8(0x80 | next | code)
    out.size - 1
  }

  private def encodeMany(node: Node): Int = {
    val start = out.size
    val n = node.n
    var tsz = 0
    var osz = Fst.packedSize(node.finalOutput)
    var anyOutputs = node.finalOutput != 0
    var i = 0
    while (i < n) {
      tsz = math.max(tsz, Fst.packedSize(deltaAddr(start, node.addrs(i))))
      osz = math.max(osz, Fst.packedSize(node.outs(i)))
      anyOutputs |= node.outs(i) != 0
      i += 1
    }
    if (!anyOutputs) osz = 0
    else {
      if (node.isFinal) packed(node.finalOutput, osz)
      i = n - 1
      while (i >= 0) { packed(node.outs(i), osz); i -= 1 }
    }
    i = n - 1
    while (i >= 0) { packed(deltaAddr(start, node.addrs(i)), tsz); i -= 1 }
    i = n - 1
    while (i >= 0) { out.u8(node.inputs(i)); i -= 1 }
    out.u8(tsz << 4 | osz)
    val inFlag = if (n >= 1 && n <= 63) n else 0
    if (inFlag == 0) out.u8(if (n == 256) 1 else n)
    out.u8(inFlag | (if (node.isFinal) 0x40 else 0))
    out.size - 1
  }

  @inline private def deltaAddr(start: Int, target: Int): Long = if (target == 0) 0L else (start - target).toLong

  private def packed(v: Long, size: Int): Unit = {
    var i = 0
    while (i < size) { out.u8((v >>> (8 * i)).toInt); i += 1 }
  }
}

private object FstBuilder {
  final val NoneAddr = 1
  final val RegistryBuckets = 10000
  final val RegistryCells = 2

  /** A node under construction or in the registry: transitions in ascending input order. */
  final class Node {
    var isFinal = false
    var finalOutput = 0L
    var n = 0
    var inputs = new Array[Int](4)
    var outs = new Array[Long](4)
    var addrs = new Array[Int](4)
    var addr = 0

    def clear(): Unit = { isFinal = false; finalOutput = 0; n = 0 }

    def add(input: Int, output: Long, target: Int): Unit = {
      if (n == inputs.length) {
        inputs = java.util.Arrays.copyOf(inputs, n * 2)
        outs = java.util.Arrays.copyOf(outs, n * 2)
        addrs = java.util.Arrays.copyOf(addrs, n * 2)
      }
      inputs(n) = input; outs(n) = output; addrs(n) = target
      n += 1
    }

    /** FNV-1a-style hash over (final, finalOutput, (input, output, target)…), as vellum's registry. */
    def hash: Long = {
      val P = 1099511628211L
      var h = 0xcbf29ce484222325L
      h = (h ^ (if (isFinal) 1L else 0L)) * P
      h = (h ^ finalOutput) * P
      var i = 0
      while (i < n) {
        h = (h ^ inputs(i).toLong) * P
        h = (h ^ outs(i)) * P
        h = (h ^ addrs(i).toLong) * P
        i += 1
      }
      h
    }

    def sameAs(o: Node): Boolean = {
      if (isFinal != o.isFinal || finalOutput != o.finalOutput || n != o.n) return false
      var i = 0
      while (i < n) {
        if (inputs(i) != o.inputs(i) || addrs(i) != o.addrs(i) || outs(i) != o.outs(i)) return false
        i += 1
      }
      true
    }

    def copyFrom(o: Node): Unit = {
      isFinal = o.isFinal; finalOutput = o.finalOutput; n = 0
      var i = 0
      while (i < o.n) { add(o.inputs(i), o.outs(i), o.addrs(i)); i += 1 }
    }
  }

  /** A stack entry: a node plus the transition to the next entry, whose target is not compiled yet. */
  final class Unfinished {
    val node = new Node
    var hasPending = false
    var pendingIn = 0
    var pendingOut = 0L

    def addOutputPrefix(prefix: Long): Unit = {
      if (node.isFinal) node.finalOutput += prefix
      var i = 0
      while (i < node.n) { node.outs(i) += prefix; i += 1 }
      if (hasPending) pendingOut += prefix
    }

    def freezePending(addr: Int): Unit =
      if (hasPending) {
        node.add(pendingIn, pendingOut, addr)
        hasPending = false
        pendingOut = 0
      }
  }
}

/** A vellum FST read in place from `buf(start until start+len)`. Every node read is checked
  * against the FST's bounds and every transition must point to a lower address (the builder
  * writes children first), so no input makes a walk leave the bytes or loop. */
final class Fst(buf: ByteBuffer, start: Int, len: Int, source: String) {
  private def fail(at: Long, expected: String): Nothing = throw new IndexFormatException(source, at, s"vellum FST: $expected")

  if (len < Fst.HeaderSize + Fst.TrailerSize + 1) fail(start.toLong, s"at least ${Fst.HeaderSize + Fst.TrailerSize + 1} bytes, found $len")
  private def u64LE(at: Int): Long = java.lang.Long.reverseBytes(buf.getLong(start + at))
  if (u64LE(0) != 1L) fail(start.toLong, s"version 1, found ${u64LE(0)}")
  if (u64LE(8) != 0L) fail(start + 8L, s"type 0, found ${u64LE(8)}")

  /** Number of keys, as the trailer declares it. */
  val numKeys: Long = u64LE(len - 16)
  private val nodesEnd = len - Fst.TrailerSize
  val rootAddr: Int = {
    val r = u64LE(len - 8)
    if (r != 0 && (r < Fst.HeaderSize || r >= nodesEnd)) fail(start + len - 8L, s"a root address 0 or in ${Fst.HeaderSize}..${nodesEnd - 1}, found $r")
    r.toInt
  }
  if (numKeys < 0) fail(start + len - 16L, s"a key count below 2^63, found ${java.lang.Long.toUnsignedString(numKeys)}")

  @inline private def byteAt(addr: Int): Int = buf.get(start + addr) & 0xff

  private val le = buf.duplicate().order(java.nio.ByteOrder.LITTLE_ENDIAN)

  /** The `size`-byte (0..8) little-endian number at `addr`: one 8-byte read, masked, wherever 8
    * bytes fit inside the FST (always for node data, which the 16-byte trailer follows); a
    * byte loop otherwise. (A third of a lookup's samples were the byte loop.) */
  private def packedAt(addr: Int, size: Int): Long =
    if (addr + 8 <= len) {
      val v = le.getLong(start + addr)
      if (size == 8) v else v & ((1L << (8 * size)) - 1)
    } else {
      var v = 0L
      var i = 0
      while (i < size) { v |= (byteAt(addr + i).toLong) << (8 * i); i += 1 }
      v
    }

  /** A decoded node; `load` fills it, `transition(i)` fills tIn/tOut/tAddr (i ascending by input). */
  private[zap] final class NodeView {
    var addr = 0
    var isFinal = false
    var finalOutput = 0L
    var n = 0
    private var one = false
    private var lowest = 0
    private var p = 0 // many: index of the pack byte
    private var tsz = 0
    private var osz = 0
    var tIn = 0
    var tOut = 0L
    var tAddr = 0

    // The checks' failures build their messages in methods of their own, so that `load` (with
    // `seek` and `transition`) stays small enough for the JIT to inline into a lookup's loop.
    private def need(lo: Int): Unit = if (lo < Fst.HeaderSize) belowHeader()
    private def belowHeader(): Nothing = fail(start + addr.toLong, s"node at $addr extending below the header")
    private def badAddress(a: Int): Nothing = fail(start + a.toLong, s"a node address in ${Fst.HeaderSize}..${nodesEnd - 1}, found $a")
    private def badPack(q: Int, pack: Int, deltas: String): Nothing =
      fail(start + q.toLong, s"a pack byte with $deltas delta bytes and 0..8 output bytes, found $pack")
    private def deadEnd(): Nothing = fail(start + addr.toLong, s"node at $addr with no transitions to be final")

    def load(a: Int): this.type = {
      addr = a
      if (a == 0) { isFinal = true; finalOutput = 0; n = 0; return this }
      if (a < Fst.HeaderSize || a >= nodesEnd) badAddress(a)
      val flag = byteAt(a)
      if ((flag & 0x80) != 0) loadOne(a, flag) else loadMany(a, flag)
      this
    }

    private def loadOne(a: Int, flag: Int): Unit = {
      one = true; isFinal = false; finalOutput = 0; n = 1
      val code = flag & 0x3f
      var q = a - 1
      if (code == 0) { need(q); tIn = byteAt(q); q -= 1 } else tIn = Fst.inputOf(code)
      if ((flag & 0x40) != 0) {
        lowest = q + 1
        tOut = 0
        tAddr = lowest - 1
      } else {
        need(q)
        val pack = byteAt(q)
        val ts = pack >> 4
        val os = pack & 0x0f
        if (ts < 1 || ts > 8 || os > 8) badPack(q, pack, "1..8")
        lowest = q - ts - os
        need(lowest)
        tOut = if (os > 0) packedAt(lowest, os) else 0L
        tAddr = target(packedAt(q - ts, ts))
      }
      checkTarget(tAddr)
    }

    private def loadMany(a: Int, flag: Int): Unit = {
      one = false
      isFinal = (flag & 0x40) != 0
      var q = a - 1
      n = flag & 0x3f
      if (n == 0) {
        need(q)
        n = byteAt(q)
        if (n == 1) n = 256
        q -= 1
      }
      need(q)
      p = q
      val pack = byteAt(q)
      tsz = pack >> 4
      osz = pack & 0x0f
      if (tsz > 8 || osz > 8 || (n > 0 && tsz == 0)) badPack(q, pack, "0..8")
      lowest = q - n - n * tsz - n * osz - (if (isFinal && osz > 0) osz else 0)
      need(lowest)
      finalOutput = if (isFinal && osz > 0) packedAt(lowest, osz) else 0L
      if (n == 0 && !isFinal && a != rootAddr) deadEnd()
    }

    private def target(delta: Long): Int = if (delta == 0) 0 else {
      val t = lowest.toLong - delta
      if (t < Fst.HeaderSize) targetBelowHeader(t)
      t.toInt
    }
    private def targetBelowHeader(t: Long): Nothing = fail(start + addr.toLong, s"node at $addr: a transition target inside the FST, found $t")

    private def checkTarget(t: Int): Unit = if (t != 0 && (t >= lowest || t < Fst.HeaderSize)) targetNotBelow(t)
    private def targetNotBelow(t: Int): Nothing =
      fail(start + addr.toLong, s"node at $addr: a transition to a lower address (0 or ${Fst.HeaderSize}..${lowest - 1}), found $t")

    /** Fills tIn/tOut/tAddr with transition i (0 = smallest input). */
    def transition(i: Int): Unit =
      if (!one) {
        tIn = byteAt(p - 1 - i)
        val deltas = p - n
        tAddr = target(packedAt(deltas - (i + 1) * tsz, tsz))
        checkTarget(tAddr)
        tOut = if (osz > 0) packedAt(deltas - n * tsz - (i + 1) * osz, osz) else 0L
      }

    /** Index of the first transition whose input is >= b (n if none): a binary search, inputs
      * ascending (a linear scan was a third of a lookup's samples, at nodes of tens of
      * transitions near the root). Unsorted inputs, which vellum never writes, can only make it
      * miss a key: it stays inside the node. */
    def seek(b: Int): Int =
      if (one) { if (tIn >= b) 0 else 1 }
      else {
        var lo = 0
        var hi = n
        while (lo < hi) {
          val mid = (lo + hi) >>> 1
          if (byteAt(p - 1 - mid) < b) lo = mid + 1 else hi = mid
        }
        lo
      }

    def inputAt(i: Int): Int = if (one) tIn else byteAt(p - 1 - i)
  }

  /** The value of `key`, or `default` if absent. */
  def getOrElse(key: Array[Byte], default: Long): Long = {
    val r = new Array[Long](1)
    if (lookup(key, r)) r(0) else default
  }

  /** Exact lookup: true and the value in `out(0)` if `key` is present. */
  def lookup(key: Array[Byte], out: Array[Long]): Boolean = {
    val v = new NodeView
    v.load(rootAddr)
    var acc = 0L
    var i = 0
    while (i < key.length) {
      val b = key(i) & 0xff
      val t = v.seek(b)
      if (t >= v.n || v.inputAt(t) != b) return false
      v.transition(t)
      acc += v.tOut
      v.load(v.tAddr)
      i += 1
    }
    if (v.isFinal) out(0) = acc + v.finalOutput
    v.isFinal
  }

  def get(key: Array[Byte]): Option[Long] = {
    val r = new Array[Long](1)
    if (lookup(key, r)) Some(r(0)) else None
  }

  def contains(key: Array[Byte]): Boolean = lookup(key, new Array[Long](1))

  /** Keys in `[lo, hi)` in byte order (`null` = unbounded). */
  def iterator(lo: Array[Byte] = null, hi: Array[Byte] = null): FstIterator = new FstIterator(this, lo, hi)

  /** Keys starting with `prefix`, in byte order. */
  def prefixIterator(prefix: Array[Byte]): FstIterator = new FstIterator(this, prefix, Fst.successor(prefix))

  private[zap] def newView = new NodeView
  private[zap] def failAt(expected: String): Nothing = fail(start.toLong, expected)
}

/** Ordered iteration over an [[Fst]]: `next()` moves to the following key, then `key` (a fresh
  * array) and `value` describe it. A DFS with an explicit stack; at most `numKeys` keys. */
final class FstIterator private[zap] (fst: Fst, lo: Array[Byte], hi: Array[Byte]) {
  private var views = new Array[Fst#NodeView](16)
  private var nextIdx = new Array[Int](16)
  private var outs = new Array[Long](16)
  private var onLo = new Array[Boolean](16)
  private var onHi = new Array[Boolean](16)
  private var keyBuf = new Array[Byte](16)
  private var depth = -1
  private var emitted = 0L
  private var done = false
  private var entered = false // the node at `depth` was just entered (its final state not yet considered)

  var key: Array[Byte] = _
  var value: Long = 0L

  private def ensure(d: Int): Unit =
    if (d >= views.length) {
      val m = views.length * 2
      views = java.util.Arrays.copyOf(views.asInstanceOf[Array[AnyRef]], m).asInstanceOf[Array[Fst#NodeView]]
      nextIdx = java.util.Arrays.copyOf(nextIdx, m); outs = java.util.Arrays.copyOf(outs, m)
      onLo = java.util.Arrays.copyOf(onLo, m); onHi = java.util.Arrays.copyOf(onHi, m)
      keyBuf = java.util.Arrays.copyOf(keyBuf, m)
    }

  private def enter(d: Int, addr: Int, acc: Long, lo0: Boolean, hi0: Boolean): Unit = {
    ensure(d)
    if (views(d) == null) views(d) = fst.newView
    val v = views(d)
    v.load(addr)
    outs(d) = acc
    onLo(d) = lo0 && lo != null
    onHi(d) = hi0 && hi != null
    nextIdx(d) = if (onLo(d) && d < lo.length) v.seek(lo(d) & 0xff) else 0
    depth = d
    entered = true
  }

  /** Moves to the next key; false at the end. */
  def next(): Boolean = {
    if (done) return false
    if (depth < 0) {
      if (fst.rootAddr == 0 && fst.numKeys == 0) { done = true; return false }
      enter(0, fst.rootAddr, 0L, lo0 = true, hi0 = true)
    }
    while (depth >= 0) {
      val d = depth
      val v = views(d)
      if (entered) {
        entered = false
        if (onHi(d) && d >= hi.length) { done = true; return false } // key[0:d] == hi
        if (v.isFinal && !(onLo(d) && d < lo.length)) {
          emitted += 1
          if (emitted > fst.numKeys) fst.failAt(s"at most ${fst.numKeys} keys (the trailer's count)")
          key = java.util.Arrays.copyOf(keyBuf, d)
          value = outs(d) + v.finalOutput
          return true
        }
      }
      val i = nextIdx(d)
      if (i >= v.n) depth -= 1
      else {
        nextIdx(d) = i + 1
        val b = v.inputAt(i)
        if (onHi(d) && b > (hi(d) & 0xff)) { done = true; return false }
        v.transition(i)
        ensure(d + 1)
        keyBuf(d) = b.toByte
        val childLo = onLo(d) && d < lo.length && b == (lo(d) & 0xff)
        val childHi = onHi(d) && b == (hi(d) & 0xff)
        enter(d + 1, v.tAddr, outs(d) + v.tOut, childLo, childHi)
      }
    }
    done = true
    false
  }
}
