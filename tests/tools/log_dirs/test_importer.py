"""Saved kafka-log-dirs output loaded into the cluster state: sizes, lags, future replicas,
capacities, and every problem reported before anything is written (reference §5, KIP-113)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kjbod.image import Image, replay_all
from kjbod.common.problems import ValidationFailed
from kjbod.tools.log_dirs.importer import import_log_dirs, plan_log_dirs_import
from kjbod.tools.log_dirs.report import (
    KAFKA_STORAGE_EXCEPTION,
)
from kjbod.records import (
    FeatureLevelRecord,
    TopicRecord,
)
from kjbod.state.cluster_state import ClusterState, read_image, run_operation

from .support import D11, D22, FOO, broker, partition







def output(*brokers: dict, header: bool = True) -> str:
    ids = ",".join(str(b["broker"]) for b in brokers)
    document = json.dumps({"brokers": list(brokers), "version": 1}, separators=(",", ":"))
    prefix = f"Querying brokers for log directories information\nReceived log directory information from brokers {ids}\n" if header else ""
    return prefix + document + "\n"


def logdir(path: str, *partitions: tuple[str, int, int, bool], error: str | None = None) -> dict:
    return {
        "partitions": [{"partition": n, "size": s, "offsetLag": lag, "isFuture": f} for n, s, lag, f in partitions],
        "error": error,
        "logDir": path,
    }


def test_loading_output_sets_sizes_lags_and_futures(two_brokers: Image, tmp_path: Path) -> None:
    b1 = tmp_path / "b1.txt"
    b1.write_text(output({"broker": 1, "logDirs": [logdir("/data/b1/d1", ("foo-0", 6000, 0, False), ("bar-0", 40, 3, False))]}))
    b2 = tmp_path / "b2.txt"
    b2.write_text(
        output(
            {"broker": 2, "logDirs": [logdir("/data/b2/d2", ("foo-0", 6000, 0, False), ("bar-0", 50, 0, False)), logdir("/data/b2/d1", ("foo-1", 800, 0, False))]},
            header=False,
        )
    )
    result = plan_log_dirs_import(two_brokers, [b1, b2])
    assert (result.files, result.brokers, result.partition_sizes, result.replica_logs, result.future_replicas, result.removed_entries) == (2, 2, 3, 1, 0, 2)
    assert result.warnings == []
    after = replay_all(two_brokers, result.entries)
    foo, bar = after.topics.by_name["foo"], after.topics.by_name["bar"]
    # foo-0's leader (1) has 6000 bytes; broker 2 caught up, so its partial entry is gone, and
    # its future replica, no longer reported, is gone too.
    assert (foo.size(0), foo.replica_size(0, 2), foo.future_replica(0, 2)) == (6000, 6000, None)
    # foo-1's leader is 2 (800); broker 1's directory is offline and unreported: it keeps the full size.
    assert (foo.size(1), foo.replica_size(1, 1)) == (800, 800)
    # bar-0's leader (2) has 50; broker 1 is behind.
    assert (bar.size(0), bar.replica_size(0, 1), bar.replica_logs[(0, 1, False)].offset_lag) == (50, 40, 3)


def test_disk_sizes_become_capacities_once(two_brokers: Image, tmp_path: Path) -> None:
    """KIP-827's totalBytes (newer kafka-log-dirs) is the disk's size: the directory's capacity."""
    path = tmp_path / "v4.txt"
    volumes = [
        dict(logdir("/data/b2/d2", ("foo-0", 5000, 0, False)), totalBytes=4 * 10**12, usableBytes=3 * 10**12),
        dict(logdir("/data/b2/d1", ("foo-1", 700, 0, False)), totalBytes=-1, usableBytes=-1),  # Kafka: unknown
    ]
    path.write_text(output({"broker": 2, "logDirs": volumes}))
    result = plan_log_dirs_import(two_brokers, [path])
    assert result.capacities == 1
    after = replay_all(two_brokers, result.entries)
    assert [(d.path, d.capacity_bytes) for d in after.cluster.log_dirs[2]] == [("/data/b2/d1", None), ("/data/b2/d2", 4 * 10**12)]
    assert [(d.path, d.capacity_bytes) for d in after.cluster.log_dirs[1]] == [("/data/b1/d1", None), ("/data/b1/d2", None)]
    # Loading the same output again changes nothing.
    assert plan_log_dirs_import(after, [path]).capacities == 0


