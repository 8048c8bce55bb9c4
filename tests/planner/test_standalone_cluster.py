"""The planner on a real Spark standalone cluster: a master and a worker started with pyspark's own
`bin/spark-class` on 127.0.0.1, whose Python has numpy, pandas and pyarrow but not kjbod. kjbod
ships its own code to the executors, and the plan equals the local engine's. A worker Python
without pandas makes the job fail in one line that says what to do.

Each `kjbod reassign plan` runs in a process of its own (one Spark context per process, and the
other tests share a local one)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.synthetic import load_bench, load_synthetic

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    pytest.importorskip("pyspark")
    from kjbod.planner.session import java_available

    if not java_available():
        pytest.skip("no Java runtime for Spark")
    spark = load_bench("spark_standalone")
    work = tmp_path_factory.mktemp("standalone")
    try:
        with spark.standalone_cluster(work, cores=2, memory="2g") as cluster:
            with_packages = spark.worker_python(work / "worker-python", spark.WORKER_PACKAGES)
            without_pandas = spark.worker_python(work / "bare-python", ("numpy", "numpy.libs", "pyarrow"))
            yield {"master": cluster.master, "python": with_packages, "bare": without_pandas, "env": cluster.env, "work": work}
    except RuntimeError as exc:
        raise AssertionError(str(exc)) from None


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic cluster (12 brokers x 3 directories, 600 partitions) in a cluster state."""
    synthetic = load_synthetic()
    work = tmp_path_factory.mktemp("cluster")
    cluster = synthetic.generate(synthetic.SyntheticSpec(brokers=12, dirs_per_broker=3, partitions=600, racks=3, seed=5))
    paths = synthetic.write_files(cluster, work / "in")
    state = work / "state"
    imported = kjbod(state, "import", "cluster", "--brokers", str(paths["brokers"]), "--assignment", str(paths["assignment"]),
                     "--log-dirs", *map(str, paths["log_dirs"]))
    assert imported.returncode == 0, imported.stderr
    return state


def kjbod(state: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kjbod", "--state", str(state), *args], capture_output=True, text=True, env=env, timeout=600)


def test_the_worker_pythons_lack_kjbod(standalone: dict[str, object]) -> None:
    for python in (standalone["python"], standalone["bare"]):
        # Away from the checkout: `python -c` would find kjbod/ in the working directory.
        found = subprocess.run([str(python), "-c", "import kjbod"], capture_output=True, text=True, cwd=str(standalone["work"]))
        assert found.returncode != 0 and "No module named 'kjbod'" in found.stderr
    imports = subprocess.run([str(standalone["python"]), "-c", "import numpy, pandas, pyarrow"], capture_output=True, text=True)
    assert imports.returncode == 0, imports.stderr


def test_a_plan_on_a_standalone_cluster_equals_the_local_engines(standalone: dict[str, object], state: Path, tmp_path: Path) -> None:
    local, spark = tmp_path / "local.json", tmp_path / "spark.json"
    ran = kjbod(state, "reassign", "plan", "--goal", "balance", "--engine", "local", "--output-file", str(local))
    assert ran.returncode == 0, ran.stderr
    env = dict(standalone["env"])  # type: ignore[arg-type]
    started = time.monotonic()
    ran = kjbod(
        state, "-o", "json", "reassign", "plan", "--goal", "balance", "--spark-master", str(standalone["master"]),
        "--spark-conf", f"spark.pyspark.python={standalone['python']}", "--spark-conf", "spark.executor.memory=1g",
        "--spark-conf", "spark.driver.host=127.0.0.1", "--output-file", str(spark), env=env,
    )
    seconds = time.monotonic() - started
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert report["engine"] == f"spark ({standalone['master']})"
    assert report["engineReason"] == f"auto: a Spark master was given ({standalone['master']})"
    assert report["partitionsChanged"] > 0
    assert spark.read_bytes() == local.read_bytes()
    print(f"\nbalance on the standalone cluster: {seconds:.1f} s end to end")


def test_workers_without_pandas_fail_in_one_line_that_says_what_to_do(standalone: dict[str, object], state: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.json"
    ran = kjbod(
        state, "reassign", "plan", "--goal", "balance", "--spark-master", str(standalone["master"]),
        "--spark-conf", f"spark.pyspark.python={standalone['bare']}", "--spark-conf", "spark.executor.memory=1g",
        "--spark-conf", "spark.driver.host=127.0.0.1", "--spark-conf", "spark.task.maxFailures=1",  # no retries of a task that cannot succeed
        "--output-file", str(plan_file), env=dict(standalone["env"]),  # type: ignore[arg-type]
    )
    assert (ran.returncode, ran.stdout) == (1, "")
    assert ran.stderr.count("\n") == 1 and "Traceback" not in ran.stderr
    assert ran.stderr.startswith("The Spark executors cannot run the planner (ModuleNotFoundError: No module named 'pandas'): ")
    assert "point --spark-conf spark.pyspark.python=PATH at such a Python on the workers, or use --engine local" in ran.stderr
    assert not plan_file.exists()


def test_local_spark_with_a_worker_python_that_lacks_kjbod_gets_kjbods_code(standalone: dict[str, object], state: Path, tmp_path: Path) -> None:
    # In local mode too, a spark.pyspark.python other than kjbod's own gets kjbod's code with the job.
    local, spark = tmp_path / "local.json", tmp_path / "spark.json"
    ran = kjbod(state, "reassign", "plan", "--goal", "balance", "--engine", "local", "--output-file", str(local))
    assert ran.returncode == 0, ran.stderr
    # Away from the checkout, whose kjbod/ the workers would find in their working directory.
    ran = subprocess.run(
        [sys.executable, "-m", "kjbod", "--state", str(state), "reassign", "plan", "--goal", "balance", "--engine", "spark",
         "--spark-master", "local[2]", "--spark-conf", f"spark.pyspark.python={standalone['python']}", "--output-file", str(spark)],
        capture_output=True, text=True, env=dict(standalone["env"]), cwd=str(tmp_path), timeout=600,  # type: ignore[arg-type]
    )
    assert ran.returncode == 0, ran.stderr
    assert spark.read_bytes() == local.read_bytes()
