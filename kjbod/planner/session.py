"""The one place a Spark session is made (local mode by default, or --spark-master).

`SparkStarter` starts the session in a background thread, so that the JVM comes up while the
cluster state loads, and warms the Python workers (imports kjbod's kernels, pandas, pyarrow)
before the first real job. With a master that is not local, kjbod ships its own code to the
executors as a zip added to the session: they need only Python with numpy, pandas and pyarrow.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from kjbod.errors import UserError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Settings kjbod chooses; --spark-conf overrides any of them.
DEFAULT_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.python.worker.reuse": "true",
    # The driver JVM does little computing of its own: start fast rather than run fast.
    "spark.driver.extraJavaOptions": "-XX:+UseParallelGC -XX:TieredStopAtLevel=1",
}


def java_available() -> bool:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.path.exists(os.path.join(java_home, "bin", "java")):
        return True
    return shutil.which("java") is not None


def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[") or master.startswith("local-cluster[")


def parse_spark_conf(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    """`--spark-conf KEY=VALUE` items as a dict (later ones win)."""
    conf: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UserError(f'Invalid --spark-conf "{item}": give KEY=VALUE, e.g. --spark-conf spark.executor.memory=4g')
        if not key.startswith("spark."):
            raise UserError(f'Invalid --spark-conf "{item}": Spark settings start with "spark.", e.g. spark.executor.memory=4g')
        conf[key] = value
    return conf


def master_addresses(master: str) -> list[tuple[str, int]]:
    """The host:port pairs of a standalone master URL (spark://h1:7077,h2:7077 names several
    masters, for high availability); none for other masters (local, yarn, k8s)."""
    if not master.startswith("spark://"):
        return []
    addresses = []
    for part in master[len("spark://"):].split(","):
        host, sep, port = part.strip().rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise UserError(f"Invalid --spark-master {master}: give spark://HOST:PORT, e.g. spark://10.0.0.5:7077")
        addresses.append((host.strip("[]"), int(port)))
    return addresses


def check_master_reachable(master: str, timeout: float = 5.0) -> None:
    """Raises UserError when no master of a spark:// URL accepts a connection: Spark itself
    retries for a minute and then fails with an internal error that does not say so."""
    addresses = master_addresses(master)
    failures = []
    for host, port in addresses:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as exc:
            failures.append(exc.strerror or type(exc).__name__)
    if addresses:
        raise UserError(
            f"Cannot reach the Spark master {master} ({failures[-1]}): check the URL and that the master is running "
            "(its port is 7077 unless set otherwise), or use --engine local"
        )


def spark_log_path() -> Path:
    """Where the Spark JVM's own output goes (set KJBOD_DEBUG=1 to see it on stderr)."""
    return Path(tempfile.gettempdir()) / f"kjbod-spark-{os.getuid()}.log"


def spark_session(master: str = "local[*]", *, app_name: str = "kjbod-planner", conf: Mapping[str, str] | None = None) -> SparkSession:
    """A Spark session for the planner. Raises UserError when pyspark or Java is missing, or
    when Spark does not start (the message names the cause and Spark's log)."""
    check_master_reachable(master)
    if not java_available():
        raise UserError("The Spark engine needs a Java runtime (17 or later) and none was found: install one, or use --engine local")
    try:
        from pyspark import SparkConf, SparkContext
        from pyspark.java_gateway import launch_gateway
        from pyspark.sql import SparkSession
    except ImportError:
        raise UserError("The Spark engine needs pyspark: pip install 'pyspark[sql]', or use --engine local") from None
    settings = dict(DEFAULT_CONF)
    settings["spark.driver.memory"] = os.environ.get("KJBOD_SPARK_DRIVER_MEMORY", "3g")
    settings.update(conf or {})
    local = is_local(master)
    # The workers' Python: in local mode this interpreter (it has pandas and pyarrow); on a
    # cluster, what the operator says (spark.pyspark.python or PYSPARK_PYTHON), else Spark's
    # default, python3 on the workers' PATH: this machine's interpreter path means nothing there.
    python = settings.get("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON") or (sys.executable if local else "python3")
    settings["spark.pyspark.python"] = python
    settings.setdefault("spark.pyspark.driver.python", sys.executable)
    if SparkContext._active_spark_context is not None:  # one per process: tests share theirs
        return SparkSession.builder.getOrCreate()
    spark_conf = SparkConf().setMaster(master).setAppName(app_name).setAll(list(settings.items()))
    saved = os.environ.get("PYSPARK_PYTHON")
    os.environ["PYSPARK_PYTHON"] = python  # SparkContext reads the workers' Python from here
    try:
        if os.environ.get("KJBOD_DEBUG"):
            context = SparkContext(conf=spark_conf)
        else:
            # The JVM and the Python workers it starts write their chatter to a log file, not
            # to this process's stderr (which carries kjbod's own messages).
            with open(spark_log_path(), "wb") as log:
                gateway = launch_gateway(spark_conf, popen_kwargs={"stdout": log, "stderr": log})
            context = SparkContext(conf=spark_conf, gateway=gateway)
    except Exception as exc:  # noqa: BLE001  (py4j and pyspark raise many kinds)
        log = _log_text()
        if "All masters are unresponsive" in log:  # something listens there, but not a Spark master
            raise UserError(
                f"The Spark master {master} did not answer (Spark gave up after its retries); its log is {spark_log_path()}. "
                "Check the URL and that a Spark master of the same version runs there, or use --engine local"
            ) from None
        raise did_not_start(master, _cause_in_log(log) or spark_error_summary(exc)) from None
    finally:
        if saved is None:
            os.environ.pop("PYSPARK_PYTHON", None)
        else:
            os.environ["PYSPARK_PYTHON"] = saved
    context.setLogLevel("ERROR")
    if not local or os.path.abspath(python) != os.path.abspath(sys.executable):  # not realpath: venvs link one binary
        # Workers that run another Python than this one (a cluster's, or one named by
        # spark.pyspark.python) may lack kjbod: they get its code with the job.
        context.addPyFile(str(code_archive()))
    return SparkSession(context)


