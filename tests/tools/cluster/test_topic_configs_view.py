"""The Configs column of topic describe: what kafka-topics --describe lists and in which order."""

from __future__ import annotations

from kjbod.common.java import hashmap_order, string_hash
from kjbod.image import EMPTY_IMAGE, replay_all
from kjbod.records import CONFIG_RESOURCE_BROKER, CONFIG_RESOURCE_TOPIC, ConfigRecord
from kjbod.tools.cluster.topic_configs_view import LOG_CONFIG_NAMES, described_topic_configs

# java.util.HashMap's iteration of Kafka 4.3.1's LogConfig.nonInternalValues() (33 entries),
# printed by Kafka's own classes: `new HashMap<>()` filled from LogConfig.fromProps(...).nonInternalValues().
KAFKA_4_3_1_ORDER = (
    "compression.type,remote.log.delete.on.disable,leader.replication.throttled.replicas,remote.storage.enable,min.insync.replicas,"
    "segment.jitter.ms,remote.log.copy.disable,local.retention.ms,cleanup.policy,flush.ms,follower.replication.throttled.replicas,"
    "compression.lz4.level,segment.bytes,retention.ms,compression.gzip.level,flush.messages,compression.zstd.level,max.compaction.lag.ms,"
    "file.delete.delay.ms,max.message.bytes,min.compaction.lag.ms,message.timestamp.type,local.retention.bytes,preallocate,"
    "index.interval.bytes,min.cleanable.dirty.ratio,unclean.leader.election.enable,retention.bytes,delete.retention.ms,"
    "message.timestamp.after.max.ms,message.timestamp.before.max.ms,segment.ms,segment.index.bytes"
).split(",")


def configs(*records: tuple[int, str, str, str]):  # noqa: ANN201
    return replay_all(EMPTY_IMAGE, [ConfigRecord(resource_type=t, resource_name=r, name=n, value=v) for t, r, n, v in records])


def test_log_config_names_iterate_as_kafkas_hash_map() -> None:
    assert hashmap_order(list(LOG_CONFIG_NAMES), string_hash) == KAFKA_4_3_1_ORDER


def test_the_topics_own_and_the_cluster_level_configs_in_hash_map_order() -> None:
    image = configs(
        (CONFIG_RESOURCE_BROKER, "", "min.insync.replicas", "1"),
        (CONFIG_RESOURCE_BROKER, "", "log.retention.ms", "3600000"),
        (CONFIG_RESOURCE_BROKER, "", "leader.replication.throttled.rate", "100"),  # no topic synonym
        (CONFIG_RESOURCE_BROKER, "7", "log.segment.bytes", "2000000"),  # node-level: not known which broker answers
        (CONFIG_RESOURCE_TOPIC, "events", "segment.bytes", "1048576"),
        (CONFIG_RESOURCE_TOPIC, "events", "cleanup.policy", "compact"),
        (CONFIG_RESOURCE_TOPIC, "audit", "min.insync.replicas", "2"),
    )
    assert described_topic_configs(image, "events") == [
        ("min.insync.replicas", "1"), ("cleanup.policy", "compact"), ("segment.bytes", "1048576"), ("retention.ms", "3600000"),
    ]
    assert described_topic_configs(image, "audit") == [("min.insync.replicas", "2"), ("retention.ms", "3600000")]
    assert described_topic_configs(EMPTY_IMAGE, "events") == []
