"""The main job's zap section: the demo table's text indexed into bleve zap segments, merged
and queried, every answer checked against a plain DataFrame filter.

1. Take the table's first 50,000 ids (the section's run time stays small at any table size) and
   give each row a generated sentence (`text`, standard analyzer) and its customer (keyword).
2. Build one segment per 10,000 rows per task with the JVM path; build a slice with both paths
   and require identical files.
3. Merge the segments in groups of 4, deleting the rows with `id % 10 == 3` by `_id`.
4. Term and prefix queries over the merged segments against `lower(text)` filters of the table.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

VOCABULARY = [
    "Spark", "spare", "span", "speed", "zebra", "zap", "bleve", "index", "segment", "merge", "query", "quick",
    "brown", "fox", "jumps", "over", "lazy", "dog", "the", "and", "data", "files", "search", "term",
]
STOP_WORDS = {"the", "and"}  # in bleve's English stop list: never indexed
TERMS = ["spark", "lazy"]
PREFIXES = ["sp", "qu"]
INDEXED_ROWS = 50_000
ROWS_PER_SEGMENT = 10_000
GROUP_SIZE = 4
SLICE_ROWS = 2_000


def sentence(id_col: Column) -> Column:
    """Six vocabulary words chosen by the row id (deterministic)."""
    words = F.array(*[F.lit(w) for w in VOCABULARY])
    n = len(VOCABULARY)
    return F.concat_ws(" ", *[F.element_at(words, ((id_col * k + k * k) % n + 1).cast("int")) for k in (1, 7, 11, 13, 17, 19)])


def run(spark, data: DataFrame, work: Path, check: Callable[[str, bool], str]) -> None:
    from indexbridge.spark import functions as ibf
    from indexbridge.zap.analyzers import FieldMapping

    t0 = time.perf_counter()
    table = data.filter(F.col("id") < INDEXED_ROWS).select(
        F.col("id").cast("string").alias("id"), sentence(F.col("id")).alias("text"), "customer"
    )
    fields = [FieldMapping("text", doc_values=False), FieldMapping("customer", analyzer="keyword", store=False)]
    segments = ibf.build_zap_segments(
        table, str(work / "zap" / "segments"), fields=fields, rows_per_segment=ROWS_PER_SEGMENT, all_field=False
    ).cache()
    built = segments.agg(F.count("*"), F.sum("docs"), F.sum("size")).first()
    n_rows = table.count()
    t_build = time.perf_counter() - t0

    sample = table.orderBy("id").limit(SLICE_ROWS).repartition(2).cache()
    files = {}
    for engine in ("jvm", "python"):
        out = work / "zap" / f"slice-{engine}"
        ibf.build_zap_segments(sample, str(out), fields=fields, rows_per_segment=500, all_field=False, engine=engine).count()
        files[engine] = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    same_files = len(files["jvm"]) > 0 and files["jvm"] == files["python"]
    t_slice = time.perf_counter() - t0 - t_build

    deleted = table.filter(F.col("id") % 10 == 3).select(F.col("id").alias("_id"))
    deletes = ibf.zap_ids(segments).join(deleted, "_id").select("segment", "_id")
    merged = ibf.merge_zap_segments(segments, str(work / "zap" / "merged"), group_size=GROUP_SIZE, deletes=deletes).cache()
    kept = merged.agg(F.count("*"), F.sum("docs")).first()
    expected_kept = n_rows - deleted.count()
    t_merge = time.perf_counter() - t0 - t_build - t_slice
    print(
        f"zap: {built[0]} segments, {built[1]} docs, {built[2]} bytes ({check('zap build', built[1] == n_rows)}), {t_build:.1f} s; "
        f"JVM and Python build a {SLICE_ROWS}-row slice into {len(files['jvm'])} identical files "
        f"({check('zap identical files', same_files)}), {t_slice:.1f} s; merged into {kept[0]} segments, {kept[1]} docs "
        f"({check('zap merge', kept[1] == expected_kept)}), {t_merge:.1f} s"
    )
    t1 = time.perf_counter()

    words = F.filter(F.split(F.lower("text"), " "), lambda w: ~w.isin(*STOP_WORDS))
    live = table.join(deleted.withColumnRenamed("_id", "id"), "id", "left_anti").select("id", words.alias("words")).cache()
    queries = [(t, False) for t in TERMS] + [(p, True) for p in PREFIXES]
    found = expected = None
    for query, prefix in queries:
        label = F.lit(f"{query}*" if prefix else query).alias("query")
        search = ibf.zap_prefix_search if prefix else ibf.zap_term_search
        hits = search(merged, "text", query).select(label, F.col("_id").alias("id"))
        matches = live.filter(F.exists("words", lambda w: w.startswith(query)) if prefix else F.array_contains("words", query))
        found = hits if found is None else found.unionByName(hits)
        expected = (matches.select(label, "id") if expected is None else expected.unionByName(matches.select(label, "id")))
    found = found.cache()
    counts = dict(found.groupBy("query").count().collect())  # one small row per query
    wrong = {r["query"] for r in found.exceptAll(expected).unionByName(expected.exceptAll(found)).select("query").distinct().collect()}
    answers = []
    for query, prefix in queries:
        label = f"{query}*" if prefix else query
        answers.append(f"{label} {counts.get(label, 0)} ({check(f'zap query {label}', label not in wrong)})")
    found.unpersist()
    print(f"zap queries: {', '.join(answers)}; {time.perf_counter() - t1:.1f} s (zap total {time.perf_counter() - t0:.1f} s)")
    segments.unpersist()
    merged.unpersist()
    sample.unpersist()
    live.unpersist()
