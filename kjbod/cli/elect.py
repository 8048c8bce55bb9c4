"""`kjbod elect`: leader elections, as kafka-leader-election."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from kjbod.cli import completion
from kjbod.cli.context import app_context
from kjbod.cli.render import Lines, emit, verbatim


class ElectionType(str, Enum):
    PREFERRED = "PREFERRED"
    UNCLEAN = "UNCLEAN"


def register(root: typer.Typer) -> None:
    root.command("elect")(elect)


def elect(
    ctx: typer.Context,
    election_type: Annotated[ElectionType, typer.Option("--election-type", case_sensitive=False, help="PREFERRED: move leadership to the preferred replica. UNCLEAN: elect a replica outside the ISR where there is no leader.")],
    topic: Annotated[Optional[str], typer.Option("--topic", help="One topic (with --partition).", autocompletion=completion.topic_name)] = None,
    partition: Annotated[Optional[int], typer.Option("--partition", help="The partition of --topic.")] = None,
    path_to_json_file: Annotated[
        Optional[Path], typer.Option("--path-to-json-file", help=verbatim("The partitions:", '{"partitions": [{"topic": "foo", "partition": 1}]}'), metavar="F")
    ] = None,
    all_topic_partitions: Annotated[bool, typer.Option("--all-topic-partitions", help="Every partition that needs the election.")] = False,
) -> None:
    """Elect leaders (PREFERRED or UNCLEAN), with kafka-leader-election's output.

    Example: kjbod elect --election-type PREFERRED --all-topic-partitions
    """
    from kjbod.controller.errors import Errors, java_exception_text
    from kjbod.controller.partition_change import Election
    from kjbod.errors import OperationFailed, UsageError
    from kjbod.tools.cluster.requests import read_election_file

    app_ = app_context(ctx)
    if sum((topic is not None, all_topic_partitions, path_to_json_file is not None)) != 1:
        raise UsageError("One and only one of the following options is required: --topic, --all-topic-partitions, --path-to-json-file")
    if topic is not None and partition is None:
        raise UsageError("Missing required option(s): --partition")
    if topic is None and partition is not None:
        raise UsageError("Option --partition is only allowed if --topic is used")
    partitions = [(topic, partition)] if topic is not None else read_election_file(path_to_json_file) if path_to_json_file else None
    election = Election[election_type.value]
    result, _ = app_.run(lambda c: c.replication.elect_leaders(election, partitions))
    reply = result.response
    name = lambda r: f"{r.topic}-{r.partition}"  # noqa: E731
    succeeded = [name(r) for r in reply.results if r.error.is_success]
    not_needed = [name(r) for r in reply.results if r.error.error is Errors.ELECTION_NOT_NEEDED]
    failed = [r for r in reply.results if not r.error.is_success and r.error.error is not Errors.ELECTION_NOT_NEEDED]
    lines = []
    if succeeded:
        lines.append(f"Successfully completed leader election ({election.value}) for partitions {', '.join(succeeded)}")
    if not_needed:
        lines.append(f"Valid replica already elected for partitions {', '.join(not_needed)}")
    for r in failed:
        lines.append(f"Error completing leader election ({election.value}) for partition: {name(r)}: {java_exception_text(r.error)}")
    data = {
        "electionType": election.value,
        "results": [{"topic": r.topic, "partition": r.partition, "error": r.error.error.name, "message": r.error.message} for r in reply.results],
    }
    emit(app_, Lines(lines, data))
    if election is Election.UNCLEAN and succeeded:
        app_.message(
            f"WARNING: unclean leader election for {', '.join(succeeded)}: the new leader was not in sync, "
            "so committed data may be lost; these partitions are RECOVERING."
        )
    if failed:
        raise OperationFailed(f"{len(failed)} replica(s) could not be elected")
