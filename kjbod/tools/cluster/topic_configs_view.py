"""The Configs column of `kafka-topics --describe`: every config of the topic whose source is
not Kafka's default, in the order the admin client's `Config` hands them to TopicCommand.

TopicCommand prints the entries of DescribeConfigs for the topic that are not `isDefault()`
(4.3.1 tools:TopicCommand.java:284-293). The broker describes every LogConfig entry
(ConfigHelper.createTopicConfigEntry, kafka_2.13:kafka/server/ConfigHelper.scala:218-241): its
source is the topic's own config if set, else the first of its broker synonyms
(ServerTopicConfigSynonyms.TOPIC_CONFIG_SYNONYMS) found in the broker's dynamic configs, node-level
then cluster-level, then its static server.properties. kjbod knows the topic's configs and the
cluster-level dynamic configs (e.g. the min.insync.replicas every 4.1+ cluster's bootstrap writes
with ELR on); it knows neither the answering broker's node-level configs nor server.properties.

The order is `java.util.HashMap`'s: `Config` puts the entries into a HashMap (clients:
admin/Config.java), grown to 64 buckets by LogConfig's 33 (4.3) or 37 (4.4) entries; entries in
one bucket keep the order they were put in, which is LogConfig's definition order (the response
comes from AbstractConfig.nonInternalValues, a HashMap of the same size filled from ConfigDef's
LinkedHashMap), after any topic config LogConfig does not define (AbstractConfig's originals first,
ConfigHelperUtils.createResponseConfig).
"""

from __future__ import annotations

from kjbod.common.java import hashmap_order, string_hash
from kjbod.image import Image
from kjbod.records import CONFIG_RESOURCE_BROKER, CONFIG_RESOURCE_TOPIC

# LogConfig's topic configs in definition order (4.3.1 storage:LogConfig.java:186-250), each with
# the broker config it reads by default (the head of its synonyms, ServerTopicConfigSynonyms).
# The describe entry of a synonym-less config (the throttled replicas, remote storage switches)
# can only come from the topic itself.
LOG_CONFIG_SYNONYMS: tuple[tuple[str, str | None], ...] = (
    ("segment.bytes", "log.segment.bytes"),
    ("segment.ms", "log.roll.ms"),
    ("segment.jitter.ms", "log.roll.jitter.ms"),
    ("segment.index.bytes", "log.index.size.max.bytes"),
    ("flush.messages", "log.flush.interval.messages"),
    ("flush.ms", "log.flush.interval.ms"),
    ("retention.bytes", "log.retention.bytes"),
    ("retention.ms", "log.retention.ms"),
    ("max.message.bytes", "message.max.bytes"),
    ("index.interval.bytes", "log.index.interval.bytes"),
    ("delete.retention.ms", "log.cleaner.delete.retention.ms"),
    ("min.compaction.lag.ms", "log.cleaner.min.compaction.lag.ms"),
    ("max.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms"),
    ("file.delete.delay.ms", "log.segment.delete.delay.ms"),
    ("min.cleanable.dirty.ratio", "log.cleaner.min.cleanable.ratio"),
    ("cleanup.policy", "log.cleanup.policy"),
    ("unclean.leader.election.enable", "unclean.leader.election.enable"),
    ("min.insync.replicas", "min.insync.replicas"),
    ("compression.type", "compression.type"),
    ("compression.gzip.level", "compression.gzip.level"),
    ("compression.lz4.level", "compression.lz4.level"),
    ("compression.zstd.level", "compression.zstd.level"),
    ("preallocate", "log.preallocate"),
    ("message.timestamp.type", "log.message.timestamp.type"),
    ("message.timestamp.before.max.ms", "log.message.timestamp.before.max.ms"),
    ("message.timestamp.after.max.ms", "log.message.timestamp.after.max.ms"),
    ("leader.replication.throttled.replicas", None),
    ("follower.replication.throttled.replicas", None),
    ("remote.storage.enable", None),
    ("local.retention.ms", "log.local.retention.ms"),
    ("local.retention.bytes", "log.local.retention.bytes"),
    ("remote.log.copy.disable", None),
    ("remote.log.delete.on.disable", None),
)
LOG_CONFIG_NAMES = tuple(name for name, _ in LOG_CONFIG_SYNONYMS)


def described_topic_configs(image: Image, topic: str) -> list[tuple[str, str]]:
    """(name, value) of each config kafka-topics --describe lists for the topic, in its order."""
    own = image.configs.get(CONFIG_RESOURCE_TOPIC, topic)
    cluster = image.configs.get(CONFIG_RESOURCE_BROKER, "")
    values: dict[str, str] = {}
    for name, synonym in LOG_CONFIG_SYNONYMS:
        if name in own:
            values[name] = own[name]
        elif synonym is not None and synonym in cluster:
            values[name] = cluster[synonym]
    undefined = [name for name in own if name not in LOG_CONFIG_NAMES]
    for name in undefined:
        values[name] = own[name]
    order = hashmap_order([*sorted(undefined), *LOG_CONFIG_NAMES], string_hash)
    return [(name, values[name]) for name in order if name in values]
