"""Vellum v1.0.2 finite state transducers, binary format v1 (spec/zap.md §11).

A map from byte strings (ascending) to u64 values; zap's term dictionaries::

    u64 LE version = 1
    u64 LE type    = 0
    nodes ...               a node's address is the position of its LAST byte (its flag)
    u64 LE numKeys
    u64 LE rootAddress      0 = the implicit final state without transitions

    node encodings, low address -> high address (n = transitions, osz/tsz = packed sizes):
      A one transition, "next":  [input if code 0] flag=0xC0|code        target = node start - 1
      B one transition:          [out osz] delta tsz, pack=(tsz<<4|osz), [input if code 0], flag=0x80|code
      C other nodes:             [finalOut osz] out×n delta×n input×n (LAST transition first),
                                 pack, [count if n==0 or n>63: n, 1 for 256], flag=(n if n<=63)|0x40 if final
      delta = node start - target (0 = address 0); packed integers are LE in exactly osz/tsz bytes.

:class:`FstBuilder` reproduces vellum's streaming builder, including its *bounded* registry
(10000 buckets × 2 MRU cells) — a complete minimiser writes different, smaller FSTs, so the
registry is hand-written rather than taken from a library. :class:`Fst` reads any such FST:
exact lookup and ordered, prefix and range iteration.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from indexbridge.bytes import ByteReader
from indexbridge.errors import IndexFormatError

VERSION = 1
HEADER_SIZE = 16
FOOTER_SIZE = 16
EMPTY_ADDR = 0
NONE_ADDR = 1
REGISTRY_BUCKETS = 10000
REGISTRY_CELLS = 2
NODE_CACHE_SIZE = 1 << 16  # decoded nodes kept by a reader
_FNV_OFFSET = 14695981039346656037
_FNV_PRIME = 1099511628211
_U64 = (1 << 64) - 1

COMMON_INPUTS = b"te/oasripcnw.hlm-du012g=:bf3y5&_4v9678k%?xCDASFIBEjPTzRNM+LOqHG"
_CODE = [0] * 256
for _i, _b in enumerate(COMMON_INPUTS):
    _CODE[_b] = _i + 1


def packed_size(value: int) -> int:
    """The smallest n in 1..8 with value < 2^(8n)."""
    return (value.bit_length() + 7) >> 3 or 1


# An unfinished builder node is a list (a list literal costs a fraction of a class instance's
# __init__):
# [final, final output, compiled transitions (input, output, target), the pending last
# transition's input (None: none) and output, whose target is not known yet]
_FINAL, _FINAL_OUT, _TRANS, _LAST_IN, _LAST_OUT = range(5)


def _add_output_prefix(node: list, prefix: int) -> None:
    if node[_FINAL]:
        node[_FINAL_OUT] += prefix
    node[_TRANS] = [(i, o + prefix, a) for i, o, a in node[_TRANS]]
    if node[_LAST_IN] is not None:
        node[_LAST_OUT] += prefix


# vellum's registry hash is FNV-1a-style over final, finalOutput and every (input, output, target),
# each step h = (h ^ v) * prime mod 2^64. The low 64 bits of a product depend only on the low 64
# bits of its factors, and every v is below 2^64, so the reduction can wait to the end of a
# transition. The hash after (final, finalOutput 0), the usual start, is a constant.
def _fnv_start(final: bool, final_output: int) -> int:
    return (((_FNV_OFFSET ^ final) * _FNV_PRIME) ^ final_output) * _FNV_PRIME & _U64


_FNV_PLAIN, _FNV_FINAL = _fnv_start(False, 0), _fnv_start(True, 0)
# The hash of a non-final node with one transition (input i, output 0), before its target: the
# steps for i and for the output 0 (which leaves h as it is) folded, by input
_FNV_NEXT = tuple((_FNV_PLAIN ^ i) * _FNV_PRIME * _FNV_PRIME & _U64 for i in range(256))


def _tail_node(tail: bytes, depth: int) -> list:
    """The node at ``depth`` of the last key's tail, as a stack node."""
    return [False, 0, [], tail[depth], 0] if depth < len(tail) else [True, 0, [], None, 0]


