"""`kjbod format`: kafka-storage format (storage reference §1.3-§1.6, KIP-858 directory ids).

`plan_format` does everything that can fail before a byte is written: it reads the config,
checks the flags in StorageTool's order and the directories in the Formatter's order (with
Kafka's messages), chooses the metadata.version and feature levels, and decides for each
directory whether it is formatted and with which directory id. `write_plan` then writes the new
directories; kjbod.tools.storage.format adds the controller's cluster-state bootstrap. A dry run is the
plan alone. A dynamic metadata directory (--standalone / --initial-controllers) also gets the
KIP-853 bootstrap snapshot holding the initial voter set, byte for byte as Kafka writes it.

Deliberate differences from Kafka, each for the operator's benefit:
- Directories are formatted in sorted order; Kafka iterates a Java HashMap, whose order depends
  on the paths' hash codes (the "Formatting ..." lines are printed in that HashMap order, as
  Kafka prints them). "Log directory X is already formatted" names the first formatted directory in
  sorted order.
- `--feature` works (Kafka 4.0's parser ignored it, KAFKA-17868); its "equals sign not found"
  message has no three-space typo.
- Every error is one line: Kafka's uncaught exceptions (bad --release-version, bad
  --initial-controllers, dependency violations, id mismatches) print only their message.
- `--standalone` brackets an IPv6 controller host (Kafka builds a string it cannot parse).
- A voter directory id from `--initial-controllers` that is reserved, or already the id of
  another directory of this node, is refused here; Kafka accepts it and the node then fails at
  start-up.
- A failed directory is left as it was found: a directory created for it is removed again.
"""

from __future__ import annotations

import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from pathlib import Path

from kjbod.common.java import hashmap_order, parse_java_int, string_hash
from kjbod.common.kafka_release import NEWEST, KafkaRelease
from kjbod.common.kafka_uuid import DirectoryId
from kjbod.common.versions import KRAFT_VERSION, METADATA_VERSION, MetadataVersion, validate_dependencies
from kjbod.errors import UsageError, UserError
from kjbod.records import FeatureLevelRecord, Record, UserScramCredentialRecord
from kjbod.kafka_formats.bootstrap_checkpoint import write_bootstrap_checkpoint
from kjbod.kafka_formats.kraft_snapshot import CLUSTER_METADATA_DIR, Voter, VoterEndpoint, write_bootstrap_snapshot
from kjbod.storage.config import NodeConfig, java_trim, load_node_config
from kjbod.storage.ensemble import (
    DirectoryState,
    Ensemble,
    LoadedDirectory,
    generate_directory_id,
)
from kjbod.storage.meta_properties import MetaProperties, write_meta_properties
from kjbod.tools.storage.voters import DynamicVoter, java_host_string, parse_voters

Notify = Callable[[str], None]


class FormatError(UserError):
    """A refusal of `format` with Kafka's message (FormatterException/TerseFailure and the
    uncaught exceptions of the same paths)."""


class NoDirectoriesToFormat(FormatError):
    """Every directory is unreadable (FMT:395-401): Kafka prints its "I/O error" line for each
    on stdout before it fails; `unreadable` says which, and why."""

    def __init__(self, unreadable: tuple[DirectoryPlan, ...]) -> None:
        super().__init__("No available log directories to format.")
        self.unreadable = unreadable

    def lines(self) -> list[str]:
        """Kafka's lines before the error."""
        return unreadable_lines(self.unreadable)

    def notes(self) -> list[str]:
        """kjbod's warning for each directory, with what to do."""
        return unreadable_warnings(self.unreadable, "then run format again")


def unreadable_lines(unreadable: Sequence[DirectoryPlan]) -> list[str]:
    """Kafka's line for each directory it cannot read, printed on stdout before the others."""
    return [f"I/O error trying to read log directory {d.path}. Ignoring..." for d in unreadable]


def unreadable_warnings(unreadable: Sequence[DirectoryPlan], advice: str) -> list[str]:
    return [
        f"Warning: log directory {d.path} was not formatted: {d.error}; fix it or remove it from log.dirs, {advice}"
        for d in unreadable
    ]


