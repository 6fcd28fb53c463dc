"""A real local Spark session with indexbridge configured, shared by the integration tests."""

from __future__ import annotations

import pytest

from local_spark import start_session


@pytest.fixture(scope="session")
def spark():
    session = start_session("local[2]", "indexbridge-tests")
    yield session
    session.stop()
