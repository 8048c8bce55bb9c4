"""The plan checker as a library: the policy file, the columns the checks read, the estimates
and the reports (the CLI tests make each check fail and pass)."""

from __future__ import annotations

import json
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from kjbod.controller import Controller
from kjbod.controller.replication_control import CreateTopicRequest, HeartbeatRequest
from kjbod.errors import UserError
from kjbod.image import Image, replay_all
from kjbod.records import KjbodLogDir, KjbodPartitionSizeRecord
from kjbod.tools.plan_check import (
    CHECK_IDS,
    Policy,
    Severity,
    check_plan,
    default_policy_toml,
    effective_throttles,
    parse_policy,
)
from kjbod.tools.plan_check.checks import Context
from kjbod.tools.plan_check.duration import bandwidth_estimate, simulate_plan
from kjbod.tools.plan_check.facts import BROKER_CHOOSES, scan_cluster, scan_plan
from kjbod.tools.reassign.json_format import parse_reassignment_json
from tests.controller.support import apply, bootstrap, new_dir, registration

GIB = 2**30
RACKS = {1: "r1", 2: "r0", 3: "r1", 4: "r0", 5: "r1"}
SIZES = {0: 10 * GIB, 1: 20 * GIB, 2: 30 * GIB, 3: 40 * GIB}


def build_cluster(capacity: int | None = 500 * GIB) -> Image:
    """Brokers 1-5 (racks r1: 1, 3, 5; r0: 2, 4), two directories of `capacity` each at
    /data/bN/d1 and d2; topic t: 4 partitions of RF 2 on 1:2, 2:3, 3:4, 4:1 (10-40 GiB); broker 5 empty."""
    image = bootstrap()
    for broker, rack in RACKS.items():
        dirs = [new_dir(), new_dir()]
        request = registration(broker, dirs, rack)
        request = replace(
            request,
            log_dirs=tuple(KjbodLogDir(directory_id=d, path=f"/data/b{broker}/d{i}", capacity_bytes=capacity) for i, d in enumerate(dirs, 1)),
        )
        image = apply(image, Controller(image).cluster.register_broker(request))
        image = apply(image, Controller(image).replication.heartbeat(HeartbeatRequest(broker)))
    image = apply(image, Controller(image).replication.create_topic(CreateTopicRequest("t", assignment=((1, 2), (2, 3), (3, 4), (4, 1)))))
    for broker in RACKS:
        image = apply(image, Controller(image).replication.auto_assign_dirs(broker))
    topic_id = image.topics.by_name["t"].topic_id
    return replay_all(image, [KjbodPartitionSizeRecord(topic_id=topic_id, partition_id=p, size_bytes=s) for p, s in SIZES.items()])


CLUSTER = build_cluster()


def plan_text(*partitions: tuple) -> str:
    entries = []
    for topic, partition, replicas, *dirs in partitions:
        entry = {"topic": topic, "partition": partition, "replicas": replicas}
        if dirs:
            entry["log_dirs"] = dirs[0]
        entries.append(entry)
    return json.dumps({"version": 1, "partitions": entries})


def directory_of(image: Image, broker: int, path: str) -> str:
    return next(d.directory_id for d in image.cluster.log_dirs[broker] if d.path == path)


# The policy ---------------------------------------------------------------------------------------


def test_the_default_policy_file_reads_back_as_the_default_policy() -> None:
    text = default_policy_toml()
    assert parse_policy(text) == Policy()
    # Every key of the model appears, set or commented out, under its table.
    for name in Policy.model_fields:
        value = getattr(Policy(), name)
        if isinstance(value, BaseModel):
            assert f"\n[{name}]\n" in text
            for key in type(value).model_fields:
                assert f"\n{key} = " in text or f"\n# {key} = " in text, key
        elif name != "severities":
            assert f"\n{name} = " in text
    # Every check id is listed with its default severity.
    for check_id, spec in CHECK_IDS.items():
        assert f'# "{check_id}" = "{spec.severity.label}"\n' in text


policies = st.builds(
    dict,
    fail_on=st.lists(st.sampled_from(["info", "warning", "error"]), unique=True, min_size=1),
    removing_brokers=st.lists(st.integers(0, 2**31 - 1), max_size=4),
    limits=st.fixed_dictionaries(
        {"capacity_threshold": st.floats(0.01, 1.0)},
        optional={
            "max_moves_per_broker": st.integers(1, 10**6),
            "max_bytes": st.integers(0, 2**62),
            "max_duration": st.sampled_from(["90", "15m", "12h", "2d", "250ms"]),
        },
    ),
    racks=st.fixed_dictionaries({"mode": st.sampled_from(["off", "no-worse", "spread"])}),
    replication_factor=st.fixed_dictionaries({"allowed_changes": st.lists(st.sampled_from(["increase", "decrease"]), unique=True)}),
    throttle=st.fixed_dictionaries({}, optional={"rate": st.integers(0, 2**40), "required_above_bytes": st.integers(0, 2**50)}),
    severities=st.dictionaries(st.sampled_from([c for c in CHECK_IDS if c != "plan.format"]), st.sampled_from(["info", "warning", "error"])),
)