# Flags -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FormatRequest:
    """The command line of `kjbod format`."""

    config_path: Path
    cluster_id: str
    release_version: str | None = None
    features: Sequence[str] = ()
    ignore_formatted: bool = False
    standalone: bool = False
    initial_controllers: str | None = None
    no_initial_controllers: bool = False
    # The kafka-storage release this format mirrors (--kafka-version).
    release: KafkaRelease = NEWEST
    # --add-scram values, in order: one UserScramCredentialRecord each.
    add_scram: Sequence[str] = ()

    def __post_init__(self) -> None:
        # argparse's mutually exclusive group: a command-line structure error (exit 2).
        chosen = [
            flag
            for flag, present in (
                ("--standalone/-s", self.standalone),
                ("--initial-controllers/-I", self.initial_controllers is not None),
                ("--no-initial-controllers/-N", self.no_initial_controllers),
            )
            if present
        ]
        if len(chosen) > 1:
            raise UsageError(f"argument {chosen[1]}: not allowed with argument {chosen[0]}")


def parse_feature_flags(values: Sequence[str]) -> dict[str, int]:
    """`--feature NAME=LEVEL` as fixed in KAFKA-17868: split at the first '=', both sides
    trimmed, the level a Java short; a later value for the same name wins."""
    levels: dict[str, int] = {}
    for value in values:
        name, equals, level = value.partition("=")
        if not equals:
            raise FormatError(f"Can't parse feature=level string {value}: equals sign not found.")
        level = java_trim(level)
        try:
            levels[java_trim(name)] = parse_java_int(level, bits=16)
        except ValueError:
            raise FormatError(f"Can't parse feature=level string {value}: unable to parse {level} as a short.") from None
    return levels


# Versions and features -------------------------------------------------------------------------


def _verify_release(mv: MetadataVersion, unstable: bool, release: KafkaRelease) -> MetadataVersion:
    """Formatter.verifyReleaseVersion (4.4.0 :295-301)."""
    if not unstable and not release.is_production(mv):
        raise FormatError(f"metadata.version {mv} is not yet stable.")
    return mv


def effective_metadata_version(
    release_version: MetadataVersion | None, requested: dict[str, int], unstable: bool, release: KafkaRelease
) -> MetadataVersion:
    """Formatter.calculateEffectiveReleaseVersion (4.4.0 :278-290)."""
    if METADATA_VERSION in requested:
        if release_version is not None:
            raise FormatError("Use --release-version instead of --feature metadata.version=X to avoid ambiguity.")
        try:
            mv = release.metadata_version_for_level(requested[METADATA_VERSION])
        except ValueError as exc:
            raise FormatError(str(exc)) from None
        return _verify_release(mv, unstable, release)
    if release_version is not None:
        return _verify_release(release_version, unstable, release)
    return release.latest(unstable)


_DYNAMIC_FLAGS = "controller.quorum.voters is empty and one of the flags --standalone, --initial-controllers, or --no-initial-controllers is used"


def _kraft_version(requested: int | None, dynamic_quorum: bool) -> int:
    """Formatter.effectiveKRaftFeatureLevel (4.4.0 :356-380): 1 when controller.quorum.voters is
    empty (a dynamic, KIP-853 quorum), else 0."""
    if requested is None:
        return 1 if dynamic_quorum else 0
    if requested == 0 and dynamic_quorum:
        raise FormatError(
            f"Cannot set kraft.version to 0 if {_DYNAMIC_FLAGS}. "
            "For dynamic controllers support, try removing the --feature flag for kraft.version."
        )
    if requested != 0 and not dynamic_quorum:
        raise FormatError(
            f"Cannot set kraft.version to {requested} unless {_DYNAMIC_FLAGS}. For dynamic controllers support, try using "
            "one of --standalone, --initial-controllers, or --no-initial-controllers and removing controller.quorum.voters."
        )
    return requested


