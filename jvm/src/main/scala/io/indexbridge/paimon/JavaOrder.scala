package io.indexbridge.paimon

import java.nio.charset.StandardCharsets

import scala.collection.immutable.VectorBuilder

/** The iteration order of a default-constructed `java.util.HashMap` (JDK 8 to 17), replayed
  * from the sequence of calls that filled it (spec/paimon.md App. B). Paimon writes deletion
  * files, bitmap indexes and file-index containers in HashMap order, so byte-exact writers need
  * it. The model is a keys-only re-expression of the JDK's HashMap, hand-written because the
  * order is an implementation detail no library exposes.
  *
  * {{{
  * table   cap buckets (16 on first use, doubling), threshold = 0.75 · cap
  * hash    h ^ (h >>> 16), h = the key's hashCode; bucket = hash & (cap - 1)
  * order   buckets 0 … cap-1, each bin along its `next` links
  * resize  plain chains split into "stays" and "moves by +oldCap", keeping relative order
  *
  * put              new key appended to its chain; chain now > 8 nodes: treeifyBin;
  *                  then size++ and resize if size > threshold
  * computeIfAbsent  first: resize if size > threshold (or allocate); new key inserted at the
  *                  head of its chain; chain had >= 7 nodes: treeifyBin
  * treeifyBin       cap < 64: resize instead; else the chain becomes a tree bin
  * }}}
  *
  * Tree bins (App. B.4) are red-black trees ordered by (hash as a signed int, then `compareTo`
  * for equal hashes) whose nodes also keep the `next` chain that iteration follows:
  * {{{
  * treeify      insert the chain's nodes in chain order (balanceInsertion), then move the
  *              root to the front of the chain (moveRootToFront)
  * putTreeVal   the new node is linked into the chain right after its tree parent; the tree
  *              is rebalanced and its (possibly new) root moved to the front
  * resize       split into lo/hi lists in chain order; a list of <= 6 nodes becomes a plain
  *              chain, a longer one is re-treeified unless the other list is empty
  * }}}
  *
  * `ordering` is the keys' `compareTo` when their class is "comparable for itself" (String,
  * Integer, Long, Float, Double, Paimon's BinaryString ...); `None` for other keys. Java breaks
  * remaining ties in a tree (equal hashes, no or an equal `compareTo`) with
  * `System.identityHashCode`, which cannot be reproduced: the model then throws an
  * [[UnsupportedOperationException]] instead of guessing. Keys are compared with Java `equals`.
  */
final class JavaHashMapOrder[K](hashCode: K => Int, ordering: Option[Ordering[K]] = None) {
  import JavaHashMapOrder._

  private var table: Array[Node[K]] = null
  private var size = 0
  private var threshold = 0

  /** How many times a bin was treeified / turned back into a chain (lets tests see tree bins). */
  private[paimon] var treeified, untreeified = 0

  /** `map.put(key, value)` (also `putIfAbsent`, and each entry of `putAll` on a non-empty map). */
  def put(key: K): Unit = {
    val hash = spread(key)
    if (table == null) resize()
    val tab = table
    val i = hash & (tab.length - 1)
    val first = tab(i)
    val inserted =
      if (first == null) {
        tab(i) = new Node(hash, key, null)
        true
      } else if (first.is(hash, key)) false
      else
        first match {
          case bin: TreeNode[K @unchecked] => putTreeVal(tab, bin, hash, key)
          case _ =>
            var p = first
            var binCount = 0
            var found = false
            while (!found && p.next != null) {
              found = p.next.is(hash, key)
              p = p.next
              binCount += 1
            }
            if (!found) {
              p.next = new Node(hash, key, null)
              if (binCount >= TreeifyThreshold - 1) treeifyBin(tab, hash)
            }
            !found
        }
    if (inserted) {
      size += 1
      if (size > threshold) resize()
    }
  }

  /** `map.computeIfAbsent(key, f)` with an `f` that never returns null. */
  def computeIfAbsent(key: K): Unit = {
    val hash = spread(key)
    if (size > threshold || table == null) resize()
    val tab = table
    val i = hash & (tab.length - 1)
    val first = tab(i)
    first match {
      case bin: TreeNode[K @unchecked] => if (putTreeVal(tab, bin, hash, key)) size += 1
      case _ =>
        var binCount = 0
        var e = first
        while (e != null && !e.is(hash, key)) {
          binCount += 1
          e = e.next
        }
        if (e == null) {
          tab(i) = new Node(hash, key, first)
          if (binCount >= TreeifyThreshold - 1) treeifyBin(tab, hash)
          size += 1
        }
    }
  }

