"""`kjbod quorum start-controller` and `stop-controller`, kjbod's own commands (Kafka's controllers
simply start and stop): what the operator typed, read into the controller's request, and the
lines, JSON and advice of what the controller did (kjbod.controller.quorum_control's
ControllerStart and ControllerStop).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kjbod.common.kafka_uuid import canonical
from kjbod.common.versions import parse_feature_range
from kjbod.controller.quorum_control import ControllerStart, ControllerStop, LeaderChange
from kjbod.errors import UserError


def parse_supported_features(specs: Sequence[str] | None) -> dict[str, tuple[int, int]] | None:
    """--supported-feature NAME=MIN-MAX, repeatable; None for the default ranges."""
    if not specs:
        return None
    return dict(parse_feature_range(spec) for spec in specs)


def parse_directory_id(text: str | None) -> str | None:
    """--controller-directory-id, canonical; None when not given."""
    if text is None:
        return None
    try:
        return canonical(text)
    except ValueError as exc:
        raise UserError(f"Failed to parse --controller-directory-id: {exc}") from None


def leader_change_text(change: LeaderChange) -> str:
    if change.leader < 0:
        return f"No leader: too few voters run to elect one (epoch {change.epoch})."
    before = f" (controller {change.previous} led before)" if change.previous >= 0 else ""
    return f"Controller {change.leader} leads epoch {change.epoch}{before}."


def leader_change_json(change: LeaderChange | None) -> dict[str, int] | None:
    if change is None:
        return None
    return {"previousLeader": change.previous, "leader": change.leader, "epoch": change.epoch}


def started_lines(started: ControllerStart, catch_up_rate: int) -> list[str]:
    key = started.key
    if started.identified:
        text = f"Controller {key.id} runs as a voter; its directory id is {key.directory_id}."
    else:
        state = "restarted" if started.restarted else "started"
        text = f"Controller {key.id} (directory id {key.directory_id}) {state}: it fetches from the leader at {catch_up_rate} records/s."
    lines = [text]
    if started.leader_change is not None:
        lines.append(leader_change_text(started.leader_change))
    return lines


def started_json(started: ControllerStart) -> dict[str, Any]:
    key = started.key
    return {"controllerId": key.id, "directoryId": key.directory_id, "restarted": started.restarted,
            "leaderChange": leader_change_json(started.leader_change)}


def stopped_lines(stopped: ControllerStop) -> list[str]:
    lines = [f"Controller {stopped.key.id} (directory id {stopped.key.directory_text}) stopped at log end offset {stopped.log_end_offset}."]
    if stopped.leader_change is not None:
        lines.append(leader_change_text(stopped.leader_change))
    return lines


def stopped_json(stopped: ControllerStop) -> dict[str, Any]:
    return {"controllerId": stopped.key.id, "directoryId": stopped.key.directory_id,
            "logEndOffset": stopped.log_end_offset, "leaderChange": leader_change_json(stopped.leader_change)}


def stopped_notes(stopped: ControllerStop) -> list[str]:
    """kjbod's warning when the stop leaves too few voters running to commit anything."""
    if not stopped.was_voter:
        return []
    majority = stopped.voters // 2 + 1
    if stopped.running_voters >= majority:
        return []
    return [
        f"The quorum has lost its majority: {stopped.running_voters} of {stopped.voters} voters run and {majority} are "
        "needed; nothing can commit until a voter returns."
    ]
