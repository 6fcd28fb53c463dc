"""BoltDB (indexbridge.bleve.bolt) against real bbolt v1.3.5 (integration/boltgo, built here).

Trees generated from seeds (nested buckets, inline buckets, empty buckets, sequences, values that
overflow pages, enough keys for branch pages, keys big enough for branch overflow, page sizes
from 512 to 64 KiB) go both ways: bbolt writes them and our reader must read exactly them; our
writer writes them and bbolt must read them back and pass ``tx.Check()``. bbolt writes each tree
until its layout spills sibling buckets in key order (it uses Go's random map order), and then
our bytes must equal its bytes. bbolt also writes files over several transactions (deletions,
free pages, the 0xFFFF freelist form, no freelist) and bleve v1.0.14 writes a real scorch
``root.bolt``, for the reader. Every byte of small files flipped and random truncations end in
IndexFormatError or a successful read, never another exception or a hang. The JVM (py4j) reads
the same files and rewrites ours to the same bytes.
"""

from __future__ import annotations

import json
import random
import struct
import subprocess
import tracemalloc
from pathlib import Path

import pytest

from indexbridge.bleve.bolt import (
    FREELIST_COUNT_OVERFLOW,
    BoltBucket,
    BoltFile,
    read_bolt,
    write_bolt,
    write_bolt_file,
)
from indexbridge.bleve.corpus import reference_binary
from indexbridge.errors import IndexFormatError

SEEDS = 24
MULTI_TX_SEEDS = 10
CANONICAL_ATTEMPTS = 400


@pytest.fixture(scope="module")
def boltgo() -> Path:
    """integration/boltgo built into target/boltgo/ (Go's build cache makes a rebuild quick)."""
    return reference_binary("boltgo")


