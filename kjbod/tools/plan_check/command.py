"""`kjbod reassign check` as a command: its request (the plan files, the policy, the throttles,
the report's format and file), one run (files read, plans checked, the report written) and what
it prints; and writing the default policy.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kjbod.common.durable import atomic_write
from kjbod.common.json_text import indented_json
from kjbod.common.units import parse_rate
from kjbod.errors import UsageError, UserError
from kjbod.image import Image
from kjbod.common.kafka_release import NEWEST, KafkaRelease
from kjbod.tools.plan_check.policy import Policy, default_policy_toml, parse_policy
from kjbod.tools.plan_check.reports import CheckRun
from kjbod.tools.plan_check.runner import check_plan, check_sequence


@dataclass(frozen=True)
class CheckRequest:
    """What `reassign check` is asked: the plan files in order (several: waves, checked one after
    another), the policy, the throttles execute will get (None: the policy's), and the report's
    format ("text", "json" or "junit") and file (None: printed)."""

    plan_files: tuple[Path, ...]
    policy: Policy
    report_format: str
    report_file: Path | None = None
    throttle: int | None = None
    log_dir_throttle: int | None = None
    # The Kafka the plan will be executed on (kjbod's --kafka-version).
    release: KafkaRelease = NEWEST

    @classmethod
    def parse(
        cls,
        *,
        plan_files: Sequence[Path],
        policy_file: Path | None = None,
        report_format: str | None = None,
        report_file: Path | None = None,
        throttle: str | None = None,
        log_dir_throttle: str | None = None,
        json_output: bool = False,
        release: KafkaRelease = NEWEST,
    ) -> CheckRequest:
        """The request from the command line's values, each read and checked in turn: plan
        file names and glob patterns, the report's format (json with `json_output`, else text),
        the policy file, the throttles in bytes/s or with a unit."""
        if not plan_files:
            raise UsageError("Missing option '--reassignment-json-file' (or give --write-default-policy FILE)")
        files = expand_plan_files(plan_files)
        chosen = report_format if report_format is not None else ("json" if json_output else "text")
        if json_output and report_file is None and chosen != "json":
            raise UsageError(f"-o json prints the JSON report on stdout; --report {chosen} needs --report-file")
        policy = parse_policy(read_text(policy_file, "policy"), str(policy_file)) if policy_file is not None else Policy()
        inter = parse_rate(throttle, "throttle") if throttle is not None else None
        local = parse_rate(log_dir_throttle, "replica-alter-log-dirs-throttle") if log_dir_throttle is not None else None
        return cls(tuple(files), policy, chosen, report_file, inter, local, release)


def expand_plan_files(paths: Sequence[Path]) -> list[Path]:
    """The plan files in order: each given path, or the files a glob pattern in it matches (for
    a pattern the shell did not expand), sorted with numbers compared as numbers."""

    def natural(path: str) -> list[object]:
        return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path)]

    files: list[Path] = []
    for path in paths:
        text = str(path)
        if path.exists() or not glob.has_magic(text):
            files.append(path)
            continue
        matches = sorted(glob.glob(text), key=natural)
        if not matches:
            raise UserError(f"No file matches --reassignment-json-file {text}; check the pattern (quote it so the shell leaves it to kjbod)")
        files += [Path(match) for match in matches]
    return files


def read_text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"Cannot read the {what} {path}: it is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def write_file(path: Path, text: str, what: str) -> None:
    """Written whole or not at all; an error names the file asked for, not the temporary one."""
    try:
        atomic_write(path, text.encode())
    except OSError as exc:
        raise UserError(f"Cannot write the {what} {path}: {exc.strerror or exc}") from None


@dataclass(frozen=True)
class CheckOutcome:
    """A check run: its report, and what the command prints (the report, or with a report file
    one line naming it)."""

    report: CheckRun
    report_format: str
    rendered: str  # the report in its format
    data: dict[str, Any]  # the report's JSON
    report_file: Path | None = None

    @property
    def passed(self) -> bool:
        return self.report.passed

    def failure_message(self) -> str:
        return self.report.failure_message()

    def lines(self) -> list[str]:
        if self.report_file is not None:
            return [f"{self.report.summary_line()} Report ({self.report_format}): {self.report_file}"]
        return self.rendered.rstrip("\n").split("\n")

    def to_json(self) -> dict[str, Any]:
        if self.report_file is not None:
            return {**self.data, "reportFile": str(self.report_file), "reportFormat": self.report_format}
        return self.data


def run_check(request: CheckRequest, read_image: Callable[[], Image]) -> CheckOutcome:
    """Check the plan files against the image `read_image` loads: one file alone, several as
    waves one after another. The report is written to the report file when there is one."""
    texts = [(str(path), read_text(path, "plan")) for path in request.plan_files]
    image = read_image()
    report: CheckRun
    if len(texts) == 1:
        (plan_file, text), = texts
        report = check_plan(image, text, request.policy, plan_file=plan_file, throttle=request.throttle, log_dir_throttle=request.log_dir_throttle, release=request.release)
    else:
        report = check_sequence(image, texts, request.policy, throttle=request.throttle, log_dir_throttle=request.log_dir_throttle, release=request.release)
    data = report.to_json()
    rendered = {
        "text": lambda: "\n".join(report.lines()) + "\n",
        "json": lambda: indented_json(data) + "\n",
        "junit": report.junit,
    }[request.report_format]()
    if request.report_file is not None:
        write_file(request.report_file, rendered, "report")
    return CheckOutcome(report, request.report_format, rendered, data, request.report_file)


@dataclass(frozen=True)
class PolicyWritten:
    path: Path

    def lines(self) -> list[str]:
        return [f"Wrote the default policy to {self.path}."]

    def to_json(self) -> dict[str, Any]:
        return {"policyFile": str(self.path)}


def write_default_policy(path: Path, *, combined_with: Sequence[str] = ()) -> PolicyWritten:
    """Write the default policy, commented, to a new file; `combined_with`: the check's own
    options given too, which this refuses."""
    if combined_with:
        raise UsageError(f"--write-default-policy cannot be combined with {', '.join(combined_with)}")
    if path.exists():
        raise UserError(f"{path} already exists: remove it or choose another file for the default policy")
    write_file(path, default_policy_toml(), "policy")
    return PolicyWritten(path)
