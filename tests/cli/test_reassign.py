"""`kjbod reassign generate|execute|verify|cancel|list` through the CLI, with exact output."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kjbod.cli.app import app
from kjbod.records import (
    CONFIG_RESOURCE_BROKER,
    CONFIG_RESOURCE_TOPIC,
    FeatureLevelRecord,
)
from kjbod.state.cluster_state import ClusterState, read_image

from ..conftest import Cli, CliResult

GIB = 2**30
MIB = 2**20
DIRS = {
    1: ["ZNJ-ywU0nnQwRv5eRRU9ow", "XcZZOzUqS4yHOjhMQB6JLQ"],
    2: ["AAAAAAAAAAAAAAAAAAAAZA", "AAAAAAAAAAAAAAAAAAAAZQ"],
    3: ["AAAAAAAAAAAAAAAAAAAAZg", "AAAAAAAAAAAAAAAAAAAAZw"],
    4: ["AAAAAAAAAAAAAAAAAAAAaA", "AAAAAAAAAAAAAAAAAAAAaQ"],
}
ROLLBACK_TAIL = ["", "Save this to use as the --reassignment-json-file option during rollback"]
WARNING = "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed."


def register(cli: Cli, brokers: list[int], racks: bool) -> None:
    for broker in brokers:
        d1, d2 = DIRS[broker]
        rack = ["--rack", f"r{broker % 2}"] if racks else []
        assert cli("broker", "register", "--id", str(broker), *rack, "--dir", f"/data/b{broker}/d1={d1}", "--dir", f"/data/b{broker}/d2={d2}").exit_code == 0
        assert cli("broker", "heartbeat", "--id", str(broker)).exit_code == 0


def build_state(path: Path, setup: Callable[[Cli], None]) -> Path:
    """A cluster state made by CLI commands, built once and copied into each test's state."""
    with ClusterState.open(path, write=True, create=True) as state:
        state.commit([FeatureLevelRecord(name="metadata.version", feature_level=30)])

    def run(*args: str) -> CliResult:
        result = CliRunner().invoke(app, ["--state", str(path), *args], catch_exceptions=False)
        return CliResult(result.exit_code, result.stdout, result.stderr)

    setup(run)
    return path


def use_state(template: Path, state_dir: Path) -> None:
    shutil.rmtree(state_dir)
    shutil.copytree(template, state_dir)


def orders_cluster(cli: Cli) -> None:
    register(cli, [1, 2, 3, 4], racks=True)
    assert cli("topic", "create", "orders", "--replica-assignment", "1:2:3,2:3:1,3:1:2").exit_code == 0
    for broker in DIRS:
        assert cli("assign-dirs", "--broker", str(broker), "--auto").exit_code == 0
    assert cli("topic", "set-size", "orders", "--bytes", str(100 * GIB)).exit_code == 0


@pytest.fixture(scope="module")
def orders_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_state(tmp_path_factory.mktemp("orders") / "state", orders_cluster)


@pytest.fixture
def cluster(cli: Cli, state_dir: Path, orders_template: Path) -> Cli:
    """Brokers 1-4 (racks r1: 1,3; r0: 2,4), two directories each; `orders` has 3 partitions
    of 100 GiB on 1:2:3, 2:3:1, 3:1:2, placed by the brokers (d1, d2, d1 on each)."""
    use_state(orders_template, state_dir)
    return cli


def write(tmp_path: Path, name: str, document: object) -> str:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return str(path)


def plan(tmp_path: Path, *partitions: tuple, name: str = "plan.json") -> str:
    entries = []
    for topic, partition, replicas, *dirs in partitions:
        entry = {"topic": topic, "partition": partition, "replicas": replicas}
        if dirs:
            entry["log_dirs"] = dirs[0]
        entries.append(entry)
    return write(tmp_path, name, {"version": 1, "partitions": entries})


def configs(state_dir: Path) -> dict:
    return {key: dict(values) for key, values in read_image(state_dir).configs.resources.items()}


def lines(result) -> list[str]:
    return result.stdout.split("\n")[:-1]


# generate ----------------------------------------------------------------------------------------


def test_generate_prints_kafkas_layout_and_a_seed_repeats_the_proposal(cluster: Cli, tmp_path: Path) -> None:
    topics = write(tmp_path, "topics.json", '{"topics":[{"topic":"orders"}],"version":1}')
    result = cluster("reassign", "generate", "--topics-to-move-json-file", topics, "--broker-list", "1,2,3,4", "--seed", "7")
    assert result.exit_code == 0
    # Racks alternate as [2,1,4,3]; java.util.Random(7) draws start 2 and shift 2 (hand-derived, §2.5).
    assert lines(result) == [
        "Current partition replica assignment",
        # Each replica's current directory, as Kafka 4.1+ prints it (getReplicaToLogDir).
        '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2,3],"log_dirs":["/data/b1/d1","/data/b2/d1","/data/b3/d1"]},'
        '{"topic":"orders","partition":1,"replicas":[2,3,1],"log_dirs":["/data/b2/d2","/data/b3/d2","/data/b1/d2"]},'
        '{"topic":"orders","partition":2,"replicas":[3,1,2],"log_dirs":["/data/b3/d1","/data/b1/d1","/data/b2/d1"]}]}',
        "",
        "Proposed partition reassignment configuration",
        '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[4,1,3],"log_dirs":["any","any","any"]},'
        '{"topic":"orders","partition":1,"replicas":[3,4,2],"log_dirs":["any","any","any"]},'
        '{"topic":"orders","partition":2,"replicas":[2,3,1],"log_dirs":["any","any","any"]}]}',
    ]
    again = cluster("-o", "json", "reassign", "generate", "--topics-to-move-json-file", topics, "--broker-list", "1,2,3,4", "--seed", "7")
    document = json.loads(again.stdout)
    assert json.dumps(document["proposed"], separators=(",", ":")) == lines(result)[4] and document["seed"] == 7


