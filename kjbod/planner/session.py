"""The one place a Spark session is made (local mode by default, or --spark-master)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
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
    try:
        if os.environ.get("KJBOD_DEBUG"):
            session = builder.getOrCreate()
        else:
            # The JVM and the Python workers it starts inherit this process's stderr, and Spark
            # writes its start-up chatter there: send theirs to a log file instead.
            with _stderr_to(spark_log_path()):
                session = builder.getOrCreate()
    except Exception as exc:  # noqa: BLE001  (py4j and pyspark raise many kinds)
        raise UserError(
            f"Spark did not start on {master} ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no message'}); "
            f"its log is {spark_log_path()}. Check the master URL and Java, or use --engine local"
        ) from None
    session.sparkContext.setLogLevel("ERROR")
    return session


def spark_log_path() -> Path:
    """Where the Spark JVM's own output goes (set KJBOD_DEBUG=1 to see it on stderr)."""
    return Path(tempfile.gettempdir()) / f"kjbod-spark-{os.getuid()}.log"


@contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.dup2(fd, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


def default_parallelism(session: SparkSession) -> int:
    return int(session.sparkContext.defaultParallelism)