class FstBuilder:
    """Vellum's builder: insert keys in ascending byte order, then :meth:`finish` for the bytes.

    The registry is vellum's table of ``REGISTRY_BUCKETS`` buckets of ``REGISTRY_CELLS`` cells,
    most recently used first, kept flat: cell ``c`` of bucket ``b`` is index ``2b + c`` of
    ``_cell_keys`` (a compiled node as ``(final, finalOutput, *transitions)``, or a tail's node as
    an int, see :meth:`_compile_tail`) and ``_cell_addrs``.

    Vellum keeps an unfinished node for each byte of the last key. Here the stack holds them only
    down to where the last key left the keys before it (or took an output): its tail below that
    is a chain of nodes of one transition, no outputs, ending in the final node without
    transitions, read from the key itself (``_last_key[len(_stack):]``). A node of it is made a
    stack node when the next key shares it (:func:`_tail_node`), and the rest are compiled in
    one loop (:meth:`_compile_tail`): a key's tail holds about 70% of an FST's nodes.
    """

    def __init__(self) -> None:
        self._out = bytearray(VERSION.to_bytes(8, "little") + (0).to_bytes(8, "little"))
        self._stack = [[False, 0, [], None, 0]]
        self._num_keys = 0
        self._last_addr = NONE_ADDR
        self._last_key: bytes | None = None
        self._cell_keys: list[tuple | None] = [None] * (REGISTRY_BUCKETS * REGISTRY_CELLS)
        self._cell_addrs = [0] * (REGISTRY_BUCKETS * REGISTRY_CELLS)

    def insert(self, key: bytes, value: int) -> None:
        """Add ``key`` -> ``value``; keys must come in strictly ascending byte order."""
        tail = self._last_key
        if tail is not None and key <= tail:
            raise ValueError(f"FST keys must be strictly ascending: {key!r} after {tail!r}")
        key = bytes(key)
        stack = self._stack
        if not key:
            self._last_key = key
            stack[0][_FINAL] = True
            stack[0][_FINAL_OUT] = value
            self._num_keys = 1
            return
        self._num_keys += 1
        i, out = 0, value
        while i < len(stack):
            node = stack[i]
            if node[_LAST_IN] != key[i]:
                break
            last_out = node[_LAST_OUT]
            common = last_out if last_out < out else out
            out -= common
            node[_LAST_OUT] = common
            i += 1
            if last_out != common:
                if i == len(stack):  # the output goes on the tail's first node
                    stack.append(_tail_node(tail, i))
                _add_output_prefix(stack[i], last_out - common)
        if i < len(stack):  # the key leaves the last key at a stack node
            addr, fresh = self._compile_tail(tail, len(stack)) if tail else (NONE_ADDR, False)
            addr = self._compile_nodes(i, addr, fresh)
        else:  # in its tail: tail nodes carry no outputs, so only the inputs are compared
            shared = min(len(key), len(tail))
            while i < shared and key[i] == tail[i]:
                i += 1
            addr, _ = self._compile_tail(tail, i + 1)
            stack.extend([_tail_node(tail, d) for d in range(len(stack), i + 1)])
        top = stack[-1]
        if top[_LAST_IN] is not None:
            top[_TRANS].append((top[_LAST_IN], top[_LAST_OUT], addr))
        top[_LAST_IN], top[_LAST_OUT] = key[i], out
        self._last_key = key

    def finish(self) -> bytes:
        """Compile what is left and return the FST bytes."""
        tail = self._last_key
        addr, fresh = self._compile_tail(tail, len(self._stack)) if tail else (NONE_ADDR, False)
        root_addr = self._compile_nodes(-1, addr, fresh)
        out = self._out
        out += self._num_keys.to_bytes(8, "little") + root_addr.to_bytes(8, "little")
        return bytes(out)

    def _compile_tail(self, tail: bytes, depth: int) -> tuple[int, bool]:
        """Compile the nodes of the last key's tail from its end up to ``depth``, as
        :meth:`_compile_nodes` would, and return the address of the last and whether it was
        encoded just now. A node here is (not final, input ``b``, output 0, target ``addr``); its
        hash's steps are folded (``_FNV_NEXT``) and its registry key is ``b | addr << 8``, as any
        node of that shape's is."""
        if depth > len(tail):
            return NONE_ADDR, False
        out = self._out
        keys, addrs = self._cell_keys, self._cell_addrs
        last = self._last_addr
        addr, fresh = EMPTY_ADDR, False  # the final node without transitions
        for b in tail[depth:][::-1]:
            key = b | addr << 8
            cell = REGISTRY_CELLS * (((_FNV_NEXT[b] ^ addr) * _FNV_PRIME & _U64) % REGISTRY_BUCKETS)
            if fresh:  # not registered (its target is new), and encoded as form A ("next"), inline
                code = _CODE[b]
                if not code:
                    out.append(b)
                out.append(0xC0 | code)
                addr = last = len(out) - 1
            elif keys[cell] == key:
                addr = addrs[cell]
                continue
            elif keys[cell + 1] == key:
                addr = addrs[cell + 1]
            else:
                self._last_addr = last
                addr = last = self._encode(False, 0, [(b, 0, addr)])
                fresh = True
            keys[cell + 1], addrs[cell + 1] = keys[cell], addrs[cell]
            keys[cell], addrs[cell] = key, addr
        self._last_addr = last
        return addr, fresh

    def _compile_nodes(self, depth: int, addr: int, fresh: bool) -> int:
        """Pop and compile the nodes above ``depth``, deepest first, each becoming its parent's last
        transition's target; return the address of the last. The first's pending transition goes
        to ``addr`` (NONE_ADDR: it has none), ``fresh`` if that node was encoded just now, when no
        registered node can point at it. A node's address is a registered equal node's, or a
        fresh encoding's (then registered)."""
        stack = self._stack
        keys, addrs = self._cell_keys, self._cell_addrs
        while len(stack) > depth + 1:
            final, final_output, trans, last_in, last_out = stack.pop()
            if addr != NONE_ADDR and last_in is not None:
                trans.append((last_in, last_out, addr))
            if final_output:
                h = _fnv_start(final, final_output)
            elif not final:
                h = _FNV_PLAIN
            elif trans:
                h = _FNV_FINAL
            else:
                addr, fresh = EMPTY_ADDR, False
                continue
            for i, o, a in trans:
                h = (((((h ^ i) * _FNV_PRIME) ^ o) * _FNV_PRIME) ^ a) * _FNV_PRIME & _U64
            cell = REGISTRY_CELLS * (h % REGISTRY_BUCKETS)
            if final or final_output or len(trans) != 1 or trans[0][1]:
                key = (final, final_output, *trans)
            else:  # the shape of a tail's nodes, keyed as _compile_tail keys them
                key = trans[0][0] | trans[0][2] << 8
            if fresh:  # a node pointing at the node encoded just now is not registered: no search
                addr = self._last_addr = self._encode(final, final_output, trans)
            elif keys[cell] == key:
                addr = addrs[cell]
                continue
            elif keys[cell + 1] == key:
                addr = addrs[cell + 1]
            else:  # evict the least recently used cell
                addr = self._last_addr = self._encode(final, final_output, trans)
                fresh = True
            keys[cell + 1], addrs[cell + 1] = keys[cell], addrs[cell]  # promote to most recently used
            keys[cell], addrs[cell] = key, addr
        return addr

    def _encode(self, final: bool, final_output: int, trans: list[tuple[int, int, int]]) -> int:
        out = self._out
        start = len(out)
        if len(trans) == 1 and not final:
            ((inp, output, target),) = trans
            code = _CODE[inp]
            if output == 0 and target == self._last_addr:  # A: "next"
                if code == 0:
                    out.append(inp)
                out.append(0xC0 | code)
                return len(out) - 1
            osz = packed_size(output) if output else 0  # B
            if osz:
                out += output.to_bytes(osz, "little")
            delta = start - target if target else 0
            tsz = packed_size(delta)
            out += delta.to_bytes(tsz, "little")
            out.append(tsz << 4 | osz)
            if code == 0:
                out.append(inp)
            out.append(0x80 | code)
            return len(out) - 1
        n = len(trans)  # C
        deltas = [start - a if a else 0 for _, _, a in trans]
        tsz = packed_size(max(deltas, default=0)) if n else 0
        outputs = [o for _, o, _ in trans]
        any_outputs = final_output != 0 or any(outputs)
        osz = packed_size(max(final_output, max(outputs, default=0))) if any_outputs else 0
        if any_outputs:
            if final:
                out += final_output.to_bytes(osz, "little")
            for o in reversed(outputs):
                out += o.to_bytes(osz, "little")
        for d in reversed(deltas):
            out += d.to_bytes(tsz, "little")
        out += bytes(i for i, _, _ in reversed(trans))
        out.append(tsz << 4 | osz)
        flag = n if 1 <= n <= 63 else 0
        if flag == 0:
            out.append(1 if n == 256 else n)
        out.append(flag | (0x40 if final else 0))
        return len(out) - 1


