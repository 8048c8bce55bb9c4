"""`kjbod quorum add-controller` and `remove-controller`: kafka-metadata-quorum's line for a voter
change, its refusal, and kjbod's JSON and advice, from the change a controller made
(kjbod.controller.quorum_control.VoterChange).

The lines are MetadataQuorumCommand's (`tools/src/main/java/org/apache/kafka/tools/MetadataQuorumCommand.java`).
"""

from __future__ import annotations

from typing import Any

from kjbod.common.kafka_release import KafkaRelease
from kjbod.common.versions import RELEASE_4_4
from kjbod.controller.errors import ApiError, Errors, java_exception_text
from kjbod.controller.quorum_control import QuorumError, VoterChange, endpoint_text
from kjbod.errors import UsageError, UserError
from kjbod.image.quorum import ReplicaKey
from kjbod.records import VoterEndpoint


def endpoints_line(endpoints: tuple[VoterEndpoint, ...]) -> str:
    """The endpoints as add-controller prints them (MetadataQuorumCommand.java:442-454)."""
    return ", ".join(endpoint_text(e) for e in endpoints)


def added_line(change: VoterChange, dry_run: bool) -> str:
    """`add-controller`'s line (MetadataQuorumCommand.java:433-455)."""
    head = "DRY RUN of adding" if dry_run else "Added"
    return f"{head} controller {change.key.id} with directory id {change.key.directory_id} and endpoints: {endpoints_line(change.endpoints)}"


def removed_line(key: ReplicaKey, dry_run: bool, release: KafkaRelease) -> str:
    """`remove-controller`'s line. 4.3.1 formats `"%s KRaft controller ..."` with "Removed " /
    "DRY RUN of removing ", so two spaces follow the verb (4.3.1 MetadataQuorumCommand.java:505-508);
    4.4.0 dropped the format's space (4.4.0 MetadataQuorumCommand.java:508-510)."""
    space = "" if release.version >= RELEASE_4_4 else " "
    return f"{'DRY RUN of removing ' if dry_run else 'Removed '}{space}KRaft controller {key.id} with directory id {key.directory_id}"


def unregistered_line(controller_id: int, dry_run: bool) -> str:
    """remove-controller --unregister's second line (4.4.0 MetadataQuorumCommand.java:516-518)."""
    return f"{'DRY RUN of unregistering ' if dry_run else 'Unregistered '}KRaft controller {controller_id}"


def _unregister_advice(controller_id: int) -> str:
    return f". To unregister the controller from the cluster, run `kafka-cluster.sh unregister-controller --id {controller_id}`."


UNREGISTRATION_NEEDS_4_4_IV2 = "Unregistering a controller needs metadata.version 4.4-IV2: kjbod features upgrade --release-version 4.4"


def require_unregister_option(release: KafkaRelease, what: str) -> None:
    """KIP-1312 is 4.4.0's: 4.3.1's kafka-metadata-quorum has no --unregister and its kafka-cluster
    no unregister-controller."""
    if release.version < RELEASE_4_4:
        raise UsageError(
            f"{what} needs Kafka 4.4 (KIP-1312); kjbod speaks Kafka {release.name} here: run it with --kafka-version 4.4"
        )


def still_running_note(controller_id: int) -> str:
    """A running controller whose registration is gone registers again (ControllerRegistrationManager
    .onMetadataUpdate, 4.3.1 kafka_2.13 kafka/server/ControllerRegistrationManager.scala:158-193)."""
    return (
        f"Controller {controller_id} still runs, so it registers again at the next clock advance, as Kafka's does: "
        f"stop it first (kjbod quorum stop-controller --controller-id {controller_id})"
    )


def unregister_command_line(controller_id: int, outcome: ApiError) -> str:
    """kafka-cluster unregister-controller's line (4.4.0 tools:ClusterTool.java:200-211): success,
    or for an UnsupportedVersionException (metadata.version below 4.4-IV2) its own line and exit
    0; any other refusal is raised as the exception line Kafka's tool prints (exit 1)."""
    if outcome.is_success:
        return f"Controller {controller_id} is no longer registered."
    if outcome.error is Errors.UNSUPPORTED_VERSION:
        return "The target cluster does not support the controller unregistration API."
    error = QuorumError(outcome)
    if outcome.error is Errors.INVALID_REQUEST:
        error.note = f"Controller {controller_id} leads the quorum: it can be unregistered once another controller leads"
    raise error


