"""The quorum area of the image: replay rules, and a snapshot rebuilding it exactly (offsets too)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kjbod.controller import Controller
from kjbod.errors import ReplayError
from kjbod.image import EMPTY_IMAGE, ReplicaKey, replay_all
from kjbod.image.quorum import java_key_set
from kjbod.records import KjbodQuorumRecord, KRaftVersionRecord, VotersRecord
from kjbod.state.cluster_state import ClusterState
from tests.controller.support import DIRS, add, advance, grown, remove, start
from tests.controller.support import apply as run


def snapshot_round_trip(image, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Commit the image's records, snapshot, reopen from the snapshot alone."""
    state = tmp_path / "state"
    with ClusterState.open(state, write=True, create=True) as opened:
        opened.commit(list(image.write()))
        opened.write_snapshot()  # the newest snapshot covers the whole log: reopening loads it
    with ClusterState.open(state) as reopened:
        return reopened.image


def test_a_snapshot_keeps_the_offsets_the_commit_rules_compare(tmp_path: Path) -> None:
    image = advance(start(grown(3), 4))
    image = run(image, add(image, 4))  # uncommitted: its offset matters
    image = run(image, Controller(image).quorum.stop_controller(2))
    loaded = snapshot_round_trip(image, tmp_path)
    # The snapshot sits at another offset, so compare what depends on the quorum's own offsets.
    assert loaded.quorum.voters == image.quorum.voters
    assert loaded.quorum.replicas == image.quorum.replicas
    for field in ("voters_offset", "fetched_offset", "epoch_start_offset", "leader_id", "leader_epoch", "change_requested_ms"):
        assert getattr(loaded.quorum, field) == getattr(image.quorum, field), field
    assert loaded.cluster.controllers == image.cluster.controllers


def test_a_static_snapshot_keeps_its_static_voters(tmp_path: Path) -> None:
    from tests.controller.support import static

    image = static()
    loaded = snapshot_round_trip(image, tmp_path)
    assert (loaded.quorum.static, loaded.quorum.voters) == (True, image.quorum.voters)


def test_a_voters_record_replaces_the_voter_set_and_records_its_offset() -> None:
    image = grown(2)
    record = image.quorum.voters_record(image.quorum.voters[:1])
    after = replay_all(image, [record])
    assert after.quorum.voter_ids == (1,) and after.quorum.voters_offset == image.next_offset


def test_replay_refuses_what_kafka_would_not_read() -> None:
    with pytest.raises(ReplayError, match="unknown kraft.version 7"):
        replay_all(EMPTY_IMAGE, [KRaftVersionRecord(k_raft_version=7)])
    with pytest.raises(ReplayError, match="distinct voters"):
        replay_all(EMPTY_IMAGE, [VotersRecord(voters=())])
    with pytest.raises(ReplayError, match="static quorum needs its voters"):
        from tests.controller.support import static

        replay_all(static(), [KjbodQuorumRecord()])


def test_a_known_directory_id_replaces_the_unknown_one() -> None:
    from tests.controller.support import static

    image = start(static(), 2)
    assert ReplicaKey(2) not in image.quorum.replicas and ReplicaKey(2, DIRS[2]) in image.quorum.replicas
    assert image.quorum.replica_of_voter(image.quorum.voter(2)).running  # type: ignore[arg-type, union-attr]


def test_a_key_set_prints_in_java_hash_set_order() -> None:
    keys = [ReplicaKey(i, DIRS[i]) for i in (1, 2, 3)]
    text = java_key_set(keys)
    assert sorted(re.findall(r"ReplicaKey\([^)]*\)", text)) == sorted(str(k) for k in keys)
    assert java_key_set(list(reversed(keys))) == text  # order comes from the hashes, not the input


def test_a_removed_voter_commits_only_after_the_clock_moves() -> None:
    image = grown(3)
    image = run(image, remove(image, 3))
    assert not Controller(image).quorum.describe().change_committed
    assert Controller(advance(image)).quorum.describe().change_committed
