package io.indexbridge.paimon

import scala.collection.mutable.ArrayBuffer

/** The iteration order of a default-constructed `java.util.HashMap` (JDK 8+), replayed from the
  * sequence of calls that filled it (spec/paimon.md App. B.1). Paimon writes deletion files,
  * bitmap indexes and file-index containers in HashMap order, so byte-exact writers need it.
  *
  * {{{
  * table   cap buckets (16 on first use, doubling), threshold = 0.75 · cap
  * bucket  (h ^ (h >>> 16)) & (cap - 1), h = the key's hashCode
  * order   buckets 0 … cap-1, each chain front to back
  * resize  every chain splits into "stays" and "moves by +oldCap", keeping relative order
  *
  * put              new key appended to its chain; chain now > 8 nodes: resize if cap < 64;
  *                  then size++ and resize if size > threshold
  * computeIfAbsent  first: resize if size > threshold (or allocate); new key inserted at the
  *                  head of its chain; chain had >= 7 nodes: resize if cap < 64
  * }}}
  *
  * A chain that would become a tree bin (the same thresholds at cap >= 64) is not emulated:
  * Java reorders tree bins (App. B.4), so the model stops with an
  * [[UnsupportedOperationException]] instead of guessing. Keys are compared with `==`.
  */
final class JavaHashMapOrder[K](hashCode: K => Int) {
  private final class Node(val key: K, val hash: Int)

  private var table: Array[ArrayBuffer[Node]] = Array.empty
  private var size = 0
  private var threshold = 0

  /** `map.put(key, value)` (also `putIfAbsent`, and each entry of `putAll`). */
  def put(key: K): Unit = {
    if (table.isEmpty) resize()
    if (insert(newNode(key), atHead = false, treeifyWhenLongerThan = JavaHashMapOrder.TreeifyThreshold)) {
      size += 1
      if (size > threshold) resize()
    }
  }

  /** `map.computeIfAbsent(key, f)` with an `f` that never returns null. */
  def computeIfAbsent(key: K): Unit = {
    if (size > threshold || table.isEmpty) resize()
    if (insert(newNode(key), atHead = true, treeifyWhenLongerThan = JavaHashMapOrder.TreeifyThreshold - 1))
      size += 1
  }

  /** The keys in the order the HashMap iterates them. */
  def keys: Vector[K] = table.iterator.filter(_ != null).flatMap(_.iterator.map(_.key)).toVector

  private def newNode(key: K): Node = {
    val h = hashCode(key)
    new Node(key, h ^ (h >>> 16))
  }

  /** Links a new key into its chain; false if the key is already there. */
  private def insert(node: Node, atHead: Boolean, treeifyWhenLongerThan: Int): Boolean = {
    val i = node.hash & (table.length - 1)
    val chain = table(i)
    if (chain == null) {
      table(i) = ArrayBuffer(node)
      true
    } else if (chain.exists(n => n.hash == node.hash && n.key == node.key)) false
    else {
      if (atHead) chain.prepend(node) else chain += node
      if (chain.length > treeifyWhenLongerThan) treeifyBin(i)
      true
    }
  }

  private def treeifyBin(bucket: Int): Unit =
    if (table.length < JavaHashMapOrder.MinTreeifyCapacity) resize()
    else
      throw new UnsupportedOperationException(
        s"java.util.HashMap would turn bucket $bucket (capacity ${table.length}, ${table(bucket).length} colliding keys) " +
          "into a tree bin; tree-bin iteration order is not emulated"
      )

  private def resize(): Unit =
    if (table.isEmpty) {
      table = new Array(JavaHashMapOrder.InitialCapacity)
      threshold = JavaHashMapOrder.InitialCapacity * 3 / 4
    } else {
      val oldCap = table.length
      val next = new Array[ArrayBuffer[Node]](oldCap * 2)
      for (j <- 0 until oldCap if table(j) != null) {
        val (stays, moves) = table(j).partition(n => (n.hash & oldCap) == 0)
        if (stays.nonEmpty) next(j) = stays
        if (moves.nonEmpty) next(j + oldCap) = moves
      }
      table = next
      threshold *= 2
    }
}

object JavaHashMapOrder {
  private val InitialCapacity = 16
  private val TreeifyThreshold = 8
  private val MinTreeifyCapacity = 64
}

object JavaOrder {

  /** Iteration order of a new HashMap after `put` of each key in turn (repeats change nothing). */
  def afterPuts[K](keys: Iterable[K])(hashCode: K => Int): Vector[K] = {
    val map = new JavaHashMapOrder(hashCode)
    keys.foreach(map.put)
    map.keys
  }

  /** Iteration order of a new HashMap after `computeIfAbsent` of each key in turn. */
  def afterComputeIfAbsent[K](keys: Iterable[K])(hashCode: K => Int): Vector[K] = {
    val map = new JavaHashMapOrder(hashCode)
    keys.foreach(map.computeIfAbsent)
    map.keys
  }

  /** `java.lang.String.hashCode`: Σ s[i]·31^(n-1-i) over UTF-16 code units, mod 2^32 (App. A.4). */
  def javaStringHash(s: String): Int = {
    var h = 0
    var i = 0
    while (i < s.length) {
      h = 31 * h + s.charAt(i)
      i += 1
    }
    h
  }
}
