"""Run every check of a plan against a cluster image and a policy; or of a sequence of plans
(waves), each against the cluster as the ones before it leave it."""

from __future__ import annotations

from collections.abc import Sequence

from kjbod.common.callbacks import gc_paused
from kjbod.errors import UserError
from kjbod.image import Image
from kjbod.common.kafka_release import NEWEST, KafkaRelease
from kjbod.tools.plan_check.checks import CHECK_FUNCTIONS, Context, check_duration, move_counts
from kjbod.common.java import TopicPartition
from kjbod.tools.plan_check.duration import SIMULATION_BUDGET, Estimate, replay_work
from kjbod.tools.plan_check.facts import Completed, after_plan, scan_cluster, scan_plan
from kjbod.tools.plan_check.model import CHECKS, CheckResult, CheckSpec, Finding, Issue, Outcome, Severity
from kjbod.tools.plan_check.policy import Policy
from kjbod.tools.plan_check.reports import CheckReport, PlanSummary, SequenceReport
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
    return CheckReport(plan_file, policy.failing, tuple(results), PlanSummary(plan_file, readable=False))


def check_plan(
    image: Image,
    plan_text: str,
    policy: Policy,
    *,
    plan_file: str,
    throttle: int | None = None,
    log_dir_throttle: int | None = None,
    release: KafkaRelease = NEWEST,
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
    return _run_checks(Context(image, plan, cluster, facts, policy, inter, local, release=release), plan_file)


def _run_checks(ctx: Context, plan_file: str) -> CheckReport:
    results: list[CheckResult] = []
    estimate: Estimate | None = None
    for spec in CHECKS:
        if spec.id == "duration.estimate":
            outcome, estimate = check_duration(ctx)
        else:
            outcome = CHECK_FUNCTIONS[spec.id](ctx)
        results.append(_result(spec, ctx.policy, outcome))
    return CheckReport(plan_file, ctx.policy.failing, tuple(results), plan_summary(plan_file, ctx.plan, ctx), estimate)


def check_sequence(
    image: Image,
    plans: Sequence[tuple[str, str]],
    policy: Policy,
    *,
    throttle: int | None = None,
    log_dir_throttle: int | None = None,
    release: KafkaRelease = NEWEST,
) -> SequenceReport:
    """Check plans (file name, text) one after another: the first against the image, each next
    one against the cluster once the ones before it complete (directory usage, and the replicas
    of partitions they moved). A file that cannot be read fails its own report and changes
    nothing for the next. The cluster is read once; each plan costs about its own size."""
    inter, local = effective_throttles(policy, throttle, log_dir_throttle)
    parsed: list[tuple[str, ReassignmentPlan | str]] = []
    for plan_file, text in plans:
        try:
            parsed.append((plan_file, parse_reassignment_json(text)))
        except UserError as exc:
            parsed.append((plan_file, exc.message.removeprefix("Error: ")))
    cluster = scan_cluster(image)
    method = policy.estimate.method
    if method == "auto":
        # Simulating every wave costs about what simulating them all at once would: choose once.
        events = sum(2 * plan.columns.count for _, plan in parsed if not isinstance(plan, str)) + cluster.copying
        method = "simulation" if events * replay_work(image) <= SIMULATION_BUDGET else "bandwidth"
    completed: dict[TopicPartition, Completed] = {}
    reports: list[CheckReport] = []
    for plan_file, plan in parsed:
        if isinstance(plan, str):
            reports.append(_unreadable(plan_file, policy, plan))
            continue
        facts = scan_plan(image, plan, cluster, completed)
        ctx = Context(image, plan, cluster, facts, policy, inter, local, completed=completed, estimate_method=method, release=release)
        reports.append(_run_checks(ctx, plan_file))
        used, replicas, _, _ = ctx.placement
        cluster, done = after_plan(facts, cluster, used, replicas)
        completed.update(done)
    return SequenceReport(tuple(reports), policy.failing)


def plan_summary(plan_file: str, plan: ReassignmentPlan, ctx: Context) -> PlanSummary:
    facts = ctx.facts
    incoming, outgoing, local = move_counts(facts)
    return PlanSummary(
        file=plan_file,
        readable=True,
        partitions=len(plan.columns.winners),
        partitions_found=facts.count,
        replicas_added=int(facts.t_new.sum()),
        replicas_removed=int(facts.removed.sum()),
        directory_moves=int(facts.t_moving.sum()),
        bytes_between_brokers=ctx.inter_bytes,
        bytes_between_directories=ctx.intra_bytes,
        brokers_involved=len({*incoming, *outgoing, *local}),
        throttle=ctx.throttle if ctx.throttle >= 0 else None,
        replica_alter_log_dirs_throttle=ctx.log_dir_throttle if ctx.log_dir_throttle >= 0 else None,
    )
