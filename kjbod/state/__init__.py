"""The cluster state: a directory holding the controller's record log and snapshots.

Only this package and the CLI's context open a state directory; library code takes an image or
a controller. `ClusterState` opens one (shared for reading, exclusive for writing), loads the
newest valid snapshot and replays the log after it; `run_operation` runs one controller
operation and commits its records; `StateDirectory` creates a new state; `inspect` dumps and
verifies one.
"""

from kjbod.log.lock import DEFAULT_LOCK_TIMEOUT
from kjbod.state.cluster_state import ClusterState, Commit, read_image, run_operation
from kjbod.state.directory import CreatedState, StateDirectory

__all__ = ["DEFAULT_LOCK_TIMEOUT", "ClusterState", "Commit", "CreatedState", "StateDirectory", "read_image", "run_operation"]
