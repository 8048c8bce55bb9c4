"""The one place a Spark session is made (local mode by default, or --spark-master)."""

from __future__ import annotations

import os
import shutil
import sys
from typing import TYPE_CHECKING

from kjbod.errors import UserError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def java_available() -> bool:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.path.exists(os.path.join(java_home, "bin", "java")):
        return True
    return shutil.which("java") is not None


def spark_session(master: str = "local[*]", *, app_name: str = "kjbod-planner") -> SparkSession:
    """A Spark session for the planner. Raises UserError when pyspark or Java is missing."""
    if not java_available():
        raise UserError("The Spark engine needs a Java runtime (17 or later) and none was found: install one, or use --engine local")
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise UserError("The Spark engine needs pyspark: pip install 'pyspark[sql]', or use --engine local") from None
    # The workers must run this interpreter (it has pandas and pyarrow), not whatever python3 is first on PATH.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "1000000")
        .config("spark.sql.files.maxPartitionBytes", str(1 << 30))
        .config("spark.driver.memory", os.environ.get("KJBOD_SPARK_DRIVER_MEMORY", "3g"))
        .config("spark.driver.extraJavaOptions", "-XX:+UseParallelGC -XX:TieredStopAtLevel=1")
    )
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def default_parallelism(session: SparkSession) -> int:
    return int(session.sparkContext.defaultParallelism)
