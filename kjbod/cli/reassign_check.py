"""`kjbod reassign check`: the CI gate for reassignment plans (issue 9)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from kjbod.cli.context import AppContext, app_context
from kjbod.cli.render import Lines, emit


class ReportFormat(str, Enum):
    text = "text"
    json = "json"
    junit = "junit"


def add_commands(app: typer.Typer) -> None:
    """Adds `reassign check` to the reassign group."""
    app.command("check")(check)


def _read_text(path: Path, what: str) -> str:
    from kjbod.errors import UserError

    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"Cannot read the {what} {path}: it is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _write_file(path: Path, text: str, what: str) -> None:
    """Written whole or not at all; an error names the file asked for, not the temporary one."""
    from kjbod.common.durable import atomic_write
    from kjbod.errors import UserError

    try:
        atomic_write(path, text.encode())
    except OSError as exc:
        raise UserError(f"Cannot write the {what} {path}: {exc.strerror or exc}") from None


def _write_default_policy(app_: AppContext, path: Path) -> None:
    from kjbod.errors import UserError
    from kjbod.tools.plan_check import default_policy_toml

    if path.exists():
        raise UserError(f"{path} already exists: remove it or choose another file for the default policy")
    _write_file(path, default_policy_toml(), "policy")
    emit(app_, Lines([f"Wrote the default policy to {path}."], {"policyFile": str(path)}))


def check(
    ctx: typer.Context,
    reassignment_json_file: Annotated[
        Optional[list[Path]],
        typer.Option(
            "--reassignment-json-file", metavar="F",
            help="The plan to check: Kafka reassignment JSON (log_dirs optional). Repeat it, or give a quoted glob such as "
            "'plan.json.wave-*.json', to check waves one after another: each against the cluster as the waves before it leave it.",
        ),
    ] = None,
    policy: Annotated[
        Optional[Path],
        typer.Option("--policy", metavar="FILE", help="The policy (TOML); default: the built-in policy (see --write-default-policy)."),
    ] = None,
    report: Annotated[
        Optional[ReportFormat],
        typer.Option("--report", case_sensitive=False, help="The report's format: text, json or junit (default: text; json with -o json)."),
    ] = None,
    report_file: Annotated[
        Optional[Path],
        typer.Option("--report-file", metavar="PATH", help="Write the report to PATH and print a one-line summary instead."),
    ] = None,
    throttle: Annotated[
        Optional[str],
        typer.Option(
            "--throttle", metavar="BPS",
            help="The inter-broker throttle execute will get, in bytes/s or with a unit: 50MiB (default: the policy's; negative: none).",
        ),
    ] = None,
    replica_alter_log_dirs_throttle: Annotated[
        Optional[str],
        typer.Option(
            "--replica-alter-log-dirs-throttle",
            metavar="BPS",
            help="The throttle of moves between log directories execute will get, in bytes/s or with a unit: 100MiB (default: the policy's; negative: none).",
        ),
    ] = None,
    write_default_policy: Annotated[
        Optional[Path],
        typer.Option("--write-default-policy", metavar="FILE", help="Write the default policy, commented, to FILE and exit (no plan needed)."),
    ] = None,
) -> None:
    """Check a reassignment plan against the cluster state and a policy: exit 1 on any violation.

    Every check has a stable id and a severity (the policy says which severities fail); the
    report lists what each finding involves, as text, JSON or JUnit XML (one test case per check).
    Several files (waves) are checked in order, each against the cluster once the ones before it
    complete; the gate fails if any wave fails.
    Example: kjbod reassign check --reassignment-json-file plan.json --policy policy.toml --throttle 50000000 --report junit --report-file check.xml
    """
    from kjbod.errors import OperationFailed, UsageError

    app_ = app_context(ctx)
    if write_default_policy is not None:
        given = [
            name
            for name, value in (
                ("--reassignment-json-file", reassignment_json_file),
                ("--policy", policy),
                ("--report", report),
                ("--report-file", report_file),
                ("--throttle", throttle),
                ("--replica-alter-log-dirs-throttle", replica_alter_log_dirs_throttle),
            )
            if value is not None
        ]
        if given:
            raise UsageError(f"--write-default-policy cannot be combined with {', '.join(given)}")
        _write_default_policy(app_, write_default_policy)
        return
    if not reassignment_json_file:
        raise UsageError("Missing option '--reassignment-json-file' (or give --write-default-policy FILE)")
    plan_files = _expand(reassignment_json_file)
    chosen = report.value if report is not None else ("json" if app_.json else "text")
    if app_.json and report_file is None and chosen != "json":
        raise UsageError(f"-o json prints the JSON report on stdout; --report {chosen} needs --report-file")

    from kjbod.common.json_text import indented_json
    from kjbod.common.units import parse_rate
    from kjbod.tools.plan_check import (
        Policy,
        check_plan,
        failure_message,
        parse_policy,
        check_sequence,
        render_junit,
        render_sequence_junit,
        render_sequence_text,
        render_text,
        report_json,
        sequence_failure_message,
        sequence_json,
        sequence_summary_line,
        summary_line,
    )

    rules = parse_policy(_read_text(policy, "policy"), str(policy)) if policy is not None else Policy()
    inter = parse_rate(throttle, "throttle") if throttle is not None else None
    local = (
        parse_rate(replica_alter_log_dirs_throttle, "replica-alter-log-dirs-throttle") if replica_alter_log_dirs_throttle is not None else None
    )
    texts = [(str(path), _read_text(path, "plan")) for path in plan_files]
    image = app_.read_image()
    # One file: its report, as before; several: the waves' reports, one after another.
    result: Any
    if len(texts) == 1:
        result = check_plan(image, texts[0][1], rules, plan_file=texts[0][0], throttle=inter, log_dir_throttle=local)
        to_json, to_text, to_junit, summarize, failure = report_json, render_text, render_junit, summary_line, failure_message
    else:
        result = check_sequence(image, texts, rules, throttle=inter, log_dir_throttle=local)
        to_json, to_text, to_junit = sequence_json, render_sequence_text, render_sequence_junit
        summarize, failure = sequence_summary_line, sequence_failure_message
    data = to_json(result)
    summary = summarize(result)
    rendered = {
        "text": lambda: "\n".join(to_text(result)) + "\n",
        "json": lambda: indented_json(data) + "\n",
        "junit": lambda: to_junit(result),
    }[chosen]()
    if report_file is not None:
        _write_file(report_file, rendered, "report")
        emit(
            app_,
            Lines([f"{summary} Report ({chosen}): {report_file}"], {**data, "reportFile": str(report_file), "reportFormat": chosen}),
        )
    else:
        emit(app_, Lines(rendered.rstrip("\n").split("\n"), data))
    if not result.passed:
        raise OperationFailed(failure(result))


def _expand(paths: list[Path]) -> list[Path]:
    """The plan files in order: each given path, or the files a glob pattern in it matches (for
    a pattern the shell did not expand), sorted with numbers compared as numbers."""
    import glob
    import re

    from kjbod.errors import UserError

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
