"""`kjbod topic`: topics in the cluster state."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from kjbod.cli import completion
from kjbod.cli.context import app_context
from kjbod.cli.render import Lines, emit

app = typer.Typer(help="Topics in the cluster state: create (Kafka's placement), describe, delete, set sizes.\n\nExample: kjbod topic describe orders", no_args_is_help=True)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="topic")


@app.command()
def create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The topic name.")],
    partitions: Annotated[Optional[int], typer.Option("--partitions", help="Number of partitions (with --replication-factor).")] = None,
    replication_factor: Annotated[Optional[int], typer.Option("--replication-factor", help="Replicas per partition.")] = None,
    replica_assignment: Annotated[
        Optional[str], typer.Option("--replica-assignment", help="Explicit replicas, as kafka-topics: 1:2:3,2:3:1 (partitions by commas).", metavar="A")
    ] = None,
    config: Annotated[Optional[list[str]], typer.Option("--config", help="A topic config KEY=VALUE; repeatable.", metavar="K=V")] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Seed for Kafka's striped placement (and the topic id), for repeatable runs.")] = None,
) -> None:
    """Create a topic, placed by Kafka's StripedReplicaPlacer or by an explicit assignment.

    Example: kjbod topic create orders --partitions 12 --replication-factor 3 --config retention.ms=604800000
    """
    from kjbod.controller.replication_control import CreateTopicRequest, has_collision_chars
    from kjbod.errors import UsageError
    from kjbod.tools.cluster.requests import parse_config, parse_replica_assignment

    app_ = app_context(ctx)
    if replica_assignment is not None and (partitions is not None or replication_factor is not None):
        raise UsageError("--replica-assignment excludes --partitions and --replication-factor")
    if replica_assignment is None and (partitions is None or replication_factor is None):
        raise UsageError("Give --partitions and --replication-factor, or --replica-assignment")
    request = CreateTopicRequest(
        name=name,
        partitions=partitions,
        replication_factor=replication_factor,
        assignment=parse_replica_assignment(replica_assignment) if replica_assignment is not None else None,
        configs=dict(parse_config(c) for c in config or []),
        seed=seed,
    )
    lines = []
    if has_collision_chars(name):
        lines.append(
            "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. "
            "To avoid issues it is best to use either, but not both."
        )
    result, _ = app_.run(lambda c: c.replication.create_topic(request))
    response = result.response
    lines.append(f"Created topic {name}.")
    emit(app_, Lines(lines, {"topic": name, "topicId": response.topic_id, "assignment": [list(r) for r in response.assignment]}))


@app.command()
def describe(
    ctx: typer.Context,
    name: Annotated[Optional[str], typer.Argument(help="One topic; all topics when left out.", autocompletion=completion.topic_name)] = None,
) -> None:
    """Describe topics as kafka-topics --describe, plus each replica's directory and the offline replicas.

    Example: kjbod topic describe orders
    """
    from kjbod.tools.cluster.describe import describe_topics

    app_ = app_context(ctx)
    lines, data = describe_topics(app_.read_image(), name, lines=not app_.json, data=app_.json)
    emit(app_, Lines(lines, data))


@app.command()
def delete(ctx: typer.Context, name: Annotated[str, typer.Argument(help="The topic name.", autocompletion=completion.topic_name)]) -> None:
    """Delete a topic (its partitions and configs go with it).

    Example: kjbod topic delete orders
    """

    app_ = app_context(ctx)
    result, _ = app_.run(lambda c: c.replication.delete_topic(name))
    emit(app_, Lines([f"Deleted topic {name}."], {"topic": name, "topicId": result.response}))


@app.command("set-size")
def set_size(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The topic name.", autocompletion=completion.topic_name)],
    size_text: Annotated[
        str, typer.Option("--bytes", help="The size of each partition's log: bytes, or with a unit (50GiB, 500GB).", metavar="B")
    ],
    partition: Annotated[Optional[int], typer.Option("--partition", help="Only this partition (default: every partition).", metavar="P")] = None,
) -> None:
    """Record how big partitions are (used by log-dirs, the clock and the planner).

    Example: kjbod topic set-size orders --bytes 50GiB
    """
    from kjbod.common.units import parse_bytes

    app_ = app_context(ctx)
    size_bytes = parse_bytes(size_text, "--bytes")
    result, _ = app_.run(lambda c: c.replication.set_partition_sizes(name, partition, size_bytes))
    count = result.response
    emit(app_, Lines([f"Set the size of {count} partition(s) of {name} to {size_bytes} bytes."], {"topic": name, "partitions": count, "sizeBytes": size_bytes}))
