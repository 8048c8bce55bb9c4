"""A Spark standalone cluster on this machine: a master and one worker started with pyspark's own
`bin/spark-class` on 127.0.0.1, and worker Pythons that lack kjbod (kjbod ships its own code to
the executors). tests/planner/test_standalone_cluster.py and bench/bench_scale.py use it.

    with standalone_cluster(work, cores=2, memory="2g") as cluster:
        python = worker_python(work / "worker-python", WORKER_PACKAGES)
        ... --spark-master cluster.master --spark-conf spark.pyspark.python=<python> ... (env=cluster.env)
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# What the workers' Python gets: numpy, pandas, pyarrow and what they import (nothing of kjbod's).
WORKER_PACKAGES = ("numpy", "numpy.libs", "pandas", "pyarrow", "dateutil", "pytz", "tzdata", "six.py")


@dataclass(frozen=True)
class Standalone:
    master: str  # spark://127.0.0.1:PORT
    env: dict[str, str]  # the environment a kjbod process talking to it runs with
    work: Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def worker_python(root: Path, packages: tuple[str, ...] = WORKER_PACKAGES) -> Path:
    """A virtual environment of this Python without kjbod: only `packages`, linked from this
    environment's site-packages."""
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(root)], check=True)  # type: ignore[attr-defined]
    python = root / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    ours = Path(sysconfig.get_paths()["purelib"])
    for name in packages:
        if (ours / name).exists():
            (site / name).symlink_to(ours / name)
    return python


@contextmanager
def standalone_cluster(work: Path, *, cores: int = 2, memory: str = "2g", timeout: float = 120) -> Iterator[Standalone]:
    """Start a master and a worker (`cores`, `memory`), wait until the worker has registered,
    and stop both at the end. Their logs are work/master.log and work/worker.log."""
    from pyspark.find_spark_home import _find_spark_home

    work.mkdir(parents=True, exist_ok=True)
    spark_home = Path(_find_spark_home())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK_", "PYTHONPATH"))}
    env.update({"SPARK_HOME": str(spark_home), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1"})
    port = free_port()
    master_url = f"spark://127.0.0.1:{port}"
    master_log = (work / "master.log").open("wb")
    worker_log = (work / "worker.log").open("wb")
    spark_class = str(spark_home / "bin" / "spark-class")
    master = subprocess.Popen(
        [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(free_port())],
        env=env, stdout=master_log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
    )
    worker = subprocess.Popen(
        [spark_class, "org.apache.spark.deploy.worker.Worker", master_url, "--host", "127.0.0.1", "--cores", str(cores), "--memory", memory,
         "--webui-port", str(free_port()), "--work-dir", str(work / "worker")],
        env=env, stdout=worker_log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + timeout
        while b"Registering worker" not in (work / "master.log").read_bytes():
            if time.monotonic() > deadline or master.poll() is not None or worker.poll() is not None:
                raise RuntimeError("the standalone cluster did not start:\n" + (work / "master.log").read_text()[-3000:]
                                   + (work / "worker.log").read_text()[-3000:])
            time.sleep(0.5)
        yield Standalone(master_url, env, work)
    finally:
        for process in (worker, master):
            process.terminate()
        for process in (worker, master):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        master_log.close()
        worker_log.close()