@given(policies)
def test_any_policy_written_as_toml_reads_back_the_same(document: dict) -> None:
    policy = parse_policy(tomli_w.dumps(document))
    assert policy.model_dump(exclude_none=True, exclude_defaults=True) == Policy.model_validate(document).model_dump(
        exclude_none=True, exclude_defaults=True
    )
    assert policy.limits.capacity_threshold == document["limits"]["capacity_threshold"]
    assert policy.failing == frozenset(Severity.parse(s) for s in document["fail_on"])
    for check_id in CHECK_IDS:
        expected = document["severities"].get(check_id, CHECK_IDS[check_id].severity.label)
        assert policy.severity_of(check_id).label == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[limits]\ncapacity_threshold = 0.8\nmax_move = 3\n", "Invalid policy p.toml: limits.max_move (line 3): unknown key"),
        ("[limits]\ncapacity_threshold = 1.5\n", "Invalid policy p.toml: limits.capacity_threshold (line 2): should be less than or equal to 1"),
        (
            "[limits]\nmax_moves_per_broker = true\n",
            "Invalid policy p.toml: limits.max_moves_per_broker (line 2): should be a valid integer, not True",
        ),
        (
            '[limits]\nmax_duration = "soon"\n',
            "Invalid policy p.toml: limits.max_duration (line 2): 'soon' is not a duration: use a number with a unit ms, s, m, h or d, e.g. 12h",
        ),
        ('fail_on = ["fatal"]\n', "Invalid policy p.toml: fail_on (line 1): should be 'info', 'warning' or 'error'"),
        ("limits = 3\n", "Invalid policy p.toml: limits (line 1): should be a table"),
        ('[racks]\nmode = "strict"\n', "Invalid policy p.toml: racks.mode (line 2): should be 'off', 'no-worse' or 'spread'"),
        (
            '[severities]\n"plan.format" = "warning"\n',
            "Invalid policy p.toml: severities (line 1): the severity of plan.format cannot be changed: execute refuses such a plan",
        ),
        ("[limits\n", "Invalid policy p.toml: Expected ']' at the end of a table declaration (at line 1, column 8)"),
        # Issue 20: numbers past their Java type overflowed the checks' int64 arrays.
        ("removing_brokers = [9223372036854775808]\n", "Invalid policy p.toml: removing_brokers (line 1): should be less than or equal to 2147483647"),
        ("removing_brokers = [3, -1]\n", "Invalid policy p.toml: removing_brokers (line 1): should be greater than or equal to 0"),
        (
            "[limits]\nmax_moves_per_broker = 2147483648\n",
            "Invalid policy p.toml: limits.max_moves_per_broker (line 2): should be less than or equal to 2147483647",
        ),
        (
            "[throttle]\nrate = 9223372036854775808\n",
            "Invalid policy p.toml: throttle.rate (line 2): should be less than or equal to 9223372036854775807",
        ),
        (
            '[limits]\nmax_bytes = "99999999999TiB"\n',
            "Invalid policy p.toml: limits.max_bytes (line 2): '99999999999TiB' is too large: at most 9223372036854775807 bytes (8 EiB)",
        ),
    ],
)
def test_policy_errors_name_the_key_and_its_line(text: str, message: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_policy(text, "p.toml")
    assert caught.value.message == message


def test_an_unknown_check_id_in_severities_is_refused_with_the_list_of_checks() -> None:
    with pytest.raises(UserError) as caught:
        parse_policy('[severities]\n\n"rack.rules" = "warning"\n', "p.toml")
    assert caught.value.message == 'Invalid policy p.toml: severities."rack.rules" (line 3): unknown check id; the checks are ' + ", ".join(CHECK_IDS)


def test_throttles_come_from_the_options_else_the_policy() -> None:
    policy = parse_policy("[throttle]\nrate = 5000\nreplica_alter_log_dirs_rate = 7000\n")
    assert effective_throttles(policy, None, None) == (5000, 7000)
    assert effective_throttles(policy, 10, -1) == (10, -1)
    assert effective_throttles(Policy(), None, None) == (-1, -1)


# The columns ------------------------------------------------------------------------------------


def test_the_cluster_scan_sums_partition_sizes_per_directory() -> None:
    cluster = scan_cluster(CLUSTER)
    expected: dict[str, int] = {}
    for topic, partition_id, p in CLUSTER.topics.partitions():
        for directory in p.directories:
            expected[directory] = expected.get(directory, 0) + topic.size(partition_id)
    found = {cluster.model.dir_ids[i]: int(cluster.used[i]) for i in range(len(cluster.model.dir_ids)) if cluster.used[i]}
    assert found == expected
    assert sum(cluster.replicas.tolist()) == 8
    assert cluster.broker_replicas() == {1: 2, 2: 2, 3: 2, 4: 2, 5: 0}


def test_a_move_between_directories_in_flight_counts_where_it_ends() -> None:
    """Broker 1's replica of t-0 is being moved to its other directory (KIP-113): the scan counts
    its bytes there, and a plan that keeps the replica starts from there."""
    from kjbod.records import KjbodReplicaLogRecord

    t = CLUSTER.topics.by_name["t"]
    now = t.partitions[0].directory(1)
    other = next(d.directory_id for d in CLUSTER.cluster.log_dirs[1] if d.directory_id != now)
    image = replay_all(
        CLUSTER, [KjbodReplicaLogRecord(topic_id=t.topic_id, partition_id=0, broker_id=1, future=True, directory_id=other, size_bytes=1)]
    )
    before, cluster = scan_cluster(CLUSTER), scan_cluster(image)
    index = cluster.model.dir_index
    assert int(cluster.used[index[now]]) == int(before.used[index[now]]) - SIZES[0]
    assert int(cluster.used[index[other]]) == int(before.used[index[other]]) + SIZES[0]
    assert int(cluster.replicas[index[other]]) == int(before.replicas[index[other]]) + 1
    assert cluster.copying == 1 and cluster.moving_brokers == {1}
    facts = scan_plan(image, parse_reassignment_json(plan_text(("t", 0, [1, 2]))), cluster)
    assert [cluster.model.dir_ids[d] for d in facts.c_dir.tolist()] == [other, t.partitions[0].directory(2)]


def test_the_plan_scan_lines_up_target_current_and_in_sync_replicas() -> None:
    plan = parse_reassignment_json(
        plan_text(("t", 0, [5, 2], ["/data/b5/d2", "any"]), ("t", 1, [2, 3], ["/data/b2/d1", "/data/b3/d2"]), ("x", 0, [1]))
    )
    cluster = scan_cluster(CLUSTER)
    facts = scan_plan(CLUSTER, plan, cluster)
    assert facts.unknown_topics == ["x"]
    assert facts.tps == [("t", 0), ("t", 1)]
    assert facts.t_row.tolist() == [0, 0, 1, 1]
    assert facts.t_broker.tolist() == [5, 2, 2, 3]
    assert facts.t_new.tolist() == [True, False, False, False]
    assert facts.c_kept.tolist() == [False, True, True, True]
    assert facts.isr_kept.tolist() == [1, 2]
    assert facts.changes_set.tolist() == [True, False]
    p1 = CLUSTER.topics.by_name["t"].partitions[1]
    assert [cluster.model.dir_ids[d] for d in facts.t_from.tolist()[1:]] == [
        CLUSTER.topics.by_name["t"].partitions[0].directory(2),
        p1.directory(2),
        p1.directory(3),
    ]
    assert cluster.model.dir_ids[facts.t_dir[0]] == directory_of(CLUSTER, 5, "/data/b5/d2")
    # Broker 3's replica of t-1 moves to d2 unless it is there already.
    moves = p1.directory(3) != directory_of(CLUSTER, 3, "/data/b3/d2")
    assert facts.t_moving.tolist() == [False, False, p1.directory(2) != directory_of(CLUSTER, 2, "/data/b2/d1"), moves]


def test_any_on_a_new_replica_is_left_to_the_broker_and_placed_on_its_least_used_directory() -> None:
    plan = parse_reassignment_json(plan_text(("t", 3, [4, 5]), ("t", 2, [3, 5])))
    cluster = scan_cluster(CLUSTER)
    facts = scan_plan(CLUSTER, plan, cluster)
    assert facts.t_dir.tolist()[1] == facts.t_dir.tolist()[3] == BROKER_CHOOSES
    context = Context(CLUSTER, plan, cluster, facts, Policy(), -1, -1)
    used, _, added, _ = context.placement
    d1, d2 = (cluster.model.dir_index[directory_of(CLUSTER, 5, f"/data/b5/d{i}")] for i in (1, 2))
    # t-3 (40 GiB) goes to d1 (both empty, d1's path sorts first), then t-2 (30 GiB) to the emptier d2.
    assert (int(added[d1]), int(added[d2])) == (40 * GIB, 30 * GIB)
    assert (int(used[d1]), int(used[d2])) == (40 * GIB, 30 * GIB)


# Estimates --------------------------------------------------------------------------------------


def test_simulation_and_bandwidth_agree_on_a_single_bottleneck() -> None:
    # Everything into broker 5 at 100 MiB/s: 100 GiB in 1024 s.
    text = plan_text(("t", 0, [5, 2]), ("t", 1, [2, 5]), ("t", 2, [5, 4]), ("t", 3, [4, 5]))
    plan = parse_reassignment_json(text)
    cluster = scan_cluster(CLUSTER)
    facts = scan_plan(CLUSTER, plan, cluster)
    simulated = simulate_plan(CLUSTER, plan, -1, -1)
    bandwidth = bandwidth_estimate(CLUSTER, plan, facts, cluster, -1, -1)
    assert simulated.duration_ms == bandwidth.duration_ms == 1_024_000
    assert bandwidth.bottleneck == "broker 5's inbound link (100.0 MiB/s)"
    throttled = bandwidth_estimate(CLUSTER, plan, facts, cluster, 50 * 2**20, -1)
    assert throttled.duration_ms == simulate_plan(CLUSTER, plan, 50 * 2**20, -1).duration_ms == 2_048_000


brokers = st.integers(1, 6)  # 6 is not registered
log_dir = st.sampled_from(["any", "any", "/data/b1/d1", "/data/b2/d2", "/data/b5/d1", "/data/b5/d2", "/nowhere"])


@st.composite
def random_plans(draw: st.DrawFn) -> str:
    partitions = []
    for _ in range(draw(st.integers(0, 5))):
        replicas = draw(st.lists(brokers, min_size=0, max_size=4))
        entry = {"topic": draw(st.sampled_from(["t", "t", "t", "gone"])), "partition": draw(st.integers(0, 4)), "replicas": replicas}
        if draw(st.booleans()):
            entry["log_dirs"] = [draw(log_dir) for _ in replicas]
        partitions.append(entry)
    return json.dumps({"version": 1, "partitions": partitions})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_plans(), st.sampled_from([-1, 0, 10 * 2**20]))