def removal_error(change: VoterChange, unregister: bool) -> UserError:
    """A refused removal. With --unregister, Kafka turns an UnsupportedVersionException or a
    VoterNotFoundException into its own message (4.4.0 MetadataQuorumCommand.java:529-540);
    any other error is the exception line, as without it."""
    if unregister and change.error.error in (Errors.UNSUPPORTED_VERSION, Errors.VOTER_NOT_FOUND):
        message = change.error.message or java_exception_text(change.error).partition(": ")[2]
        error = UserError(f"Failed to remove KRaft voter {change.key.id}: {message}{_unregister_advice(change.key.id)}")
        error.note = change.note
        return error
    return change_error(change)


def unregistration_error(controller_id: int, refusal: ApiError) -> UserError:
    """A refused unregistration, printed after the removal's line (4.4.0
    MetadataQuorumCommand.java:547-551): the cause's message, then Kafka's advice; a message
    ending in a period gives Kafka's `..`."""
    message = refusal.message or java_exception_text(refusal).partition(": ")[2]
    error = UserError(f"Failed to unregister controller {controller_id}: {message}{_unregister_advice(controller_id)}")
    error.note = _unregistration_note(controller_id, refusal)
    return error


def _unregistration_note(controller_id: int, refusal: ApiError) -> str | None:
    if refusal.error is Errors.INVALID_REQUEST:
        return (
            f"The removal was made; controller {controller_id} leads until it commits, then resigns: run kjbod clock advance 1s, "
            f"then kjbod quorum unregister-controller --id {controller_id}"
        )
    if refusal.error is Errors.UNSUPPORTED_VERSION:
        return f"The removal was made. {UNREGISTRATION_NEEDS_4_4_IV2}"
    if refusal.error is Errors.CONTROLLER_ID_NOT_REGISTERED:
        return f"The removal was made; controller {controller_id} has no registration to remove"
    return None


def parse_remove_request(controller_id: int, directory_id: str) -> ReplicaKey:
    """MetadataQuorumCommand.handleRemoveController's checks (MetadataQuorumCommand.java:488-496)."""
    from kjbod.common.kafka_uuid import Uuid

    if controller_id < 0:
        raise UserError(f"Invalid negative --controller-id: {controller_id}")
    try:
        uuid = Uuid.from_string(directory_id)
    except ValueError as exc:
        raise UserError(f"Failed to parse --controller-directory-id: {exc}") from None
    return ReplicaKey(controller_id, str(uuid))


def change_json(change: VoterChange, dry_run: bool) -> dict[str, Any]:
    unregistration = change.unregistration
    return {
        "dryRun": dry_run,
        "controllerId": change.key.id,
        "directoryId": change.key.directory_id,
        "endpoints": [endpoint_text(e) for e in change.endpoints],
        "voters": [{"id": v.key.id, "directoryId": v.key.directory_id} for v in change.voters],
        "votersOffset": None if dry_run else change.voters_offset,
        "committed": False,
        "waitingFor": list(change.waiting_for),
        "leaderResigns": change.leader_resigns,
        # remove-controller --unregister: whether the registration is (or would be) removed.
        **({} if unregistration is None else {"unregistered": unregistration.is_success}),
    }


def change_error(change: VoterChange) -> QuorumError:
    return QuorumError(change.error, change.note)


def change_notes(change: VoterChange, dry_run: bool) -> list[str]:
    """kjbod's lines after a voter change: the voter set it makes, when it commits, and a warning
    for an even voter set."""
    voters = ", ".join(str(v.key.id) for v in change.voters)
    if dry_run:
        notes = [f"The voter set would become {voters}."]
    else:
        notes = [
            f"The voter set is now {voters} (uncommitted, at offset {change.voters_offset}); it commits at the next clock "
            f"advance at which {change.majority} of its {len(change.voters)} voters have fetched it (kjbod clock advance 1s)"
            + ("; the leader then resigns and the remaining voters elect a new one." if change.leader_resigns else ".")
        ]
    note = odd_size_note(len(change.voters))
    return notes + ([note] if note else [])


def odd_size_note(voters: int) -> str | None:
    """kjbod's warning for an even voter set: it needs as large a majority as one voter more."""
    if voters % 2:
        return None
    tolerates = (voters - 1) // 2
    return (
        f"Note: the quorum has {voters} voters; a majority is {voters // 2 + 1}, so it survives only {tolerates} "
        f"failure{'' if tolerates == 1 else 's'}, as {voters - 1} voter{'' if voters == 2 else 's'} would. Add or remove one more to keep it odd."
    )
