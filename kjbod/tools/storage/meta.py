"""`kjbod meta`: `meta info` (kafka-storage info, §1.7), `meta show`, and `meta ensure-ids` (the
broker start-up rule of KIP-858: duplicate directory ids are fatal, missing ones are generated and
written), over a node's directories (kjbod.storage.ensemble).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from pathlib import Path

from kjbod.errors import UserError
from kjbod.storage.config import NodeConfig, load_node_config
from kjbod.storage.ensemble import DirectoryState, Ensemble, LoadedDirectory, generate_directory_id, load_directory
from kjbod.storage.meta_properties import (
    DIRECTORY_ID_KEY,
    MetaProperties,
    MetaPropertiesError,
    meta_properties_path,
    read_meta_properties,
    write_meta_properties,
)


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

    def lines(self) -> list[str]:
        """kafka-storage info's lines (StorageTool.infoCommand), each block followed by an empty line."""
        lines: list[str] = []
        if self.found_directories:
            lines.append("Found log directory:" if len(self.found_directories) == 1 else "Found log directories:")
            lines.extend(f"  {directory}" for directory in self.found_directories)
            lines.append("")
        if self.metadata is not None:
            lines.append(f"Found metadata: {_java_map_string(self.metadata.to_properties())}")
            lines.append("")
        if self.problems:
            lines.append("Found problem:" if len(self.problems) == 1 else "Found problems:")
            lines.extend(f"  {problem}" for problem in self.problems)
            lines.append("")
        return lines

    def to_json(self) -> dict[str, object]:
        return {
            "config": str(self.config_path),
            "foundDirectories": self.found_directories,
            "metadata": self.metadata.to_properties() if self.metadata else None,
            "problems": self.problems,
            "directories": [d.to_json() for d in self.directories],
        }


def _java_map_string(props: dict[str, str]) -> str:
    """Java TreeMap.toString: {k1=v1, k2=v2} in key order."""
    items = sorted(props.items(), key=lambda item: item[0].encode("utf-16-be"))
    return "{" + ", ".join(f"{key}={value}" for key, value in items) + "}"


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


@dataclass(frozen=True)
class ShownDirectories:
    """`meta show`: each directory given, with its meta.properties or why it has none."""

    directories: list[LoadedDirectory]

    @property
    def failed(self) -> int:
        """The directories that could not be read."""
        return sum(1 for d in self.directories if d.error is not None)

    def lines(self) -> list[str]:
        return [_show_line(d) for d in self.directories]

    def to_json(self) -> dict[str, object]:
        return {"directories": [d.to_json() for d in self.directories]}


def _show_line(directory: LoadedDirectory) -> str:
    if directory.meta is not None:
        return f"{directory.path}: {directory.meta}"
    if directory.error is not None:
        return f"{directory.path}: {directory.error}"
    return f"{directory.path}: not formatted (no meta.properties)"


def show_directories(paths: Sequence[str]) -> ShownDirectories:
    """Each directory's meta.properties, in the order given."""
    return ShownDirectories([load_directory(path) for path in paths])


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

    def lines(self) -> list[str]:
        """Each directory's id, and whether it is new and written."""
        lines = []
        for item in self.directories:
            if item.status is IdStatus.OFFLINE:
                lines.append(f"{item.path}: offline ({item.error})")
            elif item.status is IdStatus.EXISTING:
                lines.append(f"{item.path}: {item.directory_id}")
            elif item.written:
                lines.append(f"{item.path}: {item.directory_id} (new)")
            elif self.dry_run:
                lines.append(f"{item.path}: {item.directory_id} (new; not written: dry run)")
            elif item.error is None:
                continue  # not reached: a write before it failed
            else:
                lines.append(f"{item.path}: {item.directory_id} (new; not written: {item.error})")
        return lines

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