def test_generate_drops_unknown_brokers_and_can_ignore_racks(cluster: Cli, tmp_path: Path) -> None:
    topics = write(tmp_path, "topics.json", '{"topics":[{"topic":"orders"}]}')
    result = cluster("-o", "json", "reassign", "generate", "--topics-to-move-json-file", topics, "--broker-list", "1,2,3,9", "--seed", "1")
    proposed = json.loads(result.stdout)["proposed"]["partitions"]
    assert {b for p in proposed for b in p["replicas"]} == {1, 2, 3}
    cluster("broker", "register", "--id", "5", "--dir", "/data/b5/d1=AAAAAAAAAAAAAAAAAAAAbA")
    cluster("broker", "heartbeat", "--id", "5")
    refused = cluster("reassign", "generate", "--topics-to-move-json-file", topics, "--broker-list", "1,2,5")
    assert (refused.exit_code, refused.stdout, refused.stderr) == (
        1, "",
        "Error: Not all brokers have rack information. Add --disable-rack-aware in command line to make replica "
        "assignment without rack information.\n",
    )
    assert cluster("reassign", "generate", "--topics-to-move-json-file", topics, "--broker-list", "1,2,5", "--disable-rack-aware").exit_code == 0


@pytest.mark.parametrize(
    ("topics", "brokers", "message"),
    [
        ('{"topics":[{"topic":"orders"}]}', "1,2,2,1", "Error: Broker list contains duplicate entries: [1, 2]"),
        ('{"topics":[{"topic":"orders"}]}', "1, 2", 'Error: For input string: " 2"'),
        ('{"topics":[{"topic":"orders"},{"topic":"orders"}]}', "1,2,3", "Error: List of topics to reassign contains duplicate entries: [orders]"),
        ('{"topics":[{"topic":"orders"},{"topic":"quux"}]}', "1,2,3", "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic quux not found."),
        ('{"topics":[{"topic":"orders"}]}', "1,9", "Error: Replication factor: 3 larger than available brokers: 1."),
        ("not json", "1,2,3", "Error: The input string is not a valid JSON"),
    ],
)
def test_generate_errors(cluster: Cli, tmp_path: Path, topics: str, brokers: str, message: str) -> None:
    result = cluster("reassign", "generate", "--topics-to-move-json-file", write(tmp_path, "t.json", topics), "--broker-list", brokers)
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", message + "\n")


# execute, verify, the clock ----------------------------------------------------------------------


def test_a_100_gib_move_under_a_50_mib_throttle_verify_and_the_clock_agree(cluster: Cli, state_dir: Path, tmp_path: Path) -> None:
    moving = plan(tmp_path, ("orders", 0, [4, 2, 3]))
    result = cluster("reassign", "execute", "--reassignment-json-file", moving, "--throttle", str(50 * MIB))
    assert (result.exit_code, result.stderr) == (0, "")
    assert lines(result) == [
        "Current partition replica assignment",
        "",
        '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2,3],"log_dirs":["/data/b1/d1","/data/b2/d1","/data/b3/d1"]}]}',
        *ROLLBACK_TAIL,
        WARNING,
        "The inter-broker throttle limit was set to 52428800 B/s",
        "Successfully started partition reassignment for orders-0",
    ]
    # Throttles exactly as Kafka sets them: the sources lead, the new replica follows.
    assert configs(state_dir) == {
        (CONFIG_RESOURCE_TOPIC, "orders"): {"leader.replication.throttled.replicas": "0:1,0:2,0:3", "follower.replication.throttled.replicas": "0:4"},
        **{
            (CONFIG_RESOURCE_BROKER, str(b)): {"leader.replication.throttled.rate": "52428800", "follower.replication.throttled.rate": "52428800"}
            for b in (1, 2, 3, 4)
        },
    }
    assert lines(cluster("reassign", "list")) == ["Current partition reassignments:", "orders-0: replicas: 4,2,3,1. adding: 4. removing: 1."]
    # 100 GiB at 50 MiB/s is 2048 s.
    assert lines(cluster("reassign", "verify", "--reassignment-json-file", moving)) == [
        "Status of partition reassignment:",
        "Reassignment of partition orders-0 is still in progress.",
        "",
        "Progress of partition orders-0: 0 B of 100.0 GiB copied (0.0%).",
        "Total: 0 B of 100.0 GiB copied (0.0%). Estimated time left: 34m 8s.",
    ]
    assert lines(cluster("clock", "show")) == [
        "Simulated time: 0s (0 ms)",
        "Copies in progress (1):",
        "  orders-0 to broker 4: 0 B of 100.0 GiB at 50.0 MiB/s; done in 34m 8s",
    ]
    # Broker 4 has two directories: it places its new replica first (KIP-858), then copies.
    assert lines(cluster("clock", "advance", "10m")) == [
        "Advanced the clock by 10m to 10m. 1 new replica placed in a log directory by its broker.",
        "Still copying: 1 copy (kjbod clock show).",
    ]
    # 600 s at 50 MiB/s = 30000 MiB = 29.3 GiB.
    assert lines(cluster("reassign", "verify", "--reassignment-json-file", moving))[3:] == [
        "Progress of partition orders-0: 29.3 GiB of 100.0 GiB copied (29.3%).",
        "Total: 29.3 GiB of 100.0 GiB copied (29.3%). Estimated time left: 24m 8s.",
    ]
    assert lines(cluster("clock", "advance", "--until-idle")) == [
        "Advanced the clock by 24m 8s to 34m 8s. 1 copy completed; 1 reassignment completed."
    ]
    done = cluster("reassign", "verify", "--reassignment-json-file", moving)
    assert lines(done) == [
        "Status of partition reassignment:",
        "Reassignment of partition orders-0 is completed.",
        "",
        "Clearing broker-level throttles on brokers 1,2,3,4",
        "Clearing topic-level throttles on topic orders",
    ]
    assert configs(state_dir) == {}
    assert lines(cluster("reassign", "list")) == ["No partition reassignments found."]
    describe = cluster("topic", "describe", "orders").stdout.splitlines()[1]
    assert "\tLeader: 4\tReplicas: 4,2,3\tIsr: 2,3,4\t" in describe and "Directories: /data/b4/d1,/data/b2/d1,/data/b3/d1" in describe


