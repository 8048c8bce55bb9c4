"""`kjbod format`: kafka-storage format (storage reference §1.3-§1.6) and, on a controller, the
cluster state's bootstrap.

kjbod.storage.formatter plans and writes the log directories as Kafka's Formatter does; a
controller node then initialises the cluster state with the bootstrap records, once.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Protocol

from kjbod.errors import KjbodError
from kjbod.records import KjbodClusterRecord, Record
from kjbod.storage.formatter import (
    DirectoryAction,
    DirectoryResult,
    DirectoryStatus,
    FormatFailed,
    FormatOutcome,
    FormatRequest,
    StateBootstrap,
    StateStatus,
    plan_format,
    write_plan,
)


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
            # After the bootstrap records, which cluster this is and which controller keeps it:
            # `broker register` checks the cluster id, feature updates name the controller.
            identity = KjbodClusterRecord(cluster_id=plan.cluster_id, controller_id=plan.config.node_id)
            initialised = state.bootstrap([*plan.records, identity])
            outcome.state = StateBootstrap(state.path, StateStatus.INITIALISED if initialised else StateStatus.ALREADY_INITIALISED)
        except KjbodError as exc:
            failure = FormatFailed(exc.message, outcome)
            failure.exit_code = exc.exit_code
            raise failure from None
    return outcome
