"""One local Spark session for every Spark test (starting one takes seconds)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    pytest.importorskip("pyspark")
    from kjbod.planner.session import java_available, spark_session

    if not java_available():
        pytest.skip("no Java runtime for Spark")
    session = spark_session("local[2]", app_name="kjbod-tests")
    yield session
    session.stop()