def test_verify_keeps_the_throttles_with_preserve_throttles(cluster: Cli, state_dir: Path, tmp_path: Path) -> None:
    moving = plan(tmp_path, ("orders", 1, [2, 3, 4]))
    cluster("reassign", "execute", "--reassignment-json-file", moving, "--throttle", "1000000")
    cluster("clock", "advance", "--until-idle")
    before = configs(state_dir)
    assert lines(cluster("reassign", "verify", "--reassignment-json-file", moving, "--preserve-throttles")) == [
        "Status of partition reassignment:",
        "Reassignment of partition orders-1 is completed.",
        "",
    ]
    assert configs(state_dir) == before != {}


def test_another_execute_needs_additional_which_also_changes_the_throttle(cluster: Cli, state_dir: Path, tmp_path: Path) -> None:
    moving = plan(tmp_path, ("orders", 0, [4, 2, 3]))
    cluster("reassign", "execute", "--reassignment-json-file", moving, "--throttle", "1000")
    again = cluster("reassign", "execute", "--reassignment-json-file", moving, "--throttle", "2000")
    assert (again.exit_code, again.stdout) == (1, "")
    assert again.stderr == (
        "Cannot execute because there is an existing partition assignment.  Use --additional to override this and "
        "create a new partition assignment in addition to the existing one. The --additional flag can also be used "
        "to change the throttle by resubmitting the current reassignment.\n"
    )
    resubmitted = cluster("reassign", "execute", "--reassignment-json-file", moving, "--throttle", "2000", "--additional")
    assert resubmitted.exit_code == 0
    # The rollback shows the merged list the controller holds; the reassignment itself is unchanged.
    assert lines(resubmitted)[2] == '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[4,2,3,1],"log_dirs":["any","/data/b2/d1","/data/b3/d1","/data/b1/d1"]}]}'
    assert lines(cluster("reassign", "list")) == ["Current partition reassignments:", "orders-0: replicas: 4,2,3,1. adding: 4. removing: 1."]
    assert configs(state_dir)[(CONFIG_RESOURCE_BROKER, "4")]["follower.replication.throttled.rate"] == "2000"


@pytest.mark.parametrize(
    ("partitions", "message"),
    [
        ([("orders", 0, [1, 2, 9])], "Error: Unknown broker id 9"),
        ([("quux", 0, [1, 2, 3])], "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic quux not found."),
        # A HashSet<TopicPartition> iterates orders-7 (bucket 0) before orders-5 (bucket 14).
        ([("orders", 7, [1]), ("orders", 5, [1])], "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Unable to find partition: orders-7, orders-5"),
        ([], "Error: Partition reassignment list cannot be empty"),
        ([("orders", 0, [1, 1])], "Error: Partition replica lists may not contain duplicate entries: orders-0 contains multiple entries for 1"),
        (
            [("orders", 0, [1, 2, 3], ["/data/b1/d3", "any", "any"])],
            "Log directory /data/b1/d3 (for replica orders-0-1) is not a log directory of broker 1; its directories are: /data/b1/d1, /data/b1/d2",
        ),
    ],
)
def test_execute_refusals_change_nothing(cluster: Cli, state_dir: Path, tmp_path: Path, partitions: list, message: str) -> None:
    before = read_image(state_dir)
    result = cluster("reassign", "execute", "--reassignment-json-file", plan(tmp_path, *partitions), "--throttle", "100")
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", message + "\n")
    assert read_image(state_dir).offset == before.offset


def test_a_fenced_broker_is_unknown_to_the_tool(cluster: Cli, tmp_path: Path) -> None:
    cluster("broker", "fence", "--id", "4")
    result = cluster("reassign", "execute", "--reassignment-json-file", plan(tmp_path, ("orders", 0, [4, 2, 3])))
    assert (result.exit_code, result.stderr) == (1, "Error: Unknown broker id 4\n")


def test_malformed_files_and_values_exit_1_and_command_line_mistakes_exit_2(cluster: Cli, tmp_path: Path) -> None:
    size_mismatch = write(tmp_path, "bad.json", '{"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}')
    for action in ("execute", "verify", "cancel"):
        result = cluster("reassign", action, "--reassignment-json-file", size_mismatch)
        assert (result.exit_code, result.stderr) == (
            1, "Error: Size of replicas list [1, 2] is different from size of log dirs list [any] for partition foo-0\n"
        )
    good = plan(tmp_path, ("orders", 0, [1, 2, 3]))
    assert cluster("reassign", "execute", "--reassignment-json-file", good, "--throttle", "lots").stderr == "Cannot parse argument 'lots' of option throttle\n"
    missing = cluster("reassign", "verify", "--reassignment-json-file", str(tmp_path / "missing.json"))
    assert (missing.exit_code, missing.stderr) == (1, f"No such file or directory: {tmp_path / 'missing.json'}\n")
    # Each action takes only its own options (Kafka: `Option "[x]" can't be used with action "[y]"`).
    assert cluster("reassign", "execute", "--reassignment-json-file", good, "--preserve-throttles").exit_code == 2
    assert cluster("reassign", "verify", "--reassignment-json-file", good, "--timeout", "5").exit_code == 2
    assert cluster("reassign", "list", "--reassignment-json-file", good).exit_code == 2
    assert cluster("reassign", "verify").exit_code == 2
    assert cluster("reassign", "generate", "--topics-to-move-json-file", good).exit_code == 2


