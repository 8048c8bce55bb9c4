"""Run every check of a plan against a cluster image and a policy."""

from __future__ import annotations

from typing import Any

from kjbod.common.callbacks import gc_paused
from kjbod.controller.clock_control import format_duration
from kjbod.errors import UserError
from kjbod.image import Image
from kjbod.tools.plan_check.checks import CHECK_FUNCTIONS, Context, check_duration, move_counts
from kjbod.tools.plan_check.duration import Estimate
from kjbod.tools.plan_check.facts import scan_cluster, scan_plan
from kjbod.tools.plan_check.model import CHECKS, CheckReport, CheckResult, CheckSpec, Finding, Issue, Outcome, Severity
from kjbod.tools.plan_check.policy import Policy
from kjbod.tools.reassign.json_format import ReassignmentPlan, parse_reassignment_json


def effective_throttles(policy: Policy, throttle: int | None, log_dir_throttle: int | None) -> tuple[int, int]:
    """check's options win; else the policy's; negative means no throttle (as in Kafka)."""
    inter = throttle if throttle is not None else policy.throttle.rate
    local = log_dir_throttle if log_dir_throttle is not None else policy.throttle.replica_alter_log_dirs_rate
    return (-1 if inter is None else inter), (-1 if local is None else local)


def _result(spec: CheckSpec, policy: Policy, outcome: Outcome) -> CheckResult:
    severity = policy.severity_of(spec.id)
    findings = [Finding(severity, issue) for issue in outcome.violations]
    findings += [Finding(Severity.INFO, issue) for issue in outcome.notes]
    return CheckResult(spec, severity, outcome.summary or spec.title, tuple(findings), outcome.skipped)


def _unreadable(plan_file: str, policy: Policy, message: str) -> CheckReport:
    """A file that is not a reassignment at all: plan.format fails, nothing else can run."""
    results = []
    for spec in CHECKS:
        if spec.id == "plan.format":
            outcome = Outcome(summary="The file is not Kafka reassignment JSON", violations=[Issue(message)])
        else:
            outcome = Outcome(skipped="the plan could not be read (see plan.format)")
        results.append(_result(spec, policy, outcome))
    return CheckReport(plan_file, policy.failing, tuple(results), {"file": plan_file, "readable": False})


def check_plan(
    image: Image,
    plan_text: str,
    policy: Policy,
    *,
    plan_file: str,
    throttle: int | None = None,
    log_dir_throttle: int | None = None,
) -> CheckReport:
    """Check a reassignment file's text against the cluster and the policy. `throttle` and
    `log_dir_throttle` are the values execute will get (None: the policy's)."""
    inter, local = effective_throttles(policy, throttle, log_dir_throttle)
    # A plan of hundreds of thousands of partitions is millions of small acyclic objects, which
    # live until the report is written: the cyclic collector would rescan them over and over.
    with gc_paused(keep=True):
        try:
            plan = parse_reassignment_json(plan_text)
        except UserError as exc:
            return _unreadable(plan_file, policy, exc.message.removeprefix("Error: "))
        cluster = scan_cluster(image)
        facts = scan_plan(image, plan, cluster)
    ctx = Context(image, plan, cluster, facts, policy, inter, local)
    results: list[CheckResult] = []
    estimate: Estimate | None = None
    for spec in CHECKS:
        if spec.id == "duration.estimate":
            outcome, estimate = check_duration(ctx)
        else:
            outcome = CHECK_FUNCTIONS[spec.id](ctx)
        results.append(_result(spec, policy, outcome))
    return CheckReport(plan_file, policy.failing, tuple(results), plan_summary(plan_file, plan, ctx), estimate_json(estimate))


def plan_summary(plan_file: str, plan: ReassignmentPlan, ctx: Context) -> dict[str, Any]:
    facts = ctx.facts
    incoming, outgoing, local = move_counts(facts)
    return {
        "file": plan_file,
        "readable": True,
        "partitions": len(plan.targets()),
        "partitionsFound": facts.count,
        "replicasAdded": int(facts.t_new.sum()),
        "replicasRemoved": int(facts.removed.sum()),
        "directoryMoves": int(facts.t_moving.sum()),
        "bytesBetweenBrokers": ctx.inter_bytes,
        "bytesBetweenDirectories": ctx.intra_bytes,
        "brokersInvolved": len({*incoming, *outgoing, *local}),
        "throttle": ctx.throttle if ctx.throttle >= 0 else None,
        "replicaAlterLogDirsThrottle": ctx.log_dir_throttle if ctx.log_dir_throttle >= 0 else None,
    }


def estimate_json(estimate: Estimate | None) -> dict[str, Any] | None:
    if estimate is None:
        return None
    return {
        "method": estimate.method,
        "durationMs": estimate.duration_ms,
        "duration": None if estimate.duration_ms is None else format_duration(estimate.duration_ms),
        "lowerBound": estimate.method == "bandwidth",
        "bottleneck": estimate.bottleneck,
        "blocked": [b.to_json() for b in estimate.blocked],
        "otherCopiesInProgress": estimate.other_copies,
    }
