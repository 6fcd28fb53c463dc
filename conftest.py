"""Fixtures shared by tests/ and integration/: real Paimon tables and Paimon's answers about them.

``paimon_suite`` creates, once per test session, generated tables with Paimon 1.4.2's own Java
API (``io.indexbridge.reference.PaimonAnswers``: kinds pk, pk-dv, dynamic, append; seeded
schemas, options and commit histories) and records what Paimon's own reader says of each: the
plan, the data files it opens, file-index verdicts and the rows, for the latest snapshot, an
older one and seeded conditions. ``INDEXBRIDGE_TABLE_SEEDS`` (e.g. ``1-8``) sets the seeds.

Also here: the line saying how deep the run went (``depth.py``), printed at its end.
"""

from __future__ import annotations

import json
import os

import depth
import pytest
import spark_cds

# Every JVM that PySpark starts for the tests (the private py4j gateway, the Spark sessions, the
# CLI's and the demo's subprocesses): the C1 compiler only, and the class-data archive of Spark's
# classes when scripts/test.sh has made it (spark_cds.py). A user's JVMs are left to their own settings.
os.environ.setdefault("PYSPARK_SUBMIT_ARGS", f"--driver-java-options '{spark_cds.driver_java_options()}' pyspark-shell")

PAIMON_TABLE_KINDS = ("pk", "pk-dv", "dynamic", "append")


def pytest_terminal_summary(terminalreporter) -> None:
    """The run's depth and seed, at the end (also under -q), to replay a failure with."""
    terminalreporter.write_line(depth.header())


def _seeds() -> list[int]:
    """``INDEXBRIDGE_TABLE_SEEDS``, else 1-4 deep and one of them by default (the day's draw)."""
    if "INDEXBRIDGE_TABLE_SEEDS" not in os.environ:
        return [1 + s for s in depth.seeds(4, 1)]
    first, _, last = os.environ["INDEXBRIDGE_TABLE_SEEDS"].partition("-")
    return list(range(int(first), int(last or first) + 1))


PAIMON_TABLES = [f"{kind.replace('-', '_')}_{seed}" for kind in PAIMON_TABLE_KINDS for seed in _seeds()]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``paimon_table`` runs a test on every suite table, ``paimon_table_sample`` on one of
    each kind."""
    if "paimon_table" in metafunc.fixturenames:
        metafunc.parametrize("paimon_table", PAIMON_TABLES)
    if "paimon_table_sample" in metafunc.fixturenames:
        sample = [n for n in PAIMON_TABLES if n.endswith(f"_{_seeds()[0]}")]
        metafunc.parametrize("paimon_table_sample", sample)


@pytest.fixture(scope="session")
def paimon_suite(tmp_path_factory) -> dict[str, dict]:
    """Table name -> {"name", "kind", "seed", "path", "latest_snapshot", "reads": [answers]}."""
    from indexbridge.jvm import run_reference

    root = tmp_path_factory.mktemp("paimon-suite")
    tables = []
    for name in PAIMON_TABLES:
        kind, _, seed = name.rpartition("_")
        tables.append({"name": name, "kind": kind.replace("_", "-"), "seed": int(seed), "conditions": 10})
    spec, out = root / "spec.json", root / "answers.json"
    spec.write_text(json.dumps({"warehouse": str(root / "warehouse"), "tables": tables}))
    run_reference("suite", str(spec), str(out))
    return {t["name"]: t for t in json.loads(out.read_text())["tables"]}
