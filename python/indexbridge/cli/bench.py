"""`indexbridge bench dv | zap`: speed as ratios against baselines measured in the same run
(DESIGN rule 7). Timings are the best of a few rounds; no number here is asserted.

`dv`, deletion vectors:

* Spark: `ib_dv_agg` (JVM aggregate) against `groupBy(file).count()` and against Spark's
  `bitmap_construct_agg` over the same positions (cached, in order), and against `count(pos)` over
  them read from Parquet in no order (informational); then the scale line, `ib_dv_agg` straight
  from `spark.range` in rows/s with the executor's peak heap, as indexbridge plans it (bounded)
  and with Spark's own plan (`--full`: 200M positions / 10k files).
* Scala codec against raw RoaringBitmap and against Paimon's own `BitmapDeletionVector`
  (inside the JVM, through `io.indexbridge.bench.DvBench`).
* Python codec against raw pyroaring (the build also over each half of the files apart: one run
  of positions each, scattered positions), and two floors of deserializing in Python, both
  informational: a frame's CRC compared, its bitmap to pyroaring and into a DeletionVector, nothing
  else checked; and only the CRC-32 of DATA and pyroaring on views of the frame.
* Lakehouse: Paimon DVs moved to Iceberg Puffin files and Delta DV files against merely reading
  them (`indexbridge.cli.bench_lakehouse`; `--full` for issue 18's 10k files / 200M positions,
  `--lakehouse-only` for these lines alone).

`zap`, bleve segments, against the Go module (integration/zapgo: bleve v1.0.14 + zap v11.0.14,
built with the local Go toolchain) on one generated raw-document corpus
(indexbridge.zap.corpus): segment build from analysed documents and from raw documents
(analysis included), in documents and bytes of raw text per second; looking up every term of
every field; iterating every postings list with freqs, norms and locations. Python also times
the columnar forms of the last two, each field's terms in one batch (``Fst.get_many``,
``Dictionary.postings_columns``: hits and locations as numpy arrays) against the same Go times
(Go looks terms up and iterates postings one term at a time), and the floor of a per-hit
iteration in Python: the lookups and the hits' tuples made from values decoded beforehand, no
bytes read (informational: where it is above the iteration's goal, no decoder meets it). Scala runs in the
JVM (`io.indexbridge.bench.ZapBench`, all its rounds in one call after its JIT warm-up), Python
in this process, Go in its own: one Go process (of 2 timed rounds) per Python round, alternating.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from indexbridge.cli.progress import progress
from indexbridge.jvm import PAIMON_BUNDLE


def print_python_form() -> None:
    """Says which of the package's modules run compiled (setup.py: Cython), as the Python rows
    depend on it."""
    from indexbridge import compiled

    names = [name.removeprefix("indexbridge.") for name in compiled()]
    print(f"python: compiled by Cython: {', '.join(names)}" if names else "python: plain Python (no module compiled by Cython, see setup.py)")


def best_time(fn: Callable[[], object], rounds: int = 3) -> float:
    best = float("inf")
    for _ in progress(range(rounds), "timing rounds", unit="round"):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def best_times(fns: Sequence[Callable[[], object]], rounds: int, clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """The best time of each of ``fns`` over ``rounds`` rounds that run them in turn, after one
    untimed round: alternating sides keeps a change in the machine's load from landing on one
    side of a ratio. ``clock=time.process_time`` for single-threaded Python work (on a shared
    machine a wall-clock best of a few milliseconds' work swung the Python DV ratios from 1.4 to
    10); wall time for jobs in the JVM."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in progress(range(rounds), "timing rounds", unit="round"):
        for i, fn in enumerate(fns):
            t0 = clock()
            fn()
            best[i] = min(best[i], clock() - t0)
    return best


def verdict(ratio: float, goal: str | None) -> str:
    """`goal <= 1.25: met` for a ratio and its goal ("<= X" or "< X"); rows without one are
    informational."""
    if not goal:
        return "informational"
    op, bound = goal.split()
    met = ratio <= float(bound) if op == "<=" else ratio < float(bound)
    return f"goal {goal}: {'met' if met else 'NOT MET'}"


def _line(label: str, ours: float, baseline_label: str, baseline: float, goal: str | None) -> None:
    ratio = ours / baseline
    print(f"{label:<44} {ours * 1000:9.1f} ms   vs {baseline_label:<34} {baseline * 1000:9.1f} ms   ratio {ratio:5.2f}   {verdict(ratio, goal)}")


