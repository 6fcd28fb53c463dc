"""A real local Spark session with indexbridge configured, shared by the integration tests.

The session also carries Iceberg's and Delta's jars and SQL extensions (the references of
test_spark_lakehouse.py; scripts/bootstrap.sh fetches them): jars and extensions can only be
given when the one SparkContext of the process starts. They change nothing for the other tests:
both extensions only act on Iceberg and Delta tables, and the catalogs (Iceberg's, and Delta's
``spark_catalog``) are set only in test_spark_lakehouse.py's own ``newSession()``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from local_spark import start_session

M2 = Path.home() / ".m2" / "repository"
LAKEHOUSE_JARS = (
    M2 / "org/apache/iceberg/iceberg-spark-runtime-4.0_2.13/1.11.0/iceberg-spark-runtime-4.0_2.13-1.11.0.jar",
    M2 / "io/delta/delta-spark_4.0_2.13/4.4.0/delta-spark_4.0_2.13-4.4.0.jar",
    M2 / "io/delta/delta-storage/4.4.0/delta-storage-4.4.0.jar",
)
LAKEHOUSE_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions,io.delta.sql.DeltaSparkSessionExtension"


@pytest.fixture(scope="session")
def spark():
    missing = [str(j) for j in LAKEHOUSE_JARS if not j.is_file()]
    if missing:
        pytest.fail(f"Iceberg's / Delta's jars are missing (run scripts/bootstrap.sh): {missing}", pytrace=False)
    jars = [str(j) for j in LAKEHOUSE_JARS]
    session = start_session("local[2]", "indexbridge-tests", **{
        "spark.jars": ",".join(jars), "spark.driver.extraClassPath": ":".join(jars), "spark.sql.extensions": LAKEHOUSE_EXTENSIONS})
    yield session
    session.stop()