def run_go(boltgo: Path, *args: object):
    done = subprocess.run([str(boltgo), *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def to_json(bucket) -> dict:
    """The harness's bucket form: {"seq", "items": [[key hex, value hex | bucket]]}, keys sorted."""
    items = [[k.hex(), to_json(v) if isinstance(v, dict) else bytes(v).hex()] for k, v in sorted(bucket.items())]
    return {"seq": getattr(bucket, "sequence", 0), "items": items}


def go_write(boltgo: Path, tmp: Path, jobs: list[dict]) -> list[dict]:
    (tmp / "jobs.json").write_text(json.dumps(jobs))
    results = run_go(boltgo, "write", tmp / "jobs.json")
    for result in results:
        assert "error" not in result, result
    return results


# -- generated trees ------------------------------------------------------------------------


def _key(rng: random.Random) -> bytes:
    shape = rng.random()
    if shape < 0.6:
        return rng.randbytes(rng.randint(1, 12))
    if shape < 0.8:
        return b"k%06d" % rng.randrange(1_000_000)
    return bytes([rng.choice((0, 1, 0x7F, 0x80, 0xFF))]) * rng.randint(1, 40)


def _value(rng: random.Random, page_size: int) -> bytes:
    shape = rng.random()
    if shape < 0.1:
        return b""
    if shape < 0.85:
        return rng.randbytes(rng.randint(1, 60))
    if shape < 0.95:
        return rng.randbytes(rng.randint(60, page_size // 2))
    return bytes([rng.randrange(256)]) * rng.randint(page_size, 3 * page_size)  # overflow pages


def _is_inline(bucket: dict, page_size: int) -> bool:
    size = 16
    for key, value in bucket.items():
        if isinstance(value, dict):
            return False
        size += 16 + len(key) + len(value)
    return size <= page_size // 4


def random_bucket(rng: random.Random, page_size: int, depth: int = 0) -> BoltBucket:
    """A bucket of one of several shapes; at most three non-inline children a bucket, so that
    bbolt reaches the key-order layout within a few attempts."""
    bucket = BoltBucket(sequence=rng.choice((0, 0, 0, 1, rng.getrandbits(64))) if depth else 0)
    shape = rng.choice(("empty", "small", "small", "many", "big", "bigkeys"))
    if shape == "small":
        n = rng.randint(1, 8)
    elif shape == "many":
        n = rng.randint(50, 1500)
    elif shape == "big":
        n = rng.randint(1, 30)
    else:
        n = 0
    for _ in range(n):
        bucket[_key(rng)] = _value(rng, page_size) if shape != "small" else rng.randbytes(rng.randint(0, 20))
    if shape == "big":
        bucket[_key(rng)] = rng.randbytes(rng.randint(page_size, 3 * page_size))
    if shape == "bigkeys":
        for _ in range(rng.randint(5, 40 if page_size <= 4096 else 12)):
            bucket[rng.randbytes(rng.randint(page_size // 4, min(32768, 2 * page_size)))] = rng.randbytes(rng.randint(0, 10))
    if depth < 3:
        for _ in range(rng.choice((0, 0, 1, 2, 4)) if depth else rng.randint(1, 4)):
            bucket[_key(rng)] = random_bucket(rng, page_size, depth + 1)
    paged = [k for k, v in bucket.items() if isinstance(v, dict) and not _is_inline(v, page_size)]
    for key in paged[3:]:
        del bucket[key]
    return bucket


def _page_size(rng: random.Random) -> int:
    return rng.choice((4096, 4096, 4096, 512, 1024, 8192, 16384))


def mutate(rng: random.Random, bucket: BoltBucket, page_size: int, top: bool = True) -> BoltBucket:
    """The next transaction's tree: some items dropped, changed or added, recursively."""
    out = BoltBucket(sequence=0 if top else bucket.sequence + rng.choice((0, 0, 1)))
    for key, value in bucket.items():
        roll = rng.random()
        if roll < 0.15 and not (top and len(bucket) == 1):
            continue
        if isinstance(value, dict):
            out[key] = mutate(rng, value, page_size, False) if roll < 0.8 else random_bucket(rng, page_size, 2)
        else:
            out[key] = value if roll < 0.7 else _value(rng, page_size)
    for _ in range(rng.randint(0, 3 if top else 20)):
        key = _key(rng)
        if top:
            out[key] = random_bucket(rng, page_size, 2)
        elif key not in out:
            out[key] = _value(rng, page_size)
    return out


def assert_same_tree(ours: BoltBucket, expected, where: str = "root") -> None:
    """Equal items and equal sequences, bucket by bucket."""
    assert ours == expected, f"{where}: items differ"
    assert ours.sequence == getattr(expected, "sequence", 0), f"{where}: sequence"
    for key, value in expected.items():
        if isinstance(value, dict):
            assert_same_tree(ours[key], value, f"{where}/{key.hex()}")


def _special_cases() -> list[tuple[str, int, list[BoltBucket], bool]]:
    """(name, page size, transactions, canonical) beyond the random ones."""
    chain = BoltBucket({b"leaf": b"v"})
    for depth in range(40):
        chain = BoltBucket({b"d%02d" % depth: chain, b"x": b"y" * depth})
    return [
        ("empty", 4096, [BoltBucket()], True),
        ("page_size_64k", 65536, [BoltBucket({b"a": BoltBucket({b"%05d" % i: b"v" * 100 for i in range(2000)})})], True),
        ("root_values", 4096, [BoltBucket({b"k": b"v", b"e": b"", b"b": BoltBucket({b"x": b"y"})})], True),
        ("empty_buckets", 4096, [BoltBucket({b"a": BoltBucket(), b"b": BoltBucket({b"c": BoltBucket()}, sequence=3)})], True),
        ("deep", 4096, [BoltBucket({b"top": chain})], True),
        ("scorch_like", 4096, [scorch_like_tree(random.Random(7))], True),
        ("two_levels_of_branches", 512, [BoltBucket({b"t": BoltBucket({b"%08d" % i: b"v" * 20 for i in range(6000)})})], True),
    ]


def scorch_like_tree(rng: random.Random) -> BoltBucket:
    """What scorch's persister puts in one transaction: s / epoch / {m, i, segments}."""
    segments = {}
    for n in range(rng.randint(1, 6)):
        segment = BoltBucket({b"p": b"%012x.zap" % (n + 1)})
        if rng.random() < 0.7:
            segment[b"d"] = rng.randbytes(rng.choice((20, 200, 3000)))
        segments[bytes([0x80 | n])] = segment
    epoch = BoltBucket(
        {
            b"m": BoltBucket({b"type": b"zap", b"version": b"\x00\x00\x00\x0b\x00"}),
            b"i": BoltBucket({b"_mapping": json.dumps({"default_mapping": {"enabled": True}, "pad": "x" * rng.randint(0, 3000)}).encode()}),
            **segments,
        }
    )
    return BoltBucket({b"s": BoltBucket({b"\x97": epoch})})


@pytest.fixture(scope="module")
def cases(boltgo: Path, tmp_path_factory) -> dict[str, dict]:
    """Every case written by bbolt (batched: one run of the harness) and by us, both dumped."""
    tmp = tmp_path_factory.mktemp("bolt")
    cases = {}
    for seed in range(SEEDS):
        rng = random.Random(seed)
        page_size = _page_size(rng)
        cases[f"seed{seed}"] = {"page_size": page_size, "txs": [random_bucket(rng, page_size)], "canonical": True}
    for seed in range(MULTI_TX_SEEDS):
        rng = random.Random(1000 + seed)
        page_size = rng.choice((512, 1024, 4096))
        txs = [random_bucket(rng, page_size)]
        for _ in range(rng.randint(1, 4)):
            txs.append(mutate(rng, txs[-1], page_size))
        cases[f"multi{seed}"] = {"page_size": page_size, "txs": txs, "canonical": False, "no_freelist_sync": seed % 4 == 3}
    for name, page_size, txs, canonical in _special_cases():
        cases[name] = {"page_size": page_size, "txs": txs, "canonical": canonical}
    jobs = []
    for name, case in cases.items():
        case["go"] = tmp / f"{name}.go.bolt"
        job = {"path": str(case["go"]), "page_size": case["page_size"], "txs": [to_json(t) for t in case["txs"]]}
        job.update(canonical=case["canonical"], attempts=CANONICAL_ATTEMPTS, no_freelist_sync=case.get("no_freelist_sync", False))
        jobs.append(job)
        if case["canonical"]:
            case["ours"] = tmp / f"{name}.ours.bolt"
            write_bolt_file(case["ours"], case["txs"][0], case["page_size"])
    go_write(boltgo, tmp, jobs)
    paths = [c["go"] for c in cases.values()] + [c["ours"] for c in cases.values() if "ours" in c]
    dumps = {Path(d["path"]): d for d in run_go(boltgo, "dump", *paths)}
    for case in cases.values():
        case["go_dump"] = dumps[case["go"]]
        if "ours" in case:
            case["ours_dump"] = dumps[case["ours"]]
    return cases


CASE_NAMES = (
    [f"seed{s}" for s in range(SEEDS)] + [f"multi{s}" for s in range(MULTI_TX_SEEDS)] + [name for name, *_ in _special_cases()]
)
CANONICAL_NAMES = [n for n in CASE_NAMES if not n.startswith("multi")]


@pytest.mark.parametrize("name", CASE_NAMES)
def test_reader_reads_bbolt_files(cases, name: str) -> None:
    case = cases[name]
    dump = case["go_dump"]
    assert dump.get("error") is None and dump["check"] is None, dump.get("error") or dump["check"]
    bolt = BoltFile.open(case["go"])
    assert_same_tree(bolt.root, case["txs"][-1])
    assert to_json(bolt.root) == dump["tree"]
    assert bolt.meta.txid == dump["txid"] and bolt.page_size == dump["page_size"] == case["page_size"]
    assert bolt.meta.pgid * bolt.page_size == dump["size"]
    assert (bolt.free_pages is None) == bool(case.get("no_freelist_sync"))


@pytest.mark.parametrize("name", CANONICAL_NAMES)
def test_writer_equals_bbolt_bytes(cases, name: str) -> None:
    case = cases[name]
    assert case["ours"].read_bytes() == case["go"].read_bytes()


@pytest.mark.parametrize("name", CANONICAL_NAMES)
def test_bbolt_reads_our_files(cases, name: str) -> None:
    dump = cases[name]["ours_dump"]
    assert dump.get("error") is None and dump["check"] is None, dump.get("error") or dump["check"]
    assert dump["tree"] == to_json(cases[name]["txs"][0])
    assert_same_tree(read_bolt(cases[name]["ours"]), cases[name]["txs"][0])


def test_cases_cover_bbolt_features(cases) -> None:
    """The generated cases reach every page kind bbolt has (from bbolt's own Stats)."""
    totals: dict[str, int] = {}
    for case in cases.values():
        for key, value in case["go_dump"]["stats"].items():
            totals[key] = totals.get(key, 0) + (value > 0)
    for feature in ("branch_pages", "branch_overflow", "leaf_overflow", "inline_buckets"):
        assert totals[feature] >= 2, f"too few cases with {feature}"
    assert max(c["go_dump"]["stats"]["depth"] for c in cases.values()) >= 40
    assert any(len(BoltFile.open(c["go"]).free_pages or ()) > 10 for c in cases.values())


def test_big_freelist_and_big_file(boltgo: Path, tmp_path: Path) -> None:
    """A freelist of 0xFFFF or more ids (its count in a leading u64), and a file past 16 MiB
    (bbolt then grows it by 16 MiB past the high-water mark, not to the mmap size)."""
    big = BoltBucket({b"a": BoltBucket({b"v": b"x" * 9_000_000})})
    jobs = [
        {"path": str(tmp_path / "free.bolt"), "page_size": 128, "txs": [to_json(big), to_json(BoltBucket({b"a": BoltBucket()}))]},
        {"path": str(tmp_path / "big.bolt"), "page_size": 512, "txs": [to_json(big)]},
    ]
    jobs[0]["txs"][0]["items"][0][1]["items"][0][1] = "78*9000000"  # the same value, short in JSON
    jobs[1]["txs"][0] = jobs[0]["txs"][0]
    go_write(boltgo, tmp_path, jobs)
    free = BoltFile.open(tmp_path / "free.bolt")
    assert free.root == {b"a": {}} and len(free.free_pages) >= FREELIST_COUNT_OVERFLOW
    data = (tmp_path / "free.bolt").read_bytes()
    assert struct.unpack_from("<H", data, free.meta.freelist * 128 + 10)[0] == FREELIST_COUNT_OVERFLOW
    ours = write_bolt(big, 512)
    assert len(ours) > 16 << 20 and ours == (tmp_path / "big.bolt").read_bytes()
    assert read_bolt(ours) == big


def test_reads_bleve_scorch_root_bolt(boltgo: Path, tmp_path: Path) -> None:
    """A root.bolt as bleve v1.0.14's scorch leaves it after batches, deletions, updates and merges;
    rewritten by us, bbolt reads the same tree and its check passes."""
    for seed in (1, 2):
        index = tmp_path / f"index{seed}"
        run_go(boltgo, "scorch", index, seed)
        root_bolt = index / "store" / "root.bolt"
        ours = BoltFile.open(root_bolt)
        (dump,) = run_go(boltgo, "dump", root_bolt)
        assert to_json(ours.root) == dump["tree"] and dump["check"] is None
        snapshots = ours.get(b"s")
        assert snapshots and all(s[b"m"][b"type"] == b"zap" for s in snapshots.values())
        assert all(s[b"m"][b"version"][:4] == b"\x00\x00\x00\x0b" for s in snapshots.values())
        assert any(b"_mapping" in s[b"i"] for s in snapshots.values())
        write_bolt_file(tmp_path / "rewritten.bolt", ours.root)
        (again,) = run_go(boltgo, "dump", tmp_path / "rewritten.bolt")
        assert again["tree"] == dump["tree"] and again["check"] is None


# -- bad input ------------------------------------------------------------------------------


def _small_files(boltgo: Path, tmp: Path) -> list[bytes]:
    """Small files with every structure: ours at page size 512 (inline, nested and empty
    buckets, branch pages, an overflow value), and bbolt's after three transactions (free pages)."""
    tree = BoltBucket(
        {
            b"a": BoltBucket({b"%03d" % i: b"v" * 30 for i in range(40)}, sequence=9),
            b"b": BoltBucket({b"in": BoltBucket({b"k": b"v"}), b"out": BoltBucket({b"big": b"z" * 700}), b"e": BoltBucket()}),
        }
    )
    txs = [tree, BoltBucket({b"a": tree[b"a"], b"c": BoltBucket({b"x": b"y" * 300})}), BoltBucket({b"c": BoltBucket({b"x": b"y"})})]
    go_write(boltgo, tmp, [{"path": str(tmp / "multi.bolt"), "page_size": 512, "txs": [to_json(t) for t in txs]}])
    return [write_bolt(tree, 512), (tmp / "multi.bolt").read_bytes()]


def _used_length(data: bytes) -> int:
    """The bytes up to the high-water mark: past it a bolt file is padding."""
    bolt = BoltFile(data)
    return bolt.meta.pgid * bolt.page_size


def _read_or_error(data: bytes) -> None:
    try:
        bolt = BoltFile(data, "<mutant>")
    except IndexFormatError as e:
        assert e.source == "<mutant>" and 0 <= e.offset <= len(data)
        return
    to_json(bolt.root)


def test_flipped_bytes_read_or_raise(boltgo: Path, tmp_path: Path, cpu_deadline) -> None:
    rng = random.Random(11)
    for data in _small_files(boltgo, tmp_path):
        used = _used_length(data)
        offsets = list(range(used)) + rng.sample(range(used, len(data)), 200)
        budget = 20 * len(data) + (4 << 20)
        for n, at in enumerate(offsets):
            mutant = bytearray(data)
            mutant[at] ^= (0xFF, 0x01, 0x80, 0x10)[at % 4]
            if n % 50 == 0:
                tracemalloc.start()
                _read_or_error(bytes(mutant))
                peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
                assert peak < budget, f"reading allocated {peak} bytes for a {len(data)}-byte file"
            else:
                _read_or_error(bytes(mutant))


def test_truncated_and_extreme_fields_read_or_raise(boltgo: Path, tmp_path: Path, cpu_deadline) -> None:
    rng = random.Random(12)
    for data in _small_files(boltgo, tmp_path):
        used = _used_length(data)
        for cut in {0, 1, 15, 16, 79, 80, 511, 512, 592, used - 1, used, *rng.sample(range(used), 150)}:
            _read_or_error(data[:cut])
        for page in range(used // 512):  # each header field and each leading element field set to extremes
            for at, size in ((0, 8), (8, 2), (10, 2), (12, 4), (16, 4), (20, 4), (24, 4), (28, 4), (24, 8)):
                for value in (0, 1, 2, (1 << (8 * size)) - 1, 1 << (8 * size - 1), rng.getrandbits(8 * size)):
                    mutant = bytearray(data)
                    mutant[page * 512 + at : page * 512 + at + size] = value.to_bytes(size, "little")
                    _read_or_error(bytes(mutant))


def _page_bytes(data: bytearray, pgid: int, page_size: int = 4096) -> tuple[int, int, int, int]:
    return struct.unpack_from("<QHHI", data, pgid * page_size)


def test_clear_errors() -> None:
    tree = BoltBucket({b"a": BoltBucket({b"%04d" % i: b"v" * 40 for i in range(300)})})
    data = bytearray(write_bolt(tree))
    bolt = BoltFile(bytes(data))
    # meta page 0 broken: bbolt falls back to meta page 1, the empty database Open wrote
    broken = bytearray(data)
    broken[40] ^= 1
    assert read_bolt(bytes(broken)) == {}
    broken[4096 + 40] ^= 1
    with pytest.raises(IndexFormatError, match="a valid meta page .*checksum") as e:
        read_bolt(bytes(broken), "root.bolt")
    assert str(e.value).startswith("root.bolt: offset 0: ")
    # a branch page pointing at itself
    a_root = next(pgid for pgid in range(4, bolt.meta.pgid) if _page_bytes(data, pgid)[1] == 0x01)
    cyclic = bytearray(data)
    struct.pack_into("<Q", cyclic, a_root * 4096 + 16 + 8, a_root)
    with pytest.raises(IndexFormatError, match="reached again"):
        read_bolt(bytes(cyclic))
    # a child page past the high-water mark
    far = bytearray(data)
    struct.pack_into("<Q", far, a_root * 4096 + 16 + 8, 1 << 40)
    with pytest.raises(IndexFormatError, match=r"a page id in 2\.\.") as e:
        read_bolt(bytes(far))
    assert e.value.offset == a_root * 4096 + 16 + 8
    # a file cut before its high-water mark
    with pytest.raises(IndexFormatError, match="high-water mark"):
        read_bolt(bytes(data[: 5 * 4096]))
    # a leaf element whose key runs off its page
    leaf = next(pgid for pgid in range(4, bolt.meta.pgid) if _page_bytes(data, pgid)[1] == 0x02)
    long_key = bytearray(data)
    struct.pack_into("<I", long_key, leaf * 4096 + 16 + 8, 5000)
    with pytest.raises(IndexFormatError, match="leaf element 0"):
        read_bolt(bytes(long_key))


def test_writer_rejects_what_bbolt_rejects() -> None:
    with pytest.raises(ValueError, match="1..32768"):
        write_bolt({b"": BoltBucket()})
    with pytest.raises(ValueError, match="1..32768"):
        write_bolt({b"a": {b"x" * 32769: b""}})
    with pytest.raises(TypeError, match="bytes"):
        write_bolt({"a": {}})
    with pytest.raises(TypeError, match="bytes or a mapping"):
        write_bolt({b"a": {b"k": 1}})
    with pytest.raises(ValueError, match="page_size"):
        write_bolt({}, page_size=64)
    with pytest.raises(ValueError, match="root bucket's sequence"):
        write_bolt(BoltBucket(sequence=1))


# -- the JVM --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scala_bolt():
    from indexbridge.jvm import jvm

    return jvm().io.indexbridge.bleve.Bolt


@pytest.mark.parametrize("name", CASE_NAMES)
def test_scala_reads_and_writes_like_python(cases, scala_bolt, tmp_path: Path, name: str) -> None:
    """Scala reads bbolt's file to the same tree; Scala rewrites our file (its reader, then its
    writer at the same page size) to the same bytes."""
    case = cases[name]
    assert json.loads(scala_bolt.treeJson(str(case["go"]))) == case["go_dump"]["tree"]
    if "ours" in case:
        scala_bolt.rewrite(str(case["ours"]), str(tmp_path / "scala.bolt"))
        assert (tmp_path / "scala.bolt").read_bytes() == case["ours"].read_bytes()