def effective_feature_levels(
    mv: MetadataVersion, requested: dict[str, int], unstable: bool, dynamic_quorum: bool, release: KafkaRelease
) -> dict[str, int]:
    """Formatter.calculateEffectiveFeatureLevels (4.4.0 :305-343); sorted by name (a TreeMap),
    metadata.version included."""
    supported = {item.name: item for item in release.features}
    for name in sorted(requested):
        if name != METADATA_VERSION and name not in supported:
            raise FormatError(f"Unsupported feature: {name}. Supported features are: {', '.join(sorted(supported))}")
    levels = dict(requested)
    levels[METADATA_VERSION] = mv.level
    for item in release.features:
        if item.name == KRAFT_VERSION:
            levels[KRAFT_VERSION] = _kraft_version(requested.get(KRAFT_VERSION), dynamic_quorum)
        elif item.name not in requested:
            levels[item.name] = item.default_level(mv)
    levels = dict(sorted(levels.items()))
    for name, level in levels.items():
        if name == METADATA_VERSION:
            continue
        item = supported[name]
        try:
            chosen = item.level(level, None if unstable else release.feature_latest_production(item))
            validate_dependencies(name, chosen, levels)
        except ValueError as exc:
            raise FormatError(str(exc)) from None
    return levels


def feature_level_records(levels: dict[str, int]) -> tuple[FeatureLevelRecord, ...]:
    """BootstrapMetadata.fromVersions (§1.4.5): metadata.version first, then every other feature
    except kraft.version with a level above 0, by name."""
    records = [FeatureLevelRecord(name=METADATA_VERSION, feature_level=levels[METADATA_VERSION])]
    for name in sorted(levels):
        if name not in (METADATA_VERSION, KRAFT_VERSION) and levels[name] > 0:
            records.append(FeatureLevelRecord(name=name, feature_level=levels[name]))
    return tuple(records)


# The plan --------------------------------------------------------------------------------------


class DirectoryKind(str, Enum):
    """Formatter.DirectoryType: its description is what the "Formatting ..." line prints."""

    DATA = "data directory"
    METADATA = "metadata directory"
    DYNAMIC_METADATA = "dynamic metadata directory"
    DYNAMIC_METADATA_VOTER = "dynamic metadata voter directory"

    @property
    def json_name(self) -> str:
        return {"DATA": "data", "METADATA": "metadata", "DYNAMIC_METADATA": "dynamicMetadata"}.get(
            self.name, "dynamicMetadataVoter"
        )


class DirectoryAction(str, Enum):
    FORMAT = "format"
    ALREADY_FORMATTED = "alreadyFormatted"
    UNREADABLE = "unreadable"


@dataclass(frozen=True)
class DirectoryPlan:
    path: str
    action: DirectoryAction
    kind: DirectoryKind | None = None
    # The new directory's id, or the id an already formatted directory holds.
    directory_id: str | None = None
    # Why an unreadable directory is skipped.
    error: str | None = None


@dataclass(frozen=True)
class FormatPlan:
    release: KafkaRelease
    config: NodeConfig
    cluster_id: str
    metadata_version: MetadataVersion
    feature_levels: dict[str, int]
    # The bootstrap records: the FeatureLevelRecords, then the --add-scram credentials.
    records: tuple[Record, ...]
    initial_controllers: tuple[DynamicVoter, ...]
    directories: tuple[DirectoryPlan, ...]

    @property
    def to_format(self) -> list[DirectoryPlan]:
        return [d for d in self.directories if d.action is DirectoryAction.FORMAT]

    @property
    def unreadable(self) -> list[DirectoryPlan]:
        return [d for d in self.directories if d.action is DirectoryAction.UNREADABLE]

    @property
    def all_formatted(self) -> bool:
        """Nothing to write: Kafka prints "All of the log directories are already formatted."."""
        return not self.to_format

    def meta_properties(self, directory: DirectoryPlan) -> MetaProperties:
        return MetaProperties(1, self.cluster_id, self.config.node_id, directory.directory_id)


def _release_version(request: FormatRequest, config: NodeConfig) -> MetadataVersion | None:
    """--release-version through `MetadataVersion.fromVersionString(v, unstable.feature.versions.enable)`
    (4.4.0 StorageTool :135-140). Kafka 4.x reads no inter.broker.protocol.version (a 3.x config)."""
    if request.release_version is None:
        return None
    try:
        return request.release.parse_metadata_version(request.release_version, unstable=config.unstable_feature_versions)
    except ValueError as exc:
        raise FormatError(str(exc)) from None