@pytest.mark.parametrize("kafka_version", ["4.3", "4.4"])
def test_execute_disallowing_a_replication_factor_change(cluster: Cli, state_dir: Path, tmp_path: Path, kafka_version: str) -> None:
    """--disallow-replication-factor-change (KIP-860, since 4.1): the controller refuses each
    partition whose replication factor would change (4.4.0 RCM :2529-2548), the others start, and
    the tool prints Kafka's error block and exits 1 (4.4.0 ReassignPartitionsCommand :810-817)."""
    moving = plan(tmp_path, ("orders", 0, [1, 2]), ("orders", 1, [2, 3, 4]))
    result = cluster("--kafka-version", kafka_version, "reassign", "execute", "--reassignment-json-file", moving, "--disallow-replication-factor-change")
    assert result.exit_code == 1
    assert lines(result)[0] == "Current partition replica assignment"
    assert result.stderr == "Error reassigning partition(s):\norders-0: The replication factor is changed from 3 to 2\n"
    assert lines(cluster("reassign", "list")) == ["Current partition reassignments:", "orders-1: replicas: 2,3,4,1. adding: 4. removing: 1."]
    # Without the option the same shrink is a reassignment like any other.
    allowed = cluster("reassign", "execute", "--reassignment-json-file", plan(tmp_path, ("orders", 0, [1, 2]), name="shrink.json"), "--additional")
    assert allowed.exit_code == 0
    # Kafka permits it with --execute only (ReassignPartitionsCommand :1493-1500).
    assert cluster("reassign", "verify", "--reassignment-json-file", moving, "--disallow-replication-factor-change").exit_code == 2


def test_execute_in_json_mode_is_one_document(cluster: Cli, tmp_path: Path) -> None:
    result = cluster("-o", "json", "reassign", "execute", "--reassignment-json-file", plan(tmp_path, ("orders", 0, [4, 2, 3])), "--throttle", "5")
    document = json.loads(result.stdout)
    assert document["started"] == ["orders-0"] and document["interBrokerThrottle"] == 5 and document["errors"] == []
    assert document["currentAssignment"]["partitions"][0]["replicas"] == [1, 2, 3]


# verify's partition states -------------------------------------------------------------------------


def test_verify_lines_for_unknown_and_unmoved_partitions(cluster: Cli, tmp_path: Path) -> None:
    checked = plan(tmp_path, ("quux", 0, [1]), ("orders", 3, [1]), ("orders", 2, [1, 2, 3]), ("orders", 1, [2, 3, 1]))
    result = cluster("reassign", "verify", "--reassignment-json-file", checked, "--preserve-throttles")
    assert lines(result) == [
        "Status of partition reassignment:",
        "Reassignment of partition orders-1 is completed.",
        "There is no active reassignment of partition orders-2, but replica set is 3,1,2 rather than 1,2,3.",
        # orders has 3 partitions: partition 3 is reported like an unknown topic (Kafka's `size < partition`
        # check would raise an index error here; kjbod reports the intended state).
        "There is no active reassignment of partition orders-3, but replica set is  rather than 1.",
        "There is no active reassignment of partition quux-0, but replica set is  rather than 1.",
        "",
    ]


# cancel -------------------------------------------------------------------------------------------


def test_cancel_includes_add_only_reassignments_and_ends_its_lines(cluster: Cli, state_dir: Path, tmp_path: Path) -> None:
    growing = plan(tmp_path, ("orders", 1, [2, 3, 1, 4]))  # an RF increase: adding only
    cluster("reassign", "execute", "--reassignment-json-file", growing, "--throttle", "1000")
    cluster("clock", "advance", "1m")
    topic = read_image(state_dir).topics.by_name["orders"]
    assert topic.replica_size(1, 4) == 60_000  # 60 s under the 1000 B/s throttle
    result = cluster("reassign", "cancel", "--reassignment-json-file", growing)
    # Kafka's Java tool skips this one (adding non-empty, removing empty); the intended rule cancels it.
    assert lines(result) == [
        "Successfully cancelled partition reassignment for: orders-1",
        # Kafka prints this without a line break; kjbod ends the line.
        "None of the specified partition moves are active.",
        "Clearing broker-level throttles on brokers 1,2,3,4",
        "Clearing topic-level throttles on topic orders",
    ]
    image = read_image(state_dir)
    p = image.topics.by_name["orders"].partitions[1]
    assert (p.replicas, p.is_reassigning) == ((2, 3, 1), False)
    assert image.topics.by_name["orders"].replica_logs == {} and configs(state_dir) == {}
    assert lines(cluster("reassign", "cancel", "--reassignment-json-file", growing, "--preserve-throttles")) == [
        "None of the specified partition reassignments are active.",
        "None of the specified partition moves are active.",
    ]


# KIP-113: between the directories of a broker, then to the next broker -----------------------------


