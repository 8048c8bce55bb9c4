"""Topic configs Kafka accepts (LogConfig's definitions), so a typo is refused as Kafka does.

The release decides: 4.4.0 adds four (4.4.0 storage LogConfig.java:48-54, 331, 356, 645-664) that
a 4.3.1 controller refuses. message.downconversion.enable is no 4.x LogConfig's (only a deprecated
TopicConfig constant), so both refuse it.
"""

from __future__ import annotations

from collections.abc import Mapping

from kjbod.common.kafka_release import NEWEST, KafkaRelease
from kjbod.common.versions import RELEASE_4_4
from kjbod.controller.errors import ControllerApiError, Errors

_BOOLEAN = "BOOLEAN"
_INT = "INT"
_LONG = "LONG"
_OTHER = "STRING"

# name -> type, for the topic-level configs of Kafka 4.x.
TOPIC_CONFIGS: dict[str, str] = {
    "cleanup.policy": _OTHER,
    "compression.type": _OTHER,
    "compression.gzip.level": _INT,
    "compression.lz4.level": _INT,
    "compression.zstd.level": _INT,
    "delete.retention.ms": _LONG,
    "file.delete.delay.ms": _LONG,
    "flush.messages": _LONG,
    "flush.ms": _LONG,
    "follower.replication.throttled.replicas": _OTHER,
    "index.interval.bytes": _INT,
    "leader.replication.throttled.replicas": _OTHER,
    "local.retention.bytes": _LONG,
    "local.retention.ms": _LONG,
    "max.compaction.lag.ms": _LONG,
    "max.message.bytes": _INT,
    "message.timestamp.after.max.ms": _LONG,
    "message.timestamp.before.max.ms": _LONG,
    "message.timestamp.type": _OTHER,
    "min.cleanable.dirty.ratio": _OTHER,
    "min.compaction.lag.ms": _LONG,
    "min.insync.replicas": _INT,
    "preallocate": _BOOLEAN,
    "remote.storage.enable": _BOOLEAN,
    "remote.log.copy.disable": _BOOLEAN,
    "remote.log.delete.on.disable": _BOOLEAN,
    "retention.bytes": _LONG,
    "retention.ms": _LONG,
    "segment.bytes": _INT,
    "segment.index.bytes": _INT,
    "segment.jitter.ms": _LONG,
    "segment.ms": _LONG,
    "unclean.leader.election.enable": _BOOLEAN,
}
# name -> (type, the first release that defines it).
NEWER_TOPIC_CONFIGS: dict[str, tuple[str, tuple[int, int]]] = {
    "errors.deadletterqueue.group.enable": (_BOOLEAN, RELEASE_4_4),
    "max.decompressed.message.bytes": (_INT, RELEASE_4_4),
    "remote.copy.lag.bytes": (_LONG, RELEASE_4_4),
    "remote.copy.lag.ms": (_LONG, RELEASE_4_4),
}


def topic_config_type(name: str, release: KafkaRelease = NEWEST) -> str | None:
    """The type of a topic config the release's LogConfig defines, None if it defines none."""
    kind = TOPIC_CONFIGS.get(name)
    if kind is None and name in NEWER_TOPIC_CONFIGS:
        newer_kind, since = NEWER_TOPIC_CONFIGS[name]
        kind = newer_kind if release.version >= since else None
    return kind


def _valid(kind: str, value: str) -> bool:
    text = value.strip()
    if kind == _BOOLEAN:
        return text.lower() in ("true", "false")
    if kind in (_INT, _LONG):
        try:
            number = int(text)
        except ValueError:
            return False
        limit = 2**31 if kind == _INT else 2**63
        return -limit <= number < limit
    return True


def validate_topic_configs(configs: Mapping[str, str], release: KafkaRelease = NEWEST) -> None:
    for name, value in configs.items():
        kind = topic_config_type(name, release)
        if kind is None:
            raise ControllerApiError(Errors.INVALID_CONFIG, f"Unknown topic config name: {name}")
        if not _valid(kind, value):
            raise ControllerApiError(
                Errors.INVALID_CONFIG, f"Invalid value {value} for configuration {name}: Not a number of type {kind}"
                if kind != _BOOLEAN else f"Invalid value {value} for configuration {name}: Expected value to be either true or false"
            )
