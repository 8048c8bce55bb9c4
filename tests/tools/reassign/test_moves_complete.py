"""Reassignments that move replicas between brokers and between the directories of a broker, as
`reassign execute` starts them and the simulated clock completes them (issue 26): the state
they end in does not depend on how the clock got there, and every move lands where the plan
said, however many of a partition's replicas move at once."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kjbod.controller import Controller
from kjbod.simulation.clock import ClockControl
from kjbod.simulation.copy_model import copies
from kjbod.image import Image, replay_all
from kjbod.tools.reassign.actions import execute
from kjbod.tools.reassign.json_format import parse_reassignment_json

from ...controller.support import apply, bootstrap, with_brokers, with_topic

MIB = 2**20
# Equal sizes make copies complete in the same clock step; 0 completes at once.
SIZES = st.sampled_from([0, MIB, MIB, 10 * MIB, 10 * MIB, 64 * MIB, 3 * MIB + 7])
THROTTLES = st.sampled_from([-1, -1, 10 * MIB, 50 * MIB, 33_333_333])


@st.composite
def reassignments(draw):  # noqa: ANN201
    """A JBOD cluster with its replicas placed, and a reassignment plan that moves some
    partitions to other brokers and some replicas to other directories, named per replica."""
    brokers = draw(st.integers(2, 5))
    image, dirs = with_brokers(bootstrap(), brokers, dirs_each=draw(st.integers(2, 3)))
    entries = []
    for t in range(draw(st.integers(1, 2))):
        rf = draw(st.integers(1, min(3, brokers)))
        count = draw(st.integers(1, 4))
        assignment = tuple(tuple(draw(st.permutations(range(1, brokers + 1)))[:rf]) for _ in range(count))
        image = with_topic(image, f"t{t}", assignment=assignment)
        for p in range(count):
            image = apply(image, Controller(image).replication.set_partition_sizes(f"t{t}", p, draw(SIZES)))
        for p in range(count):
            if not draw(st.booleans()):
                continue
            # Mostly the same brokers (moves between directories), sometimes others (and a new RF).
            if draw(st.booleans()):
                target = list(assignment[p])
            else:
                target = list(draw(st.permutations(range(1, brokers + 1)))[: draw(st.integers(1, min(3, brokers)))])
            log_dirs = [draw(st.sampled_from(["any", *(f"/data/b{b}/d{i}" for i in range(1, len(dirs[b]) + 1))])) for b in target]
            entries.append({"topic": f"t{t}", "partition": p, "replicas": target, "log_dirs": log_dirs})
    assume(entries)
    for broker in range(1, brokers + 1):
        image = apply(image, Controller(image).replication.auto_assign_dirs(broker))
    return image, {"version": 1, "partitions": entries}


def started(image: Image, document: dict, throttle: int, log_dir_throttle: int) -> Image:
    result = execute(Controller(image), parse_reassignment_json(json.dumps(document)), throttle=throttle, log_dir_throttle=log_dir_throttle)
    assert result.response.error is None
    return replay_all(image, result.records)


def in_steps(image: Image, total_ms: int, weights: list[int]) -> Image:
    """The clock advanced in steps that split `total_ms` by `weights`, then by small steps
    until no copy progresses any more (a split run may end a few milliseconds later)."""
    steps = [max(1, total_ms * w // sum(weights)) for w in weights]
    for count in range(1000):
        if not any(c.blocked is None for c in copies(image)):
            return image
        step = steps[count] if count < len(steps) else max(1, total_ms // 100)
        image = replay_all(image, ClockControl(image).advance(step).records)
    raise AssertionError("the copies never completed")


def placement(image: Image) -> dict:
    """Each partition's replicas with their directory paths, leader and ISR, and what is left moving."""
    found = {}
    for topic, pid, p in image.topics.partitions():
        paths = tuple((b, image.cluster.path_of(b, d)) for b, d in zip(p.replicas, p.directories))
        found[(topic.name, pid)] = (paths, p.leader, p.isr, p.adding_replicas, p.removing_replicas)
    futures = {name: dict(topic.replica_logs) for name, topic in image.topics.by_name.items() if any(k[2] for k in topic.replica_logs)}
    return {"partitions": found, "futures": futures}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(reassignments(), THROTTLES, THROTTLES, st.lists(st.integers(1, 1000), min_size=2, max_size=12))
def test_one_step_or_many_the_moves_end_where_the_plan_named(case, throttle: int, log_dir_throttle: int, weights: list[int]) -> None:  # noqa: ANN001
    image, document = case
    start = started(image, document, throttle, log_dir_throttle)
    advance = ClockControl(start).advance_until_idle()
    at_once = replay_all(start, advance.records)
    stepped = in_steps(start, advance.response.now_ms - advance.response.previous_ms, weights)
    assert placement(stepped) == placement(at_once)
    assert placement(at_once)["futures"] == {}
    for entry in document["partitions"]:
        paths, _, isr, adding, removing = placement(at_once)["partitions"][(entry["topic"], entry["partition"])]
        assert [b for b, _ in paths] == entry["replicas"] and sorted(isr) == sorted(entry["replicas"]) and not adding and not removing
        for (broker, path), named in zip(paths, entry["log_dirs"]):
            assert named in ("any", path), f"{entry['topic']}-{entry['partition']} on broker {broker} is in {path}, not {named}"


def test_the_generated_reassignments_exercise_the_cases() -> None:
    """The strategy reaches what the property is about: moves between brokers and between
    directories, several replicas of one partition completing in the same clock step, throttles
    and none."""
    seen: set[str] = set()

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(reassignments(), THROTTLES)
    def survey(case, throttle: int) -> None:  # noqa: ANN001
        image, document = case
        start = started(image, document, throttle, throttle)
        seen.add("throttled" if throttle >= 0 else "unthrottled")
        for entry in document["partitions"]:
            if set(entry["replicas"]) != set(image.topics.by_name[entry["topic"]].partitions[entry["partition"]].replicas):
                seen.add("between brokers")
        completed = ClockControl(start).advance_until_idle().response.completed
        if any(c.future for c in completed):
            seen.add("between directories")
        moments = [(c.time_ms, c.topic, c.partition) for c in completed]
        if len(moments) != len(set(moments)):
            seen.add("several replicas of a partition at once")

    survey()
    assert seen == {"throttled", "unthrottled", "between brokers", "between directories", "several replicas of a partition at once"}
