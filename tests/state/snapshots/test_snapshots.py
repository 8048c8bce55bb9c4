"""Columnar snapshots in a state directory: they load as the log replays, a damaged one is passed
over, snapshots of records from earlier versions still load, writes take snapshots by themselves
past a bound, and `metadata verify` checks each against the log."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjbod.controller import Controller
from kjbod.controller.reassignment_control import ReassignmentTarget, ReplicaDirMove
from kjbod.controller.replication_control import CreateTopicRequest, HeartbeatRequest
from kjbod.errors import CorruptStateError
from kjbod.image import Image, replay_all
from kjbod.state.snapshots.columnar import write_columnar_snapshot
from kjbod.log.framing import read_batch
from kjbod.state.snapshots.records import list_snapshots, read_header, write_snapshot
from kjbod.records import KjbodClockRecord, Record
from kjbod.state import snapshots
from kjbod.state.cluster_state import ClusterState, read_image, run_operation
from kjbod.state.inspect import verify_state
from kjbod.tools.kafka_export import export_kafka_snapshot

from ...conftest import Cli
from ...controller.support import bootstrap, with_brokers


def cluster_records() -> tuple[list[list[Record]], Image]:
    """Commits that build a small cluster with every kind of partition state (reassigning,
    sized, a future replica, a failed directory), and the image they give."""
    image, dirs = with_brokers(bootstrap(), 4, dirs_each=2, racks=2)
    commits: list[list[Record]] = [list(image.write())]

    def step(result) -> None:  # noqa: ANN001
        nonlocal image
        commits.append(list(result.records))
        image = replay_all(image, result.records)

    step(Controller(image).replication.create_topic(CreateTopicRequest("orders", 6, 3, seed=1)))
    step(Controller(image).replication.create_topic(CreateTopicRequest("clicks", 4, 2, seed=2)))
    step(Controller(image).replication.set_partition_sizes("orders", None, 5000))
    step(Controller(image).reassignment.alter_partition_reassignments([ReassignmentTarget("clicks", 0, (1, 2, 3))]))
    p = image.topics.by_name["orders"].partitions[1]
    step(Controller(image).reassignment.alter_replica_log_dirs([ReplicaDirMove("orders", 1, p.replicas[0], dirs[p.replicas[0]][1])]))
    step(Controller(image).replication.heartbeat(HeartbeatRequest(4, offline_log_dirs=(dirs[4][0],))))
    return commits, image


def create(path: Path, commits: list[list[Record]]) -> None:
    with ClusterState.open(path, write=True, create=True) as state:
        for records in commits:
            state.commit(records)


def assert_same_state(found: Image, expected: Image) -> None:
    assert found.topics == expected.topics
    assert found.features == expected.features
    assert found.configs == expected.configs
    assert dict(found.cluster.brokers) == dict(expected.cluster.brokers)
    assert dict(found.cluster.log_dirs) == dict(expected.cluster.log_dirs)
    assert found.time_ms == expected.time_ms
    for topic in expected.topics.by_id.values():
        other = found.topics.by_id[topic.topic_id]
        assert dict(other.sizes.items()) == dict(topic.sizes.items())
        assert dict(other.replica_logs.items()) == dict(topic.replica_logs.items())


def write_columns(state: ClusterState, *, log_position: tuple[int, int] | None = None, change=None) -> Path:  # noqa: ANN001
    """A columnar snapshot of the state's image written by hand: at a given log position, or
    with its arrays changed by `change`."""
    image = state.image
    table = image.topics.table.by_topic_id()
    arrays = dict(table.arrays())
    if change is not None:
        change(arrays)
    return write_columnar_snapshot(
        state.path, image.next_offset, image.write_without_topics(), arrays, table.strings(),
        record_count=1, timestamp_ms=0, log_position=log_position,
    )


def test_a_columnar_snapshot_gives_the_state_the_log_gives(tmp_path: Path) -> None:
    commits, expected = cluster_records()
    create(tmp_path, commits[:4])
    with ClusterState.open(tmp_path, write=True) as state:
        path = state.write_snapshot()
        for records in commits[4:]:
            state.commit(records)
    assert read_header(path)["layout"] == "columns"
    image = read_image(tmp_path)
    assert image.topics.root is not None  # read from the columns, with the log after it on top
    assert_same_state(image, expected)
    report = verify_state(tmp_path)
    assert report.problems == [] and report.snapshots_verified == [path.name]


def test_opening_reads_the_log_only_after_the_snapshot(tmp_path: Path) -> None:
    commits, expected = cluster_records()
    create(tmp_path, commits)
    with ClusterState.open(tmp_path, write=True) as state:
        state.write_snapshot()
        state.commit([KjbodClockRecord(time_ms=5)])
    segment = sorted(tmp_path.glob("*.log"))[0]
    data = bytearray(segment.read_bytes())
    data[40] ^= 0xFF  # inside the first batch, which the snapshot covers
    segment.write_bytes(bytes(data))
    assert read_image(tmp_path).time_ms == 5  # the damage is before the snapshot: not read
    report_error = pytest.raises(CorruptStateError, verify_state, tmp_path)  # metadata verify reads everything
    assert "damaged at offset 0" in str(report_error.value)


def test_a_snapshot_whose_log_position_is_wrong_still_loads(tmp_path: Path) -> None:
    commits, expected = cluster_records()
    create(tmp_path, commits)
    with ClusterState.open(tmp_path, write=True) as state:
        write_columns(state, log_position=(0, 17))
        state.commit([KjbodClockRecord(time_ms=9)])
    found = read_image(tmp_path)
    assert found.time_ms == 9 and found.topics.root is not None
    assert_same_state(Image(found.offset, found.features, found.cluster, found.topics, found.configs, expected.time_ms), expected)


def test_a_damaged_column_is_passed_over(tmp_path: Path) -> None:
    commits, expected = cluster_records()
    create(tmp_path, commits)
    with ClusterState.open(tmp_path, write=True) as state:
        path = state.write_snapshot()
    data = bytearray(path.read_bytes())
    position = 0
    batches = []
    while position < len(data):
        batch = read_batch(bytes(data), position)
        batches.append(batch)
        position += batch.size
    largest = max(batches[2:-1], key=lambda b: b.size)
    data[largest.position + largest.size - 3] ^= 0x10
    path.write_bytes(bytes(data))
    notices: list[str] = []
    image = read_image(tmp_path, notify=notices.append)
    assert notices == [
        f"Skipping {path.name}: snapshot {path.name} is damaged: a checksum mismatch at byte {largest.position}; "
        "using an older snapshot or the log."
    ]
    assert image.topics.root is None  # replayed from the log
    assert_same_state(image, expected)
    assert any("checksum mismatch" in p for p in verify_state(tmp_path).problems)


def test_columns_that_do_not_fit_together_are_a_damaged_snapshot(tmp_path: Path) -> None:
    commits, expected = cluster_records()
    create(tmp_path, commits)
    def one_replica_short(arrays: dict) -> None:  # checksummed, but the columns do not fit together
        arrays["replicas.values"] = arrays["replicas.values"][:-1]

    with ClusterState.open(tmp_path, write=True) as state:
        path = write_columns(state, change=one_replica_short)
    notices: list[str] = []
    assert_same_state(read_image(tmp_path, notify=notices.append), expected)
    assert notices == [f"Skipping {path.name}: snapshot {path.name} is damaged: column replicas does not hold 10 rows; using an older snapshot or the log."]


def test_a_snapshot_that_disagrees_with_the_log_fails_verify(tmp_path: Path) -> None:
    commits, expected = cluster_records()
    create(tmp_path, commits)
    def other_epochs(arrays: dict) -> None:
        arrays["leader_epoch"] = arrays["leader_epoch"] + 1

    with ClusterState.open(tmp_path, write=True) as state:
        path = write_columns(state, change=other_epochs)
        offset = state.image.offset
    report = verify_state(tmp_path)
    assert report.problems == [f"snapshot {path.name} does not match the state the log gives at offset {offset}"]


def test_a_snapshot_of_records_from_an_earlier_version_loads_and_the_next_write_replaces_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commits, expected = cluster_records()
    create(tmp_path, commits)
    with ClusterState.open(tmp_path, write=True) as state:
        old = write_snapshot(tmp_path, state.image.next_offset, state.image.write(), 0)  # what kjbod wrote before
    assert "layout" not in read_header(old)
    image = read_image(tmp_path)
    assert image.topics.root is None
    assert_same_state(image, expected)
    report = verify_state(tmp_path)
    assert report.record_snapshots == [old.name] and report.problems == []
    assert report.records_since_snapshot == report.next_offset  # a snapshot of records does not count
    monkeypatch.setattr(snapshots, "AUTO_SNAPSHOT_RECORDS", 10)
    notices: list[str] = []
    run_operation(tmp_path, lambda c: c.replication.set_partition_sizes("clicks", None, 7), notify=notices.append)
    newest = list_snapshots(tmp_path)[0][1]
    assert read_header(newest)["layout"] == "columns"
    assert notices == [f"Wrote {newest.name} as columns in place of {old.name} (records, from an earlier kjbod): the state opens fast from now on."]
    assert read_image(tmp_path).topics.root is not None


def test_writes_take_snapshots_past_the_bound_and_keep_the_newest_two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commits, _ = cluster_records()
    create(tmp_path, commits)
    monkeypatch.setattr(snapshots, "AUTO_SNAPSHOT_RECORDS", 3)

    class Tick:
        def __init__(self, controller: Controller) -> None:
            now = controller.image.time_ms
            self.records = [KjbodClockRecord(time_ms=now + 1), KjbodClockRecord(time_ms=now + 2)]
            self.response = None

    taken = []
    for _ in range(6):
        run_operation(tmp_path, Tick)
        taken.append([end for end, _ in list_snapshots(tmp_path)])
    # The first write finds the whole log unsnapshotted; then every second write passes the bound.
    assert taken[0] and len(taken[-1]) == 2
    assert len({tuple(t) for t in taken}) >= 3
    report = verify_state(tmp_path)
    assert report.problems == [] and len(report.snapshots_verified) == 2
    assert report.records_since_snapshot < 3


def test_a_new_snapshot_keeps_the_one_the_state_loaded_from_not_a_damaged_newer_one(tmp_path: Path) -> None:
    commits, _ = cluster_records()
    create(tmp_path, commits)
    with ClusterState.open(tmp_path, write=True) as state:
        good = state.write_snapshot()
        state.commit([KjbodClockRecord(time_ms=5)])
        damaged = state.write_snapshot()
    damaged.write_bytes(damaged.read_bytes()[:-7])  # cut short: it no longer loads
    with ClusterState.open(tmp_path, write=True, notify=lambda _: None) as state:
        state.commit([KjbodClockRecord(time_ms=6)])
        new = state.write_snapshot()
        assert [p for _, p in list_snapshots(tmp_path)] == [new, good]  # the damaged one goes, the good one stays
        state.commit([KjbodClockRecord(time_ms=7)])
        newer = state.write_snapshot()
    assert [p for _, p in list_snapshots(tmp_path)] == [newer, new]  # then the newest two, as always
    assert read_image(tmp_path).time_ms == 7 and verify_state(tmp_path).problems == []


def test_a_snapshot_that_cannot_be_written_leaves_the_write_standing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commits, _ = cluster_records()
    create(tmp_path, commits)
    monkeypatch.setattr(snapshots, "AUTO_SNAPSHOT_RECORDS", 1)

    def no_space(*args: object, **kwargs: object) -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(snapshots, "write_columnar_snapshot", no_space)
    notices: list[str] = []

    class Tick:
        def __init__(self, controller: Controller) -> None:
            self.records = [KjbodClockRecord(time_ms=77)]
            self.response = None

    run_operation(tmp_path, Tick, notify=notices.append)
    assert read_image(tmp_path).time_ms == 77
    assert notices == [f"Could not write a snapshot of {tmp_path} (No space left on device); the next write tries again."]
    assert list_snapshots(tmp_path) == []


BEFORE_COLUMNS = Path(__file__).parents[2] / "fixtures" / "state-before-columns"


def test_a_state_written_by_kjbod_before_columnar_snapshots_reads_the_same_and_converts(tmp_path: Path, cli: Cli) -> None:
    """The fixture was written by main's code before issue 17 (make.sh says how): a snapshot of
    records, then commits after it."""
    state = tmp_path / "before-columns"
    shutil.copytree(BEFORE_COLUMNS / "state", state)
    old = [path.name for _, path in list_snapshots(state)]
    assert len(old) == 1 and "layout" not in read_header(state / old[0])
    expected = {args: (BEFORE_COLUMNS / name).read_text() for args, name in ((("topic", "describe"), "topic-describe.txt"), (("broker", "list"), "broker-list.txt"))}
    for args, output in expected.items():
        assert cli(*args, state=state).stdout == output
    verify = json.loads(cli("-o", "json", "metadata", "verify", state=state).stdout)
    assert (verify["snapshotsVerified"], verify["recordSnapshots"], verify["problems"]) == (old, old, [])
    assert verify["recordsSinceSnapshot"] == verify["nextOffset"]  # the next automatic snapshot is due by the whole log
    assert f"snapshot writes one (none is in columns yet, so all {verify['nextOffset']:,} records count)\n" in cli("metadata", "verify", state=state).stdout
    assert cli("metadata", "snapshot", state=state).exit_code == 0
    newest = list_snapshots(state)[0][1]
    assert read_header(newest)["layout"] == "columns" and read_image(state).topics.root is not None
    for args, output in expected.items():
        assert cli(*args, state=state).stdout == output
    verify = json.loads(cli("-o", "json", "metadata", "verify", state=state).stdout)
    assert (verify["snapshotsVerified"], verify["recordSnapshots"], verify["problems"]) == ([*old, newest.name], old, [])
    assert verify["recordsSinceSnapshot"] == 0


def test_a_kafka_snapshot_exported_from_a_columnar_image_is_the_one_the_replayed_image_gives(tmp_path: Path) -> None:
    commits, expected = cluster_records()
    create(tmp_path / "state", commits)
    with ClusterState.open(tmp_path / "state", write=True) as state:
        state.write_snapshot()
    columnar = read_image(tmp_path / "state")
    assert columnar.topics.root is not None  # read from the columns, not replayed
    exported = [export_kafka_snapshot(image, tmp_path / name, timestamp_ms=1_700_000_000_000).path for image, name in ((expected, "a"), (columnar, "b"))]
    assert exported[0].read_bytes() == exported[1].read_bytes()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.floats(min_value=0, max_value=1, exclude_max=True), flip=st.integers(min_value=1, max_value=255), cut=st.booleans())
def test_any_flipped_byte_or_cut_of_a_columnar_snapshot_is_passed_over(
    tmp_path_factory: pytest.TempPathFactory, where: float, flip: int, cut: bool
) -> None:
    """Every byte of the file is under a checksum or is a batch's length: whatever is damaged, the
    snapshot is reported and the state comes from the log, never from damaged columns."""
    path = tmp_path_factory.mktemp("state")
    commits, expected = cluster_records()
    create(path, commits)
    with ClusterState.open(path, write=True) as state:
        snapshot = state.write_snapshot()
    data = bytearray(snapshot.read_bytes())
    position = int(where * len(data))
    if cut:
        del data[position:]
    else:
        data[position] ^= flip
    snapshot.write_bytes(bytes(data))
    notices: list[str] = []
    image = read_image(path, notify=notices.append)
    assert len(notices) == 1 and notices[0].startswith(f"Skipping {snapshot.name}: snapshot {snapshot.name} is damaged: "), notices
    assert image.topics.root is None  # replayed from the log
    assert_same_state(image, expected)
