"""All the directories of one node at once: Kafka's MetaPropertiesEnsemble (§2.3), `meta info`
(kafka-storage info, §1.7), `meta show`, and `meta ensure-ids` (the broker start-up rule of
KIP-858: duplicate directory ids are fatal, missing ones are generated and written).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from pathlib import Path

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.errors import UserError
from kjbod.storage.config import NodeConfig, load_node_config
from kjbod.storage.meta_properties import (
    DIRECTORY_ID_KEY,
    MetaProperties,
    MetaPropertiesError,
    meta_properties_path,
    read_meta_properties,
    write_meta_properties,
)
from kjbod.storage.properties import PropertiesError


class DirectoryState(str, Enum):
    EMPTY = "empty"  # no meta.properties (or no directory yet): needs formatting
    ERROR = "error"  # unreadable or unparsable
    FORMATTED = "formatted"


@dataclass(frozen=True)
class LoadedDirectory:
    path: str
    state: DirectoryState
    meta: MetaProperties | None = None
    # Every key of the file, including those MetaProperties ignores.
    raw: dict[str, str] | None = None
    error: str | None = None

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"path": self.path, "status": self.state.value}
        if self.meta is not None:
            data.update(self.meta.to_json())
        if self.error is not None:
            data["error"] = self.error
        return data


def load_directory(path: str) -> LoadedDirectory:
    """MetaPropertiesEnsemble.Loader for one directory: a missing file means empty; any other
    failure (a file where the directory should be, no permission, a bad file) means error."""
    try:
        raw, meta = read_meta_properties(path)
    except PropertiesError as exc:
        if exc.missing:
            return LoadedDirectory(path, DirectoryState.EMPTY)
        return LoadedDirectory(path, DirectoryState.ERROR, error=exc.message)
    except MetaPropertiesError as exc:
        return LoadedDirectory(path, DirectoryState.ERROR, error=f"Error loading {meta_properties_path(path)}: {exc.message}")
    return LoadedDirectory(path, DirectoryState.FORMATTED, meta, raw)


class EnsembleError(UserError):
    """The directories disagree (cluster id, node id, directory ids): Kafka refuses to go on."""


@dataclass(frozen=True)
class Ensemble:
    """Loaded directories in Java String order, and the metadata log directory."""

    directories: tuple[LoadedDirectory, ...]
    metadata_log_dir: str | None = None

    @classmethod
    def load(cls, paths: Iterable[str], metadata_log_dir: str | None = None) -> Ensemble:
        ordered = sorted(set(paths), key=lambda p: p.encode("utf-16-be"))
        return cls(tuple(load_directory(path) for path in ordered), metadata_log_dir)

    def in_state(self, state: DirectoryState) -> list[LoadedDirectory]:
        return [d for d in self.directories if d.state is state]

    @property
    def formatted(self) -> list[LoadedDirectory]:
        return self.in_state(DirectoryState.FORMATTED)

    @property
    def empty(self) -> list[LoadedDirectory]:
        return self.in_state(DirectoryState.EMPTY)

    @property
    def errors(self) -> list[LoadedDirectory]:
        return self.in_state(DirectoryState.ERROR)

    def directory_ids(self) -> set[str]:
        return {d.meta.directory_id for d in self.formatted if d.meta and d.meta.directory_id}

    def verify(
        self,
        expected_cluster_id: str | None,
        expected_node_id: int | None,
        *,
        require_at_least_one_valid: bool = False,
        require_metadata_log_dir: bool = False,
    ) -> None:
        """MetaPropertiesEnsemble.verify (MPE:472-542), checks and messages in Kafka's order.

        Two Kafka typos are fixed here (§8.4): "resrved" is spelled "reserved", and the duplicate
        id is printed as itself rather than as `Optional[<id>]`.
        """
        if require_at_least_one_valid and not self.formatted:
            raise EnsembleError("No readable meta.properties files found.")
        seen: dict[str, str] = {}
        for directory in self.formatted:
            meta = directory.meta
            assert meta is not None
            path = meta_properties_path(directory.path)
            if meta.cluster_id is not None:
                if expected_cluster_id is None:
                    expected_cluster_id = meta.cluster_id
                elif meta.cluster_id != expected_cluster_id:
                    raise EnsembleError(
                        f"Invalid cluster.id in: {path}. Expected {expected_cluster_id}, but read {meta.cluster_id}"
                    )
            if meta.node_id is not None:
                if expected_node_id is None:
                    expected_node_id = meta.node_id
                elif meta.node_id != expected_node_id:
                    raise EnsembleError(
                        f"Stored node id {meta.node_id} doesn't match previous node id {expected_node_id} in {path}. "
                        "If you moved your data, make sure your configured node id matches. If you intend to create "
                        "a new node, you should remove all data in your data directories."
                    )
            if meta.directory_id is not None:
                if DirectoryId.reserved(meta.directory_id):
                    raise EnsembleError(f"Invalid reserved directory ID {meta.directory_id} found in {directory.path}")
                previous = seen.get(meta.directory_id)
                if previous is not None:
                    raise EnsembleError(
                        f"Duplicate directory ID {meta.directory_id} found. It was the ID of {previous}, "
                        f"but also of {directory.path}"
                    )
                seen[meta.directory_id] = directory.path
        if require_metadata_log_dir and self.metadata_log_dir is None:
            raise EnsembleError("No metadata log directory was specified.")
        if self.metadata_log_dir is not None and any(d.path == self.metadata_log_dir for d in self.errors):
            raise EnsembleError(
                f"Encountered I/O error in metadata log directory {self.metadata_log_dir}. Cannot continue."
            )


def generate_directory_id(taken: set[str], rng: random.Random | None = None) -> str:
    """Copier.generateValidDirectoryId: random, never reserved, never an id already taken."""
    while True:
        candidate = DirectoryId.random(rng)
        if candidate not in taken:
            return candidate


def require_node_id(config: NodeConfig) -> int:
    if config.node_id < 0:
        raise UserError(f"You must specify a valid non-negative node ID. (node.id in {config.path})")
    return config.node_id


# kafka-storage info ----------------------------------------------------------------------------


def java_path_string(text: str) -> str:
    """`Paths.get(text).toString()`: repeated slashes collapse and a trailing slash goes."""
    collapsed = re.sub("/+", "/", text)
    return collapsed.rstrip("/") or collapsed


@dataclass
class InfoReport:
    """What `kafka-storage info` found: directories, the first good meta.properties, problems."""

    config_path: Path
    found_directories: list[str] = field(default_factory=list)
    metadata: MetaProperties | None = None
    problems: list[str] = field(default_factory=list)
    directories: list[LoadedDirectory] = field(default_factory=list)


def storage_info(config_path: Path) -> InfoReport:
    """`kafka-storage info` (§1.7): the checks and problem texts of Kafka's infoCommand."""
    config = load_node_config(config_path)
    report = InfoReport(config_path)
    for directory in config.directories:
        shown = java_path_string(directory)
        path = Path(directory)
        if not path.is_dir():
            report.problems.append(f"{shown} {'is not a directory' if path.exists() else 'does not exist'}")
            report.directories.append(LoadedDirectory(directory, DirectoryState.ERROR, error=report.problems[-1]))
            continue
        report.found_directories.append(shown)
        if not meta_properties_path(path).exists():
            report.problems.append(f"{shown} is not formatted.")
            report.directories.append(LoadedDirectory(directory, DirectoryState.EMPTY))
            continue
        try:
            raw, meta = read_meta_properties(path)
        except MetaPropertiesError as exc:
            report.problems.append(f"Error loading {shown}/meta.properties: {exc.message}")
            report.directories.append(LoadedDirectory(directory, DirectoryState.ERROR, error=report.problems[-1]))
            continue
        # A meta.properties that cannot be read at all is fatal in Kafka too (an uncaught
        # IOException); PropertiesError propagates with the path in its message.
        report.directories.append(LoadedDirectory(directory, DirectoryState.FORMATTED, meta, raw))
        if report.metadata is None:
            report.metadata = meta
        elif meta.cluster_id != report.metadata.cluster_id:
            report.problems.append("Mismatched cluster IDs between storage directories.")
        elif meta.node_id != report.metadata.node_id:
            report.problems.append("Mismatched node IDs between storage directories.")
    if report.metadata is not None:
        if config.kraft_mode and report.metadata.version == 0:
            report.problems.append(
                "The kafka configuration file appears to be for a cluster in KRaft mode, but the directories are "
                "formatted for legacy mode."
            )
        elif not config.kraft_mode and report.metadata.version == 1:
            report.problems.append(
                "The kafka configuration file appears to be for a legacy cluster, but the directories are formatted "
                "for a cluster in KRaft mode."
            )
    return report