def file_positions(files: int, per_file: int, seed: int = 7) -> list[np.ndarray]:
    """Sorted distinct positions per data file: half dense runs, half scattered."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(files):
        if i % 2:
            start = int(rng.integers(0, 1_000_000))
            out.append(np.arange(start, start + per_file, dtype=np.uint64))
        else:
            out.append(np.unique(rng.integers(0, 4 * per_file, size=per_file, dtype=np.uint64)))
    return out


def bench_python(files: int, per_file: int) -> None:
    from pyroaring import BitMap

    from indexbridge.bytes import crc32
    from indexbridge.paimon.dv import DeletionVector
    from indexbridge.roaring import uint32_array

    sets = file_positions(files, per_file)

    def raw_serialize(sets: list[np.ndarray]) -> list[bytes]:
        # pyroaring's bulk path (array('I')): BitMap(ndarray) adds the values one Python int at
        # a time and made the baseline ~7x slower than ours
        out = []
        for s in sets:
            bm = BitMap(uint32_array(s))
            bm.run_optimize()
            out.append(bm.serialize())
        return out

    def ours_serialize(sets: list[np.ndarray]) -> list[bytes]:
        return [DeletionVector.from_positions(s).serialize() for s in sets]

    raw_bytes, our_bytes = raw_serialize(sets), ours_serialize(sets)
    ours, raw = best_times([lambda: ours_serialize(sets), lambda: raw_serialize(sets)], 5, time.process_time)
    _line("python CPU: build+serialize DeletionVector", ours, "raw pyroaring", raw, "<= 1.25")
    # half the files are one run of positions, which ours adds whole (bitmap_of); each half apart
    for shape, subset in (("one run", sets[1::2]), ("scattered", sets[::2])):
        ours, raw = best_times([lambda: ours_serialize(subset), lambda: raw_serialize(subset)], 5, time.process_time)
        _line(f"python CPU: ... files of {shape}", ours, "raw pyroaring", raw, None)

    def floor() -> list[DeletionVector]:
        """The floor of deserializing with the CRC checked: each frame's CRC compared, its bitmap
        (a view past size and magic) handed to pyroaring and wrapped as a DeletionVector,
        nothing else checked."""
        out = []
        for b in our_bytes:
            view = memoryview(b)
            if crc32(view[4:-4]) != int.from_bytes(view[-4:], "big"):
                raise AssertionError("a DV's CRC")
            dv = DeletionVector.__new__(DeletionVector)
            dv.bitmap64, dv._bitmaps = False, {0: BitMap.deserialize(view[8:-4])}
            out.append(dv)
        return out

    if floor() != [DeletionVector.deserialize(b) for b in our_bytes]:
        raise AssertionError("the deserialize floor read other DVs")
    crc, no_crc, least, raw_crc, raw = best_times(
        [
            lambda: [DeletionVector.deserialize(b) for b in our_bytes],
            lambda: [DeletionVector.deserialize(b, verify_crc=False) for b in our_bytes],
            floor,
            lambda: [(crc32(v[4:-4]), BitMap.deserialize(v[8:-4])) for v in map(memoryview, our_bytes)],
            lambda: [BitMap.deserialize(b) for b in raw_bytes],
        ],
        15,
        time.process_time,
    )
    _line("python CPU: deserialize DV, CRC checked", crc, "raw pyroaring", raw, "<= 1.25")
    _line("python CPU: deserialize DV, no CRC", no_crc, "raw pyroaring", raw, "<= 1.25")
    _line("python floor: DV from frame, CRC only", least, "raw pyroaring", raw, None)
    # the least any reader of a frame does: ISA-L's CRC-32 of DATA and pyroaring on a view of the
    # bitmap in it (no copy; pyroaring reads a view slower than the bytes object raw gets)
    _line("python floor: CRC + pyroaring, frame views", raw_crc, "raw pyroaring", raw, None)


def bench_jvm(files: int, per_file: int) -> None:
    from indexbridge.jvm import jvm

    report = json.loads(jvm().io.indexbridge.bench.DvBench.run(files, per_file, 10))
    for row in report:
        _line(f"scala: {row['label']}", row["ours_s"], row["baseline_label"], row["baseline_s"], row["goal"])


# The comparison rows cache their input, and `bitmap_construct_agg` (a SortAggregate: its buffer
# is not an object Spark's hash aggregates take) sorts all of it; at 200M positions Spark's own
# aggregate runs out of the default 1g heap reading its sort's spills. Larger runs (`--full`)
# compare at this size and take their full size to the scale line.
COMPARE_MAX_POSITIONS = 20_000_000
# The codec rows hold every file's positions and DVs at once: at --full (10,000 files of 20,000)
# that is 1.6 GB of longs on the JVM's default 1g heap; they time per-DV work, which more files
# only repeat.
CODEC_MAX_FILES = 1000


def bench_spark(positions: int, files: int) -> None:
    compared = min(positions, COMPARE_MAX_POSITIONS)
    bench_spark_compare(compared, max(1, files * compared // positions))
    bench_spark_scale(positions, files)


def bench_spark_compare(positions: int, files: int) -> None:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from indexbridge.spark import configure
    from indexbridge.spark import functions as ibf

    builder = SparkSession.builder.master("local[2]").appName("indexbridge-bench")
    if PAIMON_BUNDLE.is_file():  # the baseline for the Scala codec rows
        builder.config("spark.driver.extraClassPath", str(PAIMON_BUNDLE))
    spark = configure(builder).config("spark.ui.enabled", "false").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    rows = spark.range(positions).select((F.col("id") % files).alias("file"), (F.col("id") / files).cast("long").alias("pos")).cache()
    rows.count()

    def run(df) -> Callable[[], None]:
        return lambda: df.write.format("noop").mode("overwrite").save()

    count, ours, builtin = best_times(
        [
            run(rows.groupBy("file").count()),
            run(rows.groupBy("file").agg(ibf.dv_agg("pos").alias("dv"))),
            run(rows.groupBy("file", F.bitmap_bucket_number("pos").alias("b")).agg(F.bitmap_construct_agg(F.bitmap_bit_position("pos")).alias("bm"))),
        ],
        3,
    )
    print(f"spark: {positions} positions over {files} files, local[2]")
    _line("spark: ib_dv_agg", ours, "groupBy(file).count()", count, "<= 1.5")
    _line("spark: ib_dv_agg", ours, "bitmap_construct_agg", builtin, "<= 0.33")
    # the same positions read from Parquet in no order (a file's positions interleaved with the
    # others'), as a job reads them: the aggregate reads the scan's batches in place. The baseline
    # counts `pos` so that it reads both columns too (`count()` reads only `file`).
    with tempfile.TemporaryDirectory() as tmp:
        rows.orderBy(F.rand(7)).write.parquet(tmp + "/positions")
        scanned = spark.read.parquet(tmp + "/positions")
        count, ours = best_times([run(scanned.groupBy("file").agg(F.count("pos"))), run(scanned.groupBy("file").agg(ibf.dv_agg("pos").alias("dv")))], 3)
        _line("spark: ib_dv_agg, from Parquet, no order", ours, "groupBy(file).agg(count(pos)), same scan", count, None)
    rows.unpersist()
    spark.stop()


# Spark's own memory (sorters, shuffle buffers) off the heap in the scale line's session, so that
# the heap it reports holds the aggregation's objects (DVs, hash maps), not Spark's pages.
SCALE_OFF_HEAP = "1g"
DV_PARTIAL_BYTES = "spark.indexbridge.dvAgg.partialBytes"
SCALE_FULL_GC_MS = 1000


def scale_session():
    """A local[2] session for the scale lines, its Tungsten memory off the heap
    (``SCALE_OFF_HEAP``): the heap they report holds the aggregation's objects, not Spark's pages."""
    from pyspark.sql import SparkSession

    from indexbridge.spark import configure

    builder = SparkSession.builder.master("local[2]").appName("indexbridge-bench-scale")
    builder.config("spark.memory.offHeap.enabled", "true").config("spark.memory.offHeap.size", SCALE_OFF_HEAP)
    if PAIMON_BUNDLE.is_file():  # the Scala codec rows that follow use the session's JVM
        builder.config("spark.driver.extraClassPath", str(PAIMON_BUNDLE))
    spark = configure(builder).config("spark.ui.enabled", "false").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def bench_spark_scale(positions: int, files: int) -> None:
    """The scale line: `ib_dv_agg` straight from `spark.range` (nothing cached) in rows/s, with
    the executor's memory (`io.indexbridge.bench.AggregateScale`: peak heap after GC during the job
    above the heap before it, and Spark's largest per-task `peakExecutionMemory`), in a session
    of its own whose Tungsten memory is off the heap. Then the live heap, sampled by a full GC
    every SCALE_FULL_GC_MS, as indexbridge plans the aggregate (partial aggregation in chunks of
    bounded memory, then a sort-based final merge) and with Spark's own plan
    (`spark.indexbridge.dvAgg.partialBytes=0`: hash aggregates keeping every DV of a task)."""
    spark = scale_session()
    scale = spark._jvm.io.indexbridge.bench.AggregateScale
    r = json.loads(scale.runDvAgg(spark._jsparkSession, positions, files, 0))
    print(f"spark scale: ib_dv_agg {positions} positions / {files} files: {r['seconds']:.1f} s, {r['rows_per_s'] / 1e6:.2f} M rows/s, "
          f"peak heap after GC +{r['peak_live_heap'] / 2**20:.0f} MiB ({r['gcs']} GCs), "
          f"peak task execution memory {r['peak_execution_memory'] / 2**20:.0f} MiB", flush=True)
    for plan, partial_bytes in (("bounded", None), ("Spark's plan", "0")):
        if partial_bytes is None:
            spark.conf.unset(DV_PARTIAL_BYTES)
        else:
            spark.conf.set(DV_PARTIAL_BYTES, partial_bytes)
        r = json.loads(scale.runDvAgg(spark._jsparkSession, positions, files, SCALE_FULL_GC_MS))
        print(f"spark scale memory, {plan + ':':<13} live heap peak +{r['peak_live_heap_full_gc'] / 2**20:.0f} MiB "
              f"(full GC every {SCALE_FULL_GC_MS} ms: {r['full_gcs']}; {r['seconds']:.1f} s with them)", flush=True)
    spark.conf.unset(DV_PARTIAL_BYTES)  # the session stays: the Scala codec rows run in its JVM


ZAP_TIMES = ("analyze_build_s", "build_s", "lookup_s", "iterate_s")
# Fst.get_many, Dictionary.postings_columns, and the floor of the per-hit iteration
ZAP_PYTHON_EXTRA_TIMES = ("lookup_batch_s", "iterate_columns_s", "iterate_floor_s")


def _zap_python(corpus) -> tuple[dict[str, int], Callable[[], dict[str, float]]]:
    """Python's side of `bench zap`, set up once: (its document, term and postings counts, a
    function timing each workload once)."""
    from indexbridge.zap import Segment, build_segment
    from indexbridge.zap.postings import Location, Posting

    new = tuple.__new__  # a NamedTuple from its fields, as the postings decoder makes them

    docs = corpus.documents()
    seg = Segment(build_segment(docs))
    terms = [(seg.dictionary(name), term) for name in seg.field_names for term in seg.dictionary(name).terms()]

    def lookup() -> None:
        for dictionary, term in terms:
            if dictionary.fst.get(term) is None:
                raise AssertionError(term)

    def iterate() -> int:
        return sum(1 + len(hit.locations or ()) for dictionary, term in terms for hit in dictionary.postings(term))

    # The floor of a per-hit iteration in Python: each term's lookup and its Posting and Location
    # tuples made from values decoded beforehand, nothing read from the segment's bytes
    decoded = [[(h.doc, h.freq, h.norm_bits, h.locations and tuple(map(tuple, h.locations))) for h in d.postings(t)] for d, t in terms]

    def iterate_floor() -> int:
        def hits(values):
            for doc, freq, bits, locations in values:
                yield new(Posting, (doc, freq, bits, locations and tuple(new(Location, loc) for loc in locations)))

        total = 0
        for (dictionary, term), values in zip(terms, decoded):
            if dictionary.fst.get(term) is None:
                raise AssertionError(term)
            total += sum(1 + len(hit.locations or ()) for hit in hits(values))
        return total

    # the columnar counterparts: each field's terms in one batch
    batches = [(seg.dictionary(name), list(seg.dictionary(name).terms())) for name in seg.field_names]

    def lookup_batch() -> None:
        for dictionary, field_terms in batches:
            if None in dictionary.fst.get_many(field_terms):
                raise AssertionError(dictionary.field.name)

    def iterate_columns() -> int:
        return sum(len(c.docs) + len(c.field_ids) for c in (d.postings_columns(field_terms) for d, field_terms in batches))

    def one_round() -> dict[str, float]:
        workloads = (lambda: build_segment(corpus.documents()), lambda: build_segment(docs), lookup, iterate, lookup_batch, iterate_columns, iterate_floor)
        return {key: best_time(fn, 1) for key, fn in zip(ZAP_TIMES + ZAP_PYTHON_EXTRA_TIMES, workloads)}

    counts = {"docs": len(docs), "terms": len(terms), "postings": iterate(), "postings_columns": iterate_columns()}
    if iterate_floor() != counts["postings"]:
        raise AssertionError("the iteration floor made other hits than the iteration")
    return counts, one_round


# The JVM's heap for `bench zap` (spark-submit reads SPARK_DRIVER_MEMORY when it starts the
# gateway). Its default, 1g, is too small for the corpus, the analysed documents and a build's
# term maps at once: G1 then spends most of the build in young collections (analysis + build
# measured 2-4x slower at 1g than at 2g or more; Go's heap has no such cap).
ZAP_JVM_HEAP = "4g"


def _best_rounds(rounds: list[dict], keys: Sequence[str] = ZAP_TIMES) -> dict[str, float]:
    """Each workload's best time over ``rounds``."""
    return {k: min(r[k] for r in rounds) for k in keys}