def test_any_plan_gets_a_complete_consistent_report(text: str, throttle: int) -> None:
    report = check_plan(CLUSTER, text, Policy(), plan_file="p.json", throttle=throttle)
    assert [r.spec.id for r in report.results] == list(CHECK_IDS)
    failing = [r.spec.id for r in report.results if any(f.severity is Severity.ERROR for f in r.findings)]
    assert report.passed == (not failing)
    document = report.to_json()
    assert json.loads(json.dumps(document)) == document
    assert document["failedChecks"] == failing
    root = ET.fromstring(report.junit())
    assert int(root.get("failures")) == len(failing)
    assert report.lines()[1].startswith("Plan check PASSED" if report.passed else "Plan check FAILED")


@st.composite
def executable_plans(draw: st.DrawFn) -> str:
    """Plans execute accepts: existing partitions once each, registered brokers, their paths."""
    partitions = []
    for partition in draw(st.lists(st.integers(0, 3), unique=True, min_size=1, max_size=4)):
        replicas = draw(st.lists(st.integers(1, 5), unique=True, min_size=1, max_size=3))
        dirs = [draw(st.sampled_from(["any", f"/data/b{b}/d1", f"/data/b{b}/d2"])) for b in replicas]
        partitions.append({"topic": "t", "partition": partition, "replicas": replicas, "log_dirs": dirs})
    return json.dumps({"version": 1, "partitions": partitions})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(executable_plans(), st.sampled_from([-1, 20 * 2**20]), st.sampled_from([-1, 30 * 2**20]))
