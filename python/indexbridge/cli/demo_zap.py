"""The main job's zap section: the demo table's text indexed into bleve zap segments, merged
and queried, every answer checked against a plain DataFrame filter.

1. Give every row a generated sentence (`text`, standard analyzer) and its customer (keyword).
2. Build one segment per 25,000 rows per task with the JVM path; build a slice with both paths
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
TERMS = ["spark", "zebra", "lazy"]
PREFIXES = ["sp", "qu", "z"]
ROWS_PER_SEGMENT = 25_000
GROUP_SIZE = 4


def sentence(id_col: Column) -> Column:
    """Six vocabulary words chosen by the row id (deterministic)."""
    words = F.array(*[F.lit(w) for w in VOCABULARY])
    n = len(VOCABULARY)
    return F.concat_ws(" ", *[F.element_at(words, ((id_col * k + k * k) % n + 1).cast("int")) for k in (1, 7, 11, 13, 17, 19)])


def _same_ids(found: DataFrame, expected: DataFrame) -> bool:
    return found.count() == expected.count() and found.exceptAll(expected).isEmpty()


def run(spark, data: DataFrame, work: Path, check: Callable[[str, bool], str]) -> None:
    from indexbridge.spark import functions as ibf
    from indexbridge.zap.analyzers import FieldMapping

    t0 = time.perf_counter()
    table = data.select(F.col("id").cast("string").alias("id"), sentence(F.col("id")).alias("text"), "customer")
    fields = [FieldMapping("text"), FieldMapping("customer", analyzer="keyword", store=False)]
    segments = ibf.build_zap_segments(table, str(work / "zap" / "segments"), fields=fields, rows_per_segment=ROWS_PER_SEGMENT).cache()
    built = segments.agg(F.count("*"), F.sum("docs"), F.sum("size")).first()
    n_rows = table.count()

    sample = table.orderBy("id").limit(2_000).repartition(2).cache()
    files = {}
    for engine in ("jvm", "python"):
        out = work / "zap" / f"slice-{engine}"
        ibf.build_zap_segments(sample, str(out), fields=fields, rows_per_segment=500, engine=engine).count()
        files[engine] = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    same_files = len(files["jvm"]) > 0 and files["jvm"] == files["python"]

    deleted = table.filter(F.col("id") % 10 == 3).select(F.col("id").alias("_id"))
    deletes = ibf.zap_ids(segments).join(deleted, "_id").select("segment", "_id")
    merged = ibf.merge_zap_segments(segments, str(work / "zap" / "merged"), group_size=GROUP_SIZE, deletes=deletes).cache()
    kept = merged.agg(F.count("*"), F.sum("docs")).first()
    expected_kept = n_rows - deleted.count()
    print(
        f"zap: {built[0]} segments, {built[1]} docs, {built[2]} bytes ({check('zap build', built[1] == n_rows)}); "
        f"JVM and Python build a {sample.count()}-row slice into {len(files['jvm'])} identical files "
        f"({check('zap identical files', same_files)}); merged into {kept[0]} segments, {kept[1]} docs "
        f"({check('zap merge', kept[1] == expected_kept)})"
    )

    live = table.join(deleted.withColumnRenamed("_id", "id"), "id", "left_anti")
    words = F.filter(F.split(F.lower("text"), " "), lambda w: ~w.isin(*STOP_WORDS))
    answers = []
    for query, prefix in [(t, False) for t in TERMS] + [(p, True) for p in PREFIXES]:
        if prefix:
            found = ibf.zap_prefix_search(merged, "text", query)
            expected = live.filter(F.exists(words, lambda w: w.startswith(query)))
        else:
            found = ibf.zap_term_search(merged, "text", query)
            expected = live.filter(F.array_contains(words, query))
        ok = _same_ids(found.select(F.col("_id").alias("id")), expected.select("id"))
        label = f"{query}*" if prefix else query
        answers.append(f"{label} {found.count()} ({check(f'zap query {label}', ok)})")
    print(f"zap queries: {', '.join(answers)}; {time.perf_counter() - t0:.1f} s")
    segments.unpersist()
    merged.unpersist()
    sample.unpersist()