def did_not_start(master: str, cause: str) -> UserError:
    """The one line for a session that did not start, whichever thread saw it fail."""
    return UserError(
        f"Spark did not start on {master} ({cause}); its log is {spark_log_path()}. "
        "Check the master URL, the --spark-conf settings and Java, or use --engine local"
    )


def spark_error_summary(exc: BaseException) -> str:
    """One line for an error Spark raised: the innermost Python or Java exception line, without
    the traceback and the Py4J framing around it."""
    text = str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # A Python error on an executor: its traceback ends with "ExceptionType: message".
    for line in reversed(lines):
        if line.startswith(("File ", "at ", "Traceback", "...", "^")) or line.startswith("Caused by: org.apache.spark.api.python"):
            continue
        head = line.split(":", 1)[0]
        if head.endswith(("Error", "Exception")) and " " not in head and not head.startswith(("py4j", "org.apache.spark.SparkException")):
            return _shorten(line)
    for line in lines:  # a Java error: "java.lang.X: message" somewhere in the Py4J text
        if line.startswith(("java.", "org.", "scala.", ": java.", ": org.")) and ":" in line.lstrip(": "):
            return _shorten(line.lstrip(": "))
    return _shorten(f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__)


# Lines a failing JVM prints after the cause, which say nothing about it.
_GENERIC = ("Error: Could not create the Java Virtual Machine", "Error: A fatal exception has occurred", "at ", "WARN ", "Using Spark's")


def _log_text() -> str:
    try:
        return spark_log_path().read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _cause_in_log(text: str) -> str | None:
    """The first line of Spark's log that names an error (a JVM that did not start says why
    there, and only there)."""
    for line in (line.strip() for line in text.splitlines()):
        if line and not line.startswith(_GENERIC) and any(word in line for word in ("Error", "Exception", "Invalid", "error:")):
            return _shorten(line)
    return None


def _shorten(line: str, most: int = 300) -> str:
    return line if len(line) <= most else line[: most - 3] + "..."


_ARCHIVE_LOCK = threading.Lock()
_archive: Path | None = None


def code_archive() -> Path:
    """kjbod's own Python code as a zip for the executors (made once per process)."""
    global _archive
    with _ARCHIVE_LOCK:
        if _archive is None or not _archive.exists():
            import kjbod

            package = Path(kjbod.__file__).resolve().parent
            directory = Path(tempfile.mkdtemp(prefix="kjbod-code-"))
            target = directory / "kjbod.zip"
            with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
                for path in sorted(package.rglob("*.py")):
                    archive.write(path, Path("kjbod") / path.relative_to(package))
            _archive = target
        return _archive


def default_parallelism(session: SparkSession) -> int:
    return int(session.sparkContext.defaultParallelism)


class SparkStarter:
    """Starts a Spark session (and warms its Python workers) in a background thread.

    `result()` waits for it and returns the session, or raises the UserError that stopped it.
    `discard()` stops the session once it is up, when the planner ends up not needing it."""

    def __init__(self, master: str, conf: Mapping[str, str] | None = None, *, warm: Callable[[SparkSession], None] | None = None) -> None:
        self.master = master
        self._conf = dict(conf or {})
        self._warm = warm
        self._session: SparkSession | None = None
        self._error: BaseException | None = None
        self._discarded = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._start, name="kjbod-spark-start", daemon=True)
        self._thread.start()

    def _start(self) -> None:
        try:
            session = spark_session(self.master, conf=self._conf)
            with self._lock:
                self._session = session
                discarded = self._discarded
            if discarded:
                session.stop()
            elif self._warm is not None:
                self._warm(session)
        except BaseException as exc:  # noqa: BLE001  (handed to the thread that waits)
            self._error = exc

    def raise_if_failed(self) -> None:
        """Raise now if the session has already failed to start (a bad --spark-conf fails in
        a second or two: no need to plan until the first job to say so)."""
        if not self._thread.is_alive() and self._error is not None:
            self.result()

    def result(self) -> SparkSession:
        self._thread.join()
        if self._error is not None:
            if isinstance(self._error, UserError):
                raise self._error
            raise did_not_start(self.master, spark_error_summary(self._error)) from None
        assert self._session is not None
        return self._session

    def discard(self) -> None:
        """The session is not needed (the local engine was chosen): stop it now if it is up,
        else as soon as it is, without waiting for it."""
        with self._lock:
            self._discarded = True
            session = self._session
        if session is not None:
            try:
                session.stop()  # a warm-up job still running ends with it
            except Exception:  # noqa: BLE001  (nothing to do about a session that will not stop)
                pass