def test_the_bandwidth_estimate_never_exceeds_the_simulation(text: str, throttle: int, log_dir_throttle: int) -> None:
    plan = parse_reassignment_json(text)
    simulated = simulate_plan(CLUSTER, plan, throttle, log_dir_throttle)
    assert not isinstance(simulated, str) and simulated.duration_ms is not None
    cluster = scan_cluster(CLUSTER)
    bandwidth = bandwidth_estimate(CLUSTER, plan, scan_plan(CLUSTER, plan, cluster), cluster, throttle, log_dir_throttle)
    assert bandwidth.duration_ms is not None and bandwidth.duration_ms <= simulated.duration_ms


# Reports ----------------------------------------------------------------------------------------


def test_a_policy_failing_on_warnings_turns_a_warning_into_a_failure() -> None:
    # 40 GiB between brokers with no throttle: throttle.required warns.
    text = plan_text(("t", 3, [4, 5], ["any", "/data/b5/d1"]))
    lenient = check_plan(CLUSTER, text, Policy(), plan_file="p")
    strict = check_plan(CLUSTER, text, parse_policy('fail_on = ["warning", "error"]\n'), plan_file="p")
    assert lenient.passed and not strict.passed
    assert [r.spec.id for r in strict.failed_checks()] == ["throttle.required"]
    junit = ET.fromstring(strict.junit())
    case = next(c for c in junit.iter("testcase") if c.get("name") == "throttle.required")
    assert case.find("failure").get("type") == "warning"
    assert tomllib.loads(default_policy_toml())["fail_on"] == ["error"]


