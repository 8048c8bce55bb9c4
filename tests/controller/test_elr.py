"""Eligible leader replicas (KIP-966) as Kafka 4.4.0's controller runs them: the
PartitionChangeBuilder's rules one by one (4.3.1 metadata:controller/PartitionChangeBuilder.java
lines, the same code in 4.4.0), then the controller paths that change ISR and ELR
(ReplicationControlManager), then a property over random broker events."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjbod.common.kafka_uuid import DirectoryId, Uuid
from kjbod.common.versions import ELIGIBLE_LEADER_REPLICAS_VERSION, metadata_version_for_level
from kjbod.controller import Controller, Errors
from kjbod.controller.partition_change import Election, PartitionChangeBuilder
from kjbod.controller.replication_control import AlterPartitionRequest, CreateTopicRequest, HeartbeatRequest
from kjbod.image import Image, PartitionRegistration, replay_all
from kjbod.image.elr import min_isr_config
from kjbod.records import CONFIG_RESOURCE_BROKER, CONFIG_RESOURCE_TOPIC, ConfigRecord, FeatureLevelRecord

from .support import apply, bootstrap, new_dir, registration, topic_partitions, with_brokers, with_topic

T = "cJ3rE4bvQc2w5Y0kT1q9Zg"
MV = metadata_version_for_level(30)


def partition(replicas=(1, 2, 3), isr=(1, 2, 3), leader=1, elr=(), last_known=(), lrs=0) -> PartitionRegistration:  # noqa: ANN001
    dirs = tuple(DirectoryId.UNASSIGNED for _ in replicas)
    return PartitionRegistration(tuple(replicas), dirs, tuple(isr), (), (), tuple(elr), tuple(last_known), leader, lrs, 5, 9)


def builder(p: PartitionRegistration, accept=lambda r: True, min_isr: int = 2, elr: bool = True) -> PartitionChangeBuilder:  # noqa: ANN001
    return PartitionChangeBuilder(p, T, 0, accept, MV, default_dir=lambda b: DirectoryId.UNASSIGNED, min_isr=min_isr, elr_enabled=elr)


# The builder, rule by rule ------------------------------------------------------------------


def test_an_isr_at_min_isr_keeps_no_elr() -> None:
    # maybePopulateTargetElr (PCB:536-540): ISR >= min ISR clears the ELR.
    record = builder(partition(isr=(1, 2), elr=(3,))).set_target_isr([1, 2, 3]).build()
    assert (record.isr, record.eligible_leader_replicas) == ((1, 2, 3), ())


def test_replicas_leaving_an_isr_below_min_isr_join_the_elr() -> None:
    # PCB:542-555: ELR = (ELR ∪ old ISR) minus the target ISR.
    record = builder(partition(isr=(1, 2))).set_target_isr([1]).build()
    assert (record.leader, record.isr, record.eligible_leader_replicas, record.last_known_elr) == (-2, (1,), (2,), None)
    # Still above min ISR: an ordinary shrink.
    record = builder(partition()).set_target_isr([1, 2]).build()
    assert (record.isr, record.eligible_leader_replicas) == ((1, 2), None)


def test_the_elr_is_in_java_hash_set_order() -> None:
    # Kafka streams a HashSet<Integer> (PCB:549-552): 16 lands in bucket 0 of 16, before 3.
    p = partition(replicas=(3, 16, 5), isr=(3, 16, 5), leader=5)
    record = builder(p, min_isr=3).set_target_isr([5]).build()
    assert record.eligible_leader_replicas == (16, 3)


def test_an_unclean_shutdown_replica_never_joins_the_elr() -> None:
    # PCB:543-546 (setUncleanShutdownReplicas, RCM handleBrokerShutdown).
    record = builder(partition(isr=(1, 2)), accept=lambda r: r != 2).set_unclean_shutdown_replicas([2]).set_target_isr([1]).build()
    assert (record.isr, record.eligible_leader_replicas) == ((1,), None)
    record = builder(partition(isr=(1,), elr=(2, 3)), accept=lambda r: r != 2).set_unclean_shutdown_replicas([2]).build()
    assert record.eligible_leader_replicas == (3,)


def test_with_elr_the_isr_may_become_empty_and_the_last_leader_is_remembered() -> None:
    # PCB:442-448 and maybeUpdateLastKnownLeader (PCB:492-497).
    record = builder(partition(isr=(1,), elr=(2,)), accept=lambda r: r == 3).set_target_isr([]).build()
    assert (record.leader, record.isr, record.eligible_leader_replicas, record.last_known_elr) == (-1, (), (1, 2), (1,))


def test_without_elr_the_isr_never_becomes_empty_and_stale_elr_is_cleared() -> None:
    record = builder(partition(isr=(1,)), accept=lambda r: False, elr=False).set_target_isr([]).build()
    assert (record.leader, record.isr, record.eligible_leader_replicas, record.last_known_elr) == (-1, None, None, None)
    # maybeUpdateRecordElr (PCB:508-512): ELR disabled clears what a partition still has.
    record = builder(partition(isr=(1, 2, 3), elr=(4,)), elr=False).build()
    assert record.eligible_leader_replicas == ()


def test_an_elr_member_leads_when_the_isr_is_empty_and_becomes_the_isr() -> None:
    # isValidNewLeader (PCB:318-322) and tryElection (PCB:330-333): a clean election from the ELR.
    p = partition(isr=(), leader=-1, elr=(1, 2), last_known=(1,))
    record = builder(p, accept=lambda r: r == 2).build()
    assert (record.leader, record.isr, record.eligible_leader_replicas, record.last_known_elr) == (2, (2,), (1,), ())
    assert record.leader_recovery_state == -1  # clean: no recovery
    # An ELR member is not eligible while the ISR has a member.
    assert builder(partition(isr=(3,), leader=-1, elr=(2,)), accept=lambda r: r == 2).build() is None


def test_the_last_known_leader_comes_back_uncleanly() -> None:
    # canElectLastKnownLeader (PCB:265-300): ISR and ELR empty, one last known leader, acceptable.
    p = partition(isr=(), leader=-1, last_known=(1,))
    record = builder(p).build()
    assert (record.leader, record.isr, record.leader_recovery_state, record.last_known_elr) == (1, (1,), 1, ())
    assert builder(p, accept=lambda r: r != 1).build() is None
    assert builder(p, elr=False).build() is None
    # Preferred elections try it too (PCB:247-249).
    assert builder(p).set_election(Election.PREFERRED).build().leader == 1


def test_an_unclean_election_clears_the_elr() -> None:
    # maybeUpdateRecordElr (PCB:508-512).
    p = partition(isr=(1,), leader=-1, elr=(2,))
    record = builder(p, accept=lambda r: r == 3).set_election(Election.UNCLEAN).build()
    assert (record.leader, record.isr, record.eligible_leader_replicas, record.leader_recovery_state) == (3, (3,), (), 1)


# The controller's paths -----------------------------------------------------------------------


def elr_registration(broker: int, dirs: list[str], **kwargs: object):  # noqa: ANN201
    """A broker of the newest release: it supports eligible.leader.replicas.version 1, as 4.1+ brokers do."""
    assert registration(broker, dirs).supported_features[ELIGIBLE_LEADER_REPLICAS_VERSION] == (0, 1)
    return registration(broker, dirs, **kwargs)


def elr_cluster(min_isr: str = "2", brokers: int = 3, **topic: object) -> tuple[Image, str]:
    """A 4.3-IV0 cluster with ELR on and a cluster-level min.insync.replicas, as a 4.1+
    bootstrap leaves it (ActivationRecordsGenerator), with topic t: one partition on 1,2,3 led by 1."""
    image = replay_all(bootstrap(), [
        FeatureLevelRecord(name=ELIGIBLE_LEADER_REPLICAS_VERSION, feature_level=1),
        ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name="", name="min.insync.replicas", value=min_isr),
    ])
    for broker in range(1, brokers + 1):
        image = apply(image, Controller(image).cluster.register_broker(elr_registration(broker, [new_dir()])))
        image = unfence(image, broker)
    image = with_topic(image, "t", **{"partitions": 1, "rf": 3, "assignment": ((1, 2, 3),), **topic})
    topic_id, _ = topic_partitions(image, "t")
    return image, topic_id


def fence(image: Image, broker: int) -> Image:
    return apply(image, Controller(image).replication.fence_broker(broker))


def unfence(image: Image, broker: int) -> Image:
    return apply(image, Controller(image).replication.heartbeat(HeartbeatRequest(broker)))


def state_of(image: Image, topic_id: str) -> tuple:
    p = image.topics.partition(topic_id, 0)
    return p.leader, p.isr, p.elr, p.last_known_elr


def test_the_worked_example_of_fencing_and_unfencing() -> None:
    image, t = elr_cluster()
    image = fence(image, 3)
    assert state_of(image, t) == (1, (1, 2), (), ())
    image = fence(image, 2)
    assert state_of(image, t) == (1, (1,), (2,), ())
    image = fence(image, 1)
    assert state_of(image, t) == (-1, (), (1, 2), (1,))
    image = unfence(image, 2)  # a clean election from the ELR
    assert state_of(image, t) == (2, (2,), (1,), ())
    assert image.topics.partition(t, 0).leader_recovery_state == 0


def reregister(image: Image, broker: int, *, clean: bool) -> Image:
    request = elr_registration(broker, list(image.cluster.brokers[broker].directories), incarnation=str(Uuid(broker, 99)), clean_shutdown=clean)
    return apply(image, Controller(image).cluster.register_broker(request))


def test_the_last_leader_returns_when_isr_and_elr_are_empty() -> None:
    # min ISR 1: the last ISR member joins the ELR and is remembered as the last leader.
    image, t = elr_cluster(min_isr="1")
    for broker in (3, 2, 1):
        image = fence(image, broker)
    assert state_of(image, t) == (-1, (), (1,), (1,))
    # Its new incarnation after an unclean shutdown leaves the ELR (handleBrokerShutdown).
    image = reregister(image, 1, clean=False)
    assert state_of(image, t) == (-1, (), (), (1,))
    image = unfence(image, 2)
    assert state_of(image, t) == (-1, (), (), (1,))  # 2 was not in sync
    image = unfence(image, 1)
    assert state_of(image, t) == (1, (1,), (), ())
    assert image.topics.partition(t, 0).leader_recovery_state == 1  # RECOVERING: an unclean election


def test_a_clean_restart_keeps_the_broker_eligible() -> None:
    image, t = elr_cluster(min_isr="1")
    for broker in (3, 2, 1):
        image = fence(image, broker)
    image = reregister(image, 1, clean=True)
    assert state_of(image, t) == (-1, (), (1,), (1,))
    image = unfence(image, 1)
    assert state_of(image, t) == (1, (1,), (), ())
    assert image.topics.partition(t, 0).leader_recovery_state == 0


def test_an_unclean_restart_of_an_isr_member_takes_it_out_of_isr_and_elr() -> None:
    image, t = elr_cluster()
    image = fence(image, 3)
    image = fence(image, 2)
    assert state_of(image, t) == (1, (1,), (2,), ())
    result = Controller(image).cluster.register_broker(
        elr_registration(2, list(image.cluster.brokers[2].directories), incarnation=str(Uuid(2, 99)), clean_shutdown=False)
    )
    assert [type(r).__name__ for r in result.records] == ["PartitionChangeRecord", "RegisterBrokerRecord", "KjbodBrokerLogDirsRecord"]
    assert state_of(apply(image, result), t) == (1, (1,), (), ())


def test_min_isr_is_the_topic_config_at_most_the_replication_factor() -> None:
    image, t = elr_cluster(min_isr="1", configs={"min.insync.replicas": "3"})
    image = fence(image, 3)
    assert state_of(image, t) == (1, (1, 2), (3,), ())
    image, t = elr_cluster(min_isr="5")  # above RF 3: min ISR is 3
    image = fence(image, 3)
    assert state_of(image, t) == (1, (1, 2), (3,), ())


def test_min_isr_resolution() -> None:
    # KafkaConfigSchema.resolveEffectiveTopicConfig (:192-217): topic, active controller's node
    # config, cluster default, then the default 1.
    image = replay_all(bootstrap(), [
        ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name="", name="min.insync.replicas", value="2"),
        ConfigRecord(resource_type=CONFIG_RESOURCE_BROKER, resource_name="7", name="min.insync.replicas", value="3"),
        ConfigRecord(resource_type=CONFIG_RESOURCE_TOPIC, resource_name="a", name="min.insync.replicas", value="4"),
    ])
    assert min_isr_config(image.configs, "a", 7) == 4
    assert min_isr_config(image.configs, "b", 7) == 3
    assert min_isr_config(image.configs, "b", 8) == 2
    assert min_isr_config(bootstrap().configs, "b", 7) == 1


def test_rejoining_the_isr_leaves_the_elr() -> None:
    image, t = elr_cluster()
    image = fence(image, 3)
    image = fence(image, 2)
    assert state_of(image, t) == (1, (1,), (2,), ())
    image = unfence(image, 2)  # unfencing elects leaders of leaderless partitions only
    assert state_of(image, t) == (1, (1,), (2,), ())
    p = image.topics.partition(t, 0)
    request = AlterPartitionRequest(1, t, 0, p.leader_epoch, p.partition_epoch, (1, 2))
    image = apply(image, result := Controller(image).replication.alter_partition(request))
    assert result.response.error is Errors.NONE
    assert state_of(image, t) == (1, (1, 2), (), ())


def test_an_alter_partition_shrink_below_min_isr_fills_the_elr() -> None:
    image, t = elr_cluster()
    p = image.topics.partition(t, 0)
    request = AlterPartitionRequest(1, t, 0, p.leader_epoch, p.partition_epoch, (1,))
    image = apply(image, Controller(image).replication.alter_partition(request))
    assert state_of(image, t) == (1, (1,), (2, 3), ())


def test_unregistering_an_elr_member_visits_its_elr_partitions() -> None:
    image, t = elr_cluster()
    for broker in (3, 2, 1):
        image = fence(image, broker)
    assert state_of(image, t) == (-1, (), (1, 2), (1,))
    result = Controller(image).replication.unregister_broker(2)
    # 2 stays in the ELR (Kafka filters only unclean shutdowns out of it) and nothing changes.
    assert [type(r).__name__ for r in result.records] == ["UnregisterBrokerRecord"]
    image = apply(image, result)
    image = unfence(image, 1)
    assert state_of(image, t) == (1, (1,), (2,), ())


def test_a_controlled_shutdown_keeps_the_broker_eligible() -> None:
    image, t = elr_cluster()
    image = fence(image, 3)
    image = apply(image, Controller(image).replication.controlled_shutdown(2))
    assert state_of(image, t) == (1, (1,), (2,), ())


def test_a_failed_directory_moves_its_replica_into_the_elr() -> None:
    image, t = elr_cluster()
    image = fence(image, 3)
    directory = image.topics.partition(t, 0).directory(2)
    image = apply(image, Controller(image).replication.heartbeat(HeartbeatRequest(2, offline_log_dirs=(directory,))))
    assert state_of(image, t) == (1, (1,), (2,), ())


def test_an_unclean_election_request_with_an_elr_member_alive_is_clean() -> None:
    # RCM.electLeader (4.4.0 :1651-1695) through the builder: a leaderless partition whose ELR
    # member is acceptable is led by it without data loss.
    image, t = elr_cluster()
    for broker in (3, 2, 1):
        image = fence(image, broker)
    assert image.topics.partition(t, 0).elr == (1, 2)
    result = Controller(image).replication.elect_leaders(Election.UNCLEAN, [("t", 0)])
    assert result.response.results[0].error.error is Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE  # all fenced


# A property over random broker events -----------------------------------------------------------

EVENTS = st.lists(
    st.tuples(st.sampled_from(["fence", "unfence", "shutdown", "restart-clean", "restart-unclean", "shrink", "expand", "preferred", "unclean"]),
              st.integers(1, 4)),
    max_size=25,
)


def _event(image: Image, kind: str, broker: int, topic_id: str) -> Image:
    controller = Controller(image)
    replication = controller.replication
    broker_registration = image.cluster.brokers[broker]
    p = image.topics.partition(topic_id, 0)
    if kind == "fence" and not broker_registration.fenced:
        return apply(image, replication.fence_broker(broker))
    if kind == "unfence" and broker_registration.fenced:
        return apply(image, replication.heartbeat(HeartbeatRequest(broker)))
    if kind == "shutdown" and not broker_registration.fenced:
        return apply(image, replication.controlled_shutdown(broker))
    if kind.startswith("restart") and broker_registration.fenced:
        incarnation = str(Uuid(broker, image.next_offset + 100))
        request = elr_registration(broker, list(broker_registration.directories), incarnation=incarnation, clean_shutdown=kind == "restart-clean")
        return apply(image, controller.cluster.register_broker(request))
    if kind in ("shrink", "expand") and p.leader != -1:
        if kind == "shrink":
            isr = tuple(r for r in p.isr if r == p.leader or r != broker)
        else:
            isr = tuple(r for r in p.replicas if r in p.isr or (r == broker and not image.cluster.brokers[r].fenced))
        request = AlterPartitionRequest(p.leader, topic_id, 0, p.leader_epoch, p.partition_epoch, isr)
        return apply(image, replication.alter_partition(request))
    if kind in ("preferred", "unclean"):
        return apply(image, replication.elect_leaders(Election.PREFERRED if kind == "preferred" else Election.UNCLEAN, [("t", 0)]))
    return image


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(min_isr=st.integers(1, 3), events=EVENTS)
def test_elr_invariants(min_isr: int, events: list[tuple[str, int]]) -> None:
    """KIP-966's invariants after any sequence of fencing, restarts, ISR changes and elections:
    ISR and ELR are disjoint sets of replicas (so |ISR| + |ELR| <= RF); the ELR is only kept
    while the ISR is at most min ISR (it fills below min ISR; a clean election from it leaves
    the leader alone in the ISR); a leader is in the ISR; LastKnownElr holds at most the one
    last leader, and only while the partition has none."""
    image, t = elr_cluster(min_isr=str(min_isr), brokers=4)
    unclean: set[int] = set()  # restarted uncleanly and not in the ISR since
    for kind, broker in events:
        before = image
        image = _event(image, kind, broker, t)
        if kind == "restart-unclean" and image is not before:
            unclean.add(broker)
        p = image.topics.partition(t, 0)
        unclean -= set(p.isr)
        assert not unclean & set(p.elr), (unclean, p)
        assert len(set(p.isr)) == len(p.isr) and len(set(p.elr)) == len(p.elr)
        assert not set(p.isr) & set(p.elr), p
        assert set(p.isr) <= set(p.replicas) and set(p.elr) <= set(p.replicas), p
        assert len(p.isr) + len(p.elr) <= len(p.replicas)
        assert not p.elr or len(p.isr) <= min_isr, p
        assert p.leader == -1 or p.leader in p.isr, p
        assert len(p.last_known_elr) <= 1 and (not p.last_known_elr or p.leader == -1), p


def test_a_topic_created_with_min_isr_is_followed_by_a_clear_elr_record() -> None:
    # RCM.createTopic puts the topic's ConfigRecords after its TopicRecord (4.3.1 :845-849);
    # incrementalAlterConfig follows a min.insync.replicas one with ClearElrRecord (CfgCM
    # :235-255), with ELR on only.
    image, _ = elr_cluster()
    request = CreateTopicRequest("u", 1, 3, configs={"min.insync.replicas": "2", "retention.ms": "1"}, seed=1)
    result = Controller(image).replication.create_topic(request)
    assert [type(r).__name__ for r in result.records] == ["TopicRecord", "ConfigRecord", "ConfigRecord", "ClearElrRecord", "PartitionRecord"]
    assert apply(image, result).topics.by_name["u"].partitions[0].isr == (1, 2, 3)
    without, _ = with_brokers(bootstrap(), 3)
    assert "ClearElrRecord" not in [type(r).__name__ for r in Controller(without).replication.create_topic(request).records]


def test_elr_survives_the_state_log_and_its_columnar_snapshot(tmp_path) -> None:  # noqa: ANN001
    """ELR and LastKnownElr go through kjbod's own record log and its columnar snapshot."""
    from kjbod.state.cluster_state import ClusterState, read_image

    image, t = elr_cluster()
    commits = [list(image.write())]
    for broker in (3, 2, 1):
        result = Controller(image).replication.fence_broker(broker)
        commits.append(list(result.records))
        image = apply(image, result)
    with ClusterState.open(tmp_path, write=True, create=True) as state:
        for records in commits[:2]:
            state.commit(records)
        state.write_snapshot()
        for records in commits[2:]:
            state.commit(records)
    assert state_of(read_image(tmp_path), t) == state_of(image, t) == (-1, (), (1, 2), (1,))
    with ClusterState.open(tmp_path, write=True) as state:
        state.write_snapshot()
    assert read_image(tmp_path).topics.partition(t, 0) == image.topics.partition(t, 0)
