"""A real local Spark session with indexbridge configured, shared by the integration tests."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from indexbridge.spark import configure


@pytest.fixture(scope="session")
def spark():
    builder = SparkSession.builder.master("local[2]").appName("indexbridge-tests")
    session = (
        configure(builder)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
