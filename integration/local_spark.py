"""Starting a local Spark session with indexbridge configured (the integration tests' sessions)."""

from __future__ import annotations

from pyspark.sql import SparkSession

from indexbridge.spark import configure


def start_session(master: str, app: str, **conf: str) -> SparkSession:
    """A Spark session with indexbridge configured, quiet, 4 shuffle partitions, and ``conf``
    (given before ``configure``, which appends the jar and extensions to the ones in ``conf``)."""
    builder = SparkSession.builder.master(master).appName(app)
    for key, value in {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4", **conf}.items():
        builder = builder.config(key, value)
    session = configure(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
