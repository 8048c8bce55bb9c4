"""What a check run reports, and its three forms: text for people, JSON (stable camelCase keys)
and JUnit XML, in which every check is a test case so that any CI system shows it.

One plan gives a CheckReport; a sequence of plans (waves) a SequenceReport, which holds one
CheckReport per wave. Both answer the same questions (`CheckRun`): passed?, a summary line, the
failure message, and the report as text lines, JSON or JUnit XML.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any, Protocol

from kjbod.common.json_text import camel_json
from kjbod.common.units import human_bytes
from kjbod.tools.plan_check.duration import Estimate
from kjbod.tools.plan_check.model import CHECKS, CheckResult, Finding, Severity, truncated

LIST_LIMIT = 10


class CheckRun(Protocol):
    """The report of `reassign check`, of one plan or of a sequence of waves."""

    @property
    def passed(self) -> bool: ...

    def summary_line(self) -> str: ...

    def failure_message(self) -> str: ...

    def to_json(self) -> dict[str, Any]: ...

    def lines(self) -> list[str]: ...

    def junit(self) -> str: ...


@dataclass(frozen=True)
class PlanSummary:
    """What the plan does, for the report's header (None for a file that could not be read)."""

    file: str
    readable: bool
    partitions: int | None = None
    partitions_found: int | None = None
    replicas_added: int | None = None
    replicas_removed: int | None = None
    directory_moves: int | None = None
    bytes_between_brokers: int | None = None
    bytes_between_directories: int | None = None
    brokers_involved: int | None = None
    throttle: int | None = None  # bytes/s, None: no throttle
    replica_alter_log_dirs_throttle: int | None = None

    def to_json(self) -> dict[str, Any]:
        if not self.readable:
            return {"file": self.file, "readable": False}
        return camel_json(self)

    def line(self) -> str:
        if not self.readable:
            return f"Checked {self.file}: it could not be read as a reassignment."
        return (
            f"Checked {self.file}: {self.partitions} partition(s); {self.replicas_added} replica(s) to add, "
            f"{self.replicas_removed} to remove, {self.directory_moves} to move between directories; "
            f"{human_bytes(self.bytes_between_brokers or 0)} to copy between brokers, "
            f"{human_bytes(self.bytes_between_directories or 0)} between directories."
        )


def _findings_text(counts: dict[Severity, int], fail_on: frozenset[Severity]) -> str:
    found = ", ".join(f"{counts[s]} {s.label}" for s in sorted(Severity, reverse=True))
    failing = ", ".join(s.label for s in sorted(fail_on, reverse=True)) or "nothing"
    return f"findings: {found}; failing on {failing}"


def _junit_document(suites: ET.Element) -> str:
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


# One plan -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckReport:
    plan_file: str
    fail_on: frozenset[Severity]
    results: tuple[CheckResult, ...]
    plan: PlanSummary
    estimate: Estimate | None = None

    @property
    def passed(self) -> bool:
        return not self.failed_checks()

    def failed_checks(self) -> list[CheckResult]:
        return [r for r in self.results if r.failed(self.fail_on)]

    def counts(self) -> dict[Severity, int]:
        found = {severity: 0 for severity in Severity}
        for result in self.results:
            for finding in result.findings:
                found[finding.severity] += 1
        return found

    def summary_line(self) -> str:
        """One line: passed or failed, how many checks, the findings per severity."""
        checks = len(self.results)
        failed = len(self.failed_checks())
        findings = _findings_text(self.counts(), self.fail_on)
        if failed:
            return f"Plan check FAILED: {failed} of {checks} checks failed ({findings})."
        return f"Plan check PASSED: {checks} checks ({findings})."

    def failure_message(self) -> str:
        return f"{len(self.failed_checks())} out of {len(self.results)} check(s) failed."

    def lines(self) -> list[str]:
        """Grouped by check, worst first; each finding with what it involves (long lists cut)."""
        lines = [self.plan.line(), self.summary_line(), ""]
        order = sorted(enumerate(self.results), key=lambda item: (self._rank(item[1]), item[0]))
        for _, result in order:
            tag = self._tag(result)
            if result.skipped is not None:
                lines.append(f"{tag}  {result.spec.id}: {result.skipped}")
                continue
            lines.append(f"{tag}  {result.spec.id} [{result.severity.label}]: {result.summary}")
            for finding in sorted(result.findings, key=lambda f: -int(f.severity)):
                lines.append(f"    {finding.severity.label}: {finding.issue.message}")
                lines += _involved(finding)
        return lines

    def to_json(self) -> dict[str, Any]:
        by_id = {r.spec.id: r for r in self.results}
        return {
            "passed": self.passed,
            "summary": self.summary_line(),
            "planFile": self.plan_file,
            "failOn": [s.label for s in sorted(self.fail_on, reverse=True)],
            "counts": {s.label: n for s, n in sorted(self.counts().items(), reverse=True)},
            "failedChecks": [r.spec.id for r in self.results if r.failed(self.fail_on)],
            "plan": self.plan.to_json(),
            "estimate": None if self.estimate is None else self.estimate.to_json(),
            "checks": [
                {
                    "id": spec.id,
                    "title": spec.title,
                    "description": spec.description,
                    "severity": by_id[spec.id].severity.label,
                    "status": self._status(by_id[spec.id]),
                    "summary": None if by_id[spec.id].skipped is not None else by_id[spec.id].summary,
                    "skippedReason": by_id[spec.id].skipped,
                    "findings": [f.to_json() for f in by_id[spec.id].findings],
                }
                for spec in CHECKS
                if spec.id in by_id
            ],
        }

    def junit(self) -> str:
        """JUnit XML: one testcase per check id; a failure element for findings at a failing
        severity, skipped for checks that did not apply, system-out for the rest."""
        suites = ET.Element("testsuites", {"name": "kjbod reassign check", **self.junit_counts()})
        self.junit_suite(suites)
        return _junit_document(suites)

    def junit_counts(self) -> dict[str, str]:
        failures = len(self.failed_checks())
        skipped = sum(1 for r in self.results if r.skipped is not None)
        return {"tests": str(len(self.results)), "failures": str(failures), "errors": "0", "skipped": str(skipped)}

    def junit_suite(self, suites: ET.Element) -> None:
        """This report as a test suite of `suites`."""
        suite = ET.SubElement(suites, "testsuite", {"name": f"kjbod reassign check: {self.plan_file}", **self.junit_counts()})
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", {"name": "planFile", "value": self.plan_file})
        ET.SubElement(properties, "property", {"name": "failOn", "value": ",".join(s.label for s in sorted(self.fail_on, reverse=True))})
        ET.SubElement(properties, "property", {"name": "summary", "value": self.summary_line()})
        for result in self.results:
            case = ET.SubElement(suite, "testcase", {"classname": "kjbod.reassign.check", "name": result.spec.id})
            if result.skipped is not None:
                ET.SubElement(case, "skipped", {"message": result.skipped})
                continue
            failing = [f for f in result.findings if f.severity in self.fail_on]
            others = [f for f in result.findings if f.severity not in self.fail_on]
            if failing:
                failure = ET.SubElement(case, "failure", {"message": failing[0].issue.message, "type": result.severity.label})
                failure.text = "\n\n".join(_finding_text(f) for f in failing)
            out = [f"{result.spec.title}: {result.summary}"] + [_finding_text(f) for f in others]
            ET.SubElement(case, "system-out").text = "\n\n".join(out)

    def _status(self, result: CheckResult) -> str:
        if result.skipped is not None:
            return "skipped"
        return "failed" if result.failed(self.fail_on) else "passed"

    def _rank(self, result: CheckResult) -> tuple[int, int]:
        """Worst first: failed, then by worst finding, then clean passes, then skipped."""
        if result.skipped is not None:
            return (4, 0)
        worst = result.worst()
        if result.failed(self.fail_on):
            return (0, -int(worst))  # type: ignore[arg-type]
        if worst is None:
            return (3, 0)
        return (1 if worst > Severity.INFO else 2, -int(worst))

    def _tag(self, result: CheckResult) -> str:
        if result.skipped is not None:
            return "SKIP"
        if result.failed(self.fail_on):
            return "FAIL"
        return "WARN" if result.worst() is not None and result.worst() > Severity.INFO else "PASS"  # type: ignore[operator]


