"""`kjbod reassign plan`: the placement planner's plan, written as Kafka's reassignment JSON, and
with wave limits also as ordered waves beside it (`plan.wave-001.json`, ...), each a
reassignment file of its own."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from kjbod.common.callbacks import Progress, ignore
from kjbod.common.durable import atomic_write_all
from kjbod.errors import UserError
from kjbod.image import Image
from kjbod.planner import PlannerRun, PlanRequest, WaveLimits, early_engine, run_planner, start_spark

if TYPE_CHECKING:
    from kjbod.planner.session import SparkStarter


def wave_path(output_file: Path, number: int, count: int) -> Path:
    """`plan.json` -> `plan.wave-001.json` (`F.wave-NNN.json` for a name without .json), numbered
    with as many digits as the last wave needs (three at least), so that names sort in order."""
    stem = output_file.name.removesuffix(".json")
    return output_file.with_name(f"{stem}.wave-{number:0{max(3, len(str(count)))}d}.json")


def existing_waves(output_file: Path) -> list[Path]:
    """Wave files of an earlier plan written to `output_file` (named as wave_path names them)."""
    import re

    stem = re.escape(output_file.name.removesuffix(".json"))
    pattern = re.compile(rf"{stem}\.wave-\d{{3,}}\.json")
    parent = output_file.parent if str(output_file.parent) else Path(".")
    try:
        return sorted(p for p in parent.iterdir() if pattern.fullmatch(p.name))
    except OSError:
        return []


def check_output_file(path: Path, overwrite: bool, *, waves: bool = False) -> None:
    """Fail before planning, not after, when the plan could not be written."""
    if path.exists() and not overwrite:
        raise UserError(f"{path} already exists; choose another --output-file or pass --overwrite to replace it")
    if waves and not overwrite:
        earlier = existing_waves(path)
        if earlier:
            raise UserError(
                f"{earlier[0]} already exists (waves of an earlier plan); choose another --output-file or pass --overwrite to replace them"
            )
    if path.is_dir():
        raise UserError(f"--output-file {path} is a directory; give a file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"The directory of --output-file {path} does not exist; create it first")
    if not os.access(parent, os.W_OK):
        raise UserError(f"Cannot write --output-file {path}: its directory is not writable")


def reassignment_json(run: PlannerRun) -> bytes:
    """The plan as Kafka's reassignment JSON, one line: what --output-file holds."""
    return orjson.dumps(run.report.reassignment) + b"\n"


def spark_before_loading(
    engine: str, spark_master: str | None, spark_conf: Mapping[str, str] | None, *, state_bytes: int | None
) -> SparkStarter | None:
    """A Spark session starting in the background when the planner will most likely run on
    Spark (asked for, a master given, or `auto` expecting a large cluster from the state's size
    on disk); None otherwise. Call it before loading the state: the JVM starts meanwhile."""
    if early_engine(engine, spark_master=spark_master, state_bytes=state_bytes) != "spark":
        return None
    return start_spark(spark_master, spark_conf)


def plan_reassignment(
    image: Image,
    request: PlanRequest,
    output_file: Path | None,
    *,
    engine: str = "auto",
    spark_master: str | None = None,
    spark_conf: Mapping[str, str] | None = None,
    spark: SparkStarter | None = None,
    waves: WaveLimits | None = None,
    progress: Progress = ignore,
) -> PlannerRun:
    """Plan against the image and write the reassignment JSON to `output_file` (atomically: the
    file is complete or absent; None writes no file: the caller prints it), and with `waves`
    each wave to its own file beside it (all of them or none; waves of an earlier plan under the
    same name are replaced). Nothing in the state changes. `spark`: a session already starting
    (spark_before_loading), used if the Spark engine runs."""
    run = run_planner(
        image, request, engine=engine, spark_master=spark_master, spark_conf=spark_conf, spark=spark, waves=waves, progress=progress
    )
    if output_file is None:
        return run
    files = {output_file: reassignment_json(run)}
    if run.report.waves is not None:
        count = len(run.report.waves)
        paths = [wave_path(output_file, number, count) for number in range(1, count + 1)]
        files.update({path: orjson.dumps(wave) + b"\n" for path, wave in zip(paths, run.report.waves)})
        run.report.data["waves"]["files"] = [str(path) for path in paths]
    stale = [p for p in existing_waves(output_file) if p not in files] if waves is not None else []  # earlier waves beyond the new ones
    try:
        atomic_write_all(files, temp_suffix=".kjbod-tmp", remove=stale)
    except OSError as exc:
        raise UserError(f"Cannot write --output-file {output_file}{' and its waves' if len(files) > 1 else ''}: {exc.strerror or exc}") from None
    run.output_file = output_file
    return run
