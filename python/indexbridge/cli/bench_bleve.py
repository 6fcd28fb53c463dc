"""`indexbridge bench bleve`: building and searching whole bleve indexes, as ratios against bleve
v1.0.14 itself (integration/boltgo, built with the local Go toolchain) measured in the same run.

Building: N generated documents (``--docs``, 200000; text, keywords, numbers, booleans, dates,
a nested object) under one mapping (explicit fields plus dynamic ones). bleve batch-indexes them
in Go (batches of 10000 into ``bleve.NewUsing(..., "scorch", ...)``, until ``Close`` returns);
``write_bleve_index`` writes the same documents from a cached DataFrame on ``local[2]`` with the
Scala engine (goal: at most 1.0x Go's time) and the Python Arrow engine (goal: at most 3x), id
uniqueness check included. Searching: queries of each supported kind over the index Spark wrote,
every hit, best of ``--rounds``: bleve (Go, read-only), the Scala search in the JVM (after an
untimed pass over the queries, for the JIT), the Python search in this process, and
``search_bleve_index`` (JVM engine, a Spark job). Nothing is asserted; the answers' totals are
compared with bleve's and printed. ``--scale`` instead writes indexes of growing sizes from
documents generated in Spark, with the heap's peak (:func:`run_scale`).
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
import time
from pathlib import Path

from indexbridge.bleve.corpus import reference_binary, run_reference
from indexbridge.bleve.index import BleveIndex
from indexbridge.bleve.query import search
from indexbridge.zap.corpus import WORDS, _sentence

MAPPING = {
    "default_mapping": {"dynamic": True, "properties": {
        "title": {"fields": [{"type": "text", "analyzer": "standard", "store": True, "index": True,
                              "include_term_vectors": True, "include_in_all": True}]},
        "tags": {"fields": [{"type": "text", "analyzer": "keyword", "store": True, "index": True, "include_in_all": True}]},
        "price": {"fields": [{"type": "number", "store": True, "index": True, "docvalues": True}]},
    }},
}
ROWS_PER_SEGMENT = 20_000


def bench_document(rng: random.Random, k: int) -> dict:
    """One document of the benchmark's fixed shape."""
    return {
        "id": f"doc{k:07d}",
        "title": _sentence(rng, rng.randint(3, 10)),
        "body": _sentence(rng, rng.randint(20, 60)),
        "tags": [rng.choice(WORDS[:60]) for _ in range(rng.randint(1, 4))],
        "price": round(rng.uniform(0, 1000), 2),
        "active": rng.random() < 0.5,
        "when": f"20{rng.randint(0, 24):02d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z",
        "author": {"name": _sentence(rng, 2), "age": rng.randint(18, 90)},
    }


QUERIES = {
    "term": [{"term": "water", "field": "body"}, {"term": "the", "field": "title"}],
    "match": [{"match": "quick brown fox"}, {"match": "little house", "field": "body", "operator": "and"}],
    "match_phrase": [{"match_phrase": "find any", "field": "body"}, {"match_phrase": "over the lazy dog"}],
    "prefix": [{"prefix": "wo", "field": "body"}, {"prefix": "s", "field": "tags"}],
    "numeric range": [{"min": 100, "max": 200, "field": "price"}, {"min": 30, "inclusive_min": False, "field": "author.age"}],
    "conjunction": [{"conjuncts": [{"match": "water"}, {"min": 500, "field": "price"}]}],
    "disjunction": [{"disjuncts": [{"term": "fox", "field": "body"}, {"term": "dog", "field": "title"}, {"match": "school"}], "min": 1}],
    "match_all": [{"match_all": {}}],
}


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _best(fn, rounds: int) -> float:
    return min(_timed(fn) for _ in range(rounds))