  /** The keys in the order the HashMap iterates them. */
  def keys: Vector[K] = {
    val out = new VectorBuilder[K]
    if (table != null)
      for (bin <- table) {
        var e = bin
        while (e != null) {
          out += e.key
          e = e.next
        }
      }
    out.result()
  }

  private def spread(key: K): Int = {
    val h = if (key == null) 0 else hashCode(key)
    h ^ (h >>> 16)
  }

  private def resize(): Unit = {
    val oldTab = table
    if (oldTab == null) {
      table = new Array(InitialCapacity)
      threshold = InitialCapacity * 3 / 4
      return
    }
    val oldCap = oldTab.length
    val newTab = new Array[Node[K]](oldCap * 2)
    var j = 0
    while (j < oldCap) {
      val e = oldTab(j)
      if (e != null) {
        if (e.next == null) newTab(e.hash & (newTab.length - 1)) = e
        else
          e match {
            case bin: TreeNode[K @unchecked] => split(newTab, bin, j, oldCap)
            case _ =>
              var loHead, loTail, hiHead, hiTail: Node[K] = null
              var p = e
              while (p != null) {
                if ((p.hash & oldCap) == 0) {
                  if (loTail == null) loHead = p else loTail.next = p
                  loTail = p
                } else {
                  if (hiTail == null) hiHead = p else hiTail.next = p
                  hiTail = p
                }
                p = p.next
              }
              if (loTail != null) { loTail.next = null; newTab(j) = loHead }
              if (hiTail != null) { hiTail.next = null; newTab(j + oldCap) = hiHead }
          }
      }
      j += 1
    }
    table = newTab
    threshold *= 2
  }

  /** Below capacity 64 a long chain only makes the table grow; above, it becomes a tree bin. */
  private def treeifyBin(tab: Array[Node[K]], hash: Int): Unit =
    if (tab.length < MinTreeifyCapacity) resize()
    else {
      val index = hash & (tab.length - 1)
      var head, tail: TreeNode[K] = null
      var e = tab(index)
      while (e != null) {
        val t = new TreeNode(e.hash, e.key, null)
        if (tail == null) head = t else { t.prev = tail; tail.next = t }
        tail = t
        e = e.next
      }
      tab(index) = head
      treeify(tab, head)
    }

  /** `compareTo` of two keys with equal hashes; 0 when the keys are not Comparable. */
  private def compareKeys(key: K, other: K): Int = ordering match {
    case Some(o) => o.compare(key, other)
    case None    => 0
  }

  /** Java's last resort, `tieBreakOrder`, compares `System.identityHashCode`s. */
  private def tieBreakOrder(key: K, other: K): Nothing =
    throw new UnsupportedOperationException(
      s"java.util.HashMap orders the keys $key and $other (equal hash ${hashCode(key)}, " +
        (if (ordering.isEmpty) "not Comparable" else "compareTo 0") + ") in a tree bin by " +
        "System.identityHashCode, which cannot be reproduced; pass the keys' compareTo as `ordering`"
    )

  /** Side of the tree node `p` that `key` goes to (`<= 0`: left), as in `treeify`. */
  private def direction(hash: Int, key: K, p: TreeNode[K]): Int =
    if (p.hash > hash) -1
    else if (p.hash < hash) 1
    else {
      val d = compareKeys(key, p.key)
      if (d != 0) d else tieBreakOrder(key, p.key)
    }

  /** Builds a red-black tree over the chain starting at `head` (already at `tab`'s bucket). */
  private def treeify(tab: Array[Node[K]], head: TreeNode[K]): Unit = {
    treeified += 1
    var root: TreeNode[K] = null
    var x = head
    while (x != null) {
      val next = x.next.asInstanceOf[TreeNode[K]]
      x.left = null
      x.right = null
      if (root == null) {
        x.parent = null
        x.red = false
        root = x
      } else {
        var p = root
        var placed = false
        while (!placed) {
          val dir = direction(x.hash, x.key, p)
          val child = if (dir <= 0) p.left else p.right
          if (child == null) {
            x.parent = p
            if (dir <= 0) p.left = x else p.right = x
            root = balanceInsertion(root, x)
            placed = true
          } else p = child
        }
      }
      x = next
    }
    moveRootToFront(tab, root)
  }

