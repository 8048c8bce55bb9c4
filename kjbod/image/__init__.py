"""Immutable views of the cluster state, and the deltas that replay records into them."""

from kjbod.image.cluster import BrokerRegistration, ClusterImage
from kjbod.image.configs import ConfigsImage
from kjbod.image.features import FeaturesImage
from kjbod.image.image import EMPTY_IMAGE, ClusterIdentity, Delta, Image, replay_all
from kjbod.image.quorum import ControllerReplica, QuorumImage, ReplicaKey, VoterNode
from kjbod.image.topics import PartitionRegistration, ReplicaLog, TopicImage, TopicsImage

__all__ = [
    "EMPTY_IMAGE",
    "BrokerRegistration",
    "ClusterIdentity",
    "ClusterImage",
    "ConfigsImage",
    "ControllerReplica",
    "Delta",
    "FeaturesImage",
    "Image",
    "PartitionRegistration",
    "QuorumImage",
    "ReplicaKey",
    "ReplicaLog",
    "TopicImage",
    "TopicsImage",
    "VoterNode",
    "replay_all",
]
