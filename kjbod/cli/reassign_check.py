"""`kjbod reassign check`: the CI gate for reassignment plans (issue 9)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from kjbod.cli.context import app_context
from kjbod.cli.render import Lines, emit


class ReportFormat(str, Enum):
    text = "text"
    json = "json"
    junit = "junit"


def add_commands(app: typer.Typer) -> None:
    """Adds `reassign check` to the reassign group."""
    app.command("check")(check)


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
    from kjbod.errors import OperationFailed
    from kjbod.tools.plan_check.command import CheckRequest, run_check, write_default_policy as write_policy

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
        written = write_policy(write_default_policy, combined_with=given)
        emit(app_, Lines(written.lines(), written.to_json()))
        return
    request = CheckRequest.parse(
        plan_files=reassignment_json_file or [], policy_file=policy, report_format=report.value if report is not None else None,
        report_file=report_file, throttle=throttle, log_dir_throttle=replica_alter_log_dirs_throttle, json_output=app_.json,
        release=app_.kafka,
    )
    checked = run_check(request, app_.read_image)
    emit(app_, Lines(checked.lines(), checked.to_json()))
    if not checked.passed:
        raise OperationFailed(checked.failure_message())
