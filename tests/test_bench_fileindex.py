"""`indexbridge bench fileindex` runs end to end on tiny columns: every index of every column is
built and queried by Paimon, Scala and Python, and all three payloads are the same bytes; the
Spark scale line measures both plans at both sizes. The timings and sizes it prints are not
checked (a benchmark, DESIGN rule 7)."""

from __future__ import annotations

from indexbridge.cli import main


def test_bench_fileindex_smoke(capsys) -> None:
    assert main(["bench", "fileindex", "--rows", "3000", "--queries", "10", "--rounds", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    spark_scale = [line for line in out if line.startswith(("spark scale sorted (ours):", "spark scale Spark's plan:"))]
    assert len(spark_scale) == 2 and all(line.count(" MiB (") == 2 for line in spark_scale), "\n".join(spark_scale)
    lines = [line for line in out if line.split(" ", 1)[0] in ("unique_long", "low_card_int", "skewed_string")]
    builds = [line for line in lines if " build " in line]
    batches = [line for line in lines if " batch " in line]
    assert len(lines) == 28 and len(builds) == 11
    assert [line.split()[:2] for line in batches] == [[c, "bloom-filter"] for c in ("unique_long", "low_card_int", "skewed_string")]
    assert all(line.endswith("scala=same python=same") for line in builds), "\n".join(builds)