class _ReadNode(dict):
    """A decoded node: final flag, final output, transitions ``(input, output, target)`` ascending
    by input, and itself a table for lookups, ``{input: [output, target, end node, rest]}``. A
    transition's entry is linked on the first walk over it (:meth:`Fst._link`): ``end node`` is
    its target, or past it the end of the chain of non-final one-transition nodes that follows,
    whose inputs are ``rest`` and whose outputs are added to ``output``. Until then ``end node``
    is None and ``rest`` empty. A lookup is then one dict probe per branching node and one bytes
    comparison per chain (a term's unique tail is such a chain: 7.1 key bytes took 4.3 steps on
    average in ``bench zap``'s dictionaries)."""

    __slots__ = ("final", "final_output", "trans")

    def __init__(self, final: bool, final_output: int, trans: list[tuple[int, int, int]]) -> None:
        super().__init__((i, [o, t, None, b""]) for i, o, t in trans)
        self.final, self.final_output, self.trans = final, final_output, trans


def build_fst(items: Iterable[tuple[bytes, int]]) -> bytes:
    """The FST of ``(key, value)`` pairs given in ascending key order."""
    builder = FstBuilder()
    for key, value in items:
        builder.insert(key, value)
    return builder.finish()


class Fst:
    """A read-only vellum v1 FST over ``data`` (any buffer); nodes are decoded on demand.

    Every transition must point strictly below the node it leaves, which keeps every walk finite
    on corrupt input.
    """

    def __init__(self, data: bytes | bytearray | memoryview, source: str = "<bytes>", offset: int = 0) -> None:
        self.data = memoryview(data).cast("B")
        self.source = source
        self.offset = offset
        size = len(self.data)
        if size < HEADER_SIZE + FOOTER_SIZE:
            raise self._error(0, f"a vellum FST of at least {HEADER_SIZE + FOOTER_SIZE} bytes, found {size}")
        reader = ByteReader(self.data, source)
        version = reader.u64_le("vellum version")
        if version != VERSION:
            raise self._error(0, f"vellum version {VERSION}, found {version}")
        fst_type = reader.u64_le("vellum type")
        if fst_type != 0:
            raise self._error(8, f"vellum type 0, found {fst_type}")
        reader.pos = size - FOOTER_SIZE
        self.num_keys = reader.u64_le("vellum key count")
        self.root = reader.u64_le("vellum root address")
        self._nodes_end = size - FOOTER_SIZE
        self._cache: dict[int, _ReadNode] = {}
        self._root_node: _ReadNode | None = None  # lookups start here (decoded on the first)
        self._transitions: _Transitions | None = None
        if self.root != EMPTY_ADDR and not HEADER_SIZE <= self.root < self._nodes_end:
            raise self._error(size - 8, f"a root address in [{HEADER_SIZE}, {self._nodes_end}), found {self.root}")

    def _error(self, pos: int, expected: str) -> IndexFormatError:
        return IndexFormatError(self.source, self.offset + pos, expected)

    def _node(self, addr: int) -> _ReadNode:
        """The node whose flag is at ``addr``, decoded once; at most ``NODE_CACHE_SIZE`` are kept."""
        node = self._cache.get(addr)
        if node is None:
            if len(self._cache) >= NODE_CACHE_SIZE:
                self._cache.clear()  # and the root they hang from, so that the linked nodes go too
                self._root_node = None
            node = self._cache[addr] = _ReadNode(*self._decode_node(addr))
        return node

    def _decode_node(self, addr: int) -> tuple[bool, int, list[tuple[int, int, int]]]:
        if addr == EMPTY_ADDR:
            return True, 0, []
        data = self.data
        low = HEADER_SIZE

        def need(p: int, what: str) -> None:
            if p < low:
                raise self._error(addr, f"a vellum node whose {what} lies after the header, found offset {p}")

        flag = data[addr]
        p = addr - 1
        if flag & 0x80:
            code = flag & 0x3F
            if code:
                inp = COMMON_INPUTS[code - 1]
            else:
                need(p, "input byte")
                inp = data[p]
                p -= 1
            if flag & 0x40:
                target = p
                need(target, "next target")
                return False, 0, [(inp, 0, target)]
            need(p, "pack byte")
            pack = data[p]
            tsz, osz = pack >> 4, pack & 0xF
            if tsz > 8 or osz > 8:
                raise self._error(p, f"packed sizes <= 8, found {tsz}/{osz}")
            start = p - tsz - osz
            need(start, "transition")
            output = int.from_bytes(data[start : start + osz], "little")
            delta = int.from_bytes(data[start + osz : p], "little")
            target = start - delta if delta else EMPTY_ADDR
            if delta and not low <= target < start:
                raise self._error(addr, f"a transition target below the node, found {target}")
            return False, 0, [(inp, output, target)]
        final = bool(flag & 0x40)
        n = flag & 0x3F
        if n == 0:
            need(p, "transition count")
            n = data[p]
            p -= 1
            if n == 1:
                n = 256
        need(p, "pack byte")
        pack = data[p]
        tsz, osz = pack >> 4, pack & 0xF
        if tsz > 8 or osz > 8:
            raise self._error(p, f"packed sizes <= 8, found {tsz}/{osz}")
        inputs_at = p - n
        deltas_at = inputs_at - n * tsz
        outputs_at = deltas_at - n * osz
        start = outputs_at - (osz if final else 0)
        need(start, "transitions")
        final_output = int.from_bytes(data[start:outputs_at], "little")
        trans = []
        for k in range(n):  # region index n-1-k holds transition k
            j = n - 1 - k
            inp = data[inputs_at + j]
            delta = int.from_bytes(data[deltas_at + j * tsz : deltas_at + (j + 1) * tsz], "little")
            output = int.from_bytes(data[outputs_at + j * osz : outputs_at + (j + 1) * osz], "little")
            target = start - delta if delta else EMPTY_ADDR
            if delta and not low <= target < start:
                raise self._error(addr, f"a transition target below the node, found {target}")
            trans.append((inp, output, target))
        return final, final_output, trans

    def get(self, key: bytes) -> int | None:
        """The value of ``key``, or None if absent."""
        node = self._root_node
        if node is None:
            node = self._root_node = self._node(self.root)
        total = i = 0
        n = len(key)
        while i < n:
            step = node.get(key[i])
            if step is None:
                return None
            output, _, node, rest = step
            if node is None:
                node = self._link(step)
                output, _, _, rest = step
            i += 1
            if rest:  # a chain: the key must go on with its inputs (the nodes inside are not final)
                j = i + len(rest)
                if key[i:j] != rest:
                    return None
                i = j
            total += output
        return total + node.final_output if node.final else None

    def _link(self, step: list) -> _ReadNode:
        """Link a lookup entry of a :class:`_ReadNode` to its target, or past it to the end of
        the chain of non-final one-transition nodes that follows (their inputs become the
        entry's ``rest``, their outputs are added to its output); return that end node. A node
        that does not decode ends the chain before it, so that a lookup raises its error only
        when the key reaches it, as :meth:`get_many` does."""
        node = self._node(step[1])
        rest = bytearray()
        output = step[0]
        while not node.final and len(node.trans) == 1:
            inp, out, target = node.trans[0]
            try:
                following = self._node(target)
            except IndexFormatError:
                break
            rest.append(inp)
            output += out
            node = following
        step[0], step[2], step[3] = output, node, bytes(rest)
        return node

    def get_many(self, keys: Sequence[bytes]) -> list[int | None]:
        """The value of each of ``keys`` (None if absent), as :meth:`get` gives it: the keys walk
        the FST together, one key byte per step for all of them (numpy), over the nodes they
        reach (decoded once into :class:`_Transitions`, kept with the reader)."""
        if self._transitions is None:
            self._transitions = _Transitions(self)
        return self._transitions.get_many(keys)

    def __contains__(self, key: bytes) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        return self.num_keys

    def items(self, start: bytes | None = None, end: bytes | None = None) -> Iterator[tuple[bytes, int]]:
        """``(key, value)`` in ascending key order with ``start <= key < end`` (None = unbounded)."""
        # Depth-first walk. Every target lies below its node, so the walk ends on any input; a
        # dead end (a non-final node without transitions) and more keys than the footer's count
        # are rejected, so the work stays proportional to the keys produced.
        stack = [(self.root, 0, b"")]  # (addr, output so far, key so far)
        emitted = 0
        while stack:
            addr, total, key = stack.pop()
            if end is not None and key >= end:
                continue
            node = self._node(addr)
            final, final_output, trans = node.final, node.final_output, node.trans
            if not final and not trans and addr != self.root:  # the empty FST's root is the one exception
                raise self._error(addr, "a final state or a transition (vellum node), found a dead end")
            if final:
                emitted += 1
                if emitted > self.num_keys:
                    raise self._error(len(self.data) - 16, f"at most {self.num_keys} keys (the footer's count), found more")
                if start is None or key >= start:
                    yield key, total + final_output
            for inp, output, target in reversed(trans):
                child = key + bytes((inp,))
                if start is not None and child < start[: len(child)]:
                    continue  # the whole subtree sorts below start
                stack.append((target, total + output, child))

    def prefix(self, prefix: bytes) -> Iterator[tuple[bytes, int]]:
        """``(key, value)`` of the keys starting with ``prefix``, ascending."""
        if not prefix:
            return self.items()
        upper = bytearray(prefix)
        while upper and upper[-1] == 0xFF:
            upper.pop()
        if upper:
            upper[-1] += 1
        return self.items(prefix, bytes(upper) if upper else None)

    def keys(self) -> Iterator[bytes]:
        return (k for k, _ in self.items())