def _standalone_voter(config: NodeConfig, rng: random.Random | None) -> tuple[DynamicVoter, ...]:
    """StorageTool's --standalone: this node, its first advertised controller listener, a new id."""
    if not config.is_controller:
        raise FormatError("You can only use --standalone on a controller.")
    endpoints = config.controller_endpoints()
    if not endpoints:
        raise FormatError("No controller listeners found.")
    host = endpoints[0].host or "localhost"
    if ":" in host:
        host = f"[{host}]"
    return parse_voters(f"{config.node_id}@{host}:{endpoints[0].port}:{DirectoryId.random(rng)}")


def _directory_kind(path: str, config: NodeConfig, voters: tuple[DynamicVoter, ...]) -> DirectoryKind:
    if path != config.metadata_log_dir:
        return DirectoryKind.DATA
    if not voters:
        return DirectoryKind.METADATA
    if any(voter.node_id == config.node_id for voter in voters):
        return DirectoryKind.DYNAMIC_METADATA_VOTER
    return DirectoryKind.DYNAMIC_METADATA


def plan_format(request: FormatRequest, *, rng: random.Random | None = None) -> FormatPlan:
    """Everything `format` decides before writing, in Kafka's order; raises on any refusal."""
    config = load_node_config(request.config_path)
    if not config.kraft_mode:
        raise FormatError(
            "The kafka configuration file appears to be for a legacy cluster. "
            "Formatting is only supported for clusters in KRaft mode."
        )
    release = _release_version(request, config)
    requested = parse_feature_flags(request.features)
    if config.quorum_voters and (request.initial_controllers is not None or request.standalone):
        raise FormatError(
            "You cannot specify controller.quorum.voters and format the node with --initial-controllers or --standalone. "
            "If you want to use dynamic quorum, please remove controller.quorum.voters and specify "
            "controller.quorum.bootstrap.servers instead."
        )
    voters: tuple[DynamicVoter, ...] = ()
    if request.initial_controllers is not None:
        voters = parse_voters(request.initial_controllers)
    if request.standalone:
        voters = _standalone_voter(config, rng)
    if not request.no_initial_controllers and config.is_controller and not config.quorum_voters and not voters:
        raise FormatError(
            "Because controller.quorum.voters is not set on this controller, you must specify one of the "
            "following: --standalone, --initial-controllers, or --no-initial-controllers."
        )
    if voters and not config.controller_listener_names:
        # KafkaConfig refuses such a config before StorageTool runs; the bootstrap snapshot
        # names its voters' endpoint after the first controller listener.
        raise FormatError("controller.listener.names must contain at least one value when running KRaft with just the broker role")
    # Formatter.run() from here on.
    if config.node_id < 0:
        raise FormatError(f"You must specify a valid non-negative node ID. (node.id in {config.path})")
    mv = effective_metadata_version(release, requested, config.unstable_feature_versions, request.release)
    # hasDynamicQuorum = controller.quorum.voters is empty (4.4.0 StorageTool :150-151).
    levels = effective_feature_levels(mv, requested, config.unstable_feature_versions, not config.quorum_voters, request.release)
    records: tuple[Record, ...] = (*feature_level_records(levels), *_scram_records(request.add_scram, mv, rng))

    ensemble = Ensemble.load(config.directories)
    ensemble.verify(request.cluster_id, config.node_id)
    formatted = ensemble.formatted
    if formatted and not request.ignore_formatted:
        raise FormatError(
            f"Log directory {formatted[0].path} is already formatted. "
            "Use --ignore-formatted to ignore this directory and format the others."
        )
    if not ensemble.empty and not formatted:
        raise NoDirectoriesToFormat(tuple(DirectoryPlan(d.path, DirectoryAction.UNREADABLE, error=d.error) for d in ensemble.errors))
    voter_id = next((v.directory_id for v in voters if v.node_id == config.node_id), None)
    taken = ensemble.directory_ids()
    if voter_id is not None and config.metadata_log_dir in {d.path for d in ensemble.empty}:
        if DirectoryId.reserved(voter_id):
            raise FormatError(f"Invalid reserved directory ID {voter_id} given for node {config.node_id} in --initial-controllers")
        if voter_id in taken:
            raise FormatError(
                f"The directory ID {voter_id} given for node {config.node_id} in --initial-controllers "
                "is already the ID of another directory of this node"
            )
        taken.add(voter_id)
    return FormatPlan(
        release=request.release,
        config=config,
        cluster_id=request.cluster_id,
        metadata_version=mv,
        feature_levels=levels,
        records=records,
        initial_controllers=voters,
        directories=tuple(_plan_directory(d, config, voters, voter_id, taken, rng) for d in ensemble.directories),
    )


