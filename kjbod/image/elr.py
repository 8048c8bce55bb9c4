"""Eligible leader replicas (KIP-966): whether a cluster runs them, and the min.insync.replicas
its controller applies to a topic.

ELR is on iff the finalized eligible.leader.replicas.version is at least 1
(FeatureControlManager.isElrFeatureEnabled, 4.4.0 FeatureControlManager.java:478-479;
FeaturesImage.isElrEnabled, image/FeaturesImage.java:45). Every cluster formatted at 4.1 or
later finalizes level 1.
"""

from __future__ import annotations

from kjbod.common.kafka_configs import MIN_INSYNC_REPLICAS
from kjbod.common.versions import ELIGIBLE_LEADER_REPLICAS_VERSION
from kjbod.image.configs import ConfigsImage
from kjbod.image.features import FeaturesImage
from kjbod.records import CONFIG_RESOURCE_BROKER, CONFIG_RESOURCE_TOPIC

# ConfigDef's default of min.insync.replicas (ServerLogConfigs.MIN_IN_SYNC_REPLICAS_DEFAULT).
MIN_INSYNC_REPLICAS_DEFAULT = 1


def elr_enabled(features: FeaturesImage) -> bool:
    return features.level(ELIGIBLE_LEADER_REPLICAS_VERSION) >= 1


def min_isr_config(configs: ConfigsImage, topic: str, controller_id: int | None = None) -> int:
    """min.insync.replicas of a topic as the controller resolves it
    (ConfigurationControlManager.getTopicConfig -> KafkaConfigSchema.resolveEffectiveTopicConfig,
    metadata/KafkaConfigSchema.java:192-217): the topic's own config, else the active
    controller's node-level dynamic config, else the cluster-level dynamic default, else the
    controller's static config (which kjbod does not know: Kafka's default is taken), else 1.
    A value that is not an integer counts as absent (Kafka validates it when it is set)."""
    resources = [(CONFIG_RESOURCE_TOPIC, topic)]
    if controller_id is not None and controller_id >= 0:
        resources.append((CONFIG_RESOURCE_BROKER, str(controller_id)))
    resources.append((CONFIG_RESOURCE_BROKER, ""))
    for resource in resources:
        value = configs.get(*resource).get(MIN_INSYNC_REPLICAS)
        if value is not None:
            try:
                return int(value.strip())
            except ValueError:
                continue
    return MIN_INSYNC_REPLICAS_DEFAULT
