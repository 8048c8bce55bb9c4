"""`reassign plan`'s request: which options go together, checked in one place and in order."""

from __future__ import annotations

from pathlib import Path

import pytest

from kjbod.errors import UserError
from kjbod.planner import Engine, Goal, WaveLimits
from kjbod.tools.reassign.plan import STDOUT, ReassignPlanRequest


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"goal": Goal.ADD_BROKERS}, "--goal add-brokers needs --broker-list"),
        ({"goal": Goal.BALANCE, "broker_list": "7"}, "--broker-list is for --goal add-brokers or remove-brokers, not balance"),
        ({"goal": Goal.DRAIN_DIRS}, "--goal drain-dirs needs at least one --dir"),
        ({"goal": Goal.BALANCE, "dirs": ["3:/data"]}, "--dir is for --goal drain-dirs, not balance"),
        ({"goal": Goal.BALANCE, "capacity_threshold": 1.5}, "Invalid --capacity-threshold 1.5"),
        ({"goal": Goal.BALANCE, "engine": Engine.LOCAL, "spark_master": "local[2]"}, "--spark-master runs the Spark engine"),
        ({"goal": Goal.BALANCE, "wave_size": 10_001, "output_file": Path("p.json")}, "--wave-size 10001 is more than"),
        ({"goal": Goal.BALANCE, "wave_size": 5}, "Waves are written to files beside --output-file"),
        # The first problem is the one reported, in the order the options are read.
        ({"goal": Goal.BALANCE, "broker_list": "7", "dirs": ["bad"]}, "--broker-list is for --goal"),
        ({"goal": Goal.BALANCE, "dirs": ["bad"], "capacity_threshold": 0}, 'Invalid --dir "bad"'),
    ],
)
def test_options_that_do_not_go_together_are_refused(options: dict, message: str) -> None:
    with pytest.raises(UserError) as raised:
        ReassignPlanRequest.parse(**options)
    assert message in raised.value.message


def test_a_request_reads_the_command_line_values() -> None:
    request = ReassignPlanRequest.parse(
        goal=Goal.DRAIN_DIRS, dirs=["3:/data/02"], max_bytes="1.5KiB", exclude_brokers="4,5", max_concurrent_moves_per_broker=2,
        output_file=Path("plan.json"),
    )
    assert request.plan.dirs == ((3, "/data/02"),) and request.plan.max_bytes == 1536 and request.plan.exclude_brokers == (4, 5)
    assert request.waves == WaveLimits(per_broker=2) and request.waves.wave_size == 10_000  # Kafka's limit per request
    assert not request.to_stdout and ReassignPlanRequest.parse(goal=Goal.BALANCE).output_file == STDOUT