def kip113_cluster(cli: Cli) -> None:
    register(cli, [1, 2, 3], racks=False)
    assert cli("topic", "create", "t", "--replica-assignment", "1,2,3").exit_code == 0
    for broker in (1, 2, 3):
        assert cli("assign-dirs", "--broker", str(broker), "--auto").exit_code == 0
    assert cli("topic", "set-size", "t", "--bytes", str(10 * GIB)).exit_code == 0


@pytest.fixture(scope="module")
def kip113_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_state(tmp_path_factory.mktemp("kip113") / "state", kip113_cluster)


@pytest.fixture
def jbod(cli: Cli, state_dir: Path, kip113_template: Path) -> Cli:
    """The KIP-113 system test: 3 brokers with 2 directories each, a topic of 3 partitions
    (10 GiB each, one replica: t-i on broker i+1, placed in d1)."""
    use_state(kip113_template, state_dir)
    return cli


def directories(state_dir: Path) -> dict[int, list[tuple[int, str]]]:
    image = read_image(state_dir)
    return {
        pid: [(b, image.cluster.path_of(b, d)) for b, d in zip(p.replicas, p.directories)]
        for pid, p in image.topics.by_name["t"].partitions.items()
    }


def test_kip113_moves_within_then_across_brokers_with_throttles(jbod: Cli, state_dir: Path, tmp_path: Path) -> None:
    assert directories(state_dir) == {0: [(1, "/data/b1/d1")], 1: [(2, "/data/b2/d1")], 2: [(3, "/data/b3/d1")]}
    # 1. Every replica to the other directory of its broker.
    within = plan(tmp_path, *[("t", i, [i + 1], [f"/data/b{i + 1}/d2"]) for i in range(3)], name="within.json")
    result = jbod("reassign", "execute", "--reassignment-json-file", within, "--throttle", "50MiB", "--replica-alter-log-dirs-throttle", "100MiB")  # units, as --capacity
    assert lines(result) == [
        "Current partition replica assignment",
        "",
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":["/data/b1/d1"]},'
        '{"topic":"t","partition":1,"replicas":[2],"log_dirs":["/data/b2/d1"]},{"topic":"t","partition":2,"replicas":[3],"log_dirs":["/data/b3/d1"]}]}',
        *ROLLBACK_TAIL,
        WARNING,
        "The inter-broker throttle limit was set to 52428800 B/s",
        "The replica-alter-dir throttle limit was set to 104857600 B/s",
        "Successfully started partition reassignments for t-0,t-1,t-2",
        "Successfully started moving log directory to /data/b1/d2 for replica t-0 with broker 1 ",
        "Successfully started moving log directory to /data/b2/d2 for replica t-1 with broker 2 ",
        "Successfully started moving log directory to /data/b3/d2 for replica t-2 with broker 3 ",
    ]
    status = [
        "Status of partition reassignment:",
        "Reassignment of partition t-0 is completed.",
        "Reassignment of partition t-1 is completed.",
        "Reassignment of partition t-2 is completed.",
    ]
    # Each broker copies 10 GiB at its 100 MiB/s alter-log-dirs throttle: 102.4 s.
    assert lines(jbod("reassign", "verify", "--reassignment-json-file", within)) == [
        *status,
        "Reassignment of replica t-0-1 is still in progress.",
        "Reassignment of replica t-1-2 is still in progress.",
        "Reassignment of replica t-2-3 is still in progress.",
        "Progress of partition t-0: 0 B of 10.0 GiB copied (0.0%).",
        "Progress of partition t-1: 0 B of 10.0 GiB copied (0.0%).",
        "Progress of partition t-2: 0 B of 10.0 GiB copied (0.0%).",
        "Total: 0 B of 30.0 GiB copied (0.0%). Estimated time left: 1m 42.400s.",
    ]
    assert lines(jbod("clock", "advance", "1m")) == ["Advanced the clock by 1m to 1m.", "Still copying: 3 copies (kjbod clock show)."]
    # 6000 MiB of 10240 MiB.
    assert lines(jbod("reassign", "verify", "--reassignment-json-file", within))[-1] == (
        "Total: 17.6 GiB of 30.0 GiB copied (58.6%). Estimated time left: 42.400s."
    )
    assert directories(state_dir)[0] == [(1, "/data/b1/d1")]  # not promoted before it caught up
    assert lines(jbod("clock", "advance", "1m")) == [
        "Advanced the clock by 1m to 2m. 3 copies completed; 3 replicas promoted in a new log directory."
    ]
    assert lines(jbod("reassign", "verify", "--reassignment-json-file", within)) == [
        *status,
        "Reassignment of replica t-0-1 completed successfully.",
        "Reassignment of replica t-1-2 completed successfully.",
        "Reassignment of replica t-2-3 completed successfully.",
        "Clearing broker-level throttles on brokers 1,2,3",
        "Clearing topic-level throttles on topic t",
    ]
    assert directories(state_dir) == {0: [(1, "/data/b1/d2")], 1: [(2, "/data/b2/d2")], 2: [(3, "/data/b3/d2")]}
    assert configs(state_dir) == {}

    # 2. Every replica to the unused directory of the next broker.
    across = plan(tmp_path, ("t", 0, [2], ["/data/b2/d1"]), ("t", 1, [3], ["/data/b3/d1"]), ("t", 2, [1], ["/data/b1/d1"]), name="across.json")
    result = jbod("reassign", "execute", "--reassignment-json-file", across, "--throttle", str(50 * MIB))
    assert lines(result)[-5:] == [
        "The inter-broker throttle limit was set to 52428800 B/s",
        "Successfully started partition reassignments for t-0,t-1,t-2",
        "Successfully started moving log directory to /data/b1/d1 for replica t-2 with broker 1 ",
        "Successfully started moving log directory to /data/b2/d1 for replica t-0 with broker 2 ",
        "Successfully started moving log directory to /data/b3/d1 for replica t-1 with broker 3 ",
    ]
    # The new replicas are created in their directory at once; each copies 10 GiB at 50 MiB/s: 204.8 s.
    assert lines(jbod("reassign", "verify", "--reassignment-json-file", across)) == [
        "Status of partition reassignment:",
        "Reassignment of partition t-0 is still in progress.",
        "Reassignment of partition t-1 is still in progress.",
        "Reassignment of partition t-2 is still in progress.",
        "Reassignment of replica t-2-1 completed successfully.",
        "Reassignment of replica t-0-2 completed successfully.",
        "Reassignment of replica t-1-3 completed successfully.",
        "Progress of partition t-0: 0 B of 10.0 GiB copied (0.0%).",
        "Progress of partition t-1: 0 B of 10.0 GiB copied (0.0%).",
        "Progress of partition t-2: 0 B of 10.0 GiB copied (0.0%).",
        "Total: 0 B of 30.0 GiB copied (0.0%). Estimated time left: 3m 24.800s.",
    ]
    verified = []
    while not verified or "Clearing topic-level throttles on topic t" not in verified:
        assert len(verified) < 100, "the reassignment never completed"
        jbod("clock", "advance", "1m")
        verified = lines(jbod("reassign", "verify", "--reassignment-json-file", across))
    assert jbod("clock", "show").stdout == "Simulated time: 6m (360000 ms)\n"
    assert directories(state_dir) == {0: [(2, "/data/b2/d1")], 1: [(3, "/data/b3/d1")], 2: [(1, "/data/b1/d1")]}
    assert configs(state_dir) == {} and read_image(state_dir).topics.by_name["t"].replica_logs == {}


