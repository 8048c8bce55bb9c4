"""Partition reassignments: Kafka's three-stage protocol and its cancellation
(ReplicationControlManager.alterPartitionReassignments and listPartitionReassignments)."""

from __future__ import annotations

from kjbod.controller.cluster_control import ClusterControl
from kjbod.controller.replication_control import ReplicationControl
from kjbod.image import Image


class ReassignmentControl:
    def __init__(self, image: Image, cluster: ClusterControl, replication: ReplicationControl) -> None:
        self._image = image
        self._cluster = cluster
        self._replication = replication