# meta show -------------------------------------------------------------------------------------


def show_directories(paths: Sequence[str]) -> list[LoadedDirectory]:
    """Each directory's meta.properties, in the order given."""
    return [load_directory(path) for path in paths]


# meta ensure-ids -------------------------------------------------------------------------------


class IdStatus(str, Enum):
    EXISTING = "existing"
    GENERATED = "generated"
    OFFLINE = "offline"


@dataclass
class DirectoryIdResult:
    path: str
    status: IdStatus
    directory_id: str | None = None
    written: bool = False
    error: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "status": self.status.value,
            "directoryId": self.directory_id,
            "written": self.written,
            "error": self.error,
        }


@dataclass
class EnsureIdsResult:
    config_path: Path
    dry_run: bool
    directories: list[DirectoryIdResult] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "config": str(self.config_path),
            "dryRun": self.dry_run,
            "directories": [d.to_json() for d in self.directories],
        }


class EnsureIdsFailed(UserError):
    """Writing one directory failed; the directories before it keep their new ids."""

    def __init__(self, message: str, result: EnsureIdsResult) -> None:
        super().__init__(message)
        self.result = result


def ensure_directory_ids(
    config_path: Path,
    *,
    dry_run: bool = False,
    rng: random.Random | None = None,
    date: datetime | None = None,
) -> EnsureIdsResult:
    """What a KRaft broker does with its directories at start-up (KafkaRaftServer.initializeLogDirs).

    Fails if the directories disagree (cluster id, node id against node.id), if two share a
    directory id or one holds a reserved id, if the metadata directory cannot be read, or if a
    directory is not formatted. Unreadable data directories are offline and left alone. Every
    formatted directory without a directory.id gets a fresh one, written atomically; the file's
    other keys are kept as they are (Kafka rewrites only the keys it knows).
    """
    config = load_node_config(config_path)
    node_id = require_node_id(config)
    ensemble = Ensemble.load(config.directories, config.metadata_log_dir)
    ensemble.verify(None, node_id, require_at_least_one_valid=True, require_metadata_log_dir=True)
    for directory in ensemble.empty:
        raise UserError(
            f"No `meta.properties` found in {directory.path} "
            "(have you run `kjbod format` to format the directory?)"
        )
    taken = ensemble.directory_ids()
    result = EnsureIdsResult(config_path, dry_run)
    pending: list[tuple[LoadedDirectory, DirectoryIdResult]] = []
    for directory in ensemble.directories:
        if directory.state is DirectoryState.ERROR:
            result.directories.append(DirectoryIdResult(directory.path, IdStatus.OFFLINE, error=directory.error))
            continue
        assert directory.meta is not None
        if directory.meta.directory_id is not None:
            result.directories.append(DirectoryIdResult(directory.path, IdStatus.EXISTING, directory.meta.directory_id))
            continue
        new_id = generate_directory_id(taken, rng)
        taken.add(new_id)
        item = DirectoryIdResult(directory.path, IdStatus.GENERATED, new_id)
        result.directories.append(item)
        pending.append((directory, item))
    if dry_run:
        return result
    for directory, item in pending:
        assert directory.raw is not None and item.directory_id is not None
        try:
            write_meta_properties(Path(directory.path), {**directory.raw, DIRECTORY_ID_KEY: item.directory_id}, date)
        except OSError as exc:
            item.error = f"{exc.strerror or exc}: {exc.filename or meta_properties_path(directory.path)}"
            raise EnsureIdsFailed(
                f"Error while writing meta.properties file {directory.path}: {item.error}", result
            ) from None
        item.written = True
    return result
