"""Spark integration: `configure` a session builder, then use `indexbridge.spark.functions`."""

from indexbridge.spark.session import configure

__all__ = ["configure"]
