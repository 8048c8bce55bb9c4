"""The three reports of a check run: text for people, JSON (stable camelCase keys) and JUnit
XML, in which every check is a test case so that any CI system shows it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from kjbod.common.units import human_bytes
from kjbod.tools.plan_check.model import CHECKS, CheckReport, CheckResult, Finding, SequenceReport, Severity, truncated

LIST_LIMIT = 10


def _findings_text(counts: dict[Severity, int], fail_on: frozenset[Severity]) -> str:
    found = ", ".join(f"{counts[s]} {s.label}" for s in sorted(Severity, reverse=True))
    failing = ", ".join(s.label for s in sorted(fail_on, reverse=True)) or "nothing"
    return f"findings: {found}; failing on {failing}"


def summary_line(report: CheckReport) -> str:
    """One line: passed or failed, how many checks, the findings per severity."""
    checks = len(report.results)
    failed = len(report.failed_checks())
    findings = _findings_text(report.counts(), report.fail_on)
    if failed:
        return f"Plan check FAILED: {failed} of {checks} checks failed ({findings})."
    return f"Plan check PASSED: {checks} checks ({findings})."


def failure_message(report: CheckReport) -> str:
    failed = len(report.failed_checks())
    return f"{failed} out of {len(report.results)} check(s) failed."


def _status(result: CheckResult, report: CheckReport) -> str:
    if result.skipped is not None:
        return "skipped"
    return "failed" if result.failed(report.fail_on) else "passed"


def _rank(result: CheckResult, report: CheckReport) -> tuple[int, int]:
    """Worst first: failed, then by worst finding, then clean passes, then skipped."""
    if result.skipped is not None:
        return (4, 0)
    worst = result.worst()
    if result.failed(report.fail_on):
        return (0, -int(worst))  # type: ignore[arg-type]
    if worst is None:
        return (3, 0)
    return (1 if worst > Severity.INFO else 2, -int(worst))


def _tag(result: CheckResult, report: CheckReport) -> str:
    if result.skipped is not None:
        return "SKIP"
    if result.failed(report.fail_on):
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


def plan_line(report: CheckReport) -> str:
    plan = report.plan
    if not plan.get("readable"):
        return f"Checked {report.plan_file}: it could not be read as a reassignment."
    return (
        f"Checked {report.plan_file}: {plan['partitions']} partition(s); {plan['replicasAdded']} replica(s) to add, "
        f"{plan['replicasRemoved']} to remove, {plan['directoryMoves']} to move between directories; "
        f"{human_bytes(plan['bytesBetweenBrokers'])} to copy between brokers, {human_bytes(plan['bytesBetweenDirectories'])} between directories."
    )


def render_text(report: CheckReport) -> list[str]:
    """Grouped by check, worst first; each finding with what it involves (long lists cut)."""
    lines = [plan_line(report), summary_line(report), ""]
    order = sorted(enumerate(report.results), key=lambda item: (_rank(item[1], report), item[0]))
    for _, result in order:
        tag = _tag(result, report)
        if result.skipped is not None:
            lines.append(f"{tag}  {result.spec.id}: {result.skipped}")
            continue
        lines.append(f"{tag}  {result.spec.id} [{result.severity.label}]: {result.summary}")
        for finding in sorted(result.findings, key=lambda f: -int(f.severity)):
            lines.append(f"    {finding.severity.label}: {finding.issue.message}")
            lines += _involved(finding)
    return lines


def report_json(report: CheckReport) -> dict[str, Any]:
    by_id = {r.spec.id: r for r in report.results}
    return {
        "passed": report.passed,
        "summary": summary_line(report),
        "planFile": report.plan_file,
        "failOn": [s.label for s in sorted(report.fail_on, reverse=True)],
        "counts": {s.label: n for s, n in sorted(report.counts().items(), reverse=True)},
        "failedChecks": [r.spec.id for r in report.results if r.failed(report.fail_on)],
        "plan": report.plan,
        "estimate": report.estimate,
        "checks": [
            {
                "id": spec.id,
                "title": spec.title,
                "description": spec.description,
                "severity": by_id[spec.id].severity.label,
                "status": _status(by_id[spec.id], report),
                "summary": None if by_id[spec.id].skipped is not None else by_id[spec.id].summary,
                "skippedReason": by_id[spec.id].skipped,
                "findings": [f.to_json() for f in by_id[spec.id].findings],
            }
            for spec in CHECKS
            if spec.id in by_id
        ],
    }


def _finding_text(finding: Finding) -> str:
    return "\n".join([f"{finding.severity.label}: {finding.issue.message}", *(line.strip() for line in _involved(finding))])


def _junit_counts(report: CheckReport) -> dict[str, str]:
    failures = len(report.failed_checks())
    skipped = sum(1 for r in report.results if r.skipped is not None)
    return {"tests": str(len(report.results)), "failures": str(failures), "errors": "0", "skipped": str(skipped)}


def render_junit(report: CheckReport) -> str:
    """JUnit XML: one testcase per check id; a failure element for findings at a failing
    severity, skipped for checks that did not apply, system-out for the rest."""
    suites = ET.Element("testsuites", {"name": "kjbod reassign check", **_junit_counts(report)})
    _junit_suite(suites, report)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _junit_suite(suites: ET.Element, report: CheckReport) -> None:
    suite = ET.SubElement(suites, "testsuite", {"name": f"kjbod reassign check: {report.plan_file}", **_junit_counts(report)})
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", {"name": "planFile", "value": report.plan_file})
    ET.SubElement(properties, "property", {"name": "failOn", "value": ",".join(s.label for s in sorted(report.fail_on, reverse=True))})
    ET.SubElement(properties, "property", {"name": "summary", "value": summary_line(report)})
    for result in report.results:
        case = ET.SubElement(suite, "testcase", {"classname": "kjbod.reassign.check", "name": result.spec.id})
        if result.skipped is not None:
            ET.SubElement(case, "skipped", {"message": result.skipped})
            continue
        failing = [f for f in result.findings if f.severity in report.fail_on]
        others = [f for f in result.findings if f.severity not in report.fail_on]
        if failing:
            failure = ET.SubElement(case, "failure", {"message": failing[0].issue.message, "type": result.severity.label})
            failure.text = "\n\n".join(_finding_text(f) for f in failing)
        out = [f"{result.spec.title}: {result.summary}"] + [_finding_text(f) for f in others]
        ET.SubElement(case, "system-out").text = "\n\n".join(out)


# A sequence of plans (waves) --------------------------------------------------------------------


def _totals(sequence: SequenceReport) -> dict[Severity, int]:
    totals = {severity: 0 for severity in Severity}
    for report in sequence.reports:
        for severity, count in report.counts().items():
            totals[severity] += count
    return totals


def sequence_summary_line(sequence: SequenceReport) -> str:
    """One line for a sequence: passed or failed, how many waves, the findings per severity."""
    waves = len(sequence.reports)
    failed = len(sequence.failed_reports())
    findings = _findings_text(_totals(sequence), sequence.fail_on)
    if failed:
        return f"Plan check FAILED: {failed} of {waves} waves failed, checked one after another ({findings})."
    return f"Plan check PASSED: {waves} waves, checked one after another ({findings})."


def sequence_failure_message(sequence: SequenceReport) -> str:
    failed = sequence.failed_reports()
    first = failed[0].plan_file if failed else ""
    return f"{len(failed)} out of {len(sequence.reports)} wave(s) failed (the first: {first})."


def render_sequence_text(sequence: SequenceReport) -> list[str]:
    """One line per wave, then each failing wave's full report."""
    lines = [sequence_summary_line(sequence), ""]
    for number, report in enumerate(sequence.reports, 1):
        tag = "PASS" if report.passed else "FAIL"
        lines.append(f"{tag}  wave {number}: {plan_line(report).removeprefix('Checked ')} {summary_line(report).removeprefix('Plan check ')}")
    for report in sequence.failed_reports():
        lines += ["", *render_text(report)]
    return lines


def sequence_json(sequence: SequenceReport) -> dict[str, Any]:
    return {
        "passed": sequence.passed,
        "summary": sequence_summary_line(sequence),
        "failOn": [s.label for s in sorted(sequence.fail_on, reverse=True)],
        "counts": {s.label: n for s, n in sorted(_totals(sequence).items(), reverse=True)},
        "failedWaves": [report.plan_file for report in sequence.failed_reports()],
        "waves": [report_json(report) for report in sequence.reports],
    }


def render_sequence_junit(sequence: SequenceReport) -> str:
    """JUnit XML: one test suite per wave, in order."""
    reports = sequence.reports
    counts = {
        key: str(sum(int(_junit_counts(r)[key]) for r in reports)) for key in ("tests", "failures", "errors", "skipped")
    }
    suites = ET.Element("testsuites", {"name": "kjbod reassign check", **counts})
    for report in reports:
        _junit_suite(suites, report)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