def test_the_kip113_story_moves_every_replica_of_a_partition_at_once(cli: Cli, tmp_path: Path) -> None:
    """Issue 26, as a new user tries KIP-113's system test: 3 brokers with 2 directories each,
    test_topic on [1,2], [2,3], [3,1] in the first directories, every replica moved to the second
    directory of its broker. The six copies complete in the same clock step; each broker's
    AssignReplicasToDirs is handled against the state the ones before it leave, so none of them
    puts another broker's replica back in its old directory."""
    state = tmp_path / "state"
    brokers = {"brokers": [
        {"id": b, "rack": f"r{b}", "log_dirs": [{"path": f"/data/b{b}/d{d}", "capacity_bytes": 100 * GIB} for d in (1, 2)]} for b in (1, 2, 3)
    ]}
    replicas = {0: [1, 2], 1: [2, 3], 2: [3, 1]}
    assignment = {"version": 1, "partitions": [
        {"topic": "test_topic", "partition": p, "replicas": r, "log_dirs": [f"/data/b{b}/d1" for b in r]} for p, r in replicas.items()
    ]}
    hosted = {b: [f"test_topic-{p}" for p, r in replicas.items() if b in r] for b in (1, 2, 3)}
    log_dirs = {"brokers": [
        {"broker": b, "logDirs": [
            {"partitions": [{"partition": name, "size": GIB, "offsetLag": 0, "isFuture": False} for name in hosted[b]], "error": None, "logDir": f"/data/b{b}/d1"},
            {"partitions": [], "error": None, "logDir": f"/data/b{b}/d2"},
        ]} for b in (1, 2, 3)
    ], "version": 1}
    saved = "Querying brokers for log directories information\nReceived log directory information from brokers 1,2,3\n" + json.dumps(log_dirs) + "\n"
    imported = cli("import", "cluster", "--brokers", write(tmp_path, "brokers.json", brokers), "--assignment", write(tmp_path, "assignment.json", assignment),
                   "--log-dirs", write(tmp_path, "log-dirs.txt", saved), state=state)
    assert imported.exit_code == 0, imported.stderr
    move = plan(tmp_path, *[("test_topic", p, r, [f"/data/b{b}/d2" for b in r]) for p, r in replicas.items()], name="move.json")
    executed = cli("reassign", "execute", "--reassignment-json-file", move, state=state)
    assert lines(executed)[-6:] == [
        "Successfully started moving log directory to /data/b1/d2 for replica test_topic-0 with broker 1 ",
        "Successfully started moving log directory to /data/b1/d2 for replica test_topic-2 with broker 1 ",
        "Successfully started moving log directory to /data/b2/d2 for replica test_topic-0 with broker 2 ",
        "Successfully started moving log directory to /data/b2/d2 for replica test_topic-1 with broker 2 ",
        "Successfully started moving log directory to /data/b3/d2 for replica test_topic-1 with broker 3 ",
        "Successfully started moving log directory to /data/b3/d2 for replica test_topic-2 with broker 3 ",
    ]
    # Each broker copies two 1 GiB replicas at its 200 MiB/s alter-log-dirs rate: 10.24 s, all six at once.
    assert lines(cli("clock", "advance", "--until-idle", state=state)) == [
        "Advanced the clock by 10.240s to 10.240s. 6 copies completed; 6 replicas promoted in a new log directory."
    ]
    assert lines(cli("reassign", "verify", "--reassignment-json-file", move, state=state)) == [
        "Status of partition reassignment:",
        "Reassignment of partition test_topic-0 is completed.",
        "Reassignment of partition test_topic-1 is completed.",
        "Reassignment of partition test_topic-2 is completed.",
        "Reassignment of replica test_topic-0-1 completed successfully.",
        "Reassignment of replica test_topic-2-1 completed successfully.",
        "Reassignment of replica test_topic-0-2 completed successfully.",
        "Reassignment of replica test_topic-1-2 completed successfully.",
        "Reassignment of replica test_topic-1-3 completed successfully.",
        "Reassignment of replica test_topic-2-3 completed successfully.",
        "Clearing broker-level throttles on brokers 1,2,3",
        "Clearing topic-level throttles on topic test_topic",
    ]
    described = cli("log-dirs", "describe", "--broker-list", "1,2,3", state=state)
    assert lines(described)[:2] == ["Querying brokers for log directories information", "Received log directory information from brokers 1,2,3"]
    assert json.loads(lines(described)[2]) == {"brokers": [
        {"broker": b, "logDirs": [
            {"partitions": [], "error": None, "logDir": f"/data/b{b}/d1"},
            {"partitions": [{"partition": name, "size": GIB, "offsetLag": 0, "isFuture": False} for name in hosted[b]], "error": None, "logDir": f"/data/b{b}/d2"},
        ]} for b in (1, 2, 3)
    ], "version": 1}
    image = read_image(state)
    for p, registration in image.topics.by_name["test_topic"].partitions.items():
        assert [image.cluster.path_of(b, d) for b, d in zip(registration.replicas, registration.directories)] == [f"/data/b{b}/d2" for b in replicas[p]]


