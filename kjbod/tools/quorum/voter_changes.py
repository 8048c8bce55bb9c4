"""`kjbod quorum add-controller` and `remove-controller`: kafka-metadata-quorum's line for a voter
change, its refusal, and kjbod's JSON and advice, from the change a controller made
(kjbod.controller.quorum_control.VoterChange).

The lines are MetadataQuorumCommand's (`tools/src/main/java/org/apache/kafka/tools/MetadataQuorumCommand.java`).
"""

from __future__ import annotations

from typing import Any

from kjbod.controller.quorum_control import QuorumError, VoterChange, endpoint_text
from kjbod.errors import UserError
from kjbod.image.quorum import ReplicaKey
from kjbod.records import VoterEndpoint


def endpoints_line(endpoints: tuple[VoterEndpoint, ...]) -> str:
    """The endpoints as add-controller prints them (MetadataQuorumCommand.java:442-454)."""
    return ", ".join(endpoint_text(e) for e in endpoints)


def added_line(change: VoterChange, dry_run: bool) -> str:
    """`add-controller`'s line (MetadataQuorumCommand.java:433-455)."""
    head = "DRY RUN of adding" if dry_run else "Added"
    return f"{head} controller {change.key.id} with directory id {change.key.directory_id} and endpoints: {endpoints_line(change.endpoints)}"


def removed_line(key: ReplicaKey, dry_run: bool) -> str:
    """`remove-controller`'s line, with Kafka's double space after the verb: its format is
    `"%s KRaft controller ..."` with "Removed " / "DRY RUN of removing " (MetadataQuorumCommand.java:501-504)."""
    return f"{'DRY RUN of removing ' if dry_run else 'Removed '} KRaft controller {key.id} with directory id {key.directory_id}"


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