def _scram_records(arguments: Sequence[str], mv: MetadataVersion, rng: random.Random | None) -> tuple[UserScramCredentialRecord, ...]:
    """Formatter.calculateBootstrapMetadata (4.4.0 :385-393): SCRAM needs 3.5-IV2."""
    from kjbod.tools.storage.scram import ScramError, parse_scram_arguments

    if not arguments:
        return ()
    if not mv.scram_supported:
        raise FormatError("SCRAM is only supported in metadata.version 3.5-IV2 or later.")
    try:
        return parse_scram_arguments(arguments, rng)
    except ScramError as exc:
        raise FormatError(exc.message) from None


def _plan_directory(
    loaded: LoadedDirectory,
    config: NodeConfig,
    voters: tuple[DynamicVoter, ...],
    voter_id: str | None,
    taken: set[str],
    rng: random.Random | None,
) -> DirectoryPlan:
    if loaded.state is DirectoryState.ERROR:
        return DirectoryPlan(loaded.path, DirectoryAction.UNREADABLE, error=loaded.error)
    if loaded.state is DirectoryState.FORMATTED:
        assert loaded.meta is not None
        return DirectoryPlan(loaded.path, DirectoryAction.ALREADY_FORMATTED, directory_id=loaded.meta.directory_id)
    kind = _directory_kind(loaded.path, config, voters)
    if kind is DirectoryKind.DYNAMIC_METADATA_VOTER:
        assert voter_id is not None
        directory_id = voter_id
    else:
        directory_id = generate_directory_id(taken, rng)
        taken.add(directory_id)
    return DirectoryPlan(loaded.path, DirectoryAction.FORMAT, kind, directory_id)


# Writing ---------------------------------------------------------------------------------------


class DirectoryStatus(str, Enum):
    FORMATTED = "formatted"
    WOULD_FORMAT = "wouldFormat"
    FAILED = "failed"
    NOT_ATTEMPTED = "notAttempted"
    ALREADY_FORMATTED = "alreadyFormatted"
    UNREADABLE = "unreadable"


@dataclass
class DirectoryResult:
    plan: DirectoryPlan
    status: DirectoryStatus
    error: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.plan.path,
            "status": self.status.value,
            "type": self.plan.kind.json_name if self.plan.kind else None,
            "directoryId": self.plan.directory_id,
            "error": self.error if self.error is not None else self.plan.error,
        }


class StateStatus(str, Enum):
    INITIALISED = "initialised"
    ALREADY_INITIALISED = "alreadyInitialised"
    WOULD_INITIALISE = "wouldInitialiseIfEmpty"


@dataclass(frozen=True)
class StateBootstrap:
    path: Path
    status: StateStatus

    def to_json(self) -> dict[str, object]:
        return {"path": str(self.path), "status": self.status.value}


def bootstrap_metadata_line(plan: FormatPlan) -> str:
    """Kafka 4.3's first line of a format: its BootstrapMetadata's toString (Formatter.java:417 of
    4.3.1; BootstrapMetadata.toString, ApiMessageAndVersion.toString, FeatureLevelRecord.toString)."""
    records = ", ".join(f"ApiMessageAndVersion({_record_text(record)} at version 0)" for record in plan.records)
    level = plan.metadata_version.level
    return f"Bootstrap metadata: BootstrapMetadata(records=[{records}], metadataVersionLevel={level}, source=format command)"


def _record_text(record: Record) -> str:
    """The generated toString of a bootstrap record."""
    from kjbod.tools.storage.scram import record_text

    if isinstance(record, FeatureLevelRecord):
        return f"FeatureLevelRecord(name='{record.name}', featureLevel={record.feature_level})"
    assert isinstance(record, UserScramCredentialRecord)
    return record_text(record)


