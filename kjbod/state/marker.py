"""A cluster-state directory on disk: its marker file, and the checks made before one is opened
or created.

A state directory holds a marker file (`kjbod-state.json`, with the format version), the record
log's segments and acknowledged-end checkpoint, snapshots and a lock file. The marker is the
last file a creation puts in place (kjbod.state.creation): without it a directory is no state.
"""

from __future__ import annotations

import json
from pathlib import Path

from kjbod import __version__
from kjbod.common.durable import atomic_write
from kjbod.errors import CorruptStateError, UserError

MARKER = "kjbod-state.json"
FORMAT_VERSION = 1
# The directories a new state is built in (kjbod.state.creation).
BUILD_PREFIX = ".kjbod-creating-"


def write_marker(directory: Path) -> None:
    atomic_write(directory / MARKER, json.dumps({"format": FORMAT_VERSION, "createdBy": f"kjbod {__version__}"}).encode())


def read_marker_version(path: Path) -> None:
    """Check the marker of the state at `path` (which must have one) names a format this kjbod reads."""
    marker = path / MARKER
    try:
        found = json.loads(marker.read_text())["format"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorruptStateError(f"the cluster state marker {marker} is unreadable ({exc})") from None
    if found != FORMAT_VERSION:
        raise UserError(f"The cluster state {path} has format {found}; this kjbod reads format {FORMAT_VERSION}")


def is_state_directory(path: Path) -> bool:
    return (path / MARKER).exists()


def check_state_directory(path: Path) -> None:
    """Check that `path` is a kjbod cluster state this kjbod reads."""
    if path.exists() and not path.is_dir():
        raise UserError(f"The cluster state path {path} is not a directory")
    if is_state_directory(path):
        read_marker_version(path)
        return
    if not path.exists():
        raise UserError(
            f"No cluster state at {path}: create one with `kjbod format` on a controller node or "
            "`kjbod import cluster`, or point --state (KJBOD_STATE) at an existing one"
        )
    if any(entry.name.startswith(BUILD_PREFIX) or entry.name == MARKER + ".tmp" for entry in path.iterdir()):
        raise UserError(
            f"{path} holds an interrupted creation of a cluster state, not a cluster state: run "
            "`kjbod import cluster` or `kjbod format` again (it clears what was left)"
        )
    raise UserError(f"{path} is not a kjbod cluster state (it has no {MARKER}); check --state or KJBOD_STATE")
