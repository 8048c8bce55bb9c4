"""`kjbod reassign check`: is a reassignment plan safe and sane against this cluster?

The CI gate teams run on reassignment plans before anyone executes them. A plan (Kafka's
reassignment JSON, read by kafka-reassign-partitions' own rules) is checked against a cluster
image and a policy (TOML); every check has a stable id, a severity and the partitions, brokers
and directories involved; the report comes as text, JSON or JUnit XML.

    report = check_plan(image, text, parse_policy(policy_text), plan_file="plan.json", throttle=50_000_000)
    report.lines() / report.to_json() / report.junit(); report.passed

A plan split into waves is checked as a sequence, each wave against the cluster as the waves
before it leave it: `check_sequence(image, [(file, text), ...], policy)` gives a SequenceReport,
which answers the same questions (reports.CheckRun). The command itself (files, policy,
throttles, the report's format and file) is `command.run_check`.
"""

from kjbod.tools.plan_check.model import CHECK_IDS, CHECKS, CheckResult, CheckSpec, Finding, Severity
from kjbod.tools.plan_check.policy import Policy, default_policy_toml, parse_policy
from kjbod.tools.plan_check.reports import CheckReport, CheckRun, SequenceReport
from kjbod.tools.plan_check.runner import check_plan, check_sequence, effective_throttles

__all__ = [
    "CHECKS",
    "CHECK_IDS",
    "CheckReport",
    "CheckResult",
    "CheckRun",
    "CheckSpec",
    "Finding",
    "Policy",
    "SequenceReport",
    "Severity",
    "check_plan",
    "check_sequence",
    "default_policy_toml",
    "effective_throttles",
    "parse_policy",
]