@dataclass
class FormatOutcome:
    plan: FormatPlan
    dry_run: bool
    directories: list[DirectoryResult] = field(default_factory=list)
    state: StateBootstrap | None = None

    def lines(self) -> list[str]:
        """kafka-storage format's lines on stdout: its BootstrapMetadata, then a line per directory
        in Kafka's order, a Java HashMap's of the paths (MetaPropertiesEnsemble.Copier.
        writeLogDirChanges, 4.3.1), though kjbod writes them in sorted order. As Kafka, the other
        directories are formatted and the exit code is 0 when one is unreadable; kjbod's warning
        naming it is among the notes."""
        mv = self.plan.metadata_version
        lines = unreadable_lines(self.plan.unreadable)
        if self.plan.all_formatted:
            lines.append("All of the log directories are already formatted.")
        attempted = {r.plan.path: r for r in self.directories if r.status in (DirectoryStatus.FORMATTED, DirectoryStatus.FAILED)}
        if attempted:
            lines.append(bootstrap_metadata_line(self.plan))
        for path in hashmap_order(attempted, string_hash):
            result = attempted[path]
            kind = result.plan.kind.value if result.plan.kind else ""
            lines.append(f"Formatting {kind} {result.plan.path} with metadata.version {mv}.")
        for result in self.directories:
            kind = result.plan.kind.value if result.plan.kind else ""
            if result.status is DirectoryStatus.WOULD_FORMAT:
                # No directory.id here: a real run draws new random ids (-o json shows the plan's).
                lines.append(f"Would format {kind} {result.plan.path} with metadata.version {mv}.")
        return lines

    def notes(self) -> list[str]:
        """What kjbod adds, for stderr: the directories left alone, and the cluster state."""
        mv = self.plan.metadata_version
        notes = unreadable_warnings(self.plan.unreadable, "then run format again with --ignore-formatted")
        state = self.state
        if state is not None and state.status is StateStatus.INITIALISED:
            notes.append(f"Initialised the cluster state {state.path} with metadata.version {mv}.")
        elif state is not None and state.status is StateStatus.WOULD_INITIALISE:
            notes.append(f"Would initialise the cluster state {state.path} with metadata.version {mv} if it holds no records yet.")
        elif state is not None and state.status is StateStatus.ALREADY_INITIALISED:
            notes.append(f"The cluster state {state.path} already holds records; it was left as it is.")
        return notes

    def to_json(self) -> dict[str, object]:
        plan = self.plan
        return {
            "dryRun": self.dry_run,
            "config": str(plan.config.path),
            "clusterId": plan.cluster_id,
            "nodeId": plan.config.node_id,
            "metadataVersion": plan.metadata_version.name,
            "featureLevels": plan.feature_levels,
            "bootstrapRecords": [{"type": type(r).__name__, **r.data()} for r in plan.records],
            "initialControllers": [voter.to_json() for voter in plan.initial_controllers],
            "allFormatted": plan.all_formatted,
            "directories": [d.to_json() for d in self.directories],
            "clusterState": self.state.to_json() if self.state else None,
        }


class FormatFailed(UserError):
    """Writing failed part-way; `outcome` says what was written before the failure."""

    def __init__(self, message: str, outcome: FormatOutcome) -> None:
        super().__init__(message)
        self.outcome = outcome


def _create_directories(path: Path) -> list[Path]:
    """mkdir -p, returning the directories it created (outermost first)."""
    missing: list[Path] = []
    current = path
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    created: list[Path] = []
    try:
        for directory in reversed(missing):
            directory.mkdir()
            created.append(directory)
    except OSError:
        _remove_created(created)
        raise
    return created


def _remove_created(created: list[Path]) -> None:
    for directory in reversed(created):
        try:
            directory.rmdir()
        except OSError:
            pass  # best effort: it is empty unless someone else wrote into it meanwhile


