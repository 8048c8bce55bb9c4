"""`kjbod features` (mirrors kafka-features): describe, upgrade, downgrade, disable, and the lookups.

Text mode keeps Kafka's streams: result lines on stdout, the "N out of M operation(s) failed."
line and every other error on stderr. kjbod has no bootstrap servers, so Kafka's
--bootstrap-server, --bootstrap-controller and --command-config are gone.
"""

from __future__ import annotations

from typing import Annotated, Callable, Optional

import typer

from kjbod.cli import completion
from kjbod.cli.context import AppContext, app_context
from kjbod.cli.render import Lines, emit

app = typer.Typer(help="Finalized feature levels (metadata.version and others), as kafka-features.\n\nExample: kjbod features upgrade --release-version 4.3 --dry-run", no_args_is_help=True)

MetadataOption = Annotated[
    Optional[str],
    typer.Option(
        "--metadata",
        metavar="VERSION",
        help="DEPRECATED -- the metadata.version to set, e.g. 4.3-IV0. Use --release-version.",
        autocompletion=completion.release_version,
    ),
]
ReleaseVersionOption = Annotated[
    Optional[str],
    typer.Option(
        "--release-version",
        metavar="VERSION",
        help="Set every feature to its level for this release, e.g. 4.4 sets metadata.version=33 and the "
        "defaults shown by version-mapping.",
        autocompletion=completion.release_version,
    ),
]
FeatureLevelOption = Annotated[
    Optional[list[str]],
    typer.Option("--feature", metavar="NAME=LEVEL", help="A feature and its new level, e.g. group.version=1; repeatable."),
]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Validate only: report what would happen, change nothing.")]
UnsafeOption = Annotated[
    bool,
    typer.Option(
        "--unsafe",
        help="Downgrade even if it may irreversibly destroy metadata (refused for metadata.version, as in Kafka).",
    ),
]


def _stdout_line(app_: AppContext) -> Callable[[str], None]:
    """Where Kafka's stdout lines go: stdout in text mode, stderr beside a JSON document."""
    if app_.json:
        return app_.message

    def write(line: str) -> None:
        app_.stdout.write(line + "\n")
        app_.stdout.flush()

    return write


def _update(
    ctx: typer.Context,
    operation: str,
    *,
    features: Optional[list[str]],
    metadata: Optional[str] = None,
    release_version: Optional[str] = None,
    unsafe: bool = False,
    dry_run: bool = False,
) -> None:
    from kjbod.errors import OperationFailed
    from kjbod.tools import features as features_tool

    app_ = app_context(ctx)
    request = features_tool.build_request(
        operation,
        app_.kafka,
        metadata=metadata,
        features=features,
        release_version=release_version,
        unsafe=unsafe,
        dry_run=dry_run,
        print_line=_stdout_line(app_),
    )
    result, _ = app_.run(lambda controller: features_tool.update_features(controller, request), dry_run=request.dry_run)
    outcome = result.response
    emit(app_, Lines(outcome.lines(), outcome.to_json()))
    if outcome.failures:
        raise OperationFailed(outcome.summary)


@app.command()
def describe(
    ctx: typer.Context,
    node_id: Annotated[
        Optional[int],
        typer.Option(
            "--node-id", metavar="ID",
            help="The node whose supported versions to show (a registered broker or controller); by default the active controller's.",
        ),
    ] = None,
) -> None:
    """Describe the supported and finalized level of every feature, one line each (Kafka 4.3+'s columns).

    Example: kjbod features describe --node-id 1
    """
    from kjbod.tools import features as features_tool

    app_ = app_context(ctx)
    description = features_tool.describe(app_.read_image(), app_.kafka, node_id)
    emit(app_, Lines(description.lines(), description.to_json()))


@app.command()
def upgrade(
    ctx: typer.Context,
    metadata: MetadataOption = None,
    feature: FeatureLevelOption = None,
    release_version: ReleaseVersionOption = None,
    dry_run: DryRunOption = False,
) -> None:
    """Upgrade one or more features; refused unless every registered broker supports the new level.

    Example: kjbod features upgrade --release-version 4.3 --dry-run
    """
    _update(ctx, "upgrade", metadata=metadata, features=feature, release_version=release_version, dry_run=dry_run)


@app.command()
def downgrade(
    ctx: typer.Context,
    metadata: MetadataOption = None,
    feature: FeatureLevelOption = None,
    release_version: ReleaseVersionOption = None,
    unsafe: UnsafeOption = False,
    dry_run: DryRunOption = False,
) -> None:
    """Downgrade one or more features; metadata.version refuses to cross a metadata change.

    Example: kjbod features downgrade --feature group.version=0 --dry-run
    """
    _update(
        ctx, "downgrade", metadata=metadata, features=feature, release_version=release_version, unsafe=unsafe, dry_run=dry_run
    )


@app.command()
def disable(
    ctx: typer.Context,
    feature: Annotated[
        Optional[list[str]], typer.Option("--feature", metavar="NAME", help="A feature to disable (set to 0); repeatable.")
    ] = None,
    unsafe: UnsafeOption = False,
    dry_run: DryRunOption = False,
) -> None:
    """Disable one or more features: the same as downgrading them to level 0.

    Example: kjbod features disable --feature group.version --dry-run
    """
    _update(ctx, "disable", features=feature, unsafe=unsafe, dry_run=dry_run)


@app.command("version-mapping")
def version_mapping(
    ctx: typer.Context,
    release_version: Annotated[
        Optional[str],
        typer.Option(
            "--release-version",
            metavar="VERSION",
            help="The release to look up (minimum 3.3-IV3); the default is the latest production metadata.version of "
            "--kafka-version: 4.4-IV2 for 4.4, 4.3-IV0 for 4.3.",
            autocompletion=completion.release_version,
        ),
    ] = None,
) -> None:
    """Show the feature levels that a release version sets.

    Example: kjbod features version-mapping --release-version 3.9
    """
    from kjbod.tools import features as features_tool

    app_ = app_context(ctx)
    mapping = features_tool.version_mapping(app_.kafka, release_version)
    emit(app_, Lines(mapping.lines(), mapping.to_json()))


@app.command("feature-dependencies")
def feature_dependencies(
    ctx: typer.Context,
    feature: Annotated[
        list[str],
        typer.Option("--feature", metavar="NAME=LEVEL", help="A feature level to look up, e.g. kraft.version=1; repeatable."),
    ],
) -> None:
    """Show what each feature level depends on.

    Example: kjbod features feature-dependencies --feature kraft.version=1
    """
    from kjbod.errors import UserError
    from kjbod.tools import features as features_tool

    app_ = app_context(ctx)
    report = features_tool.feature_dependencies(feature, app_.kafka)
    # Kafka prints the lookups before a failing one; a JSON document is all or nothing.
    if report.error is None or not app_.json:
        emit(app_, Lines(report.lines(), report.to_json()))
    if report.error is not None:
        raise UserError(report.error)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="features")