  /** Inserts `key` into the tree bin `bin` unless present; true when inserted. */
  private def putTreeVal(tab: Array[Node[K]], bin: TreeNode[K], hash: Int, key: K): Boolean = {
    val root = bin.root
    var p = root
    var searched = false
    while (true) {
      val dir =
        if (p.hash > hash) -1
        else if (p.hash < hash) 1
        else if (p.is(hash, key)) return false
        else {
          val d = compareKeys(key, p.key)
          if (d != 0) d
          else {
            // No order between the keys: Java first looks for the key in both subtrees.
            if (!searched) {
              searched = true
              if (find(p.left, hash, key) != null || find(p.right, hash, key) != null) return false
            }
            tieBreakOrder(key, p.key)
          }
        }
      val xp = p
      p = if (dir <= 0) p.left else p.right
      if (p == null) {
        val xpn = xp.next
        val x = new TreeNode(hash, key, xpn)
        if (dir <= 0) xp.left = x else xp.right = x
        xp.next = x
        x.parent = xp
        x.prev = xp
        if (xpn != null) xpn.asInstanceOf[TreeNode[K]].prev = x
        moveRootToFront(tab, balanceInsertion(root, x))
        return true
      }
    }
    false
  }

  /** `TreeNode.find`: the node holding `key` in the subtree at `start`, or null. */
  private def find(start: TreeNode[K], hash: Int, key: K): TreeNode[K] = {
    var p = start
    while (p != null) {
      val pl = p.left
      val pr = p.right
      if (p.hash > hash) p = pl
      else if (p.hash < hash) p = pr
      else if (p.is(hash, key)) return p
      else if (pl == null) p = pr
      else if (pr == null) p = pl
      else {
        val dir = compareKeys(key, p.key)
        if (dir != 0) p = if (dir < 0) pl else pr
        else {
          val q = find(pr, hash, key)
          if (q != null) return q
          p = pl
        }
      }
    }
    null
  }

  /** Relinks a tree bin into lo/hi lists on resize; short lists become plain chains again. */
  private def split(tab: Array[Node[K]], bin: TreeNode[K], index: Int, bit: Int): Unit = {
    var loHead, loTail, hiHead, hiTail: TreeNode[K] = null
    var lc, hc = 0
    var e = bin
    while (e != null) {
      val next = e.next.asInstanceOf[TreeNode[K]]
      e.next = null
      if ((e.hash & bit) == 0) {
        e.prev = loTail
        if (loTail == null) loHead = e else loTail.next = e
        loTail = e
        lc += 1
      } else {
        e.prev = hiTail
        if (hiTail == null) hiHead = e else hiTail.next = e
        hiTail = e
        hc += 1
      }
      e = next
    }
    if (loHead != null) {
      if (lc <= UntreeifyThreshold) tab(index) = untreeify(loHead)
      else {
        tab(index) = loHead
        if (hiHead != null) treeify(tab, loHead)
      }
    }
    if (hiHead != null) {
      if (hc <= UntreeifyThreshold) tab(index + bit) = untreeify(hiHead)
      else {
        tab(index + bit) = hiHead
        if (loHead != null) treeify(tab, hiHead)
      }
    }
  }

  private def untreeify(head: TreeNode[K]): Node[K] = {
    untreeified += 1
    var hd, tl: Node[K] = null
    var q: Node[K] = head
    while (q != null) {
      val p = new Node(q.hash, q.key, null)
      if (tl == null) hd = p else tl.next = p
      tl = p
      q = q.next
    }
    hd
  }
}

object JavaHashMapOrder {
  private val InitialCapacity = 16
  private val TreeifyThreshold = 8
  private val UntreeifyThreshold = 6
  private val MinTreeifyCapacity = 64

  private class Node[K](val hash: Int, val key: K, var next: Node[K]) {
    /** Java's `p.hash == hash && (p.key == key || key.equals(p.key))` (not Scala's `==`, which
      * would equate 0.0 with -0.0 and 1 with 1L). */
    final def is(h: Int, k: K): Boolean = {
      val a = k.asInstanceOf[AnyRef]
      hash == h && ((key.asInstanceOf[AnyRef] eq a) || (a != null && a.equals(key)))
    }
  }

  private final class TreeNode[K](h: Int, k: K, n: Node[K]) extends Node[K](h, k, n) {
    var parent, left, right, prev: TreeNode[K] = null
    var red = false

    def root: TreeNode[K] = {
      var r = this
      while (r.parent != null) r = r.parent
      r
    }
  }

  /** Makes `root` the first node of its bin's chain (the bin's table entry). */
  private def moveRootToFront[K](tab: Array[Node[K]], root: TreeNode[K]): Unit = {
    val index = root.hash & (tab.length - 1)
    val first = tab(index).asInstanceOf[TreeNode[K]]
    if (root ne first) {
      tab(index) = root
      val rp = root.prev
      val rn = root.next
      if (rn != null) rn.asInstanceOf[TreeNode[K]].prev = rp
      if (rp != null) rp.next = rn
      if (first != null) first.prev = root
      root.next = first
      root.prev = null
    }
  }