def bench_zap(docs: int, rounds: int) -> None:
    from indexbridge.jvm import jvm
    from indexbridge.zap.corpus import generate, zapgo

    os.environ.setdefault("SPARK_DRIVER_MEMORY", ZAP_JVM_HEAP)  # before jvm() starts the gateway

    corpus = generate(docs, seed=11)
    raw_bytes = sum(len(str(v).encode()) for _, fields in corpus.docs for _, v in fields)
    with tempfile.TemporaryDirectory() as tmp:
        path = corpus.write(Path(tmp) / "corpus.json")
        binary = zapgo()
        scala = json.loads(jvm().io.indexbridge.bench.ZapBench.run(str(path), rounds))
        # Go's and Python's rounds alternate, so that a shared machine's load changes hit both sides
        # alike; each side reports its best round. A Go process times 2 rounds (its first warms the
        # heap, as a long-lived process's would be) where Python times 1 in its warm process.
        python, python_round = _zap_python(corpus)
        go_rounds, python_rounds = [], []
        for _ in progress(range(rounds), "go and python rounds", unit="round"):
            go_rounds.append(json.loads(subprocess.run([str(binary), "bench", str(path), "2"], check=True, capture_output=True, text=True).stdout))
            python_rounds.append(python_round())
    go, python = go_rounds[0] | _best_rounds(go_rounds), python | _best_rounds(python_rounds, ZAP_TIMES + ZAP_PYTHON_EXTRA_TIMES)
    for name, r in (("scala", scala), ("python", python), ("python columns", {**python, "postings": python["postings_columns"]})):
        if (r["terms"], r["postings"]) != (go["terms"], go["postings"]):
            raise AssertionError(f"{name} saw {r['terms']} terms / {r['postings']} postings, Go {go['terms']} / {go['postings']}")
    print(f"corpus: {docs} documents, {raw_bytes / 1e6:.1f} MB of raw values, {go['terms']} terms, {go['postings']} postings+locations")
    for name, r in (("go", go), ("scala", scala), ("python", python)):
        print(f"{name:<7} build {docs / r['build_s']:9.0f} docs/s {raw_bytes / r['build_s'] / 1e6:6.1f} MB/s   "
              f"analyze+build {docs / r['analyze_build_s']:9.0f} docs/s {raw_bytes / r['analyze_build_s'] / 1e6:6.1f} MB/s   "
              f"lookup {go['terms'] / r['lookup_s'] / 1e6:6.2f} M terms/s   iterate {go['postings'] / r['iterate_s'] / 1e6:6.2f} M/s")
    targets = {"scala": ("<= 1.00", "<= 1.00"), "python": ("<= 3.00", "<= 3.00")}
    for name, r in (("scala", scala), ("python", python)):
        build_target, other = targets[name]
        _line(f"{name}: segment build (analysed docs)", r["build_s"], "go zap", go["build_s"], build_target)
        _line(f"{name}: analysis + segment build", r["analyze_build_s"], "go bleve + zap", go["analyze_build_s"], build_target)
        _line(f"{name}: term lookup (every term)", r["lookup_s"], "go zap", go["lookup_s"], other)
        _line(f"{name}: postings iteration (with locations)", r["iterate_s"], "go zap", go["iterate_s"], other)
    _line("python floor: lookups + tuples, no decoding", python["iterate_floor_s"], "go zap postings iteration", go["iterate_s"], None)
    _line("python: term lookup, batch (get_many)", python["lookup_batch_s"], "go zap", go["lookup_s"], "<= 3.00")
    _line("python: postings, columnar (numpy arrays)", python["iterate_columns_s"], "go zap", go["iterate_s"], "<= 3.00")


