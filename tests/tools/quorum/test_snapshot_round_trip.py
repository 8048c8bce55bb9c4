"""The controller quorum through Kafka's snapshot format: export puts kraft.version and the voter
set in the header's control batch and the registrations among the metadata records; import
brings them back, so `kjbod quorum` works on an imported state."""

from __future__ import annotations

from pathlib import Path

from kjbod.controller import Controller
from kjbod.image import EMPTY_IMAGE, Image, replay_all
from kjbod.records import VotersRecord
from kjbod.records.wire import control_model
from kjbod.kafka_formats.kraft_snapshot import read_kraft_snapshot
from kjbod.tools.importer.from_snapshot import SnapshotImportRequest, plan_snapshot_import
from kjbod.tools.kafka_export import export_kafka_snapshot
from tests.controller.support import CLUSTER, DIRS, add, advance, grown, standalone, start, static
from tests.controller.support import apply as run


def exported(image: Image, tmp_path: Path) -> Path:
    return export_kafka_snapshot(image, tmp_path, timestamp_ms=1_700_000_000_000).path


def imported(path: Path) -> Image:
    plan = plan_snapshot_import(SnapshotImportRequest(path, cluster_id=CLUSTER))
    return replay_all(EMPTY_IMAGE, plan.entries)


def test_the_voter_set_goes_into_the_header_and_registrations_into_the_records(tmp_path: Path) -> None:
    image = grown(3)
    snapshot = read_kraft_snapshot(exported(image, tmp_path))
    controls = {c.type_name: c for c in snapshot.control_records}
    assert list(controls) == ["SNAPSHOT_HEADER", "KRAFT_VERSION", "KRAFT_VOTERS", "SNAPSHOT_FOOTER"]
    assert control_model("KRaftVersionRecord", controls["KRAFT_VERSION"].data).k_raft_version == 1
    voters = control_model("VotersRecord", controls["KRAFT_VOTERS"].data)
    assert [(v.voter_id, v.voter_directory_id) for v in voters.voters] == [(i, DIRS[i]) for i in (1, 2, 3)]
    names = [record.decode().name for record in snapshot.data_records()]
    assert names.count("RegisterControllerRecord") == 3
    assert not {"VotersRecord", "KRaftVersionRecord"} & set(names)


def test_an_exported_quorum_imports_as_it_was(tmp_path: Path) -> None:
    image = grown(3)
    back = imported(exported(image, tmp_path))
    assert (back.quorum.kraft_version, back.quorum.static) == (1, False)
    assert back.quorum.voters == image.quorum.voters
    assert back.cluster.controllers == image.cluster.controllers
    assert back.quorum.leader_id == 1 and back.identity is not None and back.identity.cluster_id == CLUSTER
    # Every voter runs and is caught up, the voter set is committed: the quorum takes changes.
    info = Controller(back).quorum.describe()
    assert info.change_committed and [r.lag for r in info.voters] == [0, 0, 0]
    back = advance(start(back, 4))
    assert add(back, 4).response.error.is_success
    replica = back.quorum.replicas[next(k for k in back.quorum.replicas if k.id == 2)]
    registration = image.cluster.controllers[2]
    assert (replica.incarnation_id, replica.end_points) == (registration.incarnation_id, registration.listeners)


def test_a_standalone_quorum_round_trips_and_an_uncommitted_change_is_written_as_the_latest_voter_set(tmp_path: Path) -> None:
    image = advance(start(standalone(), 2))
    image = run(image, add(image, 2))
    back = imported(exported(image, tmp_path))
    assert back.quorum.voter_ids == (1, 2)


def test_a_static_quorum_exports_no_voter_set_and_imports_without_a_quorum(tmp_path: Path) -> None:
    image = advance(static())
    path = exported(image, tmp_path)
    assert [c.type_name for c in read_kraft_snapshot(path).control_records] == ["SNAPSHOT_HEADER", "SNAPSHOT_FOOTER"]
    # kraft.version 0: the voters are in controller.quorum.voters, which a snapshot does not hold.
    back = imported(path)
    assert not back.quorum.is_modelled
    assert back.cluster.controllers.keys() == {1, 2, 3}


# Against Kafka's own reader and writer ---------------------------------------------------------

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "kafka"
QUORUM_EXPORT = FIXTURES / "quorum-export" / "00000000000000000029-0000000001.checkpoint"


def kafka_lines(path: Path) -> list[dict]:
    import json

    return [json.loads(line) for line in (path.parent / "kafka-read.jsonl").read_text().splitlines()]


def test_kafka_reads_the_voter_set_kjbod_exported() -> None:
    """The frozen export of make-cluster.sh as Kafka's reader saw it: the header's voter set and
    kraft.version are exactly kjbod's control records, and Kafka's image has the registrations."""
    lines = kafka_lines(QUORUM_EXPORT)
    kafka_controls = [(line["control"], line["data"]) for line in lines if "control" in line]
    ours = [(c.type_name, c.data) for c in read_kraft_snapshot(QUORUM_EXPORT).control_records]
    assert ours == kafka_controls
    voters = control_model("VotersRecord", dict(kafka_controls)["KRAFT_VOTERS"])
    assert [v.voter_id for v in voters.voters] == [1, 2, 3]
    image = lines[-1]["image"]
    assert [c["id"] for c in image["controllers"]] == [1, 2, 3]
    back = imported(QUORUM_EXPORT)
    assert [v.key.directory_id for v in back.quorum.voters] == [v.voter_directory_id for v in voters.voters]
    assert sorted(back.cluster.controllers) == [1, 2, 3] and back.quorum.kraft_version == 1


def test_a_voter_set_kafka_wrote_becomes_the_quorum() -> None:
    """The all-records snapshot's header, written by Kafka's own snapshot writer: three voters
    (one on an IPv6 host) and kraft.version 1, made a quorum as import does."""
    from kjbod.controller.quorum_control import imported_quorum_records
    from kjbod.image import VoterNode
    from kjbod.records import FeatureLevelRecord, Voter

    snapshot = read_kraft_snapshot(FIXTURES / "all-records" / "00000000000000000044-0000000001.checkpoint")
    assert snapshot.voters is not None and snapshot.kraft_version == 1
    voters = tuple(sorted((VoterNode.from_voter(Voter.model_validate(v.to_json())) for v in snapshot.voters), key=lambda v: v.key.id))
    base = replay_all(EMPTY_IMAGE, [FeatureLevelRecord(name="metadata.version", feature_level=21)])
    back = replay_all(base, imported_quorum_records(base, voters, 1, snapshot.snapshot_id.epoch, base.next_offset))
    assert back.quorum.voter_ids == (1, 2, 3) and back.quorum.kraft_version == 1
    assert "0:0:0:0:0:0:0:1" in {e.host for v in back.quorum.voters for e in v.endpoints}
    assert back.quorum.voters_record() == VotersRecord(voters=tuple(v.to_voter() for v in voters))
    info = Controller(back).quorum.describe()
    assert (info.leader_id, info.leader_epoch, info.change_committed) == (1, snapshot.snapshot_id.epoch, True)