def _spark():
    from pyspark.sql import SparkSession

    from indexbridge.spark import configure

    spark = (configure(SparkSession.builder.master("local[2]").appName("indexbridge-bench-bleve"))
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "3g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run(args) -> int:
    from indexbridge.jvm import jvm
    from indexbridge.spark.bleve import search_bleve_index, write_bleve_index

    if args.scale:
        return run_scale([int(size) for size in args.scale.split(",")])
    n = args.docs
    rounds = args.rounds
    work = Path(tempfile.mkdtemp(prefix="ib-bench-bleve-"))
    try:
        rng = random.Random(42)
        docs = [bench_document(rng, k) for k in range(n)]
        (work / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
        (work / "job.json").write_text(json.dumps({"mapping": MAPPING, "docs": [[d["id"], d] for d in docs], "batch_size": 10_000}))
        raw = (work / "docs.jsonl").stat().st_size
        del docs
        print(f"bleve bench: {n} documents ({raw / 1e6:.0f} MB of JSON), rows_per_segment {ROWS_PER_SEGMENT}, local[2]")

        boltgo = reference_binary("boltgo")
        go = run_reference(boltgo, "bleve-bench", work / "job.json", work / "go-index")
        t_go = go["seconds"]
        print(f"build   bleve v1.0.14 (Go) batch indexing       {t_go:7.2f} s  {n / t_go:9.0f} docs/s")

        spark = _spark()
        df = spark.read.json(str(work / "docs.jsonl")).repartition(2).cache()
        df.count()
        builds = {}
        for engine, goal in (("jvm", 1.0), ("python", 3.0)):
            target = work / f"spark-{engine}"
            t = _timed(lambda: write_bleve_index(df, str(target), mapping=MAPPING, id_col="id",
                                                 rows_per_segment=ROWS_PER_SEGMENT, engine=engine).collect())
            builds[engine] = t
            label = "Scala (JVM engine)" if engine == "jvm" else "Python (Arrow engine)"
            print(f"build   write_bleve_index, {label:<22} {t:7.2f} s  {n / t:9.0f} docs/s  ratio {t / t_go:5.2f} x Go "
                  f"(goal <= {goal:.1f}: {'met' if t / t_go <= goal else 'not met'})")
        same = all((work / "spark-jvm" / r).read_bytes() == (work / "spark-python" / r).read_bytes()
                   for r in ["index_meta.json", "store/root.bolt"])
        print(f"        the two engines' directories: {'identical' if same else 'DIFFERENT'} root.bolt and index_meta.json")

        index_dir = work / "spark-jvm"
        queries = [q for qs in QUERIES.values() for q in qs]
        (work / "queries.json").write_text(json.dumps(queries))
        go_search = run_reference(boltgo, "bleve-search-bench", index_dir, work / "queries.json", rounds)
        scala = json.loads(jvm().io.indexbridge.bleve.BleveBridge.timeSearch(str(index_dir), str(work / "queries.json"), rounds))
        py_times, py_totals, spark_times = [], [], []
        with BleveIndex(index_dir) as index:
            for q in queries:
                result = []
                py_times.append(_best(lambda: result.append(search(index, q)), rounds))
                py_totals.append(result[-1].total)
        for q in queries:
            spark_times.append(_best(lambda: search_bleve_index(spark, str(index_dir), q).count(), max(1, rounds - 1)))
        print("search  (every hit; seconds per query, best of rounds; ratio = ours / Go)")
        print(f"        {'kind':<14} {'hits':>8} {'Go':>9} {'Scala':>9} {'ratio':>6} {'Python':>9} {'ratio':>6} {'Spark':>9} {'ratio':>6}")
        k = 0
        for kind, qs in QUERIES.items():
            g = sum(go_search[k + i]["seconds"] for i in range(len(qs)))
            s = sum(scala[k + i]["seconds"] for i in range(len(qs)))
            p = sum(py_times[k + i] for i in range(len(qs)))
            sp = sum(spark_times[k + i] for i in range(len(qs)))
            hits = sum(go_search[k + i]["total"] for i in range(len(qs)))
            agree = all(go_search[k + i]["total"] == scala[k + i]["total"] == py_totals[k + i] for i in range(len(qs)))
            print(f"        {kind:<14} {hits:>8} {g:9.4f} {s:9.4f} {s / g:6.2f} {p:9.4f} {p / g:6.2f} {sp:9.4f} {sp / g:6.2f}"
                  f"{'' if agree else '  TOTALS DIFFER'}")
            k += len(qs)
        spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def run_scale(sizes: list[int]) -> int:
    """`bench bleve --scale`: ``write_bleve_index`` (JVM engine, segments of ``ROWS_PER_SEGMENT``)
    of each number of documents, generated in Spark in this bench's shape
    (``AggregateScale.runBleveWrite``), each index deleted after its run: time, documents/s and
    the heap's peak after a garbage collection (an upper bound on what the tasks held: a young
    collection also counts garbage already promoted), with the growth of the time per document
    and of the heap against the size before. A task holds one segment's documents at a time, so the heap stays flat once
    every task writes whole segments. An untimed index of one segment's documents (at most) warms the JVM
    first. Full collections are not forced: over a heap of a gigabyte each took about half a
    second, and forced every 100 ms they made the time six times longer."""
    from indexbridge.jvm import jvm

    print(f"bleve bench --scale: write_bleve_index (JVM engine) of {', '.join(map(str, sizes))} generated documents, "
          f"segments of {ROWS_PER_SEGMENT}, local[2]")
    spark = _spark()
    scale = jvm().io.indexbridge.bench.AggregateScale
    work = Path(tempfile.mkdtemp(prefix="ib-bench-bleve-scale-"))
    try:

        def write(size: int) -> dict:
            target = work / f"index-{size}"
            try:
                return json.loads(scale.runBleveWrite(spark._jsparkSession, size, ROWS_PER_SEGMENT, str(target), json.dumps(MAPPING),
                                                      json.dumps(WORDS), 0))
            finally:
                shutil.rmtree(target, ignore_errors=True)

        write(min(sizes[0], ROWS_PER_SEGMENT))
        previous = None
        for size in sizes:
            r = write(size)
            heap = r["peak_live_heap"]
            growth = ""
            if previous is not None:
                p_size, p_seconds, p_heap = previous
                heap_growth = f"{heap / p_heap:.2f}" if p_heap else "n/a"  # (no collection ran)
                growth = f"   vs {p_size}: time per doc x{r['seconds'] / size / (p_seconds / p_size):.2f}, heap x{heap_growth}"
            print(f"scale   write_bleve_index {size:>9} docs  {r['seconds']:7.1f} s  {r['rows_per_s']:7.0f} docs/s  "
                  f"heap after GC, peak +{heap / 2**20:.0f} MiB ({r['gcs']} GCs){growth}", flush=True)
            previous = size, r["seconds"], heap
        spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0