_SMALL = 8  # a node with up to this many transitions is searched in a row of 8 inputs, a bigger one in a row of 256


class _Transitions:
    """The nodes of an :class:`Fst` that batch lookups reached, as arrays (node ids in order of
    discovery): finality, final output, the node's transitions (outputs, target node ids, -1 while
    a target is not decoded) and a way to find the transition for an input byte: a row of up to 8
    inputs for small nodes, a 256-entry row of transition indexes for big ones. Nodes are decoded
    by the reader's own decoder (:meth:`Fst._decode_node`, which checks them), so a lookup
    reaches and rejects exactly what :meth:`Fst.get` reaches and rejects. Memory: a few dozen
    bytes per node and transition reached, 512 bytes per node of more than 8 transitions."""

    def __init__(self, fst: Fst) -> None:
        self.fst = fst
        self.ids: dict[int, int] = {}
        self.nodes = self.transitions = self.wide_rows = 0
        self.final = np.zeros(0, dtype=bool)
        self.final_out = np.zeros(0, dtype=np.uint64)
        self.first = np.zeros(0, dtype=np.int64)
        self.inputs = np.zeros((0, _SMALL), dtype=np.int16)  # -1 past the node's transitions
        self.wide = np.zeros(0, dtype=np.int64)  # row of ``dense`` for a big node, else -1
        self.dense = np.zeros((0, 256), dtype=np.int16)  # input -> transition of the node, or -1
        self.out = np.zeros(0, dtype=np.uint64)  # per transition
        self.target = np.zeros(0, dtype=np.int64)
        self.target_addr = np.zeros(0, dtype=np.int64)
        self.root = self._add([fst.root])[0]

    @staticmethod
    def _room(array: np.ndarray, size: int, fill: int) -> np.ndarray:
        """``array`` with at least ``size`` rows (doubling; new rows ``fill``)."""
        if size <= len(array):
            return array
        grown = np.full((max(size, 2 * len(array), 64),) + array.shape[1:], fill, dtype=array.dtype)
        grown[: len(array)] = array
        return grown

    def _add(self, addrs: list[int]) -> list[int]:
        """Ids of the nodes at ``addrs`` (decoded and added if new)."""
        ids, new_nodes = [], []
        for addr in addrs:
            nid = self.ids.get(addr)
            if nid is None:
                nid = self.ids[addr] = self.nodes + len(new_nodes)
                cached = self.fst._cache.get(addr)  # decoded by get() already
                new_nodes.append((cached.final, cached.final_output, cached.trans) if cached is not None else self.fst._decode_node(addr))
            ids.append(nid)
        if not new_nodes:
            return ids
        # (input, (output, target)) ascending by input, the last of equal inputs: as get() sees them
        items = [sorted({i: (o, t) for i, o, t in trans}.items()) for _, _, trans in new_nodes]
        counts = [len(it) for it in items]
        n0, t0, k = self.nodes, self.transitions, len(new_nodes)
        self.nodes, self.transitions = n0 + k, t0 + sum(counts)
        for name, fill in (("final", 0), ("final_out", 0), ("first", 0), ("inputs", -1), ("wide", -1)):
            setattr(self, name, self._room(getattr(self, name), self.nodes, fill))
        for name, fill in (("out", 0), ("target", -1), ("target_addr", 0)):
            setattr(self, name, self._room(getattr(self, name), self.transitions, fill))
        self.final[n0 : self.nodes] = [final for final, _, _ in new_nodes]
        self.final_out[n0 : self.nodes] = [final_out for _, final_out, _ in new_nodes]
        self.first[n0 : self.nodes] = np.cumsum([0] + counts[:-1]) + t0
        flat = [entry for it in items for entry in it]
        self.out[t0 : self.transitions] = [o for _, (o, _) in flat]
        self.target_addr[t0 : self.transitions] = [t for _, (_, t) in flat]
        for n, it in enumerate(items):
            if len(it) <= _SMALL:
                self.inputs[n0 + n, : len(it)] = [i for i, _ in it]
            else:
                self.dense = self._room(self.dense, self.wide_rows + 1, -1)
                self.dense[self.wide_rows, [i for i, _ in it]] = np.arange(len(it))
                self.wide[n0 + n] = self.wide_rows
                self.wide_rows += 1
        return ids

    def get_many(self, keys: Sequence[bytes]) -> list[int | None]:
        n = len(keys)
        lengths = np.fromiter(map(len, keys), dtype=np.int64, count=n)
        starts = np.zeros(n, dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        blob = np.frombuffer(b"".join(keys), dtype=np.uint8)
        node = np.full(n, self.root, dtype=np.int64)
        total = np.zeros(n, dtype=np.uint64)
        alive = np.ones(n, dtype=bool)
        wrapped = np.zeros(n, dtype=bool)  # outputs summing past 64 bits (a damaged FST): get() says
        active = np.flatnonzero(lengths > 0)
        depth = 0
        while len(active):
            nid = node[active]
            b = blob[starts[active] + depth]
            j = np.full(len(active), -1, dtype=np.int64)
            wide = self.wide[nid]
            big = wide >= 0
            j[big] = self.dense[wide[big], b[big]]
            small = ~big
            hit = self.inputs[nid[small]] == b[small, None]
            j[small] = np.where(hit.any(axis=1), hit.argmax(axis=1), -1)
            found = j >= 0
            alive[active[~found]] = False
            active, nid, j = active[found], nid[found], j[found]
            t = self.first[nid] + j
            unknown = np.flatnonzero(self.target[t] < 0)
            if len(unknown):  # targets reached for the first time: decode them
                new = np.unique(t[unknown])
                self.target[new] = self._add(self.target_addr[new].tolist())
            before = total[active]
            total[active] = after = before + self.out[t]
            wrapped[active[after < before]] = True
            node[active] = self.target[t]
            depth += 1
            active = active[lengths[active] > depth]
        result = total + self.final_out[node]
        wrapped |= result < total
        values = result.astype(object)
        values[~(alive & self.final[node])] = None
        values = values.tolist()
        for i in np.flatnonzero(wrapped).tolist():
            values[i] = self.fst.get(keys[i])
        return values