def test_verify_json_says_whether_the_whole_file_is_done(jbod: Cli, tmp_path: Path) -> None:
    moves = plan(tmp_path, ("t", 0, [1], ["/data/b1/d2"]), ("t", 1, [3], ["any"]), name="moves.json")
    assert jbod("reassign", "execute", "--reassignment-json-file", moves).exit_code == 0
    running = json.loads(jbod("-o", "json", "reassign", "verify", "--reassignment-json-file", moves).stdout)
    assert running["done"] is False
    assert [p["state"] for p in running["partitions"]] == ["completed", "inProgress"]
    assert [r["state"] for r in running["replicaLogDirs"]] == ["active"]
    assert jbod("clock", "advance", "--until-idle").exit_code == 0
    finished = json.loads(jbod("-o", "json", "reassign", "verify", "--reassignment-json-file", moves).stdout)
    assert finished["done"] is True
    assert [p["state"] for p in finished["partitions"]] == ["completed", "completed"]


def test_a_failed_source_directory_leaves_the_move_waiting(jbod: Cli, state_dir: Path, tmp_path: Path) -> None:
    within = plan(tmp_path, ("t", 0, [1], ["/data/b1/d2"]))
    jbod("reassign", "execute", "--reassignment-json-file", within)
    jbod("clock", "advance", "10s")  # 2000 MiB of 10 GiB at 200 MiB/s
    jbod("broker", "fail-dir", "--id", "1", "--dir", "/data/b1/d1")
    assert lines(jbod("reassign", "verify", "--reassignment-json-file", within)) == [
        "Status of partition reassignment:",
        "Reassignment of partition t-0 is completed.",
        "Partition t-0 is not found in any live log dir on broker 1. There is likely an offline log directory on the broker.",
        "Progress of partition t-0: 2.0 GiB of 10.0 GiB copied (19.5%). Waiting: the move on broker 1 to /data/b1/d2: its source directory is offline.",
        "Total: 2.0 GiB of 10.0 GiB copied (19.5%). Estimated time left: unknown, until the waiting copies can progress.",
    ]
    assert lines(jbod("clock", "advance", "--until-idle")) == [
        "Nothing can progress; the clock stays at 10s.",
        "Cannot progress (1):",
        "  t-0 on broker 1 to /data/b1/d2: its source directory is offline",
    ]


def test_cancel_moves_an_active_replica_back(jbod: Cli, state_dir: Path, tmp_path: Path) -> None:
    within = plan(tmp_path, ("t", 0, [1], ["/data/b1/d2"]), ("t", 1, [2], ["/data/b2/d2"]))
    jbod("reassign", "execute", "--reassignment-json-file", within, "--replica-alter-log-dirs-throttle", "1000")
    assert lines(jbod("reassign", "cancel", "--reassignment-json-file", within)) == [
        "None of the specified partition reassignments are active.",
        "Successfully started moving log directory to /data/b1/d1 for replica t-0 with broker 1 ",
        "Successfully started moving log directory to /data/b2/d1 for replica t-1 with broker 2 ",
        "Clearing broker-level throttles on brokers 1,2,3",
        "Clearing topic-level throttles on topic t",
    ]
    assert read_image(state_dir).topics.by_name["t"].replica_logs == {} and configs(state_dir) == {}
    assert lines(jbod("reassign", "verify", "--reassignment-json-file", within))[1:4] == [
        "Reassignment of partition t-0 is completed.",
        "Reassignment of partition t-1 is completed.",
        "Partition t-0 on broker 1 is not being moved from log dir /data/b1/d1 to /data/b1/d2.",
    ]


