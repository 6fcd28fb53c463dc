"""The main job's bleve section: the demo table's rows written as a whole bleve index directory by
Spark, then opened and searched by bleve itself (Go), every answer checked.

1. Take the table's first 50,000 order ids (one row each: the latest version Paimon wrote) with
   their customer, amount, partition date and a generated sentence (``text``).
2. ``write_bleve_index`` (JVM engine) writes them under a bleve mapping (``text`` standard
   analyzer, ``customer`` keyword, ``amount`` number, the rest dynamic) in segments of 10,000
   rows; the Python engine writes a 2,000-row slice and must write the same files as the JVM.
3. bleve v1.0.14 (integration/boltgo) opens the directory and answers term, match, phrase,
   prefix, range and boolean queries: its totals must equal plain DataFrame filters where one
   exists, and ``search_bleve_index`` must return bleve's ids and scores; bleve v2 opens it too
   and counts the same documents; ``read_bleve_index`` returns every row.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from indexbridge.cli.demo_zap import sentence

INDEXED_ROWS = 50_000
ROWS_PER_SEGMENT = 10_000
SLICE_ROWS = 2_000
MAPPING = {
    "default_mapping": {"dynamic": True, "properties": {
        "text": {"fields": [{"type": "text", "analyzer": "standard", "store": True, "index": True,
                             "include_term_vectors": True, "include_in_all": True}]},
        "customer": {"fields": [{"type": "text", "analyzer": "keyword", "store": True, "index": True, "include_in_all": True}]},
        "amount": {"fields": [{"type": "number", "store": True, "index": True, "docvalues": True}]},
    }},
}
QUERIES = [
    ({"term": "customer-42", "field": "customer"}, "customer = 'customer-42'"),
    ({"min": 100, "max": 200, "field": "amount"}, "amount >= 100 AND amount < 200"),
    ({"match": "spark lazy", "field": "text"}, None),
    ({"match_phrase": None, "field": "text"}, None),  # the first two words of order 1's text
    ({"prefix": "sp", "field": "text"}, None),
    ({"conjuncts": [{"match": "zebra", "field": "text"}, {"min": 500, "field": "amount"}]}, None),
    ({"disjuncts": [{"term": "customer-7", "field": "customer"}, {"match": "fox"}], "min": 1}, None),
]


def documents(data: DataFrame) -> DataFrame:
    """One row per order id below ``INDEXED_ROWS``: the version in the last data file position."""
    latest = (data.filter(F.col("id") < INDEXED_ROWS)
              .groupBy("id").agg(F.max(F.struct("file", "pos", "customer", "amount", "dt")).alias("v")))
    return latest.select(F.col("id").cast("string").alias("id"), F.col("v.customer").alias("customer"),
                         F.col("v.amount").cast("double").alias("amount"), F.col("v.dt").cast("string").alias("dt"),
                         sentence(F.col("id")).alias("text"))


def _same_hits(hits: list, expected: list) -> bool:
    """The same ids with the same scores (to 1e-9) in the same order, but for hits whose scores are
    equal to 1e-12 (bleve may sum a many-term disjunction's matches in another order)."""
    scores = dict(expected)
    if len(hits) != len(expected) or any(i not in scores or abs(s - scores[i]) > 1e-9 for i, s in hits):
        return False
    return all(i == j or abs(s - t) <= 1e-12 * max(1.0, abs(s)) for (i, s), (j, t) in zip(hits, expected))


def run(spark, data: DataFrame, work: Path, check: Callable[[str, bool], str]) -> None:
    from indexbridge.bleve.corpus import answer, reference_binary
    from indexbridge.spark.bleve import read_bleve_index, search_bleve_index, write_bleve_index

    t0 = time.perf_counter()
    docs = documents(data).repartition(4).cache()
    n_docs = docs.count()
    index_dir = work / "bleve" / "orders.bleve"
    segments = write_bleve_index(docs, str(index_dir), mapping=MAPPING, id_col="id", rows_per_segment=ROWS_PER_SEGMENT).collect()
    t_build = time.perf_counter() - t0
    written = sum(r["docs"] for r in segments)

    sample = docs.orderBy("id").limit(SLICE_ROWS).repartition(2).cache()
    files = {}
    for engine in ("jvm", "python"):
        out = work / "bleve" / f"slice-{engine}.bleve"
        write_bleve_index(sample, str(out), mapping=MAPPING, id_col="id", rows_per_segment=500, engine=engine).collect()
        files[engine] = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    same_files = len(files["jvm"]) > 2 and files["jvm"] == files["python"]
    print(f"bleve: {n_docs} orders into {index_dir}: {len(segments)} segments, {written} documents "
          f"({check('bleve build', written == n_docs)}), {t_build:.1f} s; JVM and Python write a {SLICE_ROWS}-row slice "
          f"as {len(files['jvm'])} identical files ({check('bleve identical files', same_files)})")

    t1 = time.perf_counter()
    phrase = " ".join(docs.filter(F.col("id") == "1").first()["text"].split()[:2])
    queries = [dict(q, match_phrase=phrase) if "match_phrase" in q else q for q, _ in QUERIES]
    bleve = answer(reference_binary("boltgo"), index_dir, queries, docs=False)
    opened = bleve["doc_count"] == n_docs
    v2 = answer(reference_binary("bleve2"), index_dir, [{"match_all": {}}])
    print(f"bleve v1.0.14 opens it: {bleve['doc_count']} documents ({check('bleve opens', opened)}); "
          f"bleve v2 too: {v2['doc_count']} ({check('bleve v2 opens', v2['doc_count'] == n_docs)})")
    for q, (_, condition), a in zip(queries, QUERIES, bleve["answers"]):
        hits = [(r["_id"], r["score"]) for r in search_bleve_index(spark, str(index_dir), q).collect()]
        same = _same_hits(hits, [tuple(h) for h in a["hits"]]) and len(hits) == a["total"]
        line = f"  {json.dumps(q)}: bleve {a['total']} hits, search_bleve_index the same ids and scores ({check('bleve search ' + json.dumps(q), same)})"
        if condition is not None:
            expected = docs.filter(condition).count()
            line += f", a DataFrame filter {expected} ({check('bleve total ' + json.dumps(q), expected == a['total'])})"
        print(line)
    read = read_bleve_index(spark, str(index_dir))
    n_read = read.count()
    columns = read.columns
    print(f"read_bleve_index: {n_read} rows, columns {', '.join(columns)} ({check('bleve read', n_read == n_docs)}); "
          f"{time.perf_counter() - t1:.1f} s")