# One size of `bench zap --scale`, in a fresh interpreter so that its peak RSS is its own
_ZAP_SCALE_CHILD = """
import resource, sys, time
from indexbridge.zap import build_segment
from indexbridge.zap.corpus import generate
corpus = generate(int(sys.argv[1]), seed=11)
t0 = time.perf_counter()
documents = corpus.documents()
t1 = time.perf_counter()
size = len(build_segment(documents))
t2 = time.perf_counter()
print(t1 - t0, t2 - t1, size, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


# What the Python build holds per document (corpus, analysed documents, segment; measured
# 57-58 KB at 10k and 30k documents, rounded up): a size needing more than the memory available
# is not started, rather than swapping or being killed an hour in.
ZAP_SCALE_BYTES_PER_DOC = 64 << 10


def memory_available() -> int:
    """The bytes of memory available to a new process: ``MemAvailable`` (Linux), else the RAM."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    from indexbridge.jvm import physical_memory

    return physical_memory()


def bench_zap_scale(sizes: list[int]) -> None:
    """How the Python zap build's cost grows with the corpus: per size, analysis and build time
    and the process's peak RSS (corpus, analysed documents and segment all held at once, as
    zap's in-memory ``New`` holds them), with the growth per document against the size before.
    A size that needs more memory than is available is named and skipped."""
    previous = None
    for docs in sizes:
        need, available = docs * ZAP_SCALE_BYTES_PER_DOC, memory_available()
        if need > available:
            print(f"python zap scale {docs:>9} docs   not run: needs about {need / 2**30:.0f} GiB (64 KB a document), "
                  f"{available / 2**30:.0f} GiB available; `bench bleve --scale` builds 1M documents in segments", flush=True)
            continue
        out = subprocess.run([sys.executable, "-c", _ZAP_SCALE_CHILD, str(docs)], check=True, capture_output=True, text=True)
        analyze, build, size, rss_kb = (float(x) for x in out.stdout.split())
        growth = ""
        if previous is not None:
            p_docs, p_time, p_rss = previous
            growth = (f"   per doc vs {p_docs}: time x{(analyze + build) / docs / (p_time / p_docs):.2f}, "
                      f"RSS x{rss_kb / docs / (p_rss / p_docs):.2f}")
        print(f"python zap scale {docs:>9} docs   analysis {analyze:8.1f} s   build {build:8.1f} s   "
              f"{docs / (analyze + build):6.0f} docs/s   segment {size / 1e6:7.1f} MB   peak RSS {rss_kb / 1024:7.0f} MB{growth}", flush=True)
        previous = docs, analyze + build, rss_kb


def run(args) -> int:
    if args.suite == "zap" and args.scale:
        sizes = [int(n) for n in args.scale.split(",")]
        print(f"indexbridge bench zap --scale: the Python build at {', '.join(map(str, sizes))} documents")
        bench_zap_scale(sizes)
        return 0
    if args.suite == "zap":
        print(f"indexbridge bench zap: {args.docs} documents, best of {args.rounds} rounds")
        bench_zap(args.docs, args.rounds)
        return 0
    from indexbridge.cli import bench_lakehouse

    if args.full:
        args.files, args.positions = bench_lakehouse.FULL_FILES, bench_lakehouse.FULL_POSITIONS
    per_file = max(1, args.positions // args.files)
    print(f"indexbridge bench dv: {args.positions} positions, {args.files} files")
    if not args.lakehouse_only:
        bench_spark(args.positions, args.files)
        bench_jvm(min(args.files, CODEC_MAX_FILES), per_file)
        bench_python(min(args.files, CODEC_MAX_FILES), per_file)
    bench_lakehouse.run(args.files, args.positions, args.rounds)
    return 0
