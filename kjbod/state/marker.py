"""A cluster-state directory on disk: its marker file, and the checks made before one is opened
or created.

A state directory holds a marker file (`kjbod-state.json`, with the format version), the record
log's segments, snapshots and a lock file.
"""

from __future__ import annotations

import json
from pathlib import Path

from kjbod import __version__
from kjbod.common.durable import atomic_write
from kjbod.errors import CorruptStateError, UserError

MARKER = "kjbod-state.json"
FORMAT_VERSION = 1


def check_state_directory(path: Path, create: bool) -> None:
    """Check that `path` is a kjbod cluster state (creating an empty one if asked)."""
    if path.exists() and not path.is_dir():
        raise UserError(f"The cluster state path {path} is not a directory")
    marker = path / MARKER
    if marker.exists():
        try:
            found = json.loads(marker.read_text())["format"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CorruptStateError(f"the cluster state marker {marker} is unreadable ({exc})") from None
        if found != FORMAT_VERSION:
            raise UserError(f"The cluster state {path} has format {found}; this kjbod reads format {FORMAT_VERSION}")
        return
    if not create:
        if path.exists():
            raise UserError(f"{path} is not a kjbod cluster state (it has no {MARKER}); check --state or KJBOD_STATE")
        raise UserError(
            f"No cluster state at {path}: create one with `kjbod format` on a controller node or "
            "`kjbod import cluster`, or point --state (KJBOD_STATE) at an existing one"
        )
    if path.exists() and any(path.iterdir()):
        raise UserError(f"Cannot create a cluster state in {path}: the directory is not empty")
    try:
        path.mkdir(parents=True, exist_ok=True)
        atomic_write(marker, json.dumps({"format": FORMAT_VERSION, "createdBy": f"kjbod {__version__}"}).encode())
    except OSError as exc:
        raise UserError(f"Cannot create a cluster state in {path}: {exc.strerror or exc}") from None


def check_new_state_directory(path: Path) -> bool:
    """Refuse anything but a missing or empty directory for `import cluster`'s new state;
    returns whether it existed."""
    if not path.exists():
        return False
    if not path.is_dir():
        raise UserError(f"Cannot import into {path}: it is not a directory")
    if any(path.iterdir()):
        raise UserError(
            f"Cannot import into {path}: the directory is not empty. `kjbod import cluster` creates a new "
            "cluster state and never overwrites one; point --state at a new or empty directory"
        )
    return True
