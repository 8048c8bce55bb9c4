"""`kjbod broker`: broker lifecycle in the cluster state (registration, heartbeats, fencing,
controlled shutdown, directory failure and cordons)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kjbod.cli import completion
from kjbod.cli.context import AppContext, app_context
from kjbod.cli.render import Column, Lines, Table, emit

app = typer.Typer(help="Broker lifecycle in the cluster state: register, heartbeat, fail or cordon a directory, shut down.\n\nExample: kjbod broker register --config /etc/kafka/server.properties", no_args_is_help=True)

BrokerId = Annotated[int, typer.Option("--id", help="The broker id (node.id).", metavar="N", autocompletion=completion.broker_id)]
DirOption = Annotated[str, typer.Option("--dir", help="A directory of that broker: its directory id or its path.", metavar="DIR")]


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="broker")


def _run(app_: AppContext, operation):  # noqa: ANN001, ANN202

    return app_.run(operation)


def _emit_change(app_: AppContext, headline: str, impact, data: dict) -> None:  # noqa: ANN001
    from kjbod.tools.cluster.requests import impact_json, impact_lines

    lines = [headline]
    if impact:
        lines.append(f"{len(impact)} partition(s) changed:")
        lines.extend(impact_lines(impact))
        offline = [f"{i.topic}-{i.partition}" for i in impact if i.leader_after == -1]
        if offline:
            lines.append(f"No leader now (offline): {', '.join(offline)}")
    emit(app_, Lines(lines, {**data, "changes": impact_json(impact)}))


@app.command("register")
def register_broker(
    ctx: typer.Context,
    broker_id: Annotated[Optional[int], typer.Option("--id", help="The broker id.", metavar="N", autocompletion=completion.broker_id)] = None,
    config: Annotated[
        Optional[Path], typer.Option("--config", "-c", help="The broker's server.properties: node.id, broker.rack, log.dirs and each directory's meta.properties.", metavar="FILE")
    ] = None,
    dirs: Annotated[
        Optional[list[str]], typer.Option("--dir", help="A log directory as PATH=DIRECTORY_ID; repeatable.", metavar="PATH=DIRID")
    ] = None,
    rack: Annotated[Optional[str], typer.Option("--rack", help="The broker's rack (broker.rack).")] = None,
    incarnation_id: Annotated[
        Optional[str], typer.Option("--incarnation-id", help="The process instance id; the same id again amends the registration.", metavar="UUID")
    ] = None,
    supported_features: Annotated[
        Optional[list[str]],
        typer.Option("--supported-feature", help="A supported range NAME=MIN-MAX; default: the latest production release's.", metavar="NAME=MIN-MAX"),
    ] = None,
    capacities: Annotated[
        Optional[list[str]],
        typer.Option(
            "--capacity", metavar="PATH=BYTES",
            help="The size of a log directory's disk (500GB, 4TB, 3.6TiB), for usage figures and the planner; repeatable.",
        ),
    ] = None,
    unclean_shutdown: Annotated[
        bool,
        typer.Option(
            "--unclean-shutdown",
            help="The broker's previous incarnation crashed (it sends no previous broker epoch): with eligible leader replicas on, "
            "it leaves every ISR and ELR.",
        ),
    ] = False,
) -> None:
    """Register a broker: new incarnations get a new epoch and start fenced.

    Example: kjbod broker register --id 1 --rack r1 --dir /mnt/d1=ZNJ-ywU0nnQwRv5eRRU9ow --dir /mnt/d2=XcZZOzUqS4yHOjhMQB6JLQ
    """
    from kjbod.errors import UsageError
    from kjbod.tools.cluster.registration import registration_request

    app_ = app_context(ctx)
    if (config is None) == (broker_id is None):
        raise UsageError("Give either --config FILE or --id N (with --dir PATH=DIRID for each log directory)")
    if config is not None and dirs:
        raise UsageError("--dir goes with --id; with --config the directories come from log.dirs")
    request, notes = registration_request(
        config=config, broker_id=broker_id, dirs=dirs or [], rack=rack, incarnation_id=incarnation_id,
        supported_features=supported_features or [], release=app_.kafka, capacities=capacities or [],
        clean_shutdown=not unclean_shutdown,
    )
    for note in notes:
        app_.message(note)
    result, _ = _run(app_, lambda c: c.cluster.register_broker(request))
    reply = result.response
    state = "FENCED" if reply.fenced else "UNFENCED"
    if reply.amended:
        text = f"Broker {reply.broker_id} registered again by the same incarnation: epoch {reply.epoch} kept, {state}."
    else:
        text = f"Registered broker {reply.broker_id} with epoch {reply.epoch}: {state}, {len(reply.directories)} online director{'y' if len(reply.directories) == 1 else 'ies'}."
    emit(app_, Lines([text], {"brokerId": reply.broker_id, "epoch": reply.epoch, "fenced": reply.fenced, "amended": reply.amended, "directories": list(reply.directories)}))


def _heartbeat(app_: AppContext, broker_id: int, offline: list[str], want_shutdown: bool, no_unfence: bool) -> None:
    from kjbod.controller.replication_control import HeartbeatRequest

    def operation(c):  # noqa: ANN001, ANN202
        dirs = tuple(c.cluster.resolve_directory(broker_id, d) for d in offline)
        # A kjbod broker is always caught up, so it reports its cordoned directories (KIP-1066).
        request = HeartbeatRequest(
            broker_id, want_fence=no_unfence, want_shut_down=want_shutdown, offline_log_dirs=dirs,
            cordoned_log_dirs=c.cluster.reported_cordoned(broker_id),
        )
        return c.replication.heartbeat(request)

    result, image = _run(app_, operation)
    reply = result.response
    if reply.state is reply.previous_state:
        headline = f"Broker {broker_id}: {reply.state.value}."
    else:
        headline = f"Broker {broker_id}: {reply.previous_state.value} -> {reply.state.value}."

    for directory in reply.newly_offline_dirs:
        headline += f"\nDirectory {directory} ({image.cluster.directory_label(broker_id, directory)}) is offline."
    if reply.cordoned_change:
        labels = ", ".join(image.cluster.directory_label(broker_id, d) for d in reply.cordoned_change)
        headline += f"\nCordoned directories reported: {labels}."
    if reply.is_fenced and reply.unassigned_replicas and not want_shutdown:
        headline += (
            f"\nBroker {broker_id} stays fenced: {reply.unassigned_replicas} replica(s) have no directory yet "
            f"(assign them: kjbod assign-dirs --broker {broker_id} --auto)."
        )
    data = {
        "brokerId": broker_id,
        "previousState": reply.previous_state.value,
        "state": reply.state.value,
        "isCaughtUp": reply.is_caught_up,
        "isFenced": reply.is_fenced,
        "inControlledShutdown": reply.in_controlled_shutdown,
        "shouldShutDown": reply.should_shut_down,
        "unassignedReplicas": reply.unassigned_replicas,
        "newlyOfflineDirectories": list(reply.newly_offline_dirs),
        "cordonedDirectoriesReported": None if reply.cordoned_change is None else list(reply.cordoned_change),
    }
    _emit_change(app_, headline, reply.impact, data)


@app.command()
def heartbeat(
    ctx: typer.Context,
    broker_id: BrokerId,
    offline_dir: Annotated[Optional[list[str]], typer.Option("--offline-dir", help="A directory the broker reports offline (id or path); repeatable.", metavar="DIR")] = None,
    want_shutdown: Annotated[bool, typer.Option("--want-shutdown", help="Ask for a controlled shutdown.")] = False,
    no_unfence: Annotated[bool, typer.Option("--no-unfence", help="Do not ask to be unfenced (WantFence).")] = False,
) -> None:
    """Send one broker heartbeat: unfences a caught-up broker, reports offline directories.

    Example: kjbod broker heartbeat --id 1
    """
    _heartbeat(app_context(ctx), broker_id, offline_dir or [], want_shutdown, no_unfence)


@app.command("fail-dir")
def fail_dir(ctx: typer.Context, broker_id: BrokerId, directory: DirOption) -> None:
    """A log directory failed: the broker reports it offline in a heartbeat (KIP-858).

    Example: kjbod broker fail-dir --id 1 --dir /mnt/d2
    """
    _heartbeat(app_context(ctx), broker_id, [directory], False, False)


def _cordon(ctx: typer.Context, broker_id: int, directory: str, cordoned: bool) -> None:
    app_ = app_context(ctx)

    result, image = _run(app_, lambda c: c.cluster.set_cordoned(broker_id, directory, cordoned))
    name = result.response.directory_id
    verb = "cordoned: it takes no new replicas" if cordoned else "uncordoned: it takes new replicas again"
    emit(app_, Lines(
        [f"Directory {name} ({image.cluster.directory_label(broker_id, name)}) of broker {broker_id} is {verb}."],
        {
            "brokerId": broker_id, "directoryId": name, "cordoned": cordoned,
            "cordonedLogDirs": result.response.config_value, "cordonedDirectories": list(result.response.cordoned_directories),
        },
    ))


@app.command("cordon-dir")
def cordon_dir(ctx: typer.Context, broker_id: BrokerId, directory: DirOption) -> None:
    """Cordon a directory: it keeps its replicas but receives no new ones (KIP-1066, 4.3-IV0+).

    As kafka-configs --entity-type brokers --entity-name N --alter --add-config cordoned.log.dirs=...
    does: the path joins the broker's dynamic cordoned.log.dirs, and the broker's next heartbeat
    reports the directory (both written at once).

    Example: kjbod broker cordon-dir --id 1 --dir /mnt/d3
    """
    _cordon(ctx, broker_id, directory, True)


@app.command("uncordon-dir")
def uncordon_dir(ctx: typer.Context, broker_id: BrokerId, directory: DirOption) -> None:
    """Let a cordoned directory receive new replicas again.

    The path leaves the broker's dynamic cordoned.log.dirs (starting from server.properties' value
    when there is no dynamic one), and the broker's next heartbeat reports the rest.

    Example: kjbod broker uncordon-dir --id 1 --dir /mnt/d3
    """
    _cordon(ctx, broker_id, directory, False)


@app.command()
def shutdown(ctx: typer.Context, broker_id: BrokerId) -> None:
    """Controlled shutdown: leadership moves off the broker first, then it is fenced.

    Example: kjbod broker shutdown --id 2
    """
    app_ = app_context(ctx)
    result, _ = _run(app_, lambda c: c.replication.controlled_shutdown(broker_id))
    change = result.response
    moved = sum(1 for i in change.impact if i.leader_before == broker_id)
    headline = f"Broker {broker_id}: controlled shutdown done, leadership moved off {moved} partition(s); the broker is {change.state}."
    _emit_change(app_, headline, change.impact, {"brokerId": broker_id, "state": change.state, "leadershipsMoved": moved})


@app.command()
def fence(ctx: typer.Context, broker_id: BrokerId) -> None:
    """Fence a broker as if its session expired (a crash): it leaves every ISR.

    Example: kjbod broker fence --id 3
    """
    app_ = app_context(ctx)
    result, _ = _run(app_, lambda c: c.replication.fence_broker(broker_id))
    _emit_change(app_, f"Broker {broker_id} is FENCED.", result.response.impact, {"brokerId": broker_id, "state": "FENCED"})


@app.command()
def unregister(ctx: typer.Context, broker_id: BrokerId) -> None:
    """Remove a broker's registration (after it was drained and shut down).

    Example: kjbod broker unregister --id 3
    """
    app_ = app_context(ctx)
    result, _ = _run(app_, lambda c: c.replication.unregister_broker(broker_id))
    _emit_change(app_, f"Broker {broker_id} is unregistered.", result.response.impact, {"brokerId": broker_id, "state": "UNREGISTERED"})


@app.command("list")
def list_brokers(ctx: typer.Context) -> None:
    """List registered brokers with their state, directories and load.

    Example: kjbod broker list
    """
    from kjbod.tools.cluster.describe import broker_rows

    app_ = app_context(ctx)
    rows = broker_rows(app_.read_image())
    for row in rows:
        row["dirs"] = f"{row['onlineDirs']}/{row['configuredDirs']}"
    columns = [
        Column("ID", "id", "right"), Column("RACK", "rack"), Column("STATE", "state"), Column("EPOCH", "epoch", "right"),
        Column("DIRS ONLINE", "dirs", "right"), Column("CORDONED", "cordonedDirs", "right"),
        Column("REPLICAS", "replicas", "right"), Column("LEADERS", "leaders", "right"),
    ]
    emit(app_, Table(columns, rows, data=[{k: v for k, v in row.items() if k != "dirs"} for row in rows]))


@app.command()
def describe(ctx: typer.Context, broker_id: BrokerId) -> None:
    """Describe one broker: state, features, and every directory with its path and load.

    Example: kjbod broker describe --id 1
    """
    from kjbod.common.units import human_bytes
    from kjbod.tools.cluster.describe import broker_details

    app_ = app_context(ctx)
    details = broker_details(app_.read_image(), broker_id)
    features = ", ".join(f"{n} {r['min']}-{r['max']}" for n, r in details["supportedFeatures"].items())
    footer = [f"Replicas without a directory of this broker: {e['replicas']} in {e['directory']}" for e in details["replicasWithoutADirectory"]]
    if details["offlineReplicas"]:
        footer.append(f"Offline replicas: {', '.join(details['offlineReplicas'])}")
    title = (
        f"Broker {details['id']}: {details['state']}, epoch {details['epoch']}, rack {details['rack'] or '-'}, "
        f"incarnation {details['incarnationId']}\nSupported features: {features}"
    )
    columns = [
        Column("DIRECTORY ID", "directoryId"), Column("PATH", "path"), Column("STATE", "state"),
        Column("REPLICAS", "replicas", "right"), Column("LEADERS", "leaders", "right"),
        # Readable units in text; -o json keeps the byte counts.
        Column("SIZE", "sizeBytes", "right", fmt=human_bytes),
    ]
    if any(d["capacityBytes"] for d in details["directories"]):
        columns += [
            Column("CAPACITY", "capacityBytes", "right", fmt=human_bytes), Column("USED", "usedPercent", "right", fmt=lambda v: f"{v:.1f}%"),
        ]
    table = Table(columns, details["directories"], footer=footer, data=details)
    if app_.json:
        emit(app_, table)
    else:
        emit(app_, Lines([*title.split("\n"), *table.to_text()], details))
