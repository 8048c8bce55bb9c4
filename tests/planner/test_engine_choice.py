"""Which engine `--engine auto` picks and why; --spark-conf parsing; Spark's errors in one line."""

from __future__ import annotations

import importlib
import re

import pytest

from kjbod.errors import UserError
from kjbod.planner.engine import choose_engine
from kjbod.planner.session import parse_spark_conf, spark_error_summary


def test_auto_keeps_small_clusters_in_this_process_whatever_the_cores() -> None:
    choice = choose_engine("auto", replicas=30_000, spark_master=None, cores=64)
    assert (choice.engine, choice.reason) == ("local", "auto: 30,000 replicas, too few for Spark to pay off")


def test_auto_uses_spark_for_a_large_cluster_on_many_cores_and_says_why() -> None:
    choice = choose_engine("auto", replicas=30_000_000, spark_master=None, cores=32)
    assert choice.engine == "spark"
    assert choice.reason.startswith("auto: 32 cores and 30,000,000 replicas: Spark saves about ")


def test_auto_stays_local_on_one_core() -> None:
    choice = choose_engine("auto", replicas=30_000_000, spark_master=None, cores=1)
    assert (choice.engine, choice.reason) == ("local", "auto: one core, so Spark cannot run the kernels in parallel")


def saving(reason: str) -> float:
    found = re.search(r"save(?:s)? about (\d+) s", reason)
    assert found, reason
    return float(found.group(1))


def test_auto_weighs_what_spark_saves_against_what_it_costs() -> None:
    # On this cluster two cores save less than Spark costs; more cores save more.
    few = choose_engine("auto", replicas=3_000_000, spark_master=None, cores=2)
    many = choose_engine("auto", replicas=3_000_000, spark_master=None, cores=64)
    assert few.engine == "local"
    assert re.fullmatch(r"auto: on 2 cores Spark would save about \d+ s of the kernels' \d+ s but cost about \d+ s", few.reason)
    assert saving(many.reason) > saving(few.reason)


def test_a_spark_master_or_an_explicit_engine_decides() -> None:
    assert choose_engine("auto", replicas=10, spark_master="spark://10.0.0.1:7077", cores=2).reason == "auto: a Spark master was given (spark://10.0.0.1:7077)"
    assert choose_engine("spark", replicas=10, spark_master=None, cores=2).engine == "spark"
    assert choose_engine("local", replicas=10**9, spark_master=None, cores=64).engine == "local"


def test_spark_conf_items() -> None:
    assert parse_spark_conf(["spark.executor.memory=4g", "spark.a=x=y", "spark.executor.memory=8g"]) == {
        "spark.executor.memory": "8g",
        "spark.a": "x=y",
    }
    with pytest.raises(UserError, match='give KEY=VALUE'):
        parse_spark_conf(["spark.executor.memory"])


class FakePy4JError(Exception):
    pass


def test_a_python_error_on_an_executor_is_its_last_line() -> None:
    text = (
        "An error occurred while calling o123.collectToPython.\n"
        ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 1.0 failed 1 times, most recent failure: "
        "Lost task 0.0 in stage 1.0 (TID 1) (192.0.2.2 executor driver): org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/pyspark/worker.py", line 1, in main\n'
        "    func, profiler, deserializer, serializer = read_udfs(pickleSer, infile, eval_type)\n"
        '  File "<string>", line 2, in kernel\n'
        "ModuleNotFoundError: No module named 'kjbod'\n"
        "\n"
        "\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(PythonRunner.scala:581)\n"
        "\tat org.apache.spark.sql.execution.python.PythonArrowOutput$$anon$1.read(PythonArrowOutput.scala:118)\n"
    )
    assert spark_error_summary(FakePy4JError(text)) == "ModuleNotFoundError: No module named 'kjbod'"


def test_a_java_error_is_its_exception_line() -> None:
    text = (
        "An error occurred while calling None.org.apache.spark.api.java.JavaSparkContext.\n"
        ": java.lang.IllegalArgumentException: Executor memory 1048576 must be at least 471859200.\n"
        "\tat org.apache.spark.memory.UnifiedMemoryManager$.getMaxMemory(UnifiedMemoryManager.scala:249)\n"
    )
    assert spark_error_summary(FakePy4JError(text)) == (
        "java.lang.IllegalArgumentException: Executor memory 1048576 must be at least 471859200."
    )