def test_a_replica_in_another_directory_is_a_warning_with_the_fix(two_brokers: Image, tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text(
        output(
            {"broker": 2, "logDirs": [
                logdir("/data/b2/d1", ("foo-0", 5000, 0, False), ("foo-2", 1, 0, False)),
                logdir("/data/b2/d2", ("foo-0", 90, 0, True), error=None),
            ]},
            {"broker": 1, "logDirs": [logdir("/data/b1/d1", error=KAFKA_STORAGE_EXCEPTION)]},
        )
    )
    result = plan_log_dirs_import(two_brokers, [path])
    assert result.warnings == [
        (
            f"Warning: foo-0 on broker 2 is in /data/b2/d1 ({path} $.brokers[0].logDirs[0].partitions[0]), but the cluster state has it in "
            "/data/b2/d2; to record where it is: kjbod assign-dirs --broker 2 --assign foo:0=/data/b2/d1"
        ),
        (
            f"Warning: foo-2 on broker 2 is in /data/b2/d1 ({path} $.brokers[0].logDirs[0].partitions[1]), but the cluster state has it in "
            "UNASSIGNED; to record where it is: kjbod assign-dirs --broker 2 --assign foo:2=/data/b2/d1"
        ),
        (
            f"Warning: log directory /data/b1/d1 of broker 1 is offline ({path} $.brokers[1].logDirs[0]), but online in the cluster state; "
            "if it failed: kjbod broker fail-dir --id 1 --dir /data/b1/d1"
        ),
    ]
    after = replay_all(two_brokers, result.entries)
    # Directories are not rewritten; the future replica moves to where it was reported.
    assert after.topics.by_name["foo"].partitions[0].directories == (D11, D22)
    assert after.topics.by_name["foo"].future_replica(0, 2).directory_id == D22


def test_every_problem_is_reported_and_nothing_is_written(two_brokers: Image, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text(
        output(
            {"broker": 9, "logDirs": []},
            {"broker": 1, "logDirs": [
                logdir("/data/b1/nope"),
                logdir("/data/b1/d1", ("nosuch-0", 1, 0, False), ("foo-7", 1, 0, False), ("foo-2", 1, 0, False), ("foo-0", -1, 0, False), ("x", 1, 0, False)),
            ]},
            {"broker": 2, "logDirs": [logdir("/data/b2/d1", ("foo-1", 1, 0, False), ("foo-1", 2, 0, True)), logdir("/data/b2/d2", ("foo-1", 1, 0, False))]},
        )
    )
    unparsable = tmp_path / "broken.txt"
    unparsable.write_text("Querying brokers for log directories information\nReceived log directory information from brokers 1\n{\"brokers\": [\n")
    with pytest.raises(ValidationFailed) as raised:
        plan_log_dirs_import(two_brokers, [bad, unparsable, tmp_path / "missing.txt"])
    where = f"{bad} $.brokers"
    assert raised.value.problems == [
        f"{where}[0].broker: broker 9 is not registered in the cluster state",
        f"{where}[1].logDirs[0].logDir: broker 1 has no log directory /data/b1/nope registered in the cluster state (it has /data/b1/d1, /data/b1/d2)",
        f"{where}[1].logDirs[1].partitions[3].size: expected an integer >= 0, found -1",
        f"{where}[1].logDirs[1].partitions[0].partition: topic nosuch is not in the cluster state",
        f"{where}[1].logDirs[1].partitions[1].partition: partition foo-7 is not in the cluster state",
        f"{where}[1].logDirs[1].partitions[2].partition: broker 1 is not a replica of foo-2 (replicas 2)",
        f"{where}[1].logDirs[1].partitions[4].partition: expected \"<topic>-<partition>\", found 'x'",
        f"{where}[2].logDirs[1].partitions[0]: the replica of foo-1 on broker 2 is reported again (first at {where}[2].logDirs[0].partitions[0])",
        f"{unparsable} $: not valid JSON: unexpected end of data (line 4, column 1)",
        f"{tmp_path / 'missing.txt'} $: cannot read the file: No such file or directory",
        f"{where}[2].logDirs[0].partitions[1]: the future replica of foo-1 on broker 2 is in the same log directory as its current replica",
    ]
    assert raised.value.message == "11 problem(s) found; nothing was written"


def test_import_log_dirs_commits_all_or_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with ClusterState.open(state, write=True, create=True) as opened:
        opened.commit([
            FeatureLevelRecord(name="metadata.version", feature_level=30),
            *broker(1, {D11: "/data/b1/d1"}),
            TopicRecord(name="foo", topic_id=FOO),
            partition(FOO, 0, (1,), (D11,)),
        ])
    good = tmp_path / "good.txt"
    good.write_text(output({"broker": 1, "logDirs": [logdir("/data/b1/d1", ("foo-0", 321, 0, False))]}))
    bad = tmp_path / "bad.txt"
    bad.write_text(output({"broker": 1, "logDirs": [logdir("/data/b1/d1", ("foo-0", 999, 0, False), ("foo-1", 1, 0, False))]}))
    with pytest.raises(ValidationFailed):
        run_operation(state, lambda controller: import_log_dirs(controller, [bad]))
    assert read_image(state).topics.by_name["foo"].size(0) == 0
    result, _ = run_operation(state, lambda controller: import_log_dirs(controller, [good]))
    assert result.response.partition_sizes == 1
    assert read_image(state).topics.by_name["foo"].size(0) == 321
