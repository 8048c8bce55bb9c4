"""`kjbod format`: kafka-storage format (storage reference §1.3-§1.6) and, on a controller, the
cluster state's bootstrap.

kjbod.tools.storage.formatter plans and writes the log directories as Kafka's Formatter does; a
controller node then initialises the cluster state with the bootstrap records, once: the
feature levels, and the controller quorum where it starts (kjbod.controller.quorum_control):
the KIP-853 voter set of --standalone / --initial-controllers with kraft.version 1, or the static
voter set of controller.quorum.voters with kraft.version 0.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Protocol

from kjbod.common.kafka_uuid import Uuid
from kjbod.common.kafka_configs import MIN_INSYNC_REPLICAS
from kjbod.common.versions import ELIGIBLE_LEADER_REPLICAS_VERSION, KRAFT_VERSION
from kjbod.controller.quorum_control import ControllerProcess, quorum_bootstrap_records
from kjbod.errors import KjbodError, UserError
from kjbod.image import ReplicaKey, VoterNode
from kjbod.records import CONFIG_RESOURCE_BROKER, ConfigRecord, ControllerEndpoint, KjbodClusterRecord, KjbodStaticVoter, Record, VoterEndpoint
from kjbod.storage.config import SECURITY_PROTOCOL_IDS, NodeConfig
from kjbod.tools.storage.formatter import (
    DirectoryAction,
    DirectoryResult,
    DirectoryStatus,
    FormatFailed,
    FormatOutcome,
    FormatPlan,
    FormatRequest,
    StateBootstrap,
    StateStatus,
    plan_format,
    write_plan,
)
from kjbod.tools.storage.voters import parse_static_voters


class ControllerState(Protocol):
    """The cluster state a controller bootstraps (kjbod.state.StateDirectory, from the CLI)."""

    path: Path

    def bootstrap(self, records: Sequence[Record]) -> bool: ...


def format_storage(
    request: FormatRequest,
    state: ControllerState,
    *,
    dry_run: bool = False,
    rng: random.Random | None = None,
    date: datetime | None = None,
) -> FormatOutcome:
    """`kjbod format`: plan, write the new directories, bootstrap a controller's cluster state.

    Raises FormatFailed (with what was done so far) if writing fails part-way.
    """
    plan = plan_format(request, rng=rng)
    # Built before anything is written: a controller.quorum.voters Kafka refuses stops format here.
    records = state_bootstrap_records(plan, rng) if plan.config.is_controller else []
    outcome = FormatOutcome(plan, dry_run)
    initial = {
        DirectoryAction.FORMAT: DirectoryStatus.WOULD_FORMAT if dry_run else DirectoryStatus.NOT_ATTEMPTED,
        DirectoryAction.ALREADY_FORMATTED: DirectoryStatus.ALREADY_FORMATTED,
        DirectoryAction.UNREADABLE: DirectoryStatus.UNREADABLE,
    }
    outcome.directories = [DirectoryResult(d, initial[d.action]) for d in plan.directories]
    if dry_run:
        if plan.config.is_controller:
            outcome.state = StateBootstrap(state.path, StateStatus.WOULD_INITIALISE)
        return outcome
    write_plan(plan, outcome, date)
    if plan.config.is_controller:
        try:
            initialised = state.bootstrap(records)
            outcome.state = StateBootstrap(state.path, StateStatus.INITIALISED if initialised else StateStatus.ALREADY_INITIALISED)
        except KjbodError as exc:
            failure = FormatFailed(exc.message, outcome)
            failure.exit_code = exc.exit_code
            raise failure from None
    return outcome


def controller_endpoints(config: NodeConfig) -> tuple[ControllerEndpoint, ...]:
    """The controller listeners' advertised endpoints (an unset host is `localhost`, as
    MetadataQuorumCommand.getControllerAdvertisedListeners takes it)."""
    for e in config.controller_endpoints():
        if not 0 <= e.port <= 65535:
            raise UserError(f"port out of range:{e.port} (the {e.listener} listener in {config.path})")
    return tuple(
        ControllerEndpoint(
            name=e.listener,
            host=e.host or "localhost",
            port=e.port,
            security_protocol=SECURITY_PROTOCOL_IDS.get(config.security_protocol(e.listener), 0),
        )
        for e in config.controller_endpoints()
    )


def bootstrap_metadata_records(plan: FormatPlan) -> list[Record]:
    """What the active controller of a new cluster appends to its empty log
    (ActivationRecordsGenerator.recordsForEmptyLog, 4.4.0 :95-103): the bootstrap records, then,
    when they finalize eligible.leader.replicas.version, the cluster-level min.insync.replicas
    (the controller's own min.insync.replicas, 1 by default) that ELR resolves with. (Kafka wraps
    them in a metadata transaction; a kjbod batch is atomic.)"""
    records: list[Record] = list(plan.records)
    if plan.feature_levels.get(ELIGIBLE_LEADER_REPLICAS_VERSION, 0) > 0:
        records.append(
            ConfigRecord(
                resource_type=CONFIG_RESOURCE_BROKER, resource_name="", name=MIN_INSYNC_REPLICAS, value=str(plan.config.min_insync_replicas)
            )
        )
    return records


def state_bootstrap_records(plan: FormatPlan, rng: random.Random | None = None) -> list[Record]:
    """What a controller hands the cluster state: the bootstrap metadata, then where its quorum
    starts. A controller formatted with --no-initial-controllers joins an existing quorum, so a
    state it initialises knows no quorum."""
    # After the bootstrap metadata, which cluster this is and which controller keeps it:
    # `broker register` checks the cluster id, feature updates name the controller.
    identity = KjbodClusterRecord(cluster_id=plan.cluster_id, controller_id=plan.config.node_id)
    records: list[Record] = [*bootstrap_metadata_records(plan), identity]
    config = plan.config
    listener = (config.controller_listener_names or ("CONTROLLER",))[0].upper()
    metadata_dir = next((d for d in plan.directories if d.path == config.metadata_log_dir), None)
    if metadata_dir is None or metadata_dir.directory_id is None:
        return records
    local = ControllerProcess(
        node_id=config.node_id,
        directory_id=metadata_dir.directory_id,
        end_points=controller_endpoints(config),
        cluster_id=plan.cluster_id,
        supported_features=plan.release.supported_ranges(),
        incarnation_id=str(Uuid.random(rng)),
    )
    kraft_version = plan.feature_levels.get(KRAFT_VERSION, 0)
    if plan.initial_controllers:
        # DynamicVoters.toVoterSet: one endpoint, on the first controller listener, kraft.version 0-1.
        voters = tuple(
            VoterNode(ReplicaKey(v.node_id, v.directory_id), (VoterEndpoint(name=listener, host=v.host, port=v.port),), (0, 1))
            for v in plan.initial_controllers
        )
        return records + quorum_bootstrap_records(
            local=local, kraft_version=kraft_version, first_offset=len(records), dynamic_voters=voters, rng=rng
        )
    if config.quorum_voters:
        static = tuple(
            KjbodStaticVoter(voter_id=v.node_id, listener=listener, host=v.host, port=v.port)
            for v in parse_static_voters(config.quorum_voters)
        )
        if static:
            return records + quorum_bootstrap_records(
                local=local, kraft_version=0, first_offset=len(records), static_voters=static, rng=rng
            )
    return records