def test_byte_counts_in_the_policy_may_carry_units() -> None:
    policy = parse_policy('[limits]\nmax_bytes = "1.5TiB"\nmax_bytes_per_broker = "500GB"\n[throttle]\nrate = "50MiB"\n')
    assert (policy.limits.max_bytes, policy.limits.max_bytes_per_broker, policy.throttle.rate) == (3 * 2**39, 500 * 10**9, 50 * 2**20)
    with pytest.raises(UserError) as caught:
        parse_policy('[throttle]\nrate = "fast"\n', "p.toml")
    assert (
        caught.value.message
        == "Invalid policy p.toml: throttle.rate (line 2): 'fast' is not a byte count: give bytes, optionally with a unit (500GB, 1.5TiB)"
    )


# Racks ------------------------------------------------------------------------------------------


def test_with_fewer_racks_than_replicas_the_spread_is_as_even_as_the_racks_allow() -> None:
    # Two racks (r1: 1, 3, 5; r0: 2, 4) and three replicas: at most two in one rack.
    crowded = check_plan(CLUSTER, plan_text(("t", 0, [1, 3, 5])), Policy(), plan_file="p")
    rack = next(r for r in crowded.results if r.spec.id == "rack.rule")
    assert [f.issue.message for f in rack.findings] == ["1 partition would put too many replicas in one rack: t-0 (3 in r1, at most 2)"]
    even = check_plan(CLUSTER, plan_text(("t", 0, [1, 2, 3])), Policy(), plan_file="p")
    assert next(r for r in even.results if r.spec.id == "rack.rule").findings == ()
    # Brokers being removed take their racks out of the count: with r0 gone, one rack is all there is.
    removing = parse_policy("removing_brokers = [2, 4]\n")
    alone = check_plan(CLUSTER, plan_text(("t", 0, [1, 3, 5])), removing, plan_file="p")
    assert next(r for r in alone.results if r.spec.id == "rack.rule").findings == ()


def test_capacity_notes_directories_it_cannot_judge_and_those_already_full() -> None:
    move = plan_text(("t", 0, [5, 2], ["/data/b5/d1", "any"]))
    unknown = check_plan(build_cluster(capacity=None), move, Policy(), plan_file="p")
    result = next(r for r in unknown.results if r.spec.id == "capacity.threshold")
    assert result.summary == "The plan adds to no directory with a known capacity"
    assert [(f.severity, f.issue.message) for f in result.findings] == [
        (Severity.INFO, "No capacity known for 1 directory the plan adds to; not checked: 5:/data/b5/d1"),
    ]
    # 30 GiB disks: the directories holding t-2 (30 GiB) or t-3 (40 GiB) are above 80% (24 GiB).
    small = build_cluster(capacity=30 * GIB)
    full = check_plan(small, move, Policy(), plan_file="p")
    result = next(r for r in full.results if r.spec.id == "capacity.threshold")
    assert result.summary == "Fullest directory the plan adds to: 5:/data/b5/d1 at 33.3% (threshold 80.0%)"
    over = sorted(
        f"{b}:{d.path}"
        for b, dirs in small.cluster.log_dirs.items()
        for d in dirs
        if sum(small.topics.by_name["t"].size(pid) for pid, p in small.topics.by_name["t"].partitions.items() if d.directory_id in p.directories)
        > 0.8 * 30 * GIB
    )
    assert [(f.severity, f.issue.message) for f in result.findings] == [
        (Severity.INFO, f"{len(over)} directories stay above the threshold; the plan adds nothing to them: {', '.join(over)}"),
    ]