  private def rotateLeft[K](root0: TreeNode[K], p: TreeNode[K]): TreeNode[K] = {
    var root = root0
    val r = if (p == null) null else p.right
    if (r != null) {
      val rl = r.left
      p.right = rl
      if (rl != null) rl.parent = p
      val pp = p.parent
      r.parent = pp
      if (pp == null) { root = r; r.red = false }
      else if (pp.left eq p) pp.left = r
      else pp.right = r
      r.left = p
      p.parent = r
    }
    root
  }

  private def rotateRight[K](root0: TreeNode[K], p: TreeNode[K]): TreeNode[K] = {
    var root = root0
    val l = if (p == null) null else p.left
    if (l != null) {
      val lr = l.right
      p.left = lr
      if (lr != null) lr.parent = p
      val pp = p.parent
      l.parent = pp
      if (pp == null) { root = l; l.red = false }
      else if (pp.right eq p) pp.right = l
      else pp.left = l
      l.right = p
      p.parent = l
    }
    root
  }

  /** CLR red-black insertion fix-up as in `HashMap.TreeNode.balanceInsertion`; returns the root. */
  private def balanceInsertion[K](root0: TreeNode[K], x0: TreeNode[K]): TreeNode[K] = {
    var root = root0
    var x = x0
    x.red = true
    while (true) {
      var xp = x.parent
      if (xp == null) {
        x.red = false
        return x
      }
      var xpp = xp.parent
      if (!xp.red || xpp == null) return root
      val xppl = xpp.left
      if (xp eq xppl) {
        val xppr = xpp.right
        if (xppr != null && xppr.red) {
          xppr.red = false
          xp.red = false
          xpp.red = true
          x = xpp
        } else {
          if (x eq xp.right) {
            x = xp
            root = rotateLeft(root, x)
            xp = x.parent
            xpp = if (xp == null) null else xp.parent
          }
          if (xp != null) {
            xp.red = false
            if (xpp != null) {
              xpp.red = true
              root = rotateRight(root, xpp)
            }
          }
        }
      } else {
        if (xppl != null && xppl.red) {
          xppl.red = false
          xp.red = false
          xpp.red = true
          x = xpp
        } else {
          if (x eq xp.left) {
            x = xp
            root = rotateRight(root, x)
            xp = x.parent
            xpp = if (xp == null) null else xp.parent
          }
          if (xp != null) {
            xp.red = false
            if (xpp != null) {
              xpp.red = true
              root = rotateLeft(root, xpp)
            }
          }
        }
      }
    }
    root
  }
}

object JavaOrder {

  /** Iteration order of a new HashMap after `put` of each key in turn (repeats change nothing). */
  def afterPuts[K](keys: Iterable[K])(hashCode: K => Int, ordering: Option[Ordering[K]] = None): Vector[K] = {
    val map = new JavaHashMapOrder(hashCode, ordering)
    keys.foreach(map.put)
    map.keys
  }

  /** Iteration order of a new HashMap after `computeIfAbsent` of each key in turn. */
  def afterComputeIfAbsent[K](keys: Iterable[K])(hashCode: K => Int, ordering: Option[Ordering[K]] = None): Vector[K] = {
    val map = new JavaHashMapOrder(hashCode, ordering)
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

  private def ordering[K](cmp: (K, K) => Int): Ordering[K] = new Ordering[K] {
    def compare(a: K, b: K): Int = cmp(a, b)
  }

  /** `String.compareTo`: UTF-16 code units, then length. */
  val stringCompareTo: Ordering[String] = ordering[String](_.compareTo(_))

  /** `Byte.compareTo`, `Short.compareTo`, `Integer.compareTo`, `Long.compareTo`. */
  val byteCompareTo: Ordering[Byte] = ordering[Byte](java.lang.Byte.compare)
  val shortCompareTo: Ordering[Short] = ordering[Short](java.lang.Short.compare)
  val intCompareTo: Ordering[Int] = ordering[Int](java.lang.Integer.compare)
  val longCompareTo: Ordering[Long] = ordering[Long](java.lang.Long.compare)

  /** `Float.compareTo` / `Double.compareTo`: numeric, but -0.0 < 0.0 and NaN (equal to itself) greatest. */
  val floatCompareTo: Ordering[Float] = ordering[Float](java.lang.Float.compare)
  val doubleCompareTo: Ordering[Double] = ordering[Double](java.lang.Double.compare)

  /** Paimon `BinaryString.compareTo` for keys whose string is `utf8(key)`: unsigned bytes, then length. */
  def binaryStringCompareTo[K](utf8: K => Array[Byte]): Ordering[K] =
    ordering[K]((a, b) => java.util.Arrays.compareUnsigned(utf8(a), utf8(b)))

  /** [[binaryStringCompareTo]] for keys held as Java strings. */
  val binaryStringCompareToOfStrings: Ordering[String] = binaryStringCompareTo[String](_.getBytes(StandardCharsets.UTF_8))
}