def _involved(finding: Finding) -> list[str]:
    issue = finding.issue
    lines = []
    for label, items in (
        ("partitions", list(issue.partitions)),
        ("topics", list(issue.topics)),
        ("brokers", [str(b) for b in issue.brokers]),
        ("directories", [d.label for d in issue.directories]),
    ):
        if items:
            lines.append(f"      {label}: {truncated(items, LIST_LIMIT)}")
    return lines


def _finding_text(finding: Finding) -> str:
    return "\n".join([f"{finding.severity.label}: {finding.issue.message}", *(line.strip() for line in _involved(finding))])


# A sequence of plans (waves) --------------------------------------------------------------------


@dataclass(frozen=True)
class SequenceReport:
    """The reports of a sequence of plans (waves), each checked against the cluster as the ones
    before it leave it once they complete."""

    reports: tuple[CheckReport, ...]
    fail_on: frozenset[Severity]

    @property
    def passed(self) -> bool:
        return all(report.passed for report in self.reports)

    def failed_reports(self) -> list[CheckReport]:
        return [report for report in self.reports if not report.passed]

    def counts(self) -> dict[Severity, int]:
        totals = {severity: 0 for severity in Severity}
        for report in self.reports:
            for severity, count in report.counts().items():
                totals[severity] += count
        return totals

    def summary_line(self) -> str:
        """One line for a sequence: passed or failed, how many waves, the findings per severity."""
        waves = len(self.reports)
        failed = len(self.failed_reports())
        findings = _findings_text(self.counts(), self.fail_on)
        if failed:
            return f"Plan check FAILED: {failed} of {waves} waves failed, checked one after another ({findings})."
        return f"Plan check PASSED: {waves} waves, checked one after another ({findings})."

    def failure_message(self) -> str:
        failed = self.failed_reports()
        first = failed[0].plan_file if failed else ""
        return f"{len(failed)} out of {len(self.reports)} wave(s) failed (the first: {first})."

    def lines(self) -> list[str]:
        """One line per wave, then each failing wave's full report."""
        lines = [self.summary_line(), ""]
        for number, report in enumerate(self.reports, 1):
            tag = "PASS" if report.passed else "FAIL"
            lines.append(f"{tag}  wave {number}: {report.plan.line().removeprefix('Checked ')} {report.summary_line().removeprefix('Plan check ')}")
        for report in self.failed_reports():
            lines += ["", *report.lines()]
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "summary": self.summary_line(),
            "failOn": [s.label for s in sorted(self.fail_on, reverse=True)],
            "counts": {s.label: n for s, n in sorted(self.counts().items(), reverse=True)},
            "failedWaves": [report.plan_file for report in self.failed_reports()],
            "waves": [report.to_json() for report in self.reports],
        }

    def junit(self) -> str:
        """JUnit XML: one test suite per wave, in order."""
        counts = {key: str(sum(int(r.junit_counts()[key]) for r in self.reports)) for key in ("tests", "failures", "errors", "skipped")}
        suites = ET.Element("testsuites", {"name": "kjbod reassign check", **counts})
        for report in self.reports:
            report.junit_suite(suites)
        return _junit_document(suites)
