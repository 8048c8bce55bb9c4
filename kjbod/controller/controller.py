"""The controller facade: wires the control managers over one image.

It owns no state. Each manager reads the image and returns a ControllerResult; only replay
(kjbod.image.Delta) changes state, and only the state's write path appends records. The
simulated clock is not a control manager: it runs the simulated brokers, which send requests to
these managers (kjbod.simulation.clock).
"""

from __future__ import annotations

from kjbod.common.kafka_release import NEWEST, KafkaRelease
from kjbod.controller.cluster_control import ClusterControl
from kjbod.controller.feature_control import FeatureControl
from kjbod.controller.quorum_control import QuorumControl
from kjbod.controller.reassignment_control import ReassignmentControl
from kjbod.controller.replication_control import ReplicationControl
from kjbod.image import Image


class Controller:
    """The controller of a cluster state, running Kafka `release` (kjbod.common.kafka_release):
    the feature ranges it supports and the rules that differ between releases are that
    release's."""

    def __init__(self, image: Image, release: KafkaRelease = NEWEST) -> None:
        self.image = image
        self.release = release
        self.features = FeatureControl(image, release)
        self.cluster = ClusterControl(image)
        self.replication = ReplicationControl(image, self.cluster, release)
        self.cluster.shutdown_handler = self.replication.shutdown_records
        self.reassignment = ReassignmentControl(image, self.cluster, self.replication)
        self.quorum = QuorumControl(image)
