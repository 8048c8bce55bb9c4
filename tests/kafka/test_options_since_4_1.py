"""Options Kafka's tools gained since 4.0, against the shared live cluster, each refused by its
controller so the cluster writes nothing and the scene the other tests read is untouched:
`reassign execute --disallow-replication-factor-change` (KIP-860, since 4.1) against
kafka-reassign-partitions, and `quorum unregister-controller` (KIP-1312, 4.4) against
kafka-cluster unregister-controller on the live cluster's metadata.version (4.3-IV0, below the
4.4-IV2 it needs). One Kafka tool run each per release (a few seconds of JVM start). And
kafka-metadata-quorum's text for a missing --command-config, which 4.4.0 changed (no cluster).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from kjbod.state.cluster_state import read_image
from tests.kafka.conftest import Live, kjbod
from tests.kafka.runtime import run_tool


def test_disallowing_a_replication_factor_change_refuses_as_kafka_does(live: Live, tmp_path: Path) -> None:
    state = tmp_path / "state"
    shutil.copytree(live.state, state)
    replicas = list(read_image(state).topics.by_name["events"].partitions[1].replicas)
    plan = tmp_path / "shrink.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "events", "partition": 1, "replicas": replicas[:2]}]}))

    kafka = live.cluster.tool(
        "kafka-reassign-partitions", "--bootstrap-server", live.cluster.bootstrap_servers, "--reassignment-json-file", plan,
        "--execute", "--disallow-replication-factor-change",
    )
    ours = kjbod("reassign", "execute", "--reassignment-json-file", plan, "--disallow-replication-factor-change", state=state)

    refusal = ["Error reassigning partition(s):", f"events-1: The replication factor is changed from {len(replicas)} to 2"]
    # Kafka prints its TerseException on stdout after the rollback lines (ReassignPartitionsCommand
    # 4.4.0 :150); kjbod keeps Kafka's lines and puts the refusal on stderr, as for its other errors.
    assert (kafka.exit_code, kafka.lines[-2:]) == (1, refusal)
    assert (ours.exit_code, ours.stderr.splitlines()) == (1, refusal)
    assert ours.lines[0] == kafka.lines[0] == "Current partition replica assignment"
    assert read_image(state).offset == read_image(live.state).offset


def test_unregister_controller_below_4_4_iv2_as_kafka_cluster_says(live: Live, tmp_path: Path) -> None:
    state = tmp_path / "state"
    shutil.copytree(live.state, state)
    kafka = live.cluster.tool("kafka-cluster", "unregister-controller", "--bootstrap-controller", live.cluster.bootstrap_controller, "--id", "99")
    ours = kjbod("quorum", "unregister-controller", "--id", "99", state=state)
    if live.version.startswith("4.3"):
        # 4.3.1's kafka-cluster has no unregister-controller (argparse: invalid choice); kjbod
        # speaking 4.3 refuses it as a usage error.
        # (argparse4j justifies its message to the terminal's width: the spaces vary.)
        assert kafka.exit_code == 1 and re.search(r"invalid\s+choice:\s+'unregister-controller'", kafka.stderr)
        assert ours.exit_code == 2 and "needs Kafka 4.4 (KIP-1312)" in ours.stderr
        return
    # ClusterControlManager.unregisterController refuses below 4.4-IV2 (4.4.0 :504-505) and
    # ClusterTool prints its own line for that UnsupportedVersionException, exit 0 (:205-206).
    assert (kafka.exit_code, kafka.lines) == (0, ["The target cluster does not support the controller unregistration API."])
    assert (ours.exit_code, ours.lines) == (0, kafka.lines)
    assert read_image(state).offset == read_image(live.state).offset


def test_a_missing_controller_config_as_kafka_metadata_quorum_says(kafka_version: str, tmp_path: Path) -> None:
    # getProperties: 4.3.1 `... does not exists!` (:171), 4.4.0 `... does not exist.` (:174); read
    # before any connection, so no cluster is needed.
    missing = tmp_path / "controller.properties"
    kafka = run_tool(kafka_version, "kafka-metadata-quorum", "--bootstrap-controller", "127.0.0.1:1", "--command-config", missing, "add-controller")
    ours = kjbod("quorum", "add-controller", "--config", missing, state=tmp_path / "state")
    assert (kafka.exit_code, kafka.stdout) == (ours.exit_code, ours.stdout) == (1, "")
    assert ours.stderr == kafka.stderr == f"Properties file {missing} {'does not exists!' if kafka_version.startswith('4.3') else 'does not exist.'}\n"


def test_remove_controller_unregister_of_a_non_voter_as_kafka_says(live: Live, tmp_path: Path) -> None:
    # The live controller is the one voter of a dynamic quorum: removing voter 99 is refused
    # (VoterNotFoundException), which --unregister turns into Kafka's own message (4.4.0
    # MetadataQuorumCommand.java:529-540); the voter set is printed in Java's HashSet order.
    state = tmp_path / "state"
    shutil.copytree(live.state, state)
    directory = "pF8N-Wl7SQ6r3M9Su_wzdw"
    args = ("remove-controller", "--controller-id", "99", "--controller-directory-id", directory, "--unregister")
    kafka = live.cluster.tool("kafka-metadata-quorum", "--bootstrap-controller", live.cluster.bootstrap_controller, *args)
    ours = kjbod("quorum", *args, state=state)
    if live.version.startswith("4.3"):
        # 4.3.1's remove-controller has no --unregister; kjbod speaking 4.3 refuses it as a usage error.
        assert kafka.exit_code == 1 and "--unregister" in kafka.stderr
        assert ours.exit_code == 2 and "needs Kafka 4.4 (KIP-1312)" in ours.stderr
        return
    assert (kafka.exit_code, kafka.stdout) == (ours.exit_code, ours.stdout) == (1, "")
    assert kafka.stderr.splitlines()[0].startswith(f"Failed to remove KRaft voter 99: Cannot remove voter ReplicaKey(id=99, directoryId={directory})")
    assert ours.stderr.splitlines()[0] == kafka.stderr.splitlines()[0]
    assert read_image(state).offset == read_image(live.state).offset
