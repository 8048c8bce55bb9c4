"""Reading what Kafka's kafka-reassign-partitions prints (ReassignPartitionsCommand, 4.3.1 sources,
the same in 4.4.0), and finding the tool as an operator's installation holds it."""

from __future__ import annotations

import os
from pathlib import Path

from kjbod.tools.reassign.kafka_tool import (
    ABSENT, DONE, MOVING, NOT_STARTED, WRONG, execute_failure, find_tool, kafka_message, parse_list, parse_rollback, parse_verify,
)

VERIFY_MOVING = """Status of partition reassignment:
Reassignment of partition bar-0 is completed.
Reassignment of partition foo-0 is still in progress.
There is no active reassignment of partition foo-1, but replica set is  rather than 1,2.

Reassignment of replica bar-0-1 completed successfully.
Reassignment of replica foo-0-1 is still in progress.
Partition foo-0 cannot be found in any live log directory on broker 4.
Partition foo-1 on broker 2 is being moved to log dir /b instead of /a.
Partition bar-0 on broker 3 is not being moved from log dir /x to /a.
Partition bar-0 is not found in any live log dir on broker 5. There is likely an offline log directory on the broker.
"""

VERIFY_DONE = """Status of partition reassignment:
Reassignment of partition foo-0 is completed.

Reassignment of replica foo-0-4 completed successfully.
Clearing broker-level throttles on brokers 1,2,3,4
Clearing topic-level throttles on topic foo
"""


def test_verify_lines_become_states() -> None:
    status = parse_verify(VERIFY_MOVING)
    assert {tp: state for tp, (state, _) in status.partitions.items()} == {"bar-0": DONE, "foo-0": MOVING, "foo-1": NOT_STARTED}
    assert {key: state for key, (state, _) in status.replicas.items()} == {
        ("bar-0", 1): DONE, ("foo-0", 1): MOVING, ("foo-0", 4): ABSENT, ("foo-1", 2): WRONG, ("bar-0", 3): NOT_STARTED, ("bar-0", 5): WRONG,
    }
    assert not status.complete and not status.cleared
    # A replica absent while its partition still moves is being created; a done partition's is not.
    assert [tp for tp, _ in status.problems()] == ["foo-1", "foo-1", "bar-0", "bar-0"]
    assert status.not_started()[0] == "There is no active reassignment of partition foo-1, but replica set is  rather than 1,2."


def test_a_complete_verify_that_cleared_the_throttles() -> None:
    status = parse_verify(VERIFY_DONE)
    assert status.complete and status.cleared and status.partition_done("foo-0") and status.problems() == []


def test_a_verify_that_kept_the_throttles_has_not_cleared_them() -> None:
    assert not parse_verify(VERIFY_DONE.replace("Clearing topic-level throttles on topic foo\n", "")).cleared


def test_list_lines() -> None:
    assert parse_list("No partition reassignments found.\n") == {}
    listed = parse_list("Current partition reassignments:\nfoo-0: replicas: 0,1,3,2. adding: 3. removing: 2.\nbar-1: replicas: 4,5.\n")
    assert listed == {"foo-0": "foo-0: replicas: 0,1,3,2. adding: 3. removing: 2.", "bar-1": "bar-1: replicas: 4,5."}


def test_the_rollback_block_of_execute() -> None:
    current = '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}'
    output = (f"Current partition replica assignment\n\n{current}\n\nSave this to use as the --reassignment-json-file option during rollback\n"
              "Successfully started partition reassignment for foo-0\n")
    assert parse_rollback(output) == current
    assert parse_rollback("Error: something\n") is None


def test_what_a_failed_execute_says() -> None:
    per_partition = "Error reassigning partition(s):\nfoo-0: The replica assignment is invalid\nfoo-1: other\n"
    assert execute_failure(per_partition) == ("foo-0", "The replica assignment is invalid")
    trace = ("Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic quux not found.\n"
             "java.util.concurrent.ExecutionException: org.apache.kafka...\n\tat org.apache.kafka.Foo.bar(Foo.java:1)\n")
    assert execute_failure(trace) == (None, "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic quux not found.")
    # A TerseException is printed bare (ReassignPartitionsCommand.main).
    terse = "Cannot execute because there is an existing partition assignment.  Use --additional to override this.\n"
    assert kafka_message(terse) == terse.strip()
    assert kafka_message("") == "(no output)"


def test_the_tool_is_found_with_or_without_sh(tmp_path: Path) -> None:
    bare = tmp_path / "bin" / "kafka-reassign-partitions"
    bare.parent.mkdir()
    bare.write_text("#!/bin/sh\n")
    assert find_tool("kafka-reassign-partitions", bare.parent, {}) is None  # not executable
    bare.chmod(0o755)
    assert find_tool("kafka-reassign-partitions", bare.parent, {}) == bare
    sh = bare.with_name("kafka-reassign-partitions.sh")
    sh.write_text("#!/bin/sh\n")
    sh.chmod(0o755)
    assert find_tool("kafka-reassign-partitions", None, {"KAFKA_HOME": str(tmp_path)}) == sh  # Apache Kafka's name first
    assert find_tool("kafka-reassign-partitions", None, {"PATH": f"/nonexistent{os.pathsep}{bare.parent}"}) == sh
    assert find_tool("kafka-reassign-partitions", None, {"PATH": "/nonexistent"}) is None
