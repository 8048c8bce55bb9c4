"""The checks `kjbod reassign check` runs, and what each one finds.

Every check has a stable id (CI systems and policies refer to it), a default severity the policy
can override, and a description of the rule it applies. A check produces findings: violations
carry the check's severity, notes are always `info` (something worth knowing that is not a
problem in itself, such as a directory left to the broker's choice). The gate fails when a
finding's severity is one the policy fails on.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any


class Severity(IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        return cls[text.upper()]


@dataclass(frozen=True)
class CheckSpec:
    id: str
    title: str
    severity: Severity
    description: str


CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(
        "plan.format",
        "The file is a reassignment that `reassign execute` accepts",
        Severity.ERROR,
        "The file is read exactly as kafka-reassign-partitions reads it (Jackson's strictness, `version` 1, `partitions` "
        "with `topic`, `partition`, `replicas` and optional `log_dirs` of the same length) and passes execute's own "
        "validation: a non-empty list, no empty replica list, no partition twice, no broker twice in a replica list. "
        "Kafka's message is reported. Its severity cannot be lowered: execute refuses such a plan.",
    ),
    CheckSpec(
        "topic.exists",
        "Every topic and partition exists",
        Severity.ERROR,
        "Every topic of the plan exists in the cluster and has the partition named (Kafka: `Topic <t> not found.`, "
        "`Unable to find partition: <t>-<p>`).",
    ),
    CheckSpec(
        "broker.eligible",
        "Target brokers are registered and not fenced, shutting down or being removed",
        Severity.ERROR,
        "Every broker of a target replica list is registered (Kafka: `Unknown broker id <id>`), unfenced and not in "
        "controlled shutdown (a replica there cannot catch up, so the reassignment would never complete), and not one "
        "of the policy's `removing_brokers`. A broker being removed that keeps replicas the plan does not move is "
        "noted.",
    ),
    CheckSpec(
        "logdir.valid",
        'Every log_dirs entry is "any" or a usable directory of its broker',
        Severity.ERROR,
        "An explicit log_dirs entry must be a log directory of that broker (by path), online, and not cordoned when "
        "a replica moves into it (KIP-858: cordoned directories take no new replicas). A replica can only move "
        "between directories when its current directory is online and, as Kafka's brokers do, when none of the "
        'broker\'s directories is offline. A new replica with "any" needs an online, uncordoned directory on its '
        "broker.",
    ),
    CheckSpec(
        "rf.unchanged",
        "Replication factors stay the same",
        Severity.ERROR,
        "A partition's target replica list is as long as its current one, unless the policy's "
        "`replication_factor.allowed_changes` allows the increase or decrease.",
    ),
    CheckSpec(
        "rack.rule",
        "Replicas are spread over racks as the policy requires",
        Severity.ERROR,
        'A rack failure takes out every replica in it, so with `racks.mode = "spread"` no rack may hold more than '
        "ceil(replication factor / racks) replicas of a moving partition: one each while there are at least as many "
        "racks as replicas, as evenly as they allow otherwise (Kafka's rack-aware goal). The racks are those of the "
        'registered, unfenced brokers not being removed. With "no-worse" a partition may not end with more '
        'replicas in one rack than it has now (unless that is still an even spread). "off" skips the check, as does '
        "a cluster whose brokers have no rack. A broker without a rack counts as a rack of its own.",
    ),
    CheckSpec(
        "capacity.threshold",
        "No directory ends above its capacity threshold",
        Severity.ERROR,
        "Directory usage once the plan (and every move already in flight) completes, from partition sizes: each "
        "replica counts the whole partition in the directory it ends in. A directory the plan adds to must end at "
        'or below `limits.capacity_threshold` of its capacity. A new replica with "any" on a broker with several '
        "directories is placed by the broker (KIP-858); the check assumes the least-used (by fraction of capacity) "
        "online, uncordoned directory and notes it. Directories without a known capacity are noted and skipped.",
    ),
    CheckSpec(
        "isr.min-insync",
        "No partition drops below min.insync.replicas while it moves",
        Severity.ERROR,
        'min.insync.replicas is the topic\'s config, else the cluster default (broker resource ""), else 1. While a '
        "move is in flight the replicas being added are not in sync yet; only the current in-sync replicas that "
        "stay in the target count. A partition's move is unsafe when fewer than min.insync.replicas of its current "
        "in-sync replicas stay (more than RF - min.insync.replicas in-sync replicas leave at once): a failure during "
        "the move, or the end of it, leaves it unable to take acks=all writes. A target replication factor below "
        "min.insync.replicas is unsafe for good.",
    ),
    CheckSpec(
        "isr.concurrent-moves",
        "A batch does not drain replicas of one partition from several places at once",
        Severity.ERROR,
        "The brokers this plan drains (it leaves them empty, or they are in `removing_brokers`) and the cordoned "
        "directories it empties (KIP-858 disk decommissioning) are stopped or replaced together once it completes, "
        "and a drain that fails half-way leaves them holding replicas. Never take down two of them whose replica sets "
        "overlap: a partition with in-sync replicas in two or more of them must keep min.insync.replicas in-sync "
        "replicas elsewhere. Partitions the plan leaves on two brokers being removed count too.",
    ),
    CheckSpec(
        "limits.moves-per-broker",
        "Replica moves per broker stay within the policy's limit",
        Severity.ERROR,
        "Per broker: replicas the plan adds to it, replicas it removes from it and replicas it moves between its "
        "directories, against `limits.max_moves_per_broker`. Skipped when the policy sets no limit.",
    ),
    CheckSpec(
        "limits.bytes",
        "Bytes moved stay within the policy's limits",
        Severity.ERROR,
        "Bytes copied (each new replica and each move between directories copies its partition) in total against "
        "`limits.max_bytes`, and into each broker against `limits.max_bytes_per_broker`. Skipped when the policy sets "
        "neither.",
    ),
    CheckSpec(
        "throttle.required",
        "A large plan runs under a throttle",
        Severity.WARNING,
        "When the plan copies more than `throttle.required_above_bytes` between brokers, execute must be given "
        "--throttle (an unthrottled move competes with client traffic); likewise for moves between directories and "
        "--replica-alter-log-dirs-throttle. The values come from check's options, else the policy's `throttle` "
        "section.",
    ),
    CheckSpec(
        "throttle.orphaned",
        "No throttles are left over from an earlier reassignment",
        Severity.ERROR,
        "Throttle configs (leader/follower.replication.throttled.rate, replica.alter.log.dirs.io.max.bytes.per.second "
        "on brokers; leader/follower.replication.throttled.replicas on topics) stay until a `reassign verify` sees "
        "the reassignment complete. Left behind, they silently cap later replication, including recovery after a "
        "failure. Throttles of a topic or broker with a reassignment or directory move in progress are not "
        "leftovers.",
    ),
    CheckSpec(
        "reassign.in-progress",
        "No other reassignment is in progress",
        Severity.WARNING,
        "Kafka's execute refuses to start while any partition is being reassigned unless given --additional, and a "
        "partition of the plan that is moving already gets a new target mid-flight.",
    ),
    CheckSpec(
        "reassign.record-limit",
        "Execute can start every partition of the plan in one request",
        Severity.WARNING,
        "Kafka's controller writes at most MAX_RECORDS_PER_USER_OP (10000) records for one request, one per partition "
        "whose replicas change (a partition already at its target writes none). Past that, `reassign execute` starts "
        "the partitions that fit, in the file's order, and fails the rest with UNKNOWN_SERVER_ERROR. Such a plan "
        "belongs in waves of at most 10000 partitions (`reassign plan --wave-size N`), executed one after another.",
    ),
    CheckSpec(
        "duration.estimate",
        "The plan completes within the policy's time",
        Severity.WARNING,
        "The plan applied to an in-memory copy of the cluster exactly as `reassign execute` does (with the same "
        "throttle configs), then the copy model run until idle (`clock advance --until-idle`), nothing written. "
        "Plans too large to simulate within seconds get a bandwidth estimate instead: for every broker, the bytes "
        "it receives, sends as leader and moves between its directories over the link rate and throttles that "
        "apply (a lower bound that the simulation matches when one broker is the bottleneck). Fails when the "
        "estimate exceeds `limits.max_duration` or a copy can never complete.",
    ),
)

CHECK_IDS: dict[str, CheckSpec] = {spec.id: spec for spec in CHECKS}


@dataclass(frozen=True)
class DirectoryRef:
    broker: int
    directory_id: str
    path: str | None

    @property
    def label(self) -> str:
        return f"{self.broker}:{self.path or self.directory_id}"

    def to_json(self) -> dict[str, Any]:
        return {"broker": self.broker, "path": self.path, "directoryId": self.directory_id}


@dataclass(frozen=True)
class Issue:
    """What a check found, before the policy gives it a severity. Involved items are sorted."""

    message: str
    partitions: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    brokers: tuple[int, ...] = ()
    directories: tuple[DirectoryRef, ...] = ()


@dataclass
class Outcome:
    """A check's result: a one-line summary, violations, notes, or why it did not apply."""

    summary: str = ""
    violations: list[Issue] = field(default_factory=list)
    notes: list[Issue] = field(default_factory=list)
    skipped: str | None = None


@dataclass(frozen=True)
class Finding:
    severity: Severity
    issue: Issue

    def to_json(self) -> dict[str, Any]:
        issue = self.issue
        return {
            "severity": self.severity.label,
            "message": issue.message,
            "partitions": list(issue.partitions),
            "topics": list(issue.topics),
            "brokers": list(issue.brokers),
            "directories": [d.to_json() for d in issue.directories],
        }


@dataclass(frozen=True)
class CheckResult:
    spec: CheckSpec
    severity: Severity  # the check's severity under the policy
    summary: str
    findings: tuple[Finding, ...] = ()
    skipped: str | None = None

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), default=None)

    def failed(self, fail_on: frozenset[Severity]) -> bool:
        return any(f.severity in fail_on for f in self.findings)


def sorted_unique(items: Iterable[Any], key: Any = None) -> tuple[Any, ...]:
    return tuple(sorted(set(items), key=key))


def truncated(items: Sequence[Any], limit: int = 10) -> str:
    """`a, b, c (+7 more)`."""
    shown = ", ".join(str(i) for i in items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")