def bootstrap_voters(plan: FormatPlan) -> list[Voter]:
    """The voter set of the KIP-853 bootstrap snapshot (DynamicVoters.toVoterSet): each voter
    with one endpoint, named after the first controller listener (upper-cased, as
    ListenerName.normalised), at the host Java's InetSocketAddress.getHostString gives."""
    listener = plan.config.controller_listener_names[0].upper()
    return [
        Voter(v.node_id, v.directory_id, (VoterEndpoint(listener, java_host_string(v.host), v.port),))
        for v in plan.initial_controllers
    ]


def _writes_bootstrap_snapshot(plan: FormatPlan, directory: DirectoryPlan) -> bool:
    """Whether this directory gets the 0-0 bootstrap snapshot: at 4.4, a controller's metadata
    directory (`setWriteBootstrapSnapshot(process.roles contains controller)` and
    `DirectoryType.isMetadataDirectory`, 4.4.0 StorageTool :128, Formatter :453); at 4.3, a
    dynamic metadata directory (its voter set only, Formatter.writeDynamicQuorumSnapshot)."""
    if plan.release.writes_bootstrap_snapshot:
        return plan.config.is_controller and directory.kind is not DirectoryKind.DATA
    return directory.kind in (DirectoryKind.DYNAMIC_METADATA, DirectoryKind.DYNAMIC_METADATA_VOTER)


def write_directory(plan: FormatPlan, directory: DirectoryPlan, date: datetime | None = None) -> None:
    """Create the directory and write its files as Kafka's Formatter does, then meta.properties
    (its presence is what makes a directory formatted):
    - Kafka 4.3: bootstrap.checkpoint in every directory, and in a dynamic metadata directory the
      KIP-853 bootstrap snapshot (`__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`)
      holding the initial voter set;
    - Kafka 4.4 (KAFKA-19648): no bootstrap.checkpoint; a controller's metadata directory gets the
      bootstrap snapshot holding kraft.version, the initial voters (if any) and the bootstrap records.
    On failure the directory is left as it was found: the files written and the directories
    created for it are removed again."""
    path = Path(directory.path)
    created = _create_directories(path)
    written: list[Path] = []
    try:
        timestamp_ms = None if date is None else int(date.timestamp() * 1000)
        if not plan.release.writes_bootstrap_snapshot:
            written.append(write_bootstrap_checkpoint(path, plan.records, timestamp_ms))
        if _writes_bootstrap_snapshot(plan, directory):
            snapshot_dir = path / CLUSTER_METADATA_DIR
            if not snapshot_dir.exists():
                written.append(snapshot_dir)
            clock = (lambda: time.time_ns() // 1_000_000) if timestamp_ms is None else timestamp_ms
            records = plan.records if plan.release.writes_bootstrap_snapshot else ()
            written.append(
                write_bootstrap_snapshot(
                    path,
                    bootstrap_voters(plan) if plan.initial_controllers else None,
                    kraft_version=plan.feature_levels[KRAFT_VERSION],
                    timestamp_ms=clock,
                    records=records,
                )
            )
        write_meta_properties(path, plan.meta_properties(directory).to_properties(), date)
    except BaseException:
        for item in reversed(written):
            if item.is_dir():
                shutil.rmtree(item, ignore_errors=True)
            else:
                item.unlink(missing_ok=True)
        _remove_created(created)
        raise


def write_plan(plan: FormatPlan, outcome: FormatOutcome, date: datetime | None = None) -> None:
    """Format every directory the plan formats, in sorted order; stop at the first failure
    (the directories before it stay formatted, as in Kafka)."""
    pending = [r for r in outcome.directories if r.status is DirectoryStatus.NOT_ATTEMPTED]
    for result in pending:
        try:
            write_directory(plan, result.plan, date)
        except OSError as exc:
            detail = f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc.strerror or exc)
            result.status, result.error = DirectoryStatus.FAILED, detail
            # Kafka's message, then what was left behind (write_directory undid its own work).
            formatted = [r.plan.path for r in outcome.directories if r.status is DirectoryStatus.FORMATTED]
            before = f"; {', '.join(formatted)} stay{'s' if len(formatted) == 1 else ''} formatted" if formatted else ""
            raise FormatFailed(
                f"Error while writing meta.properties file {result.plan.path}: {detail} "
                f"(nothing was left in {result.plan.path}{before})",
                outcome,
            ) from None
        result.status = DirectoryStatus.FORMATTED