def test_workers_whose_python_does_not_start_or_lacks_kjbod_get_one_line_that_says_what_to_do() -> None:
    from kjbod.planner.engine import spark_job_error
    from kjbod.planner.session import spark_log_path

    # What Spark 4 raised for --spark-conf spark.pyspark.python=/nonexistent/python (local[*]).
    no_python = (
        "An error occurred while calling z:org.apache.spark.api.python.PythonRDD.collectAndServe.\n"
        ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 1 in stage 0.0 failed 1 times, most recent failure: "
        'Lost task 1.0 in stage 0.0 (TID 1) (192.0.2.2 executor driver): java.io.IOException: Cannot run program "/nonexistent/python": '
        "error=2, No such file or directory\n"
        "\tat java.base/java.lang.ProcessBuilder.start(ProcessBuilder.java:1143)\n"
        "Caused by: java.io.IOException: error=2, No such file or directory\n"
    )
    assert str(spark_job_error(FakePy4JError(no_python))) == (
        "The Spark executors cannot start their Python /nonexistent/python (No such file or directory): point --spark-conf "
        "spark.pyspark.python=PATH at a Python with numpy, pandas and pyarrow on the workers, or use --engine local. "
        f"Spark's log: {spark_log_path()}"
    )
    no_kjbod = "Lost task 0.0: org.apache.spark.api.python.PythonException: Traceback (most recent call last):\nModuleNotFoundError: No module named 'kjbod'\n"
    message = str(spark_job_error(FakePy4JError(no_kjbod)))
    assert message.startswith("The Spark executors cannot import kjbod (ModuleNotFoundError: No module named 'kjbod'), ")
    assert message.endswith("or use --engine local") and "\n" not in message


def test_before_loading_the_state_its_size_on_disk_tells_whether_to_start_spark() -> None:
    from kjbod.planner import early_engine
    from kjbod.planner.run import STATE_BYTES_PER_REPLICA

    assert early_engine("auto", spark_master=None, state_bytes=1_000_000) == "local"  # a small state: Spark will not pay
    assert early_engine("auto", spark_master="spark://10.0.0.1:7077", state_bytes=0) == "spark"
    assert early_engine("spark", spark_master=None, state_bytes=0) == "spark"
    assert early_engine("local", spark_master=None, state_bytes=10**12) == "local"
    # A state the size of 30M replicas: on many cores the guess is the same as the choice after loading.
    huge = 30_000_000 * STATE_BYTES_PER_REPLICA
    assert early_engine("auto", spark_master=None, state_bytes=huge) == choose_engine("auto", replicas=30_000_000, spark_master=None).engine


def test_the_planners_lazy_names_are_its_public_names_and_all_load() -> None:
    import kjbod.planner as planner

    assert planner.__all__ == sorted(planner._EXPORTS)
    for name in planner.__all__:
        assert getattr(planner, name) is getattr(importlib.import_module(planner._EXPORTS[name]), name)


class _Starter:
    """Stands in for a SparkStarter: records whether the session was thrown away."""

    discarded = False

    def discard(self) -> None:
        self.discarded = True

    def raise_if_failed(self) -> None:
        pass


def test_the_planner_engine_owns_a_session_it_started_and_discards_it_unless_used(monkeypatch: pytest.MonkeyPatch) -> None:
    from kjbod.planner import Engine, EngineOptions, PlannerEngine, run

    started: list[_Starter] = []

    def start(self: PlannerEngine) -> _Starter:
        if self._spark is None:
            started.append(_Starter())
            self._spark = started[-1]
        return self._spark

    monkeypatch.setattr(run.PlannerEngine, "_start", start)
    # A large state on disk: auto starts Spark before loading it; a small cluster then runs locally.
    with PlannerEngine(EngineOptions(Engine.AUTO, spark_master="spark://h:7077")) as engine:
        engine.warm_up(state_bytes=10)
        assert len(started) == 1 and not started[0].discarded
        runner, label, _ = engine.open(replicas=10)
        runner.close()
        assert label == "spark (spark://h:7077)"  # a master was given: Spark, the session used
    assert not started[0].discarded
    with PlannerEngine(EngineOptions(Engine.LOCAL)) as engine:
        engine.warm_up(state_bytes=10**12)
        assert len(started) == 1  # never for the local engine
    with PlannerEngine(EngineOptions(Engine.SPARK)) as engine:
        engine.warm_up(state_bytes=0)
    assert started[1].discarded  # started, then the run ended before planning (the state did not load)


def test_engine_options_refuse_spark_settings_for_the_local_engine() -> None:
    from kjbod.planner import Engine, EngineOptions

    with pytest.raises(UserError, match="--spark-master runs the Spark engine"):
        EngineOptions.parse(Engine.LOCAL, "local[2]", [])
    with pytest.raises(UserError, match="--spark-conf is for the Spark engine"):
        EngineOptions.parse(Engine.LOCAL, None, ["not a setting"])  # refused before it is read
    assert EngineOptions.parse(Engine.AUTO, None, ["spark.executor.memory=4g"]).spark_conf == {"spark.executor.memory": "4g"}