def test_verify_replica_states_and_singular_plural_clearing(jbod: Cli, tmp_path: Path) -> None:
    jbod("reassign", "execute", "--reassignment-json-file", plan(tmp_path, ("t", 0, [1], ["/data/b1/d2"])))
    # Another file that wants t-0 where it is now: the move under way goes elsewhere.
    elsewhere = plan(tmp_path, ("t", 0, [1], ["/data/b1/d1"]), ("t", 2, [3], ["/data/b3/d2"]), name="elsewhere.json")
    jbod("broker", "shutdown", "--id", "3")
    jbod("broker", "unregister", "--id", "3")
    assert lines(jbod("reassign", "verify", "--reassignment-json-file", elsewhere))[3:6] == [
        "Partition t-0 on broker 1 is being moved to log dir /data/b1/d2 instead of /data/b1/d1.",
        "Partition t-2 cannot be found in any live log directory on broker 3.",
        "Progress of partition t-0: 0 B of 10.0 GiB copied (0.0%).",
    ]
    jbod("clock", "advance", "--until-idle")
    jbod("broker", "shutdown", "--id", "2")
    jbod("broker", "unregister", "--id", "2")
    jbod("topic", "create", "u", "--replica-assignment", "1")
    only_broker_1 = plan(tmp_path, ("t", 0, [1]), ("u", 0, [1]), name="one.json")
    assert lines(jbod("reassign", "verify", "--reassignment-json-file", only_broker_1)) == [
        "Status of partition reassignment:",
        "Reassignment of partition t-0 is completed.",
        "Reassignment of partition u-0 is completed.",
        "",
        "Clearing broker-level throttles on broker 1",
        # A HashSet<String>: "t" hashes to bucket 4, "u" to 5.
        "Clearing topic-level throttles on topics t,u",
    ]


def test_a_cancel_that_would_need_an_unclean_election_is_refused(cluster: Cli, state_dir: Path, tmp_path: Path) -> None:
    cluster("topic", "create", "small", "--replica-assignment", "1")
    growing = plan(tmp_path, ("small", 0, [3, 4]))  # adding 3 and 4, removing 1
    cluster("reassign", "execute", "--reassignment-json-file", growing)
    cluster("broker", "fence", "--id", "4")
    cluster("clock", "advance", "--until-idle")  # 3 catches up; 4 cannot
    cluster("broker", "fence", "--id", "1")  # now only 3, a replica being added, is in sync
    assert lines(cluster("reassign", "list")) == ["Current partition reassignments:", "small-0: replicas: 3,4,1. adding: 3,4. removing: 1."]
    result = cluster("reassign", "cancel", "--reassignment-json-file", growing)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        "Error cancelling partition reassignment for:\n"
        "small-0: Unable to revert partition assignment for small:0 because it would require an unclean leader election.\n"
    )
    assert read_image(state_dir).topics.by_name["small"].partitions[0].is_reassigning


def test_per_partition_controller_errors_are_reported_after_the_rollback(cluster: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kjbod.controller import ApiError, ControllerResult, Errors
    from kjbod.controller.reassignment_control import (
        ReassignmentControl,
        ReassignmentResult,
    )

    original = ReassignmentControl.alter_partition_reassignments

    def one_fails(self, targets, **options):
        result = original(self, [t for t in targets if t.partition != 1], **options)
        failed = ReassignmentResult("orders", 1, ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes broker 9, but no such broker is registered."))
        return ControllerResult.atomic_of(result.records, (*result.response, failed))

    monkeypatch.setattr(ReassignmentControl, "alter_partition_reassignments", one_fails)
    result = cluster("reassign", "execute", "--reassignment-json-file", plan(tmp_path, ("orders", 0, [4, 2, 3]), ("orders", 1, [4, 3, 1])))
    assert result.exit_code == 1
    assert lines(result)[-1] == "Save this to use as the --reassignment-json-file option during rollback"
    assert result.stderr == (
        "Error reassigning partition(s):\n"
        "orders-1: The manual partition assignment includes broker 9, but no such broker is registered.\n"
    )
    # The partitions that succeeded were started, as Kafka's controller does.
    assert lines(cluster("reassign", "list")) == ["Current partition reassignments:", "orders-0: replicas: 4,2,3,1. adding: 4. removing: 1."]


def test_generate_with_no_topics_proposes_nothing(cluster: Cli, tmp_path: Path) -> None:
    # RCT:196-211 feeds a reassignment file to generate: it names no topics.
    result = cluster("reassign", "generate", "--topics-to-move-json-file", plan(tmp_path, ("orders", 0, [1])), "--broker-list", "1,2,3")
    assert lines(result) == [
        "Current partition replica assignment",
        '{"version":1,"partitions":[]}',
        "",
        "Proposed partition reassignment configuration",
        '{"version":1,"partitions":[]}',
    ]


def test_execute_past_the_records_one_operation_may_write_starts_what_fits_and_fails_the_rest(cli: Cli, bootstrapped: Path, tmp_path: Path) -> None:
    register(cli, [1, 2], racks=False)
    half = 5001  # two topics: 10002 partitions, more than MAX_RECORDS_PER_USER_OP (10000)
    for name in ("a", "b"):
        assert cli("topic", "create", name, "--partitions", str(half), "--replication-factor", "1", "--seed", "1").exit_code == 0
    image = read_image(bootstrapped)
    plan = {"version": 1, "partitions": [
        {"topic": name, "partition": p, "replicas": [3 - image.topics.by_name[name].partitions[p].replicas[0]], "log_dirs": ["any"]}
        for name in ("a", "b") for p in range(half)
    ]}
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(plan))
    result = cli("reassign", "execute", "--reassignment-json-file", str(path))
    assert result.exit_code == 1
    assert result.stderr == (
        "Error reassigning partition(s):\n"
        "b-4999: The server experienced an unexpected error when processing the request.\n"
        "b-5000: The server experienced an unexpected error when processing the request.\n"
        "(kjbod) 2 partition(s) failed because Kafka's controller writes at most 10000 records for one request "
        "(MAX_RECORDS_PER_USER_OP) while the partitions before them started: split the plan into files of at most 10000 "
        "partitions and run them one after another\n"
    )
    after = read_image(bootstrapped)
    moving = [(name, p) for name in ("a", "b") for p in range(half) if after.topics.by_name[name].partitions[p].adding_replicas]
    assert len(moving) == 10000 and ("b", 4999) not in moving
