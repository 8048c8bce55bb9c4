"""Immutable views of the cluster state, and the deltas that replay records into them."""

from kjbod.image.cluster import BrokerRegistration, ClusterImage
from kjbod.image.configs import ConfigsImage
from kjbod.image.features import FeaturesImage
from kjbod.image.image import EMPTY_IMAGE, ClusterIdentity, Delta, Image, replay_all
from kjbod.image.topics import PartitionRegistration, ReplicaLog, TopicImage, TopicsImage

__all__ = [
    "EMPTY_IMAGE",
    "BrokerRegistration",
    "ClusterIdentity",
    "ClusterImage",
    "ConfigsImage",
    "Delta",
    "FeaturesImage",
    "Image",
    "PartitionRegistration",
    "ReplicaLog",
    "TopicImage",
    "TopicsImage",
    "replay_all",
]
