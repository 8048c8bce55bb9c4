"""All the directories of one node at once: Kafka's MetaPropertiesEnsemble (§2.3), which loads
each directory's meta.properties and checks that they agree. The `meta` commands built on it are
in kjbod.tools.storage.meta; `format` uses it too.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from kjbod.common.kafka_uuid import DirectoryId
from kjbod.errors import UserError
from kjbod.storage.meta_properties import MetaProperties, MetaPropertiesError, meta_properties_path, read_meta_properties
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
