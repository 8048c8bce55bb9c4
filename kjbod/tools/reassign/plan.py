"""`kjbod reassign plan`: the placement planner's plan, written as Kafka's reassignment JSON, and
with wave limits also as ordered waves beside it (`plan.wave-001.json`, ...), each a
reassignment file of its own.

The command's options become one `ReassignPlanRequest` (which options go together is checked
there); `plan_reassignment` runs it, owning the planner engine's life (a Spark session started
while the state loads, used or discarded), and returns a `ReassignPlanResult`: the report with
its JSON and its text lines.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from kjbod.common.callbacks import Progress, ignore
from kjbod.common.durable import atomic_write_all
from kjbod.common.units import human_bytes, parse_bytes
from kjbod.errors import UserError
from kjbod.image import Image
from kjbod.planner import Engine, EngineOptions, Goal, PlannerEngine, PlanReport, PlanRequest, RackMode, Refine, WaveLimits, run_planner
from kjbod.planner.report import Waves

STDOUT = Path("-")


@dataclass(frozen=True)
class ReassignPlanRequest:
    """What `reassign plan` is asked: the planner's request, where the plan goes (STDOUT: printed),
    where the planner runs, and the wave limits (None: no waves)."""

    plan: PlanRequest
    output_file: Path
    overwrite: bool = False
    engine: EngineOptions = field(default_factory=EngineOptions)
    waves: WaveLimits | None = None
    # Where `--explain` writes why each replica moves (JSON lines); None: not asked.
    explain_file: Path | None = None

    def __post_init__(self) -> None:
        if self.to_stdout and self.waves is not None:
            raise UserError("Waves are written to files beside --output-file (F.wave-001.json, ...): give a file name, not -")
        if self.explain_file is not None:
            if self.explain_file == STDOUT:
                raise UserError("--explain writes JSON lines to a file: give a file name, not -")
            if self.explain_file == self.output_file:
                raise UserError(f"--explain {self.explain_file} is also --output-file: give it another file name")

    @property
    def to_stdout(self) -> bool:
        return self.output_file == STDOUT

    @classmethod
    def parse(
        cls,
        *,
        goal: Goal,
        broker_list: str | None = None,
        dirs: Sequence[str] = (),
        rack_mode: RackMode = RackMode.STRICT,
        max_moves: int | None = None,
        max_bytes: str | None = None,
        exclude_topics: str | None = None,
        exclude_brokers: str | None = None,
        capacity_threshold: float = 0.8,
        seed: int = 0,
        refine: Refine = Refine.AUTO,
        engine: Engine = Engine.AUTO,
        spark_master: str | None = None,
        spark_conf: Sequence[str] = (),
        max_concurrent_moves_per_broker: int | None = None,
        wave_size: int | None = None,
        output_file: Path = STDOUT,
        overwrite: bool = False,
        explain_file: Path | None = None,
    ) -> ReassignPlanRequest:
        """The request from the command line's values, each read and checked in turn (the first
        problem is the one reported): options given to a goal they do not apply to, or missing
        where the goal needs them, are refused."""
        brokers = _broker_list(broker_list, "--broker-list")
        if goal in (Goal.ADD_BROKERS, Goal.REMOVE_BROKERS) and not brokers:
            raise UserError(f"--goal {goal.value} needs --broker-list, e.g. --broker-list 7,8")
        if brokers and goal not in (Goal.ADD_BROKERS, Goal.REMOVE_BROKERS):
            raise UserError(f"--broker-list is for --goal add-brokers or remove-brokers, not {goal.value}")
        dir_specs = tuple(_dir_spec(text) for text in dirs)
        if goal is Goal.DRAIN_DIRS and not dir_specs:
            raise UserError("--goal drain-dirs needs at least one --dir BROKER:PATH, e.g. --dir 3:/data/02/kafka-logs")
        if dir_specs and goal is not Goal.DRAIN_DIRS:
            raise UserError(f"--dir is for --goal drain-dirs, not {goal.value}")
        if not 0 < capacity_threshold <= 1:
            raise UserError(f"Invalid --capacity-threshold {capacity_threshold}: give a share of capacity above 0 and at most 1, e.g. 0.8")
        engine_options = EngineOptions.parse(engine, spark_master, spark_conf)
        request = PlanRequest(
            goal=goal,
            brokers=brokers,
            dirs=dir_specs,
            rack_mode=rack_mode,
            max_moves=max_moves,
            max_bytes=parse_bytes(max_bytes, "--max-bytes") if max_bytes is not None else None,
            exclude_topics=exclude_topics,
            exclude_brokers=_broker_list(exclude_brokers, "--exclude-brokers"),
            capacity_threshold=capacity_threshold,
            seed=seed,
            refine=refine,
        )
        waves = None
        if max_concurrent_moves_per_broker is not None or wave_size is not None:
            waves = WaveLimits(per_broker=max_concurrent_moves_per_broker, size=wave_size)
        return cls(request, output_file, overwrite, engine_options, waves, explain_file)


def _broker_list(text: str | None, option: str) -> tuple[int, ...]:
    if text is None:
        return ()
    try:
        ids = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise UserError(f'Invalid {option} "{text}": give broker ids separated by commas, e.g. 7,8') from None
    if not ids:
        raise UserError(f'Invalid {option} "{text}": give broker ids separated by commas, e.g. 7,8')
    return ids


def _dir_spec(text: str) -> tuple[int, str]:
    broker, sep, path = text.partition(":")
    if not sep or not path or not broker.strip().isdigit():
        raise UserError(f'Invalid --dir "{text}": give BROKER:PATH (or BROKER:DIRECTORY_ID), e.g. 3:/data/02/kafka-logs')
    return int(broker), path


# Running it -------------------------------------------------------------------------------------


def plan_reassignment(
    request: ReassignPlanRequest,
    read_image: Callable[[], Image],
    *,
    state_bytes: int | None = None,
    planning: Callable[[], AbstractContextManager[Progress]] = lambda: nullcontext(ignore),
) -> ReassignPlanResult:
    """Plan against the image `read_image` loads and write the reassignment JSON to the output
    file (atomically: the file is complete or absent; STDOUT writes no file: the caller prints
    it), and with waves each wave to its own file beside it (all of them or none; waves of an
    earlier plan under the same name are replaced). Nothing in the state changes.

    An output that could not be written fails first, before the work. When the planner will most
    likely run on Spark (judged from `state_bytes`, the state's size on disk), Spark starts before
    the state loads, so that its JVM comes up meanwhile. `planning` gives the progress callback
    for the planning itself."""
    if not request.to_stdout:
        check_output_file(request.output_file, request.overwrite, waves=request.waves is not None)
    if request.explain_file is not None:
        check_output_file(request.explain_file, request.overwrite, option="--explain")
    with PlannerEngine(request.engine) as engine:
        engine.warm_up(state_bytes)
        image = read_image()
        with planning() as progress:
            explain = request.explain_file is not None
            report = run_planner(image, request.plan, engine, waves=request.waves, explain=explain, progress=progress)
            if explain:
                progress("Writing why each replica moves")
            return ReassignPlanResult(_write(request, report), str(request.output_file))


def _write(request: ReassignPlanRequest, report: PlanReport) -> PlanReport:
    """Write the plan (and its waves, and the explanation; each file whole or not at all, and
    none of them unless all are): the report, naming the wave files. A plan for stdout is
    printed by the caller."""
    output_file = request.output_file
    files: dict[Path, bytes | Iterable[bytes]] = {}
    if not request.to_stdout:
        files[output_file] = orjson.dumps(report.reassignment) + b"\n"
    if report.explanation is not None and request.explain_file is not None:
        files[request.explain_file] = report.explanation.chunks()  # streamed as it is made
        report = replace(report, explanation_file=str(request.explain_file))
    if report.waves is not None:
        count = report.waves.count
        paths = [wave_path(output_file, number, count) for number in range(1, count + 1)]
        files.update({path: orjson.dumps(wave) + b"\n" for path, wave in zip(paths, report.waves.reassignments)})
        report = report.with_wave_files([str(path) for path in paths])
    stale = [p for p in existing_waves(output_file) if p not in files] if request.waves is not None else []  # earlier waves beyond the new ones
    if not files:
        return report
    try:
        atomic_write_all(files, temp_suffix=".kjbod-tmp", remove=stale)
    except OSError as exc:
        named = " and ".join(
            part for part in (
                f"--output-file {output_file}" if not request.to_stdout else "",
                "its waves" if report.waves is not None else "",
                f"--explain {request.explain_file}" if request.explain_file is not None else "",
            ) if part
        )
        raise UserError(f"Cannot write {named}: {exc.strerror or exc}") from None
    return report


def wave_path(output_file: Path, number: int, count: int) -> Path:
    """`plan.json` -> `plan.wave-001.json` (`F.wave-NNN.json` for a name without .json), numbered
    with as many digits as the last wave needs (three at least), so that names sort in order."""
    stem = output_file.name.removesuffix(".json")
    return output_file.with_name(f"{stem}.wave-{number:0{max(3, len(str(count)))}d}.json")


def existing_waves(output_file: Path) -> list[Path]:
    """Wave files of an earlier plan written to `output_file` (named as wave_path names them)."""
    stem = re.escape(output_file.name.removesuffix(".json"))
    pattern = re.compile(rf"{stem}\.wave-\d{{3,}}\.json")
    parent = output_file.parent if str(output_file.parent) else Path(".")
    try:
        return sorted(p for p in parent.iterdir() if pattern.fullmatch(p.name))
    except OSError:
        return []


def check_output_file(path: Path, overwrite: bool, *, waves: bool = False, option: str = "--output-file") -> None:
    """Fail before planning, not after, when the plan (or the file of `option`) could not be written."""
    if path.exists() and not overwrite:
        raise UserError(f"{path} already exists; choose another {option} or pass --overwrite to replace it")
    if waves and not overwrite:
        earlier = existing_waves(path)
        if earlier:
            raise UserError(
                f"{earlier[0]} already exists (waves of an earlier plan); choose another --output-file or pass --overwrite to replace them"
            )
    if path.is_dir():
        raise UserError(f"{option} {path} is a directory; give a file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"The directory of {option} {path} does not exist; create it first")
    if not os.access(parent, os.W_OK):
        raise UserError(f"Cannot write {option} {path}: its directory is not writable")


# The result, for people and scripts ------------------------------------------------------------


@dataclass(frozen=True)
class ReassignPlanResult:
    """What `reassign plan` did: the report, and where the plan went ("-": stdout)."""

    report: PlanReport
    output_file: str

    @property
    def to_stdout(self) -> bool:
        return self.output_file == str(STDOUT)

    def reassignment_text(self) -> str:
        """The plan as Kafka's reassignment JSON, one line: what --output-file holds."""
        return (orjson.dumps(self.report.reassignment) + b"\n").decode()

    def to_json(self) -> dict[str, Any]:
        """The report; printed on stdout, the plan too (one document)."""
        data = {**self.report.to_json(), "outputFile": self.output_file}
        if self.to_stdout:
            data["reassignment"] = self.report.reassignment
        return data

    def lines(self) -> list[str]:
        """The report an operator reads: what the plan moves, balance before and after, a chart
        of directory usage, and anything the rules did not allow."""
        report = self.report
        before, after = report.before, report.after
        changed = report.partitions_changed
        reason = report.engine_reason
        lines = [
            f"Planned {report.goal} for {report.brokers} brokers, {report.directories} log directories, {report.partitions} partitions "
            f"({report.replicas} replicas) with the {report.engine} engine{f' ({reason})' if reason and reason != 'asked for' else ''}.",
        ]
        target = "stdout" if self.to_stdout else self.output_file
        if changed:
            lines.append(f"Wrote {changed} partition reassignment(s) to {target}.")
        else:
            lines.append(f"Nothing needs to move; wrote an empty reassignment to {target}.")
        if report.waves:
            lines.append(wave_line(report.waves))
        bound = report.lower_bound_bytes
        ratio = ""
        if bound and report.bytes_moved >= bound:
            ratio = f", {report.moved_over_lower_bound:.2f}x the least any plan must move ({human_bytes(bound)})"
        elif bound:
            ratio = f"; reaching every balance band would move at least {human_bytes(bound)}, but the rules keep this plan short of them"
        lines += [
            "",
            f"Moves: {report.replicas_moved_between_brokers} replica(s) between brokers ({human_bytes(report.bytes_moved_between_brokers)}), "
            f"{report.replicas_moved_between_directories} between directories of a broker ({human_bytes(report.bytes_moved_between_directories)}); "
            f"{human_bytes(report.bytes_moved)} in all{ratio}.",
        ]
        refinement = report.refinement
        if refinement is not None and refinement.status != "not-applicable":
            lines.append(f"Exact refinement: {refinement.message}.")
        if report.preferred_leaders_changed:
            lines.append(
                f"Preferred leaders: {report.preferred_leaders_changed} change; run `kjbod elect --election-type PREFERRED --all-topic-partitions` "
                "once the reassignment completes."
            )
        rows = [
            ("Replicas per broker", f"{before.replicas_min}-{before.replicas_max}", f"{after.replicas_min}-{after.replicas_max}"),
            ("  max deviation from target", _pct(before.replicas_max_deviation_percent), _pct(after.replicas_max_deviation_percent)),
            ("Leaders: max deviation", _pct(before.leaders_max_deviation_percent), _pct(after.leaders_max_deviation_percent)),
            ("Bytes: max deviation", _pct(before.bytes_max_deviation_percent), _pct(after.bytes_max_deviation_percent)),
            ("Directory usage: fullest", _pct(before.directory_usage_max_percent), _pct(after.directory_usage_max_percent)),
            (
                "  furthest from broker mean",
                _points(before.directory_usage_max_points_from_broker_mean),
                _points(after.directory_usage_max_points_from_broker_mean),
            ),
            ("Partitions breaking the rack rule", str(before.rack_violations), str(after.rack_violations)),
        ]
        width = max(len(r[0]) for r in rows)
        lines += ["", f"{'':<{width}}  {'before':>12}  {'after':>12}"]
        lines += [f"{name:<{width}}  {b:>12}  {a:>12}" for name, b, a in rows]
        if after.directory_usage_max_percent is None:
            lines += ["", "Log directory usage is unknown: no disk capacities (`broker register --capacity`, or capacity_bytes on import)."]
        else:
            lines += ["", *usage_chart(list(report.usage_histogram_before), list(report.usage_histogram_after))]
        explanation = report.explanation
        if explanation is not None:
            lines += ["", f"Wrote why each of the {explanation.moves} moved replica(s) moves to {report.explanation_file} (JSON lines)."]
            lines += explanation.summary_lines()
        for note in report.notes:
            lines.append(f"Note: {note}")
        unsatisfiable = report.unsatisfiable
        if unsatisfiable:
            lines.append(f"The rack rule or the capacity threshold cannot be met for {len(unsatisfiable)} partition(s):")
            for item in unsatisfiable[:10]:
                lines.append(f"  {item.topic}-{item.partition}: {item.reason}")
            if len(unsatisfiable) > 10:
                lines.append(f"  ... and {len(unsatisfiable) - 10} more (all of them with --output json)")
        lines.append("Per-broker and per-directory figures: --output json.")
        return lines


def wave_line(waves: Waves) -> str:
    files = waves.files or ()
    limits = []
    if waves.max_concurrent_moves_per_broker is not None:
        limits.append(f"at most {waves.max_concurrent_moves_per_broker} moves per broker")
    if waves.wave_size is not None:
        limits.append(f"at most {waves.wave_size} partitions")
    named = f"{files[0]}" if len(files) == 1 else f"{files[0]} ... {files[-1]}"
    bound = "no fewer waves can do it" if waves.count <= waves.lower_bound else f"at least {waves.lower_bound} are needed"
    text = (
        f"Wrote it as {waves.count} wave(s) to run one after another ({named}): {' and '.join(limits)} in a wave, "
        f"no directory past the capacity threshold once a wave completes; {bound}."
    )
    return " ".join([text, *waves.notes])


def _pct(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.1f}%"


def _points(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.1f} pts"


def usage_chart(before: list[int], after: list[int], width: int = 24) -> list[str]:
    """Directories by usage, in 10-point bins, before and after, as two bar columns."""
    most = max(max(before), max(after), 1)

    def bar(count: int) -> str:
        cells = count * width / most
        full = int(cells)
        text = "█" * full + ("▌" if cells - full >= 0.5 else "")
        return f"{text:<{width}} {count:>6}"

    lines = [f"Log directories by usage   {'before':<{width + 7}}  after"]
    for index, (b, a) in enumerate(zip(before, after)):
        label = f"{index * 10:>3}-{index * 10 + 10}%" if index < 9 else " 90%+   "
        lines.append(f"  {label:<24} {bar(b)}  {bar(a)}")
    return lines
